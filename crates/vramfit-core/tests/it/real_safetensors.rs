//! Real safetensors files shipped in PyPI packages, checked against what the
//! official `safetensors` Python package says about the same files.
//!
//! Fixtures and provenance: `tests/fixtures/real/` (README.md there); the
//! expected answers were written by `scripts/record_real_safetensors.py`
//! (the exact command is `_command` in each `.expected.json`).

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use vramfit_core::safetensors::{header_len, parse_file, parse_header, Header, Report};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/real");

/// The recorded fixtures, by name.
const NAMES: [&str; 4] = [
    "akiki-vad-native",
    "tokenlearn-static-model",
    "wordllama-l2-supercat-256",
    "all-minilm-l6-v2",
];

fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("{DIR}/{name}.expected.json"))
        .unwrap_or_else(|e| panic!("{name}.expected.json: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}.expected.json: {e}"))
}

fn u64_of(v: &Value, what: &str) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("{what} is not a u64: {v}"))
}

fn count_map(v: &Value) -> BTreeMap<String, u64> {
    v.as_object()
        .expect("an object of counts")
        .iter()
        .map(|(k, n)| (k.clone(), u64_of(n, k)))
        .collect()
}

/// Parses the committed fixture as the CLI would: the whole file with
/// `parse_file`, or, for a header-only fixture, its JSON header with the
/// real file size (so the data-section checks still run).
fn parse(name: &str, exp: &Value) -> Header {
    let fixture = exp["fixture"].as_str().expect("fixture file name");
    let bytes =
        std::fs::read(format!("{DIR}/{fixture}")).unwrap_or_else(|e| panic!("{fixture}: {e}"));
    let n = header_len(&bytes).unwrap_or_else(|e| panic!("{name}: header_len: {e:?}"));
    assert_eq!(n, u64_of(&exp["header_len"], "header_len"), "{name}: N");
    let file_size = u64_of(&exp["file_size"], "file_size");
    if exp["fixture_is_whole_file"].as_bool() == Some(true) {
        assert_eq!(bytes.len() as u64, file_size, "{name}: fixture size");
        parse_file(&bytes).unwrap_or_else(|e| panic!("{name}: parse_file: {e:?}"))
    } else {
        assert_eq!(
            bytes.len() as u64,
            8 + n,
            "{name}: header fixture is 8 + N bytes"
        );
        let json = &bytes[8..];
        // Without the size the header alone parses too, to the same result.
        let alone = parse_header(json, None)
            .unwrap_or_else(|e| panic!("{name}: parse_header(None): {e:?}"));
        let sized = parse_header(json, Some(file_size))
            .unwrap_or_else(|e| panic!("{name}: parse_header(Some({file_size})): {e:?}"));
        assert_eq!(alone, sized, "{name}: the file size changes nothing");
        sized
    }
}

