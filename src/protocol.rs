//! Messages between the page and the import worker (`src/worker/`, ARCHITECTURE.md).
//!
//! The page posts a plain object `{id, op, …}`:
//! - `op: "files"` with `files`: the `File`s of a drop or a picker;
//! - `op: "hub"` with `endpoint`, `repo` and `token` (a Hugging Face import);
//! - `op: "oom"` with `text` (a pasted error) and `parameters` (the model's parameter count
//!   in decimal, or `null`: [`vramfit_core::oom::Hints`]).
//!
//! The worker answers `{id, kind, text}`, `kind` one of `progress` (a status line),
//! `error` (the problem, worded for people) or `done`, whose text is the JSON of
//! [`Imported`] (`files`, `hub`) or [`Explained`] (`oom`). This file is compiled into both
//! WebAssembly modules: the worker serializes, the page deserializes.

use serde::{Deserialize, Serialize};
use vramfit_core::oom::{Finding, OomReport};
use vramfit_core::safetensors::Report;

/// A model read from files or a Hugging Face repo: headers summarized, config checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Imported {
    /// Display name.
    pub name: String,
    /// The config.json text, read into a `ModelArch` on the page (which needs it; the
    /// worker does not read it too).
    pub config: Option<String>,
    /// From the safetensors headers.
    pub report: Option<Report>,
    /// Shards read.
    pub shards: usize,
    /// Disagreements with model.safetensors.index.json.
    pub index_problems: Vec<String>,
    /// `files` or `hub:<repo>`.
    pub source: String,
    /// Header bytes read (to show that only headers were read).
    pub header_bytes_read: u64,
}

/// A pasted out-of-memory message: what it says and what it means.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explained {
    /// The numbers read from the message.
    pub report: OomReport,
    /// Causes, most likely first, with fixes.
    pub findings: Vec<Finding>,
}
