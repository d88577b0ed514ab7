//! Decode speed, time to first token and tensor-parallel scaling, from a roofline.
//!
//! # Model
//! One decode step of a batch of `B` requests whose contexts average `L` tokens, on each GPU
//! of a TP group of size `t` (Williams et al., "Roofline", CACM 2009; the LLM form as in
//! "LLM Inference Unveiled", Yuan et al. 2024, §3):
//! ```text
//! bytes  = weights read per GPU + B × L × KV bytes per token per GPU
//! flops  = 2 × active parameters / t × B  +  4 × B × L × heads/t × head_dim × layers
//! t_mem  = bytes / (bandwidth × ETA_BANDWIDTH)
//! t_comp = flops / (dense TFLOPS × ETA_COMPUTE)
//! t_comm = layers × 2 all-reduces × (ALPHA + 2 (t−1)/t × B × hidden × 2 B / link bandwidth)
//! step   = max(t_mem, t_comp) + t_comm + STEP_OVERHEAD
//! ```
//! Weights read per GPU shrink as 1/t (TP splits every matrix), so TP shortens the step and
//! adds the all-reduce: two per layer (after attention and after the MLP), ring algorithm
//! (Megatron-LM, Shoeybi et al. 2019, §3; NCCL ring all-reduce moves `2 (t−1)/t` of the
//! message). For MoE the weights read are the non-expert weights plus the experts the batch
//! touches: `E × (1 − (1 − k/E)^B)` of `E` per layer.
//!
//! Prefill of `P` tokens (time to first token): `2 × active × P / t` FLOPs plus the
//! quadratic attention term, at `ETA_PREFILL` of dense TFLOPS, plus the all-reduces of
//! `P × hidden` activations.
//!
//! The KV cache is read at [`ETA_KV_READ`] of peak bandwidth, the weights at [`ETA_BANDWIDTH`].
//!
//! Maximum load (TensorRT-LLM `trtllm-bench` tables): the batch is as large as the KV pool
//! allows for `input + output` tokens (capped by `max_num_seqs`); a generation round prefills
//! `B × input` tokens in chunks of `max_num_batched_tokens` and decodes `output` steps;
//! throughput = `B × output / round time`.
//! When memory limited the batch, more GPUs hold a bigger batch, so total throughput can
//! grow faster than the GPU count.
//!
//! The efficiency factors are named constants, fitted to the `tp_scaling` rows of
//! ../shared/calibration (docs/ACCURACY.md reports the error).

use crate::catalog::Gpu;
use crate::sizing::{estimate_bytes, weights_per_gpu, Scenario};
use serde::Serialize;

/// Fraction of peak HBM bandwidth a decode step achieves reading weights (large GEMV/GEMM
/// streams; 75–85 % is typical of well-tuned kernels on H100/A100).
pub const ETA_BANDWIDTH: f64 = 0.80;
/// Fraction of peak HBM bandwidth paged-attention decode achieves reading the KV cache
/// (scattered 16–64-token pages, few KV heads per GPU under TP). Fitted to the TensorRT-LLM
/// max-load tables in ../shared/calibration: decode-heavy workloads (128 in / 2048–4096 out)
/// scale far below what a full-bandwidth KV read predicts.
pub const ETA_KV_READ: f64 = 0.30;
/// Fraction of dense TFLOPS a decode step's matrix multiplies achieve.
pub const ETA_COMPUTE: f64 = 0.60;
/// Fraction of dense TFLOPS a prefill achieves (MFU).
pub const ETA_PREFILL: f64 = 0.55;
/// Latency of one all-reduce over NVLink / Infinity Fabric, seconds.
pub const ALPHA_FAST_LINK_S: f64 = 8e-6;
/// Latency of one all-reduce over PCIe, seconds.
pub const ALPHA_PCIE_S: f64 = 25e-6;
/// Fraction of link bandwidth an all-reduce achieves.
pub const ETA_LINK: f64 = 0.70;
/// Per-step scheduling and launch overhead, seconds.
pub const STEP_OVERHEAD_S: f64 = 2.0e-3;
/// Pipeline-parallel bubble: extra fraction of step time per additional stage at low batch.
pub const PP_HANDOFF_S: f64 = 0.3e-3;

