//! Tests of the header parser, the checkpoint report and the index check.
// Tests cast small, known values.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

use super::*;
use serde_json::{json, Value};
use std::collections::BTreeSet;

const GIB: u64 = 1 << 30;

/// A whole file: prefix, JSON, `data_len` zero bytes.
pub(super) fn file(json: &str, data_len: usize) -> Vec<u8> {
    let mut out = (json.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(json.as_bytes());
    out.extend(std::iter::repeat_n(0u8, data_len));
    out
}

fn parse(json: &str) -> Result<Header, HeaderError> {
    parse_header(json.as_bytes(), None)
}

fn err(json: &str) -> HeaderError {
    parse(json).expect_err("header should be rejected")
}

/// A valid header laying out `tensors` contiguously in the given order.
fn build(tensors: &[(&str, Dtype, &[u64])]) -> Header {
    let mut map = serde_json::Map::new();
    let mut offset = 0u64;
    for (name, dtype, shape) in tensors {
        let elements: u64 = shape.iter().product();
        let bytes = dtype.bytes_for(elements).unwrap();
        map.insert(
            (*name).to_owned(),
            json!({"dtype": dtype.name(), "shape": shape, "data_offsets": [offset, offset + bytes]}),
        );
        offset += bytes;
    }
    parse(&Value::Object(map).to_string()).unwrap()
}

// ---- Dtype -------------------------------------------------------------

#[test]
fn dtype_names_and_bits_follow_the_reference() {
    assert_eq!(Dtype::ALL.len(), 22);
    for d in Dtype::ALL {
        assert_eq!(Dtype::from_name(d.name()), Some(d));
        assert_eq!(d.to_string(), d.name());
    }
    let bits: Vec<(&str, u64)> = Dtype::ALL.iter().map(|d| (d.name(), d.bits())).collect();
    assert_eq!(
        bits,
        [
            ("BOOL", 8),
            ("F4", 4),
            ("F6_E2M3", 6),
            ("F6_E3M2", 6),
            ("U8", 8),
            ("I8", 8),
            ("F8_E5M2", 8),
            ("F8_E4M3", 8),
            ("F8_E8M0", 8),
            ("F8_E4M3FNUZ", 8),
            ("F8_E5M2FNUZ", 8),
            ("I16", 16),
            ("U16", 16),
            ("F16", 16),
            ("BF16", 16),
            ("I32", 32),
            ("U32", 32),
            ("F32", 32),
            ("C64", 64),
            ("F64", 64),
            ("I64", 64),
            ("U64", 64),
        ]
    );
    assert_eq!(Dtype::from_name("bf16"), None);
    assert_eq!(
        serde_json::to_string(&Dtype::F8_E4M3).unwrap(),
        "\"F8_E4M3\""
    );
}

#[test]
fn byte_arithmetic_is_exact_and_overflow_free() {
    assert_eq!(Dtype::F4.bytes_for(2), Ok(1));
    assert_eq!(Dtype::F4.bytes_for(3), Err(Some(4)));
    assert_eq!(Dtype::F6_E2M3.bytes_for(4), Ok(3));
    assert_eq!(Dtype::F6_E3M2.bytes_for(2), Err(Some(4)));
    assert_eq!(Dtype::U8.bytes_for(u64::MAX), Ok(u64::MAX));
    assert_eq!(Dtype::F4.bytes_for(u64::MAX - 1), Ok(u64::MAX / 2));
    assert_eq!(Dtype::U16.bytes_for(u64::MAX / 2 + 1), Err(None));
    assert_eq!(Dtype::U64.bytes_for(1 << 62), Err(None));
}

// ---- header_len --------------------------------------------------------

#[test]
fn header_len_reads_the_prefix() {
    assert_eq!(header_len(&64u64.to_le_bytes()), Ok(64));
    assert_eq!(header_len(&file("{}      ", 0)), Ok(8));
    assert_eq!(
        header_len(&MAX_HEADER_SIZE.to_le_bytes()),
        Ok(MAX_HEADER_SIZE)
    );
    assert_eq!(
        header_len(&(MAX_HEADER_SIZE + 1).to_le_bytes()),
        Err(HeaderError::HeaderTooLarge {
            header_len: MAX_HEADER_SIZE + 1
        })
    );
    assert_eq!(
        header_len(&u64::MAX.to_le_bytes()).unwrap_err().kind(),
        "HeaderTooLarge"
    );
    assert_eq!(
        header_len(&[1, 2, 3, 4, 5]),
        Err(HeaderError::FileTooShort { len: 5 })
    );
    assert_eq!(header_len(&[]), Err(HeaderError::FileTooShort { len: 0 }));
}

// ---- file-level errors ---------------------------------------------------

#[test]
fn file_level_errors() {
    assert_eq!(parse_file(&[]), Err(HeaderError::EmptyFile));
    assert_eq!(parse_header(b"{}", Some(0)), Err(HeaderError::EmptyFile));
    assert_eq!(
        parse_file(&[8, 0, 0]),
        Err(HeaderError::FileTooShort { len: 3 })
    );
    assert_eq!(
        parse_header(b"{}", Some(7)),
        Err(HeaderError::FileTooShort { len: 7 })
    );
    assert_eq!(
        parse_header(b"{}      ", Some(15)),
        Err(HeaderError::HeaderBeyondFile {
            header_len: 8,
            file_size: 15
        })
    );
    let mut f = file("{}", 0);
    f[0] = 100;
    assert_eq!(
        parse_file(&f),
        Err(HeaderError::HeaderBeyondFile {
            header_len: 100,
            file_size: 10
        })
    );
    let mut f = file("{}", 0);
    f[..8].copy_from_slice(&(MAX_HEADER_SIZE + 1).to_le_bytes());
    assert_eq!(parse_file(&f).unwrap_err().kind(), "HeaderTooLarge");
    assert!(parse_file(&file("{}", 0)).is_ok());
    assert!(parse_header(b"{}", Some(10)).is_ok());
}

// ---- syntax errors -------------------------------------------------------

#[test]
fn syntax_errors() {
    assert_eq!(
        parse_header(b"{\"a\xff\":1}", None),
        Err(HeaderError::InvalidUtf8 { valid_up_to: 3 })
    );
    let e = err(r#"{"w":{"dtype":"F32","sha"#);
    let HeaderError::InvalidJson(msg) = &e else {
        panic!("{e:?}")
    };
    assert!(msg.contains("EOF"), "{msg}");
    assert_eq!(err("{} x").kind(), "InvalidJson");
    assert_eq!(err("").kind(), "InvalidJson");
    for (json, found) in [
        ("[1, 2, 3]", "an array"),
        ("\"hi\"", "a string"),
        ("42", "a number"),
        ("-1.5", "a number"),
        ("null", "null"),
        ("true", "a boolean"),
    ] {
        assert_eq!(err(json), HeaderError::NotAnObject { found }, "{json}");
    }
    // An entry repeated identically is one tensor, as in the reference parser (its map keeps
    // one); a repeat that differs is refused.
    let h = parse(
        r#"{"w":{"dtype":"U8","shape":[],"data_offsets":[0,1]},"w":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}"#,
    )
    .unwrap();
    assert_eq!((h.tensors().count(), h.data_len), (1, 1));
    assert_eq!(h.repeated, ["w"]);
    let r = crate::safetensors::Report::from_headers(std::slice::from_ref(&h));
    assert_eq!(r.tensor_count, 1);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("the header repeats 1 tensor entry identically (e.g. `w`)")),
        "{:?}",
        r.warnings
    );
    assert_eq!(
        err(
            r#"{"w":{"dtype":"U8","shape":[],"data_offsets":[0,1]},"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#
        ),
        HeaderError::DuplicateKey { key: "w".into() }
    );
    // Trailing space padding, as the reference writes it, is accepted.
    assert!(parse("{}      ").is_ok());
}

