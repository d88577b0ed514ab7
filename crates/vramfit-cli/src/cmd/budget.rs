//! `budget`: what to buy, ranked by total cost of ownership ([`vramfit_core::budget`]).

use crate::args::BudgetArgs;
use crate::out::{pretty_line, usage, Output, Res};
use std::fmt::Write as _;
use vramfit_core::budget::{age_months, budget, Budget};
use vramfit_core::catalog::Catalog;
use vramfit_core::plan::Inputs;
use vramfit_core::units::{fmt_count, fmt_num, fmt_usd};

/// `budget`: exit 1 when no option is kept (every one breaks a constraint).
///
/// # Errors
/// A model outside the catalog, or a flag out of range (exit 2).
pub fn run(cat: &Catalog, a: &BudgetArgs, today: (i64, i64)) -> Res<Output> {
    let inputs = crate::inputs::budget_inputs_of(a)?;
    if vramfit_core::plan::resolve_model(cat, &inputs.model).is_err() {
        return Err(usage(format!(
            "`budget` ranks hardware for catalog models only; `{}` is not one (see `vramfit models`)",
            inputs.model
        )));
    }
    let b = budget(cat, &inputs);
    let kept = b.options.iter().any(|o| !o.excluded);
    let stdout = if a.plan.json {
        json(&b, &inputs, today)
    } else {
        table(&b, &inputs, today, a.all)
    };
    Ok(Output::status(stdout, kept))
}

/// How old the prices are, in months, to the month `today`.
fn ages(b: &Budget, today: (i64, i64)) -> (Option<i64>, Option<i64>) {
    let age = |d: &Option<String>| d.as_deref().and_then(|d| age_months(d, today.0, today.1));
    (age(&b.prices_newest), age(&b.prices_oldest))
}

fn json(b: &Budget, inputs: &Inputs, today: (i64, i64)) -> String {
    let (newest, oldest) = ages(b, today);
    let mut v = serde_json::to_value(b).unwrap_or_default();
    if let Some(m) = v.as_object_mut() {
        m.insert("model".into(), inputs.model.clone().into());
        m.insert("users".into(), inputs.workload.users.into());
        m.insert("prices_newest_age_months".into(), newest.into());
        m.insert("prices_oldest_age_months".into(), oldest.into());
    }
    pretty_line(&v)
}

fn opt_usd(x: Option<f64>) -> String {
    x.map_or("–".into(), fmt_usd)
}

