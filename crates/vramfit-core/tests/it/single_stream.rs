//! One user decoding through llama.cpp, against published `llama-bench` runs the constants
//! never saw: the rows and how each is planned are `accuracy::single_stream`'s (its module
//! docs); the same errors are llama.cpp's band in the app (`serving::VALIDATION`).
//!
//! Measured on this file (shipped constants, 2026-12-06): median |error| 16.1 %, signed
//! median −13 %; 18.1 % while the weights were the core's format bytes (int4 as AWQ, the
//! embeddings in 16 bits) instead of the GGUF file's. Before a single token's GEMM was
//! costed as at least one 16-row tile and a sparse prompt as a burst (`serving.rs`, "GEMM
//! efficiency" and `at`), 52.3 % and −52 % (through the CLI, the same rows): every
//! small-batch GEMM was costed as ~121 tokens of FLOPs, so on GPUs with few FLOP/s per
//! byte of bandwidth the decode was compute-bound and a 4-bit model decoded no faster than
//! a 16-bit one.

use vramfit_core::accuracy::single_stream::{rows as planned, Row, LLAMA_CPP_DECODE_CSV};

fn rows() -> Vec<Row> {
    planned(LLAMA_CPP_DECODE_CSV).unwrap()
}

fn table(rows: &[Row]) -> String {
    rows.iter()
        .map(|r| {
            format!(
                "{} {} {} {}: measured {:.1}, predicted {:.1} ({:+.0} %)\n",
                r.gpu,
                r.model,
                r.quant,
                r.backend,
                r.measured,
                r.predicted,
                (r.predicted / r.measured - 1.0) * 100.0
            )
        })
        .collect()
}

#[test]
fn single_stream_decode_on_llama_cpp_is_within_a_quarter() {
    let rows = rows();
    assert_eq!(rows.len(), 63);
    let mut errs: Vec<f64> = rows
        .iter()
        .map(|r| (r.predicted / r.measured - 1.0).abs())
        .collect();
    errs.sort_by(f64::total_cmp);
    let median = errs[errs.len() / 2];
    println!("median |error| {median:.4}");
    assert!(
        median <= 0.25,
        "median |error| {median:.3}\n{}",
        table(&rows)
    );
}

#[test]
fn four_bit_weights_decode_faster_as_measured() {
    // The same run (source, test, GPU, model, backend) at 16 and 4 bits: llama-bench measured
    // the 4-bit model 2.1–2.6× faster (RTX 3090 115.4 / 47.4 tok/s, M2 Ultra 78.8 / 36.9,
    // …); the predicted ratio is within 35 % of each. The GGUF files' bytes differ 3.3×
    // (Llama 3 8B: 15.0 GB read per token at F16, 4.6 GB at Q4_K_M), and the model reads both
    // at the same fraction of the bandwidth, so it overstates the gain where the 4-bit
    // kernels fall shorter of it (M3 Max: 2.92× predicted, 2.22× measured, the widest).
    // A decode costed as compute-bound predicts 1.0×.
    let rows = rows();
    let mut pairs = 0;
    for a in rows.iter().filter(|r| r.quant == "F16") {
        for b in rows.iter().filter(|r| {
            r.quant.starts_with("Q4")
                && (&r.source, &r.test, &r.gpu, &r.model, &r.backend)
                    == (&a.source, &a.test, &a.gpu, &a.model, &a.backend)
        }) {
            pairs += 1;
            let measured = b.measured / a.measured;
            let predicted = b.predicted / a.predicted;
            assert!(
                (predicted / measured - 1.0).abs() <= 0.35,
                "{} {} {}: measured {measured:.2}×, predicted {predicted:.2}×",
                a.gpu,
                a.model,
                b.quant
            );
        }
    }
    assert!(pairs >= 10, "{pairs}");
}
