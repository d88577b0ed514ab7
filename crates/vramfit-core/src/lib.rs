//! vramfit-core: the pure sizing core of vramfit.
//!
//! No I/O, no web dependency, byte counts as `u64`. See ARCHITECTURE.md.

pub mod oom;
pub mod safetensors;
