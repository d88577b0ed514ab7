//! A serving model of continuous batching: how many requests an engine keeps in flight, how
//! long one scheduler step takes, and what that gives in tokens/s, inter-token latency, time
//! to first token and end-to-end latency, at maximum load, at a fixed concurrency or at a
//! request rate.
//!
//! # The scheduler (steady state)
//! vLLM V1 (`vllm/v1/core/sched/scheduler.py`): every step runs the decoding requests (one
//! token each) plus prompt chunks, all under `max_num_batched_tokens`; at most `max_num_seqs`
//! requests run; KV blocks are allocated as tokens arrive (`vllm/v1/core/kv_cache_manager.py`)
//! and a request is preempted when none is free. SGLang (`python/sglang/srt/managers/
//! scheduler.py`) behaves the same way for this purpose (chunked prefill, tokens allocated on
//! demand, page size 1). TensorRT-LLM's default capacity policy `GUARANTEED_NO_EVICT`
//! (`tensorrt_llm/_torch/pyexecutor/scheduler.py`) admits a request only when the blocks for
//! its whole `input + output` are free, so a request reserves its full length.
//!
//! In steady state with `d` requests decoding, `d / output` requests finish per step and as
//! many start, so each step also prefills `p = d × input × (1 − prefix hit) / output` tokens
//! on average. A prompt runs in chunks as large as the budget leaves (one chunk when it fits,
//! `⌈prompt / room⌉` otherwise), each in one step, so when fewer than one chunk arrives per
//! step the mean step is the decode-only step and, in that fraction of steps, the step with
//! a chunk (`at`), not a thin slice of prompt in every step. `T` below is then a step's
//! tokens with or without the chunk.
//! The concurrency the engine sustains is the smallest of
//! - the KV pool over a request's mean footprint: `input + output / 2` tokens (plus half a
//!   block) when blocks come on demand, `input + output` rounded up to blocks when reserved;
//! - `max_num_seqs`;
//! - the token budget: `d + p ≤ max_num_batched_tokens`, i.e. `d ≤ budget / (1 + p/d)`;
//! - the load: a fixed concurrency, or the requests a rate keeps decoding (Little's law for
//!   the decode phase: `d / ITL(d) = rate × output`, solved by bisection), with the M/D/1 waiting time
//!   `ρ / (2 μ (1 − ρ))` added to TTFT near saturation (Kleinrock, Queueing Systems I, §5.7).
//!
//! # One step, on one GPU of one pipeline stage
//! Roofline terms (Williams et al., CACM 2009; for LLMs: Yuan et al., "LLM Inference
//! Unveiled", 2024, §3), with `T = d + p` tokens in the step:
//! ```text
//! weights read  = dense bytes + expert bytes × (1 − (1 − k/E)^T)          (MoE: experts touched;
//!                 an untied input embedding is looked up, not read: `weights_read_per_step`)
//! t_linear      = max(weights read / (B × η_bw),  2 × active params × T / (F_prec × η_gemm(T)))
//!                 (dense and expert GEMMs separately)
//! t_kv          = d × max((full-layer KV × ctx + window-layer KV × min(ctx, window)) / (B × η_kv),
//!                         (full-layer FLOPs × ctx + window-layer FLOPs × min(ctx, window)) / (F_16 × η_gemm16))
//!                 (decode attention's own roofline: MLA's absorbed decode is bound by its math,
//!                 grouped-query attention by its KV reads; `attn_decode_flops_per_cached_token`)
//! t_attn        = 4 × p × (input / 2) × heads × head_dim × layers / (F_16 × η_gemm16)
//! t_comm        = layers × 2 × (α + 2 (t−1)/t × T × hidden × 2 B / (link × η_link))   (TP ring)
//!               + MoE layers × (2α + (dp−1) × T × hidden × (b + 2 B) / (link × η_link))
//!                 (DEP: all-gather of the ranks' tokens at `gather_bytes` b, quantized by
//!                 TensorRT-LLM and 16-bit elsewhere, and reduce-scatter of the 16-bit
//!                 outputs; the expert GEMMs of a rank then run every rank's tokens,
//!                 `dp × T`, at min(`ep_imbalance`, dp) × their share)
//! stage         = t_linear + t_kv + t_attn + t_comm
//! ITL           = stages × stage(d / stages) + (stages − 1) × p2p + overhead
//! ```
//! `B` is the datasheet HBM bandwidth, `F_prec` the dense tensor rate at the format's compute
//! precision (catalog), `link` the per-direction link bandwidth. The all-reduce is NCCL's ring
//! (`2 (t−1)/t` of the message; Megatron-LM, Shoeybi et al. 2019, §3: two per layer). Pipeline
//! stages run `stages` micro-batches in flight (vLLM's virtual engines): a token passes every
//! stage in turn, so ITL is `stages` stage times, and with fewer requests than stages the
//! stages idle (the bubble). The overhead is per step: the gaps between each layer's kernels
//! (the norms, activations and rotary kernels a GEMM roofline leaves out, and kernel tails),
//! more of them without CUDA graphs, plus CPU time per running request (scheduling, sampling,
//! detokenizing). A per-step constant on top of those fitted to zero, so there is none.
//!
//! GEMM efficiency grows with the tokens a GEMM holds (tile occupancy):
//! `η × (n + 16) / (n + 16 + n½)` where `n` is the tokens per step for dense layers and the
//! tokens per expert for MoE layers (uniform routing), so a 128-expert MoE at 2,048 tokens
//! per step runs its experts at 128 tokens each, far from peak (the effect behind
//! DeepSeek's and Qwen3-MoE's expert-parallel kernels; "MegaBlocks", Gale et al. 2023, §2).
//! Read as work, a GEMM of `n` tokens costs `2 × params × n × (1 + n½ / (n + 16))` FLOPs at
//! the fitted efficiency: at large `n` a fixed `n½` tokens' worth more (tile and wave
//! quantization), at small `n` at most `n½ / 16` more (one token costs `1 + n½ / 17` ≈ 10.4
//! tokens' worth at the fit), because the smallest tensor-core tile is 16 rows (PTX ISA, `mma.m16n8k16`) and engines run skinny
//! batches through kernels built for them (Marlin's 16-row tiles, near its ideal 4× up to
//! batch 16–32: Frantar et al., "MARLIN", 2024, abstract; llama.cpp's `mul_mat_vec_q` up to
//! 8 tokens, `ggml-cuda/mmvq.cuh` `MMVQ_MAX_BATCH_SIZE`). Without the 16, one token cost
//! `n½ + 1` tokens of FLOPs (121 at that fit), which made single-stream decode compute-bound
//! on GPUs with few FLOP/s per byte of bandwidth (RTX 3090: 71 TFLOP/s at 936 GB/s; Apple M2
//! Ultra: 27 at 800), so a 4-bit model decoded no faster than a 16-bit one there
//! (`tests/it/single_stream.rs`).
//!
//! Tokens/s in total are `d / ITL` over the mean step with every prompt. A request's own ITL
//! (and 1 / ITL, its tokens/s) is the mean step between its tokens, which carries the
//! others' prompts, `(d − 1) / d` of them, and not its own, which is in its TTFT. TTFT is the
//! prompt's chunks at what the token budget leaves after the decodes, plus half a step of
//! waiting, plus any queue.
//!
//! # Constants
//! [`FITTED`] holds the efficiency factors: fractions of datasheet figures and overheads in
//! seconds, fitted to the throughput rows of ../shared/calibration (see
//! [`crate::accuracy`]; docs/ACCURACY.md gives the in-sample, leave-one-GPU-out and
//! leave-one-model-out errors).

