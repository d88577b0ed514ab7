//! vramfit-core: the pure sizing core of vramfit.
//!
//! Memory per GPU as serving engines account it ([`sizing`]), parallel layouts ([`layout`]),
//! throughput ([`throughput`]), cost, the bundled [`catalog`], and the parsers of outside
//! data ([`model`] for `config.json`, [`safetensors`], [`share`] for URLs, [`oom`] for error
//! text). No I/O, no web dependency, byte counts as `u64`. See ARCHITECTURE.md.

pub mod accuracy;
pub mod budget;
pub mod catalog;
pub mod command;
pub mod commands;
pub mod decimal;
pub mod dtype;
pub mod engine;
pub mod export;
#[cfg(feature = "import")]
pub mod hub;
pub mod inputs;
pub mod layout;
pub mod model;
pub mod oom;
pub mod order;
pub mod plan;
pub mod safetensors;
pub mod serving;
pub mod share;
pub mod sizing;
pub mod text;
pub mod throughput;
pub mod units;

/// JSON bytes to a value: UTF-8 checked first, then `serde_json::from_str`. Every JSON text
/// the core reads goes through `from_str`, so the web bundle carries one `serde_json` reader
/// instead of two (`from_slice` instantiates a second: ~4 KB of wasm).
///
/// # Errors
/// Not UTF-8 (from which byte), or `serde_json`'s message (line and column).
pub(crate) fn json_from_bytes(bytes: &[u8]) -> Result<serde_json::Value, String> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| format!("not UTF-8 (from byte {})", e.valid_up_to()))?;
    serde_json::from_str(text).map_err(|e| e.to_string())
}
