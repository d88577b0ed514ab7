//! The catalog: models and GPUs, searchable, each with its source. The sources are not in
//! the first-load bundle: the view fetches them when it opens, from the file that
//! `<meta name="vramfit-sources">` names (`catalog-sources-<hash>.json`, written next to the
//! bundle at build time by `scripts/catalog_sources.py`, pre-cached by the service worker).

use crate::state::CATALOG;
use leptos::prelude::*;
use std::cell::RefCell;
use std::sync::Arc;
use vramfit_core::catalog::Sources;
use vramfit_core::units::{fmt_count, fmt_params, fmt_usd};

type Loaded = Option<Result<Arc<Sources>, String>>;

thread_local! {
    /// The sources once fetched: reopening the view neither refetches nor reparses them.
    static FETCHED: RefCell<Option<Arc<Sources>>> = const { RefCell::new(None) };
}

/// The source cell of one entry: the text (with a link when it has one), or the state of
/// the fetch.
fn source_cell(loaded: &Loaded, source: impl FnOnce(&Sources) -> Option<String>) -> AnyView {
    match loaded {
        None => view! { <span>"loading source…"</span> }.into_any(),
        Some(Err(e)) => view! { <span>{format!("source unavailable: {e}")}</span> }.into_any(),
        Some(Ok(s)) => match source(s) {
            Some(text) => link_or_text(&text),
            None => view! { <span>"no source recorded"</span> }.into_any(),
        },
    }
}

fn link_or_text(s: &str) -> AnyView {
    match s.split_whitespace().find(|w| w.starts_with("https://")) {
        Some(url) => {
            let url = url.trim_end_matches([',', ';', ')', '.']).to_string();
            view! { <span>{s.to_string()}" "<a href=url rel="noopener noreferrer" target="_blank">"link"</a></span> }.into_any()
        }
        None => view! { <span>{s.to_string()}</span> }.into_any(),
    }
}

