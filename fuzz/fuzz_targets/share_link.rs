//! URL query → `Inputs` never fails, and `encode` of what it decoded must decode back to
//! the same inputs with no notices.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vramfit_core::share::{decode, encode};

fuzz_target!(|data: &[u8]| {
    let query = String::from_utf8_lossy(data);
    let (inputs, _) = decode(&query);
    let link = encode(&inputs);
    let (again, notices) = decode(&link);
    assert_eq!(inputs, again, "decode(encode(x)) != x for link {link:?}");
    assert!(
        notices.is_empty(),
        "encoded link {link:?} has notices {notices:?}"
    );
});
