//! llama.cpp's `llama-server`: what it allocates at start-up, on the busiest GPU.
//!
//! # Sources
//! `ggml-org/llama.cpp` as read through the code index (the snapshot was too large to fetch):
//! `src/llama-context.cpp` and `src/llama-kv-cache.cpp` at commit
//! `001d906a6d86e2490e394361e7cc6f478b100088`, `src/llama-kv-cache-iswa.cpp` at
//! `02c28f533ebba3e4ea944fc4a0719a012b3e7097`; `tools/server/server.cpp` (the slot default,
//! quoted below); `src/llama-memory-recurrent.cpp` through its log line (`RS buffer size …
//! (4 cells, … 4 seqs), R (f32) …, S (f32) …`, ggml-org/llama.cpp#24175).
//!
//! llama.cpp has no memory fraction: it allocates the weights, the whole KV cache of `-c`
//! and the compute buffer at start-up, and either they fit or an allocation fails. So the
//! budget is the whole usable memory ([`crate::catalog::Gpu::usable_bytes`]: on Apple
//! silicon the catalog's `unified_memory_gpu_fraction`, Metal's
//! `recommendedMaxWorkingSetSize`), and `--gpu-memory-utilization` is ignored for this
//! engine.
//!
//! - **Weights**: the GGUF file's tensors at the types `llama-quantize` gives them, for the
//!   file type the plan's command names (`WeightFormat::gguf_quant`: 4-bit formats ↔
//!   `Q4_K_M`, 8-bit ↔ `Q8_0`, 16-bit ↔ `F16`/`BF16`, gpt-oss ↔ its MXFP4 file), on the
//!   GPUs that hold them: the input embedding stays on the CPU, the output projection goes
//!   with the last layers (`sizing/gguf.rs`, with its sources).
//! - **Context** (`llama-context.cpp`, `llama_context::llama_context`): `n_ctx =
//!   GGML_PAD(n_ctx, 256)`; with a unified KV cache `n_ctx_seq = n_ctx`, else `n_ctx_seq =
//!   GGML_PAD(n_ctx / n_seq_max, 256)` and `n_ctx = n_ctx_seq × n_seq_max`. `n_batch =
//!   min(n_ctx, -b)` (2048 default), `n_ubatch = min(n_batch, -ub)` (512 default).
//!   `llama-server` with one slot (`-np 1`, the default) switches to four slots over one
//!   unified cache (`server.cpp`: "setting n_parallel = 4 and kv_unified = true"); with
//!   `-np N > 1` each of the `N` slots has its own stream of `n_ctx / N` cells. The command
//!   vramfit writes passes `-c` = per-slot length × `-np`, so each slot holds the plan's
//!   `max_model_len`.
//! - **KV cache** (`llama-kv-cache.cpp`, `llama_kv_cache::llama_kv_cache`): every layer's K
//!   and V, `[n_embd_k_gqa, kv_size, n_stream]` with `n_stream = unified ? 1 : n_seq_max`,
//!   `kv_size = n_ctx_seq`; f16 by default (`--cache-type-k/-v`); the core's `fp8` KV dtype
//!   stands for `q8_0` (34 bytes per 32 elements, 8.5 bits). Sliding-window layers
//!   (`llama-kv-cache-iswa.cpp`): `size_swa = GGML_PAD(min(size_base, n_swa × (unified ?
//!   n_seq_max : 1) + n_ubatch), 256)` cells per stream, unless `--swa-full` (not used by
//!   the commands). MLA layers cache one latent row (K only), as the core's KV shape says.
//!   Recurrent layers (`llama-memory-recurrent.cpp`): `n_seq_max` cells of the conv and
//!   temporal states in f32 (the core's state elements × 4 B).
//! - **Compute buffer** (`llama-context.cpp`, `sched_reserve`): the scheduler reserves the
//!   prompt-processing graph for `n_tokens = min(n_ctx, n_ubatch)` tokens with
//!   `n_outputs = min(n_tokens, n_outputs_max)` (`n_outputs_max = n_batch`): logits for every
//!   token of the ubatch. ggml's allocator reuses memory between layers, so the buffer is the
//!   largest stage of one layer, in f32:
//!   - output: `(n_vocab + n_embd) × n_ubatch × 4`;
//!   - attention, flash attention off: `n_head × n_kv × n_ubatch × 4` (the KQ scores; the
//!     soft-max runs in place) + the f32 mask `n_kv × n_ubatch × 4` + four hidden-size rows
//!     (`(2 n_embd + 2 n_head·head_dim) × n_ubatch × 4`);
//!   - attention, flash attention on: the mask in f32 and its f16 copy `n_kv × pad64(n_ubatch)
//!     × 6` + the same four rows;
//!   - feed-forward: the mask + `(2 n_embd + w) × n_ubatch × 4`, `w = 3 × n_ff` (gated),
//!     `2 × n_ff`, or for MoE `top_k × (3 × n_ff_exp + n_embd)`. This stage is estimated from
//!     the graph (`build_ffn` / `build_moe_ffn`), not checked against a log where it
//!     dominates.
//!
//!   Flash attention is taken as on: `-fa auto`, the default, turns it on on CUDA and Metal.
//!   Checked against published `compute buffer size` lines (flash attention off):
//!   `crates/vramfit-core/tests/it/llama_cpp.rs`. Host-side buffers (`CUDA_Host` compute,
//!   the logits output buffer) are not on the GPU and not counted; with `--split-mode
//!   layer` every GPU holds a whole layer's compute buffer (the output stage is charged to
//!   every stage, and the scheduler's pipeline copies are not modelled).
//! - **Driver context**: [`super::CUDA_CONTEXT_GIB`], as for the other engines (on Metal
//!   it stands for the process's own allocations).
//! - **Concurrency**: `-np` slots (`max_num_seqs`), each reserving its whole length up
//!   front, as TensorRT-LLM does (`serving.rs`, `reserve_full`). Without `--max-num-seqs`,
//!   the plan takes as many slots as the workload's users that fit in memory (at least one).
//! - **Parallelism**: llama.cpp splits layers over GPUs (`--split-mode layer`, the
//!   default), a pipeline split: tensor parallelism is refused (`sizing/refusal.rs`) and
//!   the layouts are PP only.