use crate::units::real as f;
use serde::Serialize;

/// Compute precision of the GEMMs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Precision {
    /// BF16/FP16 (and weight-only formats that dequantize to 16 bit).
    Bits16,
    /// FP8 or INT8 tensor cores.
    Bits8,
    /// FP4 tensor cores.
    Bits4,
}

/// How requests arrive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Load {
    /// Every request queued at once (`trtllm-bench`, `vllm bench throughput`, infinite rate).
    MaxLoad,
    /// A fixed number of requests in flight (`vllm bench serve --max-concurrency N`).
    Concurrency(u64),
    /// Poisson arrivals at this many requests per second (`vllm bench serve --request-rate`).
    Rate(f64),
}

/// What bounds the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    /// The KV pool caps the requests in flight.
    Memory,
    /// Reading weights and KV from HBM dominates the step.
    Bandwidth,
    /// Tensor-core compute dominates the step.
    Compute,
    /// All-reduce or pipeline transfers dominate the step.
    Interconnect,
    /// `max_num_seqs` or `max_num_batched_tokens` caps the requests in flight.
    Scheduler,
    /// Per-step CPU and launch overhead dominates the step.
    Overhead,
    /// Requests arrive faster than the replica serves them: the queue grows.
    Queue,
}

impl Limit {
    /// Stable id (`limited_by` in JSON).
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Self::Memory => "memory",
            Self::Bandwidth => "bandwidth",
            Self::Compute => "compute",
            Self::Interconnect => "interconnect",
            Self::Scheduler => "scheduler",
            Self::Overhead => "overhead",
            Self::Queue => "queue",
        }
    }
}

/// Everything about one replica that the step time needs and that does not depend on the
/// constants or the load (built once per scenario by [`Replica::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Replica {
    /// Weight bytes per GPU that every step reads (non-expert).
    pub dense_bytes: f64,
    /// Routed-expert bytes per GPU.
    pub expert_bytes: f64,
    /// Routed experts per layer (0 for dense models).
    pub experts: f64,
    /// Experts per token.
    pub experts_per_token: f64,
    /// Non-expert parameters per GPU of one stage (multiply-adds per token).
    pub dense_params: f64,
    /// Routed-expert parameters one token uses, per GPU of one stage.
    pub expert_params: f64,
    /// KV bytes per token per GPU of one stage, full-attention layers.
    pub kv_full_per_token: f64,
    /// KV bytes per token per GPU of one stage, sliding-window (or chunked) layers.
    pub kv_window_per_token: f64,
    /// Attention FLOPs one decoding token spends per cached token per GPU of one stage,
    /// full-attention and sliding-window layers (`attn_decode_flops_per_cached_token`).
    pub attn_full_flops: f64,
    /// See [`Replica::attn_full_flops`].
    pub attn_window_flops: f64,
    /// The sliding window, tokens (0 when none).
    pub window: f64,
    /// KV pool bytes per GPU.
    pub kv_pool_bytes: f64,
    /// KV block size, tokens.
    pub block: f64,
    /// Layers per stage.
    pub layers: f64,
    /// MoE layers per stage (0 for dense models; every layer for most MoE models, every
    /// second for Llama 4 Maverick, all but the first 3 for DeepSeek-V3).
    pub moe_layers: f64,
    /// Bytes per hidden element a DEP rank's all-gather moves before an MoE layer:
    /// TensorRT-LLM quantizes the tokens to the GEMM input first (`CutlassFusedMoE.
    /// forward_chunk`, `run_post_quant_allgather`), vLLM's `allgather_reducescatter` backend
    /// and SGLang's DP attention gather 16-bit hidden states. Set by
    /// [`Replica::data_parallel_attention`]; 2 otherwise.
    pub gather_bytes: f64,
    /// Hidden size.
    pub hidden: f64,
    /// Attention heads × head dim per GPU.
    pub attn_width: f64,
    /// Tensor-parallel size.
    pub tp: f64,
    /// Pipeline stages.
    pub pp: f64,
    /// `max_num_seqs`.
    pub max_num_seqs: f64,
    /// `max_num_batched_tokens`.
    pub max_num_batched_tokens: f64,
    /// Whether a request reserves its whole length (TensorRT-LLM `GUARANTEED_NO_EVICT`).
    pub reserve_full: bool,
    /// Attention data-parallel ranks sharing the experts (`--data-parallel-size` with
    /// `--enable-expert-parallel`, the "DEP" layouts); 1 otherwise. Every field above is then
    /// one rank's: its own requests, KV and dense weights, `1/dp` of the experts.
    pub dp: f64,
    /// Whether steps run as CUDA graphs.
    pub cuda_graphs: bool,
    /// GEMM precision.
    pub precision: Precision,
    /// HBM bandwidth, bytes/s.
    pub bandwidth: f64,
    /// Dense FLOP/s at the GEMM precision.
    pub flops: f64,
    /// Dense 16-bit FLOP/s (attention).
    pub flops16: f64,
    /// Link bandwidth per direction, bytes/s.
    pub link: f64,
    /// All-reduce latency, s.
    pub alpha: f64,
    /// Link of the pipeline hand-off, bytes/s per direction: the network between nodes when
    /// the replica spans nodes ([`Replica::of`]), else [`Replica::link`].
    pub stage_link: f64,
    /// Latency of one hand-off, s.
    pub stage_alpha: f64,
    /// Speculative decoding and CPU offload (issue 18); none by default.
    pub extras: Extras,
}

/// The traffic: lengths, arrivals, prefix-cache hits.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Traffic {
    /// Prompt tokens per request.
    pub input: u64,
    /// Output tokens per request.
    pub output: u64,
    /// Arrivals.
    pub load: Load,
    /// Fraction of prompt tokens served from the prefix cache (0–1).
    pub prefix_hit: f64,
}

/// Time of one step and its parts, seconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct StepTime {
    /// Weight streaming (or GEMM compute, whichever is longer) per stage.
    pub linear: f64,
    /// Whether the GEMMs are compute-bound.
    pub compute_bound: bool,
    /// KV reads per stage (0 where decode attention's math is the bound).
    pub kv: f64,
    /// Attention compute per stage: prefill's, and decode's where its math is the bound.
    pub attention: f64,
    /// All-reduces per stage.
    pub comm: f64,
    /// CPU and launch overhead per step.
    pub overhead: f64,
    /// Inter-token latency: all stages plus overhead.
    pub itl: f64,
}

