//! Reading `config.json` values: typed getters, the `transformers` class defaults a hub
//! config omits, and the [`Reader`] that looks concepts up in the alias table
//! ([`super::aliases`]) and records where each value came from (provenance, assumptions).

#[allow(clippy::wildcard_imports)] // the reader's half of `model.rs`: its types, all of them
use super::*;

pub(super) fn get_u64(obj: &Value, key: &str) -> Option<u64> {
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

pub(super) fn get_bool(obj: &Value, key: &str) -> Option<bool> {
    obj.get(key)?.as_bool()
}

pub(super) fn get_str<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    obj.get(key)?.as_str()
}

pub(super) fn require(obj: &Value, key: &'static str) -> Result<u64, ConfigError> {
    get_u64(obj, key).ok_or_else(|| absent_or_bad(obj, key))
}

/// Why `key` gives no whole number: it is absent (or `null`), or its value is another thing,
/// named by its kind (a negative integer is quoted). Not `Value`'s `Display`: that is
/// serde_json's writer, ~4 KB gzip more in the page's main chunk, which reads configs too.
pub(super) fn absent_or_bad(obj: &Value, key: &'static str) -> ConfigError {
    let got = match obj.get(key) {
        None | Some(Value::Null) => return ConfigError::MissingField(key),
        Some(Value::Number(n)) => n
            .as_i64()
            .map_or_else(|| "a decimal number".to_string(), |i| i.to_string()),
        Some(Value::String(_)) => "a string".to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Array(_)) => "a list".to_string(),
        Some(Value::Object(_)) => "an object".to_string(),
    };
    ConfigError::BadField {
        field: key,
        reason: format!("expected a non-negative integer, got {got}"),
    }
}

pub(super) fn first_u64(obj: &Value, keys: &[&str]) -> Option<u64> {
    keys.iter().find_map(|k| get_u64(obj, k))
}

/// Fills what a hub `config.json` omits with the defaults of its `transformers` config class.
/// Gemma 3's multimodal checkpoints write only non-default `text_config` fields; the
/// defaults are those of `Gemma3TextConfig` (`transformers/models/gemma3/configuration_gemma3.py`).
pub(super) fn with_class_defaults(c: &Value) -> Value {
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
        // `Gemma4TextConfig` (transformers `models/gemma4/configuration_gemma4.py` at
        // 008e574): its field defaults, and `global_head_dim` popped with default 512.
        Some("gemma4_text") => &[
            ("vocab_size", Value::from(262_144u64)),
            ("hidden_size", Value::from(2304u64)),
            ("intermediate_size", Value::from(9216u64)),
            ("num_hidden_layers", Value::from(30u64)),
            ("num_attention_heads", Value::from(8u64)),
            ("num_key_value_heads", Value::from(4u64)),
            ("head_dim", Value::from(256u64)),
            ("global_head_dim", Value::from(512u64)),
            ("max_position_embeddings", Value::from(131_072u64)),
            ("sliding_window", Value::from(512u64)),
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

/// Reads concepts through the alias table and records where each value came from.
pub(super) struct Reader<'a> {
    pub(super) c: &'a Value,
    pub(super) assumptions: Vec<Assumption>,
    pub(super) provenance: Vec<Provenance>,
}

impl Reader<'_> {
    /// The value of `concept`, recorded as read from the spelling found.
    pub(super) fn u64(&mut self, concept: Concept, quantity: &str) -> Option<u64> {
        let (key, v) = aliases::find_u64(self.c, concept)?;
        self.note(quantity, "config", key);
        Some(v)
    }

    pub(super) fn note(&mut self, quantity: &str, source: &str, detail: &str) {
        self.provenance.push(Provenance {
            quantity: quantity.to_string(),
            source: source.to_string(),
            detail: detail.to_string(),
        });
    }

    pub(super) fn assume(&mut self, field: &str, value: String, why: String) {
        self.provenance.push(Provenance {
            quantity: field.to_string(),
            source: "assumption".to_string(),
            detail: why.clone(),
        });
        self.assumptions.push(Assumption {
            field: field.to_string(),
            value,
            why,
        });
    }

    /// `concept`, or `default` recorded as an assumption naming `why`.
    pub(super) fn u64_or_assume(
        &mut self,
        concept: Concept,
        quantity: &str,
        default: u64,
        why: &str,
    ) -> u64 {
        self.u64(concept, quantity).unwrap_or_else(|| {
            self.assume(
                quantity,
                default.to_string(),
                format!(
                    "absent (tried {}); {why}",
                    aliases::row(concept).keys.join(", ")
                ),
            );
            default
        })
    }
}

