//! Speed of a scenario: the layout-level face of [`crate::serving`].
//!
//! [`speed`] answers "at this concurrency" and [`scaling_curve`] walks TP/PP layouts at a
//! [`Load`] (maximum load, a concurrency or a request rate), both through the serving model of
//! continuous batching in [`crate::serving`] (its module docs give the formulas and their
//! sources). [`GpuPerf`] holds the datasheet figures of a catalog GPU; links other than the
//! GPU's own (PCIe) come from [`GpuPerf::over_pcie`].

use crate::catalog::Gpu;
use crate::engine::Engine;
use crate::serving::{serve, Constants, Replica, Serving, Traffic, FITTED};
pub use crate::serving::{Limit, Load};
use crate::sizing::{estimate_bytes, Estimate, Scenario};
use crate::units::real as f;
use serde::Serialize;

pub use crate::serving::{ALPHA_FAST_LINK_S, ALPHA_PCIE_S};

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
}

/// The link a scaling curve runs over.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Link {
    /// The GPU's own interconnect (NVLink, Infinity Fabric, or PCIe for PCIe cards).
    Own,
    /// PCIe at this many GB/s per direction.
    Pcie(f64),
}

/// Decode and prefill speed of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Speed {
    /// Requests decoding together.
    pub batch: u64,
    /// Tokens/s one user sees while decoding (1 / inter-token latency).
    pub decode_tokens_per_s_per_user: f64,
    /// Output tokens/s of the whole replica.
    pub decode_tokens_per_s_total: f64,
    /// Time to first token, seconds (0 when the queue grows without bound: see `serving`).
    pub ttft_s: f64,
    /// The serving model's operating point.
    pub serving: Serving,
}

/// The traffic of a scenario's workload at a load: its lengths and its prefix-cache hit rate.
/// `e` is the scenario's estimate: its `request_len` is the length requests are cut to
/// (vLLM's `--max-model-len -1` picks one shorter than the model's; llama.cpp's slot).
#[must_use]
pub fn traffic(s: &Scenario, e: &Estimate, load: Load) -> Traffic {
    // With explicit multimodal limits each request carries their items' tokens too.
    let input = s
        .workload
        .prompt_tokens
        .saturating_add(crate::sizing::mm::per_request(s).0);
    let output = s.workload.output_tokens.max(1);
    // A request longer than the context length is refused by the engines that serve, or
    // stopped at it by llama.cpp (`Estimate::request_len`, `u64::MAX` for transformers;
    // the plan warns):
    // the speed counts it cut to the length, as the KV cache's figures do
    // (`sizing/estimate.rs`): the prompt cut, where the engine refuses it, or the output,
    // where llama.cpp stops it with the slot full (`plan/features.rs` `too_long`).
    let len = e.request_len.max(1);
    let (input, output) = match s.flags.engine {
        _ if input.saturating_add(output) <= len => (input, output),
        Engine::LlamaCpp if input < len => (input, len - input),
        _ => {
            let output = output.min(len);
            (input.min(len - output).max(1), output)
        }
    };
    Traffic {
        input,
        output,
        load,
        // `--no-enable-prefix-caching` (SGLang `--disable-radix-cache`): nothing is reused.
        prefix_hit: if s.flags.features.no_prefix_caching {
            0.0
        } else {
            s.workload
                .prefix_cache_hit_rate
                .unwrap_or(0.0)
                .clamp(0.0, 1.0)
        },
    }
}

/// The replica of a scenario on a GPU (memory estimate included).
#[must_use]
pub fn replica(s: &Scenario, gpu: &Gpu, link: Link) -> (Estimate, Replica) {
    let e = estimate_bytes(s, gpu.usable_bytes());
    let r = Replica::of(s, gpu, &e);
    let r = match link {
        Link::Own => r,
        Link::Pcie(gb) => r.over_link(gb * 1e9, ALPHA_PCIE_S),
    };
    (e, r)
}

/// The operating point of a scenario's replica at a load, with the shipped constants.
#[must_use]
pub fn serve_scenario(s: &Scenario, gpu: &Gpu, load: Load, link: Link) -> Serving {
    let (e, r) = replica(s, gpu, link);
    serve(&r, &FITTED, &traffic(s, &e, load))
}

