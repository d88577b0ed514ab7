//! Bring your own model: drop or pick `.safetensors` shards, `model.safetensors.index.json`
//! and `config.json`, or import a Hugging Face repo. Only headers are read.

use crate::files::{import_hub, input_files, read_header, read_text};
use crate::state::{AppState, Custom};
use leptos::prelude::*;
use leptos::task::spawn_local;
use vramfit_core::model::ModelArch;
use vramfit_core::safetensors::{check_against_index, Header, Report};
use vramfit_core::units::{fmt_bytes, fmt_count};
use web_sys::File;

/// Turns config text and headers into the custom model (or an error naming the problem).
fn assemble(
    name: String,
    config: Option<String>,
    headers: Vec<(String, Header)>,
    index: Option<Vec<u8>>,
    source: String,
    read: u64,
) -> Result<Custom, String> {
    let arch = match config {
        Some(t) => Some(ModelArch::from_config_str(&t).map_err(|e| e.to_string())?),
        None => None,
    };
    let report = (!headers.is_empty())
        .then(|| Report::from_headers(&headers.iter().map(|(_, h)| h.clone()).collect::<Vec<_>>()));
    let mut index_problems = Vec::new();
    if let Some(idx) = index {
        let shards: Vec<(String, &Header)> = headers.iter().map(|(n, h)| (n.clone(), h)).collect();
        let check = check_against_index(&shards, &idx)
            .map_err(|e| format!("model.safetensors.index.json: {e}"))?;
        index_problems = check.problems.iter().map(ToString::to_string).collect();
    }
    if arch.is_none() && report.is_none() {
        return Err("no config.json or .safetensors file among the files".into());
    }
    Ok(Custom {
        name,
        arch,
        report,
        shards: headers.len(),
        index_problems,
        source,
        header_bytes_read: read,
    })
}

async fn load_files(files: Vec<File>, progress: WriteSignal<String>) -> Result<Custom, String> {
    let mut config = None;
    let mut index = None;
    let mut headers = Vec::new();
    let shards: Vec<&File> = files
        .iter()
        .filter(|f| f.name().ends_with(".safetensors"))
        .collect();
    let total = shards.len();
    let mut read = 0u64;
    for f in &files {
        let n = f.name();
        if n.ends_with(".index.json") {
            index = Some(read_text(f).await?.into_bytes());
        } else if n.ends_with(".json") && (n == "config.json" || config.is_none()) {
            config = Some(read_text(f).await?);
        } else if !n.ends_with(".safetensors") {
            return Err(format!(
                "`{n}` is neither a .safetensors file nor a JSON file"
            ));
        }
    }
    for (i, f) in shards.iter().enumerate() {
        let h = read_header(f).await?;
        read += 8 + h.header_len;
        headers.push((f.name(), h));
        progress.set(format!("read {} of {total} headers", i + 1));
    }
    let name = shards.first().map_or_else(
        || "config.json".to_string(),
        |f| f.name().trim_end_matches(".safetensors").to_string(),
    );
    assemble(name, config, headers, index, "files".into(), read)
}

/// The bring-your-own-model panel.
#[component]
pub fn ModelSource() -> impl IntoView {
    let st = expect_context::<AppState>();
    let (progress, set_progress) = signal(String::new());
    let (error, set_error) = signal(Option::<String>::None);
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
                fmt_count(c.header_bytes_read),
                c.shards
            ));
            st.custom.set(Some(c));
        }
        Err(e) => {
            set_progress.set(String::new());
            set_error.set(Some(e));
        }
    };
    let take = move |files: Vec<File>| {
        if files.is_empty() {
            return;
        }
        set_error.set(None);
        set_progress.set(format!("reading {} file(s)…", files.len()));
        spawn_local(async move {
            finish(load_files(files, set_progress).await, "read".to_string());
        });
    };
    let import = move |_| {
        let (r, ep, tk) = (
            repo.get_untracked(),
            endpoint.get_untracked(),
            token.get_untracked(),
        );
        set_error.set(None);
        set_progress.set(format!("fetching {r}…"));
        spawn_local(async move {
            let res = import_hub(&ep, &r, "main", &tk, |d, t| {
                set_progress.set(format!("read {d} of {t} shard headers"))
            })
            .await;
            let res = res.and_then(|h| {
                assemble(
                    r.clone(),
                    Some(h.config),
                    h.headers,
                    None,
                    format!("hub:{r}"),
                    h.header_bytes,
                )
            });
            finish(res, format!("imported {r}:"));
        });
    };
    let summary = move || {
        st.custom.get().map(|c| {
            let u = st.units.get();
            let rep = c.report.clone().map(|r| {
                let dtypes = r.bytes_per_dtype.iter().map(|(k, v)| format!("{k} {}", fmt_bytes(*v, u))).collect::<Vec<_>>().join(", ");
                let warnings = r.warnings.iter().map(|w| view! { <li>{w.clone()}</li> }).collect_view();
                view! {
                    <p>
                        {format!("{} tensors, {} parameters ({} logical), {} in all: {dtypes}. Quantization: {}.", fmt_count(r.tensor_count), fmt_count(r.parameter_count), fmt_count(r.logical_parameter_count), fmt_bytes(r.total_bytes, u), r.quantization.label())}
                    </p>
                    <ul>{warnings}</ul>
                }
            });
            let problems = c.index_problems.iter().map(|p| view! { <li class="vf-bad">{p.clone()}</li> }).collect_view();
            let twin = st.plan.get().ok().and_then(|p| p.catalog_twin);
            view! {
                <div class="vf-custom" data-testid="file-report">
                    <strong>{format!("Your model: {}", c.name)}</strong>
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
                    take(crate::files::files_of(ev.data_transfer().and_then(|d| d.files())));
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
            {move || error.get().map(|e| view! { <p class="vf-verdict vf-bad" role="alert" data-testid="file-error">{e}</p> })}
            {summary}
        </details>
    }
}
