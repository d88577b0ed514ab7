//! A checkpoint's bytes by the way tensor parallelism shards them, from tensor names.
//!
//! The classes follow vLLM's layers (`vllm/model_executor/layers/linear.py`,
//! `vocab_parallel_embedding.py`, `fused_moe/layer.py`):
//! - `embed_tokens` / `wte` / `word_embeddings`, `lm_head`: `VocabParallelEmbedding` /
//!   `ParallelLMHead`, split 1/TP over the vocabulary padded to 64.
//! - `k_proj`, `v_proj` (and their scales, zeros, biases): `QKVParallelLinear`'s K/V part,
//!   split over at most `num_key_value_heads` ranks, replicated beyond.
//! - other projections in a layer (`q_proj`, `o_proj`, `gate_proj`, `up_proj`, `down_proj`,
//!   fused `qkv_proj` / `gate_up_proj`, MLA `q_b_proj` / `kv_b_proj`, shared experts):
//!   `ColumnParallelLinear` / `RowParallelLinear`, split 1/TP, with their scales.
//! - routed experts (`.experts.`): `FusedMoE`, split 1/TP (or over EP ranks).
//! - replicated: norms, routers (`mlp.gate.weight`, `router`), attention sinks, MLA
//!   down-projections (`q_a_proj`, `kv_a_proj_with_mqa`: `ReplicatedLinear`), the biases of
//!   row-parallel layers (`o_proj.bias`, `down_proj.bias`: added after the all-reduce, so
//!   whole on every rank).
//! - a multimodal tower (`visual.`, `vision_tower.`, `vision_model.`, `audio_tower.`,
//!   `multi_modal_projector.`, `mm_projector.`, with or without a `model.` prefix): the
//!   encoder vLLM builds beside the decoder, on the first pipeline stage, split over TP
//!   unless `--mm-encoder-tp-mode data` (`sizing/mm.rs`); not read by decode steps.
//! - a multi-token-prediction module (see [`ShardBytes::mtp`]): not loaded.
//! - anything else (names no rule knows): split 1/TP, an assumption the plan states with an
//!   example name.
//!
//! Bytes are as vLLM holds them: F32 tensors other than scales count 2 bytes per element
//! (parameters are created in the model's 16-bit dtype, `--dtype auto`); an all-fp32
//! checkpoint is not sized from its headers at all (`plan::header_weights`).

use serde::{Deserialize, Serialize};

/// Bytes of a checkpoint's tensors by sharding class (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShardBytes {
    /// Input embedding (vocab-parallel).
    pub embed: u64,
    /// LM head (vocab-parallel; 0 when tied).
    pub lm_head: u64,
    /// Decoder-layer projections split 1/TP.
    pub layer_sharded: u64,
    /// Decoder-layer K/V projections (split over at most `kv_heads` ranks).
    pub layer_kv: u64,
    /// Decoder-layer tensors replicated on every rank.
    pub layer_replicated: u64,
    /// Routed experts.
    pub layer_expert: u64,
    /// Replicated tensors outside the layers (final norm).
    pub replicated: u64,
    /// A multimodal tower's tensors (vision or audio encoder and its projector).
    #[serde(default)]
    pub tower: u64,
    /// A multi-token-prediction module's tensors: every tensor of a layer that holds an
    /// `eh_proj` (DeepSeek-V3's and GLM-4.5's `model.layers.{num_hidden_layers}`, with its
    /// own `embed_tokens` and `shared_head`; `Report::from_headers`), or `mtp.` (Qwen3-Next). vLLM's model does not load them (`load_weights` skips
    /// `num_nextn_predict_layers`); only an MTP drafter does, which `sizing/spec.rs` sizes
    /// from the config. Counted in [`ShardBytes::total`], in no stage's weights.
    #[serde(default)]
    pub mtp: u64,
    /// The MTP module's parameters (logical count: packed weights unpacked), which a config's
    /// count leaves out as vLLM's model does.
    #[serde(default)]
    pub mtp_parameters: u64,
    /// Tensors no rule knows, split 1/TP by assumption.
    pub unknown: u64,
    /// One of them, to name in the assumption.
    pub unknown_example: Option<String>,
}

/// The class of one tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Embed,
    LmHead,
    Sharded,
    Kv,
    LayerReplicated,
    Expert,
    Replicated,
    Tower,
    Mtp,
    Unknown,
}

/// The decoder-layer index in a tensor's name (`model.layers.61.eh_proj.weight` → 61).
#[cfg(feature = "import")]
#[must_use]
pub fn layer_of(name: &str) -> Option<usize> {
    let rest = &name[name.find(".layers.")? + ".layers.".len()..];
    rest.split_once('.')?.0.parse().ok()
}

