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

/// Entry point: panic hook, the catalog (a file beside the wasm, which index.html preloads
/// while the wasm downloads), then the mount (the shell registers the service worker). A
/// catalog that does not come is said on the page, not a blank one. The home page's first
/// result from the build (`#vf-first`, scripts/prerender.mjs), when index.html showed it, is
/// removed in the task that mounts, so that no frame shows both.
pub fn start() {
    console_error_panic_hook::set_once();
    #[cfg(target_arch = "wasm32")]
    wasm_bindgen_futures::spawn_local(async {
        let loaded = state::load_catalog().await;
        if let Some(first) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id(FIRST_RESULT_ID))
        {
            first.remove();
        }
        match loaded {
            Ok(()) => {
                leptos::mount::mount_to_body(App);
                components::later::first_paint_done();
            }
            Err(why) => leptos::mount::mount_to_body(move || {
                use leptos::prelude::*;
                view! { <components::app::CatalogMissing why/> }
            }),
        }
    });
    #[cfg(not(target_arch = "wasm32"))]
    leptos::mount::mount_to_body(App);
}

/// The id of the element that holds the home page's first result written at build time
/// (scripts/prerender.mjs, index.html's `<template id="vf-first-html">`).
pub const FIRST_RESULT_ID: &str = "vf-first";

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
