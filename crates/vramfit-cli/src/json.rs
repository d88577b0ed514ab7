//! The `--json` output shapes. Field names are a contract (tests/cli.rs checks them): rename
//! nothing here.

use serde::Serialize;
use vramfit_core::catalog::{Gpu, Model};
use vramfit_core::model::ModelArch;
use vramfit_core::plan::Plan;
use vramfit_core::sizing::Fit;

/// `plan --json` and `check --json`. A plan that does not start has no speed and no cost
/// fields (they are left out, not zero), a `fix` and `fixes` instead.
#[derive(Serialize)]
pub struct PlanJson<'a> {
    pub fits: bool,
    /// The engine's verdict on memory, the problem in numbers ("fits: KV pool …", "will not
    /// start: …"), as before.
    pub verdict: String,
    /// The whole answer: the layout checked and how it was chosen, the verdict, and the
    /// checked fixes ("fits at TP 2 × PP 1 (chosen: fewest GPUs): …"); what `check` prints.
    pub plan_verdict: &'a str,
    pub fit: Fit,
    /// What the engine refuses (`null` when it does not refuse).
    pub refusal: Option<vramfit_core::sizing::Refusal>,
    pub model: &'a str,
    pub gpu: &'a str,
    /// When `--gpu` fits several catalog entries: which one it was read as and the others
    /// (`catalog::names`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_notice: Option<String>,
    pub format: &'a str,
    pub engine: &'a str,
    /// Tokens each request's images, videos and audio add to its prompt (explicit
    /// multimodal limits; 0 otherwise).
    pub media_tokens: u64,
    /// The tokens of one request as the KV figures and the speed count them: prompt, media
    /// and output, cut to the context length where the engine refuses longer requests.
    pub counted_tokens: u64,
    pub tensor_parallel_size: u64,
    pub pipeline_parallel_size: u64,
    /// Whether vramfit chose the layout (no `--tensor-parallel-size` / `--pipeline-parallel-size`).
    pub layout_auto: bool,
    pub replicas: u64,
    /// GPUs of the fewest layout that starts (`needed`); `null` when none does.
    pub gpus_needed: Option<u64>,
    /// The fewest layout that starts: the plan's own when it starts.
    pub needed: Option<vramfit_core::plan::Needed>,
    /// The first checked fix, under these same field names; `null` when the plan starts.
    pub fix: Option<vramfit_core::plan::Fix>,
    /// Every checked fix (each starts when applied).
    pub fixes: &'a [vramfit_core::plan::Fix],
    pub per_gpu: PerGpuJson,
    /// Tokens/s one request sees while it decodes (1 / its inter-token latency: the other
    /// requests' prompts slow it, its own is in `ttft_s`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_tokens_per_s_per_user: Option<f64>,
    /// Output tokens/s of every replica together over time, prompt steps included (for one
    /// user, below the per-user figure by the share of time spent on its prompts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_tokens_per_s_total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_s: Option<f64>,
    /// What bounds the answer (`vramfit_core::plan::limit_of`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limited_by: Option<&'a str>,
    /// Inter-token latency of one replica at its share of the workload, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub itl_ms: Option<f64>,
    /// Time to first token, ms; `null` when the queue grows without bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<Option<f64>>,
    /// End-to-end latency of one request, ms; `null` as `ttft_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub e2e_ms: Option<Option<f64>>,
    /// Requests per second all replicas complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests_per_s: Option<f64>,
    pub parameters: u64,
    pub active_parameters: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<&'a vramfit_core::plan::Cost>,
    pub uncertainty: UncertaintyJson,
    pub formats: Vec<FormatJson>,
    /// Launch commands by engine (`vllm`, `sglang`, `trtllm`, `transformers`, `llama_cpp`),
    /// for the plan or, when it does not start, the plan with `fix` applied; `null` when
    /// nothing starts.
    pub commands: Option<std::collections::BTreeMap<&'static str, String>>,
    /// What the commands' reader must know (a fix applied, a placeholder checkpoint).
    pub command_notes: Vec<String>,
    /// The checkpoint the commands load.
    pub checkpoint: Option<&'a vramfit_core::plan::Checkpoint>,
    pub warnings: &'a [String],
    /// Values the config did not give and sizing assumed: `{field, value, why}`.
    pub assumptions: &'a [vramfit_core::model::Assumption],
    /// Where each derived number came from: `{quantity, source, detail}`.
    pub provenance: &'a [vramfit_core::model::Provenance],
    /// Where `per_gpu.weights_bytes` came from: `{quantity: "weights", source: "headers" |
    /// "index" | "config", detail}`.
    pub weights_source: &'a vramfit_core::plan::Provenance,
    /// Per GPU, what the deployment features add or move (`mm_reserved_bytes`,
    /// `encoder_cache_bytes`, `encoder_weights_bytes`, `lora_bytes`, `draft_weights_bytes`,
    /// `draft_kv_bytes`, `cpu_offload_bytes`, `host_bytes`), each 0 when the feature is off.
    #[serde(flatten)]
    pub features: vramfit_core::sizing::FeatureBytes,
    /// With `--max-model-len -1`: the length vLLM picks (the longest one request fits);
    /// `null` otherwise.
    pub vllm_auto_max_model_len: Option<u64>,
    /// With speculative decoding: the requests in flight per replica from which it no
    /// longer pays; `null` without it, when it always pays, or when the plan does not start.
    pub spec_break_even_concurrency: Option<u64>,
}

