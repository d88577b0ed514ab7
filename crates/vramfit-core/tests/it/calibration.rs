//! Calibration against published measurements (`tests/data/measurements.csv`, a copy of
//! ../shared/calibration/measurements.csv; every row names its public source).
//!
//! - `vllm_log` rows of vLLM V1 (v0.11+) whose model the catalog knows: predicted vs measured
//!   weights per GPU, KV pool, blocks and concurrency. Asserted: weights median |error| ≤ 1 %;
//!   KV pool median ≤ 2 % and 90th percentile ≤ 5 %.
//! - Older vLLM rows with "Loading model weights took": weights only (weights accounting has
//!   not changed).
//! - `tp_scaling` rows: predicted vs published speed-up between TP sizes of the same model,
//!   GPU, precision and lengths. Asserted: median |error| ≤ 15 %.
//!
//! The same rows drive docs/ACCURACY.md (`cargo run -p vramfit-cli -- accuracy`).

use vramfit_core::accuracy::{self, Summary};

#[test]
fn vllm_memory_accounting_matches_published_logs() {
    let report = accuracy::memory_report(accuracy::CALIBRATION_CSV);
    println!("{}", report.table());
    assert!(
        report.rows.len() >= 25,
        "only {} rows were comparable",
        report.rows.len()
    );
    let w: Summary = report.weights_summary();
    let kv: Summary = report.kv_summary();
    println!("weights: {w}\nkv pool: {kv}");
    assert!(
        w.median <= 0.01,
        "weights median error {:.2}% > 1%",
        w.median * 100.0
    );
    assert!(
        kv.median <= 0.02,
        "KV pool median error {:.2}% > 2%",
        kv.median * 100.0
    );
    assert!(
        kv.p90 <= 0.05,
        "KV pool p90 error {:.2}% > 5%",
        kv.p90 * 100.0
    );
    // Blocks follow from the pool and the page size: hold them to the same bar.
    let b = report.blocks_summary();
    assert!(
        b.median <= 0.02,
        "blocks median error {:.2}% > 2%",
        b.median * 100.0
    );
}

#[test]
fn the_rule_of_thumb_is_worse_than_the_model() {
    // The seed's rule (parameters × bytes + 20 %) as a baseline: the precise model must beat it
    // on the KV pool it implies.
    let report = accuracy::memory_report(accuracy::CALIBRATION_CSV);
    let ours = report.kv_summary();
    let thumb = report.rule_of_thumb_kv_summary();
    println!("ours {ours}\nrule of thumb {thumb}");
    assert!(ours.median < thumb.median && ours.p90 < thumb.p90);
}

#[test]
fn tensor_parallel_speedups_match_published_tables() {
    let report = accuracy::scaling_report(accuracy::CALIBRATION_CSV);
    println!("{}", report.table());
    assert!(
        report.rows.len() >= 20,
        "only {} speed-up pairs",
        report.rows.len()
    );
    let s = report.summary();
    println!("speed-up ratio error: {s}");
    assert!(
        s.median <= 0.15,
        "TP speed-up median error {:.1}% > 15%",
        s.median * 100.0
    );
}
