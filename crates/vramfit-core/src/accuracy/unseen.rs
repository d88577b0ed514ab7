//! GPUs the constants never saw: the throughput tables of TensorRT-LLM's own performance
//! documents for the GPUs that `measurements.csv` has no throughput row of (H200, GH200,
//! B300, GB300, the RTX PRO 6000 Blackwell Server Edition and A100 PCIe), most from the same
//! revisions whose other columns the calibration set holds, the rest from other revisions of
//! the same documents (`tests/data/unseen_gpus.csv`; where each table came from, its units
//! and what is ambiguous: `tests/data/unseen_gpus.md`).
//!
//! These rows are predicted with the shipped constants and never fitted on: no refit, no
//! choice of constant or rule looks at them. They are the check nearest to what the project
//! is judged on, a GPU the calibration set does not hold, measured by the same engine's
//! tools. `vramfit accuracy --check` fails when a GPU of this file turns up among the
//! calibration set's fitted GPUs (it would no longer be unseen) or when their median error
//! leaves the leave-one-GPU-out target, 15 %.

use super::speed::{cases, fitted_gpus, predict, signed_errors, skip_reasons, Case};
use super::speed_report::round3;
use super::{quantile, rel, Summary};
use crate::serving::Constants;

/// The rows (same columns as the calibration set).
pub const UNSEEN_GPUS_CSV: &str = include_str!("../../tests/data/unseen_gpus.csv");

/// vLLM and SGLang runs from sources the calibration set does not hold, at fixed lengths
/// (`tests/data/unseen_engines.csv`; where each came from, what was left out and why:
/// `unseen_engines.md` beside it). SGLang has no throughput row in the calibration set, and
/// vLLM's there are AMD's MI300X tables and one A100 sweep; these are other GPUs (H100, H200,
/// B200), other sources on the same GPUs, and other models. Never fitted on.
pub const UNSEEN_ENGINES_CSV: &str = include_str!("../../tests/data/unseen_engines.csv");

/// The median-error bound on these rows: issue 14's leave-one-GPU-out target.
const TARGET_MEDIAN: f64 = 0.15;

/// The unseen GPUs' rows and their predictions with the shipped constants.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Unseen {
    /// The cases.
    pub cases: Vec<Case>,
    /// Predictions with the shipped constants.
    pub pred: Vec<f64>,
    /// Rows not compared, and why.
    pub skipped: Vec<String>,
}

impl Unseen {
    /// Reads the rows and predicts each with `k`.
    #[must_use]
    pub fn of(csv: &str, k: &Constants) -> Self {
        let (cases, skipped) = cases(csv);
        let pred = cases.iter().map(|c| predict(c, k)).collect();
        Self {
            cases,
            pred,
            skipped,
        }
    }

    /// Signed errors of the compared rows (`Case::fitted`: the same rows the calibration set
    /// would fit on) that `keep` selects.
    fn errors(&self, keep: impl Fn(&Case) -> bool) -> Vec<f64> {
        signed_errors(&self.cases, &self.pred, keep)
    }

    /// Errors over every compared row, or one GPU's.
    #[must_use]
    pub fn summary(&self, gpu: Option<&str>) -> Summary {
        Summary::of(&self.errors(|c| gpu.is_none_or(|g| c.gpu == g)))
    }

    /// Signed errors of the compared rows that `keep` selects and the memory model lets
    /// start (a prediction of 0 is a memory miss, not a speed error: [`engines_markdown`]
    /// lists those apart).
    fn started_errors(&self, keep: impl Fn(&Case) -> bool) -> Vec<f64> {
        self.cases
            .iter()
            .zip(&self.pred)
            .filter(|(c, p)| c.fitted() && **p > 0.0 && keep(c))
            .map(|(c, p)| rel(c.measured, *p))
            .collect()
    }

    /// Errors over the compared rows that the memory model lets start.
    #[must_use]
    pub fn summary_started(&self) -> Summary {
        Summary::of(&self.started_errors(|_| true))
    }

    /// Signed errors of the compared rows: (engine family, GPU, error), as the app's bands
    /// pool them ([`super::speed_report::validation`]).
    #[must_use]
    pub fn held_out_errors(&self) -> Vec<(&'static str, String, f64)> {
        self.cases
            .iter()
            .zip(&self.pred)
            .filter(|(c, _)| c.fitted())
            .map(|(c, p)| (c.engine.family(), c.gpu.clone(), rel(c.measured, *p)))
            .collect()
    }

    /// GPUs with compared rows, in catalog-id order.
    #[must_use]
    pub fn gpus(&self) -> Vec<String> {
        fitted_gpus(&self.cases)
    }
}