/// Where speculative decoding stops paying off: the fewest requests in flight at which the
/// replica's output tokens/s with the draft are no more than without it (verifying `k + 1`
/// tokens per request makes the step compute-bound sooner). `None` without speculative
/// decoding, or when it still pays at the replica's capacity (up to 4096 requests).
#[must_use]
pub fn spec_break_even(s: &Scenario, gpu: &Gpu) -> Option<u64> {
    s.flags.features.spec.method?;
    // No draft on this engine (or a draft model the catalog lacks): nothing to compare.
    if !matches!(s.flags.engine, crate::engine::Engine::Vllm { .. })
        || crate::sizing::spec::draft(s).is_none()
    {
        return None;
    }
    let mut base = s.clone();
    base.flags.features.spec = crate::inputs::Speculative::default();
    let pays = |n: u64| {
        let a = serve_scenario(s, gpu, Load::Concurrency(n), Link::Own).tokens_per_s_total;
        let b = serve_scenario(&base, gpu, Load::Concurrency(n), Link::Own).tokens_per_s_total;
        a > b
    };
    let mut hi = 1;
    while pays(hi) {
        if hi >= 4096 {
            return None;
        }
        hi *= 2;
    }
    let mut lo = hi / 2;
    if lo == 0 {
        return Some(1);
    }
    // pays(lo), !pays(hi): the first n that does not pay.
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if pays(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(hi)
}

/// Speed with `batch` requests in flight, at the workload's lengths.
#[must_use]
pub fn speed(s: &Scenario, gpu: &Gpu, batch: u64) -> Speed {
    speed_with(s, gpu, batch, &FITTED)
}

/// [`speed`] with other constants.
#[must_use]
pub fn speed_with(s: &Scenario, gpu: &Gpu, batch: u64, k: &Constants) -> Speed {
    let (e, r) = replica(s, gpu, Link::Own);
    let sv = serve(&r, k, &traffic(s, &e, Load::Concurrency(batch.max(1))));
    Speed {
        batch: batch.max(1),
        decode_tokens_per_s_per_user: sv.tokens_per_s_per_user,
        decode_tokens_per_s_total: sv.tokens_per_s_total,
        ttft_s: sv.ttft_ms.unwrap_or(0.0) / 1e3,
        serving: sv,
    }
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
    /// Requests in flight.
    pub batch: u64,
    /// Per-user decode tokens/s.
    pub tokens_per_s_per_user: f64,
    /// Fraction of the step spent in all-reduce.
    pub comm_fraction: f64,
    /// Whether the model fits at this layout.
    pub fits: bool,
    /// Time to first token, ms (`None`: the queue grows, or it does not fit).
    pub ttft_ms: Option<f64>,
    /// Inter-token latency, ms.
    pub itl_ms: f64,
    /// What bounds this point.
    pub limited_by: Limit,
    /// Held-out band of `tokens_per_s_total` for the layout ([`crate::serving::validation_of`]);
    /// `None`: not validated (an engine or a feature without measurements, or a layout across
    /// nodes).
    pub tokens_per_s_band: Option<(f64, f64)>,
}

/// Throughput for each layout at a load.
#[must_use]
pub fn scaling_curve(
    s: &Scenario,
    gpu: &Gpu,
    layouts: &[(u64, u64)],
    load: Load,
    link: Link,
) -> Vec<ScalePoint> {
    layouts
        .iter()
        .map(|&(tp, pp)| {
            let mut sc = s.clone();
            sc.tensor_parallel_size = tp;
            sc.pipeline_parallel_size = pp;
            if let Load::MaxLoad = load {
                // The length the requests need, up to the model's own (past it the engine
                // refuses the length, and the requests are cut to it, as in the plan).
                let most = if sc.flags.allow_long_max_model_len {
                    u64::MAX
                } else {
                    sc.model.max_position_embeddings.max(1)
                };
                let need = sc.request_tokens().min(most);
                sc.flags.max_model_len = Some(sc.flags.max_model_len.unwrap_or(need).max(need));
            }
            let (e, r) = replica(&sc, gpu, link);
            let fits = e.fit.starts() && e.kv_blocks > 0;
            let sv = serve(&r, &FITTED, &traffic(&sc, &e, load));
            let fits = fits && sv.concurrency > 0.0;
            let total = if fits { sv.tokens_per_s_total } else { 0.0 };
            // The band's scenario carries the curve's load as its users (llama.cpp's band
            // covers one: `serving::validation_of`).
            sc.workload.users = match load {
                Load::Concurrency(n) => n,
                _ => u64::MAX,
            };

            let itl = sv.step.itl;
            // OK because: concurrency is finite, non-negative and at most max_num_seqs.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let batch = sv.concurrency.round() as u64;
            ScalePoint {
                tensor_parallel_size: tp,
                pipeline_parallel_size: pp,
                tokens_per_s_total: total,
                tokens_per_s_per_gpu: total / f(tp * pp),
                batch: if fits { batch } else { 0 },
                tokens_per_s_per_user: if fits { sv.tokens_per_s_per_user } else { 0.0 },
                comm_fraction: if itl > 0.0 {
                    (sv.step.comm * r.pp / itl).clamp(0.0, 1.0)
                } else {
                    0.0
                },
                fits,
                ttft_ms: if fits { sv.ttft_ms } else { None },
                itl_ms: if fits { sv.itl_ms } else { 0.0 },
                limited_by: if fits { sv.limited_by } else { Limit::Memory },
                tokens_per_s_band: crate::serving::validation_of(&sc, gpu).map(|v| v.band(total)),
            }
        })
        .collect()
}
