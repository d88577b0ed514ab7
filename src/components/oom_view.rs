//! "Explain my OOM": paste an out-of-memory message, get the cause and the fix. The import
//! worker reads the message and explains it from its numbers, so that code and its texts
//! stay out of the first load; the model check (`vramfit_core::oom::with_model`: the
//! app's model, format and GPU, or the model the message names, sized by the core the page
//! already holds) adds its findings here. This view shows the answer, as text.

use crate::components::explained::Explained;
use crate::state::{AppState, CATALOG};
use crate::worker_client::{Latest, Reply, OTHER_ANSWER};
use leptos::prelude::*;
use vramfit_core::oom::{with_model, Hints};
use vramfit_core::units::{fmt_bytes, fmt_count};
use vramfit_protocol::{Explained, Request};

/// The question an answer is for: the pasted text and the model's parameter count.
type AskedFor = (String, Option<u64>);

/// The OOM explainer.
#[component]
pub fn OomView() -> impl IntoView {
    let st = expect_context::<AppState>();
    let text = st.oom_text;
    let params = Memo::new(move |_| st.plan.get().ok().map(|p| p.parameters));
    // What to ask: the text and the model's parameter count, `None` while the text is empty.
    let asked = Memo::new(move |_| {
        let t = text.get();
        (!t.trim().is_empty()).then(|| (t, params.get()))
    });
    // The worker's latest answer, with the question it answers. Written only by the
    // worker's reply, never by an effect.
    let answered = RwSignal::new(Option::<(AskedFor, Result<Explained, String>)>::None);
    let latest = Latest::default();
    // The one effect: sync with the outside world (the worker).
    Effect::new(move |_| match asked.get() {
        None => {
            latest.cancel();
        }
        Some((t, p)) => {
            let key = (t.clone(), p);
            let ask = Request::ExplainOom {
                text: t,
                parameters: p,
            };
            latest.request(&ask, None, move |reply| {
                let explained = match reply {
                    Reply::Progress(_) => return,
                    Reply::Explained(e) => Ok(e),
                    Reply::Failed(e) => Err(e),
                    Reply::Imported(_) => Err(OTHER_ANSWER.to_string()),
                };
                answered.set(Some((key.clone(), explained)));
            });
        }
    });
    // The answer shown: the latest one while the text is not empty (kept while a newer
    // question is pending).
    let parsed = Memo::new(move |_| {
        asked
            .with(Option::is_some)
            .then(|| answered.get().map(|(_, r)| r))
            .flatten()
            .map(|r| {
                r.map(|e| {
                    let hints = st.decoded.with(|(i, _)| Hints::from_inputs(&CATALOG, i));
                    Explained {
                        findings: with_model(&e.report, &hints, e.findings),
                        report: e.report,
                    }
                })
            })
    });
    let pending = Signal::derive(move || {
        asked.with(|a| {
            a.as_ref()
                .is_some_and(|a| answered.with(|r| r.as_ref().is_none_or(|(k, _)| k != a)))
        })
    });
    let report_rows = move || {
        let u = st.units.get();
        parsed
            .get()
            .and_then(Result::ok)
            .map(|Explained { report: r, .. }| {
                let b = |x: Option<u64>| x.map_or("–".to_string(), |v| fmt_bytes(v, u));
                let mut rows = vec![
                    ("Message", r.source.label().to_owned()),
                    ("Model named", r.model.clone().unwrap_or_else(|| "–".into())),
                    ("GPU", r.gpu_index.map_or("–".into(), |g| g.to_string())),
                    ("Tried to allocate", b(r.tried_to_allocate_bytes)),
                    ("Total capacity", b(r.total_capacity_bytes)),
                    ("Free", b(r.free_bytes)),
                    ("Allocated by PyTorch", b(r.allocated_by_pytorch_bytes)),
                    ("Reserved by PyTorch", b(r.reserved_by_pytorch_bytes)),
                    ("This process in use", b(r.this_process_in_use_bytes)),
                ];
                for (pid, bytes) in &r.other_processes {
                    rows.push(("Process", format!("{pid}: {}", fmt_bytes(*bytes, u))));
                }
                if let Some(l) = r.max_model_len {
                    rows.push(("max_model_len", fmt_count(l)));
                }
                if let Some(l) = r.kv_cache_max_tokens {
                    rows.push(("KV cache holds (tokens)", fmt_count(l)));
                }
                if let Some(l) = r.estimated_max_model_len {
                    rows.push(("vLLM's estimated max length", fmt_count(l)));
                }
                rows.into_iter()
                    .filter(|(_, v)| v != "–")
                    .map(|(k, v)| view! { <tr><th scope="row">{k}</th><td>{v}</td></tr> })
                    .collect_view()
            })
    };
    let findings = move || {
        parsed.get().and_then(Result::ok).map(|e| {
            e.findings
                .into_iter()
                .map(|f| {
                    let fixes = f
                        .fixes
                        .into_iter()
                        .map(|x| view! { <li><Explained text=x/></li> })
                        .collect_view();
                    view! {
                        <div class="vf-finding" data-testid="oom-finding">
                            <h3><Explained text=f.headline/></h3>
                            <p><Explained text=f.detail/></p>
                            <ul>{fixes}</ul>
                        </div>
                    }
                })
                .collect_view()
        })
    };
    let sizing = move || {
        st.plan.get().ok().map(|p| {
            let rows = p
                .formats
                .iter()
                .map(|r| {
                    let g = if r.gpus_per_replica == 0 { "does not fit".to_string() } else { format!("{} GPU(s), TP {}", r.total_gpus, r.tensor_parallel_size) };
                    format!("{}: {g}", r.format)
                })
                .collect::<Vec<_>>()
                .join(" · ");
            view! { <p data-testid="oom-sizing">{format!("For {} on {}: ", p.model_name, p.gpu_name)}{rows}</p> }
        })
    };
    view! {
        <h2>"Explain my out-of-memory error"</h2>
        <label class="vf-field">
            <span>"Paste a torch.cuda.OutOfMemoryError, \"CUDA out of memory\", or a vLLM start-up error"</span>
            <textarea
                data-testid="oom-input"
                rows="7"
                spellcheck="false"
                prop:value=move || text.get()
                on:input=move |ev| text.set(event_target_value(&ev))
            ></textarea>
        </label>
        {move || parsed.get().and_then(Result::err).map(|e| view! { <p class="vf-verdict vf-warn" data-testid="oom-error"><Explained text=e/></p> })}
        // The first answer waits for the import worker to load (a second module, fetched on
        // first use): say so rather than show nothing on a slow connection.
        {move || (pending.get() && parsed.with(Option::is_none)).then(|| view! { <p class="vf-caveat" data-testid="oom-pending" role="status">"Reading the message…"</p> })}
        <table class="vf-table" data-testid="oom-report"><tbody>{report_rows}</tbody></table>
        <div data-testid="oom-findings" data-state=move || if pending.get() { "pending" } else { "ready" }>{findings}</div>
        {sizing}
    }
}