#[test]
fn metadata_rules() {
    let h = parse(r#"{"__metadata__":{"format":"pt","b":"x"}}"#).unwrap();
    assert_eq!(
        h.metadata,
        [("b".into(), "x".into()), ("format".into(), "pt".into())]
    );
    assert_eq!(h.metadata_value("format"), Some("pt"));
    // `null` is no metadata (the reference's `Option<HashMap<String, String>>`).
    let h = parse(r#"{"__metadata__":null,"w":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#)
        .unwrap();
    assert!(h.metadata.is_empty() && h.repeated.is_empty());
    assert_eq!(h.tensors().count(), 1);
    for json in [
        r#"{"__metadata__":{"format":1}}"#,
        r#"{"__metadata__":["pt"]}"#,
        r#"{"__metadata__":{"a":{"b":"c"}}}"#,
    ] {
        assert_eq!(err(json).kind(), "InvalidMetadata", "{json}");
    }
    assert_eq!(
        err(r#"{"__metadata__":{"format":1}}"#).to_string(),
        "`__metadata__` is invalid: value of `format` must be a string, found a number"
    );
}

#[test]
fn tensor_entry_errors() {
    let cases = [
        (r#"{"w":"x"}"#, "found a string"),
        (
            r#"{"w":{"shape":[],"data_offsets":[0,1]}}"#,
            "missing `dtype`",
        ),
        (
            r#"{"w":{"dtype":"U8","data_offsets":[0,1]}}"#,
            "missing `shape`",
        ),
        (
            r#"{"w":{"dtype":"U8","shape":[]}}"#,
            "missing `data_offsets`",
        ),
        (
            r#"{"w":{"dtype":8,"shape":[],"data_offsets":[0,1]}}"#,
            "`dtype` must be a string",
        ),
        (
            r#"{"w":{"dtype":"U8","shape":[-1],"data_offsets":[0,1]}}"#,
            "`shape[0]`",
        ),
        (
            r#"{"w":{"dtype":"U8","shape":[1.5],"data_offsets":[0,1]}}"#,
            "`shape[0]`",
        ),
        (
            r#"{"w":{"dtype":"U8","shape":[1e30],"data_offsets":[0,1]}}"#,
            "below 2^64",
        ),
        (
            r#"{"w":{"dtype":"U8","shape":{},"data_offsets":[0,1]}}"#,
            "`shape` must be an array",
        ),
        (
            r#"{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}}"#,
            "found 3 numbers",
        ),
        (
            r#"{"w":{"dtype":"U8","shape":[1],"data_offsets":[1]}}"#,
            "found 1 numbers",
        ),
        (
            r#"{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,"1"]}}"#,
            "`data_offsets[1]`",
        ),
    ];
    for (json, needle) in cases {
        let e = err(json);
        assert_eq!(e.kind(), "InvalidTensorEntry", "{json}");
        assert!(e.to_string().contains(needle), "{json}: {e}");
        assert!(e.to_string().contains("tensor `w`"), "{e}");
    }
    // Extra fields are ignored, as in the reference.
    assert!(parse(r#"{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":1}}"#).is_ok());
}

#[test]
fn unknown_dtype() {
    let e = err(r#"{"w":{"dtype":"F12","shape":[1],"data_offsets":[0,2]}}"#);
    assert_eq!(
        e,
        HeaderError::UnknownDtype {
            tensor: "w".into(),
            dtype: "F12".into()
        }
    );
    assert!(e
        .to_string()
        .starts_with("tensor `w` has unknown dtype `F12` (known: BOOL, F4,"));
    assert_eq!(
        err(r#"{"w":{"dtype":"bf16","shape":[1],"data_offsets":[0,2]}}"#).kind(),
        "UnknownDtype"
    );
}

// ---- layout errors -------------------------------------------------------

#[test]
fn size_mismatch_message_names_the_culprit() {
    let e = err(
        r#"{"model.layers.0.mlp.up_proj.weight":{"dtype":"F16","shape":[4,4],"data_offsets":[0,16]}}"#,
    );
    assert_eq!(e.kind(), "SizeMismatch");
    assert_eq!(
        e.to_string(),
        "tensor `model.layers.0.mlp.up_proj.weight` has dtype F16 and shape [4, 4] = 32 \
             bytes, but its data_offsets span 16 bytes"
    );
}

#[test]
fn overflow_is_reported_not_wrapped() {
    let e =
        err(r#"{"w":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,16]}}"#);
    assert_eq!(e, HeaderError::Overflow { tensor: "w".into() });
    assert!(e.to_string().contains("overflows 64 bits"));
    // Elements fit, bytes do not.
    assert_eq!(
        err(r#"{"w":{"dtype":"U64","shape":[4611686018427387904],"data_offsets":[0,0]}}"#).kind(),
        "Overflow"
    );
    // 2^62 U8 elements is 2^62 bytes: no spurious overflow from bits.
    let big = 1u64 << 62;
    let h = parse(&format!(
        r#"{{"w":{{"dtype":"U8","shape":[{big}],"data_offsets":[0,{big}]}}}}"#
    ))
    .unwrap();
    assert_eq!(h.data_len, big);
}

#[test]
fn misaligned_sub_byte() {
    let e = err(r#"{"w":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}}"#);
    assert_eq!(e.kind(), "MisalignedSubByte");
    assert_eq!(
        e.to_string(),
        "tensor `w` has dtype F4 (4 bits) and shape [3], which is not a whole number of bytes"
    );
    assert_eq!(
        err(r#"{"w":{"dtype":"F6_E3M2","shape":[2],"data_offsets":[0,2]}}"#).kind(),
        "MisalignedSubByte"
    );
}

#[test]
fn offset_order_errors() {
    let e = err(r#"{"w":{"dtype":"U8","shape":[16],"data_offsets":[16,0]}}"#);
    assert_eq!(
        e,
        HeaderError::MisorderedOffsets {
            tensor: "w".into(),
            begin: 16,
            end: 0
        }
    );
    assert!(e.to_string().contains("[16, 0]"));

    let e = err(
        r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[4],"data_offsets":[24,40]}}"#,
    );
    assert_eq!(e.kind(), "Gap");
    assert_eq!(
        e.to_string(),
        "tensor `b` begins at data byte 24, but the previous tensor `a` ends at byte 16: \
             bytes 16..24 belong to no tensor"
    );
    let e = err(r#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[8,24]}}"#);
    assert_eq!(
        e,
        HeaderError::Gap {
            tensor: "a".into(),
            previous: None,
            expected_begin: 0,
            begin: 8
        }
    );
    assert!(e.to_string().contains("bytes 0..8"));

    let e = err(
        r#"{"b":{"dtype":"F32","shape":[4],"data_offsets":[8,24]},"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#,
    );
    assert_eq!(
        e,
        HeaderError::Overlap {
            tensor: "b".into(),
            previous: "a".into(),
            previous_end: 16,
            begin: 8
        }
    );
    assert!(e.to_string().contains("bytes 8..16 are claimed twice"));
    // Two tensors on the same bytes.
    assert_eq!(
        err(r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}"#).kind(),
        "Overlap"
    );
}

#[test]
fn data_end_must_match_file_end() {
    let json = r#"{"w":{"dtype":"F32","shape":[16],"data_offsets":[0,64]}}"#;
    let e = parse_file(&file(json, 32)).unwrap_err();
    assert_eq!(
        e,
        HeaderError::PastEnd {
            tensor: "w".into(),
            end: 64,
            data_available: 32
        }
    );
    assert!(e
        .to_string()
        .contains("data is 32 bytes but tensors cover at least 64"));
    let e = parse_file(&file(json, 72)).unwrap_err();
    assert_eq!(
        e,
        HeaderError::DataEndMismatch {
            covered: 64,
            data_available: 72
        }
    );
    assert_eq!(
        e.to_string(),
        "data is 72 bytes but tensors cover 64: 8 trailing bytes belong to no tensor"
    );
    let h = parse_file(&file(json, 64)).unwrap();
    assert_eq!(h.file_size(), 8 + json.len() as u64 + 64);
    // Huge offsets against a small file: no overflow, just PastEnd.
    let json = format!(
        r#"{{"w":{{"dtype":"U8","shape":[{m}],"data_offsets":[0,{m}]}}}}"#,
        m = u64::MAX
    );
    assert_eq!(
        parse_header(json.as_bytes(), Some(1000))
            .unwrap_err()
            .kind(),
        "PastEnd"
    );
}

#[test]
fn every_error_kind_has_a_message() {
    let samples = [
        HeaderError::EmptyFile,
        HeaderError::FileTooShort { len: 5 },
        HeaderError::HeaderTooLarge {
            header_len: u64::MAX,
        },
        HeaderError::HeaderBeyondFile {
            header_len: u64::MAX,
            file_size: 9,
        },
        HeaderError::InvalidUtf8 { valid_up_to: 3 },
        HeaderError::InvalidJson("x".into()),
        HeaderError::NotAnObject { found: "null" },
        HeaderError::DuplicateKey { key: "k".into() },
        HeaderError::InvalidMetadata { reason: "r".into() },
        HeaderError::InvalidTensorEntry {
            tensor: "t".into(),
            reason: "r".into(),
        },
        HeaderError::UnknownDtype {
            tensor: "t".into(),
            dtype: "X".into(),
        },
        HeaderError::Overflow { tensor: "t".into() },
        HeaderError::MisalignedSubByte {
            tensor: "t".into(),
            dtype: Dtype::F4,
            shape: vec![3],
        },
        HeaderError::SizeMismatch {
            tensor: "t".into(),
            dtype: Dtype::F16,
            shape: vec![],
            expected: 2,
            actual: 4,
        },
        HeaderError::MisorderedOffsets {
            tensor: "t".into(),
            begin: 2,
            end: 1,
        },
        HeaderError::Gap {
            tensor: "t".into(),
            previous: None,
            expected_begin: 0,
            begin: 1,
        },
        HeaderError::Overlap {
            tensor: "t".into(),
            previous: "p".into(),
            previous_end: 2,
            begin: 1,
        },
        HeaderError::PastEnd {
            tensor: "t".into(),
            end: 2,
            data_available: 1,
        },
        HeaderError::DataEndMismatch {
            covered: 1,
            data_available: 2,
        },
        HeaderError::InvalidIndex { reason: "r".into() },
    ];
    let kinds: BTreeSet<&str> = samples.iter().map(HeaderError::kind).collect();
    assert_eq!(kinds.len(), samples.len());
    for e in &samples {
        assert!(!e.to_string().is_empty());
        let _: &dyn std::error::Error = e;
    }
}

// ---- valid headers -------------------------------------------------------

#[test]
fn valid_multi_dtype_header_with_5_gib_tensor() {
    let five_gib = 5 * GIB;
    // BF16 [2560, 1048576] = 2 684 354 560 elements = 5 GiB.
    let f4_end = five_gib + 4096 * 4096 / 2;
    let json = json!({
        "__metadata__": {"format": "pt"},
        "lm_head.weight": {"dtype": "F4", "shape": [4096, 4096], "data_offsets": [five_gib, f4_end]},
        "model.embed_tokens.weight": {"dtype": "BF16", "shape": [2560, 1_048_576], "data_offsets": [0, five_gib]},
        "model.norm.weight": {"dtype": "F32", "shape": [2560], "data_offsets": [f4_end, f4_end + 10240]},
        "model.layers.0.mlp.down_proj.weight_scale": {"dtype": "F8_E8M0", "shape": [], "data_offsets": [f4_end + 10240, f4_end + 10241]},
        "x.f6": {"dtype": "F6_E2M3", "shape": [4], "data_offsets": [f4_end + 10241, f4_end + 10244]},
        "x.empty": {"dtype": "I64", "shape": [0, 7], "data_offsets": [f4_end + 10244, f4_end + 10244]}
    })
    .to_string();
    let data_len = f4_end + 10244;
    let file_size = 8 + json.len() as u64 + data_len;
    let h = parse_header(json.as_bytes(), Some(file_size)).unwrap();
    assert_eq!(h.data_len, data_len);
    assert_eq!(h.header_len, json.len() as u64);
    assert_eq!(h.file_size(), file_size);
    let names: Vec<&str> = h.tensors().map(|t| t.name).collect();
    assert_eq!(
        names,
        [
            "model.embed_tokens.weight",
            "lm_head.weight",
            "model.norm.weight",
            "model.layers.0.mlp.down_proj.weight_scale",
            "x.f6",
            "x.empty"
        ]
    );
    let embed = h.tensor("model.embed_tokens.weight").unwrap();
    assert_eq!(embed.byte_len(), 5_368_709_120);
    assert_eq!(embed.element_count(), Some(2_684_354_560));
    assert_eq!(
        h.tensor("lm_head.weight").unwrap().data_offsets,
        (five_gib, f4_end)
    );
    assert_eq!(h.tensor("x.f6").unwrap().byte_len(), 3);
    // Off by one byte of file size either way is rejected.
    assert_eq!(
        parse_header(json.as_bytes(), Some(file_size + 1))
            .unwrap_err()
            .kind(),
        "DataEndMismatch"
    );
    assert_eq!(
        parse_header(json.as_bytes(), Some(file_size - 1))
            .unwrap_err()
            .kind(),
        "PastEnd"
    );

    let r = Report::from_headers(&[h]);
    assert_eq!(r.tensor_count, 6);
    assert_eq!(
        r.parameter_count,
        2_684_354_560 + 4096 * 4096 + 2560 + 1 + 4
    );
    assert_eq!(r.logical_parameter_count, r.parameter_count);
    assert_eq!(r.total_bytes, data_len);
    assert_eq!(r.bytes_per_dtype["BF16"], 5_368_709_120);
    assert_eq!(r.bytes_per_dtype["F4"], 8_388_608);
    assert_eq!(r.elements_per_dtype["F4"], 16_777_216);
    assert_eq!(r.elements_per_dtype["I64"], 0);
    assert_eq!(r.dtypes, ["BF16", "F32", "F4", "F6_E2M3", "F8_E8M0", "I64"]);
    assert!(!r.fp32_checkpoint);
    assert!(
        (r.effective_bits_per_param - 15.95).abs() < 0.05,
        "{}",
        r.effective_bits_per_param
    );
    assert_eq!(r.quantization, Quantization::None);
    assert!(!r.moe.is_moe());
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[test]
fn empty_header_is_valid() {
    let h = parse("{}").unwrap();
    assert!(h.tensor_count() == 0 && h.metadata.is_empty());
    assert_eq!(h.data_len, 0);
    let r = Report::from_headers(&[h]);
    assert_eq!(r.parameter_count, 0);
    assert!(r.effective_bits_per_param.abs() < f64::EPSILON);
    assert_eq!(r.warnings.len(), 1);
}

// ---- report ----------------------------------------------------------------

#[test]
fn fp32_checkpoint_warning() {
    let h = build(&[("a", Dtype::F32, &[100]), ("b", Dtype::BF16, &[100])]);
    let r = Report::from_headers(&[h]);
    assert!(r.fp32_checkpoint);
    assert!(r.warnings[0].starts_with("this is an fp32 checkpoint: 4 bytes per parameter"));
    assert!((r.effective_bits_per_param - 24.0).abs() < 1e-9);
    let h = build(&[("a", Dtype::F32, &[100]), ("b", Dtype::BF16, &[200])]);
    assert!(!Report::from_headers(&[h]).fp32_checkpoint); // exactly 50%
}

#[test]
fn gptq_and_awq_detection_and_unpacking() {
    let p = "model.layers.0.mlp.down_proj";
    let gptq = build(&[
        (&format!("{p}.qweight"), Dtype::I32, &[8, 32]),
        (&format!("{p}.qzeros"), Dtype::I32, &[2, 4]),
        (&format!("{p}.scales"), Dtype::F16, &[2, 32]),
        (&format!("{p}.g_idx"), Dtype::I32, &[64]),
    ]);
    let r = Report::from_headers(&[gptq]);
    assert_eq!(r.quantization, Quantization::Gptq);
    assert_eq!(r.parameter_count, 256 + 8 + 64 + 64);
    assert_eq!(r.logical_parameter_count, 256 * 8 + 8 + 64 + 64);
    assert!(r.warnings[0].starts_with(
        "packed int4 weights: parameter_count counts packed int32 elements, the logical \
             parameter count is about 8x for those tensors"
    ));
    // 8-bit GPTQ: g_idx says 4 values per int32.
    let gptq8 = build(&[
        ("l.qweight", Dtype::I32, &[16, 32]),
        ("l.qzeros", Dtype::I32, &[2, 8]),
        ("l.scales", Dtype::F16, &[2, 32]),
        ("l.g_idx", Dtype::I32, &[64]),
    ]);
    let r = Report::from_headers(&[gptq8]);
    assert_eq!(r.logical_parameter_count - (16 + 64 + 64), 512 * 4);
    assert!(r.warnings[0].contains("int8") && r.warnings[0].contains("about 4x"));

    let awq = build(&[
        ("l.qweight", Dtype::I32, &[64, 4]),
        ("l.qzeros", Dtype::I32, &[2, 4]),
        ("l.scales", Dtype::F16, &[2, 32]),
    ]);
    let r = Report::from_headers(&[awq]);
    assert_eq!(r.quantization, Quantization::Awq);
    assert_eq!(r.logical_parameter_count, 256 * 8 + 8 + 64);
}

#[test]
fn fp8_detection() {
    let block = build(&[
        ("l.weight", Dtype::F8_E4M3, &[256, 256]),
        ("l.weight_scale_inv", Dtype::F32, &[2, 2]),
    ]);
    assert_eq!(
        Report::from_headers(&[block]).quantization,
        Quantization::Fp8 { block_scaled: true }
    );
    let per_tensor = build(&[
        ("l.weight", Dtype::F8_E4M3, &[16, 16]),
        ("l.weight_scale", Dtype::F32, &[]),
        ("l.input_scale", Dtype::F32, &[]),
    ]);
    let r = Report::from_headers(&[per_tensor]);
    assert_eq!(
        r.quantization,
        Quantization::Fp8 {
            block_scaled: false
        }
    );
    assert_eq!(r.quantization.label(), "FP8");
    let channel = build(&[
        ("l.weight", Dtype::F8_E4M3, &[16, 16]),
        ("l.weight_scale", Dtype::F32, &[16, 1]),
    ]);
    assert_eq!(
        Report::from_headers(&[channel]).quantization,
        Quantization::Fp8 {
            block_scaled: false
        }
    );
    // FP8 without scales is not a recognised scheme.
    let bare = build(&[("l.weight", Dtype::F8_E4M3, &[16, 16])]);
    assert_eq!(
        Report::from_headers(&[bare]).quantization,
        Quantization::None
    );
}

#[test]
fn compressed_tensors_nvfp4_mxfp4_bnb() {
    let ct = build(&[
        ("l.weight_packed", Dtype::I32, &[32, 8]),
        ("l.weight_scale", Dtype::BF16, &[32, 2]),
        ("l.weight_shape", Dtype::I64, &[2]),
    ]);
    let r = Report::from_headers(&[ct]);
    assert_eq!(r.quantization, Quantization::CompressedTensorsInt);
    assert_eq!(r.logical_parameter_count, 256 * 8 + 64 + 2);

    let nvfp4_ct = build(&[
        ("l.weight_packed", Dtype::U8, &[32, 16]),
        ("l.weight_scale", Dtype::F8_E4M3, &[32, 2]),
        ("l.weight_global_scale", Dtype::F32, &[1]),
    ]);
    let r = Report::from_headers(&[nvfp4_ct]);
    assert_eq!(r.quantization, Quantization::Nvfp4);
    assert_eq!(r.logical_parameter_count, 1024 + 64 + 1);
    let nvfp4_modelopt = build(&[
        ("l.weight", Dtype::U8, &[32, 16]),
        ("l.weight_scale", Dtype::F8_E4M3, &[32, 2]),
        ("l.weight_scale_2", Dtype::F32, &[]),
        ("l.input_scale", Dtype::F32, &[]),
    ]);
    let r = Report::from_headers(&[nvfp4_modelopt]);
    assert_eq!(r.quantization, Quantization::Nvfp4);
    assert_eq!(r.logical_parameter_count, 1024 + 64 + 2);
    assert!(r.warnings[0].starts_with("NVFP4 weights"));

    let mxfp4 = build(&[
        (
            "model.layers.0.mlp.experts.down_proj_blocks",
            Dtype::U8,
            &[4, 8, 2, 16],
        ),
        (
            "model.layers.0.mlp.experts.down_proj_scales",
            Dtype::U8,
            &[4, 8, 2],
        ),
        (
            "model.layers.0.mlp.experts.down_proj_bias",
            Dtype::BF16,
            &[4, 8],
        ),
        ("model.layers.0.mlp.router.weight", Dtype::BF16, &[4, 8]),
        (
            "model.layers.0.self_attn.q_proj.weight",
            Dtype::BF16,
            &[8, 8],
        ),
    ]);
    let r = Report::from_headers(&[mxfp4]);
    assert_eq!(r.quantization, Quantization::Mxfp4);
    assert_eq!(r.parameter_count, 1024 + 64 + 32 + 32 + 64);
    assert_eq!(r.logical_parameter_count, 2048 + 64 + 32 + 32 + 64);
    assert_eq!(r.moe.expert_parameters, 2048 + 64 + 32);
    assert_eq!(r.moe.shared_parameters, 32 + 64);
    assert_eq!(r.moe.expert_tensor_count, 3);
    assert!(r.moe.is_moe());

    let bnb = build(&[
        ("l.weight", Dtype::U8, &[128, 1]),
        ("l.weight.absmax", Dtype::F32, &[4]),
        ("l.weight.quant_map", Dtype::F32, &[16]),
    ]);
    let r = Report::from_headers(&[bnb]);
    assert_eq!(r.quantization, Quantization::BitsAndBytes);
    assert_eq!(r.logical_parameter_count, 256 + 4 + 16);
    let bnb8 = build(&[
        ("l.weight", Dtype::I8, &[16, 16]),
        ("l.SCB", Dtype::F32, &[16]),
    ]);
    assert_eq!(
        Report::from_headers(&[bnb8]).quantization,
        Quantization::BitsAndBytes
    );
}

#[test]
fn moe_split_across_shards() {
    let a = build(&[
        (
            "model.layers.0.mlp.experts.0.up_proj.weight",
            Dtype::BF16,
            &[4, 4],
        ),
        (
            "model.layers.0.mlp.experts.1.up_proj.weight",
            Dtype::BF16,
            &[4, 4],
        ),
    ]);
    let b = build(&[
        (
            "model.layers.0.mlp.shared_expert.up_proj.weight",
            Dtype::BF16,
            &[4, 4],
        ),
        (
            "model.layers.0.mlp.shared_experts.up_proj.weight",
            Dtype::BF16,
            &[4, 4],
        ),
        ("model.layers.0.mlp.gate.weight", Dtype::BF16, &[2, 4]),
    ]);
    let r = Report::from_headers(&[a, b]);
    assert_eq!(r.moe.expert_parameters, 32);
    assert_eq!(r.moe.shared_parameters, 40);
    assert_eq!(r.tensor_count, 5);
    assert!(r.warnings.is_empty());
}

#[test]
fn a_report_reads_back_from_json_with_the_same_ratios() {
    // The web app's import worker sends reports to the page as JSON; the ratios are
    // recomputed there, not read back (a JSON float need not read back exactly).
    let fp8 = build(&[
        (
            "model.layers.0.mlp.experts.0.w.weight",
            Dtype::F8_E4M3,
            &[256, 256],
        ),
        (
            "model.layers.0.mlp.experts.0.w.weight_scale_inv",
            Dtype::F32,
            &[2, 2],
        ),
        ("model.norm.weight", Dtype::BF16, &[7]),
        ("model.embed.weight", Dtype::F32, &[3, 7]),
    ]);
    let r = Report::from_headers(&[fp8.clone(), fp8]);
    assert_eq!(r.quantization, Quantization::Fp8 { block_scaled: true });
    assert!(r.moe.is_moe() && !r.warnings.is_empty() && r.dtypes.len() == 3);
    assert!(r.effective_bits_per_param.fract() != 0.0);
    let json = serde_json::to_string(&r).unwrap();
    let mut back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back.effective_bits_per_param, 0.0, "not read from the JSON");
    back.refresh_ratios();
    assert_eq!(back, r);
    assert_eq!(
        back.effective_bits_per_param.to_bits(),
        r.effective_bits_per_param.to_bits()
    );
}

#[test]
fn duplicate_tensor_across_shards_warns() {
    let a = build(&[("w", Dtype::BF16, &[4])]);
    let r = Report::from_headers(&[a.clone(), a]);
    assert_eq!(r.parameter_count, 8);
    assert!(r.warnings[0].contains("more than one shard (e.g. `w`)"));
}

// ---- index -----------------------------------------------------------------

#[test]
fn index_check() {
    let s1 = build(&[("a", Dtype::BF16, &[4]), ("b", Dtype::BF16, &[4])]);
    let s2 = build(&[("c", Dtype::F32, &[2])]);
    let shards = [
        ("dir/model-00001-of-00002.safetensors".to_owned(), &s1),
        ("model-00002-of-00002.safetensors".to_owned(), &s2),
    ];
    let ok = br#"{"metadata":{"total_size":24},"weight_map":{
            "a":"model-00001-of-00002.safetensors","b":"model-00001-of-00002.safetensors",
            "c":"model-00002-of-00002.safetensors"}}"#;
    let c = check_against_index(&shards, ok).unwrap();
    assert!(c.is_consistent(), "{:?}", c.problems);
    assert_eq!(c.indexed_tensors, 3);
    assert_eq!(c.declared_total_size, Some(24));
    assert_eq!(c.actual_total_size, 24);
    assert_eq!(c.indexed_shards.len(), 2);

    let bad = br#"{"metadata":{"total_size":"99"},"weight_map":{
            "a":"model-00001-of-00002.safetensors","c":"model-00001-of-00002.safetensors",
            "d":"model-00001-of-00002.safetensors","e":"model-00003-of-00003.safetensors"}}"#;
    let c = check_against_index(&shards, bad).unwrap();
    let shown: Vec<String> = c.problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        c.problems,
        [
            IndexProblem::WrongShard {
                tensor: "c".into(),
                index_shard: "model-00001-of-00002.safetensors".into(),
                found_in: "model-00002-of-00002.safetensors".into()
            },
            IndexProblem::TensorNotFound {
                tensor: "d".into(),
                shard: "model-00001-of-00002.safetensors".into()
            },
            IndexProblem::MissingShard {
                shard: "model-00003-of-00003.safetensors".into(),
                tensors: vec!["e".into()]
            },
            IndexProblem::NotInIndex {
                tensor: "b".into(),
                shard: "model-00001-of-00002.safetensors".into()
            },
            IndexProblem::UnusedShard {
                shard: "model-00002-of-00002.safetensors".into()
            },
        ],
        "{shown:?}"
    );
    assert!(shown[2].contains("shard `model-00003-of-00003.safetensors` is missing"));

    let wrong_total = br#"{"metadata":{"total_size":25.0},"weight_map":{
            "a":"model-00001-of-00002.safetensors","b":"model-00001-of-00002.safetensors",
            "c":"model-00002-of-00002.safetensors"}}"#;
    let c = check_against_index(&shards, wrong_total).unwrap();
    assert_eq!(
        c.problems,
        [IndexProblem::TotalSizeMismatch {
            declared: 25,
            actual: 24
        }]
    );

    for bad in [
        &b"not json"[..],
        b"[]",
        br#"{"metadata":{}}"#,
        br#"{"weight_map":{"a":1}}"#,
        br#"{"weight_map":{},"metadata":{"total_size":-1}}"#,
        br#"{"weight_map":{},"metadata":{"total_size":1.5}}"#,
    ] {
        let e = check_against_index(&shards, bad).unwrap_err();
        assert_eq!(e.kind(), "InvalidIndex", "{}", String::from_utf8_lossy(bad));
    }
}

// ---- fixtures ----------------------------------------------------------------

macro_rules! fixture {
    ($name:literal, $kind:literal) => {
        (
            $name,
            &include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/safetensors/",
                $name
            ))[..],
            $kind,
        )
    };
}

fn fixtures() -> Vec<(&'static str, &'static [u8], &'static str)> {
    vec![
        fixture!("valid_bf16.safetensors", "Ok"),
        fixture!("valid_gptq.safetensors", "Ok"),
        fixture!("valid_awq.safetensors", "Ok"),
        fixture!("valid_mxfp4_moe.safetensors", "Ok"),
        fixture!("valid_fp8_block.safetensors", "Ok"),
        fixture!("valid_subbyte_mixed.safetensors", "Ok"),
        fixture!("valid_empty_header.safetensors", "Ok"),
        fixture!("header_too_large.safetensors", "HeaderTooLarge"),
        fixture!("header_beyond_file.safetensors", "HeaderBeyondFile"),
        fixture!("truncated_json.safetensors", "InvalidJson"),
        fixture!("non_utf8.safetensors", "InvalidUtf8"),
        fixture!("not_object.safetensors", "NotAnObject"),
        fixture!("duplicate_key.safetensors", "DuplicateKey"),
        fixture!("valid_repeated_entry.safetensors", "Ok"),
        fixture!("valid_null_metadata.safetensors", "Ok"),
        fixture!("bad_metadata.safetensors", "InvalidMetadata"),
        fixture!("invalid_entry.safetensors", "InvalidTensorEntry"),
        fixture!("unknown_dtype.safetensors", "UnknownDtype"),
        fixture!("size_mismatch.safetensors", "SizeMismatch"),
        fixture!("misaligned_f4.safetensors", "MisalignedSubByte"),
        fixture!("misordered.safetensors", "MisorderedOffsets"),
        fixture!("overlap.safetensors", "Overlap"),
        fixture!("gap.safetensors", "Gap"),
        fixture!("past_end.safetensors", "PastEnd"),
        fixture!("trailing_data.safetensors", "DataEndMismatch"),
        fixture!("overflow.safetensors", "Overflow"),
        fixture!("empty.safetensors", "EmptyFile"),
        fixture!("short.safetensors", "FileTooShort"),
    ]
}

#[test]
fn fixtures_parse_as_documented() {
    for (name, bytes, kind) in fixtures() {
        match parse_file(bytes) {
            Ok(_) => assert_eq!(kind, "Ok", "{name} parsed but should fail with {kind}"),
            Err(e) => assert_eq!(e.kind(), kind, "{name}: {e}"),
        }
        // The split API agrees with parse_file.
        if bytes.len() >= 8 {
            if let Ok(n) = header_len(bytes) {
                if let Some(json) = bytes.get(8..8 + n as usize) {
                    let split = parse_header(json, Some(bytes.len() as u64));
                    assert_eq!(split, parse_file(bytes), "{name}");
                }
            }
        }
    }
}

#[test]
fn fixture_readme_lists_every_fixture() {
    let readme = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/safetensors/README.md"
    ));
    let documented: BTreeSet<(String, String)> = readme
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let file = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let kind = cells.get(2)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((file.to_owned(), kind.to_owned()))
        })
        .collect();
    let tested: BTreeSet<(String, String)> = fixtures()
        .into_iter()
        .map(|(n, _, k)| (n.to_owned(), k.to_owned()))
        .collect();
    assert_eq!(documented, tested);
}

