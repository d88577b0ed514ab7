//! Model architecture: what the sizing needs from a Hugging Face `config.json`, and the
//! parameter count broken down by the way an engine shards it.
//!
//! # Sources
//! - Field names are those of `transformers` configuration classes (`LlamaConfig`,
//!   `Qwen2Config`, `Qwen3MoeConfig`, `DeepseekV3Config`, `Gemma2Config`, `Gemma3TextConfig`,
//!   `GptOssConfig`, `FalconConfig`, `PhiConfig`, `MixtralConfig`, `Llama4TextConfig`).
//!   Multimodal wrappers (`Gemma3ForConditionalGeneration`, `Mistral3ForConditionalGeneration`,
//!   `Llama4ForConditionalGeneration`, `MllamaForConditionalGeneration`) nest the language
//!   model under `text_config`; we read that.
//! - Parameter accounting follows the module shapes in vLLM's `vllm/model_executor/models/`
//!   (`llama.py`, `qwen2.py`, `qwen3_moe.py`, `deepseek_v2.py`, `gemma2.py`, `gpt_oss.py`):
//!   - attention: `q = hidden × heads × head_dim`, `k = v = hidden × kv_heads × head_dim`,
//!     `o = heads × head_dim × hidden`, plus q/k/v biases where `attention_bias` (Qwen2 always);
//!   - gated MLP (SiLU/GELU-tanh): `3 × hidden × intermediate`; non-gated (Phi-2, Falcon,
//!     GPT-2 style): `2 × hidden × intermediate` plus biases;
//!   - MoE layer: `experts × 3 × hidden × moe_intermediate + router hidden × experts`
//!     (+ shared experts);
//!   - MLA (DeepSeek-V2/V3, Kimi K2): `q_a = hidden × q_lora_rank` (or `q = hidden × heads ×
//!     qk_head_dim` without q LoRA), `kv_a = hidden × (kv_lora_rank + qk_rope_head_dim)`,
//!     `q_b = q_lora_rank × heads × (qk_nope + qk_rope)`, `kv_b = kv_lora_rank × heads ×
//!     (qk_nope + v_head)`, `o = heads × v_head × hidden` (DeepSeek-V2 paper, §2.1).
//! - KV cache per token and layer: `2 × kv_heads × head_dim × dtype bytes` (MHA/GQA/MQA),
//!   `(kv_lora_rank + qk_rope_head_dim) × dtype bytes` for MLA (vLLM
//!   `vllm/v1/kv_cache_interface.py`, `MLAAttentionSpec`). Per layer: full-attention layers
//!   of Gemma 4 use `global_head_dim` and, with `attention_k_eq_v`,
//!   `num_global_key_value_heads` (vLLM `gemma4.py` at `eee7972`, `Gemma4DecoderLayer`);
//!   K = V still caches K and V (the K weights are loaded into both slots of `qkv_proj`);
//!   the last `num_kv_shared_layers` layers cache nothing (`kv_sharing_target_layer_name`);
//!   linear-attention and Mamba layers hold a constant state per request instead
//!   ([`RecurrentState`], vLLM `mamba_utils.py` `MambaStateShapeCalculator`).
//! - Layer kinds: `layer_types` (`sliding_attention`, `full_attention`, `linear_attention`,
//!   `mamba`, …), Nemotron-H `hybrid_override_pattern`, Qwen3-Next `full_attention_interval`,
//!   Jamba `attn_layer_period` / `attn_layer_offset`; an unknown kind is full attention, the
//!   larger KV, as a stated [`Assumption`].
//! - Every field is looked up through [`aliases::ALIASES`], one row per concept with its
//!   spellings across families and their sources; each value read is recorded as
//!   [`Provenance`], each value assumed as an [`Assumption`].

use serde_json::Value;

pub mod aliases;
mod read;
#[allow(clippy::wildcard_imports)] // the reader's half of this module (`model/read.rs`)
use read::*;
mod error;
mod layers;
mod params;
mod quant;
mod vision;

use aliases::Concept;
pub use error::ConfigError;
pub use layers::{
    Assumption, GlobalAttention, LayerAttention, LayerKind, Mixer, Provenance, RecurrentState,
};
pub use params::ParamBreakdown;
pub use quant::ConfigQuantization;
pub use vision::{Vision, VisionFamily};