fn in_layer(n: &str) -> bool {
    [".layers.", ".h.", ".blocks.", "layers."]
        .iter()
        .any(|p| n.contains(p))
}

/// Name prefixes of multimodal towers (after a leading `model.`, `thinker.` or
/// `transformer.`): Qwen2/2.5/3-VL and Omni `visual.`, `audio_tower.`; LLaVA, Gemma 3
/// `vision_tower.`, `multi_modal_projector.`; Llama 4, Mllama `vision_model.`; Phi-4-multimodal
/// `embed_tokens_extend.`, Phi-3.5-vision `vision_embed_tokens.`; Gemma 3n `embed_vision.`,
/// `embed_audio.`; InternVL `mlp1.`; Idefics3 `connector.`; Pixtral in Mistral's format
/// `vision_encoder.`, `vision_language_adapter.`, `patch_merger.`; GLM-4V `vision.`.
const TOWER: [&str; 16] = [
    "visual.",
    "vision_tower.",
    "vision_model.",
    "audio_tower.",
    "multi_modal_projector.",
    "mm_projector.",
    "embed_tokens_extend.",
    "vision_embed_tokens.",
    "embed_vision.",
    "embed_audio.",
    "mlp1.",
    "connector.",
    "vision_encoder.",
    "vision_language_adapter.",
    "patch_merger.",
    "vision.",
];

fn classify(name: &str) -> Class {
    let n = name.to_ascii_lowercase();
    // Before the embedding's rule: Phi's towers are `embed_tokens_extend.` and
    // `vision_embed_tokens.`.
    let bare = ["model.", "thinker.", "transformer."]
        .iter()
        .find_map(|p| n.strip_prefix(p))
        .unwrap_or(&n);
    if TOWER.iter().any(|p| bare.starts_with(p)) {
        return Class::Tower;
    }
    if bare.starts_with("mtp.") {
        return Class::Mtp;
    }
    if n.contains("embed_tokens") || n.contains(".wte.") || n.contains("word_embeddings") {
        return Class::Embed;
    }
    if n.starts_with("lm_head") || n.contains(".lm_head.") {
        return Class::LmHead;
    }
    if !in_layer(&n) {
        return if n.contains("norm") {
            Class::Replicated
        } else {
            Class::Unknown
        };
    }
    if n.contains(".experts.") && !n.contains("shared_expert") {
        return Class::Expert;
    }
    let replicated = n.contains("norm")
        || n.ends_with(".gate.weight")
        || n.ends_with(".gate.bias")
        || n.contains(".router.")
        || n.contains("sinks")
        || n.contains("q_a_proj")
        || n.contains("kv_a_proj")
        || n.contains("e_score_correction")
        || n.contains("shared_expert_gate")
        || ((n.contains("o_proj") || n.contains("down_proj") || n.contains(".dense."))
            && n.ends_with(".bias"));
    if replicated {
        return Class::LayerReplicated;
    }
    // A fused `qkv_proj` is split 1/TP as a whole (its K/V part replicated beyond kv_heads
    // is not separated: an approximation for TP > kv_heads).
    if !n.contains("qkv_proj") && (n.contains("k_proj") || n.contains("v_proj")) {
        return Class::Kv;
    }
    let sharded = [
        "proj",
        "fc1",
        "fc2",
        "mlp",
        "attn",
        "attention",
        "dense",
        "query_key_value",
        "wq",
        "wo",
        "w1",
        "w2",
        "w3",
    ];
    if sharded.iter().any(|p| n.contains(p)) {
        Class::Sharded
    } else {
        Class::Unknown
    }
}

impl ShardBytes {
    /// Adds one tensor of `bytes` named `name`.
    pub fn add(&mut self, name: &str, bytes: u64) {
        let slot = match classify(name) {
            Class::Embed => &mut self.embed,
            Class::LmHead => &mut self.lm_head,
            Class::Sharded => &mut self.layer_sharded,
            Class::Kv => &mut self.layer_kv,
            Class::LayerReplicated => &mut self.layer_replicated,
            Class::Expert => &mut self.layer_expert,
            Class::Replicated => &mut self.replicated,
            Class::Tower => &mut self.tower,
            Class::Mtp => &mut self.mtp,
            Class::Unknown => {
                if self.unknown_example.is_none() {
                    self.unknown_example = Some(name.to_owned());
                }
                &mut self.unknown
            }
        };
        *slot = slot.saturating_add(bytes);
    }