#[test]
fn fixture_reports() {
    let report = |name: &str| {
        let (_, bytes, _) = fixtures().into_iter().find(|f| f.0 == name).unwrap();
        Report::from_headers(&[parse_file(bytes).unwrap()])
    };
    assert_eq!(
        report("valid_bf16.safetensors").quantization,
        Quantization::None
    );
    let gptq = report("valid_gptq.safetensors");
    assert_eq!(gptq.quantization, Quantization::Gptq);
    assert_eq!(gptq.logical_parameter_count - gptq.parameter_count, 256 * 7);
    assert_eq!(
        report("valid_awq.safetensors").quantization,
        Quantization::Awq
    );
    let mx = report("valid_mxfp4_moe.safetensors");
    assert_eq!(mx.quantization, Quantization::Mxfp4);
    assert!(mx.moe.is_moe());
    assert_eq!(
        report("valid_fp8_block.safetensors").quantization,
        Quantization::Fp8 { block_scaled: true }
    );
    let sub = report("valid_subbyte_mixed.safetensors");
    assert_eq!(sub.bytes_per_dtype["F4"], 16);
    assert_eq!(sub.bytes_per_dtype["F6_E2M3"], 12);

    let e = parse_file(
        fixtures()
            .into_iter()
            .find(|f| f.0 == "size_mismatch.safetensors")
            .unwrap()
            .1,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "tensor `model.layers.0.mlp.up_proj.weight` has dtype F16 and shape [4, 4] = 32 \
             bytes, but its data_offsets span 16 bytes"
    );
}

