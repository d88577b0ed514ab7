//! Integration tests of vramfit-core: one binary (STYLE.md).

mod calibration;
mod catalog;
mod hand_values;
mod header_paths;
mod properties;
mod real_safetensors;
mod regressions;