/// One operating point of a replica.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Serving {
    /// Requests decoding at once.
    pub concurrency: f64,
    /// Prompt tokens prefilled per step.
    pub prefill_tokens_per_step: f64,
    /// Output tokens/s of the replica.
    pub tokens_per_s_total: f64,
    /// Output tokens/s one request sees (1 / ITL).
    pub tokens_per_s_per_user: f64,
    /// Requests completed per second.
    pub requests_per_s: f64,
    /// Inter-token latency one request sees, ms: the mean step between its tokens, which
    /// carries the other requests' prompts but not its own (that ran before its first
    /// token, in TTFT). The replica's total tokens/s use the mean step over every prompt.
    pub itl_ms: f64,
    /// Time to first token, ms; `None` when the queue grows without bound.
    pub ttft_ms: Option<f64>,
    /// End-to-end latency of one request, ms; `None` when the queue grows without bound.
    pub e2e_ms: Option<f64>,
    /// What bounds it.
    pub limited_by: Limit,
    /// The step.
    pub step: StepTime,
}

fn gemm_eta(k: &Constants, p: Precision) -> f64 {
    match p {
        Precision::Bits16 => k.eta_gemm16,
        Precision::Bits8 => k.eta_gemm8,
        Precision::Bits4 => k.eta_gemm4,
    }
}

/// One step with `d` requests decoding (mean context `ctx`) and `p` prompt tokens
/// (attending to `pctx` earlier tokens on average).
#[must_use]
pub fn step_time(r: &Replica, k: &Constants, d: f64, ctx: f64, p: f64, pctx: f64) -> StepTime {
    let stages = r.pp.max(1.0);
    // Each stage holds `d / stages` requests of a micro-batch (at least one when any).
    let micro = if d > 0.0 { (d / stages).max(1.0) } else { 0.0 };
    let pm = p / stages;
    // A speculating request verifies `k + 1` tokens per step.
    let q = 1.0 + r.extras.spec_tokens;
    let t = (micro * q + pm).max(1.0);
    let eta = gemm_eta(k, r.precision);
    let occupancy = |n: f64| k.occupancy(n);
    let t_dense = (r.dense_bytes / (r.bandwidth * k.eta_bw))
        .max(2.0 * r.dense_params * t / (r.flops * eta * occupancy(t)));
    let (t_expert, expert_compute) = if r.experts > 0.0 {
        let share = (r.experts_per_token / r.experts).min(1.0);
        // Under expert parallelism a rank's experts see every rank's tokens.
        let routed = t * r.dp.max(1.0);
        let touched = 1.0 - (1.0 - share).powf(routed);
        let per_expert = (routed * share / touched.max(1e-9)).max(1.0);
        let mem = r.expert_bytes * touched / (r.bandwidth * k.eta_bw);
        // `expert_params` is a TP-`dp` split's share of each expert, which sees every
        // rank's tokens: `routed`, not the rank's own `t`.
        let comp = 2.0 * r.expert_params * routed / (r.flops * eta * occupancy(per_expert));
        // The busiest of `dp` ranks holds at most all the routed work: `dp` × its share.
        let imbalance = if r.dp > 1.0 {
            k.ep_imbalance.min(r.dp)
        } else {
            1.0
        };
        (mem.max(comp * imbalance), comp * imbalance > mem)
    } else {
        (0.0, false)
    };
    let dense_compute = 2.0 * r.dense_params * t / (r.flops * eta * occupancy(t))
        > r.dense_bytes / (r.bandwidth * k.eta_bw);
    let linear = t_dense + t_expert;
    let compute_bound = if r.experts > 0.0 {
        expert_compute
    } else {
        dense_compute
    };
    // Decode attention, a roofline of its own: the KV it reads (once per request), or its
    // math (MLA), for each of the `1 + k` positions a request verifies with speculation;
    // math-bound, it is compute (`attention`), else KV bandwidth (`kv`).
    let kv_read = micro * kv_read_per_seq(r, ctx) / (r.bandwidth * k.eta_kv);
    let kv_math = micro
        * (1.0 + r.extras.spec_tokens)
        * (r.attn_full_flops * ctx + r.attn_window_flops * ctx.min(r.window))
        / (r.flops16 * k.eta_gemm16);
    let (kv, decode_math) = if kv_math > kv_read {
        (0.0, kv_math)
    } else {
        (kv_read, 0.0)
    };
    let attention =
        decode_math + 4.0 * pm * pctx * r.attn_width * r.layers / (r.flops16 * k.eta_gemm16);
    let comm = if r.tp > 1.0 {
        let msg = t * r.hidden * 2.0;
        r.layers * 2.0 * (r.alpha + 2.0 * (r.tp - 1.0) / r.tp * msg / (r.link * k.eta_link))
    } else {
        0.0
    } + if r.dp > 1.0 && r.experts > 0.0 {
        // Attention data-parallel ranks sharing the experts: before each MoE layer an
        // all-gather of every rank's tokens (`gather_bytes` per element), and after it a
        // reduce-scatter of the 16-bit outputs, so a rank moves
        // `(dp − 1) × tokens × hidden × (gather bytes + 2)`, whatever top-k is (TensorRT-LLM
        // `CutlassFusedMoE.forward_chunk`: `run_post_quant_allgather`, then
        // `reducescatter_or_allreduce`; vLLM's `allgather_reducescatter` all2all backend).
        let moved = (r.dp - 1.0) * t * r.hidden * (r.gather_bytes + 2.0);
        r.moe_layers * (2.0 * r.alpha + moved / (r.link * k.eta_link))
    } else {
        0.0
    };
    // Pipeline hand-off: one activation transfer per stage boundary.
    let p2p = if stages > 1.0 {
        r.stage_alpha + t * r.hidden * 2.0 / (r.stage_link * k.eta_link)
    } else {
        0.0
    };
    let launch = if r.cuda_graphs {
        0.0
    } else {
        k.eager_layer_s * r.layers * stages
    };
    let overhead = launch + k.layer_s * r.layers * stages + k.per_seq_s * d;
    let overhead = overhead + extras::step_extra(r, k, d, p, eta);
    let stage = linear + kv + attention + comm;
    StepTime {
        linear,
        compute_bound,
        kv,
        attention,
        comm,
        overhead,
        itl: stages * stage + (stages - 1.0) * p2p + overhead,
    }
}

/// KV bytes one decoding request reads per step at context `ctx` (sliding layers read at
/// most their window).
fn kv_read_per_seq(r: &Replica, ctx: f64) -> f64 {
    r.kv_full_per_token * ctx + r.kv_window_per_token * ctx.min(r.window)
}

/// The dominant part of a step.
fn dominant(s: &StepTime, stages: f64) -> Limit {
    let parts = [
        (
            s.linear * stages,
            if s.compute_bound {
                Limit::Compute
            } else {
                Limit::Bandwidth
            },
        ),
        (s.kv * stages, Limit::Bandwidth),
        (s.attention * stages, Limit::Compute),
        (s.comm * stages, Limit::Interconnect),
        (s.overhead, Limit::Overhead),
    ];
    // Bandwidth is weights + KV together.
    let bw = if s.compute_bound { 0.0 } else { s.linear } + s.kv;
    let mut best = (bw * stages, Limit::Bandwidth);
    for (t, l) in parts {
        if t > best.0 {
            best = (t, l);
        }
    }
    best.1
}

