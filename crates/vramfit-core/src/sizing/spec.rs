//! The speculative draft's memory: its weights, its KV layers in the same pool, and the
//! slots each request holds ahead.
//!
//! # Source (vLLM v0.19.1, `b1388b1fb`; research notes with line numbers in
//! `docs/ACCURACY.md`'s speculative-decoding section)
//! - Weights (`vllm/v1/worker/gpu_model_runner.py` `load_model`: the target and the drafter
//!   are measured together as "Model loading took"), built with the target's parallel
//!   config, so at the target's TP:
//!   - EAGLE-1 head (`llama_eagle.py`): one decoder layer at the target's shape and `fc`
//!     `2h → h` (replicated); embeddings and `lm_head` shared with the target;
//!   - EAGLE-3 head (`llama_eagle3.py`): one decoder layer whose `qkv_proj` reads `2h`,
//!     `fc` `3h → h` (replicated), its own `lm_head` over the draft vocabulary (32,000 for
//!     the published Llama heads); embeddings shared;
//!   - MTP (`deepseek_mtp.py`): `num_nextn_predict_layers` decoder layers of the target's
//!     last-layer shape and quantization, `eh_proj` `2h → h` in 16 bits, replicated;
//!     embeddings and head shared;
//!   - a draft model: its own weights, at the target's TP (`draft_model.py` refuses another);
//!   - n-gram: none.
//! - KV (`EagleProposer.load_model`, `get_kv_cache_spec`): the draft's attention layers get
//!   KV in the same pool and block table, so the bytes per token are the target's plus the
//!   draft's (vllm#19996: 51.63 GiB held 410,128 tokens = 33 × 4096 B per token, a 32-layer
//!   target and one EAGLE layer).
//! - Slots: `vllm/v1/core/sched/scheduler.py` reserves `num_lookahead_tokens = k` for
//!   EAGLE, MTP and draft models (none for n-gram) on top of the `k + 1` tokens verified per
//!   step, up to `max_model_len`.
//! - `k` (`num_speculative_tokens`) defaults to the MTP layers for MTP
//!   (`vllm/config/speculative.py`); other methods require it (3 here when unset, the value
//!   vLLM's docs show).

use super::{weights_per_gpu, Scenario};
use crate::inputs::SpecMethod;
use crate::model::LayerAttention;
use serde::Serialize;

/// Draft vocabulary of the published EAGLE-3 heads for Llama 3.x (`draft_vocab_size`).
pub const EAGLE3_DRAFT_VOCAB: u64 = 32_000;
/// Tokens drafted per step when the config does not say (vLLM's docs' examples).
pub const DEFAULT_SPEC_TOKENS: u64 = 3;

/// The draft on one GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Draft {
    /// The method.
    pub method: SpecMethod,
    /// Tokens drafted per step (`k`).
    pub tokens: u64,
    /// Weight bytes on this GPU.
    pub weights_bytes: u64,
    /// Weight bytes read per draft pass (EAGLE-1 and MTP also read the target's `lm_head`).
    pub read_bytes_per_pass: u64,
    /// Parameters one token goes through per draft pass (for the speed model's FLOPs).
    pub active_params: u64,
    /// KV bytes per token the draft's layers add on this GPU.
    pub kv_bytes_per_token: u64,
    /// Slots each running request holds ahead (`num_lookahead_tokens`).
    pub lookahead: u64,
    /// Draft layers (each a step of the speed model's per-layer overhead).
    pub layers: u64,
}

/// `k` for the scenario's method.
#[must_use]
pub fn spec_tokens(s: &Scenario) -> u64 {
    let sp = s.flags.features.spec;
    sp.tokens
        .unwrap_or(match sp.method {
            Some(SpecMethod::Mtp) if s.model.mtp_layers > 0 => s.model.mtp_layers,
            _ => DEFAULT_SPEC_TOKENS,
        })
        .clamp(1, 64)
}

