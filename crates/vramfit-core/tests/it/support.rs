//! Helpers the integration tests share.

use vramfit_core::catalog::Catalog;
use vramfit_core::model::ModelArch;

/// The architecture of catalog model `id` (panics, in a test, when it is missing).
pub fn arch(id: &str) -> ModelArch {
    Catalog::bundled()
        .model(id)
        .unwrap_or_else(|| panic!("{id} in catalog"))
        .model
        .arch()
        .unwrap()
}
