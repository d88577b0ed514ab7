//! The multimodal encoder of a vision-language (or audio-language) model, as far as the
//! engine's profiling needs it: the tower's shape and the family whose processor decides the
//! tokens per item (`sizing/mm.rs`).
//!
//! # Sources
//! The `vision_config` fields of the transformers classes `Qwen2VLVisionConfig`
//! (`depth`, `embed_dim`, `mlp_ratio`), `Qwen2_5_VLVisionConfig` / `Qwen3VLVisionConfig`
//! (`depth`, `hidden_size`, `intermediate_size`, `out_hidden_size`, `patch_size`,
//! `spatial_merge_size`, `temporal_patch_size`), `SiglipVisionConfig` (Gemma 3),
//! `PixtralVisionConfig` (Mistral 3, with the wrapper's `spatial_merge_size`),
//! `Llama4VisionConfig`, `CLIPVisionConfig` (LLaVA), `InternVisionConfig`; Qwen2-Audio's
//! `audio_config` (`d_model`, `encoder_layers`, `encoder_ffn_dim`).

use super::read::{get_str, get_u64};
use serde::Serialize;
use serde_json::Value;

/// Whose processor turns an image (video, audio clip) into tokens (vLLM's model file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VisionFamily {
    /// Qwen2-VL and Qwen2.5-VL (`qwen2_vl.py`, `qwen2_5_vl.py`): dynamic resolution up to
    /// `max_pixels`, videos.
    Qwen2Vl,
    /// Qwen3-VL (`qwen3_vl.py`): patch 16, images and videos.
    Qwen3Vl,
    /// Gemma 3 (`gemma3_mm.py`): 256 tokens per image without pan-and-scan.
    Gemma3,
    /// Mistral 3 / Pixtral-HF (`mistral3.py`, `pixtral.py`): `(image_size / (patch ×
    /// merge))²` tokens.
    Pixtral,
    /// Llama 4 (`mllama4.py`): 144 tokens per 336-pixel tile, up to 16 tiles and a global one.
    Llama4,
    /// LLaVA-1.5 (`llava.py`): CLIP at `image_size / patch` squared.
    Llava,
    /// InternVL (`internvl.py`): 256 tokens per 448-pixel tile, 12 tiles and a thumbnail.
    InternVl,
    /// Llama 3.2 Vision (`MllamaForConditionalGeneration`): removed from vLLM after v0.10.2.
    Mllama,
    /// Qwen2-Audio (`qwen2_audio.py`): 750 tokens per 30-second clip.
    Qwen2Audio,
    /// A tower vramfit cannot size the profiling of (its weights still count).
    Other,
}

/// The encoder tower's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Vision {
    /// The processor family.
    pub family: VisionFamily,
    /// Tower width `d`.
    pub hidden: u64,
    /// Tower MLP width `I`.
    pub intermediate: u64,
    /// Tower layers.
    pub layers: u64,
    /// Patch side, pixels.
    pub patch: u64,
    /// Spatial merge (patches merged per side into one token).
    pub merge: u64,
    /// Frames per temporal patch (Qwen-VL video: 2; else 1).
    pub temporal_patch: u64,
    /// Input side, pixels (fixed-resolution towers).
    pub image_size: u64,
    /// Gated MLP (SwiGLU) in the tower.
    pub gated: bool,
    /// Width of what the encoder hands the language model (its hidden size).
    pub out_hidden: u64,
}

impl Vision {
    /// The tower's parameters from its shape, for a config the catalog does not count: per
    /// layer `4d²` of attention and `k·d·I` of MLP (`k` = 3 gated, 2 plain) with biases and two
    /// norms; the patch embedding `3·t·p²·d`; a projector `merge²·d × out`. A first-order
    /// count (towers differ in their extras); the app says it is estimated.
    #[must_use]
    pub fn params(&self) -> u64 {
        let (d, i) = (self.hidden, self.intermediate);
        let k = if self.gated { 3 } else { 2 };
        let layer = 4 * d * d + 4 * d + k * d * i + i + d + 4 * d;
        let embed = 3 * self.temporal_patch.max(1) * self.patch * self.patch * d;
        let projector = self.merge * self.merge * d * self.out_hidden;
        self.layers
            .saturating_mul(layer)
            .saturating_add(embed)
            .saturating_add(projector)
    }

