//! "Accuracy": the headline of docs/ACCURACY.md.

use leptos::prelude::*;
use vramfit_core::accuracy::HEADLINE;
use vramfit_core::serving::{HELD_OUT, UNSEEN_GPUS, VALIDATION};
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
    let pct = vramfit_core::units::fmt_pct;
    let engines = VALIDATION
        .iter()
        .map(|v| {
            view! { <tr><th scope="row">{v.engine}</th><td>{v.rows}</td><td>{v.gpus}</td><td>{pct(v.median_abs)}</td><td>{format!("{} to +{}", pct(v.p10), pct(v.p90))}</td></tr> }
        })
        .collect_view();
    view! {
        <h2>"How accurate is vramfit?"</h2>
        <p>"Every prediction is compared with published measurements (vLLM start-up logs, TensorRT-LLM throughput tables) on every test run. Absolute relative error:"</p>
        <table class="vf-table" data-testid="accuracy-table">
            <thead><tr><th>"Quantity"</th><th>"Rows"</th><th>"Median"</th><th>"90th percentile"</th></tr></thead>
            <tbody>{rows}</tbody>
        </table>
        <h3>"Speed on GPUs it was not fitted to"</h3>
        <p>{format!("Output tokens/s against {} published measurements, each GPU predicted with constants fitted without it (leave-one-GPU-out): median error {}, 90th percentile {}; speed-up ratios across layouts ({} pairs): median {}.", HELD_OUT.rows, pct(HELD_OUT.median), pct(HELD_OUT.p90), HELD_OUT.speedup_rows, pct(HELD_OUT.speedup_median))}</p>
        <table class="vf-table" data-testid="speed-validation-table">
            <thead><tr><th>"Engine"</th><th>"Rows"</th><th>"GPUs"</th><th>"Held-out median"</th><th>"Band (10th–90th percentile)"</th></tr></thead>
            <tbody>{engines}</tbody>
        </table>
        <p data-testid="unseen-gpus">{format!("On {} GPUs outside the calibration set ({}; {} rows of TensorRT-LLM's own tables), predicted with the shipped constants and never fitted on: median error {}, 90th percentile {}. TensorRT-LLM's band pools these rows with its leave-one-GPU-out ones.", UNSEEN_GPUS.gpu_ids.len(), UNSEEN_GPUS.gpu_ids.join(", "), UNSEEN_GPUS.rows, pct(UNSEEN_GPUS.median), pct(UNSEEN_GPUS.p90))}</p>
        <p>"llama.cpp's band comes from published llama-bench runs of one user decoding on one GPU or Apple or AMD chip, never fitted on; llama.cpp with more users or GPUs, and engines with no measurement the bands can pool (SGLang, whose published fixed-length runs are short runs reported beside the bands in docs/ACCURACY.md; transformers), are shown as not validated, without a band."</p>
        <p>"The full row-by-row table is docs/ACCURACY.md in the repository. Memory follows vLLM v0.19's accounting; older versions (v0.11–v0.16) can be selected as the engine."</p>
    }
}
