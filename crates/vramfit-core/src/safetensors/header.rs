//! The header records ([`Header`], [`TensorInfo`]) and the parse: length
//! prefix, JSON (through the fast path [`scan`] or the general path
//! [`via_serde`]) and the layout checks.
//!
//! The rules follow the reference implementation, huggingface/safetensors
//! `safetensors/src/tensor.rs` (`SafeTensors::read_metadata` and
//! `Metadata::validate`):
//!
//! * A file is `N` (8 bytes, little-endian `u64`), then `N` bytes of UTF-8
//!   JSON, then the data section. `N` may not exceed [`MAX_HEADER_SIZE`]
//!   (100 000 000), and the header must lie inside the file.
//! * The JSON is an object. The optional key `__metadata__` maps strings to
//!   strings (or is `null`: no metadata, the reference's `Option`); every other key is a tensor name whose value holds `dtype` (one
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
//! with different entries is an error (the reference keeps the last one
//! silently), while an entry repeated identically is one tensor, as there, and
//! named in [`Header::repeated`] for the report's warning; and each error names
//! the tensor and the byte numbers involved.

use super::{scan, via_serde, Dtype, HeaderError};
use serde::Serialize;
use std::fmt;

/// The largest header the reference accepts, in bytes (`MAX_HEADER_SIZE`).
pub const MAX_HEADER_SIZE: u64 = 100_000_000;

/// Length of the little-endian `u64` header-size prefix.
pub(super) const PREFIX_LEN: u64 = 8;

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
    /// Names whose entry the header repeats identically (each once, in header order): the
    /// reference parser keeps one (its map), so the tensor is here once.
    pub repeated: Vec<String>,
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
            && self.repeated == other.repeated
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
            .field("repeated", &self.repeated)
            .finish()
    }
}

/// The same fields as the `Debug` form: `tensors` (a list of
/// [`TensorInfo`]), `metadata`, `header_len`, `data_len`, `repeated`.
impl Serialize for Header {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct List<'a>(&'a Header);
        impl Serialize for List<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_seq(self.0.tensors())
            }
        }
        let mut st = serializer.serialize_struct("Header", 5)?;
        st.serialize_field("tensors", &List(self))?;
        st.serialize_field("metadata", &self.metadata)?;
        st.serialize_field("header_len", &self.header_len)?;
        st.serialize_field("data_len", &self.data_len)?;
        st.serialize_field("repeated", &self.repeated)?;
        st.end()
    }
}

/// The tensors of a header under construction: what both parse paths fill.
#[derive(Default)]
pub(super) struct Tensors {
    names: String,
    pub(super) dims: Vec<u64>,
    entries: Vec<Entry>,
    /// Names repeated identically (the general path finds them).
    pub(super) repeated: Vec<String>,
}

impl Tensors {
    /// Room for about `header_len / 60` tensors (every entry takes at least
    /// ~60 bytes of header). Address space only: pages are touched as filled,
    /// and [`Tensors::shrink`] gives back the rest.
    pub(super) fn for_header(header_len: usize) -> Tensors {
        Tensors {
            names: String::with_capacity(header_len / 2),
            dims: Vec::with_capacity(header_len / 30),
            entries: Vec::with_capacity(header_len / 60),
            repeated: Vec::new(),
        }
    }

    fn name(&self, e: &Entry) -> &str {
        e.name(&self.names)
    }

    /// Starts a tensor: its dimensions follow with [`Tensors::dim`], then
    /// [`Tensors::end`] records it.
    pub(super) fn dims_mark(&self) -> usize {
        self.dims.len()
    }

    pub(super) fn dim(&mut self, d: u64) {
        self.dims.push(d);
    }

    /// Records a tensor whose dimensions were pushed since `dims_mark`.
    // Casts: see `Entry` (every count is below MAX_HEADER_SIZE < 2^32).
    #[allow(clippy::cast_possible_truncation)]
    pub(super) fn end(
        &mut self,
        name: &str,
        dtype: Dtype,
        dims_mark: usize,
        (begin, end): (u64, u64),
    ) {
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

    pub(super) fn shrink(&mut self) {
        self.names.shrink_to_fit();
        self.dims.shrink_to_fit();
        self.entries.shrink_to_fit();
    }
}

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
        None => via_serde::entries_via_serde(text)?,
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
        repeated: tensors.repeated,
    })
}

/// What both parse paths produce: the tensors and the `__metadata__` entries.
pub(super) type Entries = (Tensors, Vec<(String, String)>);

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

#[cfg(test)]
impl Tensors {
    /// Every tensor, in record order (for tests).
    pub(super) fn rows(&self) -> Vec<TensorInfo<'_>> {
        self.entries
            .iter()
            .map(|e| e.view(&self.names, &self.dims))
            .collect()
    }
}

#[cfg(test)]
mod tests;
