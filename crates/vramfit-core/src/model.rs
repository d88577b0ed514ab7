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
//!   `vllm/v1/kv_cache_interface.py`, `MLAAttentionSpec`).

use serde_json::Value;
use std::fmt;

/// How the attention of one layer stores its KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum LayerAttention {
    /// Attends to the whole context.
    Full,
    /// Attends to the last `window` tokens only.
    Sliding {
        /// Window length in tokens.
        window: u64,
    },
}

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
}

/// A `config.json` that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The text is not JSON.
    InvalidJson(String),
    /// The JSON is not an object.
    NotAnObject,
    /// A required field is absent.
    MissingField(&'static str),
    /// A field has the wrong type or an impossible value.
    BadField {
        /// Field name.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidJson(e) => write!(f, "config.json is not valid JSON: {e}"),
            Self::NotAnObject => write!(f, "config.json must be a JSON object"),
            Self::MissingField(name) => {
                write!(f, "config.json is missing the required field `{name}`")
            }
            Self::BadField { field, reason } => {
                write!(f, "config.json field `{field}` is unusable: {reason}")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

fn get_u64(obj: &Value, key: &str) -> Option<u64> {
    match obj.get(key)? {
        Value::Number(n) => n.as_u64().or_else(|| {
            // OK because: some configs write integers as floats (e.g. 4096.0); accept exact ones.
            n.as_f64()
                .filter(|x| x.fract() == 0.0 && *x >= 0.0 && *x < 9.0e15)
                .map(crate::units::whole)
        }),
        _ => None,
    }
}

fn get_bool(obj: &Value, key: &str) -> Option<bool> {
    obj.get(key)?.as_bool()
}

fn get_str<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.get(key)?.as_str()
}

fn require(obj: &Value, key: &'static str) -> Result<u64, ConfigError> {
    match obj.get(key) {
        None | Some(Value::Null) => Err(ConfigError::MissingField(key)),
        Some(_) => get_u64(obj, key).ok_or(ConfigError::BadField {
            field: key,
            reason: "expected a non-negative integer".into(),
        }),
    }
}

fn first_u64(obj: &Value, keys: &[&str]) -> Option<u64> {
    keys.iter().find_map(|k| get_u64(obj, k))
}

/// Fills what a hub `config.json` omits with the defaults of its `transformers` config class.
/// Gemma 3's multimodal checkpoints write only non-default `text_config` fields; the
/// defaults are those of `Gemma3TextConfig` (`transformers/models/gemma3/configuration_gemma3.py`).
fn with_class_defaults(c: &Value) -> Value {
    let mut out = c.clone();
    let defaults: &[(&str, Value)] = match get_str(c, "model_type") {
        Some("gemma3_text") => &[
            ("vocab_size", Value::from(262_208u64)),
            ("hidden_size", Value::from(2304u64)),
            ("intermediate_size", Value::from(9216u64)),
            ("num_hidden_layers", Value::from(26u64)),
            ("num_attention_heads", Value::from(8u64)),
            ("num_key_value_heads", Value::from(4u64)),
            ("head_dim", Value::from(256u64)),
            ("max_position_embeddings", Value::from(131_072u64)),
            ("sliding_window", Value::from(4096u64)),
            ("sliding_window_pattern", Value::from(6u64)),
            ("tie_word_embeddings", Value::from(true)),
        ],
        _ => &[],
    };
    if let Value::Object(map) = &mut out {
        for (k, v) in defaults {
            map.entry((*k).to_string()).or_insert_with(|| v.clone());
        }
    }
    out
}

/// Upper bound on any single dimension, to keep all products inside u64.
const MAX_DIM: u64 = 1 << 24;

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
        let hidden = first_u64(c, &["hidden_size", "n_embd", "d_model"])
            .ok_or(ConfigError::MissingField("hidden_size"))?;
        let layers = first_u64(c, &["num_hidden_layers", "n_layer", "num_layers"])
            .ok_or(ConfigError::MissingField("num_hidden_layers"))?;
        let heads = first_u64(c, &["num_attention_heads", "n_head"])
            .ok_or(ConfigError::MissingField("num_attention_heads"))?;
        let vocab = require(c, "vocab_size")
            .or_else(|_| require(root, "vocab_size"))
            .map_err(|_| ConfigError::MissingField("vocab_size"))?;
        // Bounded before anything is built per layer (see `check_bounds` for the rest).
        for (field, val, max) in [
            ("hidden_size", hidden, 1 << 16),
            ("num_hidden_layers", layers, 1 << 10),
            ("num_attention_heads", heads, 1 << 10),
            ("vocab_size", vocab, 1 << 22),
        ] {
            if val == 0 || val > max {
                return Err(ConfigError::BadField {
                    field,
                    reason: format!("{val} is out of range (1..={max})"),
                });
            }
        }
        let is_falcon = model_type == "falcon" || architecture.starts_with("Falcon");
        let kv_heads = if is_falcon {
            if get_bool(c, "new_decoder_architecture") == Some(true) {
                first_u64(c, &["num_kv_heads", "num_key_value_heads"]).unwrap_or(heads)
            } else if get_bool(c, "multi_query") == Some(true) {
                1
            } else {
                heads
            }
        } else if get_bool(c, "multi_query") == Some(true) {
            1
        } else {
            first_u64(
                c,
                &[
                    "num_key_value_heads",
                    "num_kv_heads",
                    "multi_query_group_num",
                ],
            )
            .unwrap_or(heads)
        };
        if kv_heads == 0 || kv_heads > heads {
            return Err(ConfigError::BadField {
                field: "num_key_value_heads",
                reason: format!("{kv_heads} must be between 1 and num_attention_heads ({heads})"),
            });
        }
        let head_dim = match get_u64(c, "head_dim") {
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
                hidden / heads
            }
        };
        if head_dim > MAX_DIM {
            return Err(ConfigError::BadField {
                field: "head_dim",
                reason: "out of range".into(),
            });
        }
        let intermediate = first_u64(c, &["intermediate_size", "ffn_hidden_size", "n_inner"])
            .or_else(|| get_u64(c, "ffn_dim"))
            .unwrap_or(4 * hidden);
        if intermediate > MAX_DIM {
            return Err(ConfigError::BadField {
                field: "intermediate_size",
                reason: "out of range".into(),
            });
        }
        let tied_embeddings = get_bool(c, "tie_word_embeddings")
            .or_else(|| get_bool(root, "tie_word_embeddings"))
            .unwrap_or(matches!(
                model_type.as_str(),
                "gemma" | "gemma2" | "gemma3_text" | "gemma3"
            ));
        let is_phi2 = model_type == "phi" || architecture == "PhiForCausalLM";
        let gated_mlp =
            !(is_phi2 || is_falcon || model_type == "gpt2" || model_type == "starcoder2");
        let qkv_bias = get_bool(c, "attention_bias").unwrap_or(false)
            || get_bool(c, "qkv_bias").unwrap_or(false)
            || matches!(model_type.as_str(), "qwen2" | "qwen2_moe" | "qwen2_vl")
            || is_phi2
            || (is_falcon && get_bool(c, "bias") == Some(true));
        let dense_bias = is_phi2 || (is_falcon && get_bool(c, "bias") == Some(true));
        let norm_bias = is_phi2 || is_falcon;
        let norms_per_layer = if model_type.starts_with("gemma2")
            || model_type.starts_with("gemma3")
        {
            4
        } else if is_phi2 || (is_falcon && get_bool(c, "new_decoder_architecture") != Some(true)) {
            1
        } else {
            2
        };
        let qk_norm = model_type.starts_with("qwen3") || model_type.starts_with("gemma3");

        // MoE
        let experts = first_u64(c, &["num_local_experts", "n_routed_experts", "num_experts"])
            .filter(|&e| e > 1);
        let moe = if let Some(experts) = experts {
            let experts_per_token = first_u64(c, &["num_experts_per_tok", "moe_topk", "top_k"])
                .ok_or(ConfigError::MissingField("num_experts_per_tok"))?;
            let expert_intermediate =
                first_u64(c, &["moe_intermediate_size", "expert_intermediate_size"])
                    .unwrap_or(intermediate);
            let n_shared = get_u64(c, "n_shared_experts").unwrap_or(0);
            // Llama 4: one shared expert of `intermediate_size` in every MoE layer
            // (`Llama4TextMoe.shared_expert`).
            let n_shared = if model_type == "llama4_text" {
                1
            } else {
                n_shared
            };
            let shared_intermediate = get_u64(c, "shared_expert_intermediate_size")
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
                shared_gate: model_type.starts_with("qwen2_moe"),
                expert_bias: model_type == "gpt_oss",
            })
        } else {
            None
        };
        let layer_is_moe: Vec<bool> = (0..layers)
            .map(|i| {
                if moe.is_none() {
                    return false;
                }
                if let Some(k) = get_u64(c, "first_k_dense_replace") {
                    if i < k {
                        return false;
                    }
                }
                if let Some(step) = get_u64(c, "interleave_moe_layer_step").filter(|&s| s > 1) {
                    return (i + 1) % step == 0;
                }
                if let Some(freq) = get_u64(c, "moe_layer_freq").filter(|&s| s > 1) {
                    return i % freq == 0;
                }
                if let Some(step) = get_u64(c, "decoder_sparse_step").filter(|&s| s > 1) {
                    return (i + 1) % step == 0;
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
        let mla = match get_u64(c, "kv_lora_rank") {
            Some(kv_lora_rank) if kv_lora_rank > 0 => Some(Mla {
                q_lora_rank: get_u64(c, "q_lora_rank").filter(|&r| r > 0),
                kv_lora_rank,
                qk_rope_head_dim: get_u64(c, "qk_rope_head_dim").unwrap_or(64),
                qk_nope_head_dim: get_u64(c, "qk_nope_head_dim").unwrap_or(128),
                v_head_dim: get_u64(c, "v_head_dim").unwrap_or(128),
            }),
            _ => None,
        };

        // Sliding window pattern
        let window = get_u64(c, "sliding_window").filter(|&w| w > 0);
        let use_sw = get_bool(c, "use_sliding_window");
        let chunk = get_u64(c, "attention_chunk_size").filter(|&w| w > 0);
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
            } else if let Some(Value::Array(types)) = c.get("layer_types") {
                (0..layers)
                    .map(|i| {
                        let t = types
                            .get(usize::try_from(i).unwrap_or(usize::MAX))
                            .and_then(Value::as_str);
                        match (t, window) {
                            (Some(s), Some(w)) if s.contains("sliding") => {
                                LayerAttention::Sliding { window: w }
                            }
                            _ => LayerAttention::Full,
                        }
                    })
                    .collect()
            } else if let (Some(w), false) = (window, use_sw == Some(false)) {
                let pattern = get_u64(c, "sliding_window_pattern")
                    .or_else(|| (model_type.starts_with("gemma3")).then_some(6));
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
                    // Gemma 3: every p-th layer is global.
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
                    vec![LayerAttention::Full; usize::try_from(layers).unwrap_or(0)]
                } else if model_type == "mistral"
                    || model_type == "mixtral"
                    || model_type.starts_with("phi3")
                {
                    // Mistral 7B v0.1: every layer slides.
                    let max_pos = get_u64(c, "max_position_embeddings").unwrap_or(u64::MAX);
                    if w >= max_pos {
                        vec![LayerAttention::Full; usize::try_from(layers).unwrap_or(0)]
                    } else {
                        vec![
                            LayerAttention::Sliding { window: w };
                            usize::try_from(layers).unwrap_or(0)
                        ]
                    }
                } else {
                    vec![LayerAttention::Full; usize::try_from(layers).unwrap_or(0)]
                }
            } else {
                vec![LayerAttention::Full; usize::try_from(layers).unwrap_or(0)]
            };
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
            extra_params: 0,
            stored_fp32,
            rope_cache_bytes,
        };
        arch.check_bounds()?;
        Ok(arch)
    }

    /// Rejects dimensions beyond any real model, so that every product the sizing forms
    /// stays inside u64 (the largest, experts × 3 × hidden × moe_intermediate × layers,
    /// is at most 2^60) and an estimate never walks millions of layers.
    fn check_bounds(&self) -> Result<(), ConfigError> {
        let mut checks: Vec<(&'static str, u64, u64)> = vec![
            ("hidden_size", self.hidden, 1 << 16),
            ("num_hidden_layers", self.layers, 1 << 10),
            ("num_attention_heads", self.heads, 1 << 10),
            ("head_dim", self.head_dim, 1 << 12),
            ("vocab_size", self.vocab, 1 << 22),
            ("intermediate_size", self.intermediate, 1 << 20),
            (
                "max_position_embeddings",
                self.max_position_embeddings,
                1 << 26,
            ),
        ];
        if let Some(m) = self.moe {
            checks.push(("num_experts", m.experts, 1 << 12));
            checks.push(("moe_intermediate_size", m.expert_intermediate, 1 << 20));
            checks.push((
                "shared_expert_intermediate_size",
                m.shared_intermediate,
                1 << 20,
            ));
        }
        if let Some(m) = self.mla {
            checks.push(("kv_lora_rank", m.kv_lora_rank, 1 << 16));
            checks.push(("q_lora_rank", m.q_lora_rank.unwrap_or(0), 1 << 16));
            checks.push(("qk_rope_head_dim", m.qk_rope_head_dim, 1 << 12));
            checks.push(("qk_nope_head_dim", m.qk_nope_head_dim, 1 << 12));
            checks.push(("v_head_dim", m.v_head_dim, 1 << 12));
        }
        for a in &self.layer_attention {
            if let LayerAttention::Sliding { window } = a {
                checks.push(("sliding_window", *window, 1 << 26));
            }
        }
        for (field, v, max) in checks {
            if v > max {
                return Err(ConfigError::BadField {
                    field,
                    reason: format!("{v} is larger than any real model's ({max} at most)"),
                });
            }
        }
        Ok(())
    }

    /// Whether any layer uses a sliding window.
    #[must_use]
    pub fn has_sliding_layers(&self) -> bool {
        self.layer_attention
            .iter()
            .any(|a| matches!(a, LayerAttention::Sliding { .. }))
    }

    /// KV-cache bytes one token occupies in one layer on one GPU, at `dtype_bytes` per
    /// element, with tensor parallelism `tp`.
    ///
    /// MHA/GQA: `2 × max(1, kv_heads / tp) × head_dim × bytes` — KV heads are replicated
    /// when there are fewer than `tp` (vLLM `QKVParallelLinear`). MLA: `(kv_lora_rank +
    /// qk_rope_head_dim) × bytes`, the same on every rank (vLLM `MLAAttentionSpec`).
    #[must_use]
    pub fn kv_bytes_per_token_layer(&self, dtype_bytes: u64, tp: u64) -> u64 {
        if let Some(mla) = self.mla {
            return (mla.kv_lora_rank + mla.qk_rope_head_dim) * dtype_bytes;
        }
        let kv_per_gpu = if self.kv_heads >= tp {
            self.kv_heads / tp.max(1)
        } else {
            1
        };
        2 * kv_per_gpu * self.head_dim * dtype_bytes
    }

    /// KV bytes per token over all layers on one GPU, ignoring sliding windows (TP=1).
    #[must_use]
    pub fn kv_bytes_per_token_unsharded(&self, dtype_bytes: u64) -> u64 {
        self.kv_bytes_per_token_layer(dtype_bytes, 1) * self.layers
    }

    /// The parameter breakdown of the whole model (no sharding).
    #[must_use]
    pub fn params(&self) -> ParamBreakdown {
        let h = self.hidden;
        let embed = self.vocab * h;
        let lm_head = if self.tied_embeddings {
            0
        } else {
            self.vocab * h
        };
        let mut layer_sum = ParamBreakdown::default();
        for i in 0..self.layers {
            layer_sum.add(&self.layer_params(i));
        }
        layer_sum.embedding = embed;
        layer_sum.lm_head = lm_head;
        layer_sum.replicated += h * if self.norm_bias { 2 } else { 1 }; // final norm
        if self.dense_bias && self.norm_bias {
            // lm_head bias (Phi-2)
            layer_sum.replicated += self.vocab;
        }
        layer_sum.extra = self.extra_params;
        layer_sum
    }

    /// Parameters of decoder layer `i`, split by how tensor parallelism shards them.
    #[must_use]
    pub fn layer_params(&self, i: u64) -> ParamBreakdown {
        let is_moe = self
            .layer_is_moe
            .get(usize::try_from(i).unwrap_or(usize::MAX))
            .copied()
            .unwrap_or(false);
        self.layer_params_of_kind(is_moe)
    }

    /// Parameters of a decoder layer that is MoE (`is_moe`, when the model has experts) or
    /// dense: layers differ in nothing else, so sizing computes one of each kind.
    #[must_use]
    pub fn layer_params_of_kind(&self, is_moe: bool) -> ParamBreakdown {
        let h = self.hidden;
        let mut p = ParamBreakdown::default();
        // Attention
        if let Some(m) = self.mla {
            let qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
            match m.q_lora_rank {
                Some(r) => {
                    p.linear_replicated += h * r; // q_a_proj (ReplicatedLinear)
                    p.replicated += r; // q_a_layernorm
                    p.attn_sharded += r * self.heads * qk_head; // q_b_proj
                }
                None => p.attn_sharded += h * self.heads * qk_head,
            }
            p.linear_replicated += h * (m.kv_lora_rank + m.qk_rope_head_dim); // kv_a_proj_with_mqa
            p.replicated += m.kv_lora_rank; // kv_a_layernorm
            p.attn_sharded += m.kv_lora_rank * self.heads * (m.qk_nope_head_dim + m.v_head_dim);
            p.attn_sharded += self.heads * m.v_head_dim * h; // o_proj
        } else {
            let q = h * self.heads * self.head_dim;
            let kv = h * self.kv_heads * self.head_dim;
            p.attn_sharded += q + self.heads * self.head_dim * h;
            p.linear_kv += 2 * kv;
            if self.qkv_bias {
                p.bias_sharded += self.heads * self.head_dim;
                p.bias_kv += 2 * self.kv_heads * self.head_dim;
            }
            if self.dense_bias {
                p.replicated += h; // o_proj bias (RowParallel bias is replicated)
            }
            if self.qk_norm {
                p.replicated += 2 * self.head_dim;
            }
        }
        p.replicated += self.norms_per_layer * h * if self.norm_bias { 2 } else { 1 };
        // MLP
        match (is_moe, self.moe) {
            (true, Some(m)) => {
                p.expert += m.experts * 3 * h * m.expert_intermediate;
                if m.expert_bias {
                    p.expert += m.experts * (2 * m.expert_intermediate + h);
                }
                p.router += h * m.experts + if m.expert_bias { m.experts } else { 0 };
                p.linear_sharded += 3 * h * m.shared_intermediate;
                if m.shared_gate {
                    p.router += h;
                }
                p.active_expert += m.experts_per_token * 3 * h * m.expert_intermediate;
            }
            _ => {
                let mats = if self.gated_mlp { 3 } else { 2 };
                p.linear_sharded += mats * h * self.intermediate;
                if self.dense_bias {
                    p.bias_sharded += self.intermediate;
                    p.replicated += h;
                }
            }
        }
        p
    }
}

