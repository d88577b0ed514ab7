//! [`HeaderError`]: why a header (or an index file) was rejected, each variant
//! naming the tensor and the byte numbers involved.

use super::header::PREFIX_LEN;
use super::{Dtype, MAX_HEADER_SIZE};
use std::fmt;

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
