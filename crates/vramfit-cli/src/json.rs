//! The `--json` output shapes. Field names are a contract (tests/cli.rs checks them): rename
//! nothing here.

use serde::Serialize;
use vramfit_core::catalog::{Gpu, Model};
use vramfit_core::model::ModelArch;
use vramfit_core::plan::Plan;
use vramfit_core::sizing::Fit;

/// `plan --json` and `check --json`.
#[derive(Serialize)]
pub struct PlanJson<'a> {
    pub fits: bool,
    pub verdict: String,
    pub fit: Fit,
    pub model: &'a str,
    pub gpu: &'a str,
    pub format: &'a str,
    pub engine: &'a str,
    pub tensor_parallel_size: u64,
    pub pipeline_parallel_size: u64,
    pub replicas: u64,
    pub gpus_needed: u64,
    pub per_gpu: PerGpuJson,
    pub decode_tokens_per_s_per_user: f64,
    pub decode_tokens_per_s_total: f64,
    pub ttft_s: f64,
    /// What bounds the answer (`vramfit_core::plan::limit_of`).
    pub limited_by: &'a str,
    /// Inter-token latency of one replica at its share of the workload, ms.
    pub itl_ms: f64,
    /// Time to first token, ms; `null` when the queue grows without bound.
    pub ttft_ms: Option<f64>,
    /// End-to-end latency of one request, ms; `null` as `ttft_ms`.
    pub e2e_ms: Option<f64>,
    /// Requests per second all replicas complete.
    pub requests_per_s: f64,
    pub parameters: u64,
    pub active_parameters: u64,
    pub cost: &'a vramfit_core::plan::Cost,
    pub uncertainty: UncertaintyJson,
    pub formats: Vec<FormatJson>,
    pub warnings: &'a [String],
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
    pub decode_tokens_per_s_low: f64,
    pub decode_tokens_per_s_high: f64,
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
    pub decode_tokens_per_s: f64,
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
    PlanJson {
        fits: fits(e.fit),
        verdict: e.verdict.to_string(),
        fit: e.fit,
        model: &p.model_id,
        gpu: &p.gpu_id,
        format: p.format.id(),
        engine: &p.engine,
        tensor_parallel_size: p.tensor_parallel_size,
        pipeline_parallel_size: p.pipeline_parallel_size,
        replicas: p.replicas,
        gpus_needed: p.gpus_needed,
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
        decode_tokens_per_s_per_user: p.speed.decode_tokens_per_s_per_user,
        decode_tokens_per_s_total: p.total_decode_tokens_per_s,
        ttft_s: p.speed.ttft_s,
        limited_by: p.limited_by,
        itl_ms: p.serving.itl_ms,
        ttft_ms: p.serving.ttft_ms,
        e2e_ms: p.serving.e2e_ms,
        requests_per_s: p.serving.requests_per_s * vramfit_core::units::real(p.replicas),
        parameters: p.parameters,
        active_parameters: p.active_parameters,
        cost: &p.cost,
        uncertainty: UncertaintyJson {
            weights_bytes_low: b(p.weights_band.low),
            weights_bytes_high: b(p.weights_band.high),
            kv_pool_bytes_low: b(p.kv_pool_band.low),
            kv_pool_bytes_high: b(p.kv_pool_band.high),
            decode_tokens_per_s_low: p.decode_band.low,
            decode_tokens_per_s_high: p.decode_band.high,
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
            })
            .collect(),
        warnings: &p.warnings,
    }
}

/// `fit --json` (all `--find` but `cheapest`, which prints the core's rows).
#[derive(Serialize)]
pub struct FitJson {
    pub find: &'static str,
    pub answer: Option<u64>,
    pub tensor_parallel_size: u64,
    pub pipeline_parallel_size: u64,
    pub detail: String,
    /// What bounds the answer (`vramfit_core::plan::limit_of`; `--find gpus` and the others).
    pub limited_by: &'static str,
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
