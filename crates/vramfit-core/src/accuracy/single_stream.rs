//! One user decoding through llama.cpp, against published `llama-bench` runs the constants
//! never saw (`tests/data/llama_cpp_decode.csv`: `tg32` / `tg128` / `tg512` rows on 15
//! GPUs and Apple / AMD chips, RTX 3060 to H100, M2 Ultra, M3 Max and M3 Ultra, Ryzen AI
//! Max+ 395, DGX Spark; CUDA, Metal, ROCm and Vulkan builds; each row's source file and
//! commit in its `source` column). No constant or rule was chosen by looking at these rows
//! and none is fitted on them. Their errors are llama.cpp's band in the app
//! ([`crate::serving::VALIDATION`], pooled by [`super::speed_report::validation`]).
//!
//! Each row is planned as `llama-bench` runs it: one sequence, a one-token prompt, the
//! test's tokens generated. GGUF types map onto the core's formats (F16, BF16; Q8_0 →
//! int8; Q4_0, Q4_K_M → int4; gpt-oss's MXFP4 → its native format), which the llama.cpp
//! plan reads as the GGUF file type its command names (`sizing/gguf.rs`: Q4_K_M, Q8_0, F16,
//! gpt-oss's MXFP4 file), so a Q4_0 row is planned with Q4_K_M's bytes.

use super::{parse_csv, rel};
use crate::catalog::Catalog;
use crate::dtype::WeightFormat;
use crate::plan::{plan, Inputs};
use crate::sizing::Engine;

/// The rows.
pub const LLAMA_CPP_DECODE_CSV: &str = include_str!("../../tests/data/llama_cpp_decode.csv");

/// One row and its prediction.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Where it was published.
    pub source: String,
    /// `llama-bench`'s test (`tg128`, …).
    pub test: String,
    /// Catalog GPU id.
    pub gpu: String,
    /// Catalog model id.
    pub model: String,
    /// The GGUF type as printed (`Q4_K_M`, …).
    pub quant: String,
    /// The build's backend (CUDA, Metal, ROCm, Vulkan).
    pub backend: String,
    /// Measured tokens/s.
    pub measured: f64,
    /// Predicted tokens/s for one user.
    pub predicted: f64,
}

/// The core's format for a GGUF type (`None`: the model's own, gpt-oss's MXFP4).
fn format(quant: &str) -> Result<Option<WeightFormat>, String> {
    Ok(match quant {
        "F16" => Some(WeightFormat::Fp16),
        "BF16" => Some(WeightFormat::Bf16),
        "Q8_0" => Some(WeightFormat::Int8W8a8),
        "Q4_0" | "Q4_K_M" => Some(WeightFormat::Int4Awq),
        "MXFP4" => None,
        q => return Err(format!("a GGUF type the check does not map: {q}")),
    })
}

/// The rows of `csv`, each planned with the shipped constants.
///
/// # Errors
/// A row whose columns, GGUF type, model or GPU the catalog cannot read.
pub fn rows(csv: &str) -> Result<Vec<Row>, String> {
    let cat = Catalog::bundled();
    let t = parse_csv(csv);
    let head = t.first().ok_or("the file is empty")?;
    let col = |name: &str| {
        head.iter()
            .position(|c| c == name)
            .ok_or(format!("no column {name}"))
    };
    let (source, gpu, model, quant, backend, test, tps) = (
        col("source")?,
        col("gpu")?,
        col("model")?,
        col("quant")?,
        col("backend")?,
        col("test")?,
        col("tokens_per_s")?,
    );
    let mut out = Vec::new();
    for r in t.iter().skip(1) {
        let get = |i: usize| r.get(i).cloned().unwrap_or_default();
        let mut i = Inputs {
            model: get(model),
            gpu: get(gpu),
            format: format(&get(quant))?,
            ..Inputs::default()
        };
        i.flags.engine = Engine::LlamaCpp;
        i.workload.users = 1;
        i.workload.prompt_tokens = 1;
        i.workload.output_tokens = get(test)
            .trim_start_matches("tg")
            .parse()
            .map_err(|_| format!("{}: test {} is not tgN", get(source), get(test)))?;
        let p = plan(&cat, &i).map_err(|e| format!("{}: {e}", get(source)))?;
        out.push(Row {
            source: get(source),
            test: get(test),
            gpu: get(gpu),
            model: get(model),
            quant: get(quant),
            backend: get(backend),
            measured: get(tps)
                .parse()
                .map_err(|_| format!("{}: tokens/s {}", get(source), get(tps)))?,
            predicted: p
                .run
                .as_ref()
                .map(|r| r.speed.decode_tokens_per_s_per_user)
                .ok_or_else(|| format!("{}: the plan does not run", get(source)))?,
        });
    }
    Ok(out)
}

/// Signed errors (predicted / measured − 1) as the engines' bands pool them:
/// (engine, GPU, error).
#[must_use]
pub fn held_out_errors(rows: &[Row]) -> Vec<(&'static str, String, f64)> {
    rows.iter()
        .map(|r| ("llama.cpp", r.gpu.clone(), rel(r.measured, r.predicted)))
        .collect()
}

/// The report's section: per GPU and in all (the columns of the unseen GPUs' table).
#[must_use]
pub fn markdown(rows: &[Row]) -> String {
    let mut s = String::from(
        "\n### llama.cpp, one user decoding (never fitted)\n\n\
Published `llama-bench` decode runs (`tg32`–`tg512`, one sequence) on consumer, workstation and datacenter GPUs and Apple and AMD chips \
(`crates/vramfit-core/tests/data/llama_cpp_decode.csv`, each row with its source), planned as llama.cpp with the GGUF file's weights (`sizing/gguf.rs`) and the shipped constants. \
No constant or rule was fitted on them; llama.cpp's band in the app is these errors (Engines, above). \
The test `tests/it/single_stream.rs` fails when their median passes 25 % or a 4-bit/16-bit speed ratio strays 35 % from the measured one.\n\n",
    );
    s.push_str(super::unseen::ERROR_TABLE_HEAD);
    let mut gpus: Vec<&str> = rows.iter().map(|r| r.gpu.as_str()).collect();
    gpus.sort_unstable();
    gpus.dedup();
    let errs = |keep: &dyn Fn(&Row) -> bool| -> Vec<f64> {
        rows.iter()
            .filter(|r| keep(r))
            .map(|r| rel(r.measured, r.predicted))
            .collect()
    };
    for g in gpus {
        s.push_str(&super::unseen::error_row(g, &errs(&|r| r.gpu == g)));
    }
    s.push_str(&super::unseen::error_row("all", &errs(&|_| true)));
    s
}
