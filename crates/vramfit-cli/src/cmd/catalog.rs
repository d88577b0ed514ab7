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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::Cmd;
    use crate::testing::{cat, parse};

    fn list_args(args: &[&str]) -> ListArgs {
        match parse(args) {
            Cmd::Models(a) | Cmd::Gpus(a) => a,
            _ => unreachable!(),
        }
    }

    #[test]
    fn models_json_has_every_catalog_model_with_its_arch() {
        let c = cat();
        let o = models(&c, &list_args(&["models", "--json"])).unwrap();
        assert_eq!(o.code, 0);
        let j = o.json();
        let v = j.as_array().unwrap();
        assert_eq!(v.len(), c.models.len());
        for (e, m) in v.iter().zip(&c.models) {
            let x = m.arch().unwrap();
            assert_eq!(e["id"], m.id);
            assert_eq!(e["num_hidden_layers"], x.layers);
            assert_eq!(e["hidden_size"], x.hidden);
            assert_eq!(e["num_key_value_heads"], x.kv_heads);
            assert_eq!(e["head_dim"], x.head_dim);
            assert_eq!(e["parameter_count"], m.parameters_total);
            assert_eq!(
                e["num_experts"],
                serde_json::json!(x.moe.map(|e| e.experts))
            );
            assert_eq!(e["config_verbatim"], m.config_verbatim);
            for k in [
                "hf_repo_ids",
                "quantized_repos",
                "config",
                "source",
                "kv_lora_rank",
            ] {
                assert!(e.get(k).is_some(), "models.{k}");
            }
        }
    }

    #[test]
    fn models_text_has_a_row_per_model_and_search_filters() {
        let c = cat();
        let o = models(&c, &list_args(&["models"])).unwrap();
        let lines: Vec<&str> = o.stdout.lines().collect();
        assert_eq!(lines.len(), 1 + c.models.len());
        assert!(lines[0].starts_with("id "));
        for (l, m) in lines[1..].iter().zip(&c.models) {
            assert!(l.starts_with(&format!("{} ", m.id)), "{l}");
            assert!(l.contains(&fmt_params(m.parameters_total)), "{l}");
        }
        let q = c
            .models
            .iter()
            .filter(|m| {
                [&m.id, &m.name, &m.family, &m.vendor]
                    .iter()
                    .any(|h| h.to_lowercase().contains("qwen"))
            })
            .count();
        assert!(q > 0 && q < c.models.len());
        let o = models(&c, &list_args(&["models", "--search", "QWEN", "--json"])).unwrap();
        assert_eq!(o.json().as_array().unwrap().len(), q);
    }

    #[test]
    fn gpus_json_has_every_catalog_gpu_with_its_memory() {
        let c = cat();
        let o = gpus(&c, &list_args(&["gpus", "--json"]));
        assert_eq!(o.code, 0);
        let j = o.json();
        let v = j.as_array().unwrap();
        assert_eq!(v.len(), c.gpus.len());
        for (e, g) in v.iter().zip(&c.gpus) {
            assert_eq!(e["id"], g.id);
            assert_eq!(e["memory_usable_bytes"], g.smi_total_bytes());
            assert_eq!(e["memory_engine_bytes"], g.usable_bytes());
            assert_eq!(
                e["memory_bandwidth_gb_per_s"].as_f64(),
                Some(g.memory_bandwidth_gb_per_s)
            );
            assert_eq!(e["aliases"], serde_json::json!(g.aliases));
            for k in [
                "dense_tflops",
                "interconnect",
                "price",
                "segment",
                "tdp_w",
                "source",
            ] {
                assert!(e.get(k).is_some(), "gpus.{k}");
            }
        }
    }

    #[test]
    fn gpus_text_has_a_row_per_gpu_and_search_matches_aliases_and_memory() {
        let c = cat();
        let o = gpus(&c, &list_args(&["gpus"]));
        let lines: Vec<&str> = o.stdout.lines().collect();
        assert_eq!(lines.len(), 1 + c.gpus.len());
        for (l, g) in lines[1..].iter().zip(&c.gpus) {
            assert!(l.starts_with(&format!("{} ", g.id)), "{l}");
            assert!(l.contains(&format!("{} GB", g.memory_marketed_gb)), "{l}");
        }
        let n80 = c
            .gpus
            .iter()
            .filter(|g| {
                format!("{}", g.memory_marketed_gb).contains("80")
                    || [&g.id, &g.name, &g.vendor]
                        .iter()
                        .chain(g.aliases.iter().collect::<Vec<_>>().iter())
                        .any(|h| h.to_lowercase().contains("80"))
            })
            .count();
        assert!(n80 > 0 && n80 < c.gpus.len());
        let o = gpus(&c, &list_args(&["gpus", "--search", "80"]));
        assert_eq!(o.stdout.lines().count(), 1 + n80);
    }

    #[test]
    fn matches_is_a_case_insensitive_substring_test() {
        assert!(matches(&["Llama 3.1"], None));
        assert!(matches(&["x", "Llama 3.1"], Some(&"LLAMA".to_string())));
        assert!(!matches(&["Llama 3.1"], Some(&"qwen".to_string())));
    }
}
