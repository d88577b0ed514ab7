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
//! many start, so each step also prefills `p = d × input × (1 − prefix hit) / output` tokens.
//! The concurrency the engine sustains is the smallest of
//! - the KV pool over a request's mean footprint: `input + output / 2` tokens (plus half a
//!   block) when blocks come on demand, `input + output` rounded up to blocks when reserved;
//! - `max_num_seqs`;
//! - the token budget: `d + p ≤ max_num_batched_tokens`, i.e. `d ≤ budget / (1 + p/d)`;
//! - the load: a fixed concurrency, or the requests a rate keeps in flight (Little's law,
//!   `d = rate × end-to-end latency`, solved by bisection), with the M/D/1 waiting time
//!   `ρ / (2 μ (1 − ρ))` added to TTFT near saturation (Kleinrock, Queueing Systems I, §5.7).
//!
//! # One step, on one GPU of one pipeline stage
//! Roofline terms (Williams et al., CACM 2009; for LLMs: Yuan et al., "LLM Inference
//! Unveiled", 2024, §3), with `T = d + p` tokens in the step:
//! ```text
//! weights read  = dense bytes + expert bytes × (1 − (1 − k/E)^T)          (MoE: experts touched)
//! t_linear      = max(weights read / (B × η_bw),  2 × active params × T / (F_prec × η_gemm))
//! t_kv          = d × mean context × KV bytes per token / (B × η_kv)        (paged attention)
//! t_attn        = 4 × p × (input / 2) × heads × head_dim × layers / (F_16 × η_gemm16)
//! t_comm        = layers × 2 × (α + 2 (t−1)/t × T × hidden × 2 B / (link × η_link))   (TP ring)
//! stage         = t_linear + t_kv + t_attn + t_comm
//! ITL           = stages × stage(d / stages) + (stages − 1) × p2p + overhead
//! ```
//! `B` is the datasheet HBM bandwidth, `F_prec` the dense tensor rate at the format's compute
//! precision (catalog), `link` the per-direction link bandwidth. The all-reduce is NCCL's ring
//! (`2 (t−1)/t` of the message; Megatron-LM, Shoeybi et al. 2019, §3: two per layer). Pipeline
//! stages run `stages` micro-batches in flight (vLLM's virtual engines): a token passes every
//! stage in turn, so ITL is `stages` stage times, and with fewer requests than stages the
//! stages idle (the bubble). The overhead is per step: scheduler, sampler and launch time with
//! CUDA graphs, plus one kernel-launch gap per layer without them.
//!
//! Tokens/s in total are `d / ITL`. TTFT is the prompt's chunks at what the token budget
//! leaves after the decodes, plus half a step of waiting, plus any queue.
//!
//! # Constants
//! [`FITTED`] holds the efficiency factors: fractions of datasheet figures and overheads in
//! seconds, fitted to the throughput rows of ../shared/calibration (see
//! [`crate::accuracy`]; docs/ACCURACY.md gives the in-sample, leave-one-GPU-out and
//! leave-one-model-out errors).

use crate::units::real as f;
use serde::Serialize;

/// The efficiency factors and overheads of the step-time model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Constants {
    /// Fraction of datasheet HBM bandwidth reached streaming weights.
    pub eta_bw: f64,
    /// Fraction of datasheet HBM bandwidth reached reading paged KV blocks.
    pub eta_kv: f64,
    /// Fraction of dense 16-bit tensor FLOP/s reached by the GEMMs.
    pub eta_gemm16: f64,
    /// Fraction of dense 8-bit tensor FLOP/s reached by FP8/INT8 GEMMs.
    pub eta_gemm8: f64,
    /// Fraction of dense 4-bit tensor FLOP/s reached by FP4 GEMMs.
    pub eta_gemm4: f64,
    /// Fraction of link bandwidth an all-reduce reaches.
    pub eta_link: f64,
    /// Per-step CPU and launch overhead with CUDA graphs, seconds.
    pub step_overhead_s: f64,
    /// Extra launch time per layer per step without CUDA graphs, seconds.
    pub eager_layer_s: f64,
    /// Scheduler, sampler and detokenizer CPU time per running request per step, seconds.
    pub per_seq_s: f64,
}

/// The shipped constants, fitted on every usable throughput row of the calibration set
/// (`cargo run --release -p vramfit-cli -- accuracy --fit` prints the fit).
pub const FITTED: Constants = Constants {
    eta_bw: 0.80,
    eta_kv: 0.50,
    eta_gemm16: 0.60,
    eta_gemm8: 0.50,
    eta_gemm4: 0.40,
    eta_link: 0.70,
    step_overhead_s: 2.0e-3,
    eager_layer_s: 40e-6,
    per_seq_s: 2.0e-6,
};

