//! "Size it": the verdict, the per-GPU breakdown, formats side by side, engine commands.

use crate::charts;
use crate::components::explained::Explained;
use crate::components::later::Later;
use crate::components::memory_chart::{self, MemoryChart};
use crate::figures::{fit_class, FIGURES};
use crate::lazy::Lazy;
use crate::state::AppState;
use crate::views::Part;
use leptos::prelude::*;
use vramfit_core::commands;
use vramfit_core::export::{plan_csv, plan_markdown};
use vramfit_core::plan::{FormatRow, Plan};
use vramfit_core::share::enc;
use vramfit_core::units::{fmt_bytes, fmt_count, fmt_num, Units};

const DASH: &str = "–";

/// The formats table's GPUs cell: the count and layout, or what happens instead.
fn format_gpus(r: &FormatRow, _: Units) -> String {
    if r.gpus_per_replica > 0 {
        format!(
            "{} (TP{}×PP{})",
            r.total_gpus, r.tensor_parallel_size, r.pipeline_parallel_size
        )
    } else {
        r.outcome.clone()
    }
}

/// Points a clicked download link at its data before the browser follows it.
pub(crate) fn set_href(ev: &web_sys::MouseEvent, url: Option<String>) {
    use wasm_bindgen::JsCast;
    if let (Some(a), Some(url)) = (
        ev.current_target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlAnchorElement>().ok()),
        url,
    ) {
        a.set_href(&url);
    }
}

/// One headline figure.
#[component]
fn Figure(
    /// Label.
    label: &'static str,
    /// `data-testid` of the value.
    testid: &'static str,
    /// Explanation shown as a tooltip.
    help: &'static str,
    /// The value text.
    value: Signal<String>,
    /// The uncertainty or detail line.
    detail: Signal<String>,
) -> impl IntoView {
    view! {
        <div class="vf-figure" title=help>
            <div class="vf-figure-label">{label}</div>
            <div class="vf-figure-value" data-testid=testid>{move || value.get()}</div>
            <div class="vf-figure-detail">{move || detail.get()}</div>
        </div>
    }
}

/// The plan when it computes, read in place from the state's memo (no copy of the plan per
/// recompute).
#[derive(Clone, Copy)]
struct PlanOk(Memo<Result<Plan, String>>);

impl PlanOk {
    fn with<R>(self, f: impl FnOnce(Option<&Plan>) -> R) -> R {
        self.0.with(|p| f(p.as_ref().ok()))
    }
}

/// Shown while `items` is not empty: `build` makes the element once, when the list turns
/// non-empty, and the items inside it follow the memo, so a recompute that leaves the list as
/// it was touches no element (issue 19).
fn when_any<V: IntoView + 'static>(
    items: Memo<Vec<String>>,
    build: impl Fn(Memo<Vec<String>>) -> V + Send + Sync + 'static,
) -> impl IntoView {
    let any = Memo::new(move |_| items.with(|v| !v.is_empty()));
    move || any.get().then(|| build(items))
}

/// The items of a list of messages, each its [`Explained`] item.
fn explained_items(items: Memo<Vec<String>>) -> impl IntoView {
    move || {
        items
            .get()
            .into_iter()
            .map(|t| view! { <li><Explained text=t/></li> })
            .collect_view()
    }
}

/// The "Size it" view.
#[component]
pub fn SizeView() -> impl IntoView {
    let st = expect_context::<AppState>();
    let units = st.units;
    let ok = PlanOk(st.plan);
    let txt = move |f: fn(&Plan, Units) -> String| {
        Signal::derive(move || {
            let u = units.get();
            ok.with(|p| p.map(|p| f(p, u)).unwrap_or_else(|| "–".into()))
        })
    };
    // What the plan says, each through a memo built again only when it changes. One closure
    // type per value type (a `fn` picks the part), so Leptos's memo code is there once.
    let list = move |f: fn(&Plan) -> Vec<String>| {
        Memo::new(move |_| ok.with(|p| p.map(f).unwrap_or_default()))
    };
    let line =
        move |f: fn(&Plan) -> String| Memo::new(move |_| ok.with(|p| p.map(f).unwrap_or_default()));
    let has_plan = Memo::new(move |_| ok.with(|p| p.is_some()));
    // Each checked fix and its outcome, one after the other.
    let fixes = list(|p| {
        p.fixes
            .iter()
            .flat_map(|f| [f.to_string(), f.outcome()])
            .collect()
    });
    let warnings = list(|p| p.warnings.clone());
    let verdict_class = line(|p| fit_class(p.estimate.fit).to_string());
    let verdict_text = line(|p| p.verdict.clone());
    let fixes = when_any(fixes, |fixes| {
        let items = move || {
            fixes.with(|f| {
                f.chunks(2)
                    .map(|f| view! { <li data-testid="fix"><Explained text=f[0].clone()/><span class="vf-fix-outcome">{format!(" — {}", f[1])}</span></li> })
                    .collect_view()
            })
        };
        view! { <div class="vf-fixes"><p>"Checked fixes (each planned again and starts):"</p><ul data-testid="fixes">{items}</ul></div> }
    });
    let error = Memo::new(move |_| {
        st.plan
            .with(|p| p.as_ref().err().cloned().unwrap_or_default())
    });
    // Text the page refused (a field, the dropped files): the numbers are the last accepted
    // values', dimmed, and the note says which input holds what was not used.
    let refused = Memo::new(move |_| st.refused.get().join(", "));
    let stale = move || refused.with(|r| !r.is_empty());
    view! {
        <div class="vf-size" class:vf-stale=stale>
            {move || stale().then(|| view! {
                <p class="vf-stale-note" role="status" data-testid="stale-note">
                    {move || format!("Not updated: vramfit could not use what is in {} (see the message there); the numbers below are for the last values it took.", refused.get())}
                </p>
            })}
            {move || error.with(|e| !e.is_empty()).then(|| view! { <p class="vf-verdict vf-bad" role="alert">{error}</p> })}
            {move || has_plan.get().then(|| view! {
                <p class=move || verdict_class.get() data-testid="verdict">{move || view! { <Explained text=verdict_text.get()/> }}</p>
            })}
            {fixes}
            {when_any(warnings, |w| view! { <ul class="vf-notes" data-testid="plan-warnings">{explained_items(w)}</ul> })}
            <div class="vf-figures">
                {FIGURES
                    .iter()
                    .map(|f| view! { <Figure label=f.label testid=f.testid help=f.help value=txt(f.value) detail=txt(f.detail)/> })
                    .collect_view()}
            </div>
            <MemoryChart/>
            // Below the first result: built after the first paint (`later.rs`), from a chunk of
            // its own (`SizeRest`, src/views.rs), so the first result does not wait for its code.
            <Later>
            <Lazy part=Part::SizeRest/>
            </Later>
        </div>
    }
}

