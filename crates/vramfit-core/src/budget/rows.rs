//! `fit --find cheapest`: every catalog GPU that can serve a workload, ranked by GPU price.
//!
//! Each GPU type is planned with [`crate::plan::plan`] at the fewest GPUs (or the layout a
//! per-user speed target needs); the rows carry the cost of [`crate::plan::cost`]: purchase =
//! GPUs × catalog purchase price, cloud = GPUs × catalog on-demand $/GPU-hour. The buyer's
//! view with servers, power and years is [`super::budget`].

use serde::Serialize;

/// One GPU type's cheapest way to serve a workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostRow {
    /// Catalog GPU id.
    pub gpu_id: String,
    /// GPU name.
    pub gpu_name: String,
    /// TP.
    pub tensor_parallel_size: u64,
    /// PP.
    pub pipeline_parallel_size: u64,
    /// Replicas.
    pub replicas: u64,
    /// All GPUs.
    pub total_gpus: u64,
    /// Purchase budget, USD.
    pub purchase_usd: Option<f64>,
    /// Cloud $/hour.
    pub cloud_usd_per_hour: Option<f64>,
    /// $ per million output tokens.
    pub usd_per_million_tokens: Option<f64>,
    /// Board power, W.
    pub power_w: Option<f64>,
    /// Decode tokens/s per user.
    pub decode_tokens_per_s_per_user: f64,
    /// Whether the per-user targets (decode speed, time to first token), if any, are met.
    pub meets_target: bool,
}

/// Every catalog GPU that can serve the workload, cheapest purchase first (then $/hour).
/// GPUs without a price sort last; GPUs where nothing fits are left out.
#[must_use]
pub fn cheapest(cat: &crate::catalog::Catalog, inputs: &crate::plan::Inputs) -> Vec<CostRow> {
    let mut rows = Vec::new();
    for g in &cat.gpus {
        let mut i = inputs.clone();
        i.gpu.clone_from(&g.id);
        i.tensor_parallel_size = None;
        i.pipeline_parallel_size = None;
        let Ok(p) = crate::plan::plan(cat, &i) else {
            continue;
        };
        let Some(run) = p.run.as_ref() else {
            continue;
        };
        let meets = crate::plan::meets_targets(&inputs.workload, &run.speed);
        rows.push(CostRow {
            gpu_id: g.id.clone(),
            gpu_name: g.name.clone(),
            tensor_parallel_size: p.tensor_parallel_size,
            pipeline_parallel_size: p.pipeline_parallel_size,
            replicas: p.replicas,
            total_gpus: p.gpus_needed,
            purchase_usd: run.cost.purchase_usd,
            cloud_usd_per_hour: run.cost.cloud_usd_per_hour,
            usd_per_million_tokens: run.cost.usd_per_million_tokens,
            power_w: run.cost.power_w,
            decode_tokens_per_s_per_user: run.speed.decode_tokens_per_s_per_user,
            meets_target: meets,
        });
    }
    crate::order::sort_by(&mut rows, |a, b| {
        let key = |r: &CostRow| {
            (
                !r.meets_target,
                r.purchase_usd.unwrap_or(f64::INFINITY),
                r.cloud_usd_per_hour.unwrap_or(f64::INFINITY),
            )
        };
        let (a, b) = (key(a), key(b));
        a.0.cmp(&b.0)
            .then(a.1.total_cmp(&b.1))
            .then(a.2.total_cmp(&b.2))
    });
    rows
}
