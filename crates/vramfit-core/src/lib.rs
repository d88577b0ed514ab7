//! vramfit-core: the pure sizing core of vramfit.
//!
//! Memory per GPU as serving engines account it ([`sizing`]), parallel layouts ([`layout`]),
//! throughput ([`throughput`]), cost, the bundled [`catalog`], and the parsers of outside
//! data ([`model`] for `config.json`, [`safetensors`], [`share`] for URLs, [`oom`] for error
//! text). No I/O, no web dependency, byte counts as `u64`. See ARCHITECTURE.md.

pub mod accuracy;
pub mod catalog;
pub mod commands;
pub mod dtype;
pub mod export;
pub mod layout;
pub mod model;
pub mod oom;
pub mod order;
pub mod plan;
pub mod safetensors;
pub mod share;
pub mod sizing;
pub mod throughput;
pub mod units;
