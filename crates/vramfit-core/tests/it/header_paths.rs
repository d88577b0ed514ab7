//! The safetensors header parser has a fast path (a hand-written scanner for
//! the JSON real headers use) and a general path (`serde_json` values). The
//! fast path must never change a result: for every input, `parse_header` and
//! `parse_header_via_serde` return the same header or the same error. These
//! properties generate headers around the edges of what the scanner accepts
//! (escapes, extra fields, duplicate keys, odd numbers, whitespace, metadata)
//! and mutate them byte by byte.

use proptest::prelude::*;
use vramfit_core::safetensors::{parse_header, parse_header_via_serde, Dtype};

const NAMES: &[&str] = &[
    "w",
    "model.layers.0.mlp.up_proj.weight",
    "model.layers.0.mlp.up_proj.weight",
    "é",
    r#"a\"b"#,
    r"\u0077",
    "",
    "__metadata__",
    "x\ty",
];
const DTYPES: &[&str] = &["BF16", "F32", "U8", "F4", "F6_E2M3", "bf16", "X", "I64"];
const SPACES: &[&str] = &["", "", "", " ", "\n", "\t", "\r\n  "];
const NUMBERS: &[&str] = &[
    "1",
    "1",
    "2",
    "0",
    "00",
    "01",
    "-1",
    "-0",
    "1.0",
    "1e1",
    "1E1",
    "2.",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999",
];

#[derive(Debug, Clone)]
struct Entry {
    name: usize,
    dtype: usize,
    shape: Vec<u64>,
    odd_number: Option<(usize, usize)>,
    order: usize,
    extra: bool,
    duplicate_field: bool,
    overlap: bool,
}

fn entry() -> impl Strategy<Value = Entry> {
    (
        0..NAMES.len(),
        0..DTYPES.len(),
        prop::collection::vec(0u64..4, 0..6),
        prop::option::weighted(0.15, (0..NUMBERS.len(), 0usize..4)),
        0usize..6,
        prop::bool::weighted(0.1),
        prop::bool::weighted(0.05),
        prop::bool::weighted(0.05),
    )
        .prop_map(
            |(name, dtype, shape, odd_number, order, extra, duplicate_field, overlap)| Entry {
                name,
                dtype,
                shape,
                odd_number,
                order,
                extra,
                duplicate_field,
                overlap,
            },
        )
}