    /// Reads the tower of a multimodal `config.json` (`vision_config` or `audio_config`);
    /// `None` for a text-only model. `lm_hidden` is the language model's hidden size.
    #[must_use]
    pub fn read(root: &Value, architecture: &str, lm_hidden: u64) -> Option<Self> {
        let arch = architecture.to_ascii_lowercase();
        if let Some(a) = root.get("audio_config").filter(|a| a.is_object()) {
            if root.get("vision_config").is_none() {
                return Some(Self {
                    family: if arch.contains("qwen2audio") {
                        VisionFamily::Qwen2Audio
                    } else {
                        VisionFamily::Other
                    },
                    hidden: get_u64(a, "d_model").unwrap_or(1280),
                    intermediate: get_u64(a, "encoder_ffn_dim").unwrap_or(5120),
                    layers: get_u64(a, "encoder_layers").unwrap_or(32),
                    patch: 1,
                    merge: 1,
                    temporal_patch: 1,
                    image_size: 0,
                    gated: false,
                    out_hidden: lm_hidden,
                });
            }
        }
        let v = root.get("vision_config").filter(|v| v.is_object())?;
        let vt = get_str(v, "model_type").unwrap_or("").to_ascii_lowercase();
        let family = if arch.contains("qwen3vl") || vt.starts_with("qwen3_vl") {
            VisionFamily::Qwen3Vl
        } else if arch.contains("qwen2vl") || arch.contains("qwen2_5_vl") || vt.starts_with("qwen2")
        {
            VisionFamily::Qwen2Vl
        } else if arch.contains("gemma3") {
            VisionFamily::Gemma3
        } else if vt == "pixtral" || arch.contains("mistral3") || arch.contains("pixtral") {
            VisionFamily::Pixtral
        } else if arch.contains("llama4") {
            VisionFamily::Llama4
        } else if arch.contains("mllama") {
            VisionFamily::Mllama
        } else if arch.contains("internvl") {
            VisionFamily::InternVl
        } else if arch == "llavaforconditionalgeneration" {
            VisionFamily::Llava
        } else {
            VisionFamily::Other
        };
        let qwen = matches!(family, VisionFamily::Qwen2Vl | VisionFamily::Qwen3Vl);
        // Qwen2-VL writes `embed_dim` and `mlp_ratio` (its `hidden_size` is the LM's).
        let hidden = get_u64(v, "embed_dim")
            .or_else(|| get_u64(v, "hidden_size"))
            .or_else(|| get_u64(v, "width"))
            .unwrap_or(1024);
        let intermediate = get_u64(v, "intermediate_size")
            .or_else(|| {
                v.get("mlp_ratio")
                    .and_then(Value::as_f64)
                    .map(|r| crate::units::whole(r * crate::units::real(hidden)))
            })
            .unwrap_or(4 * hidden);
        let layers = get_u64(v, "depth")
            .or_else(|| get_u64(v, "num_hidden_layers"))
            .or_else(|| get_u64(v, "layers"))
            .unwrap_or(24);
        let default_patch = if family == VisionFamily::Qwen3Vl {
            16
        } else {
            14
        };
        let patch = get_u64(v, "patch_size").unwrap_or(default_patch).max(1);
        let merge = get_u64(v, "spatial_merge_size")
            .or_else(|| get_u64(root, "spatial_merge_size"))
            .unwrap_or(if qwen { 2 } else { 1 })
            .max(1);
        let gated = match family {
            // Qwen2.5-VL and Pixtral use SwiGLU; Qwen2-VL and Qwen3-VL a plain fc1/fc2.
            VisionFamily::Qwen2Vl => get_u64(v, "intermediate_size").is_some(),
            VisionFamily::Pixtral => true,
            _ => false,
        };
        Some(Self {
            family,
            hidden,
            intermediate,
            layers,
            patch,
            merge,
            temporal_patch: get_u64(v, "temporal_patch_size").unwrap_or(if qwen { 2 } else { 1 }),
            image_size: get_u64(v, "image_size").unwrap_or(0),
            gated,
            out_hidden: get_u64(v, "out_hidden_size").unwrap_or(lm_hidden),
        })
    }
}