use crate::units::real as f;

/// GPU performance figures the roofline needs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GpuPerf {
    /// Memory bandwidth, bytes/s.
    pub bandwidth: f64,
    /// Dense FLOP/s at the format's compute precision.
    pub flops: f64,
    /// Link bandwidth per direction, bytes/s.
    pub link: f64,
    /// All-reduce latency, s.
    pub alpha: f64,
}

impl GpuPerf {
    /// From a catalog GPU for a compute key (`"bf16"`, `"fp8"`, ...).
    #[must_use]
    pub fn from_gpu(gpu: &Gpu, compute_key: &str) -> Self {
        Self {
            bandwidth: gpu.memory_bandwidth_gb_per_s * 1e9,
            flops: gpu.dense_tflops.for_key(compute_key).unwrap_or(1.0) * 1e12,
            link: gpu.link_gb_per_s() * 1e9,
            alpha: if gpu.has_fast_link() {
                ALPHA_FAST_LINK_S
            } else {
                ALPHA_PCIE_S
            },
        }
    }

    /// The same GPU over PCIe instead of its own link.
    #[must_use]
    pub fn over_pcie(self, pcie_gb_per_s: f64) -> Self {
        Self {
            link: pcie_gb_per_s * 1e9,
            alpha: ALPHA_PCIE_S,
            ..self
        }
    }
}

/// Time of one decode step, seconds, and its parts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Step {
    /// Memory-bound time.
    pub t_mem: f64,
    /// Compute-bound time.
    pub t_comp: f64,
    /// All-reduce time.
    pub t_comm: f64,
    /// Whole step.
    pub total: f64,
}

fn weights_read_per_step(s: &Scenario, batch: u64) -> f64 {
    let w = f(weights_per_gpu(s));
    let m = &s.model;
    let Some(moe) = m.moe else { return w };
    let p = m.params();
    if p.expert == 0 {
        return w;
    }
    // Fraction of expert bytes touched by a batch (uniform routing).
    let e = f(moe.experts);
    let k = f(moe.experts_per_token);
    let touched = e * (1.0 - (1.0 - k / e).powf(f(batch.max(1))));
    let frac = (touched / e).clamp(0.0, 1.0);
    let tp = f(s.tensor_parallel_size.max(1));
    let expert_bytes_gpu = f(s.format.expert_bytes(p.expert, m.hidden, s.group_size))
        / tp
        / f(s.pipeline_parallel_size.max(1));
    (w - expert_bytes_gpu * (1.0 - frac)).max(0.0)
}

/// One decode step for `batch` requests with contexts of `context` tokens on average.
#[must_use]
pub fn decode_step(s: &Scenario, perf: GpuPerf, batch: u64, context: u64) -> Step {
    let m = &s.model;
    let tp = s.tensor_parallel_size.max(1);
    let pp = s.pipeline_parallel_size.max(1);
    let b = batch.max(1);
    let kv_per_token = m.kv_bytes_per_token_layer(s.kv_bytes(), tp) * m.layers.div_ceil(pp);
    let kv_bytes = f(b) * f(context) * f(kv_per_token);
    let active = f(m.params().active());
    let heads_gpu = f(m.heads) / f(tp);
    let flops = 2.0 * active / f(tp) / f(pp) * f(b)
        + 4.0 * f(b) * f(context) * heads_gpu * f(m.head_dim) * f(m.layers) / f(pp);
    let t_mem = weights_read_per_step(s, b) / (perf.bandwidth * ETA_BANDWIDTH)
        + kv_bytes / (perf.bandwidth * ETA_KV_READ);
    let t_comp = flops / (perf.flops * ETA_COMPUTE);
    let t_comm = if tp > 1 {
        let msg = f(b) * f(m.hidden) * 2.0;
        let per = perf.alpha + 2.0 * (f(tp) - 1.0) / f(tp) * msg / (perf.link * ETA_LINK);
        f(m.layers) / f(pp) * 2.0 * per
    } else {
        0.0
    };
    // Pipeline: each token passes every stage in turn; at steady state with enough
    // micro-batches the stages overlap, at low batch they do not.
    let stages = f(pp);
    let stage_time = t_mem.max(t_comp) + t_comm;
    let total = if pp > 1 {
        let overlap = (f(b) / stages).min(1.0);
        stage_time * stages * (1.0 - overlap)
            + stage_time * overlap * 1.0
            + PP_HANDOFF_S * (stages - 1.0)
            + STEP_OVERHEAD_S
    } else {
        stage_time + STEP_OVERHEAD_S
    };
    Step {
        t_mem,
        t_comp,
        t_comm,
        total,
    }
}

