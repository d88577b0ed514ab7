//! One table of the ways `config.json` files spell the same concept across model families.
//!
//! New families ship new spellings for old ideas (Gemma 4 writes `top_k_experts` where
//! Mixtral writes `num_experts_per_tok`); [`ModelArch::from_config`](super::ModelArch) looks
//! every concept up here instead of in lists scattered over the reader, and records the
//! spelling it found (provenance). Each row names where its spellings come from:
//! `transformers` is `huggingface/transformers`, `src/transformers/models/<family>/
//! configuration_<family>.py`; vLLM is `vllm-project/vllm`, `vllm/model_executor/models/`.
//! Gemma 4's spellings were read at transformers commit
//! `008e574391258935f3ecc3035c882e73bbcac419` (`configuration_gemma4.py`) and vLLM commit
//! `eee7972fe3225f0b08bb8d61afd88eb846330a55` (`gemma4.py`); the GatedDeltaNet state fields
//! at vLLM `vllm/model_executor/layers/mamba/mamba_utils.py`
//! (`MambaStateShapeCalculator.gated_delta_net_state_shape`).

use serde_json::Value;

/// A quantity the sizing reads from a config, whatever a family calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Concept {
    /// Width of the residual stream.
    Hidden,
    /// Decoder layers.
    Layers,
    /// Query heads.
    Heads,
    /// KV heads of the (local / default) attention layers.
    KvHeads,
    /// Head dimension of the (local / default) attention layers.
    HeadDim,
    /// KV heads of the global (full-attention) layers, when they differ.
    GlobalKvHeads,
    /// Head dimension of the global (full-attention) layers, when it differs.
    GlobalHeadDim,
    /// Dense MLP width.
    Intermediate,
    /// Routed experts per MoE layer.
    Experts,
    /// Routed experts each token uses.
    ExpertsPerToken,
    /// Width of one routed expert.
    ExpertIntermediate,
    /// Always-on shared experts (count).
    SharedExperts,
    /// Total width of the shared expert(s).
    SharedExpertIntermediate,
    /// The first `k` layers are dense.
    DenseFirstLayers,
    /// Every `n`-th layer is MoE.
    MoeLayerStep,
    /// Sliding window in tokens.
    SlidingWindow,
    /// Per-layer attention kinds (a list of strings).
    LayerTypes,
    /// Nemotron-H's one-letter-per-layer pattern (`M` Mamba, `*` attention, `-` MLP, `E` MoE).
    HybridPattern,
    /// One attention layer every `n` layers (the others linear / Mamba).
    AttentionPeriod,
    /// Offset of the first attention layer within the period.
    AttentionOffset,
    /// Qwen3-Next: every `n`-th layer is full attention, the others linear attention.
    FullAttentionInterval,
    /// The last `n` layers reuse an earlier layer's KV cache (allocate none).
    KvSharedLayers,
    /// Full-attention layers use the K projection as V.
    KEqV,
    /// MLA: compressed KV rank.
    KvLoraRank,
    /// MLA: query LoRA rank.
    QLoraRank,
    /// MLA: rotary part of the q/k head.
    QkRopeHeadDim,
    /// MLA: non-rotary part of the q/k head.
    QkNopeHeadDim,
    /// MLA: value head.
    VHeadDim,
    /// Linear attention (GatedDeltaNet): key heads.
    LinearKeyHeads,
    /// Linear attention: value heads.
    LinearValueHeads,
    /// Linear attention: key head dim.
    LinearKeyHeadDim,
    /// Linear attention: value head dim.
    LinearValueHeadDim,
    /// Linear attention / Mamba: causal-conv kernel width.
    ConvKernel,
    /// Mamba2: SSM heads.
    MambaHeads,
    /// Mamba2: SSM head dim.
    MambaHeadDim,
    /// Mamba: SSM state size.
    SsmStateSize,
    /// Mamba2: B/C groups.
    MambaGroups,
    /// Mamba1 (Jamba): inner width = expand × hidden.
    MambaExpand,
}

/// One row of the table: a concept and its spellings in the order they are tried (where
/// they come from: [`SOURCES`]).
#[derive(Debug, Clone, Copy)]
pub struct Alias {
    /// The concept.
    pub concept: Concept,
    /// Keys tried in order; the first present one wins.
    pub keys: &'static [&'static str],
}

