//! "Quantization savings": every weight format side by side, with its quality caveat.

use crate::components::explained::Explained;
use crate::state::{AppState, CATALOG};
use leptos::prelude::*;
use vramfit_core::plan::all_formats;
use vramfit_core::units::{fmt_bytes, fmt_count, fmt_num};

/// The quantization view.
#[component]
pub fn QuantView() -> impl IntoView {
    let st = expect_context::<AppState>();
    let rows =
        Memo::new(move |_| all_formats(&CATALOG, &st.decoded.get().0).map_err(|e| e.to_string()));
    move || {
        let u = st.units.get();
        match rows.get() {
            Err(e) => view! { <p class="vf-verdict vf-bad"><Explained text=e/></p> }.into_any(),
            Ok(rows) => {
                let base = rows
                    .iter()
                    .find(|r| r.format == vramfit_core::dtype::WeightFormat::Bf16)
                    .map_or(0, |r| r.total_gpus);
                let body = rows
                    .iter()
                    .map(|r| {
                        let gpus = if r.gpus_per_replica == 0 {
                            r.outcome.clone()
                        } else {
                            r.total_gpus.to_string()
                        };
                        let saving = if r.gpus_per_replica == 0 || base == 0 {
                            "–".to_string()
                        } else if r.total_gpus < base {
                            format!("{} fewer", base - r.total_gpus)
                        } else if r.total_gpus == base {
                            "same".to_string()
                        } else {
                            format!("{} more", r.total_gpus - base)
                        };
                        view! {
                            <tr data-testid=format!("quant-{}", r.format.id())>
                                <th scope="row">{r.format.id()}</th>
                                <td>{fmt_bytes(r.model_weights_bytes, u)}</td>
                                <td>{fmt_bytes(r.estimate.weights_bytes, u)}</td>
                                <td>{gpus}</td>
                                <td>{saving}</td>
                                <td>{if r.gpus_per_replica == 0 { "–".to_string() } else { fmt_count(r.estimate.max_model_len_fit) }}</td>
                                <td>{r.decode_tokens_per_s.map_or_else(|| "–".to_string(), |d| fmt_num(d, 1))}</td>
                                <td class="vf-caveat">{r.caveat}</td>
                            </tr>
                        }
                    })
                    .collect_view();
                view! {
                    <h2>"Memory and GPUs per weight format"</h2>
                    <p class="vf-caveat">"Embeddings, LM head, norms and MoE routers stay 16-bit in every format; INT4 counts its group scales and zero points; FP8 its per-channel scales."</p>
                    <table class="vf-table" data-testid="quant-table">
                        <thead><tr><th>"Format"</th><th>"Weights (whole model)"</th><th>"Weights per GPU"</th><th>"GPUs for the workload"</th><th>"vs bf16"</th><th>"Longest context"</th><th>"Decode tok/s/user"</th><th>"Quality caveat"</th></tr></thead>
                        <tbody>{body}</tbody>
                    </table>
                }
                .into_any()
            }
        }
    }
}