/// "Size it" below the first result: the breakdown, the features' costs, the provenance, the
/// formats side by side, the engine commands, the command checker and the exports. Built
/// after the first paint, from the first-view chunk (`src/views.rs`, `Part::SizeRest`).
#[component]
pub fn SizeRest() -> impl IntoView {
    let st = expect_context::<AppState>();
    let units = st.units;
    let ok = PlanOk(st.plan);
    let (copied, set_copied) = signal(false);
    let list = move |f: fn(&Plan) -> Vec<String>| {
        Memo::new(move |_| ok.with(|p| p.map(f).unwrap_or_default()))
    };
    let has_plan = Memo::new(move |_| ok.with(|p| p.is_some()));

    // Rows keyed by part (the breakdown) and by format (the formats table): a recompute
    // rewrites the cells' text, it does not build the rows again (issue 19).
    let parts = Memo::new(move |_| {
        ok.with(|p| {
            p.map(|p| p.estimate.parts().map(|x| (x.id, x.label, x.help)).to_vec())
                .unwrap_or_default()
        })
    });
    let part_bytes = move |id: &'static str| {
        move || {
            let u = units.get();
            ok.with(|p| {
                p.and_then(|p| p.estimate.parts().into_iter().find(|x| x.id == id))
                    .map(|x| fmt_bytes(x.bytes, u))
            })
        }
    };
    let part_row = move |(id, label, help): (&'static str, &'static str, &'static str)| {
        view! { <tr title=help><th scope="row">{label}</th><td>{part_bytes(id)}</td></tr> }
    };
    // What the deployment features add or move (`plan --json`'s feature fields).
    let features = move || {
        ok.with(|p| {
            let p = p?;
            let e = &p.estimate;
            let u = units.get();
            let rows = e.features.rows(e.kv_bytes_per_token);
            let users = st.decoded.with(|(i, _)| i.workload.users);
            let auto = e.vllm_auto_max_model_len.map(|n| view! {
                <p data-testid="vllm-auto-len">{format!("--max-model-len -1: vLLM picks {} tokens (the longest one request fits); the longest for your {} users is {} tokens each.", fmt_count(n), users, fmt_count(e.longest_len_for_users(users)))}</p>
            });
            (!rows.is_empty() || auto.is_some()).then(|| {
                let table = (!rows.is_empty()).then(|| {
                    let body = rows
                        .into_iter()
                        .map(|r| view! { <tr data-testid=format!("feature-{}", r.id)><th scope="row">{r.label}</th><td>{fmt_bytes(r.bytes, u)}</td><td>{r.note}</td></tr> })
                        .collect_view();
                    view! {
                        <table class="vf-table" data-testid="features-table">
                            <caption>"Deployment features, per GPU"</caption>
                            <tbody>{body}</tbody>
                        </table>
                    }
                });
                view! { {auto}{table} }
            })
        })
    };
    let format_ids = Memo::new(move |_| {
        ok.with(|p| {
            p.map(|p| p.formats.iter().map(|r| r.format.id()).collect::<Vec<_>>())
                .unwrap_or_default()
        })
    });
    let cell = move |id: &'static str, f: fn(&FormatRow, Units) -> String| {
        move || {
            let u = units.get();
            ok.with(|p| {
                p.and_then(|p| p.formats.iter().find(|r| r.format.id() == id))
                    .map(|r| f(r, u))
            })
        }
    };
    let format_row = move |id: &'static str| {
        view! {
            <tr data-testid=format!("format-{id}")>
                <th scope="row">{id}</th>
                <td>{cell(id, |r, u| fmt_bytes(r.model_weights_bytes, u))}</td>
                <td data-testid="format-outcome">{cell(id, format_gpus)}</td>
                <td>{cell(id, |r, _| if r.gpus_per_replica > 0 { fmt_count(r.estimate.max_model_len_fit) } else { DASH.into() })}</td>
                <td>{cell(id, |r, _| if r.gpus_per_replica > 0 { fmt_num(r.estimate.max_concurrency_workload, 1) } else { DASH.into() })}</td>
                <td>{cell(id, |r, _| r.decode_tokens_per_s.map_or_else(|| DASH.into(), |d| fmt_num(d, 1)))}</td>
                <td class="vf-caveat">{cell(id, |r, _| r.caveat.into())}</td>
            </tr>
        }
    };
    let notes = list(commands::notes);
    let provenance = list(|p| {
        p.provenance
            .iter()
            .map(|e| format!("{}: {} ({})", e.quantity, e.source, e.detail))
            .collect()
    });
    // Commands keyed by position: a recompute rewrites the text of those that changed.
    let command_list = Memo::new(move |_| ok.with(|p| p.map(commands::all).unwrap_or_default()));
    let command_count = Memo::new(move |_| command_list.with(Vec::len));
    let command = move |i: usize| {
        let part = move |f: fn(&commands::Command) -> String| {
            move || command_list.with(|c| c.get(i).map(f).unwrap_or_default())
        };
        view! { <div class="vf-cmd" data-testid=part(|c| format!("command-{}", c.id))><div class="vf-cmd-name">{part(|c| c.label.into())}</div><pre><code>{part(|c| c.text.clone())}</code></pre></div> }
    };
    let cmds = move || {
        has_plan.get().then(|| {
            view! {
                {when_any(notes, |n| view! { <ul class="vf-notes" data-testid="command-notes">{explained_items(n)}</ul> })}
                <For each=move || 0..command_count.get() key=|i| *i children=command/>
            }
        })
    };
    let copy_link = move |_| {
        crate::state::flush_url();
        if let Some(w) = web_sys::window() {
            if let Ok(href) = w.location().href() {
                let _ = w.navigator().clipboard().write_text(&href);
                set_copied.set(true);
            }
        }
    };

    view! {
            <table class="vf-table" data-testid="breakdown">
                <caption>"Per-GPU memory, vLLM accounting"</caption>
                <tbody><For each=move || parts.get() key=|x| x.0 children=part_row/></tbody>
            </table>
            {features}
            {when_any(provenance, |prov| {
                let items = move || prov.get().into_iter().map(|t| view! { <li>{t}</li> }).collect_view();
                view! { <details class="vf-notes" data-testid="provenance"><summary>"Where each number comes from (config, headers, assumption)"</summary><ul>{items}</ul></details> }
            })}
            <h2>"Weight formats side by side"</h2>
            <table class="vf-table" data-testid="formats">
                <thead><tr><th>"Format"</th><th>"Weights (whole model)"</th><th>"GPUs"</th><th>"Longest context"</th><th>"Concurrent requests"</th><th>"Decode tok/s/user"</th><th>"Quality"</th></tr></thead>
                <tbody><For each=move || format_ids.get() key=|id| *id children=format_row/></tbody>
            </table>
            <h2>"Engine commands"</h2>
            <div class="vf-cmds" data-testid="commands">{cmds}</div>
            <crate::components::command_view::CommandView/>
            <div class="vf-actions">
                <button type="button" class="vf-button" data-testid="share-link" on:click=copy_link>
                    {move || if copied.get() { "Link copied" } else { "Copy share link" }}
                </button>
                // Export links get their data URL when clicked, not on every recompute.
                <a class="vf-button vf-secondary" data-testid="export-md" download="vramfit-plan.md" href="#"
                    on:click=move |ev| set_href(&ev, ok.with(|p| p.map(|p| format!("data:text/markdown;charset=utf-8,{}", enc(&plan_markdown(p, units.get_untracked()))))))>"Markdown"</a>
                <a class="vf-button vf-secondary" data-testid="export-csv" download="vramfit-plan.csv" href="#"
                    on:click=move |ev| set_href(&ev, ok.with(|p| p.map(|p| format!("data:text/csv;charset=utf-8,{}", enc(&plan_csv(p))))))>"CSV"</a>
                <a class="vf-button vf-secondary" data-testid="export-svg" download="vramfit-memory.svg" href="#"
                    on:click=move |ev| set_href(&ev, memory_chart::markup().map(|s| format!("data:image/svg+xml;charset=utf-8,{}", enc(&s))))>"Chart SVG"</a>
                <button type="button" class="vf-button vf-secondary" data-testid="export-png"
                    on:click=move |_| if let Some(s) = memory_chart::markup() { charts::download_png(&s, 720, 220, "vramfit-memory.png") }>"Chart PNG"</button>
            </div>
    }
}
