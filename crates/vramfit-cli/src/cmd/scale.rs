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
