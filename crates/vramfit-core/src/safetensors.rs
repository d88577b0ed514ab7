//! Safetensors header parser: reads the JSON header of a `.safetensors` file
//! (never the tensor data) and summarises what a checkpoint holds.
//!
//! The rules follow the reference implementation, huggingface/safetensors
//! `safetensors/src/tensor.rs` (`SafeTensors::read_metadata` and
//! `Metadata::validate`):
//!
//! * A file is `N` (8 bytes, little-endian `u64`), then `N` bytes of UTF-8
//!   JSON, then the data section. `N` may not exceed [`MAX_HEADER_SIZE`]
//!   (100 000 000), and the header must lie inside the file.
//! * The JSON is an object. The optional key `__metadata__` maps strings to
//!   strings; every other key is a tensor name whose value holds `dtype` (one
//!   of the names in [`Dtype`]), `shape` (array of non-negative integers) and
//!   `data_offsets` (`[begin, end]`, relative to the start of the data
//!   section). Other fields of a tensor entry are ignored, as in the reference.
//! * Sorted by `data_offsets`, the tensors tile the data section exactly: the
//!   first begins at 0, each begins where the previous one ended, and
//!   `begin <= end`.
//! * `end - begin` equals `elements * bits / 8`, where `elements` is the product
//!   of the shape (1 for the scalar shape `[]`), and `elements * bits` must be
//!   a whole number of bytes (sub-byte dtypes `F4`, `F6_E2M3`, `F6_E3M2`).
//! * The last `end` is the end of the file: `8 + N + end == file size`.
//!
//! Differences from the reference, all stricter or more precise: every byte
//! count is a `u64` with checked arithmetic (the reference uses `usize`, which
//! is 32 bits on `wasm32` while shards exceed 4 GiB); a tensor name listed twice
//! in the header is an error (the reference keeps the last one silently); and
//! each error names the tensor and the byte numbers involved.
//!
//! On top of the parser, [`Report::from_headers`] summarises the shards of one
//! model (parameter and byte counts per dtype, quantization scheme, MoE split)
//! and [`check_against_index`] cross-checks shards against
//! `model.safetensors.index.json`.
//!
//! # Example
//!
//! ```
//! use vramfit_core::safetensors::{header_len, parse_header, Dtype, Report};
//!
//! // A file with one BF16 tensor of shape [2, 2] (8 bytes of data).
//! let json = br#"{"w":{"dtype":"BF16","shape":[2,2],"data_offsets":[0,8]}}"#;
//! let mut file = (json.len() as u64).to_le_bytes().to_vec();
//! file.extend_from_slice(json);
//! file.extend_from_slice(&[0u8; 8]);
//!
//! let n = header_len(&file[..8])?;
//! let header_bytes = &file[8..8 + n as usize];
//! let header = parse_header(header_bytes, Some(file.len() as u64))?;
//! let w = header.tensor("w").expect("one tensor");
//! assert_eq!((w.dtype, w.shape), (Dtype::BF16, &[2, 2][..]));
//! assert_eq!(header.data_len, 8);
//!
//! let report = Report::from_headers(&[header]);
//! assert_eq!(report.parameter_count, 4);
//! assert_eq!(report.total_bytes, 8);
//! # Ok::<(), vramfit_core::safetensors::HeaderError>(())
//! ```

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

mod scan;

/// The largest header the reference accepts, in bytes (`MAX_HEADER_SIZE`).
pub const MAX_HEADER_SIZE: u64 = 100_000_000;

/// Length of the little-endian `u64` header-size prefix.
const PREFIX_LEN: u64 = 8;

// ---------------------------------------------------------------------------
// Dtype
// ---------------------------------------------------------------------------

/// Element type of a tensor: every dtype of the reference `Dtype` enum, in its
/// order (increasing alignment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(non_camel_case_types)]
pub enum Dtype {
    /// Boolean, one byte per element.
    BOOL,
    /// MXFP4 element (E2M1), 4 bits: two per byte.
    F4,
    /// MXFP6 element (E2M3), 6 bits.
    F6_E2M3,
    /// MXFP6 element (E3M2), 6 bits.
    F6_E3M2,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 8-bit integer.
    I8,
    /// FP8 E5M2.
    F8_E5M2,
    /// FP8 E4M3 (`float8_e4m3fn`).
    F8_E4M3,
    /// FP8 E8M0 (MX block scale).
    F8_E8M0,
    /// FP8 E4M3, finite with unsigned zero (`float8_e4m3fnuz`).
    F8_E4M3FNUZ,
    /// FP8 E5M2, finite with unsigned zero (`float8_e5m2fnuz`).
    F8_E5M2FNUZ,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// IEEE half precision.
    F16,
    /// bfloat16.
    BF16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
    /// IEEE single precision.
    F32,
    /// Complex number made of two F32.
    C64,
    /// IEEE double precision.
    F64,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 64-bit integer.
    U64,
}

impl Dtype {
    /// Every dtype, in the reference order.
    pub const ALL: [Dtype; 22] = [
        Dtype::BOOL,
        Dtype::F4,
        Dtype::F6_E2M3,
        Dtype::F6_E3M2,
        Dtype::U8,
        Dtype::I8,
        Dtype::F8_E5M2,
        Dtype::F8_E4M3,
        Dtype::F8_E8M0,
        Dtype::F8_E4M3FNUZ,
        Dtype::F8_E5M2FNUZ,
        Dtype::I16,
        Dtype::U16,
        Dtype::F16,
        Dtype::BF16,
        Dtype::I32,
        Dtype::U32,
        Dtype::F32,
        Dtype::C64,
        Dtype::F64,
        Dtype::I64,
        Dtype::U64,
    ];

    /// The name the format uses in headers, e.g. `"BF16"` or `"F8_E4M3"`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::BOOL => "BOOL",
            Dtype::F4 => "F4",
            Dtype::F6_E2M3 => "F6_E2M3",
            Dtype::F6_E3M2 => "F6_E3M2",
            Dtype::U8 => "U8",
            Dtype::I8 => "I8",
            Dtype::F8_E5M2 => "F8_E5M2",
            Dtype::F8_E4M3 => "F8_E4M3",
            Dtype::F8_E8M0 => "F8_E8M0",
            Dtype::F8_E4M3FNUZ => "F8_E4M3FNUZ",
            Dtype::F8_E5M2FNUZ => "F8_E5M2FNUZ",
            Dtype::I16 => "I16",
            Dtype::U16 => "U16",
            Dtype::F16 => "F16",
            Dtype::BF16 => "BF16",
            Dtype::I32 => "I32",
            Dtype::U32 => "U32",
            Dtype::F32 => "F32",
            Dtype::C64 => "C64",
            Dtype::F64 => "F64",
            Dtype::I64 => "I64",
            Dtype::U64 => "U64",
        }
    }

    /// Size of one element in bits (the reference `Dtype::bitsize`).
    #[must_use]
    pub const fn bits(self) -> u64 {
        match self {
            Dtype::F4 => 4,
            Dtype::F6_E2M3 | Dtype::F6_E3M2 => 6,
            Dtype::BOOL
            | Dtype::U8
            | Dtype::I8
            | Dtype::F8_E5M2
            | Dtype::F8_E4M3
            | Dtype::F8_E8M0
            | Dtype::F8_E4M3FNUZ
            | Dtype::F8_E5M2FNUZ => 8,
            Dtype::I16 | Dtype::U16 | Dtype::F16 | Dtype::BF16 => 16,
            Dtype::I32 | Dtype::U32 | Dtype::F32 => 32,
            Dtype::C64 | Dtype::F64 | Dtype::I64 | Dtype::U64 => 64,
        }
    }

    /// The dtype with this exact (case-sensitive) header name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Dtype> {
        Some(match name {
            "BOOL" => Dtype::BOOL,
            "F4" => Dtype::F4,
            "F6_E2M3" => Dtype::F6_E2M3,
            "F6_E3M2" => Dtype::F6_E3M2,
            "U8" => Dtype::U8,
            "I8" => Dtype::I8,
            "F8_E5M2" => Dtype::F8_E5M2,
            "F8_E4M3" => Dtype::F8_E4M3,
            "F8_E8M0" => Dtype::F8_E8M0,
            "F8_E4M3FNUZ" => Dtype::F8_E4M3FNUZ,
            "F8_E5M2FNUZ" => Dtype::F8_E5M2FNUZ,
            "I16" => Dtype::I16,
            "U16" => Dtype::U16,
            "F16" => Dtype::F16,
            "BF16" => Dtype::BF16,
            "I32" => Dtype::I32,
            "U32" => Dtype::U32,
            "F32" => Dtype::F32,
            "C64" => Dtype::C64,
            "F64" => Dtype::F64,
            "I64" => Dtype::I64,
            "U64" => Dtype::U64,
            _ => return None,
        })
    }

    /// Byte count of `elements` elements of this dtype.
    ///
    /// # Errors
    ///
    /// `Err(None)` on `u64` overflow, `Err(Some(bits))` when the elements do
    /// not fill a whole number of bytes (sub-byte dtypes).
    fn bytes_for(self, elements: u64) -> Result<u64, Option<u64>> {
        // elements * bits / 8, split so that no spurious overflow occurs when
        // elements * bits exceeds u64 but the byte count does not.
        let bits = self.bits();
        let whole = (elements / 8).checked_mul(bits).ok_or(None)?;
        let rest_bits = (elements % 8) * bits; // at most 7 * 64
        if !rest_bits.is_multiple_of(8) {
            return Err(Some(rest_bits % 8));
        }
        whole.checked_add(rest_bits / 8).ok_or(None)
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Dtype {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

// ---------------------------------------------------------------------------
// Header
// ---------------------------------------------------------------------------

/// One tensor entry of a header: a view into the [`Header`] that holds it
/// (see [`Header::tensors`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TensorInfo<'h> {
    /// The tensor name (the JSON key).
    pub name: &'h str,
    /// Element type.
    pub dtype: Dtype,
    /// Shape; `[]` is a scalar (one element).
    pub shape: &'h [u64],
    /// `[begin, end)` byte range, relative to the start of the data section.
    pub data_offsets: (u64, u64),
}

impl TensorInfo<'_> {
    /// Number of elements (product of the shape), or `None` on overflow.
    /// Never overflows for a tensor of a successfully parsed [`Header`].
    #[must_use]
    pub fn element_count(&self) -> Option<u64> {
        self.shape
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d))
    }

    /// Size of the tensor data in bytes (`end - begin`).
    #[must_use]
    pub fn byte_len(&self) -> u64 {
        self.data_offsets.1.saturating_sub(self.data_offsets.0)
    }
}

