//! LoRA adapter slots: what `--enable-lora` pre-allocates on each GPU.
//!
//! # Source
//! vLLM `vllm/lora/layers/` (`column_parallel_linear.py`, `row_parallel_linear.py`,
//! `base_linear.py`: `create_lora_weights`), `vllm/lora/model_manager.py`
//! (`LoRAModelManager`: every supported module of the model is wrapped whatever an adapter's
//! `target_modules`), `vllm/config/lora.py` (defaults):
//!
//! - each wrapped linear layer holds, per slice, `lora_a_stacked[max_loras, 1, max_rank,
//!   in]` and `lora_b_stacked[max_loras, 1, out, max_rank]` in `lora_dtype` (the model's
//!   16-bit dtype by default);
//! - column-parallel layers (`qkv_proj` with its q, k, v slices; `gate_up_proj` with two):
//!   A takes the whole input (`hidden`), B the output shard (`out / TP`); with
//!   `--fully-sharded-loras` A's rank is sharded too (`max_rank / TP`);
//! - row-parallel layers (`o_proj`, `down_proj`): A takes the input shard (`in / TP`), B the
//!   whole output; with `--fully-sharded-loras` B's output is sharded (`out / TP`);
//! - fused MoE experts are wrapped too (`fused_moe.py` `FusedMoEWithLoRA`: per local
//!   expert, `w13` A `2 × hidden × r`, B `2 × I/TP × r`, `w2` A `I/TP × r`, B `hidden × r`),
//!   the router as a replicated layer (`hidden × r` + `experts × r`);
//! - `embed_tokens` and `lm_head` only where the model class declares `embedding_modules`
//!   (`models/llama.py` L515–518: Llama, Mistral, Mixtral, Qwen3, Granite; not Qwen2,
//!   Gemma, gpt-oss, DeepSeek), each `(vocab + hidden) × r`, the whole vocabulary on every
//!   rank;
//! - an adapter's own `target_modules` change nothing: the slots exist before any adapter
//!   is known; `--lora-target-modules` (new in v0.19, `vllm/config/lora.py`) does: modules
//!   outside its list are never wrapped.
//!
//! The Punica index buffers (`punica_base.py`, `punica_gpu.py`: 56 bytes per batched token
//! and 24 per sequence) are counted too; the per-forward shrink buffers (`slices ×
//! tokens × rank` in fp32, < 10 MB) are left out. All of it is allocated inside
//! `load_model`'s memory profiler, so vLLM logs it in "Model loading took".

use super::Scenario;