/// Prefill time of `tokens` prompt tokens (one request or many), seconds.
#[must_use]
pub fn prefill_time(s: &Scenario, perf: GpuPerf, tokens: u64) -> f64 {
    let m = &s.model;
    let tp = s.tensor_parallel_size.max(1);
    let pp = s.pipeline_parallel_size.max(1);
    let active = f(m.params().active());
    let t = f(tokens.max(1));
    let flops =
        2.0 * active * t / f(tp) + 2.0 * t * t * f(m.heads) / f(tp) * f(m.head_dim) * f(m.layers);
    let t_comp = flops / (perf.flops * ETA_PREFILL);
    let t_mem = f(weights_per_gpu(s)) / (perf.bandwidth * ETA_BANDWIDTH);
    let t_comm = if tp > 1 {
        let msg = t * f(m.hidden) * 2.0;
        f(m.layers)
            * 2.0
            * (perf.alpha + 2.0 * (f(tp) - 1.0) / f(tp) * msg / (perf.link * ETA_LINK))
    } else {
        0.0
    };
    // With PP the stages run one after another for a single prompt.
    t_comp.max(t_mem) + t_comm + STEP_OVERHEAD_S * f(pp)
}

/// Prefill of `batch` prompts of `input` tokens, chunked by `max_num_batched_tokens` (vLLM
/// chunked prefill, TRT-LLM `max_num_tokens`): compute-bound, one step overhead per chunk.
#[must_use]
pub fn prefill_batch_time(s: &Scenario, perf: GpuPerf, batch: u64, input: u64, chunk: u64) -> f64 {
    let m = &s.model;
    let tp = s.tensor_parallel_size.max(1);
    let total = f(batch.max(1)) * f(input.max(1));
    let active = f(m.params().active());
    let attn = f(batch.max(1)) * 2.0 * f(input) * f(input) * f(m.heads) / f(tp)
        * f(m.head_dim)
        * f(m.layers);
    let flops = 2.0 * active * total / f(tp) + attn;
    let chunks = (total / f(chunk.max(1))).ceil().max(1.0);
    let t_comp = flops / (perf.flops * ETA_PREFILL);
    let t_mem = chunks * f(weights_per_gpu(s)) / (perf.bandwidth * ETA_BANDWIDTH);
    let t_comm = if tp > 1 {
        let msg = total * f(m.hidden) * 2.0;
        chunks * f(m.layers) * 2.0 * perf.alpha
            + f(m.layers) * 2.0 * 2.0 * (f(tp) - 1.0) / f(tp) * msg / (perf.link * ETA_LINK)
    } else {
        0.0
    };
    t_comp.max(t_mem) + t_comm + chunks * STEP_OVERHEAD_S
}

/// Decode and prefill speed of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Speed {
    /// Batch used (concurrent requests decoding together).
    pub batch: u64,
    /// Tokens/s one user sees while decoding.
    pub decode_tokens_per_s_per_user: f64,
    /// Output tokens/s of the whole replica.
    pub decode_tokens_per_s_total: f64,
    /// Time to first token for one prompt, seconds.
    pub ttft_s: f64,
    /// Step breakdown.
    pub step: Step,
}

