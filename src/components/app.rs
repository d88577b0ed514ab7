//! The page shell: router, header, tabs, notices, the current view.

use crate::components::explained::Explained;
use crate::components::inputs_panel::InputsPanel;
use crate::components::size_view::SizeView;
use crate::lazy::Lazy;
use crate::state::{AppState, View};
use leptos::prelude::*;
use vramfit_core::units::Units;

/// The application.
#[component]
pub fn App() -> impl IntoView {
    view! { <Shell/> }
}

/// The page when its catalog could not be fetched or read ([`crate::state::load_catalog`]):
/// why, as text, and what to do.
#[component]
pub fn CatalogMissing(why: String) -> impl IntoView {
    view! {
        <header class="vf-header"><h1 class="vf-title">"vramfit"</h1></header>
        <main>
            <p class="vf-verdict vf-bad" role="alert" data-testid="catalog-missing">
                {format!("The catalog of GPUs and models did not load ({why}). Check the connection and reload the page.")}
            </p>
        </main>
    }
}

/// Everything inside the router.
#[component]
fn Shell() -> impl IntoView {
    let st = AppState::new();
    provide_context(st);
    // After the first paint: the worker's install fetches and caches the rest of the build,
    // which is no part of the first result (web.dev, "Service worker registration").
    Effect::new(move |_| {
        if crate::components::later::painted() {
            crate::state::register_service_worker(st.offline);
        }
    });
    let is_size = Memo::new(move |_| st.view.get() == View::Size);
    let tabs = View::ALL
        .into_iter()
        .map(|v| {
            view! {
                <button
                    class="vf-tab"
                    role="tab"
                    data-testid=format!("tab-{}", v.id())
                    aria-selected=move || (st.view.get() == v).to_string()
                    on:click=move |_| st.set_view(v)
                >
                    {v.label()}
                </button>
            }
        })
        .collect_view();
    view! {
        <header class="vf-header">
            <h1 class="vf-title">"vramfit"</h1>
            <p class="vf-tagline">"Will it fit? GPU memory, layout, speed and cost for LLM inference — before you buy or launch."</p>
            <div class="vf-header-tools">
                <label class="vf-units">
                    "Units "
                    <select
                        data-testid="units"
                        on:change=move |ev| st.set_units(Units::parse(&event_target_value(&ev)).unwrap_or_default())
                        prop:value=move || st.units.get().id()
                    >
                        <option value="gib">"GiB (2³⁰ B)"</option>
                        <option value="gb">"GB (10⁹ B)"</option>
                    </select>
                </label>
            </div>
        </header>
        <nav aria-label="Calculators">
            <div class="vf-tabs" role="tablist">{tabs}</div>
        </nav>
        <main class="vf-main">
            <Notices/>
            <InputsPanel/>
            <section class="vf-results" aria-live="polite">
                // "Size it" is the page's own; the other views come from the views chunk
                // (`src/lazy.rs`), whose place stays while the user moves between them.
                {move || is_size.get().then(|| view! { <SizeView/> })}
                {move || (!is_size.get()).then(|| view! { <Lazy part=crate::views::Part::View/> })}
            </section>
        </main>
        <footer class="vf-footer">
            "Formulas follow vLLM v0.19's memory accounting; every catalog value has a source. "
            <a href="https://github.com/vllm-project/vllm" rel="noopener">"vLLM"</a>
            {move || st.offline.get().then(|| view! { <span data-testid="offline-ready">" · Every view now works offline."</span> })}
        </footer>
    }
}

/// Ignored URL parameters, shown so a stale link never fails silently.
#[component]
fn Notices() -> impl IntoView {
    let st = expect_context::<AppState>();
    move || {
        let n = st.decoded.get().1;
        (!n.is_empty()).then(|| {
            let items = n
                .into_iter()
                .map(|n| view! { <li><code>{n.key}</code>": "<Explained text=n.message/></li> })
                .collect_view();
            view! {
                <div class="vf-notice" role="status" data-testid="url-notice">
                    {crate::state::IGNORED_PARAMETERS}
                    <ul>{items}</ul>
                </div>
            }
        })
    }
}