/// Bytes of the LoRA slots on one GPU (the busiest pipeline stage), and the Punica index
/// buffers. 0 when LoRA is off.
///
/// # Example
/// Llama 3.1 8B, one slot of rank 16 at TP 1: per layer, A = 16 × (3·4096 + 4096 + 2·4096 +
/// 14336) and B = 16 × (4096 + 1024 + 1024 + 4096 + 2·14336 + 4096), 1,343,488 values; × 32
/// layers × 2 bytes = 85,983,232 bytes (the hand-worked test `llama_8b_rank_16`).
#[must_use]
pub fn lora_bytes(s: &Scenario, max_num_batched_tokens: u64, max_num_seqs: u64) -> u64 {
    let l = s.flags.features.lora;
    if !l.enabled {
        return 0;
    }
    let m = &s.model;
    let tp = s.tensor_parallel_size.max(1);
    let pp = s.pipeline_parallel_size.max(1);
    let rank = l.max_rank.max(1);
    let loras = l.max_loras.max(1);
    let h = m.hidden;
    let q = m.heads * m.head_dim;
    // K and V slices: at least one head per rank (`MergedQKVParallelLinearWithLoRA`).
    let kv_rank = (m.kv_heads / tp).max(1) * m.head_dim;
    // Column-parallel: (input, output slices); row-parallel: (input, output).
    let a_rank = if l.fully_sharded {
        rank.div_ceil(tp)
    } else {
        rank
    };
    // `outs` are the slices' whole widths; `sharded` ones are per rank already.
    let column_shards = |input: u64, outs: &[u64]| -> u64 {
        let slices = u64::try_from(outs.len()).unwrap_or(0);
        slices * a_rank * input + outs.iter().map(|o| o * rank).sum::<u64>()
    };
    let column = |input: u64, outs: &[u64]| -> u64 {
        let per: Vec<u64> = outs.iter().map(|o| o.div_ceil(tp)).collect();
        column_shards(input, &per)
    };
    let row = |input: u64, output: u64| -> u64 {
        let out = if l.fully_sharded {
            output.div_ceil(tp)
        } else {
            output
        };
        rank * input.div_ceil(tp) + out * rank
    };
    // `--lora-target-modules`: only the listed modules are wrapped.
    let on = |bit: u8| l.target_modules.is_none_or(|t| t.has(bit));
    let pick = |bit: u8, v: u64| if on(bit) { v } else { 0 };
    let attention = match m.mla {
        // MLA: q (or q_a/q_b), kv_a (replicated), kv_b, o — the column/row rule on each.
        Some(mla) => {
            let qk = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
            let v = mla.v_head_dim;
            let qproj = mla.q_lora_rank.map_or_else(
                || column(h, &[m.heads * qk]),
                |r| r * rank + rank * h + column(r, &[m.heads * qk]),
            );
            let kv_a = mla.kv_lora_rank + mla.qk_rope_head_dim;
            pick(
                1,
                qproj
                    + rank * h
                    + kv_a * rank
                    + column(mla.kv_lora_rank, &[m.heads * (mla.qk_nope_head_dim + v)]),
            ) + pick(2, row(m.heads * v, h))
        }
        None => pick(1, column_shards(h, &[q.div_ceil(tp), kv_rank, kv_rank])) + pick(2, row(q, h)),
    };
    let dense_mlp = if m.gated_mlp {
        pick(4, column(h, &[m.intermediate, m.intermediate])) + pick(8, row(m.intermediate, h))
    } else {
        pick(4, column(h, &[m.intermediate])) + pick(8, row(m.intermediate, h))
    };
    let layers_stage = m.layers.div_ceil(pp);
    let stage = usize::try_from(layers_stage).unwrap_or(usize::MAX);
    // Dense layers of the first (busiest) stage carry the MLP adapters; MoE layers carry the
    // fused experts', the router's and their shared experts' (every `LinearBase` and
    // `FusedMoE` is wrapped).
    let dense_layers = u64::try_from(
        (0..stage)
            .filter(|i| !m.layer_is_moe.get(*i).copied().unwrap_or(false))
            .count(),
    )
    .unwrap_or(0);
    let moe_layer = m.moe.map_or(0, |moe| {
        let i = moe.expert_intermediate.div_ceil(tp);
        // w2's B: the whole hidden width, or its shard when fully sharded.
        let w2_out = if l.fully_sharded { h.div_ceil(tp) } else { h };
        let experts = moe.experts * (2 * h * a_rank + 2 * i * rank + i * rank + w2_out * rank);
        let router = h * rank + moe.experts * rank;
        // Shared experts are plain MLPs (`gate_up_proj`, `down_proj`).
        let shared = if moe.shared_intermediate > 0 {
            pick(
                4,
                column(h, &[moe.shared_intermediate, moe.shared_intermediate]),
            ) + pick(8, row(moe.shared_intermediate, h))
        } else {
            0
        };
        pick(64, experts + router) + shared
    });
    let moe_layers = layers_stage
        .min(m.layers)
        .saturating_sub(dense_layers.min(layers_stage));
    let embedding = if declares_embedding_modules(&m.architecture) {
        pick(16, (m.vocab + h) * rank) + pick(32, (m.vocab + h) * rank)
    } else {
        0
    };
    let per_slot = attention
        .saturating_mul(layers_stage)
        .saturating_add(dense_mlp.saturating_mul(dense_layers))
        .saturating_add(moe_layer.saturating_mul(moe_layers))
        .saturating_add(embedding);
    let dtype_bytes = 2;
    // Punica (`punica_base.py`, `punica_gpu.py`): token and sampler indices, two kernel
    // metadata sets, the sequence metadata.
    let punica = 56 * max_num_batched_tokens + 24 * max_num_seqs;
    per_slot
        .saturating_mul(loras)
        .saturating_mul(dtype_bytes)
        .saturating_add(punica)
}

/// Whether vLLM's model class lists `embedding_modules` (so `embed_tokens` and `lm_head`
/// get LoRA slots): `models/llama.py` and the classes built on it or copying it.
#[must_use]
pub fn declares_embedding_modules(architecture: &str) -> bool {
    ["Llama", "Mistral", "Mixtral", "Qwen3", "Granite"]
        .iter()
        .any(|f| architecture.starts_with(f))
        && !architecture.contains("ForConditionalGeneration")
}

