//! "Check my command": paste a `vllm serve`, SGLang or `trtllm-serve` command (or a
//! `docker run` / Kubernetes `args:` list); the core reads it and plans it on the chosen GPU
//! for the page's workload (`vramfit_core::command::check`), and this box lists what
//! contradicts. The pasted text lives in the URL (`cmd`), so the share link carries it.
//! Everything shown is text: the command and the messages quoting it are untrusted.

use crate::components::explained::Explained;
use crate::lazy::Lazy;
use crate::state::{AppState, CATALOG};
use leptos::prelude::*;
use vramfit_core::command::{check, CommandCheck, Severity};
use vramfit_core::inputs::Field;
use vramfit_core::units::fmt_count;

fn severity_class(s: Severity) -> &'static str {
    match s {
        Severity::WillNotStart => "vf-finding vf-bad",
        Severity::Warning => "vf-finding vf-warn",
        Severity::Note => "vf-finding",
    }
}

fn severity_label(s: Severity) -> &'static str {
    match s {
        Severity::WillNotStart => "Will not start: ",
        Severity::Warning => "Warning: ",
        Severity::Note => "Note: ",
    }
}

/// The result of a check: what was read, the verdict, each contradiction.
fn checked(c: CommandCheck) -> impl IntoView {
    let p = &c.plan;
    let starts = c.starts();
    let summary = format!(
        "{} · {} ({}) · TP {} × PP {} · {} weights · KV {} · max-model-len {}",
        p.engine,
        c.command.model,
        p.model_id,
        p.tensor_parallel_size,
        p.pipeline_parallel_size,
        p.format,
        p.kv_dtype.id(),
        fmt_count(p.estimate.max_model_len)
    );
    let headline = c.verdict.clone();
    let quiet: Vec<String> = c
        .command
        .unmodelled
        .iter()
        .filter(|u| !u.affects_memory)
        .map(|u| u.flag.clone())
        .collect();
    let items = c
        .checks
        .into_iter()
        .map(|k| {
            view! {
                <li class=severity_class(k.severity) data-testid="command-check" data-id=k.id>
                    <strong>{severity_label(k.severity)}</strong><Explained text=k.message/>
                </li>
            }
        })
        .collect_view();
    view! {
        <div data-testid="command-checks" data-state=if starts { "starts" } else { "will-not-start" }>
            <p class=if starts { "vf-verdict vf-ok" } else { "vf-verdict vf-bad" }><Explained text=headline/></p>
            <p class="vf-caveat">{summary}</p>
            <ul class="vf-checks">{items}</ul>
            {(!quiet.is_empty()).then(|| view! { <p class="vf-caveat">"Not modelled (no effect on memory): "{quiet.join(", ")}</p> })}
        </div>
    }
}

/// The "Check my command" box of the Size view: the text box here, its checks from the views
/// module (`src/views.rs`, [`CommandChecks`]) once there is a command.
#[component]
pub fn CommandView() -> impl IntoView {
    let st = expect_context::<AppState>();
    let text = Memo::new(move |_| st.decoded.with(|(i, _)| i.command.clone()));
    let any = Memo::new(move |_| !text.with(|t| t.trim().is_empty()));
    // A text the input table refuses (longer than `MAX_COMMAND_LEN`): it stays in the box,
    // its message shows, and the checks of the last accepted command are hidden meanwhile.
    let (error, set_error) = signal(Option::<String>::None);
    // A command set from elsewhere (a link, back/forward) replaces the refused paste and its
    // message.
    Effect::new(move |_| {
        text.track();
        set_error.set(None);
    });
    view! {
        <h2>"Check my command"</h2>
        <label class="vf-field">
            <span>"Paste a vllm serve, python -m sglang.launch_server or trtllm-serve command (also inside docker run or a Kubernetes args: list); it is checked on the GPU and workload above"</span>
            <textarea
                data-testid="command-input"
                rows="4"
                spellcheck="false"
                prop:value=move || text.get()
                aria-invalid=move || error.with(Option::is_some).to_string()
                on:input=move |ev| {
                    let v = event_target_value(&ev);
                    let mut next = st.decoded.get_untracked().0;
                    match next.set(Field::Command, &v) {
                        Ok(()) => {
                            set_error.set(None);
                            st.update(true, |i| *i = next);
                        }
                        Err(e) => set_error.set(Some(e)),
                    }
                }
            ></textarea>
            {move || error.get().map(|e| view! { <span class="vf-field-error" role="alert" data-testid="command-error"><Explained text=e/></span> })}
        </label>
        {move || (any.get() && error.with(Option::is_none)).then(|| view! { <Lazy part=crate::views::Part::Command/> })}
    }
}

/// The checks of the pasted command (in the views chunk).
#[component]
pub fn CommandChecks() -> impl IntoView {
    let st = expect_context::<AppState>();
    // Checked on the page's GPU and workload; `None` while the box is empty.
    let result = Memo::new(move |_| {
        st.decoded.with(|(i, _)| {
            (!i.command.trim().is_empty())
                .then(|| check(&CATALOG, i, &i.command).map_err(|e| e.to_string()))
        })
    });
    move || {
        result.get().map(|r| match r {
            Ok(c) => checked(c).into_any(),
            Err(e) => view! {
                <div data-testid="command-checks" data-state="error">
                    <p class="vf-verdict vf-warn">{e}</p>
                </div>
            }
            .into_any(),
        })
    }
}
