//! `vramfit`: pre-flight GPU memory checks for LLM serving, a thin shell over `vramfit-core`.
//!
//! Exit codes: 0 success (and "fits" for `check`), 1 does not fit / rejected input file,
//! 2 usage errors (unknown model or GPU, bad flags).

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use vramfit_core::catalog::{Catalog, Gpu};
use vramfit_core::dtype::{KvDtype, WeightFormat};
use vramfit_core::layout::valid_layouts;
use vramfit_core::model::ModelArch;
use vramfit_core::plan::{self, plan_arch, Inputs, Plan};
use vramfit_core::safetensors::{self, Header, Report};
use vramfit_core::sizing::{Engine, Fit};
use vramfit_core::units::{fmt_bytes, fmt_count, fmt_num, fmt_params, fmt_usd, Units};

#[derive(Parser)]
#[command(name = "vramfit", version, about = "Will your LLM fit? GPU memory, layout, speed and cost for LLM inference, as vLLM accounts it.", long_about = None)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Per-GPU memory breakdown, verdict and fix for a model on a GPU.
    Plan(PlanArgs),
    /// Like `plan`, but exits 0 when it fits and 1 when it does not (for deployment scripts).
    Check(PlanArgs),
    /// Inverse questions: fewest GPUs, longest context, most concurrent users, cheapest GPU.
    Fit(FitArgs),
    /// Throughput for TP 1/2/4/8 and PP 1/2/4/8 (max load when lengths are given).
    Scale(ScaleArgs),
    /// List the catalog's models.
    Models(ListArgs),
    /// List the catalog's GPUs.
    Gpus(ListArgs),
    /// Read safetensors headers (file, directory or index) and report what they hold.
    Inspect(InspectArgs),
    /// Explain an out-of-memory error (PyTorch or vLLM) read from a file or stdin.
    Oom(OomArgs),
    /// Print the accuracy report (docs/ACCURACY.md) from the calibration set.
    Accuracy,
}

#[derive(Args, Clone)]
struct OomArgs {
    /// File with the error text; `-` or absent reads stdin.
    file: Option<PathBuf>,
    /// The model being run (catalog id or repo id), to check for fp32 weights.
    #[arg(long)]
    model: Option<String>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Clone)]
struct ListArgs {
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    /// Filter by substring (name, id, family, vendor).
    #[arg(long)]
    search: Option<String>,
}

#[derive(Args, Clone)]
struct InspectArgs {
    /// A .safetensors file, a model directory, or a model.safetensors.index.json.
    path: PathBuf,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Clone)]