use super::kv::kv_groups_compact;
use super::{f, gib, weights_per_gpu, Scenario, CUDA_CONTEXT_GIB};
use super::{Estimate, Fit, Verdict, Warnings};
use crate::dtype::KvDtype;
use crate::model::LayerAttention;

/// `-ub` default (`common/common.h`, `n_ubatch`).
pub const N_UBATCH: u64 = 512;
/// `-b` default (`common/common.h`, `n_batch`).
pub const N_BATCH: u64 = 2048;
/// Slots `llama-server` runs when given one (`server.cpp`: `n_parallel = 4`, unified KV).
pub const AUTO_SLOTS: u64 = 4;
/// The context's padding in cells (`llama-context.cpp`, `GGML_PAD(n_ctx, 256)`; the SWA
/// cache is padded the same, `llama-kv-cache-iswa.cpp`).
pub const CTX_PAD: u64 = 256;
/// The KQ mask's row padding (`ggml.h`, `GGML_KQ_MASK_PAD`).
pub const KQ_MASK_PAD: u64 = 64;

/// The context llama.cpp builds from `-c`, `-np`, `-b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Context {
    /// `n_ctx`: cells over all slots.
    pub n_ctx: u64,
    /// `n_ctx_seq`: cells one slot may use.
    pub n_ctx_seq: u64,
    /// `n_seq_max`: slots.
    pub n_seq: u64,
    /// One stream shared by the slots (`kv_unified`).
    pub unified: bool,
    /// `n_ubatch`.
    pub n_ubatch: u64,
}