/// The draft of the scenario, `None` without speculative decoding.
#[must_use]
pub fn draft(s: &Scenario) -> Option<Draft> {
    let method = s.flags.features.spec.method?;
    let m = &s.model;
    let tp = s.tensor_parallel_size.max(1);
    let k = spec_tokens(s);
    let h = m.hidden;
    let hp = 2; // heads and `eh_proj` are 16-bit
    let q = m.heads * m.head_dim;
    let kv = m.kv_heads * m.head_dim;
    let kv_shard = if m.kv_heads >= tp {
        tp
    } else {
        m.kv_heads.max(1)
    };
    let lm_head = m.vocab.div_ceil(64) * 64 / tp * h * hp;
    let full_kv = m.kv_bytes_per_token_kind(LayerAttention::Full, s.kv_bytes(), tp);
    // One dense decoder layer at the target's shape, reading `input` wide.
    let eagle_layer = |input: u64| {
        let attn = input * q / tp + input * 2 * kv / kv_shard + q / tp * h;
        let mlp = if m.gated_mlp { 3 } else { 2 } * h * m.intermediate / tp;
        (attn + mlp + 4 * h) * hp
    };
    let d = match method {
        SpecMethod::Ngram => Draft {
            method,
            tokens: k,
            weights_bytes: 0,
            read_bytes_per_pass: 0,
            active_params: 0,
            kv_bytes_per_token: 0,
            lookahead: 0,
            layers: 0,
        },
        SpecMethod::Eagle => {
            let w = eagle_layer(h) + 2 * h * h * hp;
            Draft {
                method,
                tokens: k,
                weights_bytes: w,
                read_bytes_per_pass: w + lm_head,
                active_params: (w + lm_head) / hp,
                kv_bytes_per_token: full_kv,
                lookahead: k,
                layers: 1,
            }
        }
        SpecMethod::Eagle3 => {
            let head = EAGLE3_DRAFT_VOCAB.div_ceil(64) * 64 / tp * h * hp;
            let w = eagle_layer(2 * h) + 3 * h * h * hp + head;
            Draft {
                method,
                tokens: k,
                weights_bytes: w,
                read_bytes_per_pass: w,
                active_params: w / hp,
                kv_bytes_per_token: full_kv,
                lookahead: k,
                layers: 1,
            }
        }
        SpecMethod::Mtp => {
            let n = m.mtp_layers.max(1);
            let last = m.layers.saturating_sub(1);
            let p = m.layer_params(last);
            let layer = super::weights::layer_bytes_per_rank(s, &p);
            let w = n * (layer + 2 * h * h * hp + 3 * h * hp);
            // A token reads its layer's dense part and its routed experts.
            let active = n * (p.active() / tp + 2 * h * h);
            Draft {
                method,
                tokens: k,
                weights_bytes: w,
                read_bytes_per_pass: w + lm_head,
                active_params: active,
                kv_bytes_per_token: n * m.kv_bytes_per_token_kind(
                    m.layer_attention
                        .last()
                        .copied()
                        .unwrap_or(LayerAttention::Full),
                    s.kv_bytes(),
                    tp,
                ),
                lookahead: k,
                layers: n,
            }
        }
        SpecMethod::DraftModel => {
            let dm = s.draft_model.as_deref()?;
            let mut ds = Scenario::new(dm.clone());
            ds.format = crate::dtype::WeightFormat::Bf16;
            ds.tensor_parallel_size = tp;
            ds.flags.kv_dtype = s.flags.kv_dtype;
            let w = weights_per_gpu(&ds);
            let kvt = super::kv::kv_groups_compact(&ds).bytes_per_token();
            // A pass streams and multiplies what a target's step does (`serving`).
            Draft {
                method,
                tokens: k,
                weights_bytes: w,
                read_bytes_per_pass: super::weights::weights_read_per_step(&ds),
                active_params: dm.params().multiplied() / tp,
                kv_bytes_per_token: kvt,
                lookahead: k,
                layers: dm.layers,
            }
        }
    };
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelArch;

    fn llama_8b() -> Scenario {
        let cfg = r#"{"architectures":["LlamaForCausalLM"],"hidden_size":4096,
          "intermediate_size":14336,"num_hidden_layers":32,"num_attention_heads":32,
          "num_key_value_heads":8,"vocab_size":128256,"max_position_embeddings":131072}"#;
        Scenario::new(ModelArch::from_config_str(cfg).unwrap())
    }

    #[test]
    fn eagle3_head_for_llama_8b() {
        let mut s = llama_8b();
        s.flags.features.spec.method = Some(SpecMethod::Eagle3);
        let d = draft(&s).unwrap();
        // qkv 8192 × 6144, o 4096², MLP 3 × 4096 × 14336, fc 12288 × 4096, lm_head 32000 ×
        // 4096, 4 norms of 4096: 424,689,664 parameters, 16-bit (the research note's 424.7 M).
        let params =
            8192 * 6144 + 4096 * 4096 + 3 * 4096 * 14336 + 12288 * 4096 + 32000 * 4096 + 4 * 4096;
        assert_eq!(params, 424_689_664);
        assert_eq!(d.weights_bytes, params * 2);
        // One more layer of KV: 2 × 8 × 128 × 2 B.
        assert_eq!(d.kv_bytes_per_token, 4096);
        assert_eq!((d.tokens, d.lookahead), (3, 3));
        // n-gram: nothing on the GPU, no lookahead.
        s.flags.features.spec.method = Some(SpecMethod::Ngram);
        let d = draft(&s).unwrap();
        assert_eq!(
            (d.weights_bytes, d.kv_bytes_per_token, d.lookahead),
            (0, 0, 0)
        );
        s.flags.features.spec.method = None;
        assert!(draft(&s).is_none());
    }
}