/// A validated safetensors header.
///
/// Storage: the tensor names are one string, the shapes one list of
/// dimensions, and each tensor a fixed 40-byte record that points into both.
/// A 200 000-tensor header is so three allocations, not 400 000 (a `String`
/// and a shape per tensor), and about two thirds of the memory
/// (docs/PERFORMANCE.md, "Native benchmarks").
#[derive(Clone)]
pub struct Header {
    names: String,
    dims: Vec<u64>,
    /// Sorted by `data_offsets`, then name.
    entries: Vec<Entry>,
    /// `__metadata__` entries, sorted by key.
    pub metadata: Vec<(String, String)>,
    /// `N`: the length of the JSON header in bytes (padding included).
    pub header_len: u64,
    /// Length of the data section in bytes: the `end` of the last tensor.
    pub data_len: u64,
}

/// A tensor record of [`Header`], 32 bytes: ranges of its `names` and `dims`.
/// The `u32`s cannot overflow: names and dimensions come from a header of at
/// most [`MAX_HEADER_SIZE`] (10^8) bytes, and each dimension takes at least
/// two of them, so a tensor has fewer than 2^26 dimensions; the top five bits
/// of `ndim_dtype` hold the dtype's index in [`Dtype::ALL`].
#[derive(Clone, Copy)]
struct Entry {
    begin: u64,
    end: u64,
    name_start: u32,
    name_len: u32,
    dims_start: u32,
    ndim_dtype: u32,
}

impl Entry {
    const NDIM_BITS: u32 = 27;

    /// A record from its byte range, name range (start, length), dimension
    /// range (start, count) and dtype.
    fn new(data: (u64, u64), name: (u32, u32), dims: (u32, u32), dtype: Dtype) -> Entry {
        Entry {
            begin: data.0,
            end: data.1,
            name_start: name.0,
            name_len: name.1,
            dims_start: dims.0,
            ndim_dtype: dims.1 | (dtype as u32) << Entry::NDIM_BITS,
        }
    }

    fn ndim(self) -> u32 {
        self.ndim_dtype & ((1 << Entry::NDIM_BITS) - 1)
    }

    fn dtype(self) -> Dtype {
        let i = (self.ndim_dtype >> Entry::NDIM_BITS) as usize;
        Dtype::ALL.get(i).copied().unwrap_or(Dtype::U8)
    }

    fn dims(self) -> std::ops::Range<usize> {
        self.dims_start as usize..(self.dims_start + self.ndim()) as usize
    }

    fn name(self, names: &str) -> &str {
        let start = self.name_start as usize;
        names
            .get(start..start + self.name_len as usize)
            .unwrap_or_default()
    }

    /// The tensor, read from the `names` and `dims` its ranges point into.
    fn view<'a>(self, names: &'a str, dims: &'a [u64]) -> TensorInfo<'a> {
        TensorInfo {
            name: self.name(names),
            dtype: self.dtype(),
            shape: dims.get(self.dims()).unwrap_or_default(),
            data_offsets: (self.begin, self.end),
        }
    }
}

impl Header {
    /// The tensors, sorted by `data_offsets`.
    pub fn tensors(&self) -> impl ExactSizeIterator<Item = TensorInfo<'_>> + Clone + '_ {
        self.entries.iter().map(|e| e.view(&self.names, &self.dims))
    }

    /// The number of tensors.
    #[must_use]
    pub fn tensor_count(&self) -> usize {
        self.entries.len()
    }

    /// The tensor with this name.
    #[must_use]
    pub fn tensor(&self, name: &str) -> Option<TensorInfo<'_>> {
        self.tensors().find(|t| t.name == name)
    }

    /// The size of the file this header describes: `8 + header_len + data_len`
    /// (saturating).
    #[must_use]
    pub fn file_size(&self) -> u64 {
        PREFIX_LEN
            .saturating_add(self.header_len)
            .saturating_add(self.data_len)
    }

    /// The `__metadata__` value for `key`.
    #[must_use]
    pub fn metadata_value(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

impl PartialEq for Header {
    fn eq(&self, other: &Self) -> bool {
        self.header_len == other.header_len
            && self.data_len == other.data_len
            && self.metadata == other.metadata
            && self.tensors().eq(other.tensors())
    }
}

impl Eq for Header {}

impl fmt::Debug for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Header")
            .field("tensors", &self.tensors().collect::<Vec<_>>())
            .field("metadata", &self.metadata)
            .field("header_len", &self.header_len)
            .field("data_len", &self.data_len)
            .finish()
    }
}

/// The same fields as the `Debug` form: `tensors` (a list of
/// [`TensorInfo`]), `metadata`, `header_len`, `data_len`.
impl Serialize for Header {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct List<'a>(&'a Header);
        impl Serialize for List<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.tensors())
            }
        }
        let mut st = serializer.serialize_struct("Header", 4)?;
        st.serialize_field("tensors", &List(self))?;
        st.serialize_field("metadata", &self.metadata)?;
        st.serialize_field("header_len", &self.header_len)?;
        st.serialize_field("data_len", &self.data_len)?;
        st.end()
    }
}

/// The tensors of a header under construction: what both parse paths fill.
#[derive(Default)]
struct Tensors {
    names: String,
    dims: Vec<u64>,
    entries: Vec<Entry>,
}

impl Tensors {
    /// Room for about `header_len / 60` tensors (every entry takes at least
    /// ~60 bytes of header). Address space only: pages are touched as filled,
    /// and [`Tensors::shrink`] gives back the rest.
    fn for_header(header_len: usize) -> Tensors {
        Tensors {
            names: String::with_capacity(header_len / 2),
            dims: Vec::with_capacity(header_len / 30),
            entries: Vec::with_capacity(header_len / 60),
        }
    }

    fn name(&self, e: &Entry) -> &str {
        e.name(&self.names)
    }

    /// Starts a tensor: its dimensions follow with [`Tensors::dim`], then
    /// [`Tensors::end`] records it.
    fn dims_mark(&self) -> usize {
        self.dims.len()
    }

    fn dim(&mut self, d: u64) {
        self.dims.push(d);
    }

    /// Records a tensor whose dimensions were pushed since `dims_mark`.
    // Casts: see `Entry` (every count is below MAX_HEADER_SIZE < 2^32).
    #[allow(clippy::cast_possible_truncation)]
    fn end(&mut self, name: &str, dtype: Dtype, dims_mark: usize, (begin, end): (u64, u64)) {
        let (name_start, name_len) = (self.names.len() as u32, name.len() as u32);
        self.names.push_str(name);
        let dims = (dims_mark as u32, (self.dims.len() - dims_mark) as u32);
        self.entries.push(Entry::new(
            (begin, end),
            (name_start, name_len),
            dims,
            dtype,
        ));
    }

