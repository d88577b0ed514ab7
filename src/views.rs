//! The page's chunks, split out of its wasm and fetched when first needed (`src/lazy.rs`):
//! - the views chunk: the views other than "Size it" and the command checker's results,
//!   fetched the first time one of them is shown ([`part`]);
//! - the first view's rest: "Size it" below the first result ([`size_rest`]), fetched as
//!   soon as the first result is painted, so that the bytes before the first result are only
//!   the code that result needs.
//!
//! Each is a split point (`wasm_split_helpers`, the crate under Leptos's `#[lazy]`):
//! the build (scripts/page_wasm.py) cuts the page's wasm there with `wasm-split-cli`, and
//! what only this function reaches becomes a wasm file of its own, which shares the page's
//! memory, table and reactive state. So the views read the page's [`AppState`] from its
//! context, as "Size it" does, and nothing is compiled twice (issue 19).
//! On a native build the call is a plain call (the unit tests).

use crate::components::accuracy_view::AccuracyView;
use crate::components::budget_view::BudgetView;
use crate::components::catalog_view::CatalogView;
use crate::components::command_view::CommandChecks;
use crate::components::oom_view::OomView;
use crate::components::quant_view::QuantView;
use crate::components::scaling_view::ScalingView;
use crate::components::size_view::SizeRest;
use crate::state::{AppState, View};
use leptos::prelude::*;
use leptos::wasm_split::{wasm_split, SplitLoaderError};

/// What a place of the chunk shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The current view (nothing for "Size it", the page's own).
    View,
    /// The checks of the pasted command.
    Command,
    /// "Size it" below the first result (the first-view chunk).
    SizeRest,
}

impl Part {
    /// The place's `data-lazy` value (the browser tests find it by this).
    pub fn id(self) -> &'static str {
        match self {
            Part::View => "view",
            Part::Command => "command",
            Part::SizeRest => "size-rest",
        }
    }
}

/// Builds `part` from its chunk, fetching the chunk on first use.
pub async fn build(part: Part) -> Result<AnyView, SplitLoaderError> {
    match part {
        Part::SizeRest => size_rest().await,
        _ => self::part(part).await,
    }
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

/// The split point: builds `part` under the caller's owner (its context holds the page's
/// state). `Err` when the chunk could not be fetched or started (`fallible`: no panic).
#[wasm_split(views, fallible, wasm_split_path = ::leptos::wasm_split)]
pub fn part(part: Part) -> Result<AnyView, SplitLoaderError> {
    Ok(match part {
        Part::View => view! { <CurrentView/> }.into_any(),
        Part::Command => view! { <CommandChecks/> }.into_any(),
        Part::SizeRest => ().into_any(),
    })
}

/// The split point of the first view's rest, a chunk of its own (what the views chunk also
/// needs and the main chunk does not goes to a chunk both load).
#[wasm_split(size_rest, fallible, wasm_split_path = ::leptos::wasm_split)]
pub fn size_rest() -> Result<AnyView, SplitLoaderError> {
    Ok(view! { <SizeRest/> }.into_any())
}