fn table(b: &Budget, inputs: &Inputs, today: (i64, i64), all: bool) -> String {
    let (newest, oldest) = ages(b, today);
    let mut s = format!(
        "{} for {} ({} + {} tokens); {} years, ${}/kWh, PUE {}, {}% busy",
        inputs.model,
        match inputs.workload.users {
            1 => "1 user".to_string(),
            n => format!("{} users", fmt_count(n)),
        },
        inputs.workload.prompt_tokens,
        inputs.workload.output_tokens,
        fmt_num(b.years, 1),
        fmt_num(b.kwh_price_usd, 3),
        fmt_num(b.pue, 2),
        fmt_num(b.utilization * 100.0, 0)
    );
    if let (Some(lo), Some(hi)) = (&b.prices_oldest, &b.prices_newest) {
        let _ = write!(
            s,
            "; prices dated {lo} to {hi}{}",
            match (oldest, newest) {
                (Some(o), Some(n)) => format!(" ({n}–{o} months old)"),
                _ => String::new(),
            }
        );
    }
    s.push('\n');
    let shown = if all { usize::MAX } else { 25 };
    // The first two columns as wide as their longest entry (platform ids run to 27).
    let rows = || b.options.iter().take(shown);
    let gw = rows()
        .map(|o| o.gpu.chars().count())
        .max()
        .unwrap_or(0)
        .max(30);
    let pw = rows()
        .map(|o| o.platform.chars().count())
        .max()
        .unwrap_or(0)
        .max(22);
    let _ = writeln!(
        s,
        "{:<gw$} {:<pw$} {:>5} {:>5} {:>12} {:>12} {:>12} {:>8} {:>10} {:>9}  engine / excluded because",
        "GPU",
        "platform",
        "GPUs",
        "nodes",
        "layout",
        "purchase",
        "TCO",
        "kW",
        "$/M tok",
        "tok/s",
    );
    for o in rows() {
        let _ = writeln!(
            s,
            "{:<gw$} {:<pw$} {:>5} {:>5} {:>12} {:>12} {:>12} {:>8} {:>10} {:>9}  {}",
            o.gpu,
            o.platform,
            o.gpus,
            o.nodes,
            o.layout,
            opt_usd(o.purchase_usd),
            opt_usd(o.money.tco_usd),
            o.power_kw.map_or("–".into(), |k| fmt_num(k, 1)),
            opt_usd(o.money.usd_per_million_tokens),
            fmt_num(o.tokens_per_s, 0),
            if o.excluded {
                format!("excluded: {}", o.excluded_because)
            } else {
                o.engine.clone()
            }
        );
    }
    if b.options.len() > shown {
        let _ = writeln!(s, "… {} more (--all)", b.options.len() - shown);
    }
    if let Some(o) = b.options.iter().find(|o| !o.excluded) {
        let m = &o.money;
        let _ = writeln!(
            s,
            "\nfirst: {} in {}: {} over {} years ({} a year of energy)",
            o.gpu,
            o.platform,
            opt_usd(m.tco_usd),
            fmt_num(b.years, 1),
            opt_usd(m.energy_usd_per_year)
        );
        let _ = writeln!(
            s,
            "  renting the same GPUs on demand for the same tokens: {}; reserved: {}; API: {}",
            opt_usd(m.on_demand_usd),
            opt_usd(m.reserved_usd),
            opt_usd(m.api_usd)
        );
        let tok = |x: Option<f64>| {
            x.map_or("never (a fully used unit costs more)".into(), |x| {
                format!("above {} M output tokens a month", fmt_num(x / 1e6, 0))
            })
        };
        let _ = writeln!(
            s,
            "  buying beats on-demand {}; beats the API {}",
            if m.on_demand_usd.is_some() {
                tok(m.buy_beats_on_demand_above_tokens_per_month)
            } else {
                "(no on-demand price in the catalog)".into()
            },
            if b.api_usd_per_million.is_some() {
                tok(m.buy_beats_api_above_tokens_per_month)
            } else {
                "(no API price given: --api-input-price, --api-output-price)".into()
            }
        );
    }
    s
}

/// This month (UTC) from the system clock: `(year, month)`.
#[must_use]
pub fn this_month() -> (i64, i64) {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil(i64::try_from(secs / 86_400).unwrap_or(0))
}

/// Year and month of a day count since 1970-01-01 (H. Hinnant, "chrono-Compatible Low-Level
/// Date Algorithms", `civil_from_days`).
fn civil(days: i64) -> (i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil(0), (1970, 1));
        // 2026-12-02 is day 20,789.
        assert_eq!(civil(20_789), (2026, 12));
        assert_eq!(civil(11_016), (2000, 2)); // 2000-02-29
    }

    /// Every row's columns start where the header's do, the longest platform id included
    /// (`jetson-agx-orin-64gb-devkit`, 27 characters, ran past a 22-wide column).
    #[test]
    fn the_table_columns_line_up() {
        let cat = crate::testing::cat();
        let i = crate::testing::inputs("llama-3.1-8b", "h100-sxm");
        let b = budget(&cat, &i);
        let t = table(&b, &i, (2026, 12), true);
        let lines: Vec<&str> = t.lines().skip(1).take_while(|l| !l.is_empty()).collect();
        let at = |l: &str| l.find(" TP").or_else(|| l.find(" layout"));
        let want = at(lines[0]).map(|c| c + " layout".len());
        assert!(lines
            .iter()
            .any(|l| l.contains("jetson-agx-orin-64gb-devkit")));
        for l in &lines[1..] {
            let end = l.find("×1 ").map(|c| c + "×1".len());
            assert_eq!(
                end.map(|c| l[..c].chars().count()),
                want.map(|c| lines[0][..c].chars().count()),
                "{l}"
            );
        }
    }
}
