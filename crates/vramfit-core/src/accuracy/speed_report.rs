//! The throughput report: in-sample, leave-one-GPU-out and leave-one-model-out errors of
//! the serving model over the [`super::speed`] cases, the sections of docs/ACCURACY.md they
//! fill, and the gate `vramfit accuracy --check` runs ([`check`]).

use super::speed::{
    cases, fit, fitted_gpus, held_out, loss, predict, signed_errors, skip_reasons, speedups, Case,
};
use super::{quantile, rel};
use crate::serving::{serve, Constants, Load, Traffic};

/// Throughput errors: in-sample (the shipped constants), leave-one-GPU-out and
/// leave-one-model-out, for tokens/s and for speed-up ratios.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SpeedReport {
    /// The cases.
    pub cases: Vec<Case>,
    /// Skipped rows and why.
    pub skipped: Vec<String>,
    /// Predictions with the shipped constants.
    pub in_sample: Vec<f64>,
    /// Predictions with constants fitted without the case's GPU.
    pub logo: Vec<f64>,
    /// Predictions with constants fitted without the case's model.
    pub lomo: Vec<f64>,
    /// The constants a fit on every case gives.
    pub refit: Option<Constants>,
    /// Signed errors on GPUs outside the calibration set, never fitted on
    /// ([`super::unseen`]): (engine family, GPU, error). Pooled with the leave-one-GPU-out
    /// errors into the app's bands ([`validation`]).
    pub unseen: Vec<(&'static str, String, f64)>,
}

impl SpeedReport {
    /// Builds the report (one fit per GPU and per model: seconds in release builds).
    #[must_use]
    pub fn of(csv: &str, k: &Constants) -> Self {
        let (cases, skipped) = cases(csv);
        let in_sample = cases.iter().map(|c| predict(c, k)).collect();
        let logo = held_out(&cases, *k, |c| c.gpu.as_str());
        let lomo = held_out(&cases, *k, |c| c.model.as_str());
        let all: Vec<&Case> = cases.iter().collect();
        let refit = Some(fit(&all, *k));
        Self {
            cases,
            skipped,
            in_sample,
            logo,
            lomo,
            refit,
            unseen: Vec::new(),
        }
    }

    /// Errors of a prediction set over the fitted-on cases (`Case::fitted`), optionally one GPU.
    #[must_use]
    pub fn summary(&self, pred: &[f64], gpu: Option<&str>) -> super::Summary {
        super::Summary::of(&self.errors(pred, |c| gpu.is_none_or(|g| c.gpu == g)))
    }

    /// Signed errors of a prediction set over the fitted-on cases that `keep` selects.
    #[must_use]
    pub fn errors(&self, pred: &[f64], keep: impl Fn(&Case) -> bool) -> Vec<f64> {
        signed_errors(&self.cases, pred, keep)
    }

    /// Signed median error of a prediction set for one GPU.
    #[must_use]
    pub fn signed_median(&self, pred: &[f64], gpu: &str) -> f64 {
        quantile(&mut self.errors(pred, |c| c.gpu == gpu), 0.5)
    }

    /// Speed-up ratio errors of a prediction set.
    #[must_use]
    pub fn speedup_summary(&self, pred: &[f64]) -> super::Summary {
        let errs: Vec<f64> = speedups(&self.cases, pred)
            .into_iter()
            .filter(|(j, i, _, _)| self.cases[*i].fitted() && self.cases[*j].fitted())
            .map(|(_, _, m, p)| rel(m, p))
            .collect();
        super::Summary::of(&errs)
    }

    /// GPUs with fitted cases, in catalog-id order.
    #[must_use]
    pub fn gpus(&self) -> Vec<String> {
        fitted_gpus(&self.cases)
    }
}

/// Headline lines of docs/ACCURACY.md for throughput.
#[must_use]
pub fn headline_lines(
    r: &SpeedReport,
    line: &dyn Fn(&str, super::Summary, &str) -> String,
) -> String {
    let mut s = String::new();
    s.push_str(&line(
        "output tokens/s, in-sample (shipped constants)",
        r.summary(&r.in_sample, None),
        "–",
    ));
    s.push_str(&line(
        "output tokens/s, leave-one-GPU-out",
        r.summary(&r.logo, None),
        "target median ≤ 15%, p90 ≤ 30%",
    ));
    s.push_str(&line(
        "output tokens/s, leave-one-model-out",
        r.summary(&r.lomo, None),
        "–",
    ));
    s.push_str(&line(
        "speed-up ratios, in-sample",
        r.speedup_summary(&r.in_sample),
        "–",
    ));
    s.push_str(&line(
        "speed-up ratios, leave-one-GPU-out",
        r.speedup_summary(&r.logo),
        "median ≤ 10% (target)",
    ));
    s.push_str(&line(
        "speed-up ratios, leave-one-model-out",
        r.speedup_summary(&r.lomo),
        "–",
    ));
    s
}