impl Constants {
    /// Number of fitted parameters.
    pub const LEN: usize = 9;
    /// Names, in the order of [`Constants::to_array`].
    pub const NAMES: [&'static str; Self::LEN] = [
        "eta_bw",
        "eta_kv",
        "eta_gemm16",
        "eta_gemm8",
        "eta_gemm4",
        "eta_link",
        "step_overhead_s",
        "eager_layer_s",
        "per_seq_s",
    ];
    /// Bounds each constant is fitted within (physical ranges).
    pub const BOUNDS: [(f64, f64); Self::LEN] = [
        (0.3, 0.95),
        (0.05, 0.95),
        (0.1, 0.95),
        (0.1, 0.95),
        (0.05, 0.95),
        (0.2, 0.95),
        (1e-4, 1e-2),
        (1e-6, 2e-4),
        (0.0, 2e-5),
    ];

    /// As an array (for fitting).
    #[must_use]
    pub fn to_array(self) -> [f64; Self::LEN] {
        [
            self.eta_bw,
            self.eta_kv,
            self.eta_gemm16,
            self.eta_gemm8,
            self.eta_gemm4,
            self.eta_link,
            self.step_overhead_s,
            self.eager_layer_s,
            self.per_seq_s,
        ]
    }

    /// From an array in [`Constants::NAMES`] order.
    #[must_use]
    pub fn from_array(a: [f64; Self::LEN]) -> Self {
        Self {
            eta_bw: a[0],
            eta_kv: a[1],
            eta_gemm16: a[2],
            eta_gemm8: a[3],
            eta_gemm4: a[4],
            eta_link: a[5],
            step_overhead_s: a[6],
            eager_layer_s: a[7],
            per_seq_s: a[8],
        }
    }
}

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
    /// Active parameters per GPU of one stage (multiply-adds per token).
    pub active_params: f64,
    /// KV bytes per token per GPU of one stage.
    pub kv_bytes_per_token: f64,
    /// Tokens the KV pool of the replica holds.
    pub kv_tokens: f64,
    /// KV block size, tokens.
    pub block: f64,
    /// Layers per stage.
    pub layers: f64,
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
    /// KV reads per stage.
    pub kv: f64,
    /// Prefill attention compute per stage.
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
    /// Inter-token latency, ms.
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
    let t = (micro + pm).max(1.0);
    let touched = if r.experts > 0.0 {
        1.0 - (1.0 - (r.experts_per_token / r.experts).min(1.0)).powf(t)
    } else {
        0.0
    };
    let bytes = r.dense_bytes + r.expert_bytes * touched;
    let t_w = bytes / (r.bandwidth * k.eta_bw);
    let t_g = 2.0 * r.active_params * t / (r.flops * gemm_eta(k, r.precision));
    let kv = micro * ctx * r.kv_bytes_per_token / (r.bandwidth * k.eta_kv);
    let attention = 4.0 * pm * pctx * r.attn_width * r.layers / (r.flops16 * k.eta_gemm16);
    let comm = if r.tp > 1.0 {
        let msg = t * r.hidden * 2.0;
        r.layers * 2.0 * (r.alpha + 2.0 * (r.tp - 1.0) / r.tp * msg / (r.link * k.eta_link))
    } else {
        0.0
    };
    // Pipeline hand-off: one activation transfer per stage boundary.
    let p2p = if stages > 1.0 {
        r.alpha + t * r.hidden * 2.0 / (r.link * k.eta_link)
    } else {
        0.0
    };
    let launch = if r.cuda_graphs {
        0.0
    } else {
        k.eager_layer_s * r.layers * stages
    };
    let overhead = k.step_overhead_s + launch + k.per_seq_s * d;
    let stage = t_w.max(t_g) + kv + attention + comm;
    StepTime {
        linear: t_w.max(t_g),
        compute_bound: t_g > t_w,
        kv,
        attention,
        comm,
        overhead,
        itl: stages * stage + (stages - 1.0) * p2p + overhead,
    }
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
    let footprint = if r.reserve_full {
        ((input + output) / r.block).ceil() * r.block
    } else {
        input + output / 2.0 + r.block / 2.0
    };
    let by_memory = (r.kv_tokens / footprint).floor();
    let ratio = input * (1.0 - t.prefix_hit.clamp(0.0, 1.0)) / output;
    let by_tokens = (r.max_num_batched_tokens / (1.0 + ratio)).floor().max(1.0);
    let by_seqs = r.max_num_seqs;
    if by_memory <= by_seqs.min(by_tokens) {
        (by_memory.max(0.0), Limit::Memory)
    } else {
        (by_seqs.min(by_tokens), Limit::Scheduler)
    }
}

