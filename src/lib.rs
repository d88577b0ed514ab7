//! vramfit web app: a thin Leptos (CSR) UI over `vramfit-core`.
//!
//! The UI gathers inputs, shows results and draws; it computes nothing (ARCHITECTURE.md).
//! The whole scenario lives in the URL query (`vramfit_core::share`).

pub mod charts;
pub mod components;
pub mod lazy;
pub mod memory_layout;
pub mod state;
pub mod views;
pub mod worker_client;

use components::app::App;

/// Entry point: panic hook, mount (the shell registers the service worker).
pub fn start() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(App);
}

/// Bytes of WebAssembly linear memory in use (for the browser benchmark).
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn wasm_memory_bytes() -> f64 {
    use wasm_bindgen::JsCast;
    wasm_bindgen::memory()
        .unchecked_into::<js_sys::WebAssembly::Memory>()
        .buffer()
        .unchecked_into::<js_sys::ArrayBuffer>()
        .byte_length()
        .into()
}