#[test]
fn sharded_fixture_against_index() {
    const DIR: &str = "/tests/fixtures/safetensors/sharded/";
    let s1 = parse_file(include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/safetensors/sharded/model-00001-of-00002.safetensors"
    )))
    .unwrap();
    let s2 = parse_file(include_bytes!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/safetensors/sharded/model-00002-of-00002.safetensors"
    )))
    .unwrap();
    let shards = [
        (format!("{DIR}model-00001-of-00002.safetensors"), &s1),
        (format!("{DIR}model-00002-of-00002.safetensors"), &s2),
    ];
    let ok = check_against_index(
        &shards,
        include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/safetensors/sharded/model.safetensors.index.json"
        )),
    )
    .unwrap();
    assert!(ok.is_consistent(), "{:?}", ok.problems);
    assert_eq!(ok.actual_total_size, 896);
    let broken = check_against_index(
        &shards,
        include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/safetensors/sharded/index_missing_shard.json"
        )),
    )
    .unwrap();
    assert_eq!(
        broken.problems,
        [IndexProblem::MissingShard {
            shard: "model-00003-of-00003.safetensors".into(),
            tensors: vec!["model.layers.1.mlp.up_proj.weight".into()]
        }]
    );
    let r = Report::from_headers(&[s1, s2]);
    assert_eq!(r.total_bytes, 896);
    assert_eq!(r.parameter_count, 448);
}