struct PlanArgs {
    /// Catalog id, Hugging Face repo id, path to a config.json, or a model directory.
    model: String,
    /// Catalog GPU id, alias, or the name nvidia-smi prints.
    #[arg(long)]
    gpu: String,
    /// --tensor-parallel-size (default: fewest GPUs that fit).
    #[arg(long = "tensor-parallel-size", short = 't', visible_alias = "tp")]
    tensor_parallel_size: Option<u64>,
    /// --pipeline-parallel-size.
    #[arg(long = "pipeline-parallel-size", visible_alias = "pp")]
    pipeline_parallel_size: Option<u64>,
    /// --max-model-len (default: the model's max_position_embeddings).
    #[arg(long = "max-model-len")]
    max_model_len: Option<u64>,
    /// --gpu-memory-utilization (vLLM; the engine's fraction for others).
    #[arg(long = "gpu-memory-utilization")]
    gpu_memory_utilization: Option<f64>,
    /// --kv-cache-dtype: auto, bf16, fp16, fp8.
    #[arg(long = "kv-cache-dtype", default_value = "auto")]
    kv_cache_dtype: String,
    /// --quantization: fp8, awq, gptq, w8a8, mxfp4, nvfp4 …
    #[arg(long)]
    quantization: Option<String>,
    /// --dtype: auto, bfloat16, float16, float32.
    #[arg(long)]
    dtype: Option<String>,
    /// --max-num-seqs.
    #[arg(long = "max-num-seqs")]
    max_num_seqs: Option<u64>,
    /// --max-num-batched-tokens.
    #[arg(long = "max-num-batched-tokens")]
    max_num_batched_tokens: Option<u64>,
    /// --block-size.
    #[arg(long = "block-size")]
    block_size: Option<u64>,
    /// --enable-expert-parallel (MoE experts split by expert over the TP ranks).
    #[arg(long = "enable-expert-parallel")]
    enable_expert_parallel: bool,
    /// Target decode tokens/s per user (picks a wider layout if needed).
    #[arg(long = "target-tokens-per-s")]
    target_tokens_per_s: Option<f64>,
    /// Engine: vllm (= vllm-0.19), vllm-0.16, sglang, trtllm, transformers.
    #[arg(long, default_value = "vllm")]
    engine: String,
    /// Concurrent users.
    #[arg(long, default_value_t = 1)]
    users: u64,
    /// Prompt tokens per request.
    #[arg(long = "prompt-tokens", default_value_t = 1024)]
    prompt_tokens: u64,
    /// Output tokens per request.
    #[arg(long = "output-tokens", default_value_t = 256)]
    output_tokens: u64,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    /// Show GB (10^9) instead of GiB (2^30).
    #[arg(long)]
    decimal: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum Find {
    Gpus,
    Context,
    Concurrency,
    Cheapest,
}

#[derive(Args, Clone)]
struct FitArgs {
    #[command(flatten)]
    plan: PlanArgs,
    /// What to find.
    #[arg(long, value_enum)]
    find: Find,
}

#[derive(Args, Clone)]
struct ScaleArgs {
    #[command(flatten)]
    plan: PlanArgs,
    /// Input length for max-load throughput.
    #[arg(long = "input-len")]
    input_len: Option<u64>,
    /// Output length for max-load throughput.
    #[arg(long = "output-len")]
    output_len: Option<u64>,
    /// Use PCIe instead of the GPU's own interconnect.
    #[arg(long)]
    pcie: bool,
}

/// A usage error (exit 2) or a rejected input (exit 1).
enum Failure {
    Usage(String),
    Rejected(String),
}

type Res<T> = Result<T, Failure>;

fn usage<E: std::fmt::Display>(e: E) -> Failure {
    Failure::Usage(e.to_string())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let cat = match Catalog::load() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("vramfit: catalog error: {e}");
            return ExitCode::from(2);
        }
    };
    let r = match cli.cmd {
        Cmd::Plan(a) => cmd_plan(&cat, &a, false),
        Cmd::Check(a) => cmd_plan(&cat, &a, true),
        Cmd::Fit(a) => cmd_fit(&cat, &a),
        Cmd::Scale(a) => cmd_scale(&cat, &a),
        Cmd::Models(a) => cmd_models(&cat, &a),
        Cmd::Gpus(a) => cmd_gpus(&cat, &a),
        Cmd::Inspect(a) => cmd_inspect(&a),
        Cmd::Oom(a) => cmd_oom(&cat, &a),
        Cmd::Accuracy => {
            print!("{}", vramfit_core::accuracy::markdown_report());
            Ok(ExitCode::SUCCESS)
        }
    };
    match r {
        Ok(c) => c,
        Err(Failure::Usage(m)) => {
            eprintln!("vramfit: {m}");
            ExitCode::from(2)
        }
        Err(Failure::Rejected(m)) => {
            eprintln!("vramfit: {m}");
            ExitCode::from(1)
        }
    }
}

fn inputs_of(a: &PlanArgs) -> Res<Inputs> {
    let engine = Engine::parse(&a.engine).ok_or_else(|| {
        usage(format!(
            "unknown engine `{}` (vllm, vllm-0.16, sglang, trtllm, transformers)",
            a.engine
        ))
    })?;
    let kv = KvDtype::parse(&a.kv_cache_dtype)
        .ok_or_else(|| usage(format!("unknown --kv-cache-dtype `{}`", a.kv_cache_dtype)))?;
    let mut format = None;
    if let Some(d) = &a.dtype {
        if d != "auto" {
            format = Some(
                WeightFormat::parse(d).ok_or_else(|| usage(format!("unknown --dtype `{d}`")))?,
            );
        }
    }
    if let Some(q) = &a.quantization {
        format = Some(
            WeightFormat::parse(q).ok_or_else(|| usage(format!("unknown --quantization `{q}`")))?,
        );
    }
    if let Some(u) = a.gpu_memory_utilization {
        if !(u > 0.0 && u <= 1.0) {
            return Err(usage(format!(
                "--gpu-memory-utilization {u} must be in (0, 1]"
            )));
        }
    }
    for (flag, v) in [
        ("--tensor-parallel-size", a.tensor_parallel_size),
        ("--pipeline-parallel-size", a.pipeline_parallel_size),
        ("--max-model-len", a.max_model_len),
        ("--block-size", a.block_size),
        ("--max-num-seqs", a.max_num_seqs),
    ] {
        if v == Some(0) {
            return Err(usage(format!("{flag} must be at least 1")));
        }
    }
    Ok(Inputs {
        model: a.model.clone(),
        gpu: a.gpu.clone(),
        format,
        kv_dtype: kv,
        engine,
        gpu_memory_utilization: a.gpu_memory_utilization,
        max_model_len: a.max_model_len,
        max_num_seqs: a.max_num_seqs,
        max_num_batched_tokens: a.max_num_batched_tokens,
        block_size: a.block_size,
        tensor_parallel_size: a.tensor_parallel_size,
        pipeline_parallel_size: a.pipeline_parallel_size,
        users: a.users.max(1),
        prompt_tokens: a.prompt_tokens,
        output_tokens: a.output_tokens,
        target_tokens_per_s: a.target_tokens_per_s.filter(|t| t.is_finite() && *t > 0.0),
        expert_parallel: a.enable_expert_parallel,
    })
}

