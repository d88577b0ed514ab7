//! One question in, every answer out: the entry point the UI and the CLI share.
//!
//! [`Inputs`] is the whole scenario as a user states it (catalog ids, vLLM flag values,
//! workload); [`plan`] resolves it against the catalog and returns the memory breakdown,
//! verdict, layout, speed, cost and the side-by-side formats, each headline with its
//! uncertainty band.
//!
//! # Cost
//! - Purchase budget = GPUs × catalog purchase price per GPU.
//! - Cloud $/hour = GPUs × catalog on-demand $/GPU-hour.
//! - $ per million output tokens = $/hour ÷ (output tokens/s × 3600) × 10^6, at the
//!   workload's concurrency (or the pool's, if smaller).
//!
//! # Uncertainty
//! Bands come from the calibration against ../shared/calibration (docs/ACCURACY.md):
//! weights ± [`WEIGHTS_REL_ERR`], KV pool ± [`KV_POOL_REL_ERR`] of the budget. Speed bands
//! are the engine's held-out (leave-one-GPU-out) 10th–90th percentile errors,
//! [`crate::serving::VALIDATION`]; TTFT adds ± [`TTFT_REL_ERR`]. An engine no measurement
//! covers (SGLang, transformers) gets no band: `speed_validated` is false and the page says
//! "not validated".

use crate::catalog::{Catalog, Gpu, Model};
use crate::dtype::{KvDtype, WeightFormat};
use crate::layout::{fewest_gpus, layout_problem};
use crate::model::ModelArch;
use crate::serving::{serve, Limit, Load, Serving, FITTED};
use crate::sizing::{estimate_bytes, Estimate, Fit, Scenario};
use crate::throughput::{Link, Speed};
use serde::Serialize;

/// Relative error band of weights per GPU (calibration: worst case ~1.5%).
pub const WEIGHTS_REL_ERR: f64 = 0.015;
/// KV-pool error band as a fraction of the engine budget (calibration p90).
pub const KV_POOL_REL_ERR: f64 = 0.02;
/// Relative TTFT band: the 90th percentile |error| of mean TTFT on the request-rate runs of
/// the calibration set (TensorRT-LLM served through Triton, 26 rows, in-sample: held-out TTFT
/// rows are too few; docs/ACCURACY.md "Latency").
pub const TTFT_REL_ERR: f64 = 0.22;

pub use crate::inputs::Inputs;

mod features;
mod files;
mod fix;
mod parts;
mod scaling;
use files::weights_provenance;
pub use files::{
    catalog_files, custom_plan, format_of_report, header_weights, ModelFiles, Provenance,
};
pub use fix::{repair, settle, Fix, Needed, Repair, Settled, MAX_FIXES};
pub use parts::{checkpoint, cost, placeholder_repo, Checkpoint, Cost, Launch, Running};
pub use scaling::{
    default_load, latency_curves, scaling, scaling_at, LatencyCurve, LatencyPoint, Scaling,
    LATENCY_TPS, SCALING_LAYOUTS,
};

/// Why a plan could not be made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum PlanError {
    /// The model is not in the catalog; closest ids.
    UnknownModel {
        /// What was asked.
        name: String,
        /// Closest ids.
        closest: Vec<String>,
    },
    /// The GPU is not in the catalog; closest ids.
    UnknownGpu {
        /// What was asked.
        name: String,
        /// Closest ids.
        closest: Vec<String>,
    },
    /// The catalog entry's config is unusable.
    BadModel(String),
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownModel { name, closest } => {
                write!(
                    f,
                    "unknown model `{name}`; closest catalog ids: {}",
                    closest.join(", ")
                )
            }
            Self::UnknownGpu { name, closest } => write!(
                f,
                "{}",
                crate::catalog::UnknownGpu {
                    name: name.clone(),
                    suggestions: closest.clone(),
                }
            ),
            Self::BadModel(e) => write!(f, "model config is unusable: {e}"),
        }
    }
}

impl std::error::Error for PlanError {}