    /// Every tensor, in record order (for tests).
    #[cfg(test)]
    fn rows(&self) -> Vec<TensorInfo<'_>> {
        self.entries
            .iter()
            .map(|e| e.view(&self.names, &self.dims))
            .collect()
    }

    fn shrink(&mut self) {
        self.names.shrink_to_fit();
        self.dims.shrink_to_fit();
        self.entries.shrink_to_fit();
    }
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/// Why a header (or an index file) was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderError {
    /// The file is 0 bytes long.
    EmptyFile,
    /// Fewer than the 8 bytes of the length prefix.
    FileTooShort {
        /// Bytes available.
        len: u64,
    },
    /// The length prefix exceeds [`MAX_HEADER_SIZE`].
    HeaderTooLarge {
        /// The declared header length.
        header_len: u64,
    },
    /// `8 + header_len` exceeds the file size.
    HeaderBeyondFile {
        /// The declared header length.
        header_len: u64,
        /// The file size.
        file_size: u64,
    },
    /// The header bytes are not UTF-8.
    InvalidUtf8 {
        /// Offset of the first invalid byte within the header.
        valid_up_to: u64,
    },
    /// The header is not well-formed JSON (serde's message).
    InvalidJson(String),
    /// The header is valid JSON but not an object.
    NotAnObject {
        /// What it is instead, e.g. `"an array"`.
        found: &'static str,
    },
    /// A key appears twice in the header object.
    DuplicateKey {
        /// The key.
        key: String,
    },
    /// `__metadata__` is not an object of string values.
    InvalidMetadata {
        /// What is wrong.
        reason: String,
    },
    /// A tensor entry is not an object with `dtype`, `shape`, `data_offsets`.
    InvalidTensorEntry {
        /// Tensor name.
        tensor: String,
        /// What is wrong.
        reason: String,
    },
    /// The dtype name is not one of [`Dtype::ALL`].
    UnknownDtype {
        /// Tensor name.
        tensor: String,
        /// The unknown name.
        dtype: String,
    },
    /// Element or byte count of a tensor overflows `u64`.
    Overflow {
        /// Tensor name.
        tensor: String,
    },
    /// A sub-byte tensor does not fill a whole number of bytes.
    MisalignedSubByte {
        /// Tensor name.
        tensor: String,
        /// Its dtype.
        dtype: Dtype,
        /// Its shape.
        shape: Vec<u64>,
    },
    /// `end - begin` differs from `elements * bits / 8`.
    SizeMismatch {
        /// Tensor name.
        tensor: String,
        /// Its dtype.
        dtype: Dtype,
        /// Its shape.
        shape: Vec<u64>,
        /// Bytes implied by dtype and shape.
        expected: u64,
        /// Bytes spanned by `data_offsets`.
        actual: u64,
    },
    /// `data_offsets` has `begin > end`.
    MisorderedOffsets {
        /// Tensor name.
        tensor: String,
        /// Declared begin.
        begin: u64,
        /// Declared end.
        end: u64,
    },
    /// Bytes between the previous tensor (or the data start) and this tensor
    /// belong to no tensor.
    Gap {
        /// Tensor name.
        tensor: String,
        /// The tensor before it in offset order, if any.
        previous: Option<String>,
        /// Where the previous tensor ends (0 for the first tensor).
        expected_begin: u64,
        /// Where this tensor begins.
        begin: u64,
    },
    /// This tensor begins before the previous tensor ends.
    Overlap {
        /// Tensor name.
        tensor: String,
        /// The tensor it overlaps.
        previous: String,
        /// Where the previous tensor ends.
        previous_end: u64,
        /// Where this tensor begins.
        begin: u64,
    },
    /// A tensor ends past the end of the file.
    PastEnd {
        /// The first tensor (in offset order) that ends past the data section.
        tensor: String,
        /// Its end offset.
        end: u64,
        /// Bytes in the data section (`file_size - 8 - header_len`).
        data_available: u64,
    },
    /// The tensors end before the end of the file (the reference's
    /// `MetadataIncompleteBuffer`).
    DataEndMismatch {
        /// Bytes covered by tensors.
        covered: u64,
        /// Bytes in the data section.
        data_available: u64,
    },
    /// A `model.safetensors.index.json` is malformed.
    InvalidIndex {
        /// What is wrong.
        reason: String,
    },
}

impl HeaderError {
    /// The variant name, e.g. `"SizeMismatch"` (stable, for tests and UIs).
    #[must_use]
    pub const fn kind(&self) -> &'static str {
        match self {
            HeaderError::EmptyFile => "EmptyFile",
            HeaderError::FileTooShort { .. } => "FileTooShort",
            HeaderError::HeaderTooLarge { .. } => "HeaderTooLarge",
            HeaderError::HeaderBeyondFile { .. } => "HeaderBeyondFile",
            HeaderError::InvalidUtf8 { .. } => "InvalidUtf8",
            HeaderError::InvalidJson(_) => "InvalidJson",
            HeaderError::NotAnObject { .. } => "NotAnObject",
            HeaderError::DuplicateKey { .. } => "DuplicateKey",
            HeaderError::InvalidMetadata { .. } => "InvalidMetadata",
            HeaderError::InvalidTensorEntry { .. } => "InvalidTensorEntry",
            HeaderError::UnknownDtype { .. } => "UnknownDtype",
            HeaderError::Overflow { .. } => "Overflow",
            HeaderError::MisalignedSubByte { .. } => "MisalignedSubByte",
            HeaderError::SizeMismatch { .. } => "SizeMismatch",
            HeaderError::MisorderedOffsets { .. } => "MisorderedOffsets",
            HeaderError::Gap { .. } => "Gap",
            HeaderError::Overlap { .. } => "Overlap",
            HeaderError::PastEnd { .. } => "PastEnd",
            HeaderError::DataEndMismatch { .. } => "DataEndMismatch",
            HeaderError::InvalidIndex { .. } => "InvalidIndex",
        }
    }
}

/// Formats a shape as `[4, 4]`.
struct ShapeFmt<'a>(&'a [u64]);

impl fmt::Display for ShapeFmt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::EmptyFile => f.write_str("the file is empty (0 bytes)"),
            HeaderError::FileTooShort { len } => write!(
                f,
                "the file is {len} bytes long, shorter than the 8-byte header length prefix"
            ),
            HeaderError::HeaderTooLarge { header_len } => write!(
                f,
                "the header length prefix says {header_len} bytes, over the {MAX_HEADER_SIZE}-byte \
                 limit of the format (is this a safetensors file?)"
            ),
            HeaderError::HeaderBeyondFile {
                header_len,
                file_size,
            } => write!(
                f,
                "the header length prefix says {header_len} bytes, but the file is only \
                 {file_size} bytes long (8-byte prefix + header would need {})",
                header_len.saturating_add(PREFIX_LEN)
            ),
            HeaderError::InvalidUtf8 { valid_up_to } => write!(
                f,
                "the header is not valid UTF-8 (first bad byte at header offset {valid_up_to})"
            ),
            HeaderError::InvalidJson(msg) => write!(f, "the header is not valid JSON: {msg}"),
            HeaderError::NotAnObject { found } => {
                write!(f, "the header must be a JSON object, found {found}")
            }
            HeaderError::DuplicateKey { key } => {
                write!(f, "the header lists `{key}` more than once")
            }
            HeaderError::InvalidMetadata { reason } => {
                write!(f, "`__metadata__` is invalid: {reason}")
            }
            HeaderError::InvalidTensorEntry { tensor, reason } => {
                write!(f, "tensor `{tensor}` has an invalid entry: {reason}")
            }
            HeaderError::UnknownDtype { tensor, dtype } => write!(
                f,
                "tensor `{tensor}` has unknown dtype `{dtype}` (known: {})",
                Dtype::ALL.map(Dtype::name).join(", ")
            ),
            HeaderError::Overflow { tensor } => write!(
                f,
                "tensor `{tensor}`: its element or byte count overflows 64 bits"
            ),
            HeaderError::MisalignedSubByte {
                tensor,
                dtype,
                shape,
            } => write!(
                f,
                "tensor `{tensor}` has dtype {dtype} ({} bits) and shape {}, which is not a whole \
                 number of bytes",
                dtype.bits(),
                ShapeFmt(shape)
            ),
            HeaderError::SizeMismatch {
                tensor,
                dtype,
                shape,
                expected,
                actual,
            } => write!(
                f,
                "tensor `{tensor}` has dtype {dtype} and shape {} = {expected} bytes, but its \
                 data_offsets span {actual} bytes",
                ShapeFmt(shape)
            ),
            HeaderError::MisorderedOffsets { tensor, begin, end } => write!(
                f,
                "tensor `{tensor}` has data_offsets [{begin}, {end}]: begin is after end"
            ),
            HeaderError::Gap {
                tensor,
                previous,
                expected_begin,
                begin,
            } => match previous {
                Some(prev) => write!(
                    f,
                    "tensor `{tensor}` begins at data byte {begin}, but the previous tensor \
                     `{prev}` ends at byte {expected_begin}: bytes {expected_begin}..{begin} \
                     belong to no tensor"
                ),
                None => write!(
                    f,
                    "the first tensor `{tensor}` begins at data byte {begin} instead of 0: \
                     bytes 0..{begin} belong to no tensor"
                ),
            },
            HeaderError::Overlap {
                tensor,
                previous,
                previous_end,
                begin,
            } => write!(
                f,
                "tensor `{tensor}` begins at data byte {begin}, inside tensor `{previous}` which \
                 ends at byte {previous_end}: bytes {begin}..{previous_end} are claimed twice"
            ),
            HeaderError::PastEnd {
                tensor,
                end,
                data_available,
            } => write!(
                f,
                "tensor `{tensor}` ends at data byte {end}, past the end of the file: the data \
                 section is {data_available} bytes (data is {data_available} bytes but tensors \
                 cover at least {end})"
            ),
            HeaderError::DataEndMismatch {
                covered,
                data_available,
            } => write!(
                f,
                "data is {data_available} bytes but tensors cover {covered}: {} trailing bytes \
                 belong to no tensor",
                data_available.saturating_sub(*covered)
            ),
            HeaderError::InvalidIndex { reason } => {
                write!(f, "the safetensors index is invalid: {reason}")
            }
        }
    }
}