/// What a `layer_types` entry means for the cache.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Sliding,
    Full,
    Recurrent,
    MlpOnly,
}

/// The cache kind of a `layer_types` string, `None` when unknown. Spellings: transformers
/// `sliding_attention`, `full_attention` (Gemma 3/4, gpt-oss), `linear_attention`
/// (Qwen3-Next, Qwen3.5), `chunked_attention` (Llama 4), `mamba` / `attention`
/// (Granite-4 `layers_block_type`), `recurrent` (RecurrentGemma).
pub(super) fn layer_kind_of(s: &str) -> Option<Kind> {
    let s = s.to_ascii_lowercase();
    if s.contains("sliding") || s.contains("chunk") || s.contains("local") {
        Some(Kind::Sliding)
    } else if [
        "linear",
        "mamba",
        "recurrent",
        "ssm",
        "delta",
        "rwkv",
        "conv",
    ]
    .iter()
    .any(|k| s.contains(k))
    {
        Some(Kind::Recurrent)
    } else if s.contains("full") || s.contains("global") || s == "attention" || s == "attn" {
        Some(Kind::Full)
    } else if s == "mlp" || s == "moe" || s == "ffn" {
        Some(Kind::MlpOnly)
    } else {
        None
    }
}

/// The experts-per-token of released MoE models with `experts` routed experts, for a config
/// that does not say: Mixtral 8 → 2; gpt-oss-20b 32 → 4; DeepSeek-V2-Lite 64 → 6;
/// Qwen3-MoE 128 → 8, Gemma 4 26B-A4B 128 → 8, DeepSeek-V3 256 → 8, Kimi K2 384 → 8;
/// Qwen3-Next 512 → 10 (each model's `config.json`).
pub(super) fn common_experts_per_token(experts: u64) -> (u64, &'static str) {
    let (k, why) = match experts {
        0..=8 => (2, "the usual top-2 of 8-expert models (Mixtral 8x7B)"),
        9..=32 => (
            4,
            "the usual top-4 of 16-32-expert models (gpt-oss-20b: 4 of 32)",
        ),
        33..=64 => (6, "the usual top-6 of 64-expert models (DeepSeek-V2-Lite)"),
        65..=384 => (
            8,
            "the usual top-8 of 128-384-expert models (Qwen3-MoE, Gemma 4, DeepSeek-V3, Kimi K2)",
        ),
        _ => (10, "the usual top-10 of 512-expert models (Qwen3-Next)"),
    };
    (k.min(experts), why)
}