/// A value with its uncertainty band.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Band {
    /// Best estimate.
    pub value: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Band {
    fn rel(value: f64, rel: f64) -> Self {
        Self {
            value,
            low: value * (1.0 - rel),
            high: value * (1.0 + rel),
        }
    }
    fn abs(value: f64, abs: f64) -> Self {
        Self {
            value,
            low: (value - abs).max(0.0),
            high: value + abs,
        }
    }
}

/// The held-out band of a speed for an engine (collapsed to the value when not validated).
#[must_use]
pub fn speed_band(engine: crate::engine::Engine, value: f64) -> Band {
    match crate::serving::validation(engine) {
        Some(v) => {
            let (low, high) = v.band(value);
            Band { value, low, high }
        }
        None => Band::rel(value, 0.0),
    }
}

/// One weight format's result, for the side-by-side view.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FormatRow {
    /// The format.
    pub format: WeightFormat,
    /// Weights of the whole model in this format.
    pub model_weights_bytes: u64,
    /// Estimate at the fewest-GPU layout (or TP1 if nothing fits).
    pub estimate: Estimate,
    /// TP of that layout.
    pub tensor_parallel_size: u64,
    /// PP of that layout.
    pub pipeline_parallel_size: u64,
    /// GPUs for one replica (0 = does not start).
    pub gpus_per_replica: u64,
    /// GPUs for the workload (0 = does not start).
    pub total_gpus: u64,
    /// Decode speed per user at the workload's concurrency; `None` when it does not start.
    pub decode_tokens_per_s: Option<f64>,
    /// The first checked fix when it does not start ([`repair`]).
    pub fix: Option<Fix>,
    /// What happens in words: "fits", "fits at ≤ 7,488 tokens", "needs TP 2", "does not fit".
    pub outcome: String,
    /// Quality caveat.
    pub caveat: &'static str,
}

/// Everything vramfit answers for one scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// Catalog model id.
    pub model_id: String,
    /// Model name.
    pub model_name: String,
    /// Catalog GPU id.
    pub gpu_id: String,
    /// GPU name.
    pub gpu_name: String,
    /// Format used.
    pub format: WeightFormat,
    /// KV-cache dtype.
    pub kv_dtype: KvDtype,
    /// Official repo ids of the model (for launch commands).
    pub repo_ids: Vec<String>,
    /// Workload tokens per request: prompt + output, the media not included ([`Plan::media_tokens`]).
    pub workload_tokens: u64,
    /// Tokens each request's images, videos and audio add to its prompt (explicit
    /// multimodal limits, `sizing/mm.rs` `per_request`); 0 otherwise. A request holds
    /// `workload_tokens + media_tokens` ([`crate::sizing::Scenario::request_tokens`]).
    pub media_tokens: u64,
    /// Engine used.
    pub engine: String,
    /// TP of the answer.
    pub tensor_parallel_size: u64,
    /// PP of the answer.
    pub pipeline_parallel_size: u64,
    /// Replicas for the workload.
    pub replicas: u64,
    /// GPUs for the workload: those of [`Plan::needed`] (0 here, `null` in `plan --json`,
    /// when no layout starts it as asked).
    pub gpus_needed: u64,
    /// The fewest GPUs that start the plan: its own layout when it starts, else the
    /// fewest-GPU layout with the other inputs as asked; `None` when none does.
    pub needed: Option<Needed>,
    /// The verdict in words, with the layout it checked and how it was chosen, and the
    /// checked fixes when it does not start.
    pub verdict: String,
    /// Checked fixes when the plan does not start ([`repair`]), the user's hardware kept
    /// first; empty when it starts (or when nothing tried starts it).
    pub fixes: Vec<Fix>,
    /// Speed and cost: `None` when the plan does not start.
    pub run: Option<Running>,
    /// What to launch: the plan when it starts, else the plan with its first fix; `None`
    /// when nothing starts.
    pub launch: Option<Launch>,
    /// Whether the layout was chosen automatically.
    pub layout_auto: bool,
    /// Layout problem, if the user chose an invalid one.
    pub layout_problem: Option<String>,
    /// Memory breakdown at the layout.
    pub estimate: Estimate,
    /// Total parameters.
    pub parameters: u64,
    /// Active parameters per token.
    pub active_parameters: u64,
    /// bf16 / fp8 / int4 side by side (plus the chosen format).
    pub formats: Vec<FormatRow>,
    /// Weights per GPU band, bytes.
    pub weights_band: Band,
    /// KV pool band, bytes.
    pub kv_pool_band: Band,
    /// Longest-context band (tokens): the pool's band carried through (blocks scale with it).
    pub max_context_band: Band,
    /// Max-concurrency band (requests of `max_model_len`).
    pub max_concurrency_band: Band,
    /// Whether measurements validate the engine's speed (bands); `false`: "not validated",
    /// and the speed bands collapse to the value.
    pub speed_validated: bool,
    /// Assumptions and warnings.
    pub warnings: Vec<String>,
    /// For a model the user brought: the catalog id with the same architecture.
    pub catalog_twin: Option<String>,
    /// Values the model's config did not give and sizing assumed (each also a warning).
    pub assumptions: Vec<crate::model::Assumption>,
    /// Where each derived number of the model came from (config field, class default,
    /// assumption; the safetensors reader adds `headers` entries).
    pub provenance: Vec<crate::model::Provenance>,
    /// Where the weights figure came from (the checkpoint's headers, its index, or the
    /// config's shapes), with the assumptions on top.
    pub weights_source: Provenance,
}