impl std::error::Error for HeaderError {}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

/// Reads the header length `N` from the first 8 bytes of a file (bytes after
/// the 8th are ignored, so the whole file may be passed).
///
/// # Errors
///
/// [`HeaderError::FileTooShort`] with fewer than 8 bytes;
/// [`HeaderError::HeaderTooLarge`] when `N` exceeds [`MAX_HEADER_SIZE`].
/// Whether `N` fits in the file is checked by [`parse_header`] when it is
/// given the file size (or by [`parse_file`]).
pub fn header_len(first8: &[u8]) -> Result<u64, HeaderError> {
    let Some(prefix) = first8.first_chunk::<8>() else {
        return Err(HeaderError::FileTooShort {
            len: first8.len() as u64,
        });
    };
    let n = u64::from_le_bytes(*prefix);
    if n > MAX_HEADER_SIZE {
        return Err(HeaderError::HeaderTooLarge { header_len: n });
    }
    Ok(n)
}

/// Parses a whole file held in memory: length prefix, header, and the check
/// that the tensors end exactly at the end of `file`.
///
/// # Errors
///
/// [`HeaderError::EmptyFile`], [`HeaderError::HeaderBeyondFile`], and every
/// error of [`header_len`] and [`parse_header`].
pub fn parse_file(file: &[u8]) -> Result<Header, HeaderError> {
    if file.is_empty() {
        return Err(HeaderError::EmptyFile);
    }
    let n = header_len(file)?;
    let file_size = file.len() as u64;
    let beyond = HeaderError::HeaderBeyondFile {
        header_len: n,
        file_size,
    };
    // n <= MAX_HEADER_SIZE, so it fits in a 32-bit usize.
    let end = usize::try_from(n + PREFIX_LEN).map_err(|_| beyond.clone())?;
    let json = file.get(8..end).ok_or(beyond)?;
    parse_header(json, Some(file_size))
}

/// Parses and validates the JSON header: `header_json` is exactly the `N`
/// bytes after the 8-byte prefix. With `file_size`, also checks that the
/// header and the tensors fit the file and that the tensors end exactly at
/// its end, as the reference does.
///
/// # Errors
///
/// File-level: [`HeaderError::EmptyFile`] (`file_size` is 0),
/// [`HeaderError::FileTooShort`], [`HeaderError::HeaderTooLarge`],
/// [`HeaderError::HeaderBeyondFile`]. Syntax: [`HeaderError::InvalidUtf8`],
/// [`HeaderError::InvalidJson`], [`HeaderError::NotAnObject`],
/// [`HeaderError::DuplicateKey`], [`HeaderError::InvalidMetadata`],
/// [`HeaderError::InvalidTensorEntry`], [`HeaderError::UnknownDtype`].
/// Layout: [`HeaderError::Overflow`], [`HeaderError::MisalignedSubByte`],
/// [`HeaderError::SizeMismatch`], [`HeaderError::MisorderedOffsets`],
/// [`HeaderError::Gap`], [`HeaderError::Overlap`], and with `file_size`
/// [`HeaderError::PastEnd`] and [`HeaderError::DataEndMismatch`].
pub fn parse_header(header_json: &[u8], file_size: Option<u64>) -> Result<Header, HeaderError> {
    parse_header_with(header_json, file_size, true)
}

/// [`parse_header`] without its fast path: every header goes through
/// `serde_json`. Kept for the differential tests and the fuzz target, which
/// check that both give the same result (including the same error) for
/// every input.
///
/// # Errors
///
/// As [`parse_header`].
#[doc(hidden)]
pub fn parse_header_via_serde(
    header_json: &[u8],
    file_size: Option<u64>,
) -> Result<Header, HeaderError> {
    parse_header_with(header_json, file_size, false)
}

/// The parse, with or without the fast path ([`scan`]), which hands anything it does not
/// handle to the `serde_json` path.
fn parse_header_with(
    header_json: &[u8],
    file_size: Option<u64>,
    fast: bool,
) -> Result<Header, HeaderError> {
    let header_len = header_json.len() as u64;
    if header_len > MAX_HEADER_SIZE {
        return Err(HeaderError::HeaderTooLarge { header_len });
    }
    let data_available = data_available(header_len, file_size)?;
    let text = std::str::from_utf8(header_json).map_err(|e| HeaderError::InvalidUtf8 {
        valid_up_to: e.valid_up_to() as u64,
    })?;
    let (mut tensors, metadata) = match fast.then(|| scan::entries(text)).flatten() {
        Some(parsed) => parsed,
        None => entries_via_serde(text)?,
    };
    finish(&mut tensors, data_available)?;
    let data_len = tensors.entries.last().map_or(0, |e| e.end);
    Ok(Header {
        names: tensors.names,
        dims: tensors.dims,
        entries: tensors.entries,
        metadata,
        header_len,
        data_len,
    })
}

type Entries = (Tensors, Vec<(String, String)>);

/// The general path: `serde_json` reads the header into values, which are
/// then checked entry by entry with a precise error for each problem.
fn entries_via_serde(text: &str) -> Result<Entries, HeaderError> {
    let entries = match serde_json::from_str::<RawTop>(text) {
        Ok(RawTop::Object(entries)) => entries,
        Ok(RawTop::Other(found)) => return Err(HeaderError::NotAnObject { found }),
        Err(e) => return Err(HeaderError::InvalidJson(e.to_string())),
    };

    let mut seen = BTreeSet::new();
    let mut metadata = Vec::new();
    let mut tensors = Tensors::default();
    for (key, value) in &entries {
        if !seen.insert(key.as_str()) {
            return Err(HeaderError::DuplicateKey { key: key.clone() });
        }
        if key == "__metadata__" {
            metadata = parse_metadata(value)?;
        } else {
            parse_entry(key, value, &mut tensors)?;
        }
    }
    tensors.shrink();
    Ok((tensors, metadata))
}

/// What the data section may hold: the file size minus prefix and header.
fn data_available(header_len: u64, file_size: Option<u64>) -> Result<Option<u64>, HeaderError> {
    match file_size {
        None => Ok(None),
        Some(0) => Err(HeaderError::EmptyFile),
        Some(len) if len < PREFIX_LEN => Err(HeaderError::FileTooShort { len }),
        Some(file_size) => {
            let header_end = PREFIX_LEN + header_len; // header_len <= 1e8
            if header_end > file_size {
                return Err(HeaderError::HeaderBeyondFile {
                    header_len,
                    file_size,
                });
            }
            Ok(Some(file_size - header_end))
        }
    }
}

