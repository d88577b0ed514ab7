//! The serving model's held-out validation (docs/ACCURACY.md): the constants the app's speed
//! bands come from, checked against the report by `vramfit accuracy --check`.

use serde::Serialize;

/// Held-out error of the serving model for one engine: leave-one-GPU-out predictions of
/// output tokens/s against the calibration set's measurements, pooled with the predictions
/// for GPUs outside it ([`UNSEEN_GPUS`]; docs/ACCURACY.md); for llama.cpp, one user's decode
/// against published `llama-bench` runs, never fitted (`accuracy::single_stream`). The app's
/// speed bands come from here; an engine without a row is "not validated", without a band.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Validation {
    /// Engine family (`trtllm`, `vllm`, `llama.cpp`: `Engine::family`).
    pub engine: &'static str,
    /// Measurements compared.
    pub rows: usize,
    /// GPUs they cover.
    pub gpus: usize,
    /// Median |error|.
    pub median_abs: f64,
    /// 10th percentile of the signed error `(predicted − measured) / measured`.
    pub p10: f64,
    /// 90th percentile of the signed error.
    pub p90: f64,
}

impl Validation {
    /// The range the measured value falls in for 80 % of held-out rows, given a prediction:
    /// `measured = predicted / (1 + error)`.
    #[must_use]
    pub fn band(&self, predicted: f64) -> (f64, f64) {
        let lo = predicted / (1.0 + self.p90).max(0.05);
        let hi = predicted / (1.0 + self.p10).max(0.05);
        (lo.min(hi), lo.max(hi))
    }
}

/// Held-out validation per engine, as `vramfit accuracy` computes it (checked by
/// `vramfit accuracy --check` in the test suite).
pub const VALIDATION: [Validation; 3] = [
    Validation {
        engine: "trtllm",
        rows: 2432,
        gpus: 11,
        median_abs: 0.09,
        p10: -0.172,
        p90: 0.203,
    },
    Validation {
        engine: "vllm",
        rows: 120,
        gpus: 2,
        median_abs: 0.09,
        p10: -0.147,
        p90: 0.241,
    },
    // One user decoding, published llama-bench runs, never fitted
    // (`accuracy::single_stream`).
    Validation {
        engine: "llama.cpp",
        rows: 63,
        gpus: 15,
        median_abs: 0.161,
        p10: -0.302,
        p90: 0.207,
    },
];

/// Held-out error of the whole calibration set (docs/ACCURACY.md's headline; checked by
/// `vramfit accuracy --check`): leave-one-GPU-out output tokens/s and speed-up ratios.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HeldOut {
    /// Rows.
    pub rows: usize,
    /// Median |error| of tokens/s.
    pub median: f64,
    /// 90th percentile |error| of tokens/s.
    pub p90: f64,
    /// Speed-up ratios compared.
    pub speedup_rows: usize,
    /// Median |error| of speed-up ratios.
    pub speedup_median: f64,
}

/// See [`HeldOut`].
pub const HELD_OUT: HeldOut = HeldOut {
    rows: 1760,
    median: 0.088,
    p90: 0.246,
    speedup_rows: 630,
    speedup_median: 0.07,
};

/// Output tokens/s on GPUs outside the calibration set, predicted with the shipped constants
/// and never fitted on (`accuracy::unseen`: TensorRT-LLM's own tables for H200, GH200, B300,
/// GB300, RTX PRO 6000 Server and A100 PCIe; checked by `vramfit accuracy --check`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Unseen {
    /// Rows.
    pub rows: usize,
    /// The GPUs, catalog ids.
    pub gpu_ids: &'static [&'static str],
    /// Median |error|.
    pub median: f64,
    /// 90th percentile |error|.
    pub p90: f64,
}

/// See [`Unseen`].
pub const UNSEEN_GPUS: Unseen = Unseen {
    rows: 792,
    gpu_ids: &[
        "a100-80gb-pcie",
        "b300",
        "gb300",
        "gh200-96gb",
        "h200-sxm",
        "rtx-pro-6000-blackwell-server",
    ],
    median: 0.095,
    p90: 0.288,
};

/// The validation that covers a scenario's speed on `gpu`: its engine's, unless a feature
/// without a speed measurement or a network between nodes is in play
/// ([`super::spans_nodes`]), or llama.cpp beyond the one user on one GPU its rows measured;
/// `None`: "not validated", no band.
#[must_use]
pub fn validation_of(
    sc: &crate::sizing::Scenario,
    gpu: &crate::catalog::Gpu,
) -> Option<&'static Validation> {
    // llama.cpp's rows are one user on one GPU: more users or GPUs are not validated.
    let measured_case = sc.flags.engine != crate::engine::Engine::LlamaCpp
        || (sc.workload.users <= 1 && sc.pipeline_parallel_size <= 1);
    validation(sc.flags.engine).filter(|_| {
        measured_case && !sc.flags.features.speed_unvalidated() && !super::spans_nodes(sc, gpu)
    })
}

/// The validation of an engine's speed, `None` when no measurement covers it.
#[must_use]
pub fn validation(engine: crate::engine::Engine) -> Option<&'static Validation> {
    VALIDATION
        .iter()
        .find(|v| v.engine == engine.family() && v.rows > 0)
}
