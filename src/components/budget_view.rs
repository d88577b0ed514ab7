//! "Hardware budget": every catalog GPU in every platform that takes it, ranked by total cost
//! of ownership for the workload, with renting and an API to compare (`vramfit_core::budget`).

use crate::components::number_field::NumberField;
use crate::state::{AppState, CATALOG};
use leptos::prelude::*;
use vramfit_core::budget::{age_months, budget, BuyOption};
use vramfit_core::export::budget_csv;
use vramfit_core::inputs::{Field, VENDORS};
use vramfit_core::share::enc;
use vramfit_core::units::{fmt_num, fmt_usd};

#[derive(Clone, Copy, PartialEq, Eq)]
enum SortKey {
    Tco,
    Purchase,
    Hourly,
    PerToken,
    Gpus,
    Power,
    Speed,
}

impl SortKey {
    /// Orders two options by this column (missing values last; speed descending).
    fn cmp(self, a: &BuyOption, b: &BuyOption) -> std::cmp::Ordering {
        let inf = f64::INFINITY;
        let by = |x: Option<f64>, y: Option<f64>| x.unwrap_or(inf).total_cmp(&y.unwrap_or(inf));
        match self {
            SortKey::Tco => by(a.money.tco_usd, b.money.tco_usd),
            SortKey::Purchase => by(a.purchase_usd, b.purchase_usd),
            SortKey::Hourly => by(a.cloud_usd_per_hour, b.cloud_usd_per_hour),
            SortKey::PerToken => by(
                a.money.usd_per_million_tokens,
                b.money.usd_per_million_tokens,
            ),
            SortKey::Gpus => a.gpus.cmp(&b.gpus),
            SortKey::Power => by(a.power_kw, b.power_kw),
            SortKey::Speed => b.tokens_per_s_per_user.total_cmp(&a.tokens_per_s_per_user),
        }
    }
}

fn usd(x: Option<f64>) -> String {
    x.map_or("–".into(), fmt_usd)
}

/// This month from the browser's clock: `(year, month)`.
fn this_month() -> (i64, i64) {
    let d = js_sys::Date::new_0();
    (i64::from(d.get_full_year()), i64::from(d.get_month()) + 1)
}

