//! The multimodal profiling reservation: what vLLM V1 sets aside for the largest image,
//! video or audio clip the limits allow, and the encoder cache.
//!
//! # Source (vLLM v0.19.1, `b1388b1fb`)
//! - `vllm/v1/worker/gpu_model_runner.py` `profile_run`: one modality is profiled, the one
//!   with the most tokens per item; `n_items` dummy items of the maximum feature size go
//!   through the encoder in one batch, and their outputs stay in the encoder cache while the
//!   decoder's dummy run over `max_num_batched_tokens` runs, so
//!   `peak = max(encoder forward, encoder outputs + text peak)`.
//! - `vllm/multimodal/encoder_budget.py` and `vllm/v1/core/encoder_cache_manager.py`
//!   (`compute_mm_encoder_budget`): `B = max(max_num_batched_tokens, T_max)` tokens is both
//!   the encoder's compute budget and the encoder cache; `n_items = max(1, min(B ÷ T,
//!   max_num_seqs × max(1, min(limit, max_model_len ÷ T))))`.
//! - `--skip-mm-profiling`: no encoder in the profiling run, no reservation (the user leaves
//!   the headroom); `--mm-encoder-tp-mode data`: the encoder whole on every rank
//!   ([`tower_shards`]).
//! - Every modality the model takes at 0 (`--limit-mm-per-prompt '{"image": 0, "video":
//!   0}'`, or `--language-model-only`): text-only mode, the tower is not even loaded
//!   (`vllm/model_executor/models/interfaces.py` `_mark_tower_model`, from v0.15).
//!   Disabling one modality only re-chooses the profiled one.
//! - Tokens per item (the processors' defaults, `preprocessor_config.json`): Qwen2/2.5-VL
//!   `max_pixels ÷ 28²` (default 12,845,056 px → 16,384), video `⌈F/2⌉ ×` that with `F` the
//!   most frames (≤ 14) whose tokens fit `max_model_len` (`qwen2_vl.py`
//!   `_get_max_video_frames`); Qwen3-VL `16,777,216 ÷ 32²` = 16,384, video 12,288 at 2
//!   frames; Gemma 3 256; Pixtral `⌈image_size ÷ 28⌉²` (Mistral Small 3: 3,025); Llama 4 17
//!   tiles × 144 = 2,448; LLaVA-1.5 `(336 ÷ 14)²` = 576; InternVL 13 × 256 = 3,328;
//!   Qwen2-Audio 750 per 30-second clip.
//! - Encoder forward peak (FlashAttention, no `N²` term; `qwen2_5_vl.py`
//!   `Qwen2_5_VisionBlock`): over `N` patches in 16 bits, the pixels `N × 3·t·p²`, two
//!   hidden-wide copies outside the blocks, and one block's transients at a time:
//!   `N × 2 × [3·t·p² + 2d + max(2d + 8d/TP, 3d + k·I/TP)]`, `k` = 3 for a gated MLP, 2 for
//!   a plain one. A first-order estimate from the code, not calibrated (the app labels it
//!   "not validated").

use super::Scenario;
use crate::model::{Vision, VisionFamily};
use serde::Serialize;

/// vLLM's default limit per modality when `--limit-mm-per-prompt` does not name it
/// (`vllm/config/multimodal.py`).
pub const DEFAULT_LIMIT: u64 = 999;
/// Qwen2/2.5-VL's default `max_pixels` (`preprocessor_config.json`: 28² × 16,384).
pub const QWEN2_VL_MAX_PIXELS: u64 = 12_845_056;
/// Qwen3-VL's default `longest_edge` in pixels (`preprocessor_config.json`).
pub const QWEN3_VL_MAX_PIXELS: u64 = 16_777_216;
/// Qwen2-VL caps a video at 14 frames (`qwen2_vl.py` `_MAX_FRAMES_PER_VIDEO`).
pub const QWEN2_VL_MAX_FRAMES: u64 = 14;

/// A modality.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Modality {
    /// Images.
    Image,
    /// Videos.
    Video,
    /// Audio clips.
    Audio,
}

