//! Bring your own model: drop or pick `.safetensors` shards, `model.safetensors.index.json`
//! and `config.json`, or import a Hugging Face repo. Only headers are read.

use crate::components::explained::Explained;
use crate::state::{AppState, Custom};
use crate::worker_client::{Latest, Reply, OTHER_ANSWER};
use leptos::prelude::*;
use vramfit_core::units::{fmt_bytes, fmt_count};
use vramfit_protocol::Request;
use wasm_bindgen::JsCast;
use web_sys::File;

/// The files of a drop or a picker.
fn files_of(list: Option<web_sys::FileList>) -> Vec<File> {
    let Some(list) = list else { return Vec::new() };
    (0..list.length()).filter_map(|i| list.get(i)).collect()
}

/// The files picked in a file input.
fn input_files(ev: &web_sys::Event) -> Vec<File> {
    ev.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        .map(|i| files_of(i.files()))
        .unwrap_or_default()
}

/// What a failed load is called in "Size it"'s note ([`AppState::refused`]).
const DROPPED: &str = "the model you brought";

/// The bring-your-own-model panel.
#[component]
pub fn ModelSource() -> impl IntoView {
    let st = expect_context::<AppState>();
    let (progress, set_progress) = signal(String::new());
    let (error, set_error) = signal(Option::<String>::None);
    // A load that failed leaves the model in use as it was: "Size it" says so, while that
    // model is one brought here (back to the catalog, the numbers are the catalog's).
    Effect::new(move |_| {
        let brought = st.custom.with(Option::is_some);
        st.mark_refused(DROPPED, brought && error.get().is_some());
    });
    on_cleanup(move || st.mark_refused(DROPPED, false));
    let (repo, set_repo) = signal(String::new());
    let (endpoint, set_endpoint) = signal("https://huggingface.co".to_string());
    // The access token lives only in this signal: never in the URL, never in storage.
    let (token, set_token) = signal(String::new());
    let (dragging, set_dragging) = signal(false);

    // Shows the outcome of a load: the model in use, or the error naming the problem.
    let finish = move |res: Result<Custom, String>, verb: String| match res {
        Ok(c) => {
            set_progress.set(format!(
                "{verb} {} header bytes from {} shard(s)",
                fmt_count(c.model.header_bytes_read),
                c.model.shards
            ));
            st.custom.set(Some(c));
        }
        Err(e) => {
            set_progress.set(String::new());
            set_error.set(Some(e));
        }
    };
    // Only the latest load's answer is shown.
    let latest = Latest::default();
    let send = move |req: Request, files: Option<js_sys::Array>, verb: String| {
        set_error.set(None);
        latest.request(&req, files.as_ref(), move |reply| match reply {
            Reply::Progress(p) => set_progress.set(p),
            Reply::Imported(model) => finish(Custom::from_imported(model), verb.clone()),
            Reply::Failed(e) => finish(Err(e), verb.clone()),
            Reply::Explained(_) => finish(Err(OTHER_ANSWER.to_string()), verb.clone()),
        });
    };
    let take = move |files: Vec<File>| {
        if files.is_empty() {
            return;
        }
        set_progress.set(format!("reading {} file(s)…", files.len()));
        let list: js_sys::Array = files.iter().collect();
        send(Request::ImportFiles, Some(list), "read".to_string());
    };
    let import = move |_| {
        let r = repo.get_untracked();
        set_progress.set(format!("fetching {r}…"));
        let verb = format!("imported {r}:");
        let req = Request::ImportHub {
            repo: r,
            token: token.get_untracked(),
            endpoint: endpoint.get_untracked(),
        };
        send(req, None, verb);
    };
    let summary = move || {
        st.custom.get().map(|c| {
            let u = st.units.get();
            let rep = c.model.report.clone().map(|r| {
                let dtypes = r.bytes_per_dtype.iter().map(|(k, v)| format!("{k} {}", fmt_bytes(*v, u))).collect::<Vec<_>>().join(", ");
                let warnings = r.warnings.iter().map(|w| view! { <li><Explained text=w.clone()/></li> }).collect_view();
                view! {
                    <p>
                        {format!("{} tensors, {} parameters ({} logical), {} in all: {dtypes}. Quantization: {}.", fmt_count(r.tensor_count), fmt_count(r.parameter_count), fmt_count(r.logical_parameter_count), fmt_bytes(r.total_bytes, u), r.quantization.label())}
                    </p>
                    <ul>{warnings}</ul>
                }
            });
            let problems = c.model.index_problems.iter().map(|p| view! { <li class="vf-bad"><Explained text=p.clone()/></li> }).collect_view();
            let twin = st.plan.get().ok().and_then(|p| p.catalog_twin);
            view! {
                <div class="vf-custom" data-testid="file-report">
                    <strong>{format!("Your model: {}", c.model.name)}</strong>
                    {rep}
                    <ul>{problems}</ul>
                    {c.arch.is_none().then(|| view! { <p class="vf-warn">"Add its config.json to size the KV cache."</p> })}
                    {twin.map(|id| {
                        let id2 = id.clone();
                        view! {
                            <button type="button" class="vf-button" data-testid="compare-catalog" on:click=move |_| {
                                st.custom.set(None);
                                let id = id2.clone();
                                st.update(false, |i| i.model = id);
                            }>{format!("Compare with the catalog's {id}")}</button>
                        }
                    })}
                    <button type="button" class="vf-button vf-secondary" data-testid="clear-custom" on:click=move |_| st.custom.set(None)>"Back to the catalog"</button>
                </div>
            }
        })
    };
    view! {
        <details class="vf-byom" open=move || st.custom.get().is_some()>
            <summary>"Your own model (files or Hugging Face)"</summary>
            <div
                class="vf-drop"
                class:vf-dragging=move || dragging.get()
                data-testid="drop-zone"
                on:dragover=move |ev: web_sys::DragEvent| {
                    ev.prevent_default();
                    set_dragging.set(true);
                }
                on:dragleave=move |_| set_dragging.set(false)
                on:drop=move |ev: web_sys::DragEvent| {
                    ev.prevent_default();
                    set_dragging.set(false);
                    take(files_of(ev.data_transfer().and_then(|d| d.files())));
                }
            >
                <label class="vf-field">
                    <span>"Drop or pick .safetensors shards, model.safetensors.index.json and config.json. Only headers are read; nothing is uploaded."</span>
                    <input type="file" multiple accept=".safetensors,.json" data-testid="file-input" on:change=move |ev| take(input_files(&ev))/>
                </label>
            </div>
            <label class="vf-field">
                <span>"Hugging Face repo id"</span>
                <input type="text" data-testid="hf-repo" placeholder="owner/name" prop:value=move || repo.get() on:input=move |ev| set_repo.set(event_target_value(&ev))/>
            </label>
            <label class="vf-field">
                <span>"Access token for gated repos (kept in memory only)"</span>
                <input type="password" autocomplete="off" data-testid="hf-token" prop:value=move || token.get() on:input=move |ev| set_token.set(event_target_value(&ev))/>
            </label>
            <label class="vf-field">
                <span>"Hub endpoint"</span>
                <input type="url" data-testid="hf-endpoint" prop:value=move || endpoint.get() on:input=move |ev| set_endpoint.set(event_target_value(&ev))/>
            </label>
            <button type="button" class="vf-button" data-testid="hf-import" on:click=import>"Import headers"</button>
            <p data-testid="file-progress" aria-live="polite">{move || progress.get()}</p>
            {move || error.get().map(|e| view! { <p class="vf-verdict vf-bad" role="alert" data-testid="file-error"><Explained text=e/></p> })}
            {summary}
        </details>
    }
}