    /// All bytes.
    #[must_use]
    pub fn total(&self) -> u64 {
        [
            self.embed,
            self.lm_head,
            self.layer_sharded,
            self.layer_kv,
            self.layer_replicated,
            self.layer_expert,
            self.replicated,
            self.tower,
            self.mtp,
            self.unknown,
        ]
        .iter()
        .fold(0u64, |a, &b| a.saturating_add(b))
    }

    /// Adds one tensor of a multi-token-prediction layer: `bytes` held, `parameters`
    /// (logical) to [`ShardBytes::mtp`] and [`ShardBytes::mtp_parameters`].
    pub fn add_mtp(&mut self, bytes: u64, parameters: u64) {
        self.mtp = self.mtp.saturating_add(bytes);
        self.mtp_parameters = self.mtp_parameters.saturating_add(parameters);
    }

    /// Whether no tensor was added (a report read from an older JSON without the field).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(feature = "import")]
    fn layer_indexes_and_mtp_markers() {
        assert_eq!(layer_of("model.layers.61.eh_proj.weight"), Some(61));
        assert_eq!(layer_of("model.layers.7.mlp.experts.3.w1.weight"), Some(7));
        assert_eq!(layer_of("model.embed_tokens.weight"), None);
        assert_eq!(layer_of("model.layers.x.w"), None);
        assert_eq!(classify("mtp.layers.0.self_attn.q_proj.weight"), Class::Mtp);
    }

    #[test]
    fn names_of_real_checkpoints_land_in_their_class() {
        let cases = [
            ("model.embed_tokens.weight", Class::Embed),
            ("lm_head.weight", Class::LmHead),
            ("model.layers.0.self_attn.q_proj.weight", Class::Sharded),
            ("model.layers.0.self_attn.k_proj.qweight", Class::Kv),
            ("model.layers.0.self_attn.v_proj.bias", Class::Kv),
            ("model.layers.0.self_attn.qkv_proj.weight", Class::Sharded),
            (
                "model.layers.0.self_attn.o_proj.bias",
                Class::LayerReplicated,
            ),
            (
                "model.layers.0.mlp.down_proj.weight_scale_inv",
                Class::Sharded,
            ),
            ("model.layers.0.mlp.gate.weight", Class::LayerReplicated),
            ("model.layers.0.mlp.router.weight", Class::LayerReplicated),
            ("model.layers.0.self_attn.sinks", Class::LayerReplicated),
            ("visual.blocks.0.attn.qkv.weight", Class::Tower),
            ("visual.merger.mlp.0.weight", Class::Tower),
            ("model.visual.patch_embed.proj.weight", Class::Tower),
            (
                "vision_model.model.layers.0.self_attn.q_proj.weight",
                Class::Tower,
            ),
            ("multi_modal_projector.linear_1.weight", Class::Tower),
            (
                "model.vision_tower.encoder.layers.0.mlp.fc1.weight",
                Class::Tower,
            ),
            (
                "model.embed_tokens_extend.image_embed.img_processor.encoder.layers.0.mlp.fc1.weight",
                Class::Tower,
            ),
            ("model.vision_embed_tokens.img_projection.0.weight", Class::Tower),
            ("thinker.visual.blocks.0.attn.qkv.weight", Class::Tower),
            ("thinker.audio_tower.layers.0.fc1.weight", Class::Tower),
            ("transformer.vision.transformer.layers.0.mlp.fc1.weight", Class::Tower),
            ("vision_encoder.transformer.layers.0.attention.wq.weight", Class::Tower),
            ("thinker.model.layers.0.self_attn.q_proj.weight", Class::Sharded),
            ("transformer.h.0.self_attention.query_key_value.weight", Class::Sharded),
            (
                "model.layers.3.self_attn.kv_a_proj_with_mqa.weight",
                Class::LayerReplicated,
            ),
            ("model.layers.3.self_attn.kv_b_proj.weight", Class::Sharded),
            (
                "model.layers.0.mlp.experts.gate_up_proj_blocks",
                Class::Expert,
            ),
            (
                "model.layers.3.mlp.shared_experts.up_proj.weight",
                Class::Sharded,
            ),
            (
                "model.layers.0.input_layernorm.weight",
                Class::LayerReplicated,
            ),
            ("model.norm.weight", Class::Replicated),
            ("vision_tower.patch_embed.proj.weight", Class::Tower),
            ("model.layers.61.eh_proj.weight", Class::Sharded),
            ("mtp.fc.weight", Class::Mtp),
        ];
        for (name, class) in cases {
            assert_eq!(classify(name), class, "{name}");
        }
    }
}