/// Sorts the tensors by offset and checks the layout against the file.
fn finish(tensors: &mut Tensors, data_available: Option<u64>) -> Result<(), HeaderError> {
    // The reference sorts by data_offsets; the name breaks ties so that the
    // order (and so the first error reported) is deterministic.
    let Tensors { names, entries, .. } = tensors;
    let order = |a: &Entry, b: &Entry| {
        (a.begin, a.end)
            .cmp(&(b.begin, b.end))
            .then_with(|| a.name(names).cmp(b.name(names)))
    };
    if !entries.is_sorted_by(|a, b| order(a, b).is_le()) {
        // The program's one shared sort (`order`): the reference writer stores
        // tensors in offset order, so this runs only for other writers' files.
        crate::order::sort_by(entries, order);
    }

    let data_len = validate_layout(tensors)?;

    if let Some(available) = data_available {
        if data_len > available {
            let (tensor, end) = tensors
                .entries
                .iter()
                .find(|e| e.end > available)
                .map_or((String::new(), data_len), |e| {
                    (tensors.name(e).to_owned(), e.end)
                });
            return Err(HeaderError::PastEnd {
                tensor,
                end,
                data_available: available,
            });
        }
        if data_len < available {
            return Err(HeaderError::DataEndMismatch {
                covered: data_len,
                data_available: available,
            });
        }
    }
    Ok(())
}

/// Checks offsets and sizes of tensors sorted by offset; returns the data
/// length (end of the last tensor).
fn validate_layout(tensors: &Tensors) -> Result<u64, HeaderError> {
    let mut cursor = 0u64;
    let mut previous: Option<&str> = None;
    for e in &tensors.entries {
        let t = e.view(&tensors.names, &tensors.dims);
        let (begin, end) = t.data_offsets;
        if end < begin {
            return Err(HeaderError::MisorderedOffsets {
                tensor: t.name.to_owned(),
                begin,
                end,
            });
        }
        if begin > cursor {
            return Err(HeaderError::Gap {
                tensor: t.name.to_owned(),
                previous: previous.map(str::to_owned),
                expected_begin: cursor,
                begin,
            });
        }
        if begin < cursor {
            return Err(HeaderError::Overlap {
                tensor: t.name.to_owned(),
                previous: previous.unwrap_or_default().to_owned(),
                previous_end: cursor,
                begin,
            });
        }
        let overflow = || HeaderError::Overflow {
            tensor: t.name.to_owned(),
        };
        let elements = t.element_count().ok_or_else(overflow)?;
        let expected = t.dtype.bytes_for(elements).map_err(|err| match err {
            None => overflow(),
            Some(_) => HeaderError::MisalignedSubByte {
                tensor: t.name.to_owned(),
                dtype: t.dtype,
                shape: t.shape.to_vec(),
            },
        })?;
        let actual = end - begin;
        if actual != expected {
            return Err(HeaderError::SizeMismatch {
                tensor: t.name.to_owned(),
                dtype: t.dtype,
                shape: t.shape.to_vec(),
                expected,
                actual,
            });
        }
        cursor = end;
        previous = Some(t.name);
    }
    Ok(cursor)
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn parse_metadata(value: &Value) -> Result<Vec<(String, String)>, HeaderError> {
    let Value::Object(map) = value else {
        return Err(HeaderError::InvalidMetadata {
            reason: format!(
                "expected an object of string values, found {}",
                json_kind(value)
            ),
        });
    };
    let mut entries = map
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            other => Err(HeaderError::InvalidMetadata {
                reason: format!(
                    "value of `{k}` must be a string, found {}",
                    json_kind(other)
                ),
            }),
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Sorted whatever map type serde_json was built with.
    crate::order::sort_by(&mut entries, |a, b| a.0.cmp(&b.0));
    Ok(entries)
}

fn parse_entry(name: &str, value: &Value, out: &mut Tensors) -> Result<(), HeaderError> {
    let invalid = |reason: String| HeaderError::InvalidTensorEntry {
        tensor: name.to_owned(),
        reason,
    };
    let Value::Object(obj) = value else {
        return Err(invalid(format!(
            "expected an object with dtype, shape and data_offsets, found {}",
            json_kind(value)
        )));
    };
    let field = |key: &str| {
        obj.get(key)
            .ok_or_else(|| invalid(format!("missing `{key}`")))
    };
    let dtype = match field("dtype")? {
        Value::String(s) => Dtype::from_name(s).ok_or_else(|| HeaderError::UnknownDtype {
            tensor: name.to_owned(),
            dtype: s.clone(),
        })?,
        other => {
            return Err(invalid(format!(
                "`dtype` must be a string, found {}",
                json_kind(other)
            )))
        }
    };
    let u64_array = |key: &str| -> Result<Vec<u64>, HeaderError> {
        let Value::Array(items) = field(key)? else {
            return Err(invalid(format!(
                "`{key}` must be an array of non-negative integers"
            )));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_u64().ok_or_else(|| {
                    invalid(format!(
                        "`{key}[{i}]` must be a non-negative integer below 2^64, found {v}"
                    ))
                })
            })
            .collect()
    };
    let shape = u64_array("shape")?;
    let offsets = u64_array("data_offsets")?;
    let [begin, end] = offsets[..] else {
        return Err(invalid(format!(
            "`data_offsets` must be [begin, end], found {} numbers",
            offsets.len()
        )));
    };
    let mark = out.dims_mark();
    for d in shape {
        out.dim(d);
    }
    out.end(name, dtype, mark, (begin, end));
    Ok(())
}

/// The top-level JSON value, keeping object entries in order (duplicates
/// included) and reporting what anything else is.
enum RawTop {
    Object(Vec<(String, Value)>),
    Other(&'static str),
}

impl<'de> Deserialize<'de> for RawTop {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TopVisitor)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = RawTop;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawTop, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry::<String, Value>()? {
            entries.push(entry);
        }
        Ok(RawTop::Object(entries))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawTop, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(RawTop::Other("an array"))
    }

    fn visit_bool<E>(self, _: bool) -> Result<RawTop, E> {
        Ok(RawTop::Other("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<RawTop, E> {
        Ok(RawTop::Other("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<RawTop, E> {
        Ok(RawTop::Other("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<RawTop, E> {
        Ok(RawTop::Other("a number"))
    }

    fn visit_str<E>(self, _: &str) -> Result<RawTop, E> {
        Ok(RawTop::Other("a string"))
    }

    fn visit_unit<E>(self) -> Result<RawTop, E> {
        Ok(RawTop::Other("null"))
    }
}

// ---------------------------------------------------------------------------
// Report
// ---------------------------------------------------------------------------

/// Quantization scheme detected from tensor names and dtypes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Quantization {
    /// No packed or scaled weights found.
    None,
    /// GPTQ: `qweight` (packed int32) + `scales` + `qzeros` + `g_idx`.
    Gptq,
    /// AWQ: `qweight` + `scales` + `qzeros`, without `g_idx`.
    Awq,
    /// FP8 weights (`F8_E4M3`/`F8_E5M2`) with `weight_scale` or
    /// `weight_scale_inv` tensors.
    Fp8 {
        /// Scale tensors are 2-D with both dimensions above 1 (block scaling,
        /// e.g. 128x128 as in DeepSeek-V3) rather than per-tensor or
        /// per-channel.
        block_scaled: bool,
    },
    /// compressed-tensors packed integers: `weight_packed` + `weight_scale`.
    CompressedTensorsInt,
    /// MXFP4 (as gpt-oss): U8 `*_blocks` + U8 `*_scales`.
    Mxfp4,
    /// NVFP4: U8 packed weights + F8_E4M3 `weight_scale` + `weight_scale_2`
    /// or `weight_global_scale`.
    Nvfp4,
    /// bitsandbytes: `.absmax` / `.quant_map` (4-bit) or `.SCB` (8-bit).
    BitsAndBytes,
}

impl Quantization {
    /// A short human name, e.g. `"GPTQ"` or `"FP8 (block-scaled)"`.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Quantization::None => "none",
            Quantization::Gptq => "GPTQ",
            Quantization::Awq => "AWQ",
            Quantization::Fp8 { block_scaled: true } => "FP8 (block-scaled)",
            Quantization::Fp8 {
                block_scaled: false,
            } => "FP8",
            Quantization::CompressedTensorsInt => "compressed-tensors int",
            Quantization::Mxfp4 => "MXFP4",
            Quantization::Nvfp4 => "NVFP4",
            Quantization::BitsAndBytes => "bitsandbytes",
        }
    }
}

/// Split of the (logical) parameters between MoE experts and the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
pub struct MoeSplit {
    /// Logical parameters of tensors whose name contains `.experts.` (and not
    /// `shared_expert`).
    pub expert_parameters: u64,
    /// Logical parameters of all other tensors (attention, embeddings, shared
    /// experts, routers, norms).
    pub shared_parameters: u64,
    /// Number of expert tensors.
    pub expert_tensor_count: u64,
}

impl MoeSplit {
    /// Whether any expert tensor was found.
    #[must_use]
    pub const fn is_moe(&self) -> bool {
        self.expert_tensor_count > 0
    }
}

/// Summary of the shards of one model.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Report {
    /// Number of tensors over all shards.
    pub tensor_count: u64,
    /// Raw element count summed over all tensors, as the reference counts
    /// elements (a packed int32 holding eight 4-bit weights counts once).
    pub parameter_count: u64,
    /// Element count with packed weights unpacked: GPTQ/AWQ `qweight` int32
    /// x8 (or the factor implied by `g_idx`/`scales` shapes), compressed-tensors
    /// int32 `weight_packed` x8, MXFP4 `_blocks` x2, NVFP4 packed U8 x2,
    /// bitsandbytes 4-bit U8 x2. Scales, zeros and indices count as stored.
    pub logical_parameter_count: u64,
    /// Raw elements per dtype name.
    pub elements_per_dtype: BTreeMap<String, u64>,
    /// Bytes per dtype name.
    pub bytes_per_dtype: BTreeMap<String, u64>,
    /// Dtype names present, sorted.
    pub dtypes: Vec<String>,
    /// Bytes of tensor data over all shards.
    pub total_bytes: u64,
    /// F32 holds more than half of the bytes.
    pub fp32_checkpoint: bool,
    /// `total_bytes * 8 / parameter_count` (0 without parameters). Not read back from JSON:
    /// [`Report::refresh_ratios`] recomputes it.
    #[serde(skip_deserializing)]
    pub effective_bits_per_param: f64,
    /// `total_bytes * 8 / logical_parameter_count` (0 without parameters). Not read back
    /// from JSON, like the one above.
    #[serde(skip_deserializing)]
    pub effective_bits_per_logical_param: f64,
    /// Detected quantization scheme.
    pub quantization: Quantization,
    /// Expert vs non-expert parameters (logical counts).
    pub moe: MoeSplit,
    /// Things a user sizing this model should know.
    pub warnings: Vec<String>,
}

/// Splits `a.b.c` into (`a.b`, `c`).
fn split_leaf(name: &str) -> (&str, &str) {
    name.rsplit_once('.').unwrap_or(("", name))
}

fn is_expert_tensor(name: &str) -> bool {
    name.contains(".experts.") && !name.contains("shared_expert")
}

/// All tensors of all shards by name (first occurrence wins).
struct TensorIndex<'a> {
    by_name: BTreeMap<&'a str, TensorInfo<'a>>,
    /// Which of [`LEAVES`] occur as a last name component, found in one pass.
    leaves: [bool; LEAVES.len()],
}

