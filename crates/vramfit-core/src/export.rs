//! Markdown and CSV exports of results (the UI offers them as downloads).
//!
//! CSV follows RFC 4180 (fields with commas, quotes or newlines are quoted). Cells that a
//! spreadsheet would run as a formula (`=`, `+`, `-`, `@` first) are prefixed with `'`
//! (OWASP "CSV injection"), since model names can come from users.

use crate::budget::Budget;
use crate::plan::Plan;
use crate::units::{fmt_bytes, fmt_num, Units};

fn csv_cell(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or(String::new(), |v| fmt_num(v, digits))
}

/// The hardware budget's options as CSV, with the columns of `vramfit budget --json`'s
/// `options[]`.
#[must_use]
pub fn budget_csv(b: &Budget) -> String {
    let mut s = String::from("gpu,gpu_name,platform,engine,gpus,gpus_used,nodes,racks,layout,purchase_usd,gpus_usd,servers_usd,network_usd,power_kw,energy_usd_per_year,tco_usd,cloud_usd_per_hour,cloud_reserved_usd_per_hour,usd_per_million_tokens,on_demand_usd,reserved_usd,api_usd,tokens_per_s,tokens_per_s_per_user,limited_by,excluded,excluded_because,prices_dated\n");
    for o in &b.options {
        let m = &o.money;
        let cells = [
            csv_cell(&o.gpu),
            csv_cell(&o.gpu_name),
            csv_cell(&o.platform),
            csv_cell(&o.engine),
            o.gpus.to_string(),
            o.gpus_used.to_string(),
            o.nodes.to_string(),
            o.racks.map_or(String::new(), |r| r.to_string()),
            csv_cell(&o.layout),
            opt(o.purchase_usd, 0),
            opt(o.gpus_usd, 0),
            opt(o.servers_usd, 0),
            fmt_num(o.network_usd, 0),
            opt(o.power_kw, 2),
            opt(m.energy_usd_per_year, 0),
            opt(m.tco_usd, 0),
            opt(o.cloud_usd_per_hour, 2),
            opt(o.cloud_reserved_usd_per_hour, 2),
            opt(m.usd_per_million_tokens, 3),
            opt(m.on_demand_usd, 0),
            opt(m.reserved_usd, 0),
            opt(m.api_usd, 0),
            fmt_num(o.tokens_per_s, 1),
            fmt_num(o.tokens_per_s_per_user, 1),
            csv_cell(&o.limited_by),
            o.excluded.to_string(),
            csv_cell(&o.excluded_because),
            csv_cell(o.prices_dated.as_deref().unwrap_or("")),
        ];
        s.push_str(&cells.join(","));
        s.push('\n');
    }
    s
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A plan as Markdown: breakdown, verdict, formats.
#[must_use]
pub fn plan_markdown(p: &Plan, units: Units) -> String {
    let e = &p.estimate;
    let mut s = format!(
        "# {} on {}\n\n{} weights, {}, TP {} × PP {} × {} replica(s) = {} GPU(s)\n\n**Verdict:** {}\n\n| per GPU | value |\n|---|---|\n",
        md_cell(&p.model_name),
        md_cell(&p.gpu_name),
        p.format,
        p.engine,
        p.tensor_parallel_size,
        p.pipeline_parallel_size,
        p.replicas,
        p.gpus_needed,
        md_cell(&p.verdict)
    );
    for part in e.parts() {
        s.push_str(&format!(
            "| {} | {} |\n",
            part.label,
            fmt_bytes(part.bytes, units)
        ));
    }
    s.push_str(&format!(
        "| nvidia-smi | {} |\n",
        fmt_bytes(e.nvidia_smi_bytes, units)
    ));
    s.push_str(&format!(
        "| KV bytes per token | {} |\n| KV blocks | {} |\n| max concurrency @ {} | {} |\n| decode tok/s per user | {} |\n\n",
        e.kv_bytes_per_token,
        e.kv_blocks,
        e.max_model_len,
        fmt_num(e.max_concurrency, 2),
        p.run.as_ref().map_or_else(
            || "does not start".to_string(),
            |r| fmt_num(r.speed.decode_tokens_per_s_per_user, 1)
        )
    ));
    s.push_str("| format | weights (model) | outcome | GPUs | longest context | decode tok/s/user |\n|---|---|---|---|---|---|\n");
    for r in &p.formats {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} |\n",
            r.format,
            fmt_bytes(r.model_weights_bytes, units),
            md_cell(&r.outcome),
            r.total_gpus,
            r.estimate.max_model_len_fit,
            r.decode_tokens_per_s
                .map_or_else(|| "–".to_string(), |d| fmt_num(d, 1))
        ));
    }
    s
}

/// A plan's breakdown as CSV (one row per quantity, bytes as integers).
#[must_use]
pub fn plan_csv(p: &Plan) -> String {
    let e = &p.estimate;
    let mut s = String::from("quantity,bytes\n");
    for part in e.parts() {
        s.push_str(&format!("{},{}\n", part.id, part.bytes));
    }
    for (k, v) in [
        ("nvidia_smi", e.nvidia_smi_bytes),
        ("kv_bytes_per_token", e.kv_bytes_per_token),
    ] {
        s.push_str(&format!("{k},{v}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cells_are_quoted_and_defused() {
        assert_eq!(csv_cell("a,b"), "\"a,b\"");
        assert_eq!(csv_cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_cell("=HYPERLINK(1)"), "'=HYPERLINK(1)");
        assert_eq!(csv_cell("h100"), "h100");
    }
}