/// One modality's largest item: its tokens (embeddings handed to the language model) and
/// the patches (frames) its encoder runs over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Item {
    /// The modality.
    pub modality: Modality,
    /// Tokens of the largest item.
    pub tokens: u64,
    /// Encoder positions (ViT patches, audio frames) of that item.
    pub patches: u64,
    /// Pixel (or sample) channels per patch: `3 × t × p²`.
    pub patch_values: u64,
    /// Tokens of the dummy item the profiling run encodes: `tokens`, or fewer when the
    /// dict form of `--limit-mm-per-prompt` shrinks it (`num_frames`; the budget and the
    /// item count stay at the model's maximum, `vllm/multimodal/processing/dummy_inputs.py`).
    pub dummy_tokens: u64,
}

/// What the profiling run reserves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Reservation {
    /// The profiled item (the modality with the most tokens per item); `None` when nothing
    /// is profiled.
    pub item: Option<Item>,
    /// Items of it in the dummy batch.
    pub items: u64,
    /// Encoder budget = encoder cache size, tokens.
    pub budget_tokens: u64,
    /// Peak of the encoder's forward over the batch, bytes.
    pub encoder_peak_bytes: u64,
    /// The encoder outputs held meanwhile, bytes.
    pub encoder_cache_bytes: u64,
}

/// The modalities a family takes (image, video, audio).
#[must_use]
pub fn modalities(f: VisionFamily) -> [bool; 3] {
    match f {
        VisionFamily::Qwen2Vl | VisionFamily::Qwen3Vl => [true, true, false],
        VisionFamily::Qwen2Audio => [false, false, true],
        // A tower vramfit does not know may take any of them (Omni, Phi-4-multimodal):
        // text-only only when all three are off.
        VisionFamily::Other => [true, true, true],
        _ => [true, false, false],
    }
}

/// Whether the limits turn off every modality the model takes (vLLM then runs the model as
/// text-only and, from v0.15, does not load the tower).
#[must_use]
pub fn text_only(s: &Scenario) -> bool {
    let Some(v) = s.model.vision else {
        return true;
    };
    let mm = s.flags.features.mm;
    let [i, vi, a] = modalities(v.family);
    let off = |on: bool, limit: Option<u64>| !on || limit == Some(0);
    off(i, mm.images) && off(vi, mm.videos) && off(a, mm.audios)
}

/// Whether the engine leaves the tower's weights out: vLLM from v0.15 in text-only mode.
#[must_use]
pub fn tower_skipped(s: &Scenario) -> bool {
    s.model.vision.is_some()
        && text_only(s)
        && matches!(s.flags.engine, crate::engine::Engine::Vllm { minor } if minor >= 15)
}

/// The ranks the encoder is split over: the TP size (`--mm-encoder-tp-mode weights`, the
/// default) or 1 (`data`: every rank holds the whole encoder, and one dummy item runs on one
/// rank at full size; `vllm/model_executor/models/vision.py`).
#[must_use]
pub fn tower_shards(s: &Scenario) -> u64 {
    if s.flags.features.mm.encoder_data_parallel {
        1
    } else {
        s.tensor_parallel_size.max(1)
    }
}

/// The largest image the family's processor makes (its tokens and patches).
fn image_item(v: &Vision, s: &Scenario) -> Option<Item> {
    let mm = s.flags.features.mm;
    let pv = 3 * v.temporal_patch.max(1) * v.patch * v.patch;
    let unit = v.patch * v.merge;
    let image = |tokens: u64, patches: u64| Item {
        modality: Modality::Image,
        tokens,
        patches,
        patch_values: pv,
        dummy_tokens: tokens,
    };
    match v.family {
        VisionFamily::Qwen2Vl | VisionFamily::Qwen3Vl => {
            let def = if v.family == VisionFamily::Qwen3Vl {
                QWEN3_VL_MAX_PIXELS
            } else {
                QWEN2_VL_MAX_PIXELS
            };
            let t = (mm.max_pixels.unwrap_or(def) / (unit * unit).max(1)).max(4);
            // One image is one temporal patch of two copies of the frame.
            Some(image(t, t * v.merge * v.merge))
        }
        VisionFamily::Gemma3 => {
            let side = (v.image_size.max(v.patch) / v.patch).max(1);
            Some(image(256, side * side))
        }
        VisionFamily::Pixtral => {
            let side = v.image_size.div_ceil(unit.max(1)).max(1);
            Some(image(side * side, side * side * v.merge * v.merge))
        }
        VisionFamily::Llama4 => {
            let side = (v.image_size.max(v.patch) / v.patch).max(1);
            Some(image(17 * 144, 17 * (side * side + 1)))
        }
        VisionFamily::Llava => {
            let side = (v.image_size.max(v.patch) / v.patch).max(1);
            Some(image(side * side, side * side + 1))
        }
        VisionFamily::InternVl => Some(image(13 * 256, 13 * 1024)),
        VisionFamily::Mllama | VisionFamily::Qwen2Audio | VisionFamily::Other => None,
    }
}

