//! The page's side of the views module (`src/views.rs`, built as the `vramfit-views` bin).
//!
//! The first load carries the shell, the inputs and the "Size it" view. The other views and
//! the command checker's results are a second WebAssembly module that the page loads the
//! first time one of them is shown: [`Lazy`] leaves an empty `<div data-lazy=…>` for it to
//! fill and asks for the module. Its hashed file name comes from the
//! `<meta name="vramfit-views">` that `scripts/module_files.py` writes into index.html at build
//! time. The two modules share no memory: the URL is the scenario (each reads it, and each
//! announces its own moves with [`crate::state::URL_EVENT`]), and the brought model travels as
//! JSON ([`crate::state::CUSTOM_EVENT`]).

use leptos::prelude::*;
use std::cell::Cell;

/// The event that asks the views module to fill the `[data-lazy]` places that are new and
/// to drop those that left the page.
pub const LAZY_EVENT: &str = "vramfit-lazy";

thread_local! {
    static REQUESTED: Cell<bool> = const { Cell::new(false) };
    /// Reference-counted, not owned by whichever component first read it: an arena signal
    /// created there would be disposed with that component.
    static FAILED: ArcRwSignal<Option<String>> = ArcRwSignal::new(None);
}

/// Why the views module did not load, once that is known.
fn failure() -> Option<String> {
    FAILED.with(|f| f.get())
}

#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
fn fail(why: String) {
    FAILED.with(|f| f.set(Some(why)));
}

/// Loads the views module once (a `<script>` its build hook wrote), then asks it to fill the
/// page's `[data-lazy]` places.
pub fn request() {
    if !REQUESTED.with(|r| r.replace(true)) {
        load();
    }
    crate::state::dispatch(LAZY_EVENT);
}

#[cfg(target_arch = "wasm32")]
fn load() {
    use wasm_bindgen::{closure::Closure, JsCast};
    let Some(src) = crate::worker_client::meta_content("meta[name=vramfit-views]") else {
        return fail("this build names no views module (index.html has no vramfit-views)".into());
    };
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(script) = doc.create_element("script") else {
        return;
    };
    let _ = script.set_attribute("src", &src);
    let on_error = Closure::<dyn Fn()>::new(move || {
        // A later request tries again (the network may be back).
        REQUESTED.with(|r| r.set(false));
        fail(
            "the view's code could not be downloaded; check the connection and open the tab again"
                .into(),
        );
    });
    let _ = script.add_event_listener_with_callback("error", on_error.as_ref().unchecked_ref());
    on_error.forget(); // one per load attempt
    if let Some(head) = doc.head() {
        let _ = head.append_child(&script);
    }
}

#[cfg(not(target_arch = "wasm32"))]
fn load() {}

/// A place the views module fills: `part` names what it shows (`view`: the current view;
/// `command`: the command checker's results). Until then it says it is loading, or why the
/// module did not load.
#[component]
pub fn Lazy(
    /// What the views module shows here.
    part: &'static str,
) -> impl IntoView {
    let node = NodeRef::<leptos::html::Div>::new();
    Effect::new(move |_| {
        if node.get().is_some() {
            if FAILED.with(|f| f.with_untracked(Option::is_some)) {
                FAILED.with(|f| f.set(None));
            }
            request();
        }
    });
    on_cleanup(|| crate::state::dispatch(LAZY_EVENT));
    view! {
        <div class="vf-lazy">
            <p class="vf-lazy-status vf-caveat" data-testid="lazy-status" role="status">
                {move || failure().unwrap_or_else(|| "Loading…".into())}
            </p>
            <div data-lazy=part node_ref=node></div>
        </div>
    }
}
