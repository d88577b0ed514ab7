//! Integration tests of vramfit-core: one binary (STYLE.md).

// Outside the core library: tests read fixtures and calibration files from disk.
// Test arithmetic casts small, known values.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::cast_lossless,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    clippy::print_stderr
)]

mod budget;
mod calibration;
mod catalog;
mod features;
mod fixes;
mod gguf;
mod gpu_names;
mod hand_values;
mod header_paths;
mod new_archs;
mod properties;
mod quant_layouts;
mod real_safetensors;
mod regressions;
mod review_fixes;
mod serving_plans;
mod single_stream;
mod support;