/// The largest item of each modality the model takes and the limits leave on.
#[must_use]
pub fn items(v: &Vision, s: &Scenario) -> Vec<Item> {
    let mm = s.flags.features.mm;
    let [img, vid, aud] = modalities(v.family);
    let on = |taken: bool, limit: Option<u64>| taken && limit != Some(0);
    let len = s.model_len();
    let pv = 3 * v.temporal_patch.max(1) * v.patch * v.patch;
    let mut out = Vec::new();
    // The largest image, whatever the image limit: a video's frames are images too.
    let largest = image_item(v, s);
    if on(img, mm.images) {
        out.extend(largest);
    }
    if on(vid, mm.videos) {
        if let Some(Item { tokens: per, .. }) = largest {
            let t = v.temporal_patch.max(1);
            let grid = |f: u64| f.div_ceil(t).max(1);
            // The most frames (≤ 14) whose tokens fit the context (`_get_max_video_frames`);
            // Qwen3-VL profiles 2 frames at its video processor's size.
            let (tokens, most) = if v.family == VisionFamily::Qwen3Vl {
                (12_288, 2)
            } else {
                let f = (1..=QWEN2_VL_MAX_FRAMES)
                    .take_while(|f| grid(*f).saturating_mul(per) <= len)
                    .last()
                    .unwrap_or(1);
                (grid(f).saturating_mul(per), f)
            };
            // `num_frames` shrinks only the dummy video (never past the most).
            let dummy = mm
                .frames
                .map_or(tokens, |f| tokens / grid(most) * grid(f.min(most)));
            out.push(Item {
                modality: Modality::Video,
                tokens,
                patches: dummy.saturating_mul(v.merge * v.merge),
                patch_values: pv,
                dummy_tokens: dummy,
            });
        }
    }
    if on(aud, mm.audios) && v.family == VisionFamily::Qwen2Audio {
        // 30 s at 16 kHz: 3000 mel frames, 1500 after the stride-2 conv, 750 tokens.
        out.push(Item {
            modality: Modality::Audio,
            tokens: 750,
            patches: 1500,
            patch_values: 128 * 2,
            dummy_tokens: 750,
        });
    }
    out
}

