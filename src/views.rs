//! The views module (the `vramfit-views` bin): the views other than "Size it" and the command
//! checker's results, loaded by the page when first shown (`src/lazy.rs`).
//!
//! It keeps a state of its own, built from the same URL ([`AppState::follow_page`]), and
//! fills each `<div data-lazy=…>` of the page: `view` with the current view, `command` with
//! the checks of the pasted command. The page asks it to look again ([`LAZY_EVENT`]) when a
//! place appears or leaves, and announces URL moves and the brought model; the module answers
//! a task later (`setTimeout`), after the page has drawn, so that it fills only the places
//! still on the page. A place that left is unmounted: what is not shown computes nothing.
//! What the user typed into a view of this module (the OOM text) lives in its state and
//! outlives tab switches.

use crate::components::accuracy_view::AccuracyView;
use crate::components::budget_view::BudgetView;
use crate::components::catalog_view::CatalogView;
use crate::components::command_view::CommandChecks;
use crate::components::oom_view::OomView;
use crate::components::quant_view::QuantView;
use crate::components::scaling_view::ScalingView;
use crate::lazy::LAZY_EVENT;
use crate::state::{AppState, View, CUSTOM_EVENT, URL_EVENT};
use leptos::prelude::*;
use std::any::Any;
use std::cell::RefCell;
use wasm_bindgen::{closure::Closure, JsCast};
use web_sys::{Element, HtmlElement};

thread_local! {
    static STATE: RefCell<Option<AppState>> = const { RefCell::new(None) };
    /// The filled places: each element with what unmounts it when dropped.
    static MOUNTED: RefCell<Vec<(Element, Box<dyn Any>)>> = const { RefCell::new(Vec::new()) };
}

/// The current view, or nothing for "Size it" (the page's own).
#[component]
fn CurrentView() -> impl IntoView {
    let st = expect_context::<AppState>();
    move || match st.view.get() {
        View::Size => ().into_any(),
        View::Quant => view! { <QuantView/> }.into_any(),
        View::Budget => view! { <BudgetView/> }.into_any(),
        View::Scaling => view! { <ScalingView/> }.into_any(),
        View::Oom => view! { <OomView/> }.into_any(),
        View::Catalog => view! { <CatalogView/> }.into_any(),
        View::Accuracy => view! { <AccuracyView/> }.into_any(),
    }
}

fn mount(st: AppState, el: &Element) -> Option<Box<dyn Any>> {
    let parent = el.clone().dyn_into::<HtmlElement>().ok()?;
    let part = el.get_attribute("data-lazy")?;
    let handle: Box<dyn Any> = match part.as_str() {
        "view" => Box::new(leptos::mount::mount_to(parent, move || {
            provide_context(st);
            view! { <CurrentView/> }
        })),
        "command" => Box::new(leptos::mount::mount_to(parent, move || {
            provide_context(st);
            view! { <CommandChecks/> }
        })),
        _ => return None,
    };
    let _ = el.set_attribute("data-mounted", "");
    Some(handle)
}

/// Drops the places that left the page, follows the page's URL and model, fills the new places.
fn sync() {
    let Some(st) = STATE.with(|s| *s.borrow()) else {
        return;
    };
    let gone: Vec<Box<dyn Any>> = MOUNTED.with(|m| {
        let mut m = m.borrow_mut();
        let (keep, gone): (Vec<_>, Vec<_>) = m.drain(..).partition(|(el, _)| el.is_connected());
        *m = keep;
        gone.into_iter().map(|(_, h)| h).collect()
    });
    drop(gone); // unmounts them
    st.follow_page();
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(list) = doc.query_selector_all("[data-lazy]:not([data-mounted])") else {
        return;
    };
    for i in 0..list.length() {
        let Some(el) = list.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else {
            continue;
        };
        if let Some(h) = mount(st, &el) {
            MOUNTED.with(|m| m.borrow_mut().push((el, h)));
        }
    }
}

/// Runs [`sync`] a task later: after the page has drawn what its own change asked for.
fn sync_later() {
    if let Some(w) = web_sys::window() {
        let cb = Closure::once_into_js(sync);
        let _ = w.set_timeout_with_callback(cb.unchecked_ref());
    }
}

/// Entry point of the views module: the catalog (the page's file, from the cache), then its
/// state, its listeners and the places already on the page.
pub fn start() {
    console_error_panic_hook::set_once();
    wasm_bindgen_futures::spawn_local(async {
        match crate::state::load_catalog(true).await {
            Ok(()) => begin(),
            Err(e) => say_everywhere(&format!(
                "The catalog did not load ({e}). Check the connection and reload the page."
            )),
        }
    });
}

/// Writes `text` into every place of the page this module fills.
fn say_everywhere(text: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if let Ok(list) = doc.query_selector_all("[data-lazy]") {
        for i in 0..list.length() {
            if let Some(n) = list.item(i) {
                n.set_text_content(Some(text));
            }
        }
    }
}

fn begin() {
    let owner = Owner::new();
    let st = owner.with(AppState::follower);
    std::mem::forget(owner); // the module's state lives as long as the page
    STATE.with(|s| *s.borrow_mut() = Some(st));
    // The page has painted by now; this module's own `Later` parts follow its next paint.
    crate::components::later::first_paint_done();
    crate::state::listen(
        &["popstate", URL_EVENT, CUSTOM_EVENT, LAZY_EVENT],
        sync_later,
    );
    sync();
}