/// The last name components [`detect_quantization`] asks about.
const LEAVES: [&str; 7] = [
    "qweight",
    "scales",
    "qzeros",
    "g_idx",
    "absmax",
    "quant_map",
    "SCB",
];

impl<'a> TensorIndex<'a> {
    fn sibling(&self, prefix: &str, leaf: &str) -> Option<TensorInfo<'a>> {
        if prefix.is_empty() {
            self.by_name.get(leaf).copied()
        } else {
            self.by_name
                .get(format!("{prefix}.{leaf}").as_str())
                .copied()
        }
    }

    fn new(by_name: BTreeMap<&'a str, TensorInfo<'a>>) -> Self {
        let mut leaves = [false; LEAVES.len()];
        for name in by_name.keys() {
            for (seen, leaf) in leaves.iter_mut().zip(LEAVES) {
                *seen |= leaf_is(name, leaf);
            }
        }
        TensorIndex { by_name, leaves }
    }

    /// Whether some tensor's last name component is `leaf`, one of [`LEAVES`].
    fn has_leaf(&self, leaf: &str) -> bool {
        debug_assert!(LEAVES.contains(&leaf), "`{leaf}` is not in LEAVES");
        LEAVES
            .iter()
            .position(|&l| l == leaf)
            .is_some_and(|i| self.leaves[i])
    }
}

/// How a tensor is packed, for the logical parameter count.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Packing {
    Plain,
    QWeight(u64),
    CompressedInt,
    Mxfp4,
    Nvfp4,
    Bnb4,
}

impl Packing {
    const fn factor(self) -> u64 {
        match self {
            Packing::Plain => 1,
            Packing::QWeight(f) => f,
            Packing::CompressedInt => 8,
            Packing::Mxfp4 | Packing::Nvfp4 | Packing::Bnb4 => 2,
        }
    }
}

/// Whether `leaf` is the last component of `name` (`a.b.leaf` or `leaf`): a suffix test,
/// cheaper than [`split_leaf`], which the report calls only for the tensors it must.
fn leaf_is(name: &str, leaf: &str) -> bool {
    name.strip_suffix(leaf)
        .is_some_and(|p| p.is_empty() || p.ends_with('.'))
}

fn packing_of(t: &TensorInfo<'_>, idx: &TensorIndex<'_>) -> Packing {
    let int32 = matches!(t.dtype, Dtype::I32 | Dtype::U32);
    if !int32 && t.dtype != Dtype::U8 {
        return Packing::Plain;
    }
    let (prefix, leaf) = split_leaf(t.name);
    if leaf == "qweight" && int32 {
        return Packing::QWeight(qweight_factor(t, prefix, idx));
    }
    if t.dtype == Dtype::U8 {
        if let Some(stem) = t.name.strip_suffix("_blocks") {
            if idx
                .by_name
                .get(format!("{stem}_scales").as_str())
                .is_some_and(|s| s.dtype == Dtype::U8)
            {
                return Packing::Mxfp4;
            }
        }
        if (leaf == "weight_packed" || leaf == "weight") && is_nvfp4_weight(prefix, idx) {
            return Packing::Nvfp4;
        }
        if leaf == "weight"
            && (idx.sibling(t.name, "absmax").is_some()
                || idx.sibling(t.name, "quant_map").is_some())
        {
            return Packing::Bnb4;
        }
    }
    if leaf == "weight_packed" && int32 && idx.sibling(prefix, "weight_scale").is_some() {
        return Packing::CompressedInt;
    }
    Packing::Plain
}

fn is_nvfp4_weight(prefix: &str, idx: &TensorIndex<'_>) -> bool {
    idx.sibling(prefix, "weight_scale")
        .is_some_and(|s| s.dtype == Dtype::F8_E4M3)
        && (idx.sibling(prefix, "weight_scale_2").is_some()
            || idx.sibling(prefix, "weight_global_scale").is_some())
}

/// Elements per int32 of a GPTQ/AWQ `qweight` (32 / bits), from sibling
/// shapes when they tell, else 8 (4-bit).
fn qweight_factor(qweight: &TensorInfo<'_>, prefix: &str, idx: &TensorIndex<'_>) -> u64 {
    let plausible = |f: u64| (2..=16).contains(&f).then_some(f);
    let from_shapes = || -> Option<u64> {
        let [rows, cols] = qweight.shape[..] else {
            return None;
        };
        let scales = idx.sibling(prefix, "scales")?;
        let &out = scales.shape.last()?;
        if out == cols {
            // GPTQ layout [in * bits / 32, out]; g_idx has `in` entries.
            let g_idx = idx.sibling(prefix, "g_idx")?;
            let [in_features] = g_idx.shape[..] else {
                return None;
            };
            (rows > 0 && in_features.is_multiple_of(rows)).then(|| in_features / rows)
        } else {
            // AWQ layout [in, out * bits / 32].
            (cols > 0 && out.is_multiple_of(cols)).then(|| out / cols)
        }
    };
    from_shapes().and_then(plausible).unwrap_or(8)
}