/// Writes a header for `entries`, with consistent offsets unless an entry says
/// otherwise, and returns it with the data length it implies.
fn header(entries: &[Entry], metadata: Option<u8>, ws: &[usize]) -> (String, u64) {
    let mut k = 0usize;
    let mut sp = || {
        k += 1;
        SPACES[ws[k % ws.len()] % SPACES.len()]
    };
    let mut out = format!("{}{{", sp());
    let mut offset = 0u64;
    let mut first = true;
    if let Some(kind) = metadata {
        let value = match kind % 4 {
            0 => r#"{"format":"pt"}"#,
            1 => r#"{"format":"pt","b":"c"}"#,
            2 => r#"{"format":1}"#,
            _ => r#"{"a":"x","a":"y"}"#,
        };
        out += &format!(r#"{}"__metadata__"{}:{}{value}"#, sp(), sp(), sp());
        first = false;
    }
    for e in entries {
        let bits = Dtype::from_name(DTYPES[e.dtype]).map_or(8, Dtype::bits);
        let elements: u64 = e.shape.iter().product();
        let bytes = elements * bits / 8;
        let begin = if e.overlap {
            offset.saturating_sub(1)
        } else {
            offset
        };
        let end = begin + bytes;
        offset = end;
        let dims: Vec<String> = e.shape.iter().map(u64::to_string).collect();
        let mut numbers = [dims.join(","), begin.to_string(), end.to_string()];
        if let Some((n, at)) = e.odd_number {
            numbers[at % 3] = NUMBERS[n].to_owned();
        }
        let mut fields = vec![
            format!(r#""dtype"{}:{}"{}""#, sp(), sp(), DTYPES[e.dtype]),
            format!(r#""shape"{}:{}[{}]"#, sp(), sp(), numbers[0]),
            format!(
                r#""data_offsets"{}:{}[{},{}{}]"#,
                sp(),
                sp(),
                numbers[1],
                sp(),
                numbers[2]
            ),
        ];
        fields.rotate_left(e.order % 3);
        if e.order >= 3 {
            fields.swap(0, 1);
        }
        if e.extra {
            fields.push(r#""extra":[1,{"a":null}]"#.to_owned());
        }
        if e.duplicate_field {
            fields.push(format!(
                r#""dtype":"{}""#,
                DTYPES[(e.dtype + 1) % DTYPES.len()]
            ));
        }
        if !first {
            out += ",";
        }
        first = false;
        out += &format!(
            r#"{}"{}"{}:{}{{{}}}"#,
            sp(),
            NAMES[e.name],
            sp(),
            sp(),
            fields.join(",")
        );
    }
    out += "}";
    out += sp();
    (out, offset)
}

fn same(bytes: &[u8], file_size: Option<u64>) -> Result<(), TestCaseError> {
    let fast = parse_header(bytes, file_size);
    let general = parse_header_via_serde(bytes, file_size);
    prop_assert_eq!(fast, general, "input: {:?}", String::from_utf8_lossy(bytes));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn fast_path_and_general_path_agree(
        entries in prop::collection::vec(entry(), 0..6),
        metadata in prop::option::of(any::<u8>()),
        ws in prop::collection::vec(any::<usize>(), 1..8),
        size_delta in prop::option::of(-2i64..3),
    ) {
        let (text, data_len) = header(&entries, metadata, &ws);
        let file_size = size_delta.map(|d| {
            (8 + text.len() as u64 + data_len).saturating_add_signed(d)
        });
        same(text.as_bytes(), file_size)?;
    }

    #[test]
    fn paths_agree_on_mutated_headers(
        entries in prop::collection::vec(entry(), 1..4),
        ws in prop::collection::vec(any::<usize>(), 1..4),
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<u8>()), 1..4),
    ) {
        let (text, _) = header(&entries, None, &ws);
        let mut bytes = text.into_bytes();
        const SIGNIFICANT: &[u8] = b"{}[]:,\"\\ 0123456789-.eE\x00\x1ft";
        for (at, op, b) in edits {
            let i = at.index(bytes.len() + 1);
            let byte = if b % 2 == 0 { SIGNIFICANT[usize::from(b) % SIGNIFICANT.len()] } else { b };
            match op {
                0 if i < bytes.len() => bytes[i] = byte,
                1 if i < bytes.len() => { bytes.remove(i); }
                _ => bytes.insert(i, byte),
            }
        }
        same(&bytes, None)?;
    }
}

#[test]
fn paths_agree_on_hand_picked_edges() {
    let cases: &[&str] = &[
        "",
        " ",
        "{}",
        " { } ",
        "[]",
        "null",
        "{} x",
        "{}\u{feff}",
        "\u{feff}{}",
        r#"{"__metadata__":{}}"#,
        r#"{"__metadata__":{},"__metadata__":{}}"#,
        r#"{"__metadata__":{"b":"2","a":"1"}}"#,
        r#"{"__metadata__":{"a":"1","a":"2"}}"#,
        r#"{"__metadata__":{"a":"\u0041"}}"#,
        r#"{"__metadata__":[]}"#,
        r#"{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}"#,
        r#"{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"w":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}"#,
        r#"{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"dtype":"U8"}}"#,
        r#"{"w":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1],"data_offsets":[0,1]}}"#,
        r#"{"w":{"dtype":"U8","shape":[1,1,1,1,1],"data_offsets":[0,1]}}"#,
        r#"{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1,2]}}"#,
        r#"{"w":{"dtype":"U8","shape":[1],"data_offsets":[0]}}"#,
        r#"{"w":{"dtype":"U8","shape":[01],"data_offsets":[0,1]}}"#,
        r#"{"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1e0]}}"#,
        r#"{"w":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,1]}}"#,
        r#"{"w":{"dtype":"U64","shape":[4611686018427387904],"data_offsets":[0,0]}}"#,
        r#"{"w":{"dtype":"U8","shape":[],"data_offsets":[0,1]},}"#,
        r#"{"w":{"dtype":"U8","shape":[],"data_offsets":[0,1]}"#,
        r#"{"w\u0000":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}"#,
        "{\"w\u{1}\":{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1]}}",
        r#"{"w":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}                "#,
        r#"{"b":{"dtype":"U8","shape":[],"data_offsets":[1,2]},"a":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}"#,
        r#"{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}"#,
    ];
    for case in cases {
        for size in [None, Some(8 + case.len() as u64 + 1), Some(0), Some(3)] {
            assert_eq!(
                parse_header(case.as_bytes(), size),
                parse_header_via_serde(case.as_bytes(), size),
                "{case:?} with file size {size:?}"
            );
        }
    }
    // Not UTF-8 at all.
    let bad = b"{\"\xff\":{}}";
    assert_eq!(parse_header(bad, None), parse_header_via_serde(bad, None));
}
