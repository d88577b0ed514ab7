//! `accuracy`: the accuracy report (docs/ACCURACY.md) from the calibration set.

use crate::out::Output;

/// `accuracy`.
pub fn run() -> Output {
    Output::ok(vramfit_core::accuracy::markdown_report())
}

#[cfg(test)]
mod tests {
    use super::*;

    // `accuracy` has no `--json`: the text is the whole contract.
    #[test]
    fn accuracy_prints_the_cores_markdown_report() {
        let o = run();
        assert_eq!(o.code, 0);
        assert_eq!(o.stdout, vramfit_core::accuracy::markdown_report());
        assert!(
            o.stdout.starts_with('#'),
            "{}",
            &o.stdout[..40.min(o.stdout.len())]
        );
        // The headline table's row counts are the core's calibration summaries.
        let h = vramfit_core::accuracy::headline();
        for (label, n) in [
            ("| weights per GPU (vLLM logs) |", h[0].3),
            ("| KV pool per GPU (vLLM V1 logs) |", h[1].3),
        ] {
            assert!(o.stdout.contains(&format!("{label} {n} |")), "{label} {n}");
        }
    }
}