/// Host memory of the adapters cached on the CPU (`--max-cpu-loras`, default `max_loras`):
/// each a full (unsharded) adapter of `max_rank` on every wrapped layer.
#[must_use]
pub fn cpu_lora_bytes(s: &Scenario) -> u64 {
    let l = s.flags.features.lora;
    if !l.enabled {
        return 0;
    }
    let mut whole = s.clone();
    whole.tensor_parallel_size = 1;
    whole.pipeline_parallel_size = 1;
    whole.flags.features.lora.max_loras = 1;
    whole.flags.features.lora.fully_sharded = false;
    let one = lora_bytes(&whole, 0, 0);
    one.saturating_mul(l.max_cpu_loras.unwrap_or(l.max_loras).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelArch;

    fn llama_8b() -> Scenario {
        let cfg = r#"{"architectures":["LlamaForCausalLM"],"hidden_size":4096,
          "intermediate_size":14336,"num_hidden_layers":32,"num_attention_heads":32,
          "num_key_value_heads":8,"vocab_size":128256,"max_position_embeddings":131072}"#;
        let mut s = Scenario::new(ModelArch::from_config_str(cfg).unwrap());
        s.flags.features.lora.enabled = true;
        s
    }

    #[test]
    fn llama_8b_rank_16() {
        let mut s = llama_8b();
        // Per layer and unit of rank: A over q, k, v (3 × 4096), o (4096 in), gate, up
        // (2 × 4096), down (14336 in); B over q 4096, k 1024, v 1024, o 4096 out, gate/up
        // 2 × 14336, down 4096 out: 81,920 = 20 × hidden.
        let layer =
            (3 * 4096 + 4096 + 2 * 4096 + 14336) + (4096 + 1024 + 1024 + 4096 + 2 * 14336 + 4096);
        assert_eq!(layer, 81_920);
        // Llama declares `embedding_modules`: embed_tokens and lm_head, (vocab + hidden)
        // each, the whole vocabulary.
        let embed = 2 * (128_256 + 4096);
        assert_eq!(embed, 264_704);
        let punica = 56 * 8192 + 24 * 1024;
        // 92,356,608 B = 88.1 MiB at rank 16 (the research note's table, `lora_bytes.py`).
        assert_eq!(16 * (32 * layer + embed) * 2, 92_356_608);
        assert_eq!(lora_bytes(&s, 8192, 1024), 92_356_608 + punica);
        // TP 2: A of column layers whole, B halved; row layers' A halved, B whole:
        // 55,296 per layer; 65,093,632 B in all.
        s.tensor_parallel_size = 2;
        let layer2 = (3 * 4096 + 4096 / 2 + 2 * 4096 + 14336 / 2)
            + ((4096 + 1024 + 1024) / 2 + 4096 + 14336 + 4096);
        assert_eq!(layer2, 55_296);
        assert_eq!(lora_bytes(&s, 8192, 1024), 65_093_632 + punica);
        // Fully sharded: 40,960 per layer.
        s.flags.features.lora.fully_sharded = true;
        assert_eq!(
            lora_bytes(&s, 8192, 1024),
            16 * (32 * 40_960 + embed) * 2 + punica
        );
        // Four slots of rank 64 at TP 1: 1,477,705,728 B = 1.376 GiB.
        s.flags.features.lora.fully_sharded = false;
        s.tensor_parallel_size = 1;
        s.flags.features.lora.max_loras = 4;
        s.flags.features.lora.max_rank = 64;
        assert_eq!(lora_bytes(&s, 8192, 1024), 1_477_705_728 + punica);
        // Off: nothing.
        s.flags.features.lora.enabled = false;
        assert_eq!(lora_bytes(&s, 8192, 1024), 0);
    }

    #[test]
    fn target_modules_leave_the_rest_unwrapped() {
        let mut s = llama_8b();
        // q_proj,v_proj name the packed qkv_proj: its A (3 × 4096) and B (4096 + 2 × 1024)
        // per unit of rank, nothing else.
        s.flags.features.lora.target_modules =
            Some(crate::inputs::features::LoraModules::parse("q_proj,v_proj").unwrap());
        let qkv = 3 * 4096 + 4096 + 2 * 1024;
        assert_eq!(lora_bytes(&s, 0, 0), 16 * 32 * qkv * 2);
    }

    #[test]
    fn host_cache_holds_whole_adapters() {
        let mut s = llama_8b();
        s.tensor_parallel_size = 4;
        s.flags.features.lora.max_cpu_loras = Some(8);
        // Whole adapters (no Punica buffers on the host), eight of them.
        assert_eq!(cpu_lora_bytes(&s), 92_356_608 * 8);
    }
}