/// Multi-head latent attention ranks (DeepSeek-V2/V3, Kimi K2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Mla {
    /// `q_lora_rank`, `None` when queries are projected directly.
    pub q_lora_rank: Option<u64>,
    /// `kv_lora_rank` (512 in DeepSeek-V3).
    pub kv_lora_rank: u64,
    /// `qk_rope_head_dim` (64).
    pub qk_rope_head_dim: u64,
    /// `qk_nope_head_dim` (128).
    pub qk_nope_head_dim: u64,
    /// `v_head_dim` (128).
    pub v_head_dim: u64,
}

/// Mixture-of-experts shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Moe {
    /// Routed experts per MoE layer.
    pub experts: u64,
    /// Routed experts each token uses.
    pub experts_per_token: u64,
    /// Intermediate size of one routed expert.
    pub expert_intermediate: u64,
    /// Total intermediate size of the always-on shared expert(s) (0 when none).
    pub shared_intermediate: u64,
    /// Whether the shared expert has a sigmoid gate (`hidden` weights; Qwen-MoE).
    pub shared_gate: bool,
    /// Whether experts carry biases (gpt-oss).
    pub expert_bias: bool,
}

/// Everything the sizing needs to know about a model's text decoder.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ModelArch {
    /// `architectures[0]` or `model_type`.
    pub architecture: String,
    /// `hidden_size`.
    pub hidden: u64,
    /// Dense MLP `intermediate_size`.
    pub intermediate: u64,
    /// `num_hidden_layers`.
    pub layers: u64,
    /// `num_attention_heads`.
    pub heads: u64,
    /// `num_key_value_heads` (equal to heads for MHA, 1 for MQA).
    pub kv_heads: u64,
    /// `head_dim` (hidden / heads when absent).
    pub head_dim: u64,
    /// `vocab_size`.
    pub vocab: u64,
    /// `tie_word_embeddings`.
    pub tied_embeddings: bool,
    /// Gated MLP (three matrices) or not (two).
    pub gated_mlp: bool,
    /// q/k/v projection biases.
    pub qkv_bias: bool,
    /// Output projection and MLP biases (Phi-2, Falcon, gpt-oss's o bias).
    pub dense_bias: bool,
    /// Norm weights per layer, in units of `hidden` (2 for Llama, 4 for Gemma 2/3).
    pub norms_per_layer: u64,
    /// Norms have a bias too (LayerNorm).
    pub norm_bias: bool,
    /// Per-head q/k RMSNorm (Qwen3, Gemma 3).
    pub qk_norm: bool,
    /// MoE shape, if any.
    pub moe: Option<Moe>,
    /// Layers that are MoE: `layer_is_moe[i]`.
    pub layer_is_moe: Vec<bool>,
    /// MLA ranks, if the model uses multi-head latent attention.
    pub mla: Option<Mla>,
    /// Per-layer attention kind.
    pub layer_attention: Vec<LayerAttention>,
    /// `max_position_embeddings`.
    pub max_position_embeddings: u64,
    /// Extra parameters outside the decoder (vision tower, MTP layer), counted as 16-bit
    /// and replicated per pipeline stage 0.
    pub extra_params: u64,
    /// Whether the config says the checkpoint is stored in fp32.
    pub stored_fp32: bool,
    /// Rotary-embedding cos/sin cache vLLM allocates at model init (replicated on every GPU).
    pub rope_cache_bytes: u64,
    /// KV shape of the full-attention layers where it differs (Gemma 4).
    pub global_attention: Option<GlobalAttention>,
    /// The last `num_kv_shared_layers` layers reuse an earlier layer's KV (allocate none).
    pub kv_shared_layers: u64,
    /// State of the recurrent layers (linear attention, Mamba), if any.
    pub recurrent: Option<RecurrentState>,
    /// Every MoE layer also has the dense MLP beside its experts (Gemma 4
    /// `enable_moe_block`: `mlp` and `moe` both run, vLLM `Gemma4DecoderLayer`).
    pub dense_beside_moe: bool,
    /// Full-attention q projection doubled by an output gate (Qwen3-Next `attn_output_gate`).
    pub attn_output_gate: bool,
    /// The multimodal encoder (`vision_config` / `audio_config`), if any
    /// (`model/vision.rs`); its parameters are in `extra_params`.
    pub vision: Option<Vision>,
    /// Multi-token-prediction layers the checkpoint carries (`num_nextn_predict_layers`,
    /// `mtp_num_hidden_layers`): loaded only as a speculative draft (`sizing/spec.rs`).
    pub mtp_layers: u64,
    /// The checkpoint's format as its `quantization_config` names it (`model/quant.rs`),
    /// for a model sized from its config alone.
    pub config_quantization: Option<ConfigQuantization>,
    /// Values the config did not give and the reader assumed (each also a plan warning).
    pub assumptions: Vec<Assumption>,
    /// Where each derived number came from.
    pub provenance: Vec<Provenance>,
}