/// Prefill tokens per step and the step at `d` requests decoding.
fn at(r: &Replica, k: &Constants, t: &Traffic, d: f64) -> (f64, StepTime) {
    let input = f(t.input.max(1));
    let output = f(t.output.max(1));
    let fresh = input * (1.0 - t.prefix_hit.clamp(0.0, 1.0));
    let p = (d * fresh / output).min((r.max_num_batched_tokens - d).max(0.0));
    let ctx = input + output / 2.0;
    (p, step_time(r, k, d, ctx, p, input / 2.0))
}

/// TTFT with `d` decoding: the prompt's chunks at the budget left after the decodes.
fn ttft_s(r: &Replica, t: &Traffic, d: f64, st: &StepTime) -> f64 {
    let fresh = f(t.input.max(1)) * (1.0 - t.prefix_hit.clamp(0.0, 1.0));
    let room = (r.max_num_batched_tokens - d).max(1.0);
    let chunks = (fresh / room).ceil().max(1.0);
    (chunks + 0.5) * st.itl
}

/// The operating point of a replica under a traffic.
#[must_use]
pub fn serve(r: &Replica, k: &Constants, t: &Traffic) -> Serving {
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
    let point = |d: f64, queue_s: f64, limit: Option<Limit>| {
        let (p, st) = at(r, k, t, d);
        let itl = st.itl.max(1e-9);
        let ttft = ttft_s(r, t, d, &st) + queue_s;
        Serving {
            concurrency: d,
            prefill_tokens_per_step: p,
            tokens_per_s_total: d / itl,
            tokens_per_s_per_user: 1.0 / itl,
            requests_per_s: d / itl / output,
            itl_ms: itl * 1e3,
            ttft_ms: queue_s.is_finite().then_some(ttft * 1e3),
            e2e_ms: queue_s
                .is_finite()
                .then_some((ttft + (output - 1.0).max(0.0) * itl) * 1e3),
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
            // Little's law: d = rate × e2e(d), by bisection on d in (0, cap].
            let e2e = |d: f64| {
                let (_, st) = at(r, k, t, d);
                ttft_s(r, t, d, &st) + (output - 1.0).max(0.0) * st.itl
            };
            let (mut lo, mut hi) = (0.0_f64, cap);
            for _ in 0..50 {
                let mid = 0.5 * (lo + hi);
                if rate * e2e(mid) > mid {
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
        let expert_bytes = if m.moe.is_some() && p.expert > 0 {
            f(s.format.expert_bytes(p.expert, m.hidden, s.group_size)) / f(tp) / f(pp)
        } else {
            0.0
        };
        let weights = f(crate::sizing::weights_per_gpu(s));
        let trt = s.flags.engine == Engine::TrtLlm;
        let (seqs, tokens) = if trt {
            (
                s.flags.max_num_seqs.unwrap_or(TRTLLM_MAX_BATCH),
                s.flags.max_num_batched_tokens.unwrap_or(TRTLLM_MAX_NUM_TOKENS),
            )
        } else {
            (e.max_num_seqs, e.max_num_batched_tokens)
        };
        let perf = crate::throughput::GpuPerf::from_gpu(gpu, key);
        Self {
            dense_bytes: (weights - expert_bytes).max(0.0),
            expert_bytes,
            experts: m.moe.map_or(0.0, |x| f(x.experts)),
            experts_per_token: m.moe.map_or(0.0, |x| f(x.experts_per_token)),
            active_params: f(p.active()) / f(tp) / f(pp),
            kv_bytes_per_token: f(e.kv_bytes_per_token),
            kv_tokens: f(e.kv_tokens),
            block: f(e.block_size.max(1)),
            layers: f(m.layers.div_ceil(pp)),
            hidden: f(m.hidden),
            attn_width: f(m.heads) / f(tp) * f(m.head_dim),
            tp: f(tp),
            pp: f(pp),
            max_num_seqs: f(seqs.max(1)),
            max_num_batched_tokens: f(tokens.max(1)),
            reserve_full: trt,
            cuda_graphs: true,
            precision,
            bandwidth: perf.bandwidth,
            flops,
            flops16,
            link: perf.link,
            alpha: perf.alpha,
        }
    }

    /// The same replica over another link (PCIe instead of NVLink, or a network).
    #[must_use]
    pub fn over_link(self, link_bytes_per_s: f64, alpha_s: f64) -> Self {
        Self {
            link: link_bytes_per_s,
            alpha: alpha_s,
            ..self
        }
    }
}