/// Parameters grouped by how tensor parallelism shards them and how quantization treats them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ParamBreakdown {
    /// Input embedding (`vocab × hidden`), vocab-parallel, kept 16-bit by quantization.
    pub embedding: u64,
    /// Output projection (0 when tied), vocab-parallel, kept 16-bit.
    pub lm_head: u64,
    /// Attention linear weights split 1/TP (q, o, MLA up-projections), quantized.
    pub attn_sharded: u64,
    /// MLP linear weights split 1/TP (dense MLP, shared experts), quantized.
    pub linear_sharded: u64,
    /// K and V projection weights: split 1/TP, but replicated when kv_heads < TP. Quantized.
    pub linear_kv: u64,
    /// Linear weights replicated on every rank (MLA down-projections), quantized.
    pub linear_replicated: u64,
    /// Routed-expert weights, split over TP×EP, quantized.
    pub expert: u64,
    /// Routed-expert weights one token uses (for bandwidth), a subset of `expert`.
    pub active_expert: u64,
    /// MoE routers, kept 16-bit, replicated.
    pub router: u64,
    /// Biases split 1/TP (q bias, MLP biases), 16-bit.
    pub bias_sharded: u64,
    /// K/V biases (follow K/V sharding), 16-bit.
    pub bias_kv: u64,
    /// Norms and other small replicated tensors, 16-bit.
    pub replicated: u64,
    /// Parameters outside the text decoder (vision tower, MTP), 16-bit.
    pub extra: u64,
}

impl ParamBreakdown {
    fn add(&mut self, o: &Self) {
        self.embedding += o.embedding;
        self.lm_head += o.lm_head;
        self.attn_sharded += o.attn_sharded;
        self.linear_sharded += o.linear_sharded;
        self.linear_kv += o.linear_kv;
        self.linear_replicated += o.linear_replicated;
        self.expert += o.expert;
        self.active_expert += o.active_expert;
        self.router += o.router;
        self.bias_sharded += o.bias_sharded;
        self.bias_kv += o.bias_kv;
        self.replicated += o.replicated;
        self.extra += o.extra;
    }

    /// All parameters.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.embedding
            + self.lm_head
            + self.attn_sharded
            + self.linear_sharded
            + self.linear_kv
            + self.linear_replicated
            + self.expert
            + self.router
            + self.bias_sharded
            + self.bias_kv
            + self.replicated
            + self.extra
    }

    /// Parameters one token touches (MoE: only its experts).
    #[must_use]
    pub fn active(&self) -> u64 {
        self.total() - self.expert + self.active_expert
    }
}