impl Context {
    /// The context of `llama-server -c <len × np> -np <np> -b <n_batch>`: each slot holds
    /// `len` tokens (padded to 256); one slot becomes the server's four unified ones.
    #[must_use]
    pub fn for_slots(len: u64, np: u64, n_batch: u64) -> Self {
        let len = len.clamp(1, 1 << 32);
        let np = np.clamp(1, 1 << 20);
        let pad = |x: u64| x.div_ceil(CTX_PAD).saturating_mul(CTX_PAD);
        let (n_ctx, n_ctx_seq, n_seq, unified) = if np == 1 {
            let n = pad(len);
            (n, n, AUTO_SLOTS, true)
        } else {
            let seq = pad(pad(len.saturating_mul(np)) / np);
            (seq.saturating_mul(np), seq, np, false)
        };
        let n_batch = n_batch.clamp(1, 1 << 26).min(n_ctx);
        Self {
            n_ctx,
            n_ctx_seq,
            n_seq,
            unified,
            n_ubatch: n_batch.min(N_UBATCH),
        }
    }

    fn streams(&self) -> u64 {
        if self.unified {
            1
        } else {
            self.n_seq
        }
    }

    /// Cells of a sliding-window layer's cache over all streams (`llama-kv-cache-iswa.cpp`).
    #[must_use]
    pub fn swa_cells(&self, window: u64) -> u64 {
        let seqs = if self.unified { self.n_seq } else { 1 };
        let want = window.saturating_mul(seqs).saturating_add(self.n_ubatch);
        let per_stream = self
            .n_ctx_seq
            .min(want)
            .div_ceil(CTX_PAD)
            .saturating_mul(CTX_PAD);
        per_stream.saturating_mul(self.streams())
    }
}

/// Bytes of `elements` cached values in llama.cpp's cache type for the core's KV dtype:
/// `q8_0` (34 bytes per block of 32) for `fp8`, f16 otherwise (`ggml_row_size`).
#[must_use]
pub fn cache_bytes(kv: KvDtype, elements: u64) -> u64 {
    match kv {
        KvDtype::Fp8 => elements.div_ceil(32).saturating_mul(34),
        _ => elements.saturating_mul(2),
    }
}

/// Layers of the busiest (first) pipeline stage (`--split-mode layer`: llama.cpp's split,
/// `sizing/gguf.rs` `device_of_layer`).
fn stage_layers(s: &Scenario) -> u64 {
    super::gguf::most_layers_on_a_gpu(s.model.layers, s.pipeline_parallel_size)
}

