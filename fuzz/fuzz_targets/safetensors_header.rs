//! The safetensors header parser on arbitrary bytes: `header_len` on the prefix,
//! `parse_header` on the rest (with and without the file size), `parse_file` on the whole
//! input; they must agree, and a parsed header must feed `Report::from_headers`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vramfit_core::safetensors::{header_len, parse_file, parse_header, Report};

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
        if let Ok(h) = parse_header(rest, None) {
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