/// The reservation of the profiling run (nothing for a text-only model or text-only mode).
#[must_use]
pub fn reservation(s: &Scenario, max_num_batched_tokens: u64, max_num_seqs: u64) -> Reservation {
    let Some(v) = s.model.vision else {
        return Reservation::default();
    };
    if text_only(s)
        || s.flags.features.mm.skip_profiling
        || !matches!(s.flags.engine, crate::engine::Engine::Vllm { .. })
    {
        return Reservation::default();
    }
    let all = items(&v, s);
    // The modality with the most tokens per item (ties: the larger name, as vLLM's `max`).
    let Some(item) = all
        .iter()
        .copied()
        .max_by_key(|i| (i.tokens, i.modality as u8))
    else {
        return Reservation::default();
    };
    let mm = s.flags.features.mm;
    let limit = match item.modality {
        Modality::Image => mm.images,
        Modality::Video => mm.videos,
        Modality::Audio => mm.audios,
    }
    .unwrap_or(DEFAULT_LIMIT);
    let t = item.tokens.max(1);
    let budget = max_num_batched_tokens.max(t);
    let per_prompt = limit.min(s.model_len() / t).max(1);
    let n = (budget / t)
        .min(max_num_seqs.saturating_mul(per_prompt))
        .max(1);
    let patches = n.saturating_mul(item.patches);
    let tp = tower_shards(s);
    let (d, i) = (v.hidden, v.intermediate);
    let k = if v.gated { 3 } else { 2 };
    let block = (2 * d + 8 * d / tp).max(3 * d + k * i / tp);
    let encoder_peak = patches.saturating_mul(2 * (item.patch_values + 2 * d + block));
    let cache = n
        .saturating_mul(item.dummy_tokens)
        .saturating_mul(v.out_hidden * 2);
    Reservation {
        item: Some(item),
        items: n,
        budget_tokens: budget,
        encoder_peak_bytes: encoder_peak,
        encoder_cache_bytes: cache,
    }
}

/// What each request carries when the limits are set explicitly (the speed model's upper
/// bound: every request sends the items the limits allow, at the size profiled): the tokens
/// the encoder hands the language model, and the encoder's FLOPs (2 × tower parameters per
/// patch, the GEMMs of a ViT; its windowed attention is left out). `(0, 0)` when the limits
/// are vLLM's defaults (999: a maximum, not a use) or the model reads text only.
#[must_use]
pub fn per_request(s: &Scenario) -> (u64, f64) {
    let tower = crate::units::real(s.model.extra_params);
    sent(s)
        .iter()
        .fold((0u64, 0.0), |(tokens, flops), &(it, n)| {
            (
                tokens.saturating_add(n.saturating_mul(it.dummy_tokens)),
                flops + crate::units::real(n) * crate::units::real(it.patches) * 2.0 * tower,
            )
        })
}