/// The window llama.cpp uses for every sliding layer (`hparams.n_swa`, one per model).
fn n_swa(s: &Scenario) -> u64 {
    s.model
        .layer_attention
        .iter()
        .filter_map(|a| match a {
            LayerAttention::Sliding { window } => Some(*window),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// KV cache bytes on the busiest GPU (`llama_kv_cache: size = …` summed over its layers,
/// plus the recurrent state's `RS buffer`).
#[must_use]
pub fn kv_bytes(s: &Scenario, c: &Context) -> u64 {
    let m = &s.model;
    let kv = s.flags.kv_dtype;
    let full_cells = c.n_ctx_seq.saturating_mul(c.streams());
    let swa_cells = c.swa_cells(n_swa(s));
    let state = m
        .state_bytes_per_request_layer(4, 1)
        .saturating_mul(c.n_seq);
    (0..stage_layers(s))
        .map(|i| {
            if m.shares_kv(i) {
                return 0;
            }
            let a = m.attention_of(i);
            let row = cache_bytes(kv, m.kv_bytes_per_token_kind(a, 1, 1));
            match a {
                LayerAttention::Full => row.saturating_mul(full_cells),
                LayerAttention::Sliding { .. } => row.saturating_mul(swa_cells),
                LayerAttention::Recurrent => state,
                LayerAttention::MlpOnly => 0,
            }
        })
        .fold(0, u64::saturating_add)
}

/// KV bytes one token takes over the busiest GPU's attention layers (sliding layers
/// counted in full), in llama.cpp's cache type.
#[must_use]
pub fn kv_bytes_per_token(s: &Scenario) -> u64 {
    let m = &s.model;
    (0..stage_layers(s))
        .filter(|&i| !m.shares_kv(i))
        .map(|i| {
            cache_bytes(
                s.flags.kv_dtype,
                m.kv_bytes_per_token_kind(m.attention_of(i), 1, 1),
            )
        })
        .fold(0, u64::saturating_add)
}

/// The compute buffer of one GPU (`llama_context: CUDA0 compute buffer size = …`), the
/// largest stage of the module docs.
#[must_use]
pub fn compute_bytes(s: &Scenario, c: &Context, flash_attn: bool) -> u64 {
    let m = &s.model;
    let ub = c.n_ubatch;
    let any_full = m
        .layer_attention
        .iter()
        .any(|a| matches!(a, LayerAttention::Full))
        || m.layer_attention.is_empty();
    let n_kv = if any_full {
        c.n_ctx_seq
    } else {
        c.swa_cells(n_swa(s)) / c.streams().max(1)
    };
    let rows = |w: u64| w.saturating_mul(ub).saturating_mul(4);
    let mask = if flash_attn {
        n_kv.saturating_mul(ub.div_ceil(KQ_MASK_PAD) * KQ_MASK_PAD)
            .saturating_mul(6)
    } else {
        n_kv.saturating_mul(ub).saturating_mul(4)
    };
    let q_width = m.heads.saturating_mul(m.head_dim);
    let hidden_rows = rows(2 * m.hidden + 2 * q_width);
    let scores = if flash_attn {
        0
    } else {
        m.heads.saturating_mul(n_kv).saturating_mul(rows(1))
    };
    let attention = scores.saturating_add(mask).saturating_add(hidden_rows);
    let dense = m.layer_is_moe.iter().any(|x| !*x) || m.layer_is_moe.is_empty();
    let dense_w = if !dense {
        0
    } else if m.gated_mlp {
        3 * m.intermediate
    } else {
        2 * m.intermediate
    };
    let moe_w = match m.moe {
        Some(moe) if m.layer_is_moe.iter().any(|x| *x) => {
            moe.experts_per_token * (3 * moe.expert_intermediate + m.hidden)
        }
        _ => 0,
    };
    let ffn = mask.saturating_add(rows(2 * m.hidden + dense_w.max(moe_w)));
    let output = rows(m.vocab.saturating_add(m.hidden));
    output.max(attention).max(ffn)
}

/// What `llama-server` needs on the busiest GPU at a context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Need {
    kv: u64,
    compute: u64,
}

fn need(s: &Scenario, c: &Context) -> Need {
    Need {
        kv: kv_bytes(s, c),
        compute: compute_bytes(s, c, true),
    }
}

/// The largest `x` in `1..=hi` with `ok(x)`, `ok` monotone (true then false); 0 if none.
fn largest(hi: u64, ok: impl Fn(u64) -> bool) -> u64 {
    let (mut lo, mut hi) = (0, hi);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if ok(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// The llama.cpp estimate: the module docs' accounting in the [`Estimate`] every view shows
/// (activation = the compute buffer, KV pool = the KV cache llama.cpp allocates; the
/// signed pool is the memory left for it).
#[allow(clippy::too_many_lines)] // one engine's accounting, step by step
pub(super) fn estimate(s: &Scenario, gpu_total_bytes: u64, warnings: Warnings) -> Estimate {
    let m = &s.model;
    let refusal = super::refusal::refusal(s);
    let len = s.model_len().min(1 << 32);
    let users = s.workload.users.clamp(1, 1 << 20);
    let n_batch = s
        .flags
        .max_num_batched_tokens
        .unwrap_or(N_BATCH)
        .clamp(1, 1 << 26);
    let weights = weights_per_gpu(s);
    let context = gib(CUDA_CONTEXT_GIB);
    let budget = gpu_total_bytes;
    let fits = |c: &Context| {
        let n = need(s, c);
        weights
            .saturating_add(context)
            .saturating_add(n.compute)
            .saturating_add(n.kv)
            <= budget
    };
    let np = s.flags.max_num_seqs.map_or_else(
        || largest(users, |np| fits(&Context::for_slots(len, np, n_batch))).max(1),
        |n| n.clamp(1, 1 << 20),
    );
    let ctx = Context::for_slots(len, np, n_batch);
    let Need { kv, compute } = need(s, &ctx);
    let room = i128::from(budget) - i128::from(weights) - i128::from(context) - i128::from(compute);
    let room_signed = i64::try_from(room).unwrap_or(if room < 0 { i64::MIN } else { i64::MAX });
    let per_slot = kv / np;
    // The tokens one slot holds: `n_ctx_seq` (the length padded to 256 cells), at most the
    // model's trained length (`tools/server/server-context.cpp` caps `n_ctx_slot` at
    // `n_ctx_train`).
    let slot = ctx.n_ctx_seq.min(m.max_position_embeddings.max(1));
    let slots_fitting = if i128::from(kv) <= room {
        f(np)
    } else if per_slot == 0 {
        0.0
    } else {
        (f(u64::try_from(room.max(0)).unwrap_or(u64::MAX)) / f(per_slot)).floor()
    };
    let max_model_len_fit = largest(m.max_position_embeddings.max(1), |l| {
        fits(&Context::for_slots(l, 1, n_batch))
    });
    let fit = if refusal.is_some() {
        Fit::Refused
    } else if weights.saturating_add(compute).saturating_add(context) > budget {
        Fit::WeightsTooLarge
    } else if i128::from(kv) > room {
        Fit::KvTooSmall
    } else if slots_fitting + 1e-9 < f(s.workload.users) {
        Fit::FitsWithQueueing
    } else {
        Fit::Fits
    };
    let verdict = Verdict {
        fit,
        pool: room_signed,
        per_request: per_slot,
        conc: slots_fitting,
        util: 1.0,
        model_len: s.model_len(),
        // Held within the slot (`plan/features.rs` `too_long`).
        workload_tokens: s.request_tokens().min(slot),
        users: s.workload.users,
        refusal,
        engine: s.flags.engine,
        set_pool: None,
        short: weights
            .saturating_add(compute)
            .saturating_add(context)
            .saturating_sub(budget),
    };
    Estimate {
        budget_bytes: budget,
        gpu_total_bytes,
        weights_bytes: weights,
        activation_bytes: compute,
        non_torch_bytes: 0,
        cuda_graph_bytes: 0,
        cuda_context_bytes: context,
        kv_pool_bytes: kv,
        kv_pool_signed_bytes: room_signed,
        kv_bytes_per_token: kv_bytes_per_token(s),
        block_size: 1,
        kv_blocks: ctx.n_ctx,
        kv_tokens: ctx.n_ctx,
        kv_bytes_per_request: per_slot,
        max_concurrency: slots_fitting,
        max_concurrency_workload: slots_fitting,
        max_model_len_fit,
        max_model_len: len,
        request_len: slot,
        // One user's slot is `max_model_len_fit`, the same search: no second one.
        slots_longest_len: Some((
            users,
            if users == 1 {
                max_model_len_fit
            } else {
                largest(m.max_position_embeddings.max(1), |l| {
                    fits(&Context::for_slots(l, users, n_batch))
                })
            },
        )),
        max_num_seqs: np,
        max_num_batched_tokens: n_batch.min(ctx.n_ctx),
        nvidia_smi_bytes: weights
            .saturating_add(compute)
            .saturating_add(kv)
            .saturating_add(context),
        kv_groups: kv_groups_compact(s),
        fit,
        refusal,
        verdict,
        warnings,
        features: super::FeatureBytes::default(),
        vllm_auto_max_model_len: None,
    }
}

#[cfg(test)]
mod tests {
    use super::{cache_bytes, Context};
    use crate::dtype::KvDtype;

    #[test]
    fn the_context_pads_and_splits_as_llama_context_does() {
        // One slot: the server's four unified slots over one padded stream.
        let c = Context::for_slots(8000, 1, 2048);
        assert_eq!(
            (c.n_ctx, c.n_ctx_seq, c.n_seq, c.unified),
            (8192, 8192, 4, true)
        );
        // Four slots of 8192: -c 32768 -np 4, one stream of 8192 cells each.
        let c = Context::for_slots(8192, 4, 2048);
        assert_eq!(
            (c.n_ctx, c.n_ctx_seq, c.n_seq, c.unified),
            (32768, 8192, 4, false)
        );
        // A short context caps the batch, hence the ubatch.
        assert_eq!(Context::for_slots(256, 1, 2048).n_ubatch, 256);
        assert_eq!(Context::for_slots(4096, 1, 2048).n_ubatch, 512);
        // SWA cache: min(n_ctx_seq, n_swa × seqs + n_ubatch) padded to 256, per stream.
        let c = Context::for_slots(32768, 1, 2048);
        assert_eq!(
            c.swa_cells(4096),
            16384 + 512,
            "unified: 4096 × 4 + 512 = 16896"
        );
        let c = Context::for_slots(32768, 2, 2048);
        assert_eq!(
            c.swa_cells(4096),
            2 * (4096 + 512),
            "per stream: 4608, two streams"
        );
        assert_eq!(Context::for_slots(2048, 2, 2048).swa_cells(4096), 2 * 2048);
    }

    #[test]
    fn q8_0_is_34_bytes_per_32_values() {
        assert_eq!(cache_bytes(KvDtype::Auto, 1024), 2048);
        assert_eq!(cache_bytes(KvDtype::Fp8, 1024), 1088, "8.5 bits each");
    }

    /// Published `llama_new_context_with_model` lines, flash attention off, n_ubatch 512:
    /// Llama 3.2 3B (28 layers, 8 KV heads × 128, hidden 3072, 24 heads, vocab 128256) at
    /// n_ctx 2048, <https://github.com/ollama/ollama/issues/8310>: `KV self size = 224.00
    /// MiB`, `CUDA0 compute buffer size = 256.50 MiB`. Hand-worked: KV 2 × 28 × 1024 × 2 B ×
    /// 2048 = 224 MiB exactly; compute = (128256 + 3072) × 512 × 4 B = 256.50 MiB (the
    /// output stage; attention is 124 MiB).
    #[test]
    fn published_llama_cpp_logs_hold() {
        use crate::model::ModelArch;
        use crate::sizing::Scenario;
        let mib = |x: u64| crate::units::real(x) / f64::from(1u32 << 20);
        let cfg = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":3072,
          "intermediate_size":8192,"num_hidden_layers":28,"num_attention_heads":24,
          "num_key_value_heads":8,"head_dim":128,"vocab_size":128256,"tie_word_embeddings":true,
          "max_position_embeddings":131072}"#;
        let s = Scenario::new(ModelArch::from_config_str(cfg).unwrap());
        let c = Context::for_slots(2048, 1, 2048);
        assert_eq!(super::kv_bytes(&s, &c), 224 << 20, "exact");
        let compute = mib(super::compute_bytes(&s, &c, false));
        assert!(
            (compute - 256.50).abs() <= 0.5,
            "{compute} MiB vs 256.50 MiB"
        );
        // Llama 3.1 8B (32 layers, 8 KV heads × 128): 131072 B per token, 1 GiB at 8192.
        let cfg8 = cfg
            .replace("3072", "4096")
            .replace("8192", "14336")
            .replace(r#""num_hidden_layers":28"#, r#""num_hidden_layers":32"#)
            .replace(r#""num_attention_heads":24"#, r#""num_attention_heads":32"#);
        let s8 = Scenario::new(ModelArch::from_config_str(&cfg8).unwrap());
        assert_eq!(super::kv_bytes_per_token(&s8), 131_072);
        let c8 = Context::for_slots(8192, 1, 2048);
        assert_eq!(
            super::kv_bytes(&s8, &c8),
            1 << 30,
            "`llama_kv_cache: size = 1024.00 MiB`"
        );
        // Flash attention off at 8192: 32 × 8192 × 512 × 4 (scores) + 8192 × 512 × 4 (mask)
        // + 4 × 4096 × 512 × 4 = 560.00 MiB, the `CUDA0 compute buffer size = 560.00 MiB` of
        // a published Llama 3 8B ollama log at n_ctx 8192.
        let compute8 = mib(super::compute_bytes(&s8, &c8, false));
        assert!((compute8 - 560.0).abs() <= 0.5, "{compute8} MiB");
    }
}