#[derive(Serialize)]
pub struct PerGpuJson {
    pub gpu_total_bytes: u64,
    pub budget_bytes: u64,
    pub weights_bytes: u64,
    pub activation_bytes: u64,
    pub non_torch_bytes: u64,
    pub cuda_graph_bytes: u64,
    pub cuda_context_bytes: u64,
    pub kv_pool_bytes: u64,
    pub kv_bytes_per_token: u64,
    pub block_size: u64,
    pub kv_blocks: u64,
    pub kv_tokens: u64,
    pub max_concurrency: f64,
    pub max_concurrency_workload: f64,
    pub max_model_len: u64,
    pub max_model_len_fit: u64,
    pub nvidia_smi_bytes: u64,
}

#[derive(Serialize)]
pub struct UncertaintyJson {
    pub weights_bytes_low: u64,
    pub weights_bytes_high: u64,
    pub kv_pool_bytes_low: u64,
    pub kv_pool_bytes_high: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_tokens_per_s_low: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_tokens_per_s_high: Option<f64>,
    /// Whether published measurements validate the engine's speed; `false`: "not
    /// validated", and the decode band collapses to the value.
    pub speed_validated: bool,
}

#[derive(Serialize)]
pub struct FormatJson {
    pub format: String,
    pub model_weights_bytes: u64,
    pub weights_bytes: u64,
    pub tensor_parallel_size: u64,
    pub pipeline_parallel_size: u64,
    pub gpus_per_replica: u64,
    pub total_gpus: u64,
    pub max_model_len_fit: u64,
    /// Left out when the format does not start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decode_tokens_per_s: Option<f64>,
    /// "fits", "fits at ≤ 7,488 tokens", "needs TP 2", …
    pub outcome: String,
    /// The first checked fix of this format; `null` when it starts.
    pub fix: Option<vramfit_core::plan::Fix>,
}

// OK because: band values are byte counts below 2^53.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn b(x: f64) -> u64 {
    x.max(0.0) as u64
}

/// Whether a verdict counts as fitting (`check` exits 0, `fits` is true).
pub fn fits(f: Fit) -> bool {
    f.starts()
}

