//! The safetensors header parser on arbitrary bytes: `header_len` on the prefix,
//! `parse_header` on the rest (with and without the file size), `parse_file` on the whole
//! input; they must agree, the fast path must agree with the general (`serde_json`) path
//! on every input, and a parsed header must feed `Report::from_headers`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vramfit_core::safetensors::{
    header_len, parse_file, parse_header, parse_header_via_serde, Report,
};

fuzz_target!(|data: &[u8]| {
    let file_size = data.len() as u64;
    if let Ok(n) = header_len(data) {
        let rest = &data[8..];
        // The header as `parse_file` sees it: exactly `n` bytes after the prefix.
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| n.checked_add(8))
            .filter(|&e| e <= data.len());
        if let Some(end) = end {
            let exact = parse_header(&data[8..end], Some(file_size));
            assert_eq!(
                exact,
                parse_file(data),
                "parse_header and parse_file disagree"
            );
        }
        let fast = parse_header(rest, None);
        assert_eq!(
            fast,
            parse_header_via_serde(rest, None),
            "the fast path and the serde path disagree"
        );
        if let Ok(h) = fast {
            let _ = Report::from_headers(std::slice::from_ref(&h));
            // Two shards of the same header: the sharded-report path.
            let _ = Report::from_headers(&[h.clone(), h]);
        }
        let _ = parse_header(rest, Some(file_size));
    }
    if let Ok(h) = parse_file(data) {
        let _ = Report::from_headers(&[h]);
    }
});