fn detect_quantization(idx: &TensorIndex<'_>) -> Quantization {
    let tensors = || idx.by_name.values().copied();
    let mxfp4 = tensors().any(|t| {
        t.dtype == Dtype::U8
            && t.name.strip_suffix("_blocks").is_some_and(|stem| {
                idx.by_name
                    .get(format!("{stem}_scales").as_str())
                    .is_some_and(|s| s.dtype == Dtype::U8)
            })
    });
    if mxfp4 {
        return Quantization::Mxfp4;
    }
    let nvfp4 = tensors().any(|t| {
        t.dtype == Dtype::U8 && {
            let (prefix, leaf) = split_leaf(t.name);
            (leaf == "weight_packed" || leaf == "weight") && is_nvfp4_weight(prefix, idx)
        }
    });
    if nvfp4 {
        return Quantization::Nvfp4;
    }
    let compressed = tensors().any(|t| {
        leaf_is(t.name, "weight_packed")
            && idx.sibling(split_leaf(t.name).0, "weight_scale").is_some()
    });
    if compressed {
        return Quantization::CompressedTensorsInt;
    }
    if idx.has_leaf("qweight") && idx.has_leaf("scales") && idx.has_leaf("qzeros") {
        return if idx.has_leaf("g_idx") {
            Quantization::Gptq
        } else {
            Quantization::Awq
        };
    }
    if idx.has_leaf("absmax") || idx.has_leaf("quant_map") || idx.has_leaf("SCB") {
        return Quantization::BitsAndBytes;
    }
    let mut fp8 = false;
    let mut block_scaled = false;
    for t in tensors() {
        if !matches!(t.dtype, Dtype::F8_E4M3 | Dtype::F8_E5M2) || !leaf_is(t.name, "weight") {
            continue;
        }
        let prefix = split_leaf(t.name).0;
        for scale_leaf in ["weight_scale", "weight_scale_inv"] {
            if let Some(scale) = idx.sibling(prefix, scale_leaf) {
                fp8 = true;
                if scale.shape.len() == 2 && scale.shape.iter().all(|&d| d > 1) {
                    block_scaled = true;
                }
            }
        }
    }
    if fp8 {
        return Quantization::Fp8 { block_scaled };
    }
    Quantization::None
}

fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        num as f64 / den as f64
    }
}

impl Report {
    /// Summarises the headers of the shards of one model.
    #[must_use]
    pub fn from_headers(headers: &[Header]) -> Report {
        let mut by_name: BTreeMap<&str, TensorInfo<'_>> = BTreeMap::new();
        let mut duplicates = BTreeSet::new();
        for t in headers.iter().flat_map(Header::tensors) {
            // First occurrence wins; one search per tensor.
            match by_name.entry(t.name) {
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(t);
                }
                std::collections::btree_map::Entry::Occupied(_) => {
                    duplicates.insert(t.name);
                }
            }
        }
        let idx = TensorIndex::new(by_name);

        let mut tensor_count = 0u64;
        let mut parameter_count = 0u64;
        let mut logical_parameter_count = 0u64;
        let mut total_bytes = 0u64;
        // (elements, bytes, seen) per dtype in `Dtype::ALL` order; named at the end, not
        // once per tensor.
        let mut per_dtype = [(0u64, 0u64, false); Dtype::ALL.len()];
        let mut moe = MoeSplit::default();
        // Which packings occur (by rank), and the smallest and largest qweight factor.
        let mut packed_kinds = [false; 6];
        let mut packed_factors: Option<(u64, u64)> = None;

        for t in headers.iter().flat_map(Header::tensors) {
            let elements = t.element_count().unwrap_or(u64::MAX);
            let bytes = t.byte_len();
            let packing = packing_of(&t, &idx);
            let logical = elements.saturating_mul(packing.factor());
            if packing != Packing::Plain {
                packed_kinds[usize::from(packing_rank(packing))] = true;
                if let Packing::QWeight(f) = packing {
                    packed_factors =
                        Some(packed_factors.map_or((f, f), |(lo, hi)| (lo.min(f), hi.max(f))));
                }
            }
            tensor_count += 1;
            parameter_count = parameter_count.saturating_add(elements);
            logical_parameter_count = logical_parameter_count.saturating_add(logical);
            total_bytes = total_bytes.saturating_add(bytes);
            if let Some(i) = Dtype::ALL.iter().position(|&d| d == t.dtype) {
                let (e, b, seen) = &mut per_dtype[i];
                *e = e.saturating_add(elements);
                *b = b.saturating_add(bytes);
                *seen = true;
            }
            if is_expert_tensor(t.name) {
                moe.expert_parameters = moe.expert_parameters.saturating_add(logical);
                moe.expert_tensor_count += 1;
            } else {
                moe.shared_parameters = moe.shared_parameters.saturating_add(logical);
            }
        }

        // Filled by insertion: collecting into a map sorts, with a sort of its own in the wasm.
        let name = |f: fn(&(u64, u64, bool)) -> u64| -> BTreeMap<String, u64> {
            let mut named = BTreeMap::new();
            for (d, v) in Dtype::ALL.iter().zip(&per_dtype).filter(|(_, v)| v.2) {
                named.insert(d.name().to_owned(), f(v));
            }
            named
        };
        let elements_per_dtype = name(|v| v.0);
        let bytes_per_dtype = name(|v| v.1);
        let f32_bytes = bytes_per_dtype.get("F32").copied().unwrap_or(0);
        let fp32_checkpoint = f32_bytes > total_bytes.saturating_sub(f32_bytes);
        let quantization = detect_quantization(&idx);

        let mut warnings = Vec::new();
        if tensor_count == 0 {
            warnings.push("no tensors: these headers describe an empty checkpoint".to_owned());
        }
        if fp32_checkpoint {
            warnings.push(
                "this is an fp32 checkpoint: 4 bytes per parameter; load it with \
                 torch_dtype=bfloat16 to halve it"
                    .to_owned(),
            );
        }
        for (rank, _) in packed_kinds.iter().enumerate().filter(|(_, &seen)| seen) {
            warnings.push(packing_warning(
                rank,
                packed_factors.unwrap_or((8, 8)),
                logical_parameter_count,
            ));
        }
        if let Some(first) = duplicates.iter().next() {
            warnings.push(format!(
                "{} tensor name(s) appear in more than one shard (e.g. `{first}`); they are \
                 counted once per shard",
                duplicates.len()
            ));
        }

        let mut report = Report {
            tensor_count,
            parameter_count,
            logical_parameter_count,
            dtypes: elements_per_dtype.keys().cloned().collect(),
            elements_per_dtype,
            bytes_per_dtype,
            total_bytes,
            fp32_checkpoint,
            effective_bits_per_param: 0.0,
            effective_bits_per_logical_param: 0.0,
            quantization,
            moe,
            warnings,
        };
        report.refresh_ratios();
        report
    }

    /// Computes the two bits-per-parameter ratios from the counts. A report read back from
    /// JSON (the web app's import worker sends it to the page that way) gets them from here,
    /// so they equal the sender's bit for bit: a JSON float need not read back exactly.
    pub fn refresh_ratios(&mut self) {
        let bits = self.total_bytes.saturating_mul(8);
        self.effective_bits_per_param = ratio(bits, self.parameter_count);
        self.effective_bits_per_logical_param = ratio(bits, self.logical_parameter_count);
    }
}

/// Orders packing kinds for deterministic warnings.
const fn packing_rank(p: Packing) -> u8 {
    match p {
        Packing::Plain => 0,
        Packing::QWeight(_) => 1,
        Packing::CompressedInt => 2,
        Packing::Mxfp4 => 3,
        Packing::Nvfp4 => 4,
        Packing::Bnb4 => 5,
    }
}

/// The warning for packing `rank` (see [`packing_rank`]); `(lo, hi)`: the smallest and
/// largest qweight factor seen.
fn packing_warning(rank: usize, (lo, hi): (u64, u64), logical: u64) -> String {
    match rank {
        1 => {
            let factor = if lo == hi {
                format!("{lo}x")
            } else {
                format!("{lo}x to {hi}x")
            };
            let bits = if lo == hi && 32u64.is_multiple_of(lo) {
                format!("int{}", 32 / lo)
            } else {
                "int".to_owned()
            };
            format!(
                "packed {bits} weights: parameter_count counts packed int32 elements, the \
                 logical parameter count is about {factor} for those tensors \
                 (logical_parameter_count = {logical})"
            )
        }
        2 => format!(
            "compressed-tensors packed weights: parameter_count counts packed int32 elements; \
             logical_parameter_count assumes 4-bit (8 per int32) = {logical}"
        ),
        3 => format!(
            "MXFP4 weights: `_blocks` tensors hold two 4-bit values per U8 byte, so \
             parameter_count counts half of them (logical_parameter_count = {logical})"
        ),
        4 => format!(
            "NVFP4 weights: packed U8 tensors hold two 4-bit values per byte, so \
             parameter_count counts half of them (logical_parameter_count = {logical})"
        ),
        _ => format!(
            "bitsandbytes 4-bit weights: U8 tensors hold two 4-bit values per byte, so \
             parameter_count counts half of them (logical_parameter_count = {logical})"
        ),
    }
}

// ---------------------------------------------------------------------------
// Index check
// ---------------------------------------------------------------------------

