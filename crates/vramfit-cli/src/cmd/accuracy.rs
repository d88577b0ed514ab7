//! `accuracy`: the accuracy report (docs/ACCURACY.md) from the calibration set, and with
//! `--check FILE` the test suite's gate: the file must be the report, the shipped constants
//! the fit, and the held-out errors within the targets ([`vramfit_core::accuracy::speed::check`]).

use crate::out::Output;

/// `accuracy` on a calibration CSV; `against` is the text of `--check FILE`.
pub fn run(csv: &str, against: Option<&str>) -> Output {
    let (report, mut problems) = vramfit_core::accuracy::report_for(csv);
    let Some(file) = against else {
        return Output::ok(report);
    };
    if file != report {
        problems.insert(
            0,
            "the file differs from the report: regenerate it with `cargo run --release -p vramfit-cli -- accuracy > docs/ACCURACY.md`".into(),
        );
    }
    if problems.is_empty() {
        Output::ok(
            "accuracy report up to date; shipped constants are the fit; held-out targets met\n"
                .into(),
        )
    } else {
        let mut o = Output::ok(format!(
            "accuracy check failed:\n- {}\n",
            problems.join("\n- ")
        ));
        o.code = 1;
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A slice of the calibration set: the start-up logs and the 128/128 TensorRT-LLM rows of
    /// one GPU, so that the fits the report runs stay quick in a debug build.
    fn small_csv() -> String {
        let all = vramfit_core::accuracy::CALIBRATION_CSV;
        let mut lines = all.lines();
        let mut s = format!("{}\n", lines.next().unwrap_or(""));
        for l in lines {
            if l.contains(",vllm_log,")
                || (l.contains("ISL=128 OSL=128") && l.contains("A100-SXM4-80GB"))
            {
                s.push_str(l);
                s.push('\n');
            }
        }
        s
    }

    // `accuracy` has no `--json`: the text is the whole contract.
    #[test]
    fn accuracy_prints_the_cores_markdown_report() {
        let csv = small_csv();
        let o = run(&csv, None);
        assert_eq!(o.code, 0);
        assert_eq!(o.stdout, vramfit_core::accuracy::report_for(&csv).0);
        assert!(o.stdout.starts_with('#'));
        let mem = vramfit_core::accuracy::memory_report(&csv);
        let n = mem.weights_summary().n;
        assert!(n > 0);
        assert!(
            o.stdout
                .contains(&format!("| weights per GPU (vLLM logs) | {n} |")),
            "{n}"
        );
        assert!(o.stdout.contains("leave-one-GPU-out"));
    }

    #[test]
    fn check_fails_on_a_stale_file_and_says_how_to_regenerate() {
        let csv = small_csv();
        let o = run(&csv, Some("# Accuracy\n\nold text\n"));
        assert_eq!(o.code, 1);
        assert!(o.stdout.contains("regenerate it with"), "{}", o.stdout);
    }
}
