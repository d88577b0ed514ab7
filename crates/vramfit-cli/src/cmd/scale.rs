//! `scale`: throughput over TP 1/2/4/8 and PP 1/2/4/8.

use crate::args::ScaleArgs;
use crate::inputs::inputs_of;
use crate::json::{PointJson, ScaleJson};
use crate::out::{pretty_line, usage, Output, Res};
use std::fmt::Write as _;
use vramfit_core::catalog::Catalog;
use vramfit_core::layout::valid_layouts;
use vramfit_core::plan;
use vramfit_core::units::fmt_num;

/// `scale`: the points as JSON, or a table.
pub fn run(cat: &Catalog, a: &ScaleArgs) -> Res<Output> {
    let inputs = inputs_of(&a.plan)?;
    let lengths = match (a.input_len, a.output_len) {
        (Some(i), Some(o)) => Some((i, o)),
        (None, None) => None,
        _ => return Err(usage("give both --input-len and --output-len, or neither")),
    };
    let sc = plan::scaling(cat, &inputs, lengths).map_err(usage)?;
    let (model, _, _) = plan::resolve_model(cat, &inputs.model).map_err(usage)?;
    let valid = valid_layouts(&model.arch().map_err(usage)?, 64);
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
        })
        .collect();
    if a.plan.json {
        return Ok(Output::ok(pretty_line(&ScaleJson {
            model: &model.id,
            gpu: &sc.gpu_id,
            interconnect: link,
            max_load: lengths.is_some(),
            points,
        })));
    }
    let mut s = format!(
        "{} on {} over {} ({}):\n",
        model.id,
        sc.gpu_id,
        link,
        if lengths.is_some() {
            "max load"
        } else {
            "at the given users"
        }
    );
    let _ = writeln!(
        s,
        "{:>4} {:>4} {:>14} {:>14} {:>12} {:>7} {:>8}",
        "TP", "PP", "tok/s total", "tok/s per GPU", "tok/s/user", "batch", "comm %"
    );
    for p in &points {
        let _ = writeln!(
            s,
            "{:>4} {:>4} {:>14} {:>14} {:>12} {:>7} {:>8}{}",
            p.tensor_parallel_size,
            p.pipeline_parallel_size,
            fmt_num(p.tokens_per_s_total, 0),
            fmt_num(p.tokens_per_s_per_gpu, 0),
            fmt_num(p.tokens_per_s_per_user, 1),
            p.batch,
            fmt_num(p.comm_fraction * 100.0, 1),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::Cmd;
    use crate::out::Failure;
    use crate::testing::{assert_close, cat, inputs, parse};

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
        let o = run(&cat(), &a).unwrap();
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
        }
    }

    #[test]
    fn scale_text_over_pcie_has_a_row_per_core_point() {
        let a = scale_args(&["llama-3.1-8b", "--gpu", "h100-sxm", "--pcie"]);
        let o = run(&cat(), &a).unwrap();
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
    fn scale_wants_both_lengths_or_neither() {
        let a = scale_args(&["llama-3.1-8b", "--gpu", "h100-sxm", "--input-len", "5"]);
        match run(&cat(), &a) {
            Err(f @ Failure::Usage(_)) => assert!(f.message().contains("--output-len")),
            other => panic!("{:?}", other.map(|o| o.stdout)),
        }
    }
}
