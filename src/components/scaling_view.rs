//! "TP scaling": tokens/s per GPU and in total for TP 1/2/4/8 (and PP), own link vs PCIe.

use crate::charts;
use crate::components::explained::Explained;
use crate::state::{AppState, CATALOG};
use leptos::prelude::*;
use vramfit_core::plan::{latency_curves, scaling_at};
use vramfit_core::share::enc;
use vramfit_core::throughput::Load;
use vramfit_core::units::{fmt_num, fmt_pct};

/// The scaling view.
#[component]
pub fn ScalingView() -> impl IntoView {
    let st = expect_context::<AppState>();
    let (max_load, set_max_load) = signal(true);
    let data = Memo::new(move |_| {
        let i = st.decoded.get().0;
        let lengths = max_load.get().then_some((
            i.workload.prompt_tokens.max(1),
            i.workload.output_tokens.max(1),
        ));
        scaling_at(
            &CATALOG,
            &i,
            lengths,
            max_load.get().then_some(Load::MaxLoad),
        )
        .map_err(|e| e.to_string())
    });
    let scaling_chart = move || data.get().ok().map(|d| charts::scaling_svg(&d));
    let curves =
        Memo::new(move |_| latency_curves(&CATALOG, &st.decoded.get().0).unwrap_or_default());
    let latency_chart = move || charts::latency_svg(&curves.get());
    view! {
        <h2>"Tensor-parallel scaling"</h2>
        <label class="vf-check">
            <input type="checkbox" data-testid="max-load" prop:checked=move || max_load.get() on:change=move |ev| set_max_load.set(event_target_checked(&ev))/>
            " Maximum load (batch as large as the KV cache allows, for the prompt/output lengths)"
        </label>
        <p data-testid="scaling-summary">{move || view! { <Explained text=data.get().map(|d| d.summary).unwrap_or_else(|e| e)/> }}</p>
        <div class="vf-chart" data-testid="scaling-chart" inner_html=scaling_chart></div>
        <div class="vf-actions">
            <a class="vf-button vf-secondary" data-testid="export-scaling-svg" download="vramfit-scaling.svg"
                href=move || scaling_chart().map(|s| format!("data:image/svg+xml;charset=utf-8,{}", enc(&s))).unwrap_or_default()>"Chart SVG"</a>
            <button type="button" class="vf-button vf-secondary" data-testid="export-scaling-png"
                on:click=move |_| if let Some(s) = scaling_chart() { charts::download_png(&s, 720, 360, "vramfit-scaling.png") }>"Chart PNG"</button>
        </div>
        <table class="vf-table" data-testid="scaling-table">
            <thead><tr><th>"TP"</th><th>"PP"</th><th>"tok/s total"</th><th>"tok/s per GPU"</th><th>"tok/s per user"</th><th>"batch"</th><th>"all-reduce share"</th><th>"TTFT ms"</th><th>"ITL ms"</th><th>"limited by"</th><th>"PCIe tok/s total"</th></tr></thead>
            <tbody>
                {move || data.get().ok().map(|d| {
                    d.own_link.iter().zip(d.pcie.iter()).map(|(p, q)| view! {
                        <tr>
                            <td>{p.tensor_parallel_size}</td>
                            <td>{p.pipeline_parallel_size}</td>
                            <td>{if p.fits { fmt_num(p.tokens_per_s_total, 0) } else { "does not fit".into() }}</td>
                            <td>{fmt_num(p.tokens_per_s_per_gpu, 0)}</td>
                            <td>{fmt_num(p.tokens_per_s_per_user, 1)}</td>
                            <td>{p.batch}</td>
                            <td>{fmt_pct(p.comm_fraction)}</td>
                            <td>{p.ttft_ms.map_or("–".into(), |t| fmt_num(t, 0))}</td>
                            <td>{fmt_num(p.itl_ms, 1)}</td>
                            <td data-testid="scaling-limit">{p.limited_by.id()}</td>
                            <td>{fmt_num(q.tokens_per_s_total, 0)}</td>
                        </tr>
                    }).collect_view()
                })}
            </tbody>
        </table>
        <h3>"Throughput versus latency"</h3>
        <p>"Each line is one layout; its points are 1, 2, 4, … requests in flight up to the most the KV cache holds. Right is faster for each user, up is more tokens per GPU."</p>
        <div class="vf-chart" data-testid="latency-chart" inner_html=latency_chart></div>
        <table class="vf-table" data-testid="latency-table">
            <thead><tr><th>"TP"</th><th>"requests in flight"</th><th>"tok/s per user"</th><th>"tok/s per GPU"</th><th>"ITL ms"</th><th>"TTFT ms"</th><th>"limited by"</th></tr></thead>
            <tbody>
                {move || curves.get().into_iter().flat_map(|c| {
                    let tp = c.tensor_parallel_size;
                    c.points.into_iter().map(move |p| view! {
                        <tr>
                            <td>{tp}</td>
                            <td>{p.concurrency}</td>
                            <td>{fmt_num(p.tokens_per_s_per_user, 1)}</td>
                            <td>{fmt_num(p.tokens_per_s_per_gpu, 0)}</td>
                            <td>{fmt_num(p.itl_ms, 1)}</td>
                            <td>{p.ttft_ms.map_or("–".into(), |t| fmt_num(t, 0))}</td>
                            <td>{p.limited_by.id()}</td>
                        </tr>
                    })
                }).collect_view()}
            </tbody>
        </table>
    }
}
