//! `scale`: throughput over TP 1/2/4/8 and PP 1/2/4/8.

use crate::args::ScaleArgs;
use crate::cmd::plan::{hub_plan, with_source, HubSource, Loader};
use crate::inputs::inputs_of;
use crate::json::{PointJson, ScaleJson};
use crate::out::{pretty_line, usage, Output, Res};
use std::fmt::Write as _;
use vramfit_core::catalog::Catalog;
use vramfit_core::layout::valid_layouts;
use vramfit_core::model::ModelArch;
use vramfit_core::plan;
use vramfit_core::throughput::{scaling_curve, Link, Load};
use vramfit_core::units::{fmt_num, real};

/// `scale`: the points as JSON, or a table (an ambiguous `--gpu`'s notice on stderr).
pub fn run(cat: &Catalog, a: &ScaleArgs, loader: Loader) -> Res<Output> {
    points(cat, a, loader).map(|o| crate::cmd::plan::with_gpu_note(o, cat, Some(&a.plan.gpu)))
}

fn points(cat: &Catalog, a: &ScaleArgs, loader: Loader) -> Res<Output> {
    let inputs = inputs_of(&a.plan)?;
    let lengths = match (a.input_len, a.output_len) {
        (Some(i), Some(o)) => Some((i, o)),
        (None, None) => None,
        _ => return Err(usage("give both --input-len and --output-len, or neither")),
    };
    let load = a.concurrency.map(Load::Concurrency);
    let sources = loader;
    if a.concurrency == Some(0) {
        return Err(usage("--concurrency must be at least 1"));
    }
    let (sc, arch, source) = if plan::resolve_model(cat, &inputs.model).is_err()
        && vramfit_core::hub::is_repo_id(&inputs.model)
    {
        let (sc, arch, source) = hub_scaling(cat, a, &inputs, lengths, load, sources)?;
        (sc, arch, Some(source))
    } else {
        let sc = plan::scaling_at(cat, &inputs, lengths, load).map_err(usage)?;
        let (model, _, _) = plan::resolve_model(cat, &inputs.model).map_err(usage)?;
        (sc, model.arch().map_err(usage)?, None)
    };
    let valid = valid_layouts(&arch, 64);
    let pts = if a.pcie { &sc.pcie } else { &sc.own_link };
    let link = if a.pcie {
        "PCIe".to_string()
    } else {
        sc.link_name.clone()
    };
    let points: Vec<PointJson> = pts
        .iter()
        .map(|p| PointJson {
            tensor_parallel_size: p.tensor_parallel_size,
            pipeline_parallel_size: p.pipeline_parallel_size,
            tokens_per_s_total: p.tokens_per_s_total,
            tokens_per_s_per_gpu: p.tokens_per_s_per_gpu,
            tokens_per_s_per_user: p.tokens_per_s_per_user,
            batch: p.batch,
            comm_fraction: p.comm_fraction,
            fits: p.fits,
            valid_layout: valid.contains(&(p.tensor_parallel_size, p.pipeline_parallel_size)),
            ttft_ms: p.ttft_ms,
            itl_ms: p.itl_ms,
            limited_by: p.limited_by.id(),
            tokens_per_s_low: p.tokens_per_s_band.map(|b| b.0),
            tokens_per_s_high: p.tokens_per_s_band.map(|b| b.1),
        })
        .collect();
    if a.plan.json {
        let v = ScaleJson {
            model: &sc.model_id,
            gpu: &sc.gpu_id,
            interconnect: link,
            max_load: sc.load == Load::MaxLoad,
            load: load_id(sc.load),
            load_value: match sc.load {
                Load::MaxLoad => None,
                Load::Concurrency(n) => Some(real(n)),
                Load::Rate(r) => Some(r),
            },
            points,
            gpu_notice: crate::cmd::plan::gpu_notice(cat, &a.plan.gpu),
        };
        return Ok(Output::ok(match &source {
            None => pretty_line(&v),
            Some(_) => format!("{}\n", with_source(&v, source.as_ref())),
        }));
    }
    let mut s = format!(
        "{} on {} over {} ({}):\n",
        sc.model_id,
        sc.gpu_id,
        link,
        match sc.load {
            Load::MaxLoad => "max load".to_string(),
            Load::Concurrency(n) if a.concurrency.is_some() => format!("{n} requests in flight"),
            Load::Concurrency(_) => "at the given users".to_string(),
            Load::Rate(r) => format!("{} requests/s", fmt_num(r, 2)),
        }
    );
    let _ = writeln!(
        s,
        "{:>4} {:>4} {:>14} {:>14} {:>12} {:>7} {:>8} {:>9} {:>8} {:>12}",
        "TP",
        "PP",
        "tok/s total",
        "tok/s per GPU",
        "tok/s/user",
        "batch",
        "comm %",
        "TTFT ms",
        "ITL ms",
        "limit"
    );
    for p in &points {
        let _ = writeln!(
            s,
            "{:>4} {:>4} {:>14} {:>14} {:>12} {:>7} {:>8} {:>9} {:>8} {:>12}{}",
            p.tensor_parallel_size,
            p.pipeline_parallel_size,
            fmt_num(p.tokens_per_s_total, 0),
            fmt_num(p.tokens_per_s_per_gpu, 0),
            fmt_num(p.tokens_per_s_per_user, 1),
            p.batch,
            fmt_num(p.comm_fraction * 100.0, 1),
            p.ttft_ms.map_or_else(|| "–".to_string(), |t| fmt_num(t, 0)),
            fmt_num(p.itl_ms, 1),
            p.limited_by,
            if !p.valid_layout {
                "  (invalid layout)"
            } else if !p.fits {
                "  (does not fit)"
            } else {
                ""
            }
        );
    }
    Ok(Output::ok(s))
}