/// One inconsistency between `model.safetensors.index.json` and the shards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum IndexProblem {
    /// The index maps tensors to a shard that was not supplied.
    MissingShard {
        /// Shard file name.
        shard: String,
        /// Tensors the index places in it.
        tensors: Vec<String>,
    },
    /// The index lists a tensor that no supplied shard holds (its shard was
    /// supplied).
    TensorNotFound {
        /// Tensor name.
        tensor: String,
        /// Shard the index names.
        shard: String,
    },
    /// The tensor is in a different shard than the index says.
    WrongShard {
        /// Tensor name.
        tensor: String,
        /// Shard the index names.
        index_shard: String,
        /// Shard that holds it.
        found_in: String,
    },
    /// A shard holds a tensor the index does not list.
    NotInIndex {
        /// Tensor name.
        tensor: String,
        /// Shard that holds it.
        shard: String,
    },
    /// A supplied shard is not referenced by the index.
    UnusedShard {
        /// Shard file name.
        shard: String,
    },
    /// `metadata.total_size` differs from the bytes of the tensors (only
    /// checked when no shard is missing).
    TotalSizeMismatch {
        /// `metadata.total_size`.
        declared: u64,
        /// Sum of tensor bytes over the shards.
        actual: u64,
    },
}

impl fmt::Display for IndexProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexProblem::MissingShard { shard, tensors } => write!(
                f,
                "shard `{shard}` is missing; the index places {} tensor(s) in it",
                tensors.len()
            ),
            IndexProblem::TensorNotFound { tensor, shard } => write!(
                f,
                "the index places tensor `{tensor}` in `{shard}`, but no shard holds it"
            ),
            IndexProblem::WrongShard {
                tensor,
                index_shard,
                found_in,
            } => write!(
                f,
                "the index places tensor `{tensor}` in `{index_shard}`, but it is in `{found_in}`"
            ),
            IndexProblem::NotInIndex { tensor, shard } => write!(
                f,
                "tensor `{tensor}` of shard `{shard}` is not listed in the index"
            ),
            IndexProblem::UnusedShard { shard } => {
                write!(f, "shard `{shard}` is not referenced by the index")
            }
            IndexProblem::TotalSizeMismatch { declared, actual } => write!(
                f,
                "the index declares total_size {declared} bytes, but the tensors hold {actual}"
            ),
        }
    }
}

/// Result of [`check_against_index`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexCheck {
    /// Number of tensors in `weight_map`.
    pub indexed_tensors: u64,
    /// Distinct shard names in `weight_map`, sorted.
    pub indexed_shards: Vec<String>,
    /// `metadata.total_size`, if present.
    pub declared_total_size: Option<u64>,
    /// Sum of tensor bytes over the supplied shards.
    pub actual_total_size: u64,
    /// Everything that does not match.
    pub problems: Vec<IndexProblem>,
}

impl IndexCheck {
    /// No problems found.
    #[must_use]
    pub fn is_consistent(&self) -> bool {
        self.problems.is_empty()
    }
}

/// File name part of a path (`a/b/model-00001.safetensors` -> `model-00001.safetensors`).
fn base_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

fn parse_total_size(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64().and_then(|f| {
                // Some writers emit floats; accept exact non-negative integers.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let u = f as u64;
                (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(u)
            })
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Cross-checks shard headers against `model.safetensors.index.json`.
/// `shards` pairs each shard's file name (a path is reduced to its file name)
/// with its parsed header.
///
/// # Errors
///
/// [`HeaderError::InvalidIndex`] when the index is not JSON, not an object,
/// lacks a `weight_map` object of strings, or has a `metadata.total_size`
/// that is not a non-negative integer.
pub fn check_against_index(
    shards: &[(String, &Header)],
    index_json: &[u8],
) -> Result<IndexCheck, HeaderError> {
    let invalid = |reason: String| HeaderError::InvalidIndex { reason };
    let root: Value =
        crate::json_from_bytes(index_json).map_err(|e| invalid(format!("not valid JSON: {e}")))?;
    let Value::Object(root) = root else {
        return Err(invalid(format!(
            "expected a JSON object, found {}",
            json_kind(&root)
        )));
    };
    let Some(Value::Object(weight_map)) = root.get("weight_map") else {
        return Err(invalid("missing `weight_map` object".to_owned()));
    };
    let declared_total_size = match root.get("metadata").and_then(|m| m.get("total_size")) {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_total_size(v).ok_or_else(|| {
            invalid(format!(
                "`metadata.total_size` must be a non-negative integer, found {v}"
            ))
        })?),
    };
    let mut index: BTreeMap<&str, &str> = BTreeMap::new();
    for (tensor, shard) in weight_map {
        let Value::String(shard) = shard else {
            return Err(invalid(format!(
                "`weight_map` value of `{tensor}` must be a shard file name, found {}",
                json_kind(shard)
            )));
        };
        index.insert(tensor.as_str(), base_name(shard));
    }

    // Sets filled by insertion: `collect` into a set sorts with the standard stable sort,
    // ~4 KB of wasm for each element type (see `order`).
    let mut supplied = BTreeSet::new();
    for (n, _) in shards {
        supplied.insert(base_name(n));
    }
    // tensor -> shard that holds it (first one).
    let mut holder: BTreeMap<&str, &str> = BTreeMap::new();
    let mut actual_total_size = 0u64;
    for (name, header) in shards {
        actual_total_size = actual_total_size.saturating_add(header.data_len);
        for t in header.tensors() {
            holder.entry(t.name).or_insert(base_name(name));
        }
    }

    let mut indexed_shards = BTreeSet::new();
    for &shard in index.values() {
        indexed_shards.insert(shard);
    }
    let mut problems = Vec::new();
    let mut missing: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (&tensor, &shard) in &index {
        match holder.get(tensor) {
            Some(&found_in) if found_in == shard => {}
            Some(&found_in) => problems.push(IndexProblem::WrongShard {
                tensor: tensor.to_owned(),
                index_shard: shard.to_owned(),
                found_in: found_in.to_owned(),
            }),
            None if supplied.contains(shard) => problems.push(IndexProblem::TensorNotFound {
                tensor: tensor.to_owned(),
                shard: shard.to_owned(),
            }),
            None => missing.entry(shard).or_default().push(tensor.to_owned()),
        }
    }
    let any_missing = !missing.is_empty();
    for (shard, tensors) in missing {
        problems.push(IndexProblem::MissingShard {
            shard: shard.to_owned(),
            tensors,
        });
    }
    for (&tensor, &shard) in &holder {
        if !index.contains_key(tensor) {
            problems.push(IndexProblem::NotInIndex {
                tensor: tensor.to_owned(),
                shard: shard.to_owned(),
            });
        }
    }
    for &shard in &supplied {
        if !indexed_shards.contains(shard) {
            problems.push(IndexProblem::UnusedShard {
                shard: shard.to_owned(),
            });
        }
    }
    if let Some(declared) = declared_total_size {
        if !any_missing && declared != actual_total_size {
            problems.push(IndexProblem::TotalSizeMismatch {
                declared,
                actual: actual_total_size,
            });
        }
    }

    Ok(IndexCheck {
        indexed_tensors: index.len() as u64,
        indexed_shards: indexed_shards.into_iter().map(str::to_owned).collect(),
        declared_total_size,
        actual_total_size,
        problems,
    })
}

/// The shard file names a `model.safetensors.index.json` names (sorted, unique).
///
/// # Errors
/// [`HeaderError::InvalidIndex`] when the text is not an index.
pub fn index_shards(index_json: &[u8]) -> Result<Vec<String>, HeaderError> {
    let invalid = |reason: String| HeaderError::InvalidIndex { reason };
    let root: Value = crate::json_from_bytes(index_json).map_err(invalid)?;
    let map = root
        .get("weight_map")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("no `weight_map` object".into()))?;
    let mut v: Vec<String> = map
        .values()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect();
    crate::order::sort_by(&mut v, String::cmp);
    v.dedup();
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const GIB: u64 = 1 << 30;

    /// A whole file: prefix, JSON, `data_len` zero bytes.
    fn file(json: &str, data_len: usize) -> Vec<u8> {
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
        assert_eq!(
            err(
                r#"{"w":{"dtype":"U8","shape":[],"data_offsets":[0,1]},"w":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}"#
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
        for json in [
            r#"{"__metadata__":{"format":1}}"#,
            r#"{"__metadata__":["pt"]}"#,
            r#"{"__metadata__":null}"#,
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
        let e = err(
            r#"{"w":{"dtype":"F32","shape":[4294967296,4294967296,16],"data_offsets":[0,16]}}"#,
        );
        assert_eq!(e, HeaderError::Overflow { tensor: "w".into() });
        assert!(e.to_string().contains("overflows 64 bits"));
        // Elements fit, bytes do not.
        assert_eq!(
            err(r#"{"w":{"dtype":"U64","shape":[4611686018427387904],"data_offsets":[0,0]}}"#)
                .kind(),
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
}