impl ModelArch {
    /// Reads a Hugging Face `config.json` text.
    ///
    /// # Errors
    /// [`ConfigError`] naming the missing or unusable field.
    ///
    /// # Example
    /// ```
    /// let cfg = r#"{"architectures":["LlamaForCausalLM"],"hidden_size":4096,
    ///   "intermediate_size":14336,"num_hidden_layers":32,"num_attention_heads":32,
    ///   "num_key_value_heads":8,"vocab_size":128256,"tie_word_embeddings":false,
    ///   "max_position_embeddings":131072}"#;
    /// let m = vramfit_core::model::ModelArch::from_config_str(cfg).unwrap();
    /// // Llama-3.1-8B: 2 (K and V) x 32 layers x 8 KV heads x 128 x 2 bytes = 131072 B/token
    /// assert_eq!(m.kv_bytes_per_token_unsharded(2), 131_072);
    /// ```
    pub fn from_config_str(text: &str) -> Result<Self, ConfigError> {
        // A UTF-8 byte-order mark (Windows editors write one) is not JSON; the page's
        // `File.text()` drops it when decoding, so the CLI and the Hub import do too.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let v: Value =
            serde_json::from_str(text).map_err(|e| ConfigError::InvalidJson(e.to_string()))?;
        Self::from_config(&v)
    }

