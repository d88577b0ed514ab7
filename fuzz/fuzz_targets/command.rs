//! Pasted launch command → `Command` on arbitrary text never panics; what parses is then
//! checked against the bundled catalog on one GPU (planning included).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::LazyLock;
use vramfit_core::catalog::Catalog;
use vramfit_core::command::{check_command, parse};

static CAT: LazyLock<Catalog> = LazyLock::new(Catalog::bundled);

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if parse(&text).is_ok() {
        let _ = check_command(&CAT, "h100-sxm", &text);
    }
});