/// [`plan::scaling_at`] for a repo imported from the Hub: the same layouts, load and links,
/// on the scenario of its plan (`custom_plan`'s format).
fn hub_scaling(
    cat: &Catalog,
    a: &ScaleArgs,
    inputs: &vramfit_core::plan::Inputs,
    lengths: Option<(u64, u64)>,
    load: Option<Load>,
    sources: Loader,
) -> Res<(plan::Scaling, ModelArch, HubSource)> {
    let (p, source, arch) = hub_plan(cat, &a.plan, inputs, sources)?;
    let gpu = plan::resolve_gpu(cat, &inputs.gpu).map_err(usage)?;
    let mut s = plan::scenario(arch.clone(), inputs, p.format, 128);
    if let Some((i, o)) = lengths {
        s.workload.prompt_tokens = i;
        s.workload.output_tokens = o;
    }
    let load = load.unwrap_or_else(|| plan::default_load(inputs, lengths));
    let mut layouts = plan::SCALING_LAYOUTS.to_vec();
    if let Some(tp) = inputs.tensor_parallel_size {
        let l = (tp, inputs.pipeline_parallel_size.unwrap_or(1));
        if !layouts.contains(&l) {
            layouts.push(l);
        }
    }
    let pcie = Link::Pcie(gpu.pcie_gb_per_s());
    let sc = plan::Scaling {
        model_id: p.model_id.clone(),
        gpu_id: gpu.id.clone(),
        link_name: gpu
            .interconnect
            .generation
            .clone()
            .unwrap_or_else(|| gpu.interconnect.kind.clone()),
        load,
        own_link: scaling_curve(&s, gpu, &layouts, load, Link::Own),
        pcie: scaling_curve(&s, gpu, &layouts, load, pcie),
        summary: String::new(),
    };
    Ok((sc, arch, source))
}

