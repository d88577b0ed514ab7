//! Out-of-memory text → `OomReport` on arbitrary text, then `diagnose`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vramfit_core::oom::{diagnose, parse};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(report) = parse(&text) {
        let _ = diagnose(&report);
    }
});
