//! vramfit web app: a thin Leptos (CSR) UI over `vramfit-core`.
//!
//! The UI gathers inputs, shows results and draws; it computes nothing (ARCHITECTURE.md).
//! The whole scenario lives in the URL query (`vramfit_core::share`).

pub mod charts;
pub mod components;
pub mod files;
pub mod state;

use components::app::App;

/// Entry point: panic hook, mount, service worker.
pub fn start() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
    state::register_service_worker();
}
