//! The import worker: a second WebAssembly module that runs as a dedicated Web Worker and
//! does the page's rarely used heavy work off the main thread and outside the first load
//! (ARCHITECTURE.md; docs/PERFORMANCE.md, "First-load size"):
//! - reads safetensors headers from dropped files or a Hugging Face repo, summarizes them
//!   and checks them against `model.safetensors.index.json` ([`files`]);
//! - explains a pasted out-of-memory message (`vramfit_core::oom`).
//!
//! The page starts it on first use. Messages: the `vramfit-protocol` crate. All the numbers
//! come from `vramfit-core` (with its `import` and `oom` features, which the page leaves
//! off), as everywhere else. No UI crate: this module carries only what it runs.

mod files;

use js_sys::{Array, Object, Reflect};
use vramfit_core::oom::{self, Hints};
use vramfit_protocol::{Explained, Reply, Request};
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

/// Answers the page: `{id, kind, text}` ([`Reply::into_parts`]).
fn post(id: &JsValue, reply: Reply) {
    let (kind, text) = reply
        .into_parts()
        .unwrap_or_else(|e| ("Failed", format!("could not encode the answer: {e}")));
    let msg = Object::new();
    let _ = Reflect::set(&msg, &"id".into(), id);
    let _ = Reflect::set(&msg, &"kind".into(), &kind.into());
    let _ = Reflect::set(&msg, &"text".into(), &text.into());
    // A message of three plain values always clones.
    let _ = scope().post_message(&msg);
}

/// Handles one request and answers it exactly once (after any progress lines).
async fn handle(msg: JsValue) {
    let field = |k: &str| Reflect::get(&msg, &k.into()).unwrap_or(JsValue::UNDEFINED);
    let id = field("id");
    let progress = |line: String| post(&id, Reply::Progress(line));
    let request = field("request")
        .as_string()
        .ok_or_else(|| "no request text".to_string())
        .and_then(|t| Request::from_json(&t));
    let answer = match request {
        Err(e) => Err(format!("the import worker could not read the request: {e}")),
        Ok(Request::ImportFiles) => {
            let files: Vec<File> = Array::from(&field("files"))
                .iter()
                .filter_map(|f| f.dyn_into().ok())
                .collect();
            files::load_files(files, &progress)
                .await
                .map(Reply::Imported)
        }
        Ok(Request::ImportHub {
            repo,
            token,
            endpoint,
        }) => files::import_hub(&endpoint, &repo, "main", &token, |d, t| {
            progress(format!("read {d} of {t} shard headers"));
        })
        .await
        .and_then(|h| {
            files::assemble(
                repo.clone(),
                Some(("config.json".to_string(), h.config)),
                &h.shards,
                None,
                format!("hub:{repo}"),
                h.header_bytes,
            )
        })
        .map(Reply::Imported),
        Ok(Request::ExplainOom { text, parameters }) => {
            // The model check (catalog and sizing) runs on the page, which holds them.
            let hints = Hints {
                model_parameters: parameters,
                ..Hints::default()
            };
            oom::parse(&text).map_err(|e| e.to_string()).map(|report| {
                let findings = oom::diagnose_message(&report, &hints);
                Reply::Explained(Explained { report, findings })
            })
        }
    };
    post(&id, answer.unwrap_or_else(Reply::Failed));
}
