//! "Accuracy": the headline of docs/ACCURACY.md.

use leptos::prelude::*;
use vramfit_core::accuracy::HEADLINE;
use vramfit_core::units::fmt_num;

/// The accuracy page.
#[component]
pub fn AccuracyView() -> impl IntoView {
    let rows = HEADLINE
        .iter()
        .map(|(name, median, p90, n)| {
            view! { <tr><th scope="row">{*name}</th><td>{*n}</td><td>{format!("{}%", fmt_num(*median, 2))}</td><td>{format!("{}%", fmt_num(*p90, 2))}</td></tr> }
        })
        .collect_view();
    view! {
        <h2>"How accurate is vramfit?"</h2>
        <p>"Every prediction is compared with published measurements (vLLM start-up logs, TensorRT-LLM throughput tables) on every test run. Absolute relative error:"</p>
        <table class="vf-table" data-testid="accuracy-table">
            <thead><tr><th>"Quantity"</th><th>"Rows"</th><th>"Median"</th><th>"90th percentile"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
        <p>"The full row-by-row table is docs/ACCURACY.md in the repository. Memory follows vLLM v0.19's accounting; older versions (v0.11–v0.16) can be selected as the engine."</p>
    }
}
