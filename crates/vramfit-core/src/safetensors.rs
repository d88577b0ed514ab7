//! Safetensors header parser: reads the JSON header of a `.safetensors` file
//! (never the tensor data) and summarises what a checkpoint holds.
//!
//! A file is an 8-byte little-endian length `N`, `N` bytes of JSON naming each
//! tensor's dtype, shape and byte range, then the data. The parser follows the
//! reference implementation (huggingface/safetensors `Metadata::validate`; the
//! rules are listed in `safetensors/header.rs`), stricter where it helps: byte counts are `u64` with checked arithmetic, a
//! tensor name listed twice is an error, and each [`HeaderError`] names the
//! tensor and the byte numbers involved. The parts:
//!
//! * `dtype`: [`Dtype`], names and bit sizes;
//! * `header`: the records ([`Header`], [`TensorInfo`]), the parse
//!   ([`header_len`], [`parse_header`], [`parse_file`]) and its layout rules;
//!   `scan` is its fast path, `via_serde` the general `serde_json` one;
//! * `error`: [`HeaderError`];
//! * `report` and `quant`: [`Report`], [`Quantization`] and the heuristics
//!   behind them;
//! * `index`: [`check_against_index`] and [`index_shards`].
//!
//! On top of the parser, [`Report::from_headers`] summarises the shards of one
//! model (parameter and byte counts per dtype, quantization scheme, MoE split)
//! and [`check_against_index`] cross-checks shards against
//! `model.safetensors.index.json`.
//!
//! # Example
//!
#![cfg_attr(feature = "import", doc = "```")]
#![cfg_attr(not(feature = "import"), doc = "```ignore")]
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

// The report's types are always here (the web page shows them); the parser, the index check
// and `Report::from_headers` need the `import` feature (default on; the page builds without
// it: ARCHITECTURE.md).
mod dtype;
#[cfg(feature = "import")]
mod error;
#[cfg(feature = "import")]
mod header;
#[cfg(feature = "import")]
mod index;
mod quant;
mod report;
#[cfg(feature = "import")]
mod scan;
mod shard;
#[cfg(feature = "import")]
mod via_serde;

pub use dtype::Dtype;
#[cfg(feature = "import")]
pub use error::HeaderError;
#[cfg(feature = "import")]
pub use header::{
    header_len, parse_file, parse_header, parse_header_via_serde, Header, TensorInfo,
    MAX_HEADER_SIZE,
};
#[cfg(feature = "import")]
pub use index::{check_against_index, index_shards, IndexCheck, IndexProblem};
pub use quant::Quantization;
pub use report::{MoeSplit, Report};
pub use shard::ShardBytes;

#[cfg(all(test, feature = "import"))]
mod tests;