pub fn plan_json(p: &Plan) -> PlanJson<'_> {
    let e = &p.estimate;
    let run = p.run.as_ref();
    PlanJson {
        fits: fits(e.fit),
        verdict: e.verdict.to_string(),
        plan_verdict: &p.verdict,
        fit: e.fit,
        refusal: e.refusal,
        model: &p.model_id,
        gpu: &p.gpu_id,
        gpu_notice: None,
        format: p.format.id(),
        engine: &p.engine,
        media_tokens: p.media_tokens,
        counted_tokens: p.counted_tokens(),
        tensor_parallel_size: p.tensor_parallel_size,
        pipeline_parallel_size: p.pipeline_parallel_size,
        layout_auto: p.layout_auto,
        replicas: p.replicas,
        gpus_needed: p.needed.map(|n| n.gpus),
        needed: p.needed,
        fix: p.fixes.first().copied(),
        fixes: &p.fixes,
        per_gpu: PerGpuJson {
            gpu_total_bytes: e.gpu_total_bytes,
            budget_bytes: e.budget_bytes,
            weights_bytes: e.weights_bytes,
            activation_bytes: e.activation_bytes,
            non_torch_bytes: e.non_torch_bytes,
            cuda_graph_bytes: e.cuda_graph_bytes,
            cuda_context_bytes: e.cuda_context_bytes,
            kv_pool_bytes: e.kv_pool_bytes,
            kv_bytes_per_token: e.kv_bytes_per_token,
            block_size: e.block_size,
            kv_blocks: e.kv_blocks,
            kv_tokens: e.kv_tokens,
            max_concurrency: e.max_concurrency,
            max_concurrency_workload: e.max_concurrency_workload,
            max_model_len: e.max_model_len,
            max_model_len_fit: e.max_model_len_fit,
            nvidia_smi_bytes: e.nvidia_smi_bytes,
        },
        decode_tokens_per_s_per_user: run.map(|r| r.speed.decode_tokens_per_s_per_user),
        decode_tokens_per_s_total: run.map(|r| r.total_decode_tokens_per_s),
        ttft_s: run.map(|r| r.speed.ttft_s),
        limited_by: run.map(|r| r.limited_by),
        itl_ms: run.map(|r| r.serving.itl_ms),
        ttft_ms: run.map(|r| r.serving.ttft_ms),
        e2e_ms: run.map(|r| r.serving.e2e_ms),
        requests_per_s: run
            .map(|r| r.serving.requests_per_s * vramfit_core::units::real(p.replicas)),
        parameters: p.parameters,
        active_parameters: p.active_parameters,
        cost: run.map(|r| &r.cost),
        uncertainty: UncertaintyJson {
            weights_bytes_low: b(p.weights_band.low),
            weights_bytes_high: b(p.weights_band.high),
            kv_pool_bytes_low: b(p.kv_pool_band.low),
            kv_pool_bytes_high: b(p.kv_pool_band.high),
            decode_tokens_per_s_low: run.map(|r| r.decode_band.low),
            decode_tokens_per_s_high: run.map(|r| r.decode_band.high),
            speed_validated: p.speed_validated,
        },
        formats: p
            .formats
            .iter()
            .map(|r| FormatJson {
                format: r.format.id().to_string(),
                model_weights_bytes: r.model_weights_bytes,
                weights_bytes: r.estimate.weights_bytes,
                tensor_parallel_size: r.tensor_parallel_size,
                pipeline_parallel_size: r.pipeline_parallel_size,
                gpus_per_replica: r.gpus_per_replica,
                total_gpus: r.total_gpus,
                max_model_len_fit: r.estimate.max_model_len_fit,
                decode_tokens_per_s: r.decode_tokens_per_s,
                outcome: r.outcome.clone(),
                fix: r.fix,
            })
            .collect(),
        commands: p.launch.as_ref().map(|_| {
            vramfit_core::commands::all(p)
                .into_iter()
                .map(|c| (c.id, c.text))
                .collect()
        }),
        command_notes: vramfit_core::commands::notes(p),
        checkpoint: p.launch.as_ref().map(|l| &l.checkpoint),
        warnings: &p.warnings,
        assumptions: &p.assumptions,
        provenance: &p.provenance,
        weights_source: &p.weights_source,
        features: e.features,
        vllm_auto_max_model_len: e.vllm_auto_max_model_len,
        spec_break_even_concurrency: p.run.as_ref().and_then(|r| r.spec_break_even_concurrency),
    }
}

/// `fit --json` (all `--find` but `cheapest`, which prints the core's rows).
#[derive(Serialize)]
pub struct FitJson<'a> {
    pub find: &'static str,
    pub answer: Option<u64>,
    pub tensor_parallel_size: u64,
    pub pipeline_parallel_size: u64,
    pub detail: String,
    /// What bounds the answer (`vramfit_core::plan::limit_of`; `--find gpus` and the others).
    pub limited_by: &'static str,
    /// The plan's warnings (a workload longer than the context, targets not met, what is not
    /// validated): the answer holds under them. Absent when there are none.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub warnings: &'a [String],
    /// How an ambiguous `--gpu` was read (absent when the name is exact).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_notice: Option<String>,
}

