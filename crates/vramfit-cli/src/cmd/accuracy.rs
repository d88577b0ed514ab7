//! `accuracy`: the accuracy report (docs/ACCURACY.md) from the calibration set.

use crate::out::Output;

/// `accuracy`.
pub fn run() -> Output {
    Output::ok(vramfit_core::accuracy::markdown_report())
}
