//! Valid tensor/pipeline-parallel layouts, and the fewest GPUs that serve a workload.
//!
//! # Rules (vLLM `vllm/config/parallel.py`, `vllm/model_executor/models/utils.py`; the
//! checks themselves live in `sizing/refusal.rs`, shared with the verdict)
//! - TP must divide the attention heads (`num_attention_heads % tp == 0`), and either divide
//!   the KV heads or be a multiple of them (KV heads are then replicated).
//! - TP stays inside one node: at most the GPU's `gpus_per_node` (8 for HGX, 72 for NVL72).
//! - PP splits the layers into stages of `layers / pp`, the remainder one more each on the
//!   stages before the last, from the second-to-last back ([`crate::sizing::pp_stage`]: vLLM
//!   `vllm/distributed/utils.py` `get_pp_indices`); every stage needs at least one layer.
//!   PP may cross nodes.
//! - MoE experts are split over TP (or EP = TP with `--enable-expert-parallel`): the expert
//!   count must be divisible by the EP size when EP is used.
//!
//! Among layouts of the same GPU count, TP is preferred (lower latency) over PP.

use crate::catalog::Gpu;
use crate::model::ModelArch;
use crate::sizing::{estimate_bytes, Estimate, Scenario};
use serde::Serialize;

/// Powers of two up to 64 (TP sizes engines support well).
pub const TP_CANDIDATES: [u64; 7] = [1, 2, 4, 8, 16, 32, 64];
/// Pipeline sizes considered.
pub const PP_CANDIDATES: [u64; 6] = [1, 2, 3, 4, 8, 16];

/// Why a layout is not valid, if it is not ([`crate::sizing::layout_refusal`] as text).
#[must_use]
pub fn layout_problem(m: &ModelArch, tp: u64, pp: u64, gpus_per_node: u64) -> Option<String> {
    crate::sizing::layout_refusal(m, tp, pp, Some(gpus_per_node)).map(|r| r.to_string())
}

/// With expert parallelism, the routed experts must divide evenly over the EP ranks
/// ([`crate::sizing::experts_refusal`] as text).
#[must_use]
pub fn ep_problem(m: &ModelArch, tp: u64, expert_parallel: bool) -> Option<String> {
    crate::sizing::experts_refusal(m, tp, expert_parallel).map(|r| r.to_string())
}

/// Every valid (tp, pp) for a model on a GPU type, ordered by GPU count then by TP first.
#[must_use]
pub fn valid_layouts(m: &ModelArch, gpus_per_node: u64) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = Vec::new();
    for &tp in &TP_CANDIDATES {
        for &pp in &PP_CANDIDATES {
            if layout_problem(m, tp, pp, gpus_per_node).is_none() {
                v.push((tp, pp));
            }
        }
    }
    crate::order::sort_by_key(&mut v, |&(tp, pp)| (tp * pp, pp));
    v
}

/// The smallest layout serving the scenario, with its estimate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Placement {
    /// TP size.
    pub tensor_parallel_size: u64,
    /// PP size.
    pub pipeline_parallel_size: u64,
    /// GPUs in one replica.
    pub gpus_per_replica: u64,
    /// Replicas needed for the workload's concurrency.
    pub replicas: u64,
    /// All GPUs.
    pub total_gpus: u64,
    /// The estimate at this layout.
    pub estimate: Estimate,
}

/// The fewest GPUs of `gpu` for the scenario: the smallest valid layout where the model starts
/// (weights fit and one `max_model_len` request fits), then enough replicas to hold
/// `concurrent_users` requests of `prompt + output` tokens at once. `None` when no layout up
/// to 64 × 16 GPUs fits.
#[must_use]
pub fn fewest_gpus(s: &Scenario, gpu: &Gpu) -> Option<Placement> {
    let total = gpu.usable_bytes();
    for (tp, pp) in valid_layouts(&s.model, gpu.gpus_per_node()) {
        if ep_problem(&s.model, tp, s.flags.expert_parallel).is_some() {
            continue;
        }
        let mut sc = s.clone();
        sc.tensor_parallel_size = tp;
        sc.pipeline_parallel_size = pp;
        let e = estimate_bytes(&sc, total);
        if e.fit.starts() {
            let replicas = e.replicas_for(s.workload.users);
            return Some(Placement {
                tensor_parallel_size: tp,
                pipeline_parallel_size: pp,
                gpus_per_replica: tp * pp,
                replicas,
                total_gpus: tp * pp * replicas,
                estimate: e,
            });
        }
    }
    None
}