/// `scale --json`.
#[derive(Serialize)]
pub struct ScaleJson<'a> {
    pub model: &'a str,
    pub gpu: &'a str,
    pub interconnect: String,
    pub max_load: bool,
    /// `"max_load"`, `"concurrency"` or `"request_rate"`.
    pub load: &'static str,
    /// The concurrency or the rate of `load` (`null` at max load).
    pub load_value: Option<f64>,
    pub points: Vec<PointJson>,
    /// How an ambiguous `--gpu` was read (absent when the name is exact).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_notice: Option<String>,
}

/// One layout of `scale` (the text table prints these too).
#[derive(Serialize)]
pub struct PointJson {
    pub tensor_parallel_size: u64,
    pub pipeline_parallel_size: u64,
    pub tokens_per_s_total: f64,
    pub tokens_per_s_per_gpu: f64,
    pub tokens_per_s_per_user: f64,
    pub batch: u64,
    pub comm_fraction: f64,
    pub fits: bool,
    pub valid_layout: bool,
    /// Time to first token, ms; `null` when the queue grows or it does not fit.
    pub ttft_ms: Option<f64>,
    /// Inter-token latency, ms (0 when it does not fit).
    pub itl_ms: f64,
    /// What bounds the point (`vramfit_core::serving::Limit::id`).
    pub limited_by: &'static str,
    /// Held-out band of `tokens_per_s_total` (the engine's leave-one-GPU-out p10–p90);
    /// `null` when the engine's speed is not validated.
    pub tokens_per_s_low: Option<f64>,
    /// See `tokens_per_s_low`.
    pub tokens_per_s_high: Option<f64>,
}

/// One entry of `models --json`.
#[derive(Serialize)]
pub struct ModelJson<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub family: &'a str,
    pub vendor: &'a str,
    pub hf_repo_ids: &'a [String],
    pub quantized_repos: &'a [vramfit_core::catalog::QuantizedRepo],
    pub stored_dtype: &'a str,
    pub num_hidden_layers: u64,
    pub hidden_size: u64,
    pub intermediate_size: u64,
    pub num_attention_heads: u64,
    pub num_key_value_heads: u64,
    pub head_dim: u64,
    pub vocab_size: u64,
    pub tie_word_embeddings: bool,
    pub max_position_embeddings: u64,
    pub num_experts: Option<u64>,
    pub num_experts_per_tok: Option<u64>,
    pub kv_lora_rank: Option<u64>,
    pub parameter_count: u64,
    pub active_parameter_count: u64,
    pub context_native: u64,
    pub config: &'a serde_json::Value,
    pub config_verbatim: bool,
    pub source: &'a str,
}

pub fn model_json<'a>(m: &'a Model, x: &ModelArch) -> ModelJson<'a> {
    ModelJson {
        id: &m.id,
        name: &m.name,
        family: &m.family,
        vendor: &m.vendor,
        hf_repo_ids: &m.hf_repo_ids,
        quantized_repos: &m.quantized_repos,
        stored_dtype: &m.stored_dtype,
        num_hidden_layers: x.layers,
        hidden_size: x.hidden,
        intermediate_size: x.intermediate,
        num_attention_heads: x.heads,
        num_key_value_heads: x.kv_heads,
        head_dim: x.head_dim,
        vocab_size: x.vocab,
        tie_word_embeddings: x.tied_embeddings,
        max_position_embeddings: x.max_position_embeddings,
        num_experts: x.moe.map(|e| e.experts),
        num_experts_per_tok: x.moe.map(|e| e.experts_per_token),
        kv_lora_rank: x.mla.map(|l| l.kv_lora_rank),
        parameter_count: m.parameters_total,
        active_parameter_count: m.parameters_active,
        context_native: m.context_native,
        config: &m.config,
        config_verbatim: m.config_verbatim,
        source: &m.source,
    }
}

/// One entry of `gpus --json`.
#[derive(Serialize)]
pub struct GpuJson<'a> {
    pub id: &'a str,
    pub name: &'a str,
    pub aliases: &'a [String],
    pub vendor: &'a str,
    pub segment: &'a str,
    pub memory_marketed_gb: f64,
    pub memory_usable_bytes: u64,
    pub memory_engine_bytes: u64,
    pub memory_bandwidth_gb_per_s: f64,
    pub dense_tflops: &'a vramfit_core::catalog::DenseTflops,
    pub interconnect: &'a vramfit_core::catalog::Interconnect,
    /// GPUs in one node, the tensor-parallel limit: the most a catalog platform's server
    /// holds, or the link's domain (`interconnect.gpus_per_node`) where larger.
    pub node_gpus: u64,
    pub tdp_w: Option<f64>,
    pub price: &'a vramfit_core::catalog::Price,
    pub source: &'a str,
}