/// The catalog view.
#[component]
pub fn CatalogView() -> impl IntoView {
    let (q, set_q) = signal(String::new());
    // A task and a signal rather than a `LocalResource`, whose machinery cost ~13 KB of
    // gzipped wasm, as much as the sources themselves. The sources sit behind an `Arc`:
    // every render of the two tables reads them.
    let cached = FETCHED.with(|f| f.borrow().clone());
    let fetch = cached.is_none();
    let (sources, set_sources) = signal::<Loaded>(cached.map(Ok));
    if fetch {
        leptos::task::spawn_local(async move {
            // The sources' file name (content-hashed) is in index.html.
            let got = match crate::worker_client::meta_content("meta[name=vramfit-sources]") {
                Some(url) => crate::state::fetch_bytes(&url, true).await,
                None => Err("index.html names no catalog sources".to_string()),
            }
            .and_then(|bytes| Sources::from_json(&bytes))
            .map(Arc::new);
            if let Ok(s) = &got {
                FETCHED.with(|f| *f.borrow_mut() = Some(Arc::clone(s)));
            }
            set_sources.set(Some(got));
        });
    }
    let loaded = move || -> Loaded { sources.get() };
    let state = move || match loaded() {
        None => "loading",
        Some(Ok(_)) => "ready",
        Some(Err(_)) => "error",
    };
    // The search as typed, less the spaces around it (a trailing space matched nothing).
    let hit = move |hay: &[&str]| {
        let q = q.with(|q| q.trim().to_ascii_lowercase());
        q.is_empty() || hay.iter().any(|h| h.to_ascii_lowercase().contains(&q))
    };
    let model_hit =
        move |m: &&vramfit_core::catalog::Model| hit(&[&m.id, &m.name, &m.family, &m.vendor]);
    let gpu_hit = move |g: &&vramfit_core::catalog::Gpu| {
        let mem = format!("{} GB", g.memory_marketed_gb);
        hit(&[&g.id, &g.name, &g.vendor, &mem])
    };
    // What a search that leaves a table empty says under it (hidden otherwise).
    let none = move |what: &str, any: bool| {
        (!any).then(|| q.with(|q| format!("No {what} matches \u{201c}{}\u{201d}.", q.trim())))
    };
    let models_none = move || none("model", CATALOG.models.iter().any(|m| model_hit(&m)));
    let gpus_none = move || none("GPU", CATALOG.gpus.iter().any(|g| gpu_hit(&g)));
    view! {
        <h2>"Catalog"</h2>
        <label class="vf-field">
            <span>"Search by name, family, vendor or memory"</span>
            <input type="search" data-testid="catalog-search" on:input=move |ev| set_q.set(event_target_value(&ev))/>
        </label>
        <h3>"Models"</h3>
        <table class="vf-table" data-testid="catalog-models" data-sources=state>
            <thead><tr><th>"Model"</th><th>"Family"</th><th>"Parameters"</th><th>"Active"</th><th>"Context"</th><th>"Stored as"</th><th>"Source"</th></tr></thead>
            <tbody>
                {move || { let loaded = loaded(); CATALOG.models.iter().filter(model_hit).map(|m| view! {
                    <tr>
                        <th scope="row">{m.name.clone()}<br/><code>{m.id.clone()}</code></th>
                        <td>{m.family.clone()}</td>
                        <td>{fmt_params(m.parameters_total)}</td>
                        <td>{fmt_params(m.parameters_active)}</td>
                        <td>{fmt_count(m.context_native)}</td>
                        <td>{m.stored_dtype.clone()}{(!m.config_verbatim).then(|| view! {
                            <br/><span class="vf-caveat" data-testid="config-reconstructed" title="No verbatim public copy of this config.json was found: it was assembled from corroborating copies; the source names what is verified">"config reconstructed"</span>
                        })}</td>
                        <td class="vf-caveat">{source_cell(&loaded, |s| s.model(&m.id).map(str::to_owned))}</td>
                    </tr>
                }).collect_view() }}
            </tbody>
        </table>
        <p class="vf-note" data-testid="catalog-models-none" hidden=move || models_none().is_none()>{move || models_none().unwrap_or_default()}</p>
        <h3>"GPUs"</h3>
        <table class="vf-table" data-testid="catalog-gpus" data-sources=state>
            <thead><tr><th>"GPU"</th><th>"Vendor"</th><th>"Memory"</th><th>"Bandwidth"</th><th>"bf16 dense"</th><th>"Link"</th><th>"Price"</th><th>"Source"</th></tr></thead>
            <tbody>
                {move || { let loaded = loaded(); CATALOG.gpus.iter().filter(gpu_hit).map(|g| view! {
                    <tr>
                        <th scope="row">{g.name.clone()}<br/><code>{g.id.clone()}</code></th>
                        <td>{g.vendor.clone()}</td>
                        <td>{format!("{} GB ({} MiB usable)", g.memory_marketed_gb, fmt_count(g.memory_usable_mib))}</td>
                        <td>{format!("{} GB/s", g.memory_bandwidth_gb_per_s)}</td>
                        <td>{g.dense_tflops.bf16.map_or("–".into(), |t| format!("{t} TFLOPS"))}</td>
                        <td>{g.interconnect.generation.clone().unwrap_or_else(|| g.interconnect.kind.clone())}</td>
                        <td>{g.price.purchase_usd.map_or("–".into(), fmt_usd)}" · "{g.price.cloud_usd_per_hour.map_or("–".into(), |h| format!("{}/h", fmt_usd(h)))}</td>
                        <td class="vf-caveat">{source_cell(&loaded, |s| s.gpu(&g.id).map(str::to_owned))}</td>
                    </tr>
                }).collect_view() }}
            </tbody>
        </table>
        <p class="vf-note" data-testid="catalog-gpus-none" hidden=move || gpus_none().is_none()>{move || gpus_none().unwrap_or_default()}</p>
    }
}