impl Plan {
    /// What happens, in words: "fits", "starts; requests queue", or what the first checked
    /// fix makes of it ("fits at ≤ 7,488 tokens", "needs TP 2"), or "does not start".
    #[must_use]
    pub fn outcome(&self) -> String {
        match (self.estimate.fit, self.fixes.first()) {
            (Fit::Fits, _) => "fits".to_string(),
            (Fit::FitsWithQueueing, _) => "starts; requests queue".to_string(),
            (_, Some(f)) => f.outcome(),
            (_, None) => "does not start".to_string(),
        }
    }

    /// The tokens of one request as the concurrency counts them: prompt, media and output,
    /// cut to the longest request the engine holds (a longer one is refused or stopped:
    /// `plan/features.rs` `too_long`).
    #[must_use]
    pub fn counted_tokens(&self) -> u64 {
        self.estimate.verdict.workload_tokens()
    }

    /// The longest `--max-model-len` of a fix that changes nothing else, when the plan does
    /// not start (the context cards' "fits at ≤ N tokens").
    #[must_use]
    pub fn context_fix(&self) -> Option<u64> {
        self.fixes.iter().find_map(|f| {
            (*f == Fix {
                max_model_len: f.max_model_len,
                ..Fix::default()
            })
            .then_some(f.max_model_len)
            .flatten()
        })
    }
}

/// Resolves a model name against the catalog, with the format its name implies.
///
/// # Errors
/// [`PlanError::UnknownModel`] with the closest ids.
pub fn resolve_model<'a>(
    cat: &'a Catalog,
    name: &str,
) -> Result<(&'a Model, Option<WeightFormat>, Option<u64>), PlanError> {
    match cat.model(name) {
        Some(m) => Ok((m.model, m.format, m.group_size)),
        None => Err(PlanError::UnknownModel {
            name: name.to_string(),
            closest: Catalog::closest(cat.models.iter().map(|m| m.id.as_str()), name, 5),
        }),
    }
}

/// Resolves a GPU name (id, alias, nvidia-smi name, any spelling `catalog::names` reads;
/// an ambiguous one gives the most common variant: [`Catalog::resolve_gpu`] has the notice).
///
/// # Errors
/// [`PlanError::UnknownGpu`] with the ids ranked by token similarity.
pub fn resolve_gpu<'a>(cat: &'a Catalog, name: &str) -> Result<&'a Gpu, PlanError> {
    cat.resolve_gpu(name)
        .map(|m| m.gpu)
        .map_err(|e| PlanError::UnknownGpu {
            name: e.name,
            closest: e.suggestions,
        })
}