fn check(name: &str) {
    let exp = expected(name);
    let header = parse(name, &exp);
    let report = Report::from_headers(std::slice::from_ref(&header));

    // Sizes.
    assert_eq!(
        header.file_size(),
        u64_of(&exp["file_size"], "file_size"),
        "{name}: 8 + N + data"
    );
    assert_eq!(
        header.data_len,
        u64_of(&exp["total_bytes"], "total_bytes"),
        "{name}: data section length"
    );

    // Counts.
    assert_eq!(
        report.tensor_count,
        u64_of(&exp["tensor_count"], "tensor_count"),
        "{name}: tensor_count"
    );
    assert_eq!(
        report.parameter_count,
        u64_of(&exp["total_elements"], "total_elements"),
        "{name}: parameter_count"
    );
    assert_eq!(
        report.total_bytes,
        u64_of(&exp["total_bytes"], "total_bytes"),
        "{name}: total_bytes"
    );
    let bytes_per_dtype = count_map(&exp["bytes_per_dtype"]);
    assert_eq!(
        report.bytes_per_dtype, bytes_per_dtype,
        "{name}: bytes_per_dtype"
    );
    assert_eq!(
        report.elements_per_dtype,
        count_map(&exp["elements_per_dtype"]),
        "{name}: elements_per_dtype"
    );
    assert_eq!(
        report.dtypes,
        bytes_per_dtype.keys().cloned().collect::<Vec<_>>(),
        "{name}: dtypes"
    );

    // Tensors: the same set of names, and each one's dtype, shape and size.
    let tensors = exp["tensors"].as_array().expect("tensors array");
    let ours: BTreeSet<&str> = header.tensors().map(|t| t.name).collect();
    let theirs: BTreeSet<&str> = tensors
        .iter()
        .map(|t| t["name"].as_str().expect("tensor name"))
        .collect();
    assert_eq!(ours, theirs, "{name}: tensor names");
    assert_eq!(
        header.tensor_count(),
        tensors.len(),
        "{name}: no duplicates"
    );
    for t in tensors {
        let tname = t["name"].as_str().expect("tensor name");
        let info = header
            .tensor(tname)
            .unwrap_or_else(|| panic!("{name}: no tensor {tname}"));
        assert_eq!(
            info.dtype.name(),
            t["dtype"].as_str().expect("dtype"),
            "{name}: {tname} dtype"
        );
        let shape: Vec<u64> = t["shape"]
            .as_array()
            .expect("shape")
            .iter()
            .map(|d| u64_of(d, "dim"))
            .collect();
        assert_eq!(info.shape, shape, "{name}: {tname} shape");
        assert_eq!(
            info.element_count(),
            Some(u64_of(&t["elements"], "elements")),
            "{name}: {tname} elements"
        );
        assert_eq!(
            info.byte_len(),
            u64_of(&t["bytes"], "bytes"),
            "{name}: {tname} bytes"
        );
    }

    // Our tensors are sorted by data_offsets: the order of `offset_keys()`.
    let offset_order: Vec<&str> = exp["offset_order"]
        .as_array()
        .expect("offset_order")
        .iter()
        .map(|k| k.as_str().expect("name"))
        .collect();
    let our_order: Vec<&str> = header.tensors().map(|t| t.name).collect();
    assert_eq!(our_order, offset_order, "{name}: tensor order by offset");

    // Metadata: `None` in Python is no `__metadata__`, i.e. no entries here.
    let metadata: Vec<(String, String)> = match &exp["metadata"] {
        Value::Null => Vec::new(),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().expect("string value").to_owned()))
            .collect(),
        other => panic!("{name}: metadata is {other}"),
    };
    assert_eq!(header.metadata, metadata, "{name}: metadata");
}

#[test]
fn every_real_fixture_is_checked() {
    let mut found: Vec<String> = std::fs::read_dir(DIR)
        .expect("fixtures/real")
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|f| f.strip_suffix(".expected.json").map(str::to_owned))
        .collect();
    found.sort();
    let mut listed: Vec<String> = NAMES.iter().map(|s| (*s).to_owned()).collect();
    listed.sort();
    assert_eq!(found, listed);
}

#[test]
fn akiki_vad_native_matches_the_official_package() {
    check("akiki-vad-native");
}

#[test]
fn tokenlearn_static_model_matches_the_official_package() {
    check("tokenlearn-static-model");
}

#[test]
fn wordllama_l2_supercat_256_matches_the_official_package() {
    check("wordllama-l2-supercat-256");
}

#[test]
fn all_minilm_l6_v2_matches_the_official_package() {
    check("all-minilm-l6-v2");
}

#[test]
fn real_reports_say_what_the_files_are() {
    let report = |name: &str| {
        let exp = expected(name);
        Report::from_headers(&[parse(name, &exp)])
    };
    // Both all-F32 checkpoints are flagged as fp32; the F16 and the mostly
    // I64/I8 files are not.
    assert!(report("akiki-vad-native").fp32_checkpoint);
    assert!(report("all-minilm-l6-v2").fp32_checkpoint);
    assert!(!report("wordllama-l2-supercat-256").fp32_checkpoint);
    assert!(!report("tokenlearn-static-model").fp32_checkpoint);
    // all-MiniLM-L6-v2: 22.7M parameters (22,713,216 F32 + 512 I64 position ids).
    assert_eq!(report("all-minilm-l6-v2").parameter_count, 22_713_728);
}