/// The most requests the replica keeps decoding, and which cap binds.
#[must_use]
pub fn capacity(r: &Replica, t: &Traffic) -> (f64, Limit) {
    let input = f(t.input.max(1));
    let output = f(t.output.max(1));
    // Tokens a request holds: on demand, its mean live context plus half a block; reserved,
    // its whole length in blocks. Sliding layers hold at most the window (plus a block).
    // A speculating request also holds its drafts and lookahead (`2k + 1` slots).
    let ahead = if r.extras.spec_tokens > 0.0 {
        2.0 * r.extras.spec_tokens + 1.0
    } else {
        0.0
    };
    let live = if r.reserve_full {
        ((input + output) / r.block).ceil() * r.block
    } else {
        input + output / 2.0 + r.block / 2.0 + ahead
    };
    let footprint =
        r.kv_full_per_token * live + r.kv_window_per_token * live.min(r.window + r.block);
    let by_memory = if footprint > 0.0 {
        (r.kv_pool_bytes / footprint).floor()
    } else {
        0.0
    };
    let al = r.extras.tokens_per_step.max(1.0);
    let ratio = input * (1.0 - t.prefix_hit.clamp(0.0, 1.0)) * al / output;
    let by_tokens = (r.max_num_batched_tokens / (1.0 + r.extras.spec_tokens + ratio))
        .floor()
        .max(1.0);
    let by_seqs = r.max_num_seqs;
    if by_memory <= by_seqs.min(by_tokens) {
        (by_memory.max(0.0), Limit::Memory)
    } else {
        (by_seqs.min(by_tokens), Limit::Scheduler)
    }
}

/// Prefill tokens per step, the mean step at `d` requests decoding, and the mean step one of
/// them waits on between its tokens (the others' prompts only).
///
/// A new request's prompt is scheduled whole, in chunks of what the token budget leaves
/// after the decodes (vLLM V1 `scheduler.py`: waiting requests take the budget the running
/// ones leave; TensorRT-LLM's chunked context, llama.cpp's `n_batch`). When at least one
/// chunk arrives per step, every step carries prompt tokens and the mean step is one step
/// with the mean prefill. When fewer arrive (few requests, long outputs), most steps decode
/// alone and a fraction `f` of them carry a whole chunk: the mean step is
/// `(1 − f) × step(decodes) + f × step(decodes + chunk)`. Spreading the chunk thinly over
/// every step instead would run it as many small GEMMs at low occupancy, which made a
/// single user's decode compute-bound on GPUs with few FLOP/s per byte.
fn at(r: &Replica, k: &Constants, t: &Traffic, d: f64) -> (f64, StepTime, f64) {
    let input = f(t.input.max(1));
    let output = f(t.output.max(1));
    let fresh = input * (1.0 - t.prefix_hit.clamp(0.0, 1.0));
    // Requests finish in `output ÷ tokens per step` steps; each decoding one takes `k + 1`
    // batched tokens.
    let al = r.extras.tokens_per_step.max(1.0);
    let q = 1.0 + r.extras.spec_tokens;
    let room = (r.max_num_batched_tokens - d * q).max(0.0);
    let p = (d * fresh * al / output).min(room);
    let ctx = input + output / 2.0;
    let chunk = if room >= 1.0 && fresh > 0.0 {
        fresh / (fresh / room).ceil()
    } else {
        0.0
    };
    // A decoding request waits on the other requests' prompts, not on its own, which ran
    // before its first token: `(d − 1) / d` of the prompt tokens.
    let others = if d > 1.0 { (d - 1.0) / d } else { 0.0 };
    let share = |pm: f64| if chunk > 0.0 { pm / chunk } else { 1.0 };
    // The decode-only and the chunk-carrying steps, when a mean needs them (at most once).
    // Under pipeline parallelism the burst is one chunk per round of `stages` micro-batches;
    // `step_time` costs it as `chunk / stages` in each (the round's one chunk-carrying
    // micro-batch is not set apart). Costing every micro-batch with the whole chunk, as
    // `ttft_s` does for the chunk's own latency, counts the chunk `stages` times per round.
    let parts = (share(p * others) < 1.0).then(|| {
        (
            step_time(r, k, d, ctx, 0.0, input / 2.0),
            step_time(r, k, d, ctx, chunk, input / 2.0),
        )
    });
    // The mean step when `pm` prompt tokens arrive per step on average.
    let mean_step = |pm: f64| -> StepTime {
        let sh = share(pm);
        let Some((decode, burst)) = parts.filter(|_| sh < 1.0) else {
            return step_time(r, k, d, ctx, pm, input / 2.0);
        };
        let mean = |a: f64, b: f64| (1.0 - sh) * a + sh * b;
        StepTime {
            linear: mean(decode.linear, burst.linear),
            compute_bound: if (1.0 - sh) * decode.linear > sh * burst.linear {
                decode.compute_bound
            } else {
                burst.compute_bound
            },
            kv: mean(decode.kv, burst.kv),
            attention: mean(decode.attention, burst.attention),
            comm: mean(decode.comm, burst.comm),
            overhead: mean(decode.overhead, burst.overhead),
            itl: mean(decode.itl, burst.itl),
        }
    };
    (p, mean_step(p), mean_step(p * others).itl)
}

/// TTFT with `d` decoding: half a step waiting for the next step, then the prompt's chunks,
/// each a step that carries the decodes plus the chunk (at least the steady-state prefill).
fn ttft_s(r: &Replica, k: &Constants, t: &Traffic, d: f64, st: &StepTime, p: f64) -> f64 {
    let input = f(t.input.max(1));
    let output = f(t.output.max(1));
    let fresh = input * (1.0 - t.prefix_hit.clamp(0.0, 1.0));
    // The others decode beside this prompt (the request itself does not decode yet).
    let others = (d - 1.0).max(0.0);
    let room = (r.max_num_batched_tokens - others).max(1.0);
    let chunks = (fresh / room).ceil().max(1.0);
    let chunk = (fresh / chunks).max(p).min(room);
    // One prompt chunk is one micro-batch: it crosses every pipeline stage whole.
    let step = step_time(
        r,
        k,
        others,
        input + output / 2.0,
        chunk * r.pp.max(1.0),
        input / 2.0,
    );
    0.5 * st.itl + chunks * step.itl
}

/// The operating point of a replica under a traffic (for a DEP layout, of all its ranks:
/// the load splits evenly over them and their throughputs add).
#[must_use]
pub fn serve(r: &Replica, k: &Constants, t: &Traffic) -> Serving {
    let dp = r.dp.max(1.0);
    if dp <= 1.0 {
        return serve_rank(r, k, t);
    }
    let load = match t.load {
        Load::MaxLoad => Load::MaxLoad,
        // OK because: a request count over a small rank count.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Load::Concurrency(n) => Load::Concurrency((f(n) / dp).ceil().max(1.0) as u64),
        Load::Rate(x) => Load::Rate(x / dp),
    };
    let mut s = serve_rank(r, k, &Traffic { load, ..*t });
    // The ranks step together, at the busiest one's pace: `n` requests over `dp` ranks are
    // `n / ⌈n / dp⌉` ranks' worth (fewer than `dp` when `n` does not divide, or is below
    // `dp`), unless memory holds each rank to fewer.
    let ranks = match t.load {
        Load::Concurrency(n) if s.concurrency > 0.0 => (f(n) / s.concurrency).min(dp),
        _ => dp,
    };
    s.concurrency *= ranks;
    s.tokens_per_s_total *= ranks;
    s.requests_per_s *= ranks;
    s
}