/// Builds the scenario for an architecture.
#[must_use]
pub fn scenario(
    arch: ModelArch,
    inputs: &Inputs,
    format: WeightFormat,
    group_size: u64,
) -> Scenario {
    let mut s = Scenario::new(arch);
    s.format = format;
    s.group_size = group_size;
    s.tensor_parallel_size = inputs.tensor_parallel_size.unwrap_or(1).max(1);
    s.pipeline_parallel_size = inputs.pipeline_parallel_size.unwrap_or(1).max(1);
    s.flags = inputs.flags;
    s.draft_repo = inputs.spec_model.trim().to_string();
    s.workload = inputs.workload;
    s.workload.users = s.workload.users.max(1);
    s
}

use crate::units::real as f;

/// The most replicas the search for a request rate considers (a rate the table accepts,
/// 10^6 req/s, over this many replicas is far below one request per replica per second).
pub const MAX_REPLICAS: u64 = 1 << 20;

/// The load on one of `replicas` replicas that share the workload evenly: the request rate
/// split (a load balancer that spreads Poisson arrivals at random gives each replica Poisson
/// arrivals at `rate / replicas`: thinning, Kingman, Poisson Processes §5.1), or else the
/// users split (the busiest replica gets `⌈users ÷ replicas⌉`).
#[must_use]
pub fn replica_load(w: &crate::inputs::Workload, replicas: u64) -> Load {
    let r = replicas.max(1);
    match w.request_rate {
        Some(rate) if rate.is_finite() && rate > 0.0 => Load::Rate(rate / f(r)),
        _ => Load::Concurrency(w.users.max(1).div_ceil(r)),
    }
}

/// The operating point of one replica of `s` (on its own link) when `replicas` replicas
/// share the workload ([`replica_load`]), with the shipped constants.
#[must_use]
pub fn operating_point(s: &Scenario, gpu: &Gpu, replicas: u64) -> Serving {
    let (e, r) = crate::throughput::replica(s, gpu, Link::Own);
    serve(
        &r,
        &FITTED,
        &crate::throughput::traffic(s, &e, replica_load(&s.workload, replicas)),
    )
}

/// Whether an operating point serves the workload: it keeps up with the arrivals (not
/// [`Limit::Queue`]), runs at least part of a request, and, when `targets`, meets the
/// per-user decode speed (`1 / ITL`) and time to first token.
#[must_use]
pub fn serves(w: &crate::inputs::Workload, sv: &Serving, targets: bool) -> bool {
    sv.limited_by != Limit::Queue
        && sv.concurrency > 0.0
        && (!targets
            || (w
                .target_tokens_per_s
                .is_none_or(|t| sv.tokens_per_s_per_user >= t)
                && w.max_ttft_ms
                    .is_none_or(|t| sv.ttft_ms.is_some_and(|x| x <= t))))
}

