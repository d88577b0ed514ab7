//! One user decoding through llama.cpp, against published `llama-bench` runs the constants
//! never saw (`tests/data/llama_cpp_decode.csv`: 63 `tg32` / `tg128` / `tg512` rows on 15 GPUs and
//! Apple / AMD chips: RTX 3060 to H100, M2 Ultra, M3 Max and M3 Ultra, Ryzen AI Max+ 395,
//! DGX Spark; CUDA, Metal, ROCm and Vulkan builds; each row's source file and commit in
//! its `source` column). No constant or rule was chosen by looking at these rows; they are
//! not in the calibration set, and the app still labels llama.cpp's speed "not validated".
//!
//! Each row is planned as `llama-bench` runs it: one sequence, a one-token prompt, the
//! test's tokens generated. GGUF types map onto the core's formats (F16, BF16; Q8_0 →
//! int8; Q4_0, Q4_K_M → int4; gpt-oss's MXFP4 → its native format), which the llama.cpp
//! plan reads as the GGUF file type its command names (`sizing/gguf.rs`: Q4_K_M, Q8_0, F16,
//! gpt-oss's MXFP4 file), so a Q4_0 row is planned with Q4_K_M's bytes.
//!
//! Measured on this file (shipped constants, 2026-12-06): median |error| 16.1 %, signed
//! median −13 %; 18.1 % while the weights were the core's format bytes (int4 as AWQ, the
//! embeddings in 16 bits) instead of the GGUF file's. Before a single token's GEMM was
//! costed as at least one 16-row tile and a sparse prompt as a burst (`serving.rs`, "GEMM
//! efficiency" and `at`), 52.3 % and −52 % (through the CLI, the same rows): every
//! small-batch GEMM was costed as ~121 tokens of FLOPs, so on GPUs with few FLOP/s per
//! byte of bandwidth the decode was compute-bound and a 4-bit model decoded no faster than
//! a 16-bit one.

use vramfit_core::accuracy::parse_csv;
use vramfit_core::catalog::Catalog;
use vramfit_core::dtype::WeightFormat;
use vramfit_core::engine::Engine;
use vramfit_core::plan::{plan, Inputs};

const ROWS: &str = include_str!("../data/llama_cpp_decode.csv");

struct Row {
    source: String,
    test: String,
    gpu: String,
    model: String,
    quant: String,
    backend: String,
    measured: f64,
    predicted: f64,
}

fn format(quant: &str) -> Option<WeightFormat> {
    match quant {
        "F16" => Some(WeightFormat::Fp16),
        "BF16" => Some(WeightFormat::Bf16),
        "Q8_0" => Some(WeightFormat::Int8W8a8),
        "Q4_0" | "Q4_K_M" => Some(WeightFormat::Int4Awq),
        // gpt-oss ships its experts in MXFP4: the model's own format.
        "MXFP4" => None,
        q => panic!("a GGUF type the test does not map: {q}"),
    }
}

fn rows() -> Vec<Row> {
    let cat = Catalog::bundled();
    let t = parse_csv(ROWS);
    let col = |name: &str| t[0].iter().position(|c| c == name).unwrap();
    let (source, gpu, model, quant, backend, test, tps) = (
        col("source"),
        col("gpu"),
        col("model"),
        col("quant"),
        col("backend"),
        col("test"),
        col("tokens_per_s"),
    );
    t[1..]
        .iter()
        .map(|r| {
            let mut i = Inputs {
                model: r[model].clone(),
                gpu: r[gpu].clone(),
                format: format(&r[quant]),
                ..Inputs::default()
            };
            i.flags.engine = Engine::LlamaCpp;
            i.workload.users = 1;
            i.workload.prompt_tokens = 1;
            i.workload.output_tokens = r[test].trim_start_matches("tg").parse().unwrap();
            let p = plan(&cat, &i).unwrap_or_else(|e| panic!("{}: {e}", r[source]));
            Row {
                source: r[source].clone(),
                test: r[test].clone(),
                gpu: r[gpu].clone(),
                model: r[model].clone(),
                quant: r[quant].clone(),
                backend: r[backend].clone(),
                measured: r[tps].parse().unwrap(),
                predicted: p.run.as_ref().unwrap().speed.decode_tokens_per_s_per_user,
            }
        })
        .collect()
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
