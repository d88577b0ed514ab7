//! One module per command. Each has a `run` that takes the parsed flags (and the catalog, or
//! what was read from disk) and returns the exact stdout and exit status; nothing here prints.

pub mod accuracy;
pub mod budget;
pub mod catalog;
pub mod fit;
pub mod inspect;
pub mod oom;
pub mod plan;
pub mod scale;
