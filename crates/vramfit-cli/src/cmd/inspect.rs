//! `inspect`: what safetensors headers hold (the headers are read in [`crate::files`]).

use crate::args::InspectArgs;
use crate::files::InspectInput;
use crate::json::inspect_json;
use crate::out::{pretty_line, Failure, Output, Res};
use std::fmt::Write as _;
use vramfit_core::safetensors::{self, Header, Report};
use vramfit_core::units::fmt_count;

/// `inspect` on what was read from `a.path`: exit 1 when the index disagrees with the shards.
pub fn run(a: &InspectArgs, input: &InspectInput) -> Res<Output> {
    let headers = &input.headers;
    if headers.is_empty() {
        return Err(Failure::Rejected(format!(
            "{}: no .safetensors files found",
            a.path.display()
        )));
    }
    let report = Report::from_headers(&headers.iter().map(|(_, h)| h.clone()).collect::<Vec<_>>());
    let mut index_problems = Vec::new();
    if let Some(idx) = &input.index {
        let shards: Vec<(String, &Header)> = headers.iter().map(|(n, h)| (n.clone(), h)).collect();
        let check = safetensors::check_against_index(&shards, &idx.bytes)
            .map_err(|e| Failure::Rejected(format!("{}: {e}", idx.path.display())))?;
        index_problems = check.problems.iter().map(ToString::to_string).collect();
    }
    let stdout = if a.json {
        let v = inspect_json(&report, headers.len(), &index_problems)
            .map_err(|e| Failure::Rejected(e.to_string()))?;
        pretty_line(&v)
    } else {
        let mut s = format!(
            "{} shard(s), {} tensors, {} parameters ({} logical)\n",
            headers.len(),
            fmt_count(report.tensor_count),
            fmt_count(report.parameter_count),
            fmt_count(report.logical_parameter_count)
        );
        for (k, v) in &report.bytes_per_dtype {
            let _ = writeln!(s, "  {k:<10} {:>16} bytes", fmt_count(*v));
        }
        let _ = writeln!(s, "quantization: {:?}", report.quantization);
        for w in &report.warnings {
            let _ = writeln!(s, "warning: {w}");
        }
        for w in &index_problems {
            let _ = writeln!(s, "index: {w}");
        }
        s
    };
    Ok(Output::status(stdout, index_problems.is_empty()))
}