/// The table.
pub static ALIASES: &[Alias] = &[
    Alias {
        concept: Concept::Hidden,
        keys: &["hidden_size", "n_embd", "d_model", "dim"],
    },
    Alias {
        concept: Concept::Layers,
        keys: &["num_hidden_layers", "n_layer", "num_layers", "n_layers"],
    },
    Alias {
        concept: Concept::Heads,
        keys: &["num_attention_heads", "n_head", "n_heads"],
    },
    Alias {
        concept: Concept::KvHeads,
        keys: &[
            "num_key_value_heads",
            "num_kv_heads",
            "multi_query_group_num",
            "n_head_kv",
            "num_query_groups",
        ],
    },
    Alias {
        concept: Concept::HeadDim,
        keys: &["head_dim", "kv_channels", "attention_head_dim"],
    },
    Alias {
        concept: Concept::GlobalKvHeads,
        keys: &["num_global_key_value_heads", "global_num_key_value_heads"],
    },
    Alias {
        concept: Concept::GlobalHeadDim,
        keys: &["global_head_dim"],
    },
    Alias {
        concept: Concept::Intermediate,
        keys: &["intermediate_size", "ffn_hidden_size", "n_inner", "ffn_dim"],
    },
    Alias {
        concept: Concept::Experts,
        keys: &[
            "num_local_experts",
            "n_routed_experts",
            "num_experts",
            "moe_num_experts",
            "n_experts",
        ],
    },
    Alias {
        concept: Concept::ExpertsPerToken,
        keys: &[
            "num_experts_per_tok",
            "num_experts_per_token",
            "experts_per_token",
            "top_k_experts",
            "moe_topk",
            "moe_top_k",
            "n_activated_experts",
            "top_k",
        ],
    },
    Alias {
        concept: Concept::ExpertIntermediate,
        keys: &[
            "moe_intermediate_size",
            "expert_intermediate_size",
            "moe_ffn_hidden_size",
            "moe_inter_dim",
        ],
    },
    Alias {
        concept: Concept::SharedExperts,
        keys: &[
            "n_shared_experts",
            "num_shared_experts",
            "moe_num_shared_experts",
        ],
    },
    Alias {
        concept: Concept::SharedExpertIntermediate,
        keys: &["shared_expert_intermediate_size"],
    },
    Alias {
        concept: Concept::DenseFirstLayers,
        keys: &[
            "first_k_dense_replace",
            "first_k_dense",
            "moe_layer_start_index",
        ],
    },
    Alias {
        concept: Concept::MoeLayerStep,
        keys: &[
            "interleave_moe_layer_step",
            "decoder_sparse_step",
            "moe_layer_freq",
            "expert_layer_period",
        ],
    },
    Alias {
        concept: Concept::SlidingWindow,
        keys: &["sliding_window", "attention_window_size"],
    },
    Alias {
        concept: Concept::LayerTypes,
        keys: &["layer_types", "layers_block_type", "block_types"],
    },
    Alias {
        concept: Concept::HybridPattern,
        keys: &["hybrid_override_pattern"],
    },
    Alias {
        concept: Concept::AttentionPeriod,
        keys: &["attn_layer_period"],
    },
    Alias {
        concept: Concept::AttentionOffset,
        keys: &["attn_layer_offset"],
    },
    Alias {
        concept: Concept::FullAttentionInterval,
        keys: &["full_attention_interval"],
    },
    Alias {
        concept: Concept::KvSharedLayers,
        keys: &["num_kv_shared_layers"],
    },
    Alias {
        concept: Concept::KEqV,
        keys: &["attention_k_eq_v"],
    },
    Alias {
        concept: Concept::KvLoraRank,
        keys: &["kv_lora_rank"],
    },
    Alias {
        concept: Concept::QLoraRank,
        keys: &["q_lora_rank"],
    },
    Alias {
        concept: Concept::QkRopeHeadDim,
        keys: &["qk_rope_head_dim"],
    },
    Alias {
        concept: Concept::QkNopeHeadDim,
        keys: &["qk_nope_head_dim"],
    },
    Alias {
        concept: Concept::VHeadDim,
        keys: &["v_head_dim"],
    },
    Alias {
        concept: Concept::LinearKeyHeads,
        keys: &["linear_num_key_heads"],
    },
    Alias {
        concept: Concept::LinearValueHeads,
        keys: &["linear_num_value_heads"],
    },
    Alias {
        concept: Concept::LinearKeyHeadDim,
        keys: &["linear_key_head_dim"],
    },
    Alias {
        concept: Concept::LinearValueHeadDim,
        keys: &["linear_value_head_dim"],
    },
    Alias {
        concept: Concept::ConvKernel,
        keys: &[
            "linear_conv_kernel_dim",
            "conv_kernel",
            "mamba_d_conv",
            "mamba_conv_kernel",
        ],
    },
    Alias {
        concept: Concept::MambaHeads,
        keys: &["mamba_num_heads", "mamba_n_heads"],
    },
    Alias {
        concept: Concept::MambaHeadDim,
        keys: &["mamba_head_dim", "mamba_d_head"],
    },
    Alias {
        concept: Concept::SsmStateSize,
        keys: &["ssm_state_size", "mamba_d_state", "state_size"],
    },
    Alias {
        concept: Concept::MambaGroups,
        keys: &["n_groups", "mamba_n_groups"],
    },
    Alias {
        concept: Concept::MambaExpand,
        keys: &["mamba_expand", "expand"],
    },
];