/// The docs/ACCURACY.md section.
#[must_use]
pub fn markdown(u: &Unseen) -> String {
    use std::fmt::Write as _;
    let mut s = String::from(
        "\n### GPUs outside the calibration set (never fitted)\n\n\
TensorRT-LLM's own performance documents, whose H100, A100, L40S, B200 and GB200 columns the calibration set holds, \
also give H200, GH200, B300, GB300, RTX PRO 6000 Blackwell Server Edition and A100 PCIe columns, in those revisions and in others. Those rows \
(`crates/vramfit-core/tests/data/unseen_gpus.csv`; sources, units and what is ambiguous in `unseen_gpus.md` beside it) are predicted with the shipped constants and never fitted on. \
`vramfit accuracy --check` fails when their median error passes 15 % or when one of these GPUs enters the calibration set. \
TensorRT-LLM's band in the app pools these errors with the leave-one-GPU-out ones (Engines, above).\n\n",
    );
    s.push_str(ERROR_TABLE_HEAD);
    for g in u.gpus() {
        s.push_str(&error_row(&g, &u.errors(|c| c.gpu == g)));
    }
    s.push_str(&error_row("all", &u.errors(|_| true)));
    if !u.skipped.is_empty() {
        let _ = writeln!(s, "\nRows not compared: {}.", skip_reasons(&u.skipped));
    }
    s
}

/// The report's section on [`UNSEEN_ENGINES_CSV`]: errors by engine and GPU, and by how the
/// run loaded the server.
#[must_use]
pub fn engines_markdown(u: &Unseen) -> String {
    use crate::serving::Load;
    use std::fmt::Write as _;
    let mut s = String::from(
        "\n### vLLM and SGLang runs from other sources (never fitted, not in the bands)\n\n\
Published `vllm bench serve`, `sglang.bench_serving` and vLLM `benchmark_latency`/`benchmark_throughput` runs at fixed prompt lengths, \
from sources the calibration set does not hold (`crates/vramfit-core/tests/data/unseen_engines.csv`; sources, what was left out and why in `unseen_engines.md` beside it), \
planned with the shipped constants and never fitted on. Where a run did not force its output length, the length is the mean the run generated. \
They are reported, not pooled into the app's bands. Most are short runs that the serving model, a steady state, does not describe \
(a few hundred prompts sent at once with outputs of 4 to 200 tokens, whose throughput is one burst's prefill plus the client's and API server's time; \
a few hundred prompts at 1 to 8 per second, whose duration is mostly the ramp and the drain). The steadiest of them say more: \
SGLang 0.4.x serving DeepSeek-R1 at a fixed concurrency (dstack, early 2025) ran 2 to 3 times slower than the model (at concurrency 128 on H200 its mean ITL was 111 ms; the model's step is 47 ms), \
while the recent vLLM runs at a fixed concurrency are within 30 % (gpt-oss-120b on 8 H200 \u{2212}3.6 %, Qwen3-235B on 4 B200 +28.5 %). \
SGLang stays \"not validated\" in the app. Rows the memory model says do not start are counted apart, below the tables, not as \u{2212}100 % errors.\n\n",
    );
    // Speed errors of the rows the memory model lets start; the others are counted apart.
    let errors = |keep: &dyn Fn(&Case) -> bool| u.started_errors(keep);
    let table = |s: &mut String,
                 head: &str,
                 keys: &[(String, String)],
                 key: &dyn Fn(&Case) -> (String, String)| {
        let _ = write!(s, "| engine | {head} | rows | median | p90 | signed p10 | signed median | signed p90 |\n|---|---|---|---|---|---|---|---|\n");
        for (e, g) in keys {
            let row = error_row(g, &errors(&|c| key(c) == (e.clone(), g.clone())));
            let _ = write!(s, "| {e} {row}");
        }
        s.push('\n');
    };
    let by_gpu = |c: &Case| (c.engine.family().to_string(), c.gpu.clone());
    let by_load = |c: &Case| {
        let how = match c.load {
            Load::MaxLoad => "all prompts at once",
            Load::Concurrency(_) => "fixed concurrency",
            Load::Rate(_) => "request rate",
        };
        (c.engine.family().to_string(), how.to_string())
    };
    for (head, key) in [
        ("GPU", &by_gpu as &dyn Fn(&Case) -> (String, String)),
        ("load", &by_load),
    ] {
        let mut keys: Vec<(String, String)> =
            u.cases.iter().filter(|c| c.fitted()).map(key).collect();
        keys.sort();
        keys.dedup();
        table(&mut s, head, &keys, key);
    }
    for e in ["sglang", "vllm"] {
        let x = Summary::of(&errors(&|c| c.engine.family() == e));
        let _ = writeln!(
            s,
            "All {e} rows that start: {}, median {:.1} %, p90 {:.1} %.",
            x.n,
            x.median * 100.0,
            x.p90 * 100.0
        );
    }
    let mut stopped: Vec<String> = u
        .cases
        .iter()
        .zip(&u.pred)
        .filter(|(c, p)| c.fitted() && **p <= 0.0)
        .map(|(c, _)| {
            format!(
                "{} on {} at TP {}, {}/{}",
                c.model, c.gpu, c.tp, c.input, c.output
            )
        })
        .collect();
    if !stopped.is_empty() {
        let n = stopped.len();
        stopped.dedup();
        let _ = writeln!(
            s,
            "\nRuns the memory model says do not start ({n}; their sources ran them): {}.",
            stopped.join("; ")
        );
    }
    if !u.skipped.is_empty() {
        let _ = writeln!(s, "\nRows not compared: {}.", skip_reasons(&u.skipped));
    }
    s
}

