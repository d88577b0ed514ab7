//! The page's side of the views chunk (`src/views.rs`).
//!
//! The first load carries the shell, the inputs and the "Size it" view. The other views and
//! the command checker's results are a chunk split out of the same wasm (scripts/
//! page_wasm.py), fetched the first time one of them is shown: [`Lazy`] says it is loading,
//! awaits [`crate::views::build`], then shows what it built. The chunk shares the page's
//! memory and reactive graph, so the views follow the page's state like "Size it" does. A
//! chunk that does not come is said in the place, with a button that tries again; opening
//! another tab tries again too (the loader keeps only a success).

use crate::state::{AppState, View};
use crate::views::Part;
use leptos::prelude::*;

/// Said in the place when the chunk did not load.
pub const FAILED: &str =
    "the view's code could not be downloaded; check the connection, then try again";

/// A place the views chunk fills with `part`. Until then it says it is loading, or why the
/// chunk did not load.
#[component]
pub fn Lazy(
    /// What the chunk shows here.
    part: Part,
) -> impl IntoView {
    let status = |text: &'static str| {
        view! { <p class="vf-lazy-status vf-caveat" data-testid="lazy-status" role="status">{text}</p> }
    };
    // After a failure, opening another tab tries again (the place itself stays).
    let attempt = RwSignal::new(0u32);
    let failed = StoredValue::new(false);
    if let Some(st) = use_context::<AppState>() {
        Effect::new(move |before: Option<View>| {
            let now = st.view.get();
            if before.is_some_and(|b| b != now) && failed.get_value() {
                attempt.update(|a| *a += 1);
            }
            now
        });
    }
    view! {
        <div class="vf-lazy">
            <Suspense fallback=move || status("Loading…")>
                {move || {
                    attempt.track();
                    Suspend::new(async move {
                        let built = crate::views::build(part).await;
                        failed.set_value(built.is_err());
                        match built {
                            Ok(v) => view! { <div data-lazy=part.id() data-mounted="">{v}</div> }.into_any(),
                            Err(_) => view! {
                                {status(FAILED)}
                                <button type="button" class="vf-button vf-secondary" data-testid="lazy-retry"
                                    on:click=move |_| attempt.update(|a| *a += 1)>"Try again"</button>
                            }.into_any(),
                        }
                    })
                }}
            </Suspense>
        </div>
    }
}