/// Reads a model from a path: a config.json, or a directory with config.json (and
/// safetensors shards, read header-only, for the exact weight bytes).
fn arch_from_path(p: &Path) -> Res<(ModelArch, String, Option<Report>)> {
    let (cfg_path, dir) = if p.is_dir() {
        (p.join("config.json"), Some(p))
    } else {
        (p.to_path_buf(), None)
    };
    let text = std::fs::read_to_string(&cfg_path)
        .map_err(|e| Failure::Rejected(format!("{}: {e}", cfg_path.display())))?;
    let arch = ModelArch::from_config_str(&text)
        .map_err(|e| Failure::Rejected(format!("{}: {e}", cfg_path.display())))?;
    let report = match dir {
        Some(d) => {
            let headers = read_headers(d)?;
            (!headers.is_empty()).then(|| {
                Report::from_headers(&headers.into_iter().map(|(_, h)| h).collect::<Vec<_>>())
            })
        }
        None => None,
    };
    let name = p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok((arch, name, report))
}

fn resolve(cat: &Catalog, a: &PlanArgs) -> Res<(Plan, Inputs)> {
    let inputs = inputs_of(a)?;
    let path = Path::new(&a.model);
    if path.exists() {
        let gpu = plan::resolve_gpu(cat, &a.gpu).map_err(usage)?;
        let (arch, name, report) = arch_from_path(path)?;
        // vLLM's `--dtype auto` loads fp32 checkpoints at 16 bits.
        let native = WeightFormat::Bf16;
        let mut p = plan_arch(arch, name.clone(), name, native, None, None, gpu, &inputs);
        if let Some(r) = report {
            p.warnings.extend(r.warnings.iter().cloned());
        }
        return Ok((p, inputs));
    }
    let p = plan::plan(cat, &inputs).map_err(usage)?;
    Ok((p, inputs))
}

#[derive(Serialize)]
struct PlanJson<'a> {
    fits: bool,
    verdict: String,
    fit: Fit,
    model: &'a str,
    gpu: &'a str,
    format: &'a str,
    engine: &'a str,
    tensor_parallel_size: u64,
    pipeline_parallel_size: u64,
    replicas: u64,
    gpus_needed: u64,
    per_gpu: PerGpuJson,
    decode_tokens_per_s_per_user: f64,
    decode_tokens_per_s_total: f64,
    ttft_s: f64,
    parameters: u64,
    active_parameters: u64,
    cost: &'a vramfit_core::plan::Cost,
    uncertainty: UncertaintyJson,
    formats: Vec<FormatJson>,
    warnings: &'a [String],
}

#[derive(Serialize)]
struct PerGpuJson {
    gpu_total_bytes: u64,
    budget_bytes: u64,
    weights_bytes: u64,
    activation_bytes: u64,
    non_torch_bytes: u64,
    cuda_graph_bytes: u64,
    cuda_context_bytes: u64,
    kv_pool_bytes: u64,
    kv_bytes_per_token: u64,
    block_size: u64,
    kv_blocks: u64,
    kv_tokens: u64,
    max_concurrency: f64,
    max_concurrency_workload: f64,
    max_model_len: u64,
    max_model_len_fit: u64,
    nvidia_smi_bytes: u64,
}