/// Where each concept's spellings are defined, one entry per row of [`ALIASES`] (a table of
/// its own: the reader never needs it, so the web bundle does not carry the texts).
pub static SOURCES: &[(Concept, &str)] = &[
    (
        Concept::Hidden,
        "transformers LlamaConfig `hidden_size`; GPT2Config `n_embd`; \
                 T5/OPT-style `d_model`; DeepSeek-V3 inference ModelArgs `dim`",
    ),
    (
        Concept::Layers,
        "transformers LlamaConfig `num_hidden_layers`; GPT2Config `n_layer`; \
                 ChatGLMConfig `num_layers`; DeepSeek-V3 ModelArgs `n_layers`",
    ),
    (
        Concept::Heads,
        "transformers LlamaConfig `num_attention_heads`; GPT2Config `n_head`; \
                 DeepSeek-V3 ModelArgs `n_heads`",
    ),
    (
        Concept::KvHeads,
        "transformers LlamaConfig `num_key_value_heads`; FalconConfig \
                 `num_kv_heads`; ChatGLMConfig `multi_query_group_num`; RW-Falcon `n_head_kv`; \
                 Megatron `num_query_groups`",
    ),
    (
        Concept::HeadDim,
        "transformers LlamaConfig/Gemma3TextConfig `head_dim`; ChatGLMConfig \
                 `kv_channels`",
    ),
    (
        Concept::GlobalKvHeads,
        "transformers configuration_gemma4.py `num_global_key_value_heads` (used on \
                 full-attention layers when `attention_k_eq_v`; vLLM gemma4.py \
                 Gemma4DecoderLayer)",
    ),
    (
        Concept::GlobalHeadDim,
        "transformers configuration_gemma4.py `global_head_dim` (default 512, \
                 full-attention layers; vLLM gemma4.py Gemma4DecoderLayer)",
    ),
    (
        Concept::Intermediate,
        "transformers LlamaConfig `intermediate_size`; ChatGLMConfig \
                 `ffn_hidden_size`; GPT2Config `n_inner`; OPTConfig `ffn_dim`",
    ),
    (
        Concept::Experts,
        "transformers MixtralConfig/GptOssConfig `num_local_experts`; \
                 DeepseekV3Config `n_routed_experts`; Qwen3MoeConfig/Gemma4TextConfig \
                 `num_experts`; Ernie4_5_MoeConfig `moe_num_experts`",
    ),
    (
        Concept::ExpertsPerToken,
        "transformers MixtralConfig/Qwen3MoeConfig/DeepseekV3Config \
                 `num_experts_per_tok`; gpt-oss original config `experts_per_token`; \
                 Gemma4TextConfig `top_k_experts` (vLLM gemma4.py `top_k=config.top_k_experts`); \
                 HunYuanMoEV1Config `moe_topk`; DbrxFFNConfig `moe_top_k`; DeepSeek-V3 \
                 inference ModelArgs `n_activated_experts`; generic `top_k`",
    ),
    (
        Concept::ExpertIntermediate,
        "transformers Qwen3MoeConfig/DeepseekV3Config/Gemma4TextConfig \
                 `moe_intermediate_size`; vLLM gemma4.py fallback `expert_intermediate_size`; \
                 Megatron `moe_ffn_hidden_size`; DeepSeek-V3 ModelArgs `moe_inter_dim`",
    ),
    (
        Concept::SharedExperts,
        "transformers DeepseekV3Config `n_shared_experts`; Ernie4_5_MoeConfig \
                 `moe_num_shared_experts`; generic `num_shared_experts`",
    ),
    (
        Concept::SharedExpertIntermediate,
        "transformers Qwen2MoeConfig `shared_expert_intermediate_size`",
    ),
    (
        Concept::DenseFirstLayers,
        "transformers DeepseekV3Config/Glm4MoeConfig `first_k_dense_replace`; \
                 Ernie4_5_MoeConfig `moe_layer_start_index`",
    ),
    (
        Concept::MoeLayerStep,
        "transformers Llama4TextConfig `interleave_moe_layer_step`; Qwen2MoeConfig \
                 `decoder_sparse_step`; DeepseekV2Config `moe_layer_freq`; JambaConfig \
                 `expert_layer_period`",
    ),
    (
        Concept::SlidingWindow,
        "transformers MistralConfig/Gemma3TextConfig/Gemma4TextConfig \
                 `sliding_window`; RecurrentGemmaConfig `attention_window_size`",
    ),
    (
        Concept::LayerTypes,
        "transformers Gemma3TextConfig/GptOssConfig/Gemma4TextConfig/Qwen3NextConfig \
                 `layer_types` (`sliding_attention`, `full_attention`, `linear_attention`); \
                 Granite-4/Bamba-style `layers_block_type` (`mamba`, `attention`); \
                 RecurrentGemma `block_types` (`recurrent`, `attention`)",
    ),
    (
        Concept::HybridPattern,
        "transformers NemotronHConfig `hybrid_override_pattern` (`M` Mamba2, `*` \
                 attention, `-` MLP, `E` MoE)",
    ),
    (
        Concept::AttentionPeriod,
        "transformers JambaConfig `attn_layer_period`",
    ),
    (
        Concept::AttentionOffset,
        "transformers JambaConfig `attn_layer_offset`",
    ),
    (
        Concept::FullAttentionInterval,
        "transformers Qwen3NextConfig `full_attention_interval` (layer i is full \
                 attention when (i + 1) % interval == 0)",
    ),
    (
        Concept::KvSharedLayers,
        "transformers Gemma3nTextConfig/Gemma4TextConfig `num_kv_shared_layers`; vLLM \
                 gemma4.py `kv_sharing_target_layer_name` (shared layers allocate no KV)",
    ),
    (
        Concept::KEqV,
        "transformers Gemma4TextConfig `attention_k_eq_v`; vLLM gemma4.py loads K into \
                 both the K and V slots of qkv_proj and caches K and V as usual",
    ),
    (
        Concept::KvLoraRank,
        "transformers DeepseekV3Config `kv_lora_rank`",
    ),
    (
        Concept::QLoraRank,
        "transformers DeepseekV3Config `q_lora_rank`",
    ),
    (
        Concept::QkRopeHeadDim,
        "transformers DeepseekV3Config `qk_rope_head_dim`",
    ),
    (
        Concept::QkNopeHeadDim,
        "transformers DeepseekV3Config `qk_nope_head_dim`",
    ),
    (
        Concept::VHeadDim,
        "transformers DeepseekV3Config `v_head_dim`",
    ),
    (
        Concept::LinearKeyHeads,
        "transformers Qwen3NextConfig `linear_num_key_heads`",
    ),
    (
        Concept::LinearValueHeads,
        "transformers Qwen3NextConfig `linear_num_value_heads`",
    ),
    (
        Concept::LinearKeyHeadDim,
        "transformers Qwen3NextConfig `linear_key_head_dim`",
    ),
    (
        Concept::LinearValueHeadDim,
        "transformers Qwen3NextConfig `linear_value_head_dim`",
    ),
    (
        Concept::ConvKernel,
        "transformers Qwen3NextConfig `linear_conv_kernel_dim`; NemotronHConfig \
                 `conv_kernel`; JambaConfig/BambaConfig `mamba_d_conv`",
    ),
    (
        Concept::MambaHeads,
        "transformers NemotronHConfig `mamba_num_heads`; BambaConfig `mamba_n_heads`",
    ),
    (
        Concept::MambaHeadDim,
        "transformers NemotronHConfig `mamba_head_dim`; BambaConfig `mamba_d_head`",
    ),
    (
        Concept::SsmStateSize,
        "transformers NemotronHConfig/Mamba2Config `ssm_state_size`; \
                 JambaConfig/BambaConfig `mamba_d_state`; Mamba2Config `state_size`",
    ),
    (
        Concept::MambaGroups,
        "transformers NemotronHConfig/Mamba2Config `n_groups`; BambaConfig \
                 `mamba_n_groups`",
    ),
    (
        Concept::MambaExpand,
        "transformers JambaConfig `mamba_expand`; Mamba2Config `expand`",
    ),
];

