//! "Hardware budget": every catalog GPU ranked by what it costs to serve the workload.

use crate::components::number_field::NumberField;
use crate::state::{AppState, CATALOG};
use leptos::prelude::*;
use vramfit_core::budget::{cheapest, CostRow};
use vramfit_core::export::budget_csv;
use vramfit_core::inputs::Field;
use vramfit_core::share::enc;
use vramfit_core::units::{fmt_num, fmt_usd};

#[derive(Clone, Copy, PartialEq, Eq)]
enum SortKey {
    Purchase,
    Hourly,
    PerToken,
    Gpus,
    Power,
    Speed,
}

impl SortKey {
    /// Orders two rows by this column (missing prices last; speed descending).
    fn cmp(self, a: &CostRow, b: &CostRow) -> std::cmp::Ordering {
        let inf = f64::INFINITY;
        match self {
            SortKey::Purchase => a
                .purchase_usd
                .unwrap_or(inf)
                .total_cmp(&b.purchase_usd.unwrap_or(inf)),
            SortKey::Hourly => a
                .cloud_usd_per_hour
                .unwrap_or(inf)
                .total_cmp(&b.cloud_usd_per_hour.unwrap_or(inf)),
            SortKey::PerToken => a
                .usd_per_million_tokens
                .unwrap_or(inf)
                .total_cmp(&b.usd_per_million_tokens.unwrap_or(inf)),
            SortKey::Gpus => a.total_gpus.cmp(&b.total_gpus),
            SortKey::Power => a
                .power_w
                .unwrap_or(inf)
                .total_cmp(&b.power_w.unwrap_or(inf)),
            SortKey::Speed => b
                .decode_tokens_per_s_per_user
                .total_cmp(&a.decode_tokens_per_s_per_user),
        }
    }
}

/// The hardware-budget view.
#[component]
pub fn BudgetView() -> impl IntoView {
    let st = expect_context::<AppState>();
    let rows = Memo::new(move |_| cheapest(&CATALOG, &st.decoded.get().0));
    let (sort, set_sort) = signal(SortKey::Purchase);
    let header = move |label: &'static str, key: SortKey| {
        view! {
            <th aria-sort=move || if sort.get() == key { "ascending" } else { "none" }>
                <button type="button" class="vf-sort" on:click=move |_| set_sort.set(key)>{label}</button>
            </th>
        }
    };
    let csv_href = move || {
        format!(
            "data:text/csv;charset=utf-8,{}",
            enc(&budget_csv(&rows.get()))
        )
    };
    let inputs = Memo::new(move |_| st.decoded.get().0);
    view! {
        <h2>"What should we buy?"</h2>
        <p>
            {move || {
                let i = inputs.get();
                format!(
                    "Every GPU in the catalog that can serve {} concurrent users of {} + {} tokens (context {}), cheapest first.",
                    i.workload.users,
                    i.workload.prompt_tokens,
                    i.workload.output_tokens,
                    i.flags.max_model_len.map_or("native".to_string(), |x| x.to_string())
                )
            }}
        </p>
        <div class="vf-row">
            <NumberField
                field=Field::TargetTokensPerS
                id="target-tps"
                help="Minimum decode speed each user should see"
                step="any"
            />
            <NumberField
                field=Field::MaxTtftMs
                id="max-ttft-ms"
                help="Longest time to first token a user should wait (prefill of the prompt)"
                step="any"
            />
        </div>
        <table class="vf-table" data-testid="budget-table">
            <thead>
                <tr>
                    <th>"GPU"</th>
                    {header("GPUs", SortKey::Gpus)}
                    <th>"Layout"</th>
                    {header("Purchase", SortKey::Purchase)}
                    {header("$/hour", SortKey::Hourly)}
                    {header("$ per M tokens", SortKey::PerToken)}
                    {header("Power", SortKey::Power)}
                    {header("tok/s/user", SortKey::Speed)}
                </tr>
            </thead>
            <tbody>
                {move || {
                    let mut rows = rows.get();
                    let key = sort.get();
                    vramfit_core::order::sort_by(&mut rows, |a, b| (!a.meets_target).cmp(&!b.meets_target).then(key.cmp(a, b)));
                    rows.into_iter()
                        .map(|r| {
                            view! {
                                <tr data-testid=format!("budget-{}", r.gpu_id) class:vf-muted=!r.meets_target>
                                    <th scope="row">{r.gpu_name.clone()}</th>
                                    <td>{r.total_gpus}</td>
                                    <td>{format!("TP{}×PP{}×{}", r.tensor_parallel_size, r.pipeline_parallel_size, r.replicas)}</td>
                                    <td>{r.purchase_usd.map_or("–".into(), fmt_usd)}</td>
                                    <td>{r.cloud_usd_per_hour.map_or("–".into(), fmt_usd)}</td>
                                    <td>{r.usd_per_million_tokens.map_or("–".into(), fmt_usd)}</td>
                                    <td>{r.power_w.map_or("–".into(), |w| format!("{} W", fmt_num(w, 0)))}</td>
                                    <td>{fmt_num(r.decode_tokens_per_s_per_user, 1)}</td>
                                </tr>
                            }
                        })
                        .collect_view()
                }}
            </tbody>
        </table>
        <a class="vf-button" data-testid="budget-csv" download="vramfit-budget.csv" href=csv_href>"Export CSV"</a>
    }
}
