//! Parse pasted out-of-memory (OOM) error text and classify its likely cause.
//!
//! Users paste whatever their framework printed; [`parse`](fn@parse) finds the
//! one recognisable message in it and turns it into an [`OomReport`] of byte
//! counts, and [`diagnose`](fn@diagnose) / [`diagnose_with`] turn the report
//! into ranked [`Finding`]s (cause, explanation, concrete fixes). Everything
//! here is pure: no I/O, no allocation proportional to anything but the
//! (capped) input.
//!
//! The parts: `oom/parse.rs` holds the scanner and the message parsers, with
//! the table of recognised messages (and where each comes from) and the unit
//! conventions, and `oom/parse/mentions.rs` what else the text names (the model,
//! the devices, the loader, `device_map`, the dtype); `oom/diagnose.rs` holds the
//! budget model and the diagnosis rules, with their thresholds and the reasons
//! for them; `oom/known.rs` the model check ([`check_model`], [`with_model`]): the
//! model's weights from the catalog and the sizing core against the card, and
//! fixes planned before they are offered. The model check is built without the
//! `oom` feature too (the web page runs it on the worker's report).
//!
//! # Example
//!
#![cfg_attr(feature = "oom", doc = "```")]
#![cfg_attr(not(feature = "oom"), doc = "```ignore")]
//! use vramfit_core::oom::{diagnose, parse, Cause, OomSource};
//!
//! // pytorch/pytorch#16417 (comment, 2024-03-13)
//! let text = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. \
//!     GPU 0 has a total capacity of 23.65 GiB of which 11.06 MiB is free. Including non-PyTorch \
//!     memory, this process has 23.60 GiB memory in use. Of the allocated memory 22.90 GiB is \
//!     allocated by PyTorch, and 194.87 MiB is reserved by PyTorch but unallocated.";
//! let report = parse(text).unwrap();
//! assert_eq!(report.source, OomSource::PyTorchCuda);
//! assert_eq!(report.gpu_index, Some(0));
//! assert_eq!(report.tried_to_allocate_bytes, Some(22 * 1024 * 1024));
//! assert_eq!(report.total_capacity_bytes, Some(25_393_994_138)); // 23.65 × 2^30
//! let findings = diagnose(&report);
//! assert_eq!(findings[0].cause, Cause::GenuinelyOutOfMemory);
//! assert!(parse("all good, no errors").is_err());
//! ```

mod diagnose;
mod known;
mod parse;

// The types are always here (the web page shows them); reading and explaining a message
// need the `oom` feature (default on; the page builds without it: ARCHITECTURE.md).
#[cfg(feature = "oom")]
pub use diagnose::{diagnose, diagnose_message, diagnose_with};
pub use diagnose::{Cause, Finding, Hints};
pub use known::{check_model, with_model, CheckedFix, ModelCheck, Origin, MIN_SHORT_LEN};
#[cfg(feature = "oom")]
pub use parse::parse;
pub use parse::{Loader, OomParseError, OomReport, OomSource, MAX_SCAN_BYTES};

// Binary byte units, shared by the parser and the diagnosis.
#[cfg(feature = "oom")]
const KIB: u64 = 1 << 10;
#[cfg(feature = "oom")]
const MIB: u64 = 1 << 20;
#[cfg(feature = "oom")]
const GIB: u64 = 1 << 30;
#[cfg(feature = "oom")]
const TIB: u64 = 1 << 40;

#[cfg(all(test, feature = "oom"))]
mod tests;