    /// Reads a parsed `config.json` value (see [`ModelArch::from_config_str`]).
    ///
    /// # Errors
    /// [`ConfigError`] naming the missing or unusable field.
    #[allow(clippy::too_many_lines)] // one field after another; splitting hides the mapping
    pub fn from_config(root: &Value) -> Result<Self, ConfigError> {
        if !root.is_object() {
            return Err(ConfigError::NotAnObject);
        }
        let architecture = root
            .get("architectures")
            .and_then(|a| a.get(0))
            .and_then(Value::as_str)
            .or_else(|| get_str(root, "model_type"))
            .unwrap_or("unknown")
            .to_string();
        // Multimodal wrappers nest the language model.
        let nested = match root.get("text_config") {
            Some(t) if t.is_object() => t,
            _ => root,
        };
        let merged = with_class_defaults(nested);
        let c = &merged;
        let model_type = get_str(c, "model_type")
            .or_else(|| get_str(root, "model_type"))
            .unwrap_or("")
            .to_string();
        let mut rd = Reader {
            c,
            assumptions: Vec::new(),
            provenance: Vec::new(),
        };
        // Absent under every spelling of the alias table, or present under one with a value
        // that is no whole number (`-1`, `1e30`, `"4096"`): then named as the config spells
        // it (GPT-2's `n_embd: -1` is "`n_embd` is unusable", not "missing `hidden_size`").
        let lacks = |concept: Concept| read::absent_or_bad(c, aliases::spelling(c, concept));
        let hidden = rd
            .u64(Concept::Hidden, "hidden")
            .ok_or_else(|| lacks(Concept::Hidden))?;
        let layers = rd
            .u64(Concept::Layers, "layers")
            .ok_or_else(|| lacks(Concept::Layers))?;
        let heads = rd
            .u64(Concept::Heads, "heads")
            .ok_or_else(|| lacks(Concept::Heads))?;
        let vocab = require(c, "vocab_size").or_else(|e| match e {
            ConfigError::MissingField(_) => require(root, "vocab_size"),
            bad => Err(bad),
        })?;
        // Bounded before anything is built per layer (see `check_bounds` for the rest), each
        // named as the config spells it.
        for (field, val, max) in [
            (aliases::spelling(c, Concept::Hidden), hidden, 1 << 16),
            (aliases::spelling(c, Concept::Layers), layers, 1 << 10),
            (aliases::spelling(c, Concept::Heads), heads, 1 << 10),
            ("vocab_size", vocab, 1 << 22),
        ] {
            if val == 0 || val > max {
                return Err(ConfigError::BadField {
                    field,
                    reason: format!("{val} is out of range (1..={max})"),
                });
            }
        }
        let n_layers = usize::try_from(layers).unwrap_or(0);
        // Falcon's first configs are RefinedWeb's (`RWForCausalLM`), which vLLM reads as
        // Falcon (`vllm/transformers_utils/configs/falcon.py` `RWConfig`).
        let is_falcon = matches!(
            model_type.as_str(),
            "falcon" | "refinedweb" | "refinedwebmodel"
        ) || architecture.starts_with("Falcon")
            || architecture == "RWForCausalLM";
        let kv_heads = if is_falcon {
            if get_bool(c, "new_decoder_architecture") == Some(true) {
                first_u64(c, &["num_kv_heads", "num_key_value_heads"]).unwrap_or(heads)
            } else if get_bool(c, "multi_query") == Some(true) {
                1
            } else {
                heads
            }
        } else if get_bool(c, "multi_query") == Some(true) {
            rd.note("kv_heads", "config", "multi_query = true: one KV head");
            1
        } else {
            rd.u64(Concept::KvHeads, "kv_heads").unwrap_or_else(|| {
                rd.note(
                    "kv_heads",
                    "default",
                    "absent: num_attention_heads (multi-head attention, the transformers default)",
                );
                heads
            })
        };
        if kv_heads == 0 || kv_heads > heads {
            return Err(ConfigError::BadField {
                field: "num_key_value_heads",
                reason: format!("{kv_heads} must be between 1 and num_attention_heads ({heads})"),
            });
        }
        let head_dim = match rd.u64(Concept::HeadDim, "head_dim") {
            Some(h) if h > 0 => h,
            _ => {
                if hidden % heads != 0 {
                    return Err(ConfigError::BadField {
                        field: "head_dim",
                        reason: format!(
                            "absent, and hidden_size {hidden} is not divisible by {heads} heads"
                        ),
                    });
                }
                rd.note(
                    "head_dim",
                    "default",
                    "absent: hidden_size / num_attention_heads (the transformers default)",
                );
                hidden / heads
            }
        };
        if head_dim > MAX_DIM {
            return Err(ConfigError::BadField {
                field: "head_dim",
                reason: "out of range".into(),
            });
        }
        let intermediate = rd
            .u64(Concept::Intermediate, "intermediate")
            .unwrap_or_else(|| {
                rd.note(
                    "intermediate",
                    "default",
                    "absent: 4 × hidden_size (GPT-2's `n_inner = None`)",
                );
                4 * hidden
            });
        if intermediate > MAX_DIM {
            return Err(ConfigError::BadField {
                field: "intermediate_size",
                reason: "out of range".into(),
            });
        }
        let is_gemma4 = model_type.starts_with("gemma4");
        let tied_embeddings = get_bool(c, "tie_word_embeddings")
            .or_else(|| get_bool(root, "tie_word_embeddings"))
            // Absent, the config class's default: `PretrainedConfig`'s `True` unless the class
            // sets its own (Llama, Qwen2, Mistral … pass `False`). `FalconConfig` and
            // `GPT2Config` keep `True`, and vLLM ties them then (`falcon.py`: `lm_head =
            // transformer.word_embeddings` when `tie_word_embeddings` is not False; `gpt2.py`
            // always), so Falcon's stored `lm_head.weight` is not loaded.
            .unwrap_or(
                matches!(
                    model_type.as_str(),
                    "gemma"
                        | "gemma2"
                        | "gemma3_text"
                        | "gemma3"
                        | "gemma4_text"
                        | "gemma4"
                        | "gpt2"
                ) || is_falcon,
            );
        let is_phi2 = model_type == "phi" || architecture == "PhiForCausalLM";
        // Nemotron-H's MLP is `up_proj`/`down_proj` with relu² (transformers `NemotronHMLP`).
        let gated_mlp = !(is_phi2
            || is_falcon
            || model_type == "gpt2"
            || model_type == "starcoder2"
            || model_type.starts_with("nemotron_h"));
        let qkv_bias = get_bool(c, "attention_bias").unwrap_or(false)
            || get_bool(c, "qkv_bias").unwrap_or(false)
            || matches!(
                model_type.as_str(),
                "qwen2" | "qwen2_moe" | "qwen2_vl" | "qwen2_5_vl" | "qwen2_5_vl_text"
            )
            || is_phi2
            || (is_falcon && get_bool(c, "bias") == Some(true));
        let dense_bias = is_phi2 || (is_falcon && get_bool(c, "bias") == Some(true));
        let norm_bias = is_phi2 || is_falcon;
        let norms_per_layer = if model_type.starts_with("gemma2")
            || model_type.starts_with("gemma3")
            || is_gemma4
        {
            4
        } else if is_phi2 || (is_falcon && get_bool(c, "new_decoder_architecture") != Some(true)) {
            1
        } else {
            2
        };
        let qk_norm =
            model_type.starts_with("qwen3") || model_type.starts_with("gemma3") || is_gemma4;

        // Nemotron-H: one mixer per layer, spelled one letter a layer.
        // Its `layers_block_type` list (`mamba`, `attention`, `mlp`, `moe`) says the same.
        let hybrid_pattern: Option<Vec<char>> = aliases::find(c, Concept::HybridPattern)
            .and_then(|(_, v)| v.as_str())
            .map(|s| s.chars().collect())
            .or_else(|| match c.get("layers_block_type") {
                Some(Value::Array(kinds))
                    if kinds
                        .iter()
                        .any(|k| matches!(k.as_str(), Some("mlp" | "moe"))) =>
                {
                    Some(
                        kinds
                            .iter()
                            .map(|k| match k.as_str() {
                                Some("mamba") => 'M',
                                Some("attention") => '*',
                                Some("moe") => 'E',
                                _ => '-',
                            })
                            .collect(),
                    )
                }
                _ => None,
            });
        if let Some(p) = &hybrid_pattern {
            if p.len() != n_layers {
                return Err(ConfigError::BadField {
                    field: "hybrid_override_pattern",
                    reason: format!(
                        "{} letters for {layers} layers (one letter per layer)",
                        p.len()
                    ),
                });
            }
            rd.note("layer_kinds", "config", "hybrid_override_pattern");
        }

        // MoE
        let experts = rd.u64(Concept::Experts, "experts").filter(|&e| e > 1);
        let moe = if let Some(experts) = experts {
            let experts_per_token = match aliases::find_u64(c, Concept::ExpertsPerToken) {
                Some((k, v)) => {
                    rd.note("experts_per_token", "config", k);
                    v
                }
                None => {
                    let (v, why) = common_experts_per_token(experts);
                    rd.assume(
                        "experts_per_token",
                        v.to_string(),
                        format!(
                            "the config names no experts-per-token field (tried {}); {why}",
                            aliases::row(Concept::ExpertsPerToken).keys.join(", ")
                        ),
                    );
                    v
                }
            };
            let expert_intermediate = rd
                .u64(Concept::ExpertIntermediate, "expert_intermediate")
                .unwrap_or(intermediate);
            let n_shared = rd
                .u64(Concept::SharedExperts, "shared_experts")
                .unwrap_or(0);
            // Llama 4: one shared expert of `intermediate_size` in every MoE layer
            // (`Llama4TextMoe.shared_expert`).
            let n_shared = if model_type == "llama4_text" {
                1
            } else {
                n_shared
            };
            let shared_intermediate = rd
                .u64(
                    Concept::SharedExpertIntermediate,
                    "shared_expert_intermediate",
                )
                .unwrap_or_else(|| n_shared.saturating_mul(expert_intermediate));
            if experts > 65_536 || experts_per_token > experts || expert_intermediate > MAX_DIM {
                return Err(ConfigError::BadField {
                    field: "num_experts_per_tok",
                    reason: format!("{experts_per_token} of {experts} experts is impossible"),
                });
            }
            Some(Moe {
                experts,
                experts_per_token,
                expert_intermediate,
                shared_intermediate,
                shared_gate: model_type.starts_with("qwen2_moe")
                    || model_type.starts_with("qwen3_next"),
                expert_bias: model_type == "gpt_oss",
            })
        } else {
            None
        };
        let dense_first = rd.u64(Concept::DenseFirstLayers, "dense_first_layers");
        // Each spelling of the MoE step means its own thing; each is tried as before.
        let step_rule: Option<(&str, u64)> = aliases::row(Concept::MoeLayerStep)
            .keys
            .iter()
            .find_map(|k| get_u64(c, k).filter(|&s| s > 1).map(|s| (*k, s)));
        let expert_offset = get_u64(c, "expert_layer_offset").unwrap_or(1);
        let layer_is_moe: Vec<bool> = (0..layers)
            .map(|i| {
                if moe.is_none() {
                    return false;
                }
                if let Some(p) = &hybrid_pattern {
                    return p.get(usize::try_from(i).unwrap_or(usize::MAX)) == Some(&'E');
                }
                if let Some(k) = dense_first {
                    if i < k {
                        return false;
                    }
                }
                match step_rule {
                    Some(("moe_layer_freq", f)) => return i % f == 0,
                    Some(("expert_layer_period", p)) => return i % p == expert_offset % p,
                    Some((_, s)) => return (i + 1) % s == 0,
                    None => {}
                }
                if let Some(Value::Array(only)) = c.get("mlp_only_layers") {
                    if only.iter().any(|x| x.as_u64() == Some(i)) {
                        return false;
                    }
                }
                true
            })
            .collect();

        // Llama 4 uses `intermediate_size_mlp` for its dense layers.
        let intermediate = if moe.is_some() {
            get_u64(c, "intermediate_size_mlp").unwrap_or(intermediate)
        } else {
            intermediate
        };

        // MLA
        let mla = match rd.u64(Concept::KvLoraRank, "kv_lora_rank") {
            Some(kv_lora_rank) if kv_lora_rank > 0 => Some(Mla {
                q_lora_rank: aliases::find_u64(c, Concept::QLoraRank)
                    .map(|(_, v)| v)
                    .filter(|&r| r > 0),
                kv_lora_rank,
                qk_rope_head_dim: aliases::find_u64(c, Concept::QkRopeHeadDim)
                    .map_or(64, |(_, v)| v),
                qk_nope_head_dim: aliases::find_u64(c, Concept::QkNopeHeadDim)
                    .map_or(128, |(_, v)| v),
                v_head_dim: aliases::find_u64(c, Concept::VHeadDim).map_or(128, |(_, v)| v),
            }),
            _ => None,
        };

        // Global layers' own KV shape (Gemma 4). vLLM `Gemma4DecoderLayer`: full layers use
        // `global_head_dim`, and `num_global_key_value_heads` only when `attention_k_eq_v`.
        let k_eq_v = get_bool(c, "attention_k_eq_v").unwrap_or(false);
        let global_head_dim = rd.u64(Concept::GlobalHeadDim, "head_dim.global");
        let global_kv_heads = if k_eq_v {
            rd.u64(Concept::GlobalKvHeads, "kv_heads.global")
        } else {
            None
        };
        let global_attention = if global_head_dim.is_some() || global_kv_heads.is_some() || k_eq_v {
            let g = GlobalAttention {
                kv_heads: global_kv_heads.unwrap_or(kv_heads),
                head_dim: global_head_dim.unwrap_or(head_dim),
                k_eq_v,
            };
            if g.kv_heads == 0 || g.kv_heads > heads || g.head_dim == 0 || g.head_dim > MAX_DIM {
                return Err(ConfigError::BadField {
                    field: "num_global_key_value_heads",
                    reason: format!(
                        "{} KV heads of dimension {} is impossible with {heads} heads",
                        g.kv_heads, g.head_dim
                    ),
                });
            }
            Some(g)
        } else {
            None
        };
        let kv_shared_layers = rd
            .u64(Concept::KvSharedLayers, "kv_shared_layers")
            .unwrap_or(0);
        if kv_shared_layers >= layers && kv_shared_layers > 0 {
            return Err(ConfigError::BadField {
                field: "num_kv_shared_layers",
                reason: format!(
                    "{kv_shared_layers} shared of {layers} layers leaves none to share"
                ),
            });
        }

        // Sliding window pattern
        let window = rd
            .u64(Concept::SlidingWindow, "sliding_window")
            .filter(|&w| w > 0);
        let use_sw = get_bool(c, "use_sliding_window");
        let chunk = get_u64(c, "attention_chunk_size").filter(|&w| w > 0);
        let full_interval = get_u64(c, "full_attention_interval").filter(|&n| n > 0);
        // A hybrid pattern is the more specific layer list (Nemotron-H).
        let layer_types_list = if hybrid_pattern.is_none() {
            aliases::find(c, Concept::LayerTypes)
        } else {
            None
        };
        let attn_period = get_u64(c, "attn_layer_period").filter(|&n| n > 0);
        let layer_attention: Vec<LayerAttention> =
            if let (Some(w), "llama4_text") = (chunk, model_type.as_str()) {
                // Llama 4: 3 of 4 layers use chunked local attention (KV capped at the chunk,
                // vLLM `ChunkedLocalAttentionSpec`); every 4th is global NoPE.
                (0..layers)
                    .map(|i| {
                        if (i + 1) % 4 == 0 {
                            LayerAttention::Full
                        } else {
                            LayerAttention::Sliding { window: w }
                        }
                    })
                    .collect()
            } else if let Some((key, Value::Array(types))) = layer_types_list {
                rd.note("layer_kinds", "config", key);
                let mut unknown: Vec<String> = Vec::new();
                let kinds = (0..n_layers)
                    .map(|i| {
                        let t = types.get(i).and_then(Value::as_str);
                        match (t.map(layer_kind_of), window) {
                            (Some(Some(Kind::Sliding)), Some(w)) => {
                                LayerAttention::Sliding { window: w }
                            }
                            (Some(Some(Kind::Recurrent)), _) => LayerAttention::Recurrent,
                            (Some(Some(Kind::MlpOnly)), _) => LayerAttention::MlpOnly,
                            (Some(None), _) => {
                                if let Some(s) = t {
                                    if !unknown.iter().any(|u| u == s) {
                                        unknown.push(s.to_string());
                                    }
                                }
                                LayerAttention::Full
                            }
                            _ => LayerAttention::Full,
                        }
                    })
                    .collect();
                if !unknown.is_empty() {
                    rd.assume(
                        "layer_types",
                        "full_attention".into(),
                        format!(
                            "unknown layer kind(s) `{}` in `{key}`: sized as full attention, the \
                         largest KV a layer can hold",
                            unknown.join("`, `")
                        ),
                    );
                }
                kinds
            } else if let Some(p) = &hybrid_pattern {
                p.iter()
                    .map(|ch| match ch {
                        'M' => LayerAttention::Recurrent,
                        '*' => LayerAttention::Full,
                        _ => LayerAttention::MlpOnly,
                    })
                    .collect()
            } else if let Some(n) = full_interval {
                // Qwen3-Next: `layer_types` default is full attention at (i + 1) % n == 0.
                rd.note("layer_kinds", "config", "full_attention_interval");
                (0..layers)
                    .map(|i| {
                        if (i + 1) % n == 0 {
                            LayerAttention::Full
                        } else {
                            LayerAttention::Recurrent
                        }
                    })
                    .collect()
            } else if let Some(p) = attn_period {
                // Jamba: attention at i % period == offset, Mamba elsewhere.
                rd.note(
                    "layer_kinds",
                    "config",
                    "attn_layer_period, attn_layer_offset",
                );
                let off = get_u64(c, "attn_layer_offset").unwrap_or(0) % p;
                (0..layers)
                    .map(|i| {
                        if i % p == off {
                            LayerAttention::Full
                        } else {
                            LayerAttention::Recurrent
                        }
                    })
                    .collect()
            } else if let (Some(w), false) = (window, use_sw == Some(false)) {
                let pattern = get_u64(c, "sliding_window_pattern")
                    .or_else(|| (model_type.starts_with("gemma3") || is_gemma4).then_some(6));
                if model_type.starts_with("gemma2") {
                    // Gemma 2: even layers slide, odd layers are global (`gemma2.py`).
                    (0..layers)
                        .map(|i| {
                            if i % 2 == 0 {
                                LayerAttention::Sliding { window: w }
                            } else {
                                LayerAttention::Full
                            }
                        })
                        .collect()
                } else if let Some(p) = pattern.filter(|&p| p > 1) {
                    // Gemma 3 (and Gemma 4's default `layer_types`): every p-th layer is global.
                    (0..layers)
                        .map(|i| {
                            if (i + 1) % p == 0 {
                                LayerAttention::Full
                            } else {
                                LayerAttention::Sliding { window: w }
                            }
                        })
                        .collect()
                } else if model_type.starts_with("qwen") {
                    // Qwen2 writes sliding_window but disables it unless use_sliding_window.
                    vec![LayerAttention::Full; n_layers]
                } else if model_type == "mistral"
                    || model_type == "mixtral"
                    || model_type.starts_with("phi3")
                {
                    // Mistral 7B v0.1: every layer slides.
                    let max_pos = get_u64(c, "max_position_embeddings").unwrap_or(u64::MAX);
                    if w >= max_pos {
                        vec![LayerAttention::Full; n_layers]
                    } else {
                        vec![LayerAttention::Sliding { window: w }; n_layers]
                    }
                } else {
                    vec![LayerAttention::Full; n_layers]
                }
            } else {
                vec![LayerAttention::Full; n_layers]
            };
        let recurrent = if layer_attention.contains(&LayerAttention::Recurrent) {
            recurrent_state(&mut rd)
        } else {
            None
        };
        let attn_output_gate =
            get_bool(c, "attn_output_gate").unwrap_or(model_type.starts_with("qwen3_next"));
        let dense_beside_moe = is_gemma4 && moe.is_some();
        let max_position_embeddings =
            first_u64(c, &["max_position_embeddings", "n_positions", "seq_length"])
                .or_else(|| get_u64(root, "max_position_embeddings"))
                .unwrap_or(4096);
        // vLLM `rotary_embedding.py`: `cos_sin_cache` of [positions, rotary_dim] in the model
        // dtype; linear scaling (`LinearScalingRotaryEmbedding`) multiplies the positions by
        // the factor. Gemma 3 keeps a second, local rope (`rope_local_base_freq`).
        // Measured: Gemma-3-4B/12B load 0.57/0.61 GiB more than their parameters; this cache
        // is 1,048,576 × 256 × 2 + 131,072 × 256 × 2 B = 0.5625 GiB.
        let rope_cache_bytes = {
            let rs = c.get("rope_scaling").filter(|v| v.is_object());
            let kind = rs
                .and_then(|r| get_str(r, "rope_type").or_else(|| get_str(r, "type")))
                .unwrap_or("");
            let factor = rs
                .and_then(|r| get_u64(r, "factor"))
                .unwrap_or(1)
                .clamp(1, 1024);
            let rotary_dim = match mla {
                Some(m) => m.qk_rope_head_dim,
                None => {
                    let prf = c
                        .get("partial_rotary_factor")
                        .and_then(Value::as_f64)
                        .filter(|x| *x > 0.0 && *x <= 1.0)
                        .unwrap_or(1.0);
                    // OK because: head_dim ≤ 2^24 and the factor is in (0, 1].
                    #[allow(
                        clippy::cast_possible_truncation,
                        clippy::cast_sign_loss,
                        clippy::cast_precision_loss
                    )]
                    let d = (head_dim as f64 * prf) as u64;
                    d
                }
            };
            let pos = get_u64(c, "max_position_embeddings")
                .unwrap_or(4096)
                .min(1 << 26);
            let scaled = if kind == "linear" {
                pos.saturating_mul(factor)
            } else {
                pos
            };
            let local =
                if c.get("rope_local_base_freq").is_some() || model_type.starts_with("gemma3") {
                    pos
                } else {
                    0
                };
            (scaled + local)
                .saturating_mul(rotary_dim)
                .saturating_mul(2)
        };
        let stored_fp32 = get_str(c, "torch_dtype")
            .or_else(|| get_str(root, "torch_dtype"))
            .or_else(|| get_str(c, "dtype"))
            == Some("float32");
        let (config_quantization, quant_assumption) = quant::read(root);
        let tower = Vision::read(root, &architecture, hidden);
        // A tower's parameters from its shape (the catalog replaces it with the checkpoint's
        // exact count: `Model::arch`).
        let tower_params = tower.map_or(0, |v| v.params());
        let arch = Self {
            architecture,
            hidden,
            intermediate,
            layers,
            heads,
            kv_heads,
            head_dim,
            vocab,
            tied_embeddings,
            gated_mlp,
            qkv_bias,
            dense_bias,
            norms_per_layer,
            norm_bias,
            qk_norm,
            moe,
            layer_is_moe,
            mla,
            layer_attention,
            max_position_embeddings,
            extra_params: tower_params,
            stored_fp32,
            rope_cache_bytes,
            global_attention,
            kv_shared_layers,
            recurrent,
            dense_beside_moe,
            attn_output_gate,
            vision: tower,
            mtp_layers: get_u64(c, "num_nextn_predict_layers")
                .or_else(|| get_u64(c, "mtp_num_hidden_layers"))
                .unwrap_or(0),
            config_quantization,
            assumptions: rd.assumptions.into_iter().chain(quant_assumption).collect(),
            provenance: rd.provenance,
        };
        arch.check_bounds()?;
        Ok(arch)
    }
}
