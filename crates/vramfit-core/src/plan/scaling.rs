//! Scaling questions: throughput of one replica per layout (TP 1/2/4/8, PP 2/4/8) at a load,
//! on the GPU's own link and over PCIe, and the throughput-versus-latency curves of TP
//! 1/2/4/8. The formulas are [`crate::serving`]'s; this module picks the layouts and loads.

use super::{resolve_gpu, resolve_model, scenario, Inputs, PlanError};
use crate::catalog::{Catalog, Gpu, Model};
use crate::serving::{Limit, Load};
use crate::sizing::Scenario;
use crate::throughput::Link;
use serde::Serialize;

/// The layouts of a scaling curve: TP 1/2/4/8 (PP 1) and PP 2/4/8 (TP 1).
pub const SCALING_LAYOUTS: [(u64, u64); 7] =
    [(1, 1), (2, 1), (4, 1), (8, 1), (1, 2), (1, 4), (1, 8)];

/// Tensor-parallel scaling of a scenario on the GPU's own link and over PCIe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scaling {
    /// Catalog model id.
    pub model_id: String,
    /// Catalog GPU id.
    pub gpu_id: String,
    /// Link name (e.g. "NVLink 4").
    pub link_name: String,
    /// The load every point runs at (one replica per layout).
    pub load: Load,
    /// Points on the GPU's own interconnect.
    pub own_link: Vec<crate::throughput::ScalePoint>,
    /// The same over PCIe.
    pub pcie: Vec<crate::throughput::ScalePoint>,
    /// Plain-words summary of the efficiency lost to communication.
    pub summary: String,
}

/// TP 1/2/4/8 (and PP 2/4) throughput, max load when `lengths` is given.
///
/// # Errors
/// Unknown model or GPU.
pub fn scaling(
    cat: &Catalog,
    inputs: &Inputs,
    lengths: Option<(u64, u64)>,
) -> Result<Scaling, PlanError> {
    scaling_at(cat, inputs, lengths, None)
}

/// The load a scaling curve runs at when none is given: the workload's request rate if it
/// has one, else maximum load when `lengths` are given, else the workload's users.
#[must_use]
pub fn default_load(inputs: &Inputs, lengths: Option<(u64, u64)>) -> Load {
    match (inputs.workload.request_rate, lengths) {
        (Some(r), _) if r.is_finite() && r > 0.0 => Load::Rate(r),
        (_, Some(_)) => Load::MaxLoad,
        _ => Load::Concurrency(inputs.workload.users.max(1)),
    }
}

/// The scenario of a scaling question (format as [`plan`] picks it) and the GPU.
fn scaling_scenario<'a>(
    cat: &'a Catalog,
    inputs: &Inputs,
) -> Result<(&'a Model, &'a Gpu, Scenario), PlanError> {
    let (model, implied, group) = resolve_model(cat, &inputs.model)?;
    let gpu = resolve_gpu(cat, &inputs.gpu)?;
    let arch = model
        .arch()
        .map_err(|e| PlanError::BadModel(e.to_string()))?;
    let format = inputs
        .format
        .or(implied)
        .unwrap_or_else(|| model.native_format());
    Ok((
        model,
        gpu,
        scenario(arch, inputs, format, group.unwrap_or(128)),
    ))
}

