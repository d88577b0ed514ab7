//! Tests that build headers from their records, which only this module can do: the
//! record layout and random valid files parsed back.
// Tests cast small, known values.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]

use super::*;
use crate::safetensors::tests::file;
use crate::safetensors::Report;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The record packs the dtype above the dimension count: every dtype and
/// the largest dimension count a header can hold come back unchanged.
#[test]
fn a_tensor_record_keeps_dtype_and_dimension_count() {
    let most = (MAX_HEADER_SIZE / 2) as usize;
    assert!(most < 1 << Entry::NDIM_BITS && Dtype::ALL.len() <= 1 << (32 - Entry::NDIM_BITS));
    for (i, d) in Dtype::ALL.into_iter().enumerate() {
        assert_eq!(d as usize, i, "Dtype::ALL is in discriminant order");
        for ndim in [0, 1, 2, most] {
            let e = Entry::new((3, 5), (7, 1), (9, ndim as u32), d);
            assert_eq!((e.dtype(), e.ndim() as usize), (d, ndim));
            assert_eq!(e.dims(), 9..9 + ndim);
            assert_eq!(e.view("abcdefghij", &[]).name, "h");
        }
        let mut t = Tensors::default();
        t.dims.extend([4, 5, 6]);
        t.end("w", d, 1, (3, 5));
        let view = t.entries[0].view(&t.names, &t.dims);
        let expected = TensorInfo {
            name: "w",
            dtype: d,
            shape: &[5, 6],
            data_offsets: (3, 5),
        };
        assert_eq!(view, expected);
    }
    assert_eq!(std::mem::size_of::<Entry>(), 32);
}

// ---- property-style ------------------------------------------------------------

/// xorshift64*: deterministic, no external crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn index(&mut self, n: usize) -> usize {
        usize::try_from(self.below(n as u64)).unwrap()
    }
}

/// A random valid file and the header it must parse to.
fn random_file(rng: &mut Rng) -> (Vec<u8>, Header) {
    const NAME_PARTS: [&str; 6] = ["model", "layers", "experts", "q\"uo\\te", "é✓", "weight"];
    let count = rng.index(8);
    let mut specs = Vec::new();
    for i in 0..count {
        let dtype = Dtype::ALL[rng.index(Dtype::ALL.len())];
        let mut shape: Vec<u64> = (0..rng.below(4)).map(|_| rng.below(7)).collect();
        let elements: u64 = shape.iter().product();
        if dtype.bytes_for(elements).is_err() {
            shape.push(8);
        }
        let name = format!(
            "{}.{i}.{}",
            NAME_PARTS[rng.index(6)],
            NAME_PARTS[rng.index(6)]
        );
        specs.push((name, dtype, shape));
    }
    // Lay the data out in a random order, independent of the JSON order.
    let mut order: Vec<usize> = (0..count).collect();
    for i in (1..count).rev() {
        order.swap(i, rng.index(i + 1));
    }
    let mut offsets = vec![(0, 0); count];
    let mut cursor = 0u64;
    for &i in &order {
        let elements: u64 = specs[i].2.iter().product();
        let bytes = specs[i].1.bytes_for(elements).unwrap();
        offsets[i] = (cursor, cursor + bytes);
        cursor += bytes;
    }
    let mut map = serde_json::Map::new();
    let mut metadata = Vec::new();
    if rng.below(2) == 0 {
        let mut meta = serde_json::Map::new();
        for k in 0..rng.below(3) {
            meta.insert(format!("key{k}"), Value::String(format!("v\"{k}\n")));
            metadata.push((format!("key{k}"), format!("v\"{k}\n")));
        }
        map.insert("__metadata__".into(), Value::Object(meta));
    }
    let mut rows = Vec::new();
    for (i, (name, dtype, shape)) in specs.into_iter().enumerate() {
        map.insert(
            name.clone(),
            json!({"dtype": dtype.name(), "shape": shape, "data_offsets": [offsets[i].0, offsets[i].1]}),
        );
        rows.push((offsets[i], name, dtype, shape));
    }
    rows.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    let mut tensors = Tensors::default();
    for (offsets, name, dtype, shape) in rows {
        let mark = tensors.dims_mark();
        for d in shape {
            tensors.dim(d);
        }
        tensors.end(&name, dtype, mark, offsets);
    }
    let mut json = Value::Object(map).to_string();
    json.push_str(&" ".repeat(rng.index(8)));
    let bytes = file(&json, usize::try_from(cursor).unwrap());
    let header = Header {
        names: tensors.names,
        dims: tensors.dims,
        entries: tensors.entries,
        metadata,
        header_len: json.len() as u64,
        data_len: cursor,
        repeated: Vec::new(),
    };
    (bytes, header)
}

#[test]
fn random_valid_headers_round_trip() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..500 {
        let (bytes, expected) = random_file(&mut rng);
        let parsed = parse_file(&bytes)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&bytes)));
        assert_eq!(parsed, expected);
        let report = Report::from_headers(&[parsed]);
        assert_eq!(report.tensor_count, expected.tensor_count() as u64);
        assert_eq!(report.total_bytes, expected.data_len);
    }
}

#[test]
fn random_mutations_never_panic() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let mut outcomes = BTreeMap::<&'static str, u32>::new();
    for _ in 0..300 {
        let (original, _) = random_file(&mut rng);
        for _ in 0..20 {
            let mut bytes = original.clone();
            for _ in 0..=rng.below(3) {
                match rng.below(6) {
                    0 if !bytes.is_empty() => {
                        let i = rng.index(bytes.len());
                        bytes[i] = u8::try_from(rng.below(256)).unwrap();
                    }
                    1 => bytes.truncate(rng.index(bytes.len() + 1)),
                    2 => {
                        let i = rng.index(bytes.len() + 1);
                        bytes.insert(i, b"{}[]\",:0-9e.\xff "[rng.index(14)]);
                    }
                    3 if !bytes.is_empty() => {
                        bytes.remove(rng.index(bytes.len()));
                    }
                    4 if bytes.len() >= 8 => {
                        let n = if rng.below(2) == 0 {
                            rng.next()
                        } else {
                            rng.below(200)
                        };
                        bytes[..8].copy_from_slice(&n.to_le_bytes());
                    }
                    _ => {
                        // Turn a digit into a long run of nines.
                        if let Some(i) = bytes.iter().position(u8::is_ascii_digit) {
                            let nines = vec![b'9'; rng.index(25)];
                            bytes.splice(i..=i, nines);
                        }
                    }
                }
            }
            let result = parse_file(&bytes);
            let kind = match &result {
                Ok(h) => {
                    let _ = Report::from_headers(std::slice::from_ref(h));
                    "Ok"
                }
                Err(e) => {
                    assert!(!e.to_string().is_empty());
                    e.kind()
                }
            };
            *outcomes.entry(kind).or_default() += 1;
            let _ = header_len(&bytes);
            let _ = parse_header(bytes.get(8..).unwrap_or_default(), Some(bytes.len() as u64));
            let _ = parse_header(&bytes, None);
        }
    }
    // The mutations reach deep into validation, not only the JSON parser.
    assert!(outcomes.len() >= 8, "{outcomes:?}");
}