/// The columns of [`error_row`], a Markdown table's head.
pub(super) const ERROR_TABLE_HEAD: &str =
    "| GPU | rows | median | p90 | signed p10 | signed median | signed p90 |\n|---|---|---|---|---|---|---|\n";

/// One row of a never-fitted set's per-GPU table: |error| median and p90, signed p10,
/// median and p90 of signed errors `errs`.
pub(super) fn error_row(name: &str, errs: &[f64]) -> String {
    let x = Summary::of(errs);
    let q = |p| quantile(&mut errs.to_vec(), p) * 100.0;
    format!(
        "| {name} | {} | {:.1}% | {:.1}% | {:+.1}% | {:+.1}% | {:+.1}% |\n",
        x.n,
        x.median * 100.0,
        x.p90 * 100.0,
        q(0.1),
        q(0.5),
        q(0.9)
    )
}

/// What `vramfit accuracy --check` finds wrong with these rows: a GPU that the calibration
/// set fits on (`calibrated`), or a median error past the target.
#[must_use]
pub fn check(u: &Unseen, calibrated: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for g in u.gpus() {
        if calibrated.contains(&g) {
            out.push(format!(
                "{g} has rows in the calibration set: its rows in unseen_gpus.csv are no longer unseen"
            ));
        }
    }
    let all = u.summary(None);
    let shipped = crate::serving::UNSEEN_GPUS;
    let (median, p90) = (round3(all.median), round3(all.p90));
    if (shipped.rows, shipped.median, shipped.p90) != (all.n, median, p90)
        || shipped
            .gpu_ids
            .iter()
            .map(|g| (*g).to_string())
            .collect::<Vec<_>>()
            != u.gpus()
    {
        out.push(format!(
            "serving::UNSEEN_GPUS is stale; it should read rows: {}, gpu_ids: {:?}, median: {median}, p90: {p90}",
            all.n,
            u.gpus()
        ));
    }
    if all.n == 0 {
        out.push("unseen_gpus.csv: no row compared".into());
    } else if all.median > TARGET_MEDIAN {
        out.push(format!(
            "GPUs outside the calibration set: median error {:.1}% exceeds {:.0}%",
            all.median * 100.0,
            TARGET_MEDIAN * 100.0
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serving::FITTED;

    #[test]
    fn every_vllm_and_sglang_run_of_other_sources_is_planned() {
        let u = Unseen::of(UNSEEN_ENGINES_CSV, &FITTED);
        // Every row is read (none skipped), as the engine its notes name, on the GPU printed.
        assert!(u.skipped.is_empty(), "{:?}", u.skipped);
        let count = |e: &str| u.cases.iter().filter(|c| c.engine.family() == e).count();
        assert_eq!(
            (u.cases.len(), count("sglang"), count("vllm")),
            (117, 36, 81)
        );
        assert_eq!(
            u.gpus(),
            ["a100-80gb-sxm", "b200", "h100-sxm", "h200-sxm", "mi300x"]
        );
        // `--enable-dp-attention` is a DEP layout; `--disable-cuda-graph` runs eagerly.
        assert_eq!(u.cases.iter().filter(|c| c.dep).count(), 21);
        assert_eq!(u.cases.iter().filter(|c| c.eager).count(), 4);
        // A run that stopped early is planned at the length it generated: gpt-oss-120b on one
        // H100, 4000/200 nominal, "Total generated tokens 67205" of 500 requests = 134.
        assert!(u.cases.iter().any(|c| c.model == "gpt-oss-120b"
            && c.gpu == "h100-sxm"
            && c.tp == 1
            && c.output == 134));
        // Not pooled into the bands: SGLang stays without one.
        assert!(crate::serving::validation(crate::engine::Engine::Sglang).is_none());
    }

    #[test]
    fn the_unseen_gpus_are_not_in_the_calibration_set() {
        let u = Unseen::of(UNSEEN_GPUS_CSV, &FITTED);
        let (cal, _) = cases(super::super::CALIBRATION_CSV);
        let fitted = fitted_gpus(&cal);
        assert_eq!(
            u.gpus(),
            [
                "a100-80gb-pcie",
                "b300",
                "gb300",
                "gh200-96gb",
                "h200-sxm",
                "rtx-pro-6000-blackwell-server"
            ]
        );
        assert!(check(&u, &fitted).is_empty(), "{:?}", check(&u, &fitted));
        // "DEP2,PP2 (4 GPUs)", and the 1.0-era MoE "TP2,PP2" columns run with attention DP
        // (`speed::dep_by_command`): attention-DP ranks in each pipeline stage, compared
        // (7 + 29 rows; they were skipped before such a replica was built).
        let dep_stages = u.cases.iter().filter(|c| c.dep && c.pp > 1).count();
        assert_eq!(dep_stages, 36);
        // A GPU of the file among the fitted ones is caught.
        assert_eq!(check(&u, &["h200-sxm".to_string()]).len(), 1);
    }
}
