//! The step-time model's fitted constants: efficiency factors and overheads ([`Constants`]),
//! the shipped fit ([`FITTED`]) and the GEMM occupancy ramp ([`Constants::occupancy`]).
//! What each means and where its formula comes from: the module docs of [`super`].

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
    /// Extra launch time per layer per step without CUDA graphs, seconds.
    pub eager_layer_s: f64,
    /// Gaps between a layer's kernels per step with CUDA graphs (kernel tails, norms,
    /// activation and rotary kernels the GEMM roofline leaves out), seconds.
    pub layer_s: f64,
    /// Scheduler, sampler and detokenizer CPU time per running request per step, seconds.
    pub per_seq_s: f64,
    /// Expert-parallel load imbalance: the busiest rank's expert work over its
    /// uniform-routing share (routing is not uniform, and every rank waits for the busiest
    /// at each MoE layer; DeepSeek-V3 report §3.2 on redundant experts, EPLB). Applies to
    /// DEP layouts only, to the expert GEMMs (not to the all-gather and reduce-scatter,
    /// which move every rank's tokens, padded alike).
    pub ep_imbalance: f64,
    /// The tile-occupancy constant `n½` ([`Constants::occupancy`]): a GEMM of `n` tokens
    /// runs at `η × (n + 16) / (n + 16 + n½)`, half its peak at `n½ − 16` tokens; for MoE `n`
    /// is the tokens per expert.
    pub gemm_half_tokens: f64,
}

/// Rows of the smallest tensor-core tile (PTX ISA `mma.m16n8k16`): where the occupancy ramp
/// starts (module docs, "GEMM efficiency").
const GEMM_MIN_TILE: f64 = 16.0;

/// The shipped constants: the fit on every usable throughput row of the calibration set
/// (1,760 rows: TensorRT-LLM max-load and request-rate tables on H100, B200, GB200, A100 and
/// L40S, TP, PP and DEP layouts, each run at the scheduler limits trtllm-bench gave it
/// ([`crate::accuracy::trtllm_bench`]); vLLM on MI300X and A100), rounded to two figures.
/// `vramfit accuracy --check` refits them and fails when a refit would lower the loss by
/// more than 0.002 (see [`crate::accuracy::speed`]).
///
/// Read as physics: weights stream at 73 % of datasheet HBM bandwidth and paged KV at 79 %;
/// 16-bit and 8-bit GEMMs reach 70 % of dense tensor peak, FP4 42 %, half of that at 144
/// tokens per GEMM (`n½` = 160, [`Constants::occupancy`]); an all-reduce reaches 44 % of the
/// per-direction link bandwidth; each layer costs 81 µs per step outside the GEMMs with CUDA
/// graphs (7.7 µs more without); each running request 8.1 µs of CPU per step. In DEP layouts
/// the busiest rank's expert work takes 3.0× its uniform-routing share (at most `dp`×), the
/// bound of the fit: more than routing imbalance alone (1.2–1.5× in DeepSeek's EPLB
/// notes), so the factor also carries what the model does not separate in those layouts (the
/// attention ranks wait for each other at every MoE layer, and a rank's prompt chunk holds up
/// the others' decodes; costing that as "some rank's chunk in this step" brought the factor
/// to 1.2 but the never-fitted GPUs' p90 from 30 % to 35 %, so it is not built). 116 DEP
/// rows (B200, GB200, H100), 46 of them the 1.0-era "TPn" MoE columns
/// ([`crate::accuracy::speed`], `dep_by_command`).
pub const FITTED: Constants = Constants {
    eta_bw: 0.73,
    eta_kv: 0.79,
    eta_gemm16: 0.70,
    eta_gemm8: 0.70,
    eta_gemm4: 0.42,
    eta_link: 0.44,
    eager_layer_s: 7.7e-6,
    per_seq_s: 8.1e-6,
    gemm_half_tokens: 160.0,
    layer_s: 81e-6,
    ep_imbalance: 3.0,
};

impl Constants {
    /// Number of fitted parameters.
    pub const LEN: usize = 11;
    /// Names, in the order of [`Constants::to_array`].
    pub const NAMES: [&'static str; Self::LEN] = [
        "eta_bw",
        "eta_kv",
        "eta_gemm16",
        "eta_gemm8",
        "eta_gemm4",
        "eta_link",
        "eager_layer_s",
        "per_seq_s",
        "gemm_half_tokens",
        "layer_s",
        "ep_imbalance",
    ];
    /// Bounds each constant is fitted within (physical ranges).
    pub const BOUNDS: [(f64, f64); Self::LEN] = [
        (0.3, 0.95),
        (0.05, 0.95),
        (0.1, 0.95),
        (0.1, 0.95),
        (0.05, 0.95),
        (0.2, 0.95),
        (1e-6, 2e-4),
        (0.0, 2e-5),
        (1.0, 512.0),
        (1e-7, 2e-4),
        (1.0, 3.0),
    ];

    /// The fraction of the format's fitted GEMM efficiency that a GEMM of `n` tokens reaches:
    /// `(n + 16) / (n + 16 + n½)` (module docs, "GEMM efficiency").
    #[must_use]
    pub fn occupancy(&self, n: f64) -> f64 {
        let n = n.max(0.0) + GEMM_MIN_TILE;
        n / (n + self.gemm_half_tokens)
    }

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
            self.eager_layer_s,
            self.per_seq_s,
            self.gemm_half_tokens,
            self.layer_s,
            self.ep_imbalance,
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
            eager_layer_s: a[6],
            per_seq_s: a[7],
            gemm_half_tokens: a[8],
            layer_s: a[9],
            ep_imbalance: a[10],
        }
    }
}