/// The recurrent state of a model with linear-attention or Mamba layers: GatedDeltaNet
/// when the config has `linear_*` fields, Mamba2 when it has `mamba_*` ones; missing
/// fields take the transformers class defaults (`Qwen3NextConfig`, `NemotronHConfig`) as
/// stated assumptions.
pub(super) fn recurrent_state(rd: &mut Reader<'_>) -> Option<RecurrentState> {
    let has = |c: &Value, concept| aliases::find(c, concept).is_some();
    if has(rd.c, Concept::LinearKeyHeads) || has(rd.c, Concept::LinearValueHeads) {
        let why = "the Qwen3NextConfig default";
        Some(RecurrentState::GatedDeltaNet {
            key_heads: rd.u64_or_assume(Concept::LinearKeyHeads, "linear_num_key_heads", 16, why),
            value_heads: rd.u64_or_assume(
                Concept::LinearValueHeads,
                "linear_num_value_heads",
                32,
                why,
            ),
            key_head_dim: rd.u64_or_assume(
                Concept::LinearKeyHeadDim,
                "linear_key_head_dim",
                128,
                why,
            ),
            value_head_dim: rd.u64_or_assume(
                Concept::LinearValueHeadDim,
                "linear_value_head_dim",
                128,
                why,
            ),
            conv_kernel: rd.u64_or_assume(Concept::ConvKernel, "conv_kernel", 4, why),
        })
    } else if has(rd.c, Concept::MambaExpand) && !has(rd.c, Concept::MambaHeads) {
        let why = "the JambaConfig default";
        let hidden = aliases::find_u64(rd.c, Concept::Hidden).map_or(0, |(_, v)| v);
        let expand = rd.u64_or_assume(Concept::MambaExpand, "mamba_expand", 2, why);
        Some(RecurrentState::Mamba1 {
            inner: expand.saturating_mul(hidden),
            state_size: rd.u64_or_assume(Concept::SsmStateSize, "mamba_d_state", 16, why),
            conv_kernel: rd.u64_or_assume(Concept::ConvKernel, "mamba_d_conv", 4, why),
            dt_rank: get_u64(rd.c, "mamba_dt_rank").unwrap_or_else(|| hidden.div_ceil(16)),
        })
    } else if has(rd.c, Concept::MambaHeads) || has(rd.c, Concept::SsmStateSize) {
        let why = "the NemotronHConfig default";
        Some(RecurrentState::Mamba2 {
            heads: rd.u64_or_assume(Concept::MambaHeads, "mamba_num_heads", 128, why),
            head_dim: rd.u64_or_assume(Concept::MambaHeadDim, "mamba_head_dim", 64, why),
            state_size: rd.u64_or_assume(Concept::SsmStateSize, "ssm_state_size", 128, why),
            groups: rd.u64_or_assume(Concept::MambaGroups, "n_groups", 8, why),
            conv_kernel: rd.u64_or_assume(Concept::ConvKernel, "conv_kernel", 4, why),
        })
    } else {
        rd.assume(
            "recurrent_state",
            "0 bytes".into(),
            "the config has linear-attention or Mamba layers but none of the state-size              fields (linear_num_value_heads, mamba_num_heads, ssm_state_size): their              per-request state is not counted"
                .into(),
        );
        None
    }
}

/// Upper bound on any single dimension, to keep all products inside u64.
pub(super) const MAX_DIM: u64 = 1 << 24;

impl ModelArch {
    /// Rejects dimensions beyond any real model, so that every product the sizing forms
    /// stays inside u64 (the largest, experts × 3 × hidden × moe_intermediate × layers,
    /// is at most 2^60) and an estimate never walks millions of layers.
    pub(super) fn check_bounds(&self) -> Result<(), ConfigError> {
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
        checks.push(("num_nextn_predict_layers", self.mtp_layers, 64));
        if let Some(v) = self.vision {
            checks.push(("vision_config.hidden_size", v.hidden, 1 << 16));
            checks.push(("vision_config.intermediate_size", v.intermediate, 1 << 20));
            checks.push(("vision_config.num_hidden_layers", v.layers, 1 << 10));
            checks.push(("vision_config.patch_size", v.patch, 1 << 10));
            checks.push(("vision_config.spatial_merge_size", v.merge, 16));
            checks.push(("vision_config.temporal_patch_size", v.temporal_patch, 16));
            checks.push(("vision_config.image_size", v.image_size, 1 << 16));
            checks.push(("vision_config.out_hidden_size", v.out_hidden, 1 << 16));
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
        // A model that holds no position cannot be sized (vLLM's length would be 0).
        if self.max_position_embeddings == 0 {
            return Err(ConfigError::BadField {
                field: "max_position_embeddings",
                reason: "0 positions; a model holds at least one".into(),
            });
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
}