pub fn gpu_json(g: &Gpu) -> GpuJson<'_> {
    GpuJson {
        id: &g.id,
        name: &g.name,
        aliases: &g.aliases,
        vendor: &g.vendor,
        segment: &g.segment,
        memory_marketed_gb: g.memory_marketed_gb,
        memory_usable_bytes: g.smi_total_bytes(),
        memory_engine_bytes: g.usable_bytes(),
        memory_bandwidth_gb_per_s: g.memory_bandwidth_gb_per_s,
        dense_tflops: &g.dense_tflops,
        interconnect: &g.interconnect,
        node_gpus: g.gpus_per_node(),
        tdp_w: g.tdp_w,
        price: &g.price,
        source: &g.source,
    }
}

/// `inspect --json`: the core's report with the shard count and the index's problems added.
///
/// # Errors
/// The report does not serialize (never, for the core's types).
pub fn inspect_json(
    report: &vramfit_core::safetensors::Report,
    shards: usize,
    index_problems: &[String],
) -> Result<serde_json::Value, serde_json::Error> {
    let mut v = serde_json::to_value(report)?;
    if let serde_json::Value::Object(m) = &mut v {
        m.insert("shards".into(), serde_json::Value::from(shards));
        m.insert(
            "index_problems".into(),
            serde_json::Value::from(index_problems.to_vec()),
        );
    }
    Ok(v)
}

/// `oom --json`: the report and the findings, and the model check (`model`: null when no
/// model is known) with its headline numbers at the top (`weights_bytes`, `weights_fit`).
pub fn oom_json(
    report: &vramfit_core::oom::OomReport,
    findings: &[vramfit_core::oom::Finding],
    check: Option<&vramfit_core::oom::ModelCheck>,
) -> serde_json::Value {
    serde_json::json!({
        "report": report,
        "findings": findings,
        "model": check,
        "weights_bytes": check.map(|c| c.weights_bytes),
        "weights_fit": check.and_then(|c| c.weights_fit),
    })
}

/// `check --command … --json`: the plan of the command (the fields of [`PlanJson`]) plus
/// what the command said and its contradictions.
#[derive(Serialize)]
pub struct CommandJson<'a> {
    #[serde(flatten)]
    pub plan: PlanJson<'a>,
    /// Whether the command starts: the plan starts and no check says it will not.
    pub starts: bool,
    /// The model as the command names it (a repo id); `model` is its catalog id.
    pub repo: &'a str,
    /// The contradictions, most serious first.
    pub command_checks: &'a [vramfit_core::command::Check],
    /// Every flag not modelled, with `affects_memory` false for those known to change no
    /// memory.
    pub unmodelled_flags: &'a [vramfit_core::command::Unmodelled],
    /// Environment variables the command sets (`value` null: passed from the host).
    pub env: &'a [vramfit_core::command::EnvVar],
    /// Data-parallel ranks the command starts (`--data-parallel-size`, `--dp-size`; 1 when
    /// it sets none); the plan sizes one rank.
    pub data_parallel: u64,
}

pub fn command_json(c: &vramfit_core::command::CommandCheck) -> CommandJson<'_> {
    let mut plan = plan_json(&c.plan);
    plan.verdict.clone_from(&c.verdict);
    plan.plan_verdict = &c.verdict;
    if !c.starts() {
        // A command that will not start has no speed and no cost, whatever its memory.
        plan.fits = false;
        plan.decode_tokens_per_s_per_user = None;
        plan.decode_tokens_per_s_total = None;
        plan.ttft_s = None;
        plan.limited_by = None;
        plan.itl_ms = None;
        plan.ttft_ms = None;
        plan.e2e_ms = None;
        plan.requests_per_s = None;
        plan.cost = None;
        plan.uncertainty.decode_tokens_per_s_low = None;
        plan.uncertainty.decode_tokens_per_s_high = None;
    }
    CommandJson {
        plan,
        starts: c.starts(),
        repo: &c.command.model,
        command_checks: &c.checks,
        unmodelled_flags: &c.command.unmodelled,
        env: &c.command.env,
        data_parallel: c.command.data_parallel,
    }
}