/// Decode speed at `batch` with the workload's average context.
#[must_use]
pub fn speed(s: &Scenario, perf: GpuPerf, batch: u64) -> Speed {
    let ctx = s.workload.prompt_tokens + s.workload.output_tokens / 2;
    let step = decode_step(s, perf, batch, ctx);
    let per_user = if step.total > 0.0 {
        1.0 / step.total
    } else {
        0.0
    };
    Speed {
        batch: batch.max(1),
        decode_tokens_per_s_per_user: per_user,
        decode_tokens_per_s_total: per_user * f(batch.max(1)),
        ttft_s: prefill_time(s, perf, s.workload.prompt_tokens),
        step,
    }
}

/// Maximum-load output throughput for `input`/`output` lengths: the batch is what the KV pool
/// holds (capped by `max_num_seqs`). Returns (tokens/s total, batch).
#[must_use]
pub fn max_load_throughput(
    s: &Scenario,
    perf: GpuPerf,
    gpu_total_bytes: u64,
    input: u64,
    output: u64,
) -> (f64, u64) {
    let mut sc = s.clone();
    sc.workload.prompt_tokens = input;
    sc.workload.output_tokens = output;
    sc.flags.max_model_len = Some(
        sc.flags
            .max_model_len
            .unwrap_or(input + output)
            .max(input + output),
    );
    let e = estimate_bytes(&sc, gpu_total_bytes);
    // OK because: max_concurrency_workload is finite and non-negative.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let by_memory = e.max_concurrency_workload.floor().max(0.0) as u64;
    let batch = by_memory.min(e.max_num_seqs);
    if batch == 0 {
        return (0.0, 0);
    }
    let ctx = input + output / 2;
    let step = decode_step(&sc, perf, batch, ctx);
    let prefill = prefill_batch_time(&sc, perf, batch, input, e.max_num_batched_tokens);
    let round = prefill + f(output) * step.total;
    (f(batch) * f(output) / round, batch)
}

/// One point of a scaling curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScalePoint {
    /// TP size.
    pub tensor_parallel_size: u64,
    /// PP size.
    pub pipeline_parallel_size: u64,
    /// Output tokens/s of the whole group.
    pub tokens_per_s_total: f64,
    /// Per GPU.
    pub tokens_per_s_per_gpu: f64,
    /// Batch used.
    pub batch: u64,
    /// Per-user decode tokens/s.
    pub tokens_per_s_per_user: f64,
    /// Fraction of the step spent in all-reduce.
    pub comm_fraction: f64,
    /// Whether the model fits at this layout.
    pub fits: bool,
}

/// Throughput for each layout: at the scenario's concurrency, or at maximum load when
/// `lengths` is given.
#[must_use]
pub fn scaling_curve(
    s: &Scenario,
    perf: GpuPerf,
    gpu_total_bytes: u64,
    layouts: &[(u64, u64)],
    lengths: Option<(u64, u64)>,
) -> Vec<ScalePoint> {
    layouts
        .iter()
        .map(|&(tp, pp)| {
            let mut sc = s.clone();
            sc.tensor_parallel_size = tp;
            sc.pipeline_parallel_size = pp;
            let (total, batch) = match lengths {
                Some((i, o)) => max_load_throughput(&sc, perf, gpu_total_bytes, i, o),
                None => {
                    let e = estimate_bytes(&sc, gpu_total_bytes);
                    if e.kv_blocks == 0 {
                        (0.0, 0)
                    } else {
                        let b = sc.workload.users.max(1);
                        (speed(&sc, perf, b).decode_tokens_per_s_total, b)
                    }
                }
            };
            let e = estimate_bytes(&sc, gpu_total_bytes);
            let step = decode_step(
                &sc,
                perf,
                batch.max(1),
                sc.workload.prompt_tokens + sc.workload.output_tokens / 2,
            );
            let gpus = f(tp * pp);
            ScalePoint {
                tensor_parallel_size: tp,
                pipeline_parallel_size: pp,
                tokens_per_s_total: total,
                tokens_per_s_per_gpu: total / gpus,
                batch,
                tokens_per_s_per_user: if batch > 0 { total / f(batch) } else { 0.0 },
                comm_fraction: if step.total > 0.0 {
                    step.t_comm / step.total
                } else {
                    0.0
                },
                fits: e.kv_blocks > 0 && batch > 0,
            }
        })
        .collect()
}