/// The table row of `concept`.
#[must_use]
pub fn row(concept: Concept) -> &'static Alias {
    // Every concept has a row: checked by `every_concept_has_one_row`.
    ALIASES
        .iter()
        .find(|a| a.concept == concept)
        .unwrap_or(&ALIASES[0])
}

/// The value of the first spelling of `concept` present in `obj`, with that spelling.
#[must_use]
pub fn find(obj: &Value, concept: Concept) -> Option<(&'static str, &Value)> {
    row(concept).keys.iter().find_map(|k| match obj.get(*k) {
        None | Some(Value::Null) => None,
        Some(v) => Some((*k, v)),
    })
}

/// [`find`] as a non-negative integer (exact floats such as `4096.0` accepted), with the
/// spelling it came from. A spelling present with a non-integer value is skipped.
#[must_use]
pub fn find_u64(obj: &Value, concept: Concept) -> Option<(&'static str, u64)> {
    row(concept)
        .keys
        .iter()
        .find_map(|k| super::get_u64(obj, k).map(|v| (*k, v)))
}

/// How `obj` spells `concept`, for a message about it: the spelling whose value was read, else
/// the first one present (with a value that is not null), else the table's first.
#[must_use]
pub fn spelling(obj: &Value, concept: Concept) -> &'static str {
    let keys = row(concept).keys;
    find_u64(obj, concept).map(|(k, _)| k).unwrap_or_else(|| {
        keys.iter()
            .copied()
            .find(|k| !matches!(obj.get(*k), None | Some(Value::Null)))
            .unwrap_or(keys[0])
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: &[Concept] = &[
        Concept::Hidden,
        Concept::Layers,
        Concept::Heads,
        Concept::KvHeads,
        Concept::HeadDim,
        Concept::GlobalKvHeads,
        Concept::GlobalHeadDim,
        Concept::Intermediate,
        Concept::Experts,
        Concept::ExpertsPerToken,
        Concept::ExpertIntermediate,
        Concept::SharedExperts,
        Concept::SharedExpertIntermediate,
        Concept::DenseFirstLayers,
        Concept::MoeLayerStep,
        Concept::SlidingWindow,
        Concept::LayerTypes,
        Concept::HybridPattern,
        Concept::AttentionPeriod,
        Concept::AttentionOffset,
        Concept::FullAttentionInterval,
        Concept::KvSharedLayers,
        Concept::KEqV,
        Concept::KvLoraRank,
        Concept::QLoraRank,
        Concept::QkRopeHeadDim,
        Concept::QkNopeHeadDim,
        Concept::VHeadDim,
        Concept::LinearKeyHeads,
        Concept::LinearValueHeads,
        Concept::LinearKeyHeadDim,
        Concept::LinearValueHeadDim,
        Concept::ConvKernel,
        Concept::MambaHeads,
        Concept::MambaHeadDim,
        Concept::SsmStateSize,
        Concept::MambaGroups,
        Concept::MambaExpand,
    ];

    #[test]
    fn every_concept_has_one_row_with_a_source() {
        for c in ALL {
            let rows: Vec<_> = ALIASES.iter().filter(|a| a.concept == *c).collect();
            assert_eq!(rows.len(), 1, "{c:?} must have exactly one row");
            assert!(!rows[0].keys.is_empty(), "{c:?} has no spelling");
            let sources: Vec<_> = SOURCES.iter().filter(|(k, _)| k == c).collect();
            assert_eq!(sources.len(), 1, "{c:?} must have exactly one source entry");
            assert!(sources[0].1.len() > 10, "{c:?} names no source");
        }
        assert_eq!(ALIASES.len(), ALL.len(), "a row for a concept not in ALL");
        assert_eq!(
            SOURCES.len(),
            ALL.len(),
            "a source for a concept not in ALL"
        );
    }

    #[test]
    fn each_concept_resolves_from_each_spelling() {
        for a in ALIASES {
            for (i, k) in a.keys.iter().enumerate() {
                // A distinct value per spelling, so a lookup that read another key fails.
                let want = 1000 + u64::try_from(i).unwrap_or(0);
                let obj = serde_json::json!({ *k: want });
                assert_eq!(
                    find_u64(&obj, a.concept),
                    Some((*k, want)),
                    "{:?} from `{k}`",
                    a.concept
                );
            }
        }
    }

    #[test]
    fn the_first_spelling_wins_and_nulls_are_absent() {
        let obj = serde_json::json!({
            "num_experts_per_tok": 2, "top_k_experts": 8, "num_global_key_value_heads": null
        });
        assert_eq!(
            find_u64(&obj, Concept::ExpertsPerToken),
            Some(("num_experts_per_tok", 2))
        );
        assert_eq!(find(&obj, Concept::GlobalKvHeads), None);
        // Gemma 4 spells it `top_k_experts` only.
        let g4 = serde_json::json!({ "top_k_experts": 8 });
        assert_eq!(
            find_u64(&g4, Concept::ExpertsPerToken),
            Some(("top_k_experts", 8))
        );
    }
}