/// [`scaling`] at a load (`None`: [`default_load`]); `lengths` replace the workload's
/// prompt and output tokens.
///
/// # Errors
/// Unknown model or GPU.
pub fn scaling_at(
    cat: &Catalog,
    inputs: &Inputs,
    lengths: Option<(u64, u64)>,
    load: Option<Load>,
) -> Result<Scaling, PlanError> {
    let mut layouts = SCALING_LAYOUTS.to_vec();
    // The user's own layout, if they chose one, is a point too.
    if let Some(tp) = inputs.tensor_parallel_size {
        let l = (tp, inputs.pipeline_parallel_size.unwrap_or(1));
        if !layouts.contains(&l) {
            layouts.push(l);
        }
    }
    let (model, gpu, mut s) = scaling_scenario(cat, inputs)?;
    if let Some((i, o)) = lengths {
        s.workload.prompt_tokens = i;
        s.workload.output_tokens = o;
    }
    let load = load.unwrap_or_else(|| default_load(inputs, lengths));
    let own_link = crate::throughput::scaling_curve(&s, gpu, &layouts, load, Link::Own);
    let pcie =
        crate::throughput::scaling_curve(&s, gpu, &layouts, load, Link::Pcie(gpu.pcie_gb_per_s()));
    let link_name = gpu
        .interconnect
        .generation
        .clone()
        .unwrap_or_else(|| gpu.interconnect.kind.clone());
    let base = own_link
        .iter()
        .find(|p| p.fits && p.pipeline_parallel_size == 1);
    let t8 = own_link
        .iter()
        .find(|p| p.tensor_parallel_size == 8 && p.pipeline_parallel_size == 1);
    let summary = match (base, t8) {
        (Some(b), Some(t8)) if t8.fits && b.tokens_per_s_per_gpu > 0.0 => {
            let ideal = b.tokens_per_s_per_gpu;
            let eff = t8.tokens_per_s_per_gpu / ideal * 100.0;
            let pcie8 = pcie
                .iter()
                .find(|p| p.tensor_parallel_size == 8 && p.pipeline_parallel_size == 1);
            // Past the link's domain (H100 NVL pairs) TP 8 all-reduces over PCIe already.
            let split = gpu.has_fast_link() && gpu.link_domain() < 8;
            let over = if split {
                format!(
                    "{link_name} in groups of {} and PCIe between them",
                    gpu.link_domain()
                )
            } else {
                link_name.clone()
            };
            format!(
                "At TP 8 over {over} each GPU delivers {eff:.0}% of the per-GPU throughput of TP {} ({:.0}% of each decode step is all-reduce){}. Above 100% means the extra memory held a larger batch.",
                b.tensor_parallel_size,
                t8.comm_fraction * 100.0,
                pcie8.filter(|_| !split).map_or(String::new(), |p| format!(
                    "; over PCIe it would be {:.0}% ({:.0}% all-reduce)",
                    p.tokens_per_s_per_gpu / ideal * 100.0,
                    p.comm_fraction * 100.0
                ))
            )
        }
        _ => "The model does not fit at TP 8 or smaller on this GPU.".to_string(),
    };
    Ok(Scaling {
        model_id: model.id.clone(),
        gpu_id: gpu.id.clone(),
        link_name,
        load,
        own_link,
        pcie,
        summary,
    })
}

/// The tensor-parallel sizes of the throughput-versus-latency chart.
pub const LATENCY_TPS: [u64; 4] = [1, 2, 4, 8];

/// One point of a throughput-versus-latency curve: one replica at a concurrency.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencyPoint {
    /// Requests in flight.
    pub concurrency: u64,
    /// Tokens/s one user sees (1 / inter-token latency).
    pub tokens_per_s_per_user: f64,
    /// Output tokens/s per GPU.
    pub tokens_per_s_per_gpu: f64,
    /// Inter-token latency, ms.
    pub itl_ms: f64,
    /// Time to first token, ms.
    pub ttft_ms: Option<f64>,
    /// What bounds the point.
    pub limited_by: Limit,
}

/// The throughput-versus-latency curve of one layout.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyCurve {
    /// TP size (PP 1).
    pub tensor_parallel_size: u64,
    /// Concurrency 1, 2, 4, … up to the layout's maximum-load concurrency (which is last).
    pub points: Vec<LatencyPoint>,
}

/// Throughput per GPU against speed per user for TP 1/2/4/8 (those that fit and are valid),
/// at concurrency 1, 2, 4, … up to each layout's maximum-load concurrency, at the workload's
/// lengths: the trade every serving deployment picks a point on.
///
/// # Errors
/// Unknown model or GPU.
pub fn latency_curves(cat: &Catalog, inputs: &Inputs) -> Result<Vec<LatencyCurve>, PlanError> {
    let (_, gpu, s) = scaling_scenario(cat, inputs)?;
    let valid = crate::layout::valid_layouts(&s.model, gpu.gpus_per_node());
    let mut curves = Vec::new();
    for tp in LATENCY_TPS {
        if !valid.contains(&(tp, 1))
            || crate::layout::ep_problem(&s.model, tp, s.flags.expert_parallel).is_some()
        {
            continue;
        }
        let layout = [(tp, 1)];
        let at = |load| crate::throughput::scaling_curve(&s, gpu, &layout, load, Link::Own);
        let Some(max) = at(Load::MaxLoad).into_iter().next().filter(|p| p.fits) else {
            continue;
        };
        let top = max.batch.max(1);
        let mut points = Vec::new();
        let mut n = 1_u64;
        loop {
            let c = n.min(top);
            if let Some(p) = at(Load::Concurrency(c))
                .into_iter()
                .next()
                .filter(|p| p.fits)
            {
                points.push(LatencyPoint {
                    concurrency: c,
                    tokens_per_s_per_user: p.tokens_per_s_per_user,
                    tokens_per_s_per_gpu: p.tokens_per_s_per_gpu,
                    itl_ms: p.itl_ms,
                    ttft_ms: p.ttft_ms,
                    limited_by: p.limited_by,
                });
            }
            if c >= top {
                break;
            }
            n = n.saturating_mul(2);
        }
        if !points.is_empty() {
            curves.push(LatencyCurve {
                tensor_parallel_size: tp,
                points,
            });
        }
    }
    Ok(curves)
}
