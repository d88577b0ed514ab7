//! vramfit web app: a thin Leptos (CSR) UI over `vramfit-core`.
//!
//! The UI gathers inputs, shows results and draws; it computes nothing (ARCHITECTURE.md).
//! The whole scenario lives in the URL query (`vramfit_core::share`).

pub mod charts;
pub mod components;
pub mod figures;
pub mod first;
pub mod lazy;
pub mod memory_layout;
pub mod state;
pub mod views;
pub mod worker_client;

use components::app::App;

/// Entry point: panic hook, the catalog (a file beside the page's code, which index.html preloads
/// while the page and its code download), a shared link's first result ([`first::show`]), then the
/// calculator ([`mount`], the app split: everything of Leptos, a chunk of its own). The home
/// page, whose first result is in the HTML, has been fetching that chunk beside the main one
/// (scripts/page_wasm.py preloads it when the address has no query); a shared link fetches it
/// only now, so that the main chunk's bytes, which its first result waits for, go first. A
/// catalog that does not come is said on the page, not a blank one; a calculator that does not
/// come is said too, with the first result left in place. The shell registers the service
/// worker.
pub fn start() {
    console_error_panic_hook::set_once();
    #[cfg(target_arch = "wasm32")]
    wasm_bindgen_futures::spawn_local(async {
        state::mark("vf-start");
        let query = state::location_query();
        let own_first = first::from_main_chunk(&query);
        if !own_first {
            // The home page, whose first result is on screen already (its calculator's
            // chunks are preloaded), or a link to another view, which has no first result
            // before the calculator: its chunks download and compile now, beside the
            // catalog's reading.
            wasm_bindgen_futures::spawn_local(async {
                let _ = fetch_app().await;
            });
        }
        let loaded = state::load_catalog().await;
        if own_first && loaded.is_ok() {
            first::show(&state::CATALOG, &query);
        }
        state::mark("vf-first-shown");
        let catalog = loaded.as_ref().err().cloned();
        if let Err(e) = mount(loaded).await {
            first::failed(&match catalog {
                None => format!("The calculator's code could not be downloaded ({e}); check the connection, then reload the page."),
                Some(why) => format!("vramfit could not start: the catalog could not be read ({why}), and the calculator's code could not be downloaded ({e}). Check the connection and reload the page."),
            });
        }
    });
    #[cfg(not(target_arch = "wasm32"))]
    leptos::mount::mount_to_body(App);
}

/// The app split: mounts the calculator (or, without a catalog, says why). The home page's
/// first result from the build (`#vf-first`, scripts/prerender.mjs), or a shared link's
/// ([`first::show`]), is removed in the same task, so that no frame shows both. `Err` when
/// the chunk could not be fetched or started.
#[cfg(target_arch = "wasm32")]
#[leptos::wasm_split::wasm_split(app, fallible, preload(fetch_app), wasm_split_path = ::leptos::wasm_split)]
fn mount(loaded: Result<(), String>) -> Result<(), leptos::wasm_split::SplitLoaderError> {
    if let Some(first) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(FIRST_RESULT_ID))
    {
        first.remove();
    }
    match loaded {
        Ok(()) => {
            leptos::mount::mount_to_body(App);
            state::mark("vf-mounted");
            components::later::first_paint_done();
        }
        Err(why) => leptos::mount::mount_to_body(move || {
            use leptos::prelude::*;
            view! { <components::app::CatalogMissing why/> }
        }),
    }
    Ok(())
}

/// The id of the element that holds the first result before the calculator: the home page's,
/// written at build time (scripts/prerender.mjs, index.html's `<template id="vf-first-html">`),
/// or a shared link's from the main chunk ([`first::show`]). [`mount`] removes it.
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