/// The hardware-budget view.
#[allow(clippy::too_many_lines)] // one view: inputs, table, chart
#[component]
pub fn BudgetView() -> impl IntoView {
    let st = expect_context::<AppState>();
    let inputs = Memo::new(move |_| st.decoded.get().0);
    let answer = Memo::new(move |_| budget(&CATALOG, &inputs.get()));
    let (sort, set_sort) = signal(SortKey::Tco);
    // The option the chart shows: (gpu, platform); `None` = the first kept.
    let (chosen, set_chosen) = signal(Option::<(String, String)>::None);
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
            enc(&budget_csv(&answer.get()))
        )
    };
    let age = move || {
        let b = answer.get();
        let (y, m) = this_month();
        match (&b.prices_oldest, &b.prices_newest) {
            (Some(lo), Some(hi)) => {
                let old = age_months(lo, y, m)
                    .map_or(String::new(), |a| format!(", {a} months old at most"));
                format!("Prices dated {lo} to {hi}{old}: street prices, list prices and estimates as each entry says (Catalog view: sources).")
            }
            _ => "No dated prices.".to_string(),
        }
    };
    let selected = Memo::new(move |_| {
        let b = answer.get();
        let pick = chosen.get();
        b.options
            .iter()
            .find(|o| {
                pick.as_ref()
                    .is_some_and(|(g, p)| *g == o.gpu && *p == o.platform)
            })
            .or_else(|| b.options.iter().find(|o| !o.excluded))
            .cloned()
    });
    let chart = move || {
        selected.get().map(|o| {
            let t = answer.get().terms(&inputs.get());
            crate::charts::crossover_svg(&o.curve(&t, 60))
        })
    };
    let crossover = move || {
        let Some(o) = selected.get() else {
            return "Nothing serves the workload within the constraints.".to_string();
        };
        let m = &o.money;
        let tok = |x: Option<f64>| {
            x.map_or(
                "never (a fully used unit costs more than the same tokens)".into(),
                |x| format!("above {} M output tokens a month", fmt_num(x / 1e6, 0)),
            )
        };
        let api = if answer.get().api_usd_per_million.is_some() {
            format!(
                "; it beats the API {}",
                tok(m.buy_beats_api_above_tokens_per_month)
            )
        } else {
            "; enter an API price to compare".to_string()
        };
        let onprem = if inputs.get().buyer.on_prem {
            " (On-prem only: renting and the API are shown to compare, not as answers.)"
        } else {
            ""
        };
        format!(
            "{} × {} in {}: {}{api}. At the planned {} M output tokens a month: buy {} over the years, on demand {}, reserved {}, API {}.{onprem}",
            o.gpus,
            o.gpu_name,
            o.platform_name,
            if m.on_demand_usd.is_some() {
                format!("buying beats renting on demand {}", tok(m.buy_beats_on_demand_above_tokens_per_month))
            } else {
                "the catalog has no on-demand price for it".to_string()
            },
            fmt_num(m.tokens_per_month / 1e6, 0),
            usd(m.tco_usd),
            usd(m.on_demand_usd),
            usd(m.reserved_usd),
            usd(m.api_usd),
        )
    };
    let examples = CATALOG
        .tco
        .api_examples
        .iter()
        .map(|a| {
            let v = format!("{}|{}", a.input_usd_per_million, a.output_usd_per_million);
            let label = format!(
                "{} {}: ${} in / ${} out per M ({})",
                a.provider,
                a.model,
                a.input_usd_per_million,
                a.output_usd_per_million,
                a.date.as_deref().unwrap_or("undated")
            );
            view! { <option value=v>{label}</option> }
        })
        .collect_view();
    view! {
        <h2>"What should we buy?"</h2>
        <p>
            {move || {
                let i = inputs.get();
                format!(
                    "Every GPU in every server platform of the catalog that can serve {} concurrent users of {} + {} tokens (context {}), ranked by total cost of ownership over the years.",
                    i.workload.users,
                    i.workload.prompt_tokens,
                    i.workload.output_tokens,
                    i.flags.max_model_len.map_or("native".to_string(), |x| x.to_string())
                )
            }}
        </p>
        <p class="vf-muted" data-testid="budget-price-age">{age}</p>
        <div class="vf-row">
            <NumberField field=Field::TargetTokensPerS id="target-tps" help="Minimum decode speed each user should see" step="any"/>
            <NumberField field=Field::MaxTtftMs id="max-ttft-ms" help="Longest time to first token a user should wait (prefill of the prompt)" step="any"/>
        </div>
        <div class="vf-row">
            <NumberField field=Field::Years id="years" help="Years the hardware serves" step="any"/>
            <NumberField field=Field::KwhPrice id="kwh-price" help="Electricity price" step="any"/>
            <NumberField field=Field::Pue id="pue" help="Power usage effectiveness: facility power ÷ IT power" step="any"/>
            <NumberField field=Field::Utilization id="utilization" help="Share of the hours at the planned load (the rest idle)" step="any"/>
            <NumberField field=Field::Resale id="resale" help="Resale value at the end, as a fraction of the purchase" step="any"/>
        </div>
        <div class="vf-row">
            <NumberField field=Field::ApiInputPrice id="api-input-price" help="An API's price per million input tokens" step="any"/>
            <NumberField field=Field::ApiOutputPrice id="api-output-price" help="An API's price per million output tokens" step="any"/>
            <label class="vf-field" title="Fill the API prices from a dated example">
                <span>"API example"</span>
                <select
                    data-testid="api-example"
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        if let Some((a, b)) = v.split_once('|') {
                            st.choose(Field::ApiInputPrice, a);
                            st.choose(Field::ApiOutputPrice, b);
                        }
                    }
                >
                    <option value="">"—"</option>
                    {examples}
                </select>
            </label>
        </div>
        <div class="vf-row">
            <NumberField field=Field::MaxPowerKw id="max-power-kw" help="Power cap for the whole deployment, at the wall" step="any"/>
            <NumberField field=Field::MaxRackKw id="max-rack-kw" help="Power cap per rack" step="any"/>
            <NumberField field=Field::MaxBudgetUsd id="max-budget-usd" help="Budget cap for the purchase" step="any"/>
            <label class="vf-field" title="Only hardware that can be bought and run on premises">
                <span>"On-prem only"</span>
                <input
                    type="checkbox"
                    data-testid="on-prem"
                    prop:checked=move || inputs.get().buyer.on_prem
                    on:change=move |ev| st.choose(Field::OnPrem, if event_target_checked(&ev) { "1" } else { "0" })
                />
            </label>
            <label class="vf-field" title="Only this GPU vendor">
                <span>"GPU vendor"</span>
                <select
                    data-testid="vendor"
                    prop:value=move || inputs.get().buyer.vendor.unwrap_or("any")
                    on:change=move |ev| st.choose(Field::Vendor, &event_target_value(&ev))
                >
                    <option value="any">"any"</option>
                    {VENDORS.map(|v| view! { <option value=v>{v}</option> }).collect_view()}
                </select>
            </label>
        </div>
        <p data-testid="budget-crossover">{crossover}</p>
        <div class="vf-chart" data-testid="budget-chart" inner_html=chart></div>
        <table class="vf-table" data-testid="budget-table">
            <thead>
                <tr>
                    <th>"GPU"</th>
                    <th>"Platform"</th>
                    <th>"Engine"</th>
                    {header("GPUs", SortKey::Gpus)}
                    <th>"Nodes"</th>
                    <th>"Layout"</th>
                    {header("Purchase", SortKey::Purchase)}
                    {header("TCO", SortKey::Tco)}
                    {header("Power", SortKey::Power)}
                    <th>"Energy / year"</th>
                    {header("$/hour", SortKey::Hourly)}
                    {header("$ per M tokens", SortKey::PerToken)}
                    <th>"tok/s"</th>
                    {header("tok/s/user", SortKey::Speed)}
                    <th>"Limited by"</th>
                    <th>"Excluded because"</th>
                </tr>
            </thead>
            <tbody>
                {move || {
                    let mut rows = answer.get().options;
                    let key = sort.get();
                    vramfit_core::order::sort_by(&mut rows, |a, b| a.excluded.cmp(&b.excluded).then(key.cmp(a, b)));
                    let mut seen = std::collections::BTreeSet::new();
                    rows.into_iter()
                        .map(|o| {
                            // The GPU's first row keeps the `budget-{gpu}` hook; the others
                            // name their platform.
                            let id = if seen.insert(o.gpu.clone()) {
                                format!("budget-{}", o.gpu)
                            } else {
                                format!("budget-{}--{}", o.gpu, o.platform)
                            };
                            let pick = (o.gpu.clone(), o.platform.clone());
                            let validated = if o.speed_validated { "" } else { " (not validated)" };
                            view! {
                                <tr data-testid=id class:vf-muted=o.excluded on:click=move |_| set_chosen.set(Some(pick.clone()))>
                                    <th scope="row">{o.gpu_name.clone()}</th>
                                    <td>{o.platform_name.clone()}</td>
                                    <td>{o.engine.clone()}</td>
                                    <td>{if o.gpus == o.gpus_used { o.gpus.to_string() } else { format!("{} ({} used)", o.gpus, o.gpus_used) }}</td>
                                    <td>{o.nodes}</td>
                                    <td>{o.layout.clone()}</td>
                                    <td>{usd(o.purchase_usd)}</td>
                                    <td>{usd(o.money.tco_usd)}</td>
                                    <td>{o.power_kw.map_or("–".into(), |k| format!("{} kW", fmt_num(k, 1)))}</td>
                                    <td>{usd(o.money.energy_usd_per_year)}</td>
                                    <td>{usd(o.cloud_usd_per_hour)}</td>
                                    <td>{usd(o.money.usd_per_million_tokens)}</td>
                                    <td>{fmt_num(o.tokens_per_s, 0)}</td>
                                    <td>{format!("{}{validated}", fmt_num(o.tokens_per_s_per_user, 1))}</td>
                                    <td>{o.limited_by.clone()}</td>
                                    <td>{o.excluded_because.clone()}</td>
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
