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