#[derive(Serialize)]
struct UncertaintyJson {
    weights_bytes_low: u64,
    weights_bytes_high: u64,
    kv_pool_bytes_low: u64,
    kv_pool_bytes_high: u64,
    decode_tokens_per_s_low: f64,
    decode_tokens_per_s_high: f64,
}

#[derive(Serialize)]
struct FormatJson {
    format: String,
    model_weights_bytes: u64,
    weights_bytes: u64,
    tensor_parallel_size: u64,
    pipeline_parallel_size: u64,
    gpus_per_replica: u64,
    total_gpus: u64,
    max_model_len_fit: u64,
    decode_tokens_per_s: f64,
}

// OK because: band values are byte counts below 2^53.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn b(x: f64) -> u64 {
    x.max(0.0) as u64
}

fn plan_json(p: &Plan) -> String {
    let e = &p.estimate;
    let j = PlanJson {
        fits: matches!(e.fit, Fit::Fits | Fit::FitsWithQueueing),
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
    };
    serde_json::to_string_pretty(&j).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

fn plan_text(p: &Plan, u: Units) -> String {
    let e = &p.estimate;
    let mut s = String::new();
    s.push_str(&format!(
        "{} on {} — {} weights, {} ({} params)\n",
        p.model_id,
        p.gpu_name,
        p.format,
        p.engine,
        fmt_params(p.parameters)
    ));
    s.push_str(&format!(
        "layout: TP {} × PP {} × {} replica(s) = {} GPU(s){}\n\n",
        p.tensor_parallel_size,
        p.pipeline_parallel_size,
        p.replicas,
        p.gpus_needed,
        if p.layout_auto {
            " (fewest that fit)"
        } else {
            ""
        }
    ));
    s.push_str("per GPU:\n");
    for (k, v) in [
        ("memory (CUDA total)", e.gpu_total_bytes),
        ("engine budget", e.budget_bytes),
        ("weights", e.weights_bytes),
        ("activation peak", e.activation_bytes),
        ("non-torch (NCCL etc.)", e.non_torch_bytes),
        ("KV cache pool", e.kv_pool_bytes),
        ("CUDA graphs (outside budget)", e.cuda_graph_bytes),
        ("CUDA context (outside budget)", e.cuda_context_bytes),
        ("nvidia-smi will show", e.nvidia_smi_bytes),
    ] {
        s.push_str(&format!("  {k:<30} {:>12}\n", fmt_bytes(v, u)));
    }
    s.push_str(&format!(
        "  {:<30} {:>12}\n  {:<30} {:>12}\n  {:<30} {:>12}\n  {:<30} {:>12}\n  {:<30} {:>12}\n\n",
        "KV bytes per token",
        fmt_count(e.kv_bytes_per_token),
        "KV blocks",
        fmt_count(e.kv_blocks),
        "KV tokens",
        fmt_count(e.kv_tokens),
        format!("max concurrency @ {}", e.max_model_len),
        fmt_num(e.max_concurrency, 2),
        "longest context (1 request)",
        fmt_count(e.max_model_len_fit),
    ));
    s.push_str(&format!(
        "decode: {} tok/s per user, {} tok/s total; TTFT {} ms\n",
        fmt_num(p.speed.decode_tokens_per_s_per_user, 1),
        fmt_num(p.total_decode_tokens_per_s, 0),
        fmt_num(p.speed.ttft_s * 1000.0, 0)
    ));
    if let Some(c) = p.cost.purchase_usd {
        s.push_str(&format!("cost: {} to buy", fmt_usd(c)));
        if let Some(h) = p.cost.cloud_usd_per_hour {
            s.push_str(&format!(", {}/h in the cloud", fmt_usd(h)));
        }
        if let Some(m) = p.cost.usd_per_million_tokens {
            s.push_str(&format!(", {} per million output tokens", fmt_usd(m)));
        }
        s.push('\n');
    }
    s.push_str(&format!("\nverdict: {}\n", e.verdict));
    for w in &p.warnings {
        s.push_str(&format!("warning: {w}\n"));
    }
    s
}

fn units(a: &PlanArgs) -> Units {
    if a.decimal {
        Units::Decimal
    } else {
        Units::Binary
    }
}

fn cmd_plan(cat: &Catalog, a: &PlanArgs, check: bool) -> Res<ExitCode> {
    let (p, _) = resolve(cat, a)?;
    if a.json {
        println!("{}", plan_json(&p));
    } else if check {
        println!("{}", p.estimate.verdict);
    } else {
        print!("{}", plan_text(&p, units(a)));
    }
    let fits = matches!(p.estimate.fit, Fit::Fits | Fit::FitsWithQueueing);
    Ok(if check && !fits {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

#[derive(Serialize)]
struct FitJson {
    find: &'static str,
    answer: Option<u64>,
    tensor_parallel_size: u64,
    pipeline_parallel_size: u64,
    detail: String,
}

fn cmd_fit(cat: &Catalog, a: &FitArgs) -> Res<ExitCode> {
    let (p, inputs) = resolve(cat, &a.plan)?;
    let e = &p.estimate;
    let (name, answer, detail) = match a.find {
        Find::Gpus => (
            "gpus",
            (p.gpus_needed > 0 && matches!(e.fit, Fit::Fits | Fit::FitsWithQueueing))
                .then_some(p.gpus_needed),
            format!(
                "TP {} × PP {} × {} replica(s) for {} users",
                p.tensor_parallel_size, p.pipeline_parallel_size, p.replicas, inputs.users
            ),
        ),
        Find::Context => {
            let n = inputs.users.max(1);
            let ans = p.estimate.longest_len_for_users(n);
            (
                "context",
                Some(ans),
                format!(
                    "longest context each of {n} concurrent users can have at TP {} × PP {}",
                    p.tensor_parallel_size, p.pipeline_parallel_size
                ),
            )
        }
        Find::Concurrency => {
            // OK because: finite, non-negative.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let n = e.max_concurrency_workload.floor().max(0.0) as u64;
            (
                "concurrency",
                Some(n),
                format!(
                    "requests of {} tokens (prompt + output) at once per replica",
                    p.workload_tokens
                ),
            )
        }
        Find::Cheapest => {
            let rows = vramfit_core::layout::cheapest(cat, &inputs);
            if a.plan.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&rows).unwrap_or_default()
                );
                return Ok(ExitCode::SUCCESS);
            }
            println!(
                "{:<32} {:>5} {:>8} {:>14} {:>10} {:>12}",
                "GPU", "GPUs", "layout", "purchase", "$/hour", "$/M tokens"
            );
            for r in rows.iter().take(20) {
                println!(
                    "{:<32} {:>5} {:>8} {:>14} {:>10} {:>12}",
                    r.gpu_id,
                    r.total_gpus,
                    format!("TP{}PP{}", r.tensor_parallel_size, r.pipeline_parallel_size),
                    r.purchase_usd.map_or("–".into(), fmt_usd),
                    r.cloud_usd_per_hour.map_or("–".into(), fmt_usd),
                    r.usd_per_million_tokens.map_or("–".into(), fmt_usd)
                );
            }
            return Ok(ExitCode::SUCCESS);
        }
    };
    if a.plan.json {
        let j = FitJson {
            find: name,
            answer,
            tensor_parallel_size: p.tensor_parallel_size,
            pipeline_parallel_size: p.pipeline_parallel_size,
            detail,
        };
        println!("{}", serde_json::to_string_pretty(&j).unwrap_or_default());
    } else {
        match answer {
            Some(x) => println!("{name}: {} ({detail})", fmt_count(x)),
            None => println!("{name}: none fits ({detail})"),
        }
    }
    Ok(if answer.is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn cmd_scale(cat: &Catalog, a: &ScaleArgs) -> Res<ExitCode> {
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
    #[derive(Serialize)]
    struct ScaleJson<'a> {
        model: &'a str,
        gpu: &'a str,
        interconnect: String,
        max_load: bool,
        points: Vec<PointJson>,
    }
    #[derive(Serialize)]
    struct PointJson {
        tensor_parallel_size: u64,
        pipeline_parallel_size: u64,
        tokens_per_s_total: f64,
        tokens_per_s_per_gpu: f64,
        tokens_per_s_per_user: f64,
        batch: u64,
        comm_fraction: f64,
        fits: bool,
        valid_layout: bool,
    }
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
        let j = ScaleJson {
            model: &model.id,
            gpu: &sc.gpu_id,
            interconnect: link,
            max_load: lengths.is_some(),
            points,
        };
        println!("{}", serde_json::to_string_pretty(&j).unwrap_or_default());
    } else {
        println!(
            "{} on {} over {} ({}):",
            model.id,
            sc.gpu_id,
            link,
            if lengths.is_some() {
                "max load"
            } else {
                "at the given users"
            }
        );
        println!(
            "{:>4} {:>4} {:>14} {:>14} {:>12} {:>7} {:>8}",
            "TP", "PP", "tok/s total", "tok/s per GPU", "tok/s/user", "batch", "comm %"
        );
        for p in &points {
            println!(
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
    }
    Ok(ExitCode::SUCCESS)
}

fn matches(hay: &[&str], q: Option<&String>) -> bool {
    q.is_none_or(|q| {
        let q = q.to_ascii_lowercase();
        hay.iter().any(|h| h.to_ascii_lowercase().contains(&q))
    })
}

fn cmd_models(cat: &Catalog, a: &ListArgs) -> Res<ExitCode> {
    #[derive(Serialize)]
    struct ModelJson<'a> {
        id: &'a str,
        name: &'a str,
        family: &'a str,
        vendor: &'a str,
        hf_repo_ids: &'a [String],
        quantized_repos: &'a [vramfit_core::catalog::QuantizedRepo],
        stored_dtype: &'a str,
        num_hidden_layers: u64,
        hidden_size: u64,
        intermediate_size: u64,
        num_attention_heads: u64,
        num_key_value_heads: u64,
        head_dim: u64,
        vocab_size: u64,
        tie_word_embeddings: bool,
        max_position_embeddings: u64,
        num_experts: Option<u64>,
        num_experts_per_tok: Option<u64>,
        kv_lora_rank: Option<u64>,
        parameter_count: u64,
        active_parameter_count: u64,
        context_native: u64,
        config: &'a serde_json::Value,
        config_verbatim: bool,
        source: &'a str,
    }
    let mut out = Vec::new();
    for m in &cat.models {
        if !matches(&[&m.id, &m.name, &m.family, &m.vendor], a.search.as_ref()) {
            continue;
        }
        let arch = m.arch().map_err(usage)?;
        out.push((m, arch));
    }
    if a.json {
        let v: Vec<ModelJson> = out
            .iter()
            .map(|(m, x)| ModelJson {
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
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        println!(
            "{:<34} {:<22} {:>10} {:>10} {:>9}  hf repo",
            "id", "family", "params", "active", "context"
        );
        for (m, _) in &out {
            println!(
                "{:<34} {:<22} {:>10} {:>10} {:>9}  {}",
                m.id,
                m.family,
                fmt_params(m.parameters_total),
                fmt_params(m.parameters_active),
                m.context_native,
                m.hf_repo_ids.first().map_or("", String::as_str)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_gpus(cat: &Catalog, a: &ListArgs) -> Res<ExitCode> {
    #[derive(Serialize)]
    struct GpuJson<'a> {
        id: &'a str,
        name: &'a str,
        aliases: &'a [String],
        vendor: &'a str,
        segment: &'a str,
        memory_marketed_gb: f64,
        memory_usable_bytes: u64,
        memory_engine_bytes: u64,
        memory_bandwidth_gb_per_s: f64,
        dense_tflops: &'a vramfit_core::catalog::DenseTflops,
        interconnect: &'a vramfit_core::catalog::Interconnect,
        tdp_w: Option<f64>,
        price: &'a vramfit_core::catalog::Price,
        source: &'a str,
    }
    let list: Vec<&Gpu> = cat
        .gpus
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
            matches(&hay, a.search.as_ref())
        })
        .collect();
    if a.json {
        let v: Vec<GpuJson> = list
            .iter()
            .map(|g| GpuJson {
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
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        println!(
            "{:<30} {:>8} {:>10} {:>10} {:>10} {:>10}",
            "id", "memory", "BW GB/s", "bf16 TF", "fp8 TF", "$/hour"
        );
        for g in list {
            println!(
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
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads the first 8 bytes and then exactly the header of a file: never the tensor data.
fn read_header(path: &Path) -> Res<Header> {
    use std::io::{Read, Seek, SeekFrom};
    let rej = |m: String| Failure::Rejected(format!("{}: {m}", path.display()));
    let mut f = std::fs::File::open(path).map_err(|e| rej(e.to_string()))?;
    let size = f.metadata().map_err(|e| rej(e.to_string()))?.len();
    let mut first = [0u8; 8];
    let n = f.read(&mut first).map_err(|e| rej(e.to_string()))?;
    if size == 0 {
        return safetensors::parse_header(&[], Some(0)).map_err(|e| rej(e.to_string()));
    }
    let len = safetensors::header_len(&first[..n]).map_err(|e| rej(e.to_string()))?;
    if len.saturating_add(8) > size {
        return Err(rej(format!(
            "header length {len} goes beyond the file ({size} bytes)"
        )));
    }
    f.seek(SeekFrom::Start(8)).map_err(|e| rej(e.to_string()))?;
    let mut buf = vec![0u8; usize::try_from(len).map_err(|_| rej("header too large".into()))?];
    f.read_exact(&mut buf).map_err(|e| rej(e.to_string()))?;
    safetensors::parse_header(&buf, Some(size)).map_err(|e| rej(e.to_string()))
}

fn read_headers(dir: &Path) -> Res<Vec<(String, Header)>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Failure::Rejected(format!("{}: {e}", dir.display())))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            Ok((
                p.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                read_header(&p)?,
            ))
        })
        .collect()
}

fn cmd_inspect(a: &InspectArgs) -> Res<ExitCode> {
    let p = &a.path;
    let (headers, index) = if p.is_dir() {
        let idx = p.join("model.safetensors.index.json");
        (read_headers(p)?, idx.exists().then_some(idx))
    } else if p
        .file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".index.json"))
    {
        let dir = p.parent().unwrap_or(Path::new("."));
        (read_headers(dir)?, Some(p.clone()))
    } else {
        (
            vec![(
                p.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                read_header(p)?,
            )],
            None,
        )
    };
    if headers.is_empty() {
        return Err(Failure::Rejected(format!(
            "{}: no .safetensors files found",
            p.display()
        )));
    }
    let report = Report::from_headers(&headers.iter().map(|(_, h)| h.clone()).collect::<Vec<_>>());
    let mut index_problems = Vec::new();
    if let Some(idx) = index {
        let text = std::fs::read(&idx)
            .map_err(|e| Failure::Rejected(format!("{}: {e}", idx.display())))?;
        let shards: Vec<(String, &Header)> = headers.iter().map(|(n, h)| (n.clone(), h)).collect();
        let check = safetensors::check_against_index(&shards, &text)
            .map_err(|e| Failure::Rejected(format!("{}: {e}", idx.display())))?;
        index_problems = check.problems.iter().map(ToString::to_string).collect();
    }
    if a.json {
        let mut v = serde_json::to_value(&report).map_err(|e| Failure::Rejected(e.to_string()))?;
        if let serde_json::Value::Object(m) = &mut v {
            m.insert("shards".into(), serde_json::Value::from(headers.len()));
            m.insert(
                "index_problems".into(),
                serde_json::Value::from(index_problems.clone()),
            );
        }
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        println!(
            "{} shard(s), {} tensors, {} parameters ({} logical)",
            headers.len(),
            fmt_count(report.tensor_count),
            fmt_count(report.parameter_count),
            fmt_count(report.logical_parameter_count)
        );
        for (k, v) in &report.bytes_per_dtype {
            println!("  {k:<10} {:>16} bytes", fmt_count(*v));
        }
        println!("quantization: {:?}", report.quantization);
        for w in &report.warnings {
            println!("warning: {w}");
        }
        for w in &index_problems {
            println!("index: {w}");
        }
    }
    Ok(if index_problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn cmd_oom(cat: &Catalog, a: &OomArgs) -> Res<ExitCode> {
    use std::io::Read;
    let text = match &a.file {
        Some(p) if p.as_os_str() != "-" => std::fs::read_to_string(p)
            .map_err(|e| Failure::Rejected(format!("{}: {e}", p.display())))?,
        _ => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| Failure::Rejected(format!("stdin: {e}")))?;
            s
        }
    };
    let params = match &a.model {
        Some(m) => Some(
            plan::resolve_model(cat, m)
                .map_err(usage)?
                .0
                .parameters_total,
        ),
        None => None,
    };
    let report = vramfit_core::oom::parse(&text).map_err(|e| Failure::Rejected(e.to_string()))?;
    let findings = vramfit_core::oom::diagnose_with(
        &report,
        &vramfit_core::oom::Hints {
            model_parameters: params,
        },
    );
    if a.json {
        let v = serde_json::json!({ "report": report, "findings": findings });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        for f in &findings {
            println!("{}\n  {}", f.headline, f.detail);
            for x in &f.fixes {
                println!("  - {x}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