/// The `load` field of `scale --json`.
fn load_id(l: Load) -> &'static str {
    match l {
        Load::MaxLoad => "max_load",
        Load::Concurrency(_) => "concurrency",
        Load::Rate(_) => "request_rate",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::Cmd;
    use crate::out::Failure;
    use crate::testing::{assert_close, cat, inputs, no_files, parse};
    use vramfit_core::inputs::Field;

    fn scale_args(args: &[&str]) -> ScaleArgs {
        let mut argv = vec!["scale"];
        argv.extend(args);
        match parse(&argv) {
            Cmd::Scale(a) => a,
            _ => unreachable!(),
        }
    }

    #[test]
    fn scale_json_points_are_the_cores_at_max_load() {
        let a = scale_args(&[
            "llama-3.1-70b",
            "--gpu",
            "h100-sxm",
            "--input-len",
            "2048",
            "--output-len",
            "128",
            "--json",
        ]);
        let o = run(&cat(), &a, &no_files).unwrap();
        assert_eq!(o.code, 0);
        let j = o.json();
        let sc = plan::scaling(
            &cat(),
            &inputs("llama-3.1-70b", "h100-sxm"),
            Some((2048, 128)),
        )
        .unwrap();
        assert_eq!(j["model"], "llama-3.1-70b");
        assert_eq!(j["gpu"], sc.gpu_id);
        assert_eq!(j["interconnect"], sc.link_name);
        assert_eq!(j["max_load"], true);
        let pts = j["points"].as_array().unwrap();
        assert_eq!(pts.len(), sc.own_link.len());
        for (g, w) in pts.iter().zip(&sc.own_link) {
            assert_eq!(g["tensor_parallel_size"], w.tensor_parallel_size);
            assert_eq!(g["pipeline_parallel_size"], w.pipeline_parallel_size);
            assert_close(&g["tokens_per_s_total"], w.tokens_per_s_total);
            assert_close(&g["tokens_per_s_per_gpu"], w.tokens_per_s_per_gpu);
            assert_eq!(g["batch"], w.batch);
            assert_eq!(g["fits"], w.fits);
            assert!(g["valid_layout"].is_boolean());
            assert!(g["comm_fraction"].is_number() && g["tokens_per_s_per_user"].is_number());
            // vLLM (the default engine) is validated: the band is its held-out p10–p90.
            let v = vramfit_core::serving::VALIDATION[1];
            assert_close(&g["tokens_per_s_low"], w.tokens_per_s_total / (1.0 + v.p90));
            assert_close(
                &g["tokens_per_s_high"],
                w.tokens_per_s_total / (1.0 + v.p10),
            );
        }
    }

    #[test]
    fn scale_bands_only_the_layouts_inside_a_node() {
        // RTX 4090s come two to a desktop in the catalog's platforms: a layout over more
        // GPUs hands its stages over a network no measurement describes, and has no band (the
        // plan's rule, `serving::validation_of`).
        assert_eq!(cat().gpu("rtx-4090").unwrap().gpus_per_node(), 2);
        let a = scale_args(&["llama-3.1-8b", "--gpu", "rtx-4090", "--json"]);
        let j = run(&cat(), &a, &no_files).unwrap().json();
        let pts = j["points"].as_array().unwrap();
        let one = |g: &serde_json::Value| {
            g["tensor_parallel_size"].as_u64().unwrap()
                * g["pipeline_parallel_size"].as_u64().unwrap()
                <= 2
        };
        assert!(pts.iter().any(one) && pts.iter().any(|g| !one(g)));
        for g in pts {
            assert_eq!(g["tokens_per_s_low"].is_number(), one(g), "{g}");
            assert_eq!(g["tokens_per_s_high"].is_number(), one(g), "{g}");
        }
    }

    #[test]
    fn scale_text_over_pcie_has_a_row_per_core_point() {
        let a = scale_args(&["llama-3.1-8b", "--gpu", "h100-sxm", "--pcie"]);
        let o = run(&cat(), &a, &no_files).unwrap();
        let sc = plan::scaling(&cat(), &inputs("llama-3.1-8b", "h100-sxm"), None).unwrap();
        let lines: Vec<&str> = o.stdout.lines().collect();
        assert_eq!(
            lines[0],
            format!(
                "llama-3.1-8b on {} over PCIe (at the given users):",
                sc.gpu_id
            )
        );
        assert_eq!(lines.len(), 2 + sc.pcie.len());
        for (l, w) in lines[2..].iter().zip(&sc.pcie) {
            let cols: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(cols[0], w.tensor_parallel_size.to_string(), "{l}");
            assert_eq!(cols[1], w.pipeline_parallel_size.to_string(), "{l}");
            assert_eq!(cols[2], fmt_num(w.tokens_per_s_total, 0), "{l}");
            assert_eq!(cols[5], w.batch.to_string(), "{l}");
        }
    }

    #[test]
    fn scale_at_concurrency_one_has_itl_of_one_over_the_user_speed() {
        let a = scale_args(&[
            "llama-3.1-8b",
            "--gpu",
            "h100-sxm",
            "--input-len",
            "1024",
            "--output-len",
            "128",
            "--concurrency",
            "1",
            "--json",
        ]);
        let j = run(&cat(), &a, &no_files).unwrap().json();
        assert_eq!(j["load"], "concurrency");
        assert_eq!(j["max_load"], false);
        assert_close(&j["load_value"], 1.0);
        let sc = plan::scaling_at(
            &cat(),
            &inputs("llama-3.1-8b", "h100-sxm"),
            Some((1024, 128)),
            Some(Load::Concurrency(1)),
        )
        .unwrap();
        let pts = j["points"].as_array().unwrap();
        assert_eq!(pts.len(), sc.own_link.len());
        let mut fitting = 0;
        for (g, w) in pts.iter().zip(&sc.own_link) {
            assert_close(&g["tokens_per_s_total"], w.tokens_per_s_total);
            assert_close(&g["itl_ms"], w.itl_ms);
            assert_eq!(g["limited_by"], w.limited_by.id());
            if w.fits {
                fitting += 1;
                assert_eq!(g["batch"], 1);
                let per_user = g["tokens_per_s_per_user"].as_f64().unwrap();
                let itl = g["itl_ms"].as_f64().unwrap();
                assert!(
                    (itl - 1000.0 / per_user).abs() <= 1e-9 * itl,
                    "{itl} vs {per_user}"
                );
                assert_close(&g["ttft_ms"], w.ttft_ms.unwrap());
            }
        }
        assert!(fitting >= 4);
    }

    #[test]
    fn scale_at_a_rate_beyond_capacity_is_limited_by_the_queue() {
        let a = scale_args(&[
            "llama-3.1-8b",
            "--gpu",
            "h100-sxm",
            "--request-rate",
            "1000000",
            "--json",
        ]);
        let j = run(&cat(), &a, &no_files).unwrap().json();
        assert_eq!(j["load"], "request_rate");
        assert_eq!(j["max_load"], false);
        let mut fitting = 0;
        for g in j["points"].as_array().unwrap() {
            if g["fits"] == true {
                fitting += 1;
                assert_eq!(g["limited_by"], "queue", "{g}");
                assert!(g["ttft_ms"].is_null(), "{g}");
            }
        }
        assert!(fitting >= 4);
        // A rate one replica keeps up with has a TTFT.
        let a = scale_args(&[
            "llama-3.1-8b",
            "--gpu",
            "h100-sxm",
            "--request-rate",
            "0.5",
            "--json",
        ]);
        let j = run(&cat(), &a, &no_files).unwrap().json();
        let p = &j["points"][0];
        assert_eq!(p["fits"], true);
        assert_ne!(p["limited_by"], "queue");
        assert!(p["ttft_ms"].as_f64().unwrap() > 0.0);
    }

    #[test]
    fn scale_honours_the_engine_flags() {
        let argv = [
            "llama-3.1-70b",
            "--gpu",
            "h100-sxm",
            "--engine",
            "trtllm",
            "--kv-cache-dtype",
            "fp8",
            "--quantization",
            "fp8",
            "--max-num-seqs",
            "16",
            "--max-num-batched-tokens",
            "4096",
            "--input-len",
            "1024",
            "--output-len",
            "256",
            "--json",
        ];
        let j = run(&cat(), &scale_args(&argv), &no_files).unwrap().json();
        assert_eq!(j["load"], "max_load");
        assert_eq!(j["max_load"], true);
        let mut i = inputs("llama-3.1-70b", "h100-sxm");
        for (f, v) in [
            (Field::Engine, "trtllm"),
            (Field::KvDtype, "fp8"),
            (Field::Format, "fp8"),
            (Field::MaxNumSeqs, "16"),
            (Field::MaxNumBatchedTokens, "4096"),
        ] {
            i.set(f, v).unwrap();
        }
        let sc = plan::scaling(&cat(), &i, Some((1024, 256))).unwrap();
        let plain = plan::scaling(
            &cat(),
            &inputs("llama-3.1-70b", "h100-sxm"),
            Some((1024, 256)),
        )
        .unwrap();
        assert_ne!(sc.own_link, plain.own_link);
        for (g, w) in j["points"].as_array().unwrap().iter().zip(&sc.own_link) {
            assert_close(&g["tokens_per_s_total"], w.tokens_per_s_total);
            assert_eq!(g["batch"], w.batch);
            assert!(w.batch <= 16, "{}", w.batch);
            match w.ttft_ms {
                Some(t) => assert_close(&g["ttft_ms"], t),
                None => assert!(g["ttft_ms"].is_null()),
            }
        }
    }

    #[test]
    fn scale_text_shows_ttft_itl_and_the_limit() {
        let a = scale_args(&["llama-3.1-8b", "--gpu", "h100-sxm", "--concurrency", "8"]);
        let o = run(&cat(), &a, &no_files).unwrap();
        let lines: Vec<&str> = o.stdout.lines().collect();
        assert!(
            lines[0].ends_with("(8 requests in flight):"),
            "{}",
            lines[0]
        );
        assert!(
            lines[1].contains("TTFT ms")
                && lines[1].contains("ITL ms")
                && lines[1].contains("limit")
        );
        let sc = plan::scaling_at(
            &cat(),
            &inputs("llama-3.1-8b", "h100-sxm"),
            None,
            Some(Load::Concurrency(8)),
        )
        .unwrap();
        for (l, w) in lines[2..].iter().zip(&sc.own_link) {
            let cols: Vec<&str> = l.split_whitespace().collect();
            if w.fits {
                assert_eq!(cols[7], fmt_num(w.ttft_ms.unwrap(), 0), "{l}");
                assert_eq!(cols[8], fmt_num(w.itl_ms, 1), "{l}");
                assert_eq!(cols[9], w.limited_by.id(), "{l}");
            }
        }
    }

    #[test]
    fn scale_wants_both_lengths_or_neither() {
        let a = scale_args(&["llama-3.1-8b", "--gpu", "h100-sxm", "--input-len", "5"]);
        match run(&cat(), &a, &no_files) {
            Err(f @ Failure::Usage(_)) => assert!(f.message().contains("--output-len")),
            other => panic!("{:?}", other.map(|o| o.stdout)),
        }
    }
}
