//! Helpers the integration tests share.

use vramfit_core::catalog::Catalog;
use vramfit_core::model::ModelArch;
use vramfit_core::plan::Inputs;
use vramfit_core::sizing::Scenario;

/// The architecture of catalog model `id` (panics, in a test, when it is missing).
pub fn arch(id: &str) -> ModelArch {
    Catalog::bundled()
        .model(id)
        .unwrap_or_else(|| panic!("{id} in catalog"))
        .model
        .arch()
        .unwrap()
}

/// The default inputs with a catalog model and GPU.
pub fn on(model: &str, gpu: &str) -> Inputs {
    Inputs {
        model: model.into(),
        gpu: gpu.into(),
        ..Inputs::default()
    }
}

/// A scenario of catalog model `id` at TP `tp`, everything else the defaults.
pub fn scen(id: &str, tp: u64) -> Scenario {
    let mut s = Scenario::new(arch(id));
    s.tensor_parallel_size = tp;
    s
}