/// The fewest replicas of the layout `s` that serve the workload: at least `memory` (the
/// replicas that hold its requests), then the fewest at which one replica's operating point
/// [`serves`] it. More replicas put less load on each, so the operating point only gets
/// faster: doubling, then bisection, find the fewest. `None` when no count does (the layout
/// is too slow even nearly idle).
fn replicas_needed(s: &Scenario, gpu: &Gpu, memory: u64, targets: bool) -> Option<u64> {
    let w = &s.workload;
    let (e, r) = crate::throughput::replica(s, gpu, Link::Own);
    // The requests' lengths once; each count of replicas changes only the load.
    let base = crate::throughput::traffic(s, &e, replica_load(w, 1));
    let ok = |n: u64| {
        let t = crate::serving::Traffic {
            load: replica_load(w, n),
            ..base
        };
        serves(w, &serve(&r, &FITTED, &t), targets)
    };
    let memory = memory.max(1);
    if ok(memory) {
        return Some(memory);
    }
    // Past one user per replica (no rate) nothing changes.
    let cap = if w.request_rate.is_some() {
        MAX_REPLICAS
    } else {
        w.users.max(1)
    }
    .max(memory);
    let (mut lo, mut hi) = (memory, memory);
    loop {
        if hi >= cap {
            hi = cap;
            if !ok(hi) {
                return None;
            }
            break;
        }
        hi = hi.saturating_mul(2).min(cap);
        if ok(hi) {
            break;
        }
        lo = hi;
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Replicas that hold the workload's requests in memory: `⌈users ÷ requests per replica⌉`
/// ([`Estimate::replicas_for`]); with a request rate the users are not counted (the rate
/// sets the requests in flight, and a replica whose KV pool is full queues: [`serves`]).
fn memory_replicas(s: &Scenario, e: &Estimate) -> u64 {
    if s.workload.request_rate.is_some() {
        1
    } else {
        e.replicas_for(s.workload.users)
    }
}

/// Sizes `arch` on `gpu` in `format`, at the user's layout or the fewest GPUs.
///
/// Replicas are the most of those the memory needs ([`memory_replicas`]) and those at which
/// each replica's operating point ([`operating_point`]) keeps up with the request rate and
/// meets the per-user targets. Without a layout from the user and with a target or a rate,
/// every valid layout from the fewest-GPU one up is tried and the fewest GPUs in all win
/// (the narrower layout on a tie); when none meets the targets, the fewest-GPU layout with
/// the replicas the rate needs.
#[must_use]
pub fn place(s: &Scenario, gpu: &Gpu, inputs: &Inputs) -> (Scenario, Estimate, u64, bool) {
    // The GPU's architecture picks the kernels of quantized weights (their padding):
    // `sizing/quant_layout.rs`.
    let arch = crate::sizing::GpuArch::from_catalog(gpu.architecture.as_deref(), &gpu.name);
    let with_arch;
    let s = if s.gpu_arch == arch {
        s
    } else {
        let mut c = s.clone();
        c.gpu_arch = arch;
        with_arch = c;
        &with_arch
    };
    let total = gpu.usable_bytes();
    let w = &inputs.workload;
    let has_target = w.target_tokens_per_s.is_some() || w.max_ttft_ms.is_some();
    let bound = has_target || s.workload.request_rate.is_some();
    if inputs.tensor_parallel_size.is_some() || inputs.pipeline_parallel_size.is_some() {
        let e = estimate_bytes(s, total);
        let memory = memory_replicas(s, &e);
        let replicas = if bound && e.fit.starts() {
            replicas_needed(s, gpu, memory, true)
                .or_else(|| replicas_needed(s, gpu, memory, false))
                .unwrap_or(memory)
        } else {
            memory
        };
        return (s.clone(), e, replicas, false);
    }
    let first = fewest_gpus(s, gpu);
    if let (true, Some(p)) = (bound, first.as_ref()) {
        let gpus = p.tensor_parallel_size * p.pipeline_parallel_size;
        let mut best: Option<(u64, Scenario, Estimate, u64)> = None;
        for (tp, pp) in crate::layout::valid_layouts(&s.model, gpu.gpus_per_node()) {
            if tp * pp < gpus
                || best.as_ref().is_some_and(|b| tp * pp >= b.0)
                || crate::layout::ep_problem(&s.model, tp, s.flags.expert_parallel).is_some()
            {
                continue;
            }
            let mut sc = s.clone();
            sc.tensor_parallel_size = tp;
            sc.pipeline_parallel_size = pp;
            let e = estimate_bytes(&sc, total);
            if !e.fit.starts() {
                continue;
            }
            let Some(r) = replicas_needed(&sc, gpu, memory_replicas(&sc, &e), true) else {
                continue;
            };
            let all = tp * pp * r;
            if best.as_ref().is_none_or(|b| all < b.0) {
                best = Some((all, sc, e, r));
            }
        }
        if let Some((_, sc, e, r)) = best {
            return (sc, e, r, true);
        }
    }
    match first {
        Some(p) => {
            let mut sc = s.clone();
            sc.tensor_parallel_size = p.tensor_parallel_size;
            sc.pipeline_parallel_size = p.pipeline_parallel_size;
            let memory = memory_replicas(&sc, &p.estimate);
            let replicas = if s.workload.request_rate.is_some() {
                replicas_needed(&sc, gpu, memory, false).unwrap_or(memory)
            } else {
                p.replicas
            };
            (sc, p.estimate, replicas, true)
        }
        None => (s.clone(), estimate_bytes(s, total), 1, true),
    }
}

/// Whether a speed meets the workload's per-user targets (none set: it does), by the
/// serving model's operating point ([`serves`] with targets, queue included).
#[must_use]
pub fn meets_targets(w: &crate::inputs::Workload, sp: &Speed) -> bool {
    serves(w, &sp.serving, true)
}

/// What bounds a plan's answer (`limited_by`): `"memory"` when the replicas are those the
/// KV pools need to hold the users (more than one), else what bounds one replica's
/// operating point ([`Limit::id`]: bandwidth, compute, interconnect, scheduler, overhead,
/// memory, or queue when the replicas cannot keep up with the rate).
#[must_use]
pub fn limit_of(s: &Scenario, e: &Estimate, replicas: u64, sv: &Serving) -> &'static str {
    let memory = memory_replicas(s, e);
    if sv.limited_by != Limit::Queue && memory > 1 && replicas == memory {
        Limit::Memory.id()
    } else {
        sv.limited_by.id()
    }
}

/// Answers a scenario.
///
/// # Errors
/// Unknown model or GPU, or an unusable config (see [`PlanError`]).
///
/// # Example
#[cfg_attr(feature = "bundled", doc = "```")]
#[cfg_attr(not(feature = "bundled"), doc = "```ignore")]
/// let cat = vramfit_core::catalog::Catalog::bundled();
/// let p = vramfit_core::plan::plan(&cat, &vramfit_core::plan::Inputs::default()).unwrap();
/// assert!(p.estimate.weights_bytes > 0);
/// ```
pub fn plan(cat: &Catalog, inputs: &Inputs) -> Result<Plan, PlanError> {
    plan_on(cat, inputs, resolve_gpu(cat, &inputs.gpu)?)
}

/// [`plan`] on a GPU entry given whole (a catalog GPU as a platform seats it, with that
/// platform's node size and network: [`crate::budget`]); `inputs.gpu` is not read.
///
/// # Errors
/// As [`plan`], for the model.
pub fn plan_on(cat: &Catalog, inputs: &Inputs, gpu: &Gpu) -> Result<Plan, PlanError> {
    let (model, implied, implied_group) = resolve_model(cat, &inputs.model)?;
    let arch = model
        .arch()
        .map_err(|e| PlanError::BadModel(e.to_string()))?;
    let mut files = catalog_files(model);
    files.draft = files::draft_arch(cat, inputs);
    let mut p = plan_arch_with(
        arch,
        model.id.clone(),
        model.name.clone(),
        (model.native_format(), implied, implied_group),
        &files,
        gpu,
        inputs,
    );
    p.repo_ids.clone_from(&model.hf_repo_ids);
    if let Some(l) = p.launch.as_mut() {
        l.checkpoint = checkpoint(model, l.format, l.engine);
    }
    Ok(p)
}

/// [`plan`] for an architecture that is not (or not only) in the catalog.
#[must_use]
#[allow(clippy::too_many_arguments)] // the resolved pieces of one question
pub fn plan_arch(
    arch: ModelArch,
    model_id: String,
    model_name: String,
    native: WeightFormat,
    implied: Option<WeightFormat>,
    implied_group: Option<u64>,
    gpu: &Gpu,
    inputs: &Inputs,
) -> Plan {
    plan_arch_with(
        arch,
        model_id,
        model_name,
        (native, implied, implied_group),
        &ModelFiles::default(),
        gpu,
        inputs,
    )
}

/// [`plan_arch`] with what the model's files say beyond its shapes ([`ModelFiles`]): the
/// plan's scenarios (its own, its fixes', its format rows') take their weights from the
/// checkpoint when the format is the checkpoint's ([`ModelFiles::apply`]).
#[must_use]
pub fn plan_arch_with(
    arch: ModelArch,
    model_id: String,
    model_name: String,
    (native, implied, implied_group): (WeightFormat, Option<WeightFormat>, Option<u64>),
    files: &ModelFiles,
    gpu: &Gpu,
    inputs: &Inputs,
) -> Plan {
    let format = inputs.format.or(implied).unwrap_or(native);
    let group = implied_group.unwrap_or(128);
    let mut base = scenario(arch.clone(), inputs, format, group);
    files.apply(&mut base, native);
    let problem = match (inputs.tensor_parallel_size, inputs.pipeline_parallel_size) {
        (None, None) => None,
        (tp, pp) => {
            crate::layout::ep_problem(&base.model, tp.unwrap_or(1), inputs.flags.expert_parallel)
                .or_else(|| {
                    layout_problem(
                        &base.model,
                        tp.unwrap_or(1),
                        pp.unwrap_or(1),
                        gpu.gpus_per_node(),
                    )
                })
        }
    };
    let settled = settle(&base, gpu, inputs);
    let starts = settled.starts();
    let rep = if starts {
        Repair {
            fixes: Vec::new(),
            needed: Some(settled.needed()),
        }
    } else {
        repair(
            &arch,
            gpu,
            inputs,
            (format, group),
            &settled,
            true,
            (files, native),
        )
    };
    let verdict = parts::verdict_text(&settled, inputs, &rep, gpu.gpus_per_node());
    let run = starts.then(|| parts::running(&settled, gpu, inputs.flags.engine));
    let launch = if starts {
        Some(
            parts::launch_of(&settled, None, &model_name, native).in_flight(
                run.as_ref(),
                inputs,
                &settled.estimate,
            ),
        )
    } else {
        rep.fixes.first().map(|f| {
            let i = f.apply(inputs);
            let mut sc = scenario(arch.clone(), &i, f.format.unwrap_or(format), group);
            files.apply(&mut sc, native);
            let st = settle(&sc, gpu, &i);
            parts::launch_of(&st, Some(*f), &model_name, native)
        })
    };
    let Settled {
        scenario: sc,
        estimate: est,
        replicas,
        auto,
    } = settled;
    let params = base.model.params();
    let mut fmts = vec![WeightFormat::Bf16, WeightFormat::Fp8, WeightFormat::Int4Awq];
    if !fmts.contains(&format) {
        fmts.push(format);
    }
    let formats = fmts
        .into_iter()
        .map(|fm| format_row(&arch, gpu, inputs, (fm, group), (files, native)))
        .collect();
    let mut warnings = est.warnings.to_strings();
    // What the config did not say and the reader assumed, said where the answer is read.
    warnings.extend(arch.assumptions.iter().map(ToString::to_string));
    if let Some(r) = run
        .as_ref()
        .filter(|r| !serves(&inputs.workload, &r.serving, true))
    {
        warnings.push(if r.serving.limited_by == Limit::Queue {
            "requests arrive faster than the replicas serve them: the queue grows".to_string()
        } else {
            format!(
                "the per-user targets are not met (limited by {})",
                r.serving.limited_by.id()
            )
        });
    }
    warnings.extend(features::feature_warnings(&sc, inputs));
    warnings.extend(parts::across_nodes(&sc, gpu));
    if let Some(w) = features::too_long(&sc, est.request_len) {
        warnings.push(w);
    }
    let budget = f(est.budget_bytes);
    let pool_rel = if est.kv_pool_bytes > 0 {
        (KV_POOL_REL_ERR * budget / f(est.kv_pool_bytes)).min(1.0)
    } else {
        0.0
    };
    let weights_source = weights_provenance(&sc, est.weights_bytes);
    Plan {
        kv_dtype: inputs.flags.kv_dtype,
        repo_ids: Vec::new(),
        workload_tokens: inputs
            .workload
            .prompt_tokens
            .saturating_add(inputs.workload.output_tokens),
        media_tokens: crate::sizing::mm::per_request(&sc).0,
        model_id,
        model_name,
        gpu_id: gpu.id.clone(),
        gpu_name: gpu.name.clone(),
        format,
        engine: inputs.flags.engine.id(),
        tensor_parallel_size: sc.tensor_parallel_size,
        pipeline_parallel_size: sc.pipeline_parallel_size,
        replicas,
        gpus_needed: rep.needed.map_or(0, |n| n.gpus),
        needed: rep.needed,
        verdict,
        fixes: rep.fixes,
        run,
        launch,
        layout_auto: auto,
        layout_problem: problem,
        weights_band: Band::rel(f(est.weights_bytes), WEIGHTS_REL_ERR),
        kv_pool_band: Band::abs(f(est.kv_pool_bytes), KV_POOL_REL_ERR * budget),
        max_context_band: {
            let b = Band::rel(f(est.max_model_len_fit), pool_rel);
            Band {
                high: b.high.min(f(base.model.max_position_embeddings)),
                ..b
            }
        },
        max_concurrency_band: Band::rel(est.max_concurrency, pool_rel),
        speed_validated: crate::serving::validation_of(&sc, gpu).is_some(),
        estimate: est,
        parameters: params.total(),
        active_parameters: params.active(),
        formats,
        warnings,
        catalog_twin: None,
        assumptions: arch.assumptions.clone(),
        provenance: files::provenance(&arch.provenance, &weights_source),
        weights_source,
    }
}

/// Every weight format side by side (the quantization-savings view): the fewest GPUs,
/// weights and speed of each, for the same workload.
///
/// # Errors
/// Unknown model or GPU.
pub fn all_formats(cat: &Catalog, inputs: &Inputs) -> Result<Vec<FormatRow>, PlanError> {
    let (model, _, group) = resolve_model(cat, &inputs.model)?;
    let gpu = resolve_gpu(cat, &inputs.gpu)?;
    let arch = model
        .arch()
        .map_err(|e| PlanError::BadModel(e.to_string()))?;
    let group = group.unwrap_or(128);
    let (files, native) = (catalog_files(model), model.native_format());
    let formats = [
        WeightFormat::Fp16,
        WeightFormat::Bf16,
        WeightFormat::Fp8,
        WeightFormat::Int8W8a8,
        WeightFormat::Int4Awq,
        WeightFormat::Int4Gptq,
        WeightFormat::Mxfp4,
        WeightFormat::Nvfp4,
    ];
    Ok(formats
        .into_iter()
        .map(|f| format_row(&arch, gpu, inputs, (f, group), (&files, native)))
        .collect())
}

fn format_row(
    arch: &ModelArch,
    gpu: &Gpu,
    inputs: &Inputs,
    (format, group): (WeightFormat, u64),
    files: (&ModelFiles, WeightFormat),
) -> FormatRow {
    let mut base = scenario(arch.clone(), inputs, format, group);
    files.0.apply(&mut base, files.1);
    let st = settle(&base, gpu, inputs);
    let fits = st.starts();
    let (fix, outcome) = if fits {
        (None, "fits".to_string())
    } else {
        let r = repair(arch, gpu, inputs, (format, group), &st, false, files);
        let fix = r.fixes.first().copied();
        (fix, parts::outcome(fix, &st))
    };
    let gpus = st.scenario.tensor_parallel_size * st.scenario.pipeline_parallel_size;
    // The whole model as this GPU's kernels hold it (MXFP4 padding included).
    let mut whole = base.clone();
    whole.tensor_parallel_size = 1;
    whole.pipeline_parallel_size = 1;
    whole.gpu_arch = st.scenario.gpu_arch;
    FormatRow {
        format,
        model_weights_bytes: crate::sizing::weights_per_gpu(&whole),
        tensor_parallel_size: st.scenario.tensor_parallel_size,
        pipeline_parallel_size: st.scenario.pipeline_parallel_size,
        gpus_per_replica: if fits { gpus } else { 0 },
        total_gpus: if fits { gpus * st.replicas } else { 0 },
        decode_tokens_per_s: fits
            .then(|| operating_point(&st.scenario, gpu, st.replicas).tokens_per_s_per_user),
        fix,
        outcome,
        caveat: format.caveat(),
        estimate: st.estimate,
    }
}

/// Whether two architectures have the same shapes (a fine-tune or a re-upload).
#[must_use]
pub fn same_shape(a: &ModelArch, b: &ModelArch) -> bool {
    (
        a.hidden,
        a.intermediate,
        a.layers,
        a.heads,
        a.kv_heads,
        a.head_dim,
        a.vocab,
        a.moe.map(|m| m.experts),
    ) == (
        b.hidden,
        b.intermediate,
        b.layers,
        b.heads,
        b.kv_heads,
        b.head_dim,
        b.vocab,
        b.moe.map(|m| m.experts),
    )
}