/// [`serve`] for one rank.
fn serve_rank(r: &Replica, k: &Constants, t: &Traffic) -> Serving {
    let output = f(t.output.max(1));
    let (cap, cap_limit) = capacity(r, t);
    if cap < 1.0 {
        return Serving {
            concurrency: 0.0,
            prefill_tokens_per_step: 0.0,
            tokens_per_s_total: 0.0,
            tokens_per_s_per_user: 0.0,
            requests_per_s: 0.0,
            itl_ms: 0.0,
            ttft_ms: None,
            e2e_ms: None,
            limited_by: Limit::Memory,
            step: StepTime::default(),
        };
    }
    // Tokens each request emits per step (speculative decoding), so the inter-token latency
    // is the step over them.
    let al = r.extras.tokens_per_step.max(1.0);
    let point = |d: f64, queue_s: f64, limit: Option<Limit>| {
        let (p, st, user_step) = at(r, k, t, d);
        let ttft = ttft_s(r, k, t, d, &st, p) + queue_s;
        // The replica's tokens come at the mean step over every prompt; a request's at the
        // step between its own tokens.
        let itl = st.itl.max(1e-9) / al;
        let user_itl = user_step.max(1e-9) / al;
        Serving {
            concurrency: d,
            prefill_tokens_per_step: p,
            tokens_per_s_total: d / itl,
            tokens_per_s_per_user: 1.0 / user_itl,
            requests_per_s: d / itl / output,
            itl_ms: user_itl * 1e3,
            ttft_ms: queue_s.is_finite().then_some(ttft * 1e3),
            e2e_ms: queue_s
                .is_finite()
                .then_some((ttft + (output - 1.0).max(0.0) * user_itl) * 1e3),
            limited_by: limit.unwrap_or_else(|| dominant(&st, r.pp.max(1.0))),
            step: st,
        }
    };
    match t.load {
        Load::MaxLoad => point(cap, 0.0, Some(cap_limit)),
        Load::Concurrency(n) => {
            let n = f(n.max(1));
            if n <= cap {
                point(n, 0.0, None)
            } else {
                // The rest wait for a slot: (n − cap) requests ahead, served at the completion rate.
                let full = point(cap, 0.0, Some(cap_limit));
                let wait = (n - cap) / full.requests_per_s.max(1e-12) / 2.0;
                point(cap, wait, Some(cap_limit))
            }
        }
        Load::Rate(rate) => {
            let full = point(cap, 0.0, Some(cap_limit));
            let mu = full.requests_per_s;
            if !(rate.is_finite() && rate > 0.0) {
                return point(1.0, 0.0, None);
            }
            if rate >= mu {
                let mut s = full;
                s.ttft_ms = None;
                s.e2e_ms = None;
                s.limited_by = Limit::Queue;
                return s;
            }
            // Token balance (Little's law for the decode phase): the requests decoding, `d`,
            // emit `d / ITL(d)` tokens/s, which must equal `rate × output`. Bisection on d.
            let (mut lo, mut hi) = (0.0_f64, cap);
            for _ in 0..50 {
                let mid = 0.5 * (lo + hi);
                let (_, st, _) = at(r, k, t, mid);
                if mid * al / st.itl.max(1e-12) < rate * output {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let d = hi.max(1e-6);
            let rho = rate / mu;
            let wait = rho / (2.0 * mu * (1.0 - rho));
            point(d, wait, None)
        }
    }
}

/// Latency of one all-reduce over NVLink / Infinity Fabric, seconds: NCCL's small-message
/// all-reduce takes 5–10 µs over NVLink (NVIDIA nccl-tests README, "Performance").
pub const ALPHA_FAST_LINK_S: f64 = 8e-6;
/// Latency of one all-reduce over PCIe, seconds (20–30 µs in the same measurements).
pub const ALPHA_PCIE_S: f64 = 25e-6;
/// The network between nodes where the catalog states none: 100 Gb/s Ethernet, NCCL over
/// TCP sockets (12.5 GB/s per direction, about 50 µs per transfer). An assumption, not
/// validated: the only published runs across nodes in the calibration set name no network,
/// and took ~10× a node's step time (`accuracy::speed::Unfitted::NetworkUnstated`); plans
/// across nodes show their speed as not validated ([`spans_nodes`]).
pub const SOCKET_NETWORK_BYTES_PER_S: f64 = 12.5e9;
/// See [`SOCKET_NETWORK_BYTES_PER_S`].
pub const ALPHA_SOCKET_S: f64 = 50e-6;
/// Latency of one small transfer between nodes over RDMA (InfiniBand, RoCE): 19–20 µs for
/// an 8-byte all-reduce of two A100s in two nodes over InfiniBand HDR (nccl-tests#150,
/// `all_reduce_perf -b 8`, 2023-06-29).
pub const ALPHA_RDMA_S: f64 = 20e-6;

/// Engine defaults for TensorRT-LLM's scheduler (`tensorrt_llm/builder.py` `BuildConfig`:
/// `max_batch_size = 2048`, `max_num_tokens = 8192`).
pub const TRTLLM_MAX_BATCH: u64 = 2048;
/// See [`TRTLLM_MAX_BATCH`].
pub const TRTLLM_MAX_NUM_TOKENS: u64 = 8192;

impl Replica {
    /// From a scenario, the GPU it runs on and its memory estimate.
    #[must_use]
    pub fn of(
        s: &crate::sizing::Scenario,
        gpu: &crate::catalog::Gpu,
        e: &crate::sizing::Estimate,
    ) -> Self {
        use crate::engine::Engine;
        let m = &s.model;
        let tp = s.tensor_parallel_size.max(1);
        let pp = s.pipeline_parallel_size.max(1);
        let p = m.params();
        let key = s.format.compute_key();
        let t = &gpu.dense_tflops;
        let native = |x: Option<f64>| x.is_some_and(|v| v > 0.0);
        let precision = match key {
            "fp4" if native(t.fp4) => Precision::Bits4,
            "fp4" | "fp8" if native(t.fp8) => Precision::Bits8,
            "int8" if native(t.int8) => Precision::Bits8,
            _ => Precision::Bits16,
        };
        let flops = match precision {
            Precision::Bits4 => t.fp4,
            Precision::Bits8 if key == "int8" => t.int8,
            Precision::Bits8 => t.fp8,
            Precision::Bits16 => t.for_key("bf16"),
        }
        .unwrap_or(1.0)
            * 1e12;
        let flops16 = t.for_key("bf16").unwrap_or(1.0) * 1e12;
        // llama.cpp's experts are its GGUF tensors (`sizing/gguf.rs`), the other engines'
        // the format's layout.
        let gguf = s.flags.engine == Engine::LlamaCpp;
        let expert_bytes = if gguf {
            f(crate::sizing::gguf::expert_bytes_per_gpu(s))
        } else if m.moe.is_some() && p.expert > 0 {
            f(s.format.expert_bytes(p.expert, m.hidden, s.group_size)) / f(tp) / f(pp)
        } else {
            0.0
        };
        // What a step streams and multiplies (`weights_read_per_step`,
        // `ParamBreakdown::multiplied`).
        let weights = f(crate::sizing::weights_read_per_step(s));
        let trt = s.flags.engine == Engine::TrtLlm;
        let (seqs, tokens) = if trt {
            (
                s.flags.max_num_seqs.unwrap_or(TRTLLM_MAX_BATCH),
                s.flags
                    .max_num_batched_tokens
                    .unwrap_or(TRTLLM_MAX_NUM_TOKENS),
            )
        } else {
            (e.max_num_seqs, e.max_num_batched_tokens)
        };
        // A TP group wider than the fast link's domain (H100 NVL pairs in a server of 8)
        // all-reduces over PCIe, its slowest hop.
        let fast = gpu.has_fast_link() && tp <= gpu.link_domain();
        let link = if fast || !gpu.has_fast_link() {
            gpu.link_gb_per_s()
        } else {
            gpu.pcie_gb_per_s()
        } * 1e9;
        let alpha = if fast {
            ALPHA_FAST_LINK_S
        } else {
            ALPHA_PCIE_S
        };
        // A replica larger than a node hands activations between nodes over the network
        // (TP stays inside the node: `sizing/refusal.rs`).
        let spans = spans_nodes(s, gpu);
        // Stages in other link groups of the node (H100 NVL pairs) hand off over PCIe.
        let in_domain = !gpu.has_fast_link() || layout_gpus(s) <= gpu.link_domain();
        let (stage_link, stage_alpha) = match gpu.interconnect.scale_out {
            _ if !spans && in_domain => (link, alpha),
            _ if !spans => (gpu.pcie_gb_per_s() * 1e9, ALPHA_PCIE_S),
            Some(n) => (n.gb_per_s * 1e9, n.alpha_s),
            None => (SOCKET_NETWORK_BYTES_PER_S, ALPHA_SOCKET_S),
        };
        use crate::model::LayerAttention as LA;
        let kv_of = |a| m.kv_bytes_per_token_kind(a, s.kv_bytes(), tp);
        let flops_of = |a| m.attn_decode_flops_per_cached_token(a, tp);
        let per_full = kv_of(LA::Full);
        let per_window = kv_of(LA::Sliding { window: 1 });
        let (full_layers, window_layers, window) = layouts::attention_layers(m, pp);
        // The draft (`sizing/spec.rs`): its layers read and hold KV beside the target's.
        let draft = if matches!(s.flags.engine, Engine::Vllm { .. }) {
            crate::sizing::spec::draft(s)
        } else {
            None
        };
        let draft_kv = draft.map_or(0.0, |d| f(d.kv_bytes_per_token));
        // `--cpu-offload-gb`: those bytes are read over the host link (`extras`), not HBM.
        let weights = (weights - f(e.features.cpu_offload_bytes)).max(0.0);
        // vLLM's hybrid groups over pipeline stages: a request holds KV in every group,
        // whichever stage holds its layers, at the busiest stage's tensors (`sizing/kv.rs`),
        // not in the first stage's layers alone (which may hold no global layer).
        let (kv_full, kv_window) = match e.kv_groups.held_per_token() {
            Some((a, b)) if pp > 1 && matches!(s.flags.engine, Engine::Vllm { .. }) => (f(a), f(b)),
            _ => (f(per_full * full_layers), f(per_window * window_layers)),
        };
        Self {
            dense_bytes: (weights - expert_bytes).max(0.0),
            expert_bytes,
            experts: m.moe.map_or(0.0, |x| f(x.experts)),
            experts_per_token: m.moe.map_or(0.0, |x| f(x.experts_per_token)),
            dense_params: f(p.multiplied().saturating_sub(p.active_expert)) / f(tp) / f(pp),
            expert_params: f(p.active_expert) / f(tp) / f(pp),
            kv_full_per_token: kv_full + draft_kv,
            kv_window_per_token: kv_window,
            attn_full_flops: f(flops_of(LA::Full) * full_layers),
            attn_window_flops: f(flops_of(LA::Sliding { window: 1 }) * window_layers),
            window: f(window),
            kv_pool_bytes: f(e.kv_pool_bytes),
            block: f(e.block_size.max(1)),
            layers: f(m.layers.div_ceil(pp)),
            moe_layers: f(layouts::moe_layers(m, pp)),
            gather_bytes: 2.0,
            hidden: f(m.hidden),
            attn_width: f(m.heads) / f(tp) * f(m.head_dim),
            tp: f(tp),
            pp: f(pp),
            max_num_seqs: f(seqs.max(1)),
            max_num_batched_tokens: f(tokens.max(1)),
            // TensorRT-LLM reserves each request's length; llama.cpp each slot's (`-np`).
            reserve_full: trt || s.flags.engine == Engine::LlamaCpp,
            dp: 1.0,
            // `--enforce-eager` (SGLang `--disable-cuda-graph`) launches every kernel.
            cuda_graphs: !s.flags.features.enforce_eager,
            precision,
            bandwidth: gpu.memory_bandwidth_gb_per_s * 1e9,
            flops,
            flops16,
            link,
            alpha,
            stage_link,
            stage_alpha,
            extras: extras_of(s, gpu, e, draft),
        }
    }
}

mod constants;
mod extras;
mod layouts;
pub use constants::{Constants, FITTED};
mod validation;
use extras::extras_of;
pub use extras::{
    accepted_per_step, default_acceptance, draft_pass_s, host_link_bytes_per_s, Extras,
    DRAFT_PASS_S,
};
pub use layouts::{layout_gpus, spans_nodes};
pub use validation::{
    validation, validation_of, HeldOut, Unseen, Validation, HELD_OUT, UNSEEN_GPUS, VALIDATION,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// An 8B dense model in bf16 on an H100 SXM (3.35 TB/s, 989 TFLOPS bf16): 16 GB of
    /// weights, 8 B parameters, 32 layers, 128 KiB of KV per token (Llama 3.1 8B), 30 GB of KV.
    fn replica() -> Replica {
        Replica {
            extras: Extras::default(),
            dense_bytes: 16e9,
            expert_bytes: 0.0,
            experts: 0.0,
            experts_per_token: 0.0,
            dense_params: 8e9,
            expert_params: 0.0,
            kv_full_per_token: 131_072.0,
            kv_window_per_token: 0.0,
            // 4 × 32 heads × 128 × 32 layers: 4 FLOPs per byte of KV read (bandwidth-bound).
            attn_full_flops: 524_288.0,
            attn_window_flops: 0.0,
            window: 0.0,
            kv_pool_bytes: 30e9,
            block: 16.0,
            layers: 32.0,
            moe_layers: 0.0,
            gather_bytes: 2.0,
            hidden: 4096.0,
            attn_width: 4096.0,
            tp: 1.0,
            pp: 1.0,
            max_num_seqs: 256.0,
            max_num_batched_tokens: 8192.0,
            reserve_full: false,
            dp: 1.0,
            cuda_graphs: true,
            precision: Precision::Bits16,
            bandwidth: 3.35e12,
            flops: 989e12,
            flops16: 989e12,
            link: 450e9,
            alpha: 8e-6,
            stage_link: 450e9,
            stage_alpha: 8e-6,
        }
    }

    fn traffic(load: Load) -> Traffic {
        Traffic {
            input: 1000,
            output: 200,
            load,
            prefix_hit: 0.0,
        }
    }

    #[test]
    fn a_dep_step_by_hand() {
        // Four attention-DP ranks sharing 128 experts (top-8), FP4 GEMMs, 100 requests
        // decoding on this rank, no prompt in the step.
        let r = Replica {
            dense_bytes: 2e9,
            dense_params: 1e9,
            expert_bytes: 5e9,
            expert_params: 1e9,
            experts: 128.0,
            experts_per_token: 8.0,
            dp: 4.0,
            moe_layers: 32.0,
            gather_bytes: 0.5625,
            precision: Precision::Bits4,
            bandwidth: 8e12,
            flops: 4.5e15,
            link: 450e9,
            ..replica()
        };
        let st = step_time(&r, &FITTED, 100.0, 1000.0, 0.0, 0.0);
        // All-gather of the other 3 ranks' 100 tokens at FP4 with scales (0.5625 B, as
        // TensorRT-LLM gathers them) and reduce-scatter of the 16-bit outputs (2 B), per MoE
        // layer: 32 × (2 × 8 µs + 3 × 100 ×
        // 4096 × 2.5625 / (450e9 × 0.44)) = 1.0209 ms. (The all-to-all this replaces sent
        // min(top-k, dp) 16-bit copies of each token each way, times `ep_imbalance` (2.9):
        // 4.5× these bytes here.)
        assert!((st.comm * 1e3 - 1.020_90).abs() < 1e-4, "{}", st.comm * 1e3);
        // The rank's experts run all 4 × 100 tokens: 400 × 8 / 128 = 25 tokens per expert,
        // every expert touched; occupancy (25 + 16) / (25 + 16 + 160) = 0.20398; 2 × 1e9 ×
        // 400 / (4.5e15 × 0.42 × 0.20398) × 3.0 = 6.2253 ms (their bytes, 5e9 / (8e12 ×
        // 0.73) = 0.8562 ms, are not the bound). Dense: 2e9 / (8e12 × 0.73) = 0.3425 ms
        // (its GEMMs 2 × 1e9 × 100 / (4.5e15 × 0.42 × 116/276) = 0.2518 ms). 6.5678 ms.
        // Counting only the rank's own 100 tokens, as before, gave a quarter of the experts'
        // work.
        assert!(
            (st.linear * 1e3 - 6.567_79).abs() < 1e-4,
            "{}",
            st.linear * 1e3
        );
        assert!(st.compute_bound);
        // Two ranks: the busiest holds at most all the routed work, so the imbalance is
        // min(3.0, 2) = 2: 200 × 8 / 128 = 12.5 tokens per expert, occupancy 28.5 / 188.5;
        // 2 × 1e9 × 200 / (4.5e15 × 0.42 × 0.15119) × 2 = 2.7996 ms, plus the dense 0.3425.
        let st = step_time(&Replica { dp: 2.0, ..r }, &FITTED, 100.0, 1000.0, 0.0, 0.0);
        assert!(
            (st.linear * 1e3 - 3.142_05).abs() < 1e-4,
            "{}",
            st.linear * 1e3
        );
    }

    #[test]
    fn a_dep_layout_with_fewer_requests_than_ranks_counts_only_them() {
        // Eight DEP ranks: 4 requests keep 4 ranks busy with one each, 8 keep all 8, and
        // the step is the same one-request step, so the replica makes half the tokens/s
        // (planning each rank with at least one request made the 4 read as 8).
        let r = Replica {
            expert_bytes: 5e9,
            expert_params: 1e9,
            experts: 128.0,
            experts_per_token: 8.0,
            dp: 8.0,
            moe_layers: 32.0,
            ..replica()
        };
        let at = |n| serve(&r, &FITTED, &traffic(Load::Concurrency(n)));
        let (four, eight) = (at(4), at(8));
        assert!(
            (four.concurrency - 4.0).abs() < 1e-9,
            "{}",
            four.concurrency
        );
        assert!(
            (eight.concurrency - 8.0).abs() < 1e-9,
            "{}",
            eight.concurrency
        );
        assert!((four.itl_ms - eight.itl_ms).abs() < 1e-9);
        assert!((eight.tokens_per_s_total / four.tokens_per_s_total - 2.0).abs() < 1e-9);
        // 12 requests: two on the busiest rank, so 12 / 2 = 6 ranks' worth of its pace.
        let twelve = at(12);
        assert!(
            (twelve.concurrency - 12.0).abs() < 1e-9,
            "{}",
            twelve.concurrency
        );
    }

    #[test]
    fn one_request_step_by_hand() {
        // One request decoding, 1000 / 200 = 5 prompt tokens per step on average: fewer
        // than one 1000-token chunk per step, so 0.5 % of steps carry the whole prompt and
        // the rest decode alone (`at`).
        // Decoding alone, T = 1: weights 16e9 / (3.35e12 × 0.73) = 6.5426 ms (the GEMMs
        // would take 2 × 8e9 / (989e12 × 0.70 × 17/177) = 0.2406 ms: bandwidth-bound);
        // KV 1100 × 131072 / (3.35e12 × 0.79) = 0.0545 ms (its math, 1100 × 524288 /
        // (989e12 × 0.70) = 0.0008 ms, is not the bound); overhead 32 × 81 µs + 8.1 µs =
        // 2.6001 ms: 9.1972 ms.
        // With the prompt, T = 1001: GEMMs 2 × 8e9 × 1001 / (989e12 × 0.70 × 1017/1177) =
        // 26.7741 ms (compute-bound), KV 0.0545 ms, prompt attention 4 × 1000 × 500 × 4096
        // × 32 / (989e12 × 0.70) = 0.3787 ms, overhead 2.6001 ms: 29.8074 ms.
        // The mean step: 0.995 × 9.1972 + 0.005 × 29.8074 = 9.3003 ms, so the replica makes
        // 1000 / 9.3003 = 107.5 tokens/s. The request itself sees no prompt but its own,
        // which ran before its first token: its ITL is the decode step, 9.1972 ms.
        let s = serve(&replica(), &FITTED, &traffic(Load::Concurrency(1)));
        assert!((s.itl_ms - 9.1972).abs() < 0.001, "{}", s.itl_ms);
        assert!((s.tokens_per_s_per_user - 1000.0 / 9.1972).abs() < 0.02);
        assert!(
            (s.tokens_per_s_total - 1000.0 / 9.3003).abs() < 0.02,
            "{}",
            s.tokens_per_s_total
        );
        assert_eq!(s.limited_by, Limit::Bandwidth);
        assert!(!s.step.compute_bound);
    }

    #[test]
    fn capacity_by_hand_on_demand_and_reserved() {
        // On demand: 1000 + 200/2 + 16/2 = 1108 tokens × 131072 B = 145.2 MB per request;
        // 30e9 / 145.2e6 = 206.6 → 206 requests, below max_num_seqs 256: memory-bound.
        let r = replica();
        assert_eq!(
            capacity(&r, &traffic(Load::MaxLoad)),
            (206.0, Limit::Memory)
        );
        // Reserved (TensorRT-LLM GUARANTEED_NO_EVICT): ⌈1200 / 16⌉ × 16 = 1200 tokens:
        // 30e9 / 157.3e6 = 190.7 → 190.
        let trt = Replica {
            reserve_full: true,
            ..r
        };
        assert_eq!(capacity(&trt, &traffic(Load::MaxLoad)).0, 190.0);
        // A bigger pool hits max_num_seqs instead.
        let big = Replica {
            kv_pool_bytes: 80e9,
            ..r
        };
        assert_eq!(
            capacity(&big, &traffic(Load::MaxLoad)),
            (256.0, Limit::Scheduler)
        );
    }

    #[test]
    fn more_requests_in_flight_raise_total_and_lower_per_user_speed() {
        let r = replica();
        let mut last = serve(&r, &FITTED, &traffic(Load::Concurrency(1)));
        for n in [2, 4, 8, 16, 32, 64, 128, 206] {
            let s = serve(&r, &FITTED, &traffic(Load::Concurrency(n)));
            assert!(s.tokens_per_s_total > last.tokens_per_s_total, "{n}");
            assert!(s.tokens_per_s_per_user < last.tokens_per_s_per_user, "{n}");
            last = s;
        }
        // Past the pool, more requests only wait: same throughput, longer TTFT.
        let max = serve(&r, &FITTED, &traffic(Load::MaxLoad));
        let over = serve(&r, &FITTED, &traffic(Load::Concurrency(400)));
        assert!((over.tokens_per_s_total - max.tokens_per_s_total).abs() < 1e-9);
        assert!(over.ttft_ms > max.ttft_ms);
        assert_eq!(over.limited_by, Limit::Memory);
    }

    #[test]
    fn a_request_rate_obeys_littles_law_and_saturates_into_a_queue() {
        let r = replica();
        let max = serve(&r, &FITTED, &traffic(Load::MaxLoad));
        let rate = max.requests_per_s * 0.5;
        let s = serve(&r, &FITTED, &traffic(Load::Rate(rate)));
        // Little's law for the decode phase: requests decoding = arrival rate × decode time
        // (output × ITL); served throughput equals the arrival rate in steady state.
        let decode_s = 200.0 * s.itl_ms / 1e3;
        assert!(
            (s.concurrency - rate * decode_s).abs() < 0.01 * s.concurrency,
            "{} vs {}",
            s.concurrency,
            rate * decode_s
        );
        assert!((s.requests_per_s - rate).abs() < 0.01 * rate);
        assert!(s.e2e_ms.unwrap() > decode_s * 1e3);
        let over = serve(&r, &FITTED, &traffic(Load::Rate(max.requests_per_s * 1.5)));
        assert_eq!(over.limited_by, Limit::Queue);
        assert_eq!(over.ttft_ms, None);
        assert_eq!(over.e2e_ms, None);
    }

    #[test]
    fn a_pipeline_across_nodes_hands_off_over_the_network() {
        // PP 2 with 8 requests: each stage boundary moves the micro-batch's
        // 4 tokens × 4096 hidden × 2 bytes once, at α + bytes / (link × eta_link). Over a
        // 50 GB/s InfiniBand NIC (α 20 µs) instead of NVLink (450 GB/s, α 8 µs) the step
        // grows by exactly the difference.
        let pp = Replica {
            pp: 2.0,
            layers: 16.0,
            ..replica()
        };
        let ib = Replica {
            stage_link: 50e9,
            stage_alpha: ALPHA_RDMA_S,
            ..pp
        };
        let a = step_time(&pp, &FITTED, 8.0, 1000.0, 0.0, 0.0);
        let b = step_time(&ib, &FITTED, 8.0, 1000.0, 0.0, 0.0);
        let msg = 4.0 * 4096.0 * 2.0;
        let hop = |link: f64, alpha: f64| alpha + msg / (link * FITTED.eta_link);
        let expected = hop(50e9, 20e-6) - hop(450e9, 8e-6);
        assert!(
            (b.itl - a.itl - expected).abs() < 1e-12,
            "{} vs {expected}",
            b.itl - a.itl
        );
        // TP's all-reduces stay on the node's own link.
        assert_eq!(a.comm, b.comm);
    }

    #[test]
    fn tensor_parallel_adds_two_all_reduces_per_layer() {
        // TP 2: each GPU reads half the weights and adds 2 × 32 ring all-reduces of
        // T × hidden × 2 bytes, 2 (t−1)/t = 1 of the message each, plus α.
        let one = replica();
        let two = Replica {
            dense_bytes: 8e9,
            dense_params: 4e9,
            kv_full_per_token: 65_536.0,
            attn_width: 2048.0,
            tp: 2.0,
            ..one
        };
        let st = step_time(&two, &FITTED, 1.0, 1100.0, 5.0, 500.0);
        let msg = 6.0 * 4096.0 * 2.0;
        let comm = 32.0 * 2.0 * (8e-6 + msg / (450e9 * FITTED.eta_link));
        assert!((st.comm - comm).abs() < 1e-12);
        let s1 = step_time(&one, &FITTED, 1.0, 1100.0, 5.0, 500.0);
        assert!(st.itl < s1.itl && st.itl > s1.itl / 2.0);
    }

    #[test]
    fn a_sliding_window_caps_what_a_layer_reads_and_holds() {
        let full = replica();
        let half = Replica {
            kv_full_per_token: 65_536.0,
            kv_window_per_token: 65_536.0,
            window: 128.0,
            ..full
        };
        let t = traffic(Load::MaxLoad);
        // (1108 × 65536 + (128 + 16) × 65536) B per request: 30e9 / 82.05e6 = 365 → 256 cap.
        assert_eq!(capacity(&half, &t), (256.0, Limit::Scheduler));
        assert!(kv_read_per_seq(&half, 1100.0) < kv_read_per_seq(&full, 1100.0) * 0.6);
    }

    #[test]
    fn validation_bands_hold_the_measured_value_for_the_middle_80_percent() {
        let v = VALIDATION[0];
        // A prediction 10 % high (error +0.1) is inside [p10, p90]: its measurement is in band.
        let measured = 100.0;
        let (lo, hi) = v.band(measured * 1.1);
        assert!(lo <= measured && measured <= hi, "{lo} {hi}");
        assert!(validation(crate::engine::Engine::Transformers).is_none());
        assert!(validation(crate::engine::Engine::TrtLlm).is_some());
        // llama.cpp: one user decoding, llama-bench runs never fitted on.
        assert_eq!(
            validation(crate::engine::Engine::LlamaCpp).map(|v| v.rows),
            Some(63)
        );
    }
}
