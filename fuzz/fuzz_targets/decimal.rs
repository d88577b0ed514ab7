//! `vramfit_core::decimal::parse_f64` gives the standard library's `f64` bit for bit, or
//! refuses exactly what it refuses (plus `inf`/`nan`, which it refuses on purpose).
#![no_main]

use libfuzzer_sys::fuzz_target;
use vramfit_core::decimal::parse_f64;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let ours = parse_f64(s);
    match s.parse::<f64>() {
        Ok(v) if v.is_nan() || (v.is_infinite() && s.to_ascii_lowercase().contains("inf")) => {
            assert_eq!(ours, None, "{s:?} should be refused");
        }
        Ok(v) => {
            let got = ours.unwrap_or_else(|| panic!("{s:?} refused; std reads {v:e}"));
            assert_eq!(got.to_bits(), v.to_bits(), "{s:?}: {got:e} vs std {v:e}");
        }
        Err(_) => assert_eq!(ours, None, "{s:?} read as {ours:?}; std refuses it"),
    }
});