/// The items each request sends under explicit limits, with how many of each (empty when
/// [`per_request`] counts nothing).
#[must_use]
pub fn sent(s: &Scenario) -> Vec<(Item, u64)> {
    let Some(v) = s.model.vision else {
        return Vec::new();
    };
    if text_only(s) {
        return Vec::new();
    }
    let mm = s.flags.features.mm;
    items(&v, s)
        .into_iter()
        .filter_map(|it| {
            let n = match it.modality {
                Modality::Image => mm.images,
                Modality::Video => mm.videos,
                Modality::Audio => mm.audios,
            }
            .unwrap_or(0);
            (n > 0).then_some((it, n))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelArch;

    /// Qwen2.5-VL-7B-Instruct's `config.json` (the fields read), as published on the Hub.
    const QWEN25_VL_7B: &str = r#"{"architectures":["Qwen2_5_VLForConditionalGeneration"],
      "model_type":"qwen2_5_vl","hidden_size":3584,"intermediate_size":18944,
      "num_hidden_layers":28,"num_attention_heads":28,"num_key_value_heads":4,
      "vocab_size":152064,"max_position_embeddings":128000,"tie_word_embeddings":false,
      "vision_config":{"depth":32,"hidden_size":1280,"intermediate_size":3420,
        "num_heads":16,"patch_size":14,"spatial_merge_size":2,"temporal_patch_size":2,
        "window_size":112,"out_hidden_size":3584,"model_type":"qwen2_5_vl"}}"#;

    fn qwen() -> Scenario {
        let mut s = Scenario::new(ModelArch::from_config_str(QWEN25_VL_7B).unwrap());
        s.flags.max_model_len = Some(32768);
        s
    }

    #[test]
    fn qwen25_vl_7b_profiles_one_four_frame_video_at_32k() {
        let s = qwen();
        let v = s.model.vision.unwrap();
        assert_eq!(v.family, VisionFamily::Qwen2Vl);
        assert!(v.gated);
        let its = items(&v, &s);
        // Image: 12,845,056 ÷ 784 = 16,384 tokens; video: 4 frames (2 temporal patches)
        // are the most whose tokens fit 32,768.
        assert_eq!(its[0].tokens, 16_384);
        assert_eq!(its[1].tokens, 32_768);
        let r = reservation(&s, 8192, 1024);
        assert_eq!(r.item.unwrap().modality, Modality::Video);
        assert_eq!(r.budget_tokens, 32_768);
        assert_eq!(r.items, 1);
        // 131,072 patches × 2 B × [1176 + 2560 + max(2560 + 10240, 3840 + 10260)].
        assert_eq!(r.encoder_peak_bytes, 131_072 * 2 * (1176 + 2560 + 14_100));
        // Outputs: 32,768 tokens × 3584 × 2 B = 0.22 GiB.
        assert_eq!(r.encoder_cache_bytes, 32_768 * 3584 * 2);
    }

    #[test]
    fn disabling_video_profiles_images_and_disabling_both_is_text_only() {
        let mut s = qwen();
        s.flags.features.mm.videos = Some(0);
        let r = reservation(&s, 8192, 1024);
        assert_eq!(r.item.unwrap().modality, Modality::Image);
        assert_eq!(r.budget_tokens, 16_384);
        assert_eq!(r.encoder_peak_bytes, 65_536 * 2 * (1176 + 2560 + 14_100));
        assert!(!tower_skipped(&s));
        s.flags.features.mm.images = Some(0);
        assert_eq!(reservation(&s, 8192, 1024), Reservation::default());
        assert!(tower_skipped(&s));
        // vLLM 0.11–0.14 had no generic skip.
        s.flags.engine = crate::engine::Engine::Vllm { minor: 14 };
        assert!(!tower_skipped(&s));
    }

    #[test]
    fn num_frames_shrinks_only_the_dummy_video() {
        let mut s = qwen();
        s.flags.features.mm.frames = Some(2);
        let r = reservation(&s, 8192, 1024);
        // The budget and the item stay at the 4-frame maximum; the dummy is one temporal
        // patch: 16,384 tokens, 65,536 patches.
        assert_eq!(r.budget_tokens, 32_768);
        assert_eq!(r.items, 1);
        assert_eq!(r.encoder_cache_bytes, 16_384 * 3584 * 2);
        assert_eq!(r.encoder_peak_bytes, 65_536 * 2 * (1176 + 2560 + 14_100));
        // More frames than fit are the most that fit.
        s.flags.features.mm.frames = Some(4096);
        assert_eq!(
            reservation(&s, 8192, 1024).encoder_cache_bytes,
            32_768 * 3584 * 2
        );
    }

    #[test]
    fn a_smaller_max_pixels_shrinks_everything() {
        let mut s = qwen();
        s.flags.features.mm.max_pixels = Some(1_003_520);
        let r = reservation(&s, 8192, 1024);
        // 1,003,520 ÷ 784 = 1280 per image; 14 frames → 7 × 1280 = 8960 (video profiled).
        assert_eq!(r.item.unwrap().tokens, 8960);
        assert_eq!(r.budget_tokens, 8960);
        assert_eq!(r.items, 1);
    }

    #[test]
    fn small_items_fill_the_budget() {
        // Mistral Small 3.1: Pixtral at 1540 px, patch 14, merge 2 → 55² = 3025 tokens; two
        // fit the 8192-token budget.
        let cfg = r#"{"architectures":["Mistral3ForConditionalGeneration"],"spatial_merge_size":2,
          "text_config":{"hidden_size":5120,"intermediate_size":32768,"num_hidden_layers":40,
          "num_attention_heads":32,"num_key_value_heads":8,"head_dim":128,"vocab_size":131072,
          "max_position_embeddings":131072},
          "vision_config":{"hidden_size":1024,"image_size":1540,"intermediate_size":4096,
          "model_type":"pixtral","num_hidden_layers":24,"patch_size":14}}"#;
        let s = Scenario::new(ModelArch::from_config_str(cfg).unwrap());
        let r = reservation(&s, 8192, 1024);
        assert_eq!(r.item.unwrap().tokens, 3025);
        assert_eq!(r.items, 2);
        assert_eq!(r.encoder_cache_bytes, 2 * 3025 * 5120 * 2);
    }
}