/// Held-out validation per engine class (what [`crate::serving::VALIDATION`] ships): the
/// leave-one-GPU-out errors pooled with the never-fitted rows' ([`SpeedReport::unseen`]:
/// the unseen GPUs' TensorRT-LLM tables, llama.cpp's single-stream runs):
/// (engine, rows, GPUs, median |error|, signed p10, signed p90).
#[must_use]
pub fn validation(r: &SpeedReport) -> Vec<(&'static str, usize, usize, f64, f64, f64)> {
    let mut out = Vec::new();
    for engine in ["trtllm", "vllm", "llama.cpp"] {
        let mut errs = Vec::new();
        let mut gpus: Vec<&str> = Vec::new();
        for (c, p) in r.cases.iter().zip(&r.logo) {
            if !c.fitted() || c.engine.family() != engine {
                continue;
            }
            errs.push(rel(c.measured, *p));
            gpus.push(&c.gpu);
        }
        for (e, g, err) in &r.unseen {
            if *e == engine {
                errs.push(*err);
                gpus.push(g);
            }
        }
        gpus.sort_unstable();
        gpus.dedup();
        let med = super::Summary::of(&errs).median;
        let p10 = quantile(&mut errs.clone(), 0.1);
        let p90 = quantile(&mut errs.clone(), 0.9);
        out.push((engine, errs.len(), gpus.len(), med, p10, p90));
    }
    out
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

fn signed(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// Latency errors (TTFT or ITL) of the cases that report them: (n, median |error|, p90).
#[must_use]
pub fn latency_summary(r: &SpeedReport, k: &Constants, ttft: bool, rate: bool) -> super::Summary {
    let errs: Vec<f64> = r
        .cases
        .iter()
        .filter(|c| matches!(c.load, Load::Rate(_)) == rate)
        .filter_map(|c| {
            let measured = if ttft { c.ttft_ms } else { c.itl_ms }?;
            let t = Traffic {
                input: c.input,
                output: c.output,
                load: c.load,
                prefix_hit: 0.0,
            };
            let s = serve(&c.replica, k, &t);
            let p = if ttft { s.ttft_ms? } else { s.itl_ms };
            Some(rel(measured, p))
        })
        .collect();
    super::Summary::of(&errs)
}

/// The throughput sections of docs/ACCURACY.md.
#[must_use]
#[allow(clippy::too_many_lines)] // one report, section by section
pub fn markdown(r: &SpeedReport, k: &Constants) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    s.push_str("\n## Throughput: the serving model against published measurements\n\n");
    let fitted = r.cases.iter().filter(|c| c.fitted()).count();
    let _ = writeln!(
        s,
        "{} measurements compared ({} fitted on; {} whose source leaves open the column's definition or the network between nodes are shown, not fitted); {} rows skipped (reasons below). \
Predictions are output tokens/s of the whole layout; a trtllm-bench run that names no scheduler limits runs at those the tool derives from the model, GPU and lengths (`accuracy/trtllm_bench.rs`). *In-sample* uses the shipped constants (`serving::FITTED`, fitted on every row); \
*leave-one-GPU-out* refits the constants without any row of that GPU and predicts its rows; *leave-one-model-out* does the same per model. \
The app's speed bands are the 10th–90th percentiles per engine of the leave-one-GPU-out errors pooled with those on the GPUs outside the calibration set (below).\n",
        r.cases.len(),
        fitted,
        r.cases.len() - fitted,
        r.skipped.len()
    );
    let held = r.summary(&r.logo, None);
    let ratios = r.speedup_summary(&r.logo);
    let _ = write!(
        s,
        "Against issue 14's targets (leave-one-GPU-out median ≤ 15 % and p90 ≤ 30 %, speed-up ratios median ≤ 10 %): {}. `vramfit accuracy --check` fails outside them.\n\n",
        match (
            held.median <= TARGET_MEDIAN && held.p90 <= TARGET_P90,
            ratios.median <= TARGET_RATIOS,
        ) {
            (true, true) => "all inside them",
            (false, true) => "the speed-up ratios are inside them, the tokens/s figures outside",
            (true, false) => "the tokens/s figures are inside them, the speed-up ratios outside",
            (false, false) => "all outside them",
        }
    );
    s.push_str(
        "### Constants\n\n| constant | shipped | refit on all rows | bounds |\n|---|---|---|---|\n",
    );
    let shipped = k.to_array();
    let refit = r.refit.map(Constants::to_array);
    for i in 0..Constants::LEN {
        let (lo, hi) = Constants::BOUNDS[i];
        let _ = writeln!(
            s,
            "| `{}` | {:.3e} | {} | {lo:.1e} – {hi:.1e} |",
            Constants::NAMES[i],
            shipped[i],
            refit.map_or("–".into(), |a| format!("{:.3e}", a[i]))
        );
    }
    s.push_str("\n### By GPU\n\n| GPU | rows | in-sample median | in-sample p90 | held-out (LOGO) median | LOGO p90 | LOGO signed median |\n|---|---|---|---|---|---|---|\n");
    for g in r.gpus() {
        let a = r.summary(&r.in_sample, Some(&g));
        let b = r.summary(&r.logo, Some(&g));
        let _ = writeln!(
            s,
            "| {g} | {} | {} | {} | {} | {} | {} |",
            a.n,
            pct(a.median),
            pct(a.p90),
            pct(b.median),
            pct(b.p90),
            signed(r.signed_median(&r.logo, &g))
        );
    }
    s.push_str("\n### By model (leave-one-model-out)\n\n| model | rows | in-sample median | LOMO median | LOMO p90 |\n|---|---|---|---|---|\n");
    let mut models: Vec<&str> = r.cases.iter().map(|c| c.model.as_str()).collect();
    models.sort_unstable();
    models.dedup();
    for m in models {
        let pick = |pred: &[f64]| super::Summary::of(&r.errors(pred, |c| c.model == m));
        let a = pick(&r.in_sample);
        let b = pick(&r.lomo);
        if a.n == 0 {
            continue;
        }
        let _ = writeln!(
            s,
            "| {m} | {} | {} | {} | {} |",
            a.n,
            pct(a.median),
            pct(b.median),
            pct(b.p90)
        );
    }
    s.push_str("\n### Engines (the app's bands)\n\n| engine | rows | GPUs | held-out median | held-out p10 (signed) | held-out p90 (signed) |\n|---|---|---|---|---|---|\n");
    for (e, n, g, med, p10, p90) in validation(r) {
        let _ = writeln!(
            s,
            "| {e} | {n} | {g} | {} | {} | {} |",
            pct(med),
            signed(p10),
            signed(p90)
        );
    }
    s.push_str("\nSGLang and transformers have no row the bands pool: most published runs of both use ShareGPT lengths, and SGLang's fixed-length ones (\"vLLM and SGLang runs from other sources\", below) are short runs reported beside the bands, not in them. Their speeds are shown as not validated.\n");
    s.push_str("\n### Latency where the source gives it (in-sample)\n\n| quantity | rows | median | p90 |\n|---|---|---|---|\n");
    for (name, ttft, rate) in [
        ("mean TTFT, request-rate runs", true, true),
        ("mean ITL, request-rate runs", false, true),
        ("mean TTFT, bursts (every prompt sent at once)", true, false),
        ("mean ITL, bursts", false, false),
    ] {
        let x = latency_summary(r, k, ttft, rate);
        let _ = writeln!(
            s,
            "| {name} | {} | {} | {} |",
            x.n,
            pct(x.median),
            pct(x.p90)
        );
    }
    s.push_str("\n### Series (in-sample and held-out signed median per GPU, model, engine and precision)\n\n| GPU | model | engine | precision | rows | in-sample | LOGO | LOMO |\n|---|---|---|---|---|---|---|---|\n");
    let mut keys: Vec<(String, String, &'static str, String)> = r
        .cases
        .iter()
        .filter(|c| c.fitted())
        .map(|c| {
            (
                c.gpu.clone(),
                c.model.clone(),
                c.engine.family(),
                c.precision.clone(),
            )
        })
        .collect();
    keys.sort();
    keys.dedup();
    for (g, m, e, p) in keys {
        let pick = |pred: &[f64]| {
            let mut v = r.errors(pred, |c| {
                c.gpu == g && c.model == m && c.engine.family() == e && c.precision == p
            });
            (v.len(), quantile(&mut v, 0.5))
        };
        let (n, a) = pick(&r.in_sample);
        let _ = writeln!(
            s,
            "| {g} | {m} | {e} | {p} | {n} | {} | {} | {} |",
            signed(a),
            signed(pick(&r.logo).1),
            signed(pick(&r.lomo).1)
        );
    }
    for (kind, what) in [
        (
            super::speed::Unfitted::ColumnOpen,
            "Rows marked CAVEAT (not fitted on)",
        ),
        (
            super::speed::Unfitted::NetworkUnstated,
            "Rows run with TP across nodes, or across pods of one node, over a network the source does not describe (not fitted on; predicted over 100 Gb/s Ethernet sockets, `serving::SOCKET_NETWORK_BYTES_PER_S`)",
        ),
    ] {
        let errs: Vec<f64> = r
            .cases
            .iter()
            .zip(&r.in_sample)
            .filter(|(c, _)| c.unfitted == Some(kind))
            .map(|(c, p)| rel(c.measured, *p))
            .collect();
        if errs.is_empty() {
            continue;
        }
        let x = super::Summary::of(&errs);
        let _ = writeln!(
            s,
            "\n{what}: {} rows, in-sample median {}, p90 {}.",
            x.n,
            pct(x.median),
            pct(x.p90)
        );
    }
    s.push_str("\nRows skipped: ");
    s.push_str(&skip_reasons(&r.skipped));
    s.push_str(".\n");
    s
}

/// Rounded to three decimals, as the shipped constants hold errors.
pub(super) fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The shipped validation rows as [`crate::serving::VALIDATION`] should read them (errors
/// rounded to 0.1 %).
#[must_use]
pub fn validation_source(r: &SpeedReport) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for (e, n, g, med, p10, p90) in validation(r) {
        let _ = writeln!(
            s,
            "    Validation {{ engine: \"{e}\", rows: {n}, gpus: {g}, median_abs: {}, p10: {}, p90: {} }},",
            round3(med),
            round3(p10),
            round3(p90)
        );
    }
    s
}

/// Issue 14's targets on held-out rows: leave-one-GPU-out tokens/s median and p90, and
/// speed-up ratios median.
const TARGET_MEDIAN: f64 = 0.15;
/// See [`TARGET_MEDIAN`].
const TARGET_P90: f64 = 0.30;
/// See [`TARGET_MEDIAN`].
const TARGET_RATIOS: f64 = 0.10;

/// What `vramfit accuracy --check` enforces; each failure in words (empty: all hold).
///
/// - the shipped constants are the fit: refitting from them lowers the mean |log error| by
///   at most 0.002;
/// - [`crate::serving::VALIDATION`] is what the report computes;
/// - the targets of issue 14 on held-out rows: leave-one-GPU-out median ≤ 15 % and p90 ≤ 30 %,
///   speed-up ratios median ≤ 10 %, no GPU's held-out median above 25 %.
#[must_use]
pub fn check(r: &SpeedReport, k: &Constants) -> Vec<String> {
    let mut out = Vec::new();
    let used: Vec<&Case> = r.cases.iter().filter(|c| c.fitted()).collect();
    if let Some(refit) = r.refit {
        let (a, b) = (loss(&used, k), loss(&used, &refit));
        if a - b > 0.002 {
            out.push(format!(
                "the shipped constants are not the fit: refit lowers the loss {a:.4} → {b:.4}; refit: {refit:?}"
            ));
        }
    }
    let computed: Vec<(&str, usize, usize, f64, f64, f64)> = validation(r)
        .into_iter()
        .map(|(e, n, g, m, p10, p90)| (e, n, g, round3(m), round3(p10), round3(p90)))
        .collect();
    let shipped: Vec<(&str, usize, usize, f64, f64, f64)> = crate::serving::VALIDATION
        .iter()
        .map(|v| (v.engine, v.rows, v.gpus, v.median_abs, v.p10, v.p90))
        .collect();
    if computed != shipped {
        out.push(format!(
            "serving::VALIDATION is stale; it should read:\n{}",
            validation_source(r)
        ));
    }
    let logo = r.summary(&r.logo, None);
    let sp = r.speedup_summary(&r.logo);
    let held = crate::serving::HeldOut {
        rows: logo.n,
        median: round3(logo.median),
        p90: round3(logo.p90),
        speedup_rows: sp.n,
        speedup_median: round3(sp.median),
    };
    if held != crate::serving::HELD_OUT {
        out.push(format!(
            "serving::HELD_OUT is stale; it should read {held:?}"
        ));
    }
    // Issue 14's targets. (From the 70 DEP rows' arrival until the v0.6.1 A100 table was read
    // per GPU and the runs over an undescribed network were set apart, the gate held p90 at
    // 31 %, the 30.2–30.3 % then reached; inside 30 % since: `HELD_OUT`.)
    if logo.median > TARGET_MEDIAN || logo.p90 > TARGET_P90 {
        out.push(format!(
            "leave-one-GPU-out tokens/s: {logo} (target median ≤ 15%, p90 ≤ 30%)"
        ));
    }
    if sp.median > TARGET_RATIOS {
        out.push(format!(
            "leave-one-GPU-out speed-up ratios: {sp} (target median ≤ 10%)"
        ));
    }
    for g in r.gpus() {
        let x = r.summary(&r.logo, Some(&g));
        if x.median > 0.25 {
            out.push(format!(
                "{g}: held-out median {:.1}% > 25%",
                x.median * 100.0
            ));
        }
    }
    out
}
