//! The import worker: a second WebAssembly module that runs as a dedicated Web Worker and
//! does the page's rarely used heavy work off the main thread and outside the first load
//! (ARCHITECTURE.md; docs/PERFORMANCE.md, "First-load size"):
//! - reads safetensors headers from dropped files or a Hugging Face repo, summarizes them
//!   and checks them against `model.safetensors.index.json` ([`files`]);
//! - explains a pasted out-of-memory message (`vramfit_core::oom`).
//!
//! The page starts it on first use. Messages: `src/protocol.rs`. All the numbers come from
//! `vramfit-core`, as everywhere else.

mod files;
#[path = "../protocol.rs"]
mod protocol;

use js_sys::{Array, Object, Reflect};
use protocol::Explained;
use vramfit_core::oom::{self, Hints};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{DedicatedWorkerGlobalScope, File, MessageEvent};

fn main() {
    let on_message = Closure::<dyn Fn(MessageEvent)>::new(|ev: MessageEvent| {
        wasm_bindgen_futures::spawn_local(handle(ev.data()));
    });
    scope().set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    on_message.forget(); // lives as long as the worker
}

fn scope() -> DedicatedWorkerGlobalScope {
    js_sys::global().unchecked_into()
}

/// Answers the page: `{id, kind, text}`.
fn post(id: &JsValue, kind: &str, text: &str) {
    let msg = Object::new();
    let _ = Reflect::set(&msg, &"id".into(), id);
    let _ = Reflect::set(&msg, &"kind".into(), &kind.into());
    let _ = Reflect::set(&msg, &"text".into(), &text.into());
    // A message of three plain values always clones.
    let _ = scope().post_message(&msg);
}

fn json<T: serde::Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string(value).map_err(|e| format!("could not encode the answer: {e}"))
}

/// Handles one request and answers it exactly once (after any progress lines).
async fn handle(msg: JsValue) {
    let field = |k: &str| Reflect::get(&msg, &k.into()).unwrap_or(JsValue::UNDEFINED);
    let text = |k: &str| field(k).as_string().unwrap_or_default();
    let id = field("id");
    let progress = |line: String| post(&id, "progress", &line);
    let answer = match text("op").as_str() {
        "files" => {
            let files: Vec<File> = Array::from(&field("files"))
                .iter()
                .filter_map(|f| f.dyn_into().ok())
                .collect();
            files::load_files(files, &progress)
                .await
                .and_then(|m| json(&m))
        }
        "hub" => {
            let repo = text("repo");
            files::import_hub(&text("endpoint"), &repo, "main", &text("token"), |d, t| {
                progress(format!("read {d} of {t} shard headers"));
            })
            .await
            .and_then(|h| {
                files::assemble(
                    repo.clone(),
                    Some(h.config),
                    &h.shards,
                    None,
                    format!("hub:{repo}"),
                    h.header_bytes,
                )
            })
            .and_then(|m| json(&m))
        }
        "oom" => {
            let hints = Hints {
                model_parameters: text("parameters").parse().ok(),
            };
            oom::parse(&text("text"))
                .map_err(|e| e.to_string())
                .and_then(|report| {
                    let findings = oom::diagnose_with(&report, &hints);
                    json(&Explained { report, findings })
                })
        }
        other => Err(format!("the import worker has no request `{other}`")),
    };
    match answer {
        Ok(done) => post(&id, "done", &done),
        Err(e) => post(&id, "error", &e),
    }
}
