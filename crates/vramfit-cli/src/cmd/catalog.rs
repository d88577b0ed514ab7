//! `models` and `gpus`: the catalog's listings.

use crate::args::ListArgs;
use crate::json::{gpu_json, model_json, GpuJson, ModelJson};
use crate::out::{pretty_line, usage, Output, Res};
use std::fmt::Write as _;
use vramfit_core::catalog::{Catalog, Gpu};
use vramfit_core::units::fmt_params;

/// Whether any of `hay` contains `q` (ASCII case-insensitive); no query matches everything.
pub fn matches(hay: &[&str], q: Option<&String>) -> bool {
    q.is_none_or(|q| {
        let q = q.to_ascii_lowercase();
        hay.iter().any(|h| h.to_ascii_lowercase().contains(&q))
    })
}

/// `models`.
pub fn models(cat: &Catalog, a: &ListArgs) -> Res<Output> {
    let mut out = Vec::new();
    for m in &cat.models {
        if !matches(&[&m.id, &m.name, &m.family, &m.vendor], a.search.as_ref()) {
            continue;
        }
        let arch = m.arch().map_err(usage)?;
        out.push((m, arch));
    }
    if a.json {
        let v: Vec<ModelJson> = out.iter().map(|(m, x)| model_json(m, x)).collect();
        return Ok(Output::ok(pretty_line(&v)));
    }
    let mut s = format!(
        "{:<34} {:<22} {:>10} {:>10} {:>9}  hf repo\n",
        "id", "family", "params", "active", "context"
    );
    for (m, _) in &out {
        let _ = writeln!(
            s,
            "{:<34} {:<22} {:>10} {:>10} {:>9}  {}",
            m.id,
            m.family,
            fmt_params(m.parameters_total),
            fmt_params(m.parameters_active),
            m.context_native,
            m.hf_repo_ids.first().map_or("", String::as_str)
        );
    }
    Ok(Output::ok(s))
}

/// The GPUs `--search` keeps (id, name, vendor, marketed memory, aliases).
pub fn gpu_list<'a>(cat: &'a Catalog, search: Option<&String>) -> Vec<&'a Gpu> {
    cat.gpus
        .iter()
        .filter(|g| {
            let mem = format!("{}", g.memory_marketed_gb);
            let mut hay = vec![
                g.id.as_str(),
                g.name.as_str(),
                g.vendor.as_str(),
                mem.as_str(),
            ];
            hay.extend(g.aliases.iter().map(String::as_str));
            matches(&hay, search)
        })
        .collect()
}

/// `gpus`.
pub fn gpus(cat: &Catalog, a: &ListArgs) -> Output {
    let list = gpu_list(cat, a.search.as_ref());
    if a.json {
        let v: Vec<GpuJson> = list.iter().map(|g| gpu_json(g)).collect();
        return Output::ok(pretty_line(&v));
    }
    let mut s = format!(
        "{:<30} {:>8} {:>10} {:>10} {:>10} {:>10}\n",
        "id", "memory", "BW GB/s", "bf16 TF", "fp8 TF", "$/hour"
    );
    for g in list {
        let _ = writeln!(
            s,
            "{:<30} {:>8} {:>10} {:>10} {:>10} {:>10}",
            g.id,
            format!("{} GB", g.memory_marketed_gb),
            g.memory_bandwidth_gb_per_s,
            g.dense_tflops.bf16.map_or("–".into(), |x| format!("{x}")),
            g.dense_tflops.fp8.map_or("–".into(), |x| format!("{x}")),
            g.price
                .cloud_usd_per_hour
                .map_or("–".into(), |x| format!("{x:.2}"))
        );
    }
    Output::ok(s)
}
