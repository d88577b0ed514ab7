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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::Cmd;
    use crate::files::read_inspect_input;
    use crate::testing::{parse, scratch};
    use std::path::Path;

    /// A safetensors file: 8-byte little-endian header length, the JSON header (padded with
    /// spaces to 8 bytes), then zeroed tensor data laid out in order.
    fn safetensors(tensors: &[(&str, &str, &[u64], u64)]) -> Vec<u8> {
        let mut off = 0;
        let mut entries = Vec::new();
        for (name, dtype, shape, bytes) in tensors {
            entries.push(format!(
                "\"{name}\":{{\"dtype\":\"{dtype}\",\"shape\":{shape:?},\"data_offsets\":[{off},{}]}}",
                off + bytes
            ));
            off += bytes;
        }
        let mut h = format!("{{{}}}", entries.join(",")).into_bytes();
        while h.len() % 8 != 0 {
            h.push(b' ');
        }
        let mut f = (h.len() as u64).to_le_bytes().to_vec();
        f.extend(h);
        f.extend(std::iter::repeat_n(0u8, usize::try_from(off).unwrap()));
        f
    }

    // "w": BF16 [2, 3] = 6 params, 12 B; "b": F32 [4] = 4 params, 16 B.
    const TENSORS: &[(&str, &str, &[u64], u64)] =
        &[("w", "BF16", &[2, 3], 12), ("b", "F32", &[4], 16)];

    fn inspect_args(path: &Path, json: bool) -> InspectArgs {
        let p = path.to_str().unwrap();
        let argv: Vec<&str> = if json {
            vec!["inspect", p, "--json"]
        } else {
            vec!["inspect", p]
        };
        match parse(&argv) {
            Cmd::Inspect(a) => a,
            _ => unreachable!(),
        }
    }

    fn inspect(path: &Path, json: bool) -> Res<Output> {
        let a = inspect_args(path, json);
        run(&a, &read_inspect_input(&a.path)?)
    }

    #[test]
    fn inspect_json_of_a_built_file_is_the_cores_report() {
        let dir = scratch("inspect-json");
        let bytes = safetensors(TENSORS);
        let f = dir.join("model.safetensors");
        std::fs::write(&f, &bytes).unwrap();
        let o = inspect(&f, true).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(o.code, 0);
        let j = o.json();
        let core = Report::from_headers(&[safetensors::parse_file(&bytes).unwrap()]);
        // Hand-counted, and the core agrees.
        assert_eq!((core.tensor_count, core.parameter_count), (2, 10));
        assert_eq!(j["tensor_count"], 2);
        assert_eq!(j["parameter_count"], 10);
        assert_eq!(j["bytes_per_dtype"]["BF16"], 12);
        assert_eq!(j["bytes_per_dtype"]["F32"], 16);
        assert_eq!(j["total_bytes"], core.total_bytes);
        assert_eq!(j["fp32_checkpoint"], core.fp32_checkpoint);
        assert_eq!(j["dtypes"], serde_json::json!(core.dtypes));
        assert_eq!(j["shards"], 1);
        assert_eq!(j["index_problems"], serde_json::json!([]));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn inspect_text_of_a_built_file_counts_tensors_and_bytes() {
        let dir = scratch("inspect-text");
        let bytes = safetensors(TENSORS);
        let f = dir.join("one.safetensors");
        std::fs::write(&f, &bytes).unwrap();
        let o = inspect(&f, false).unwrap();
        let core = Report::from_headers(&[safetensors::parse_file(&bytes).unwrap()]);
        let lines: Vec<&str> = o.stdout.lines().collect();
        assert_eq!(
            lines[0],
            format!(
                "1 shard(s), 2 tensors, 10 parameters ({} logical)",
                fmt_count(core.logical_parameter_count)
            )
        );
        assert!(lines
            .iter()
            .any(|l| l.starts_with("  BF16") && l.ends_with(" 12 bytes")));
        assert!(lines
            .iter()
            .any(|l| l.starts_with("  F32") && l.ends_with(" 16 bytes")));
        assert!(lines.contains(&format!("quantization: {:?}", core.quantization).as_str()));
        assert_eq!(o.code, 0);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn inspect_a_directory_checks_its_index_and_exits_1_on_problems() {
        let dir = scratch("inspect-index");
        let bytes = safetensors(TENSORS);
        std::fs::write(dir.join("model.safetensors"), &bytes).unwrap();
        // "b" is not in the index; "c" is in a shard that is not there.
        let index = br#"{"metadata":{},"weight_map":{"w":"model.safetensors","c":"model-00002-of-00002.safetensors"}}"#;
        std::fs::write(dir.join("model.safetensors.index.json"), index).unwrap();
        let header = safetensors::parse_file(&bytes).unwrap();
        let want =
            safetensors::check_against_index(&[("model.safetensors".into(), &header)], index)
                .unwrap();
        assert!(!want.problems.is_empty());
        let o = inspect(&dir, true).unwrap();
        assert_eq!(o.code, 1);
        let j = o.json();
        let want_text: Vec<String> = want.problems.iter().map(ToString::to_string).collect();
        assert_eq!(j["index_problems"], serde_json::json!(want_text));
        let t = inspect(&dir, false).unwrap();
        assert_eq!(t.code, 1);
        for p in &want_text {
            assert!(t.stdout.contains(&format!("index: {p}\n")), "{}", t.stdout);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn inspect_rejects_an_empty_directory_and_a_bad_header() {
        let dir = scratch("inspect-reject");
        match inspect(&dir, false) {
            Err(f @ Failure::Rejected(_)) => {
                assert!(f.message().ends_with(": no .safetensors files found"));
                assert_eq!(f.code(), 1);
            }
            other => panic!("{:?}", other.map(|o| o.stdout)),
        }
        let f = dir.join("short.safetensors");
        std::fs::write(&f, [1u8, 2, 3]).unwrap();
        match inspect(&f, true) {
            Err(e @ Failure::Rejected(_)) => assert!(e.message().contains("short.safetensors")),
            other => panic!("{:?}", other.map(|o| o.stdout)),
        }
        let _ = std::fs::remove_dir_all(dir);
    }
}
