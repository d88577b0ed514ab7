//! `plan` (per-GPU breakdown) and `check` (the verdict, exit 1 when it does not fit).

use crate::args::PlanArgs;
use crate::files::LocalModel;
use crate::inputs::inputs_of;
use crate::json::{fits, plan_json};
use crate::out::{usage, Output, Res};
use std::path::Path;
use vramfit_core::catalog::Catalog;
use vramfit_core::dtype::WeightFormat;
use vramfit_core::plan::{self, plan_arch, Inputs, Plan};
use vramfit_core::units::{fmt_bytes, fmt_count, fmt_num, fmt_params, fmt_usd, Units};

/// Reads a model given as a path (the CLI passes [`crate::files::read_local_model`]).
pub type Loader<'a> = &'a dyn Fn(&Path) -> Res<LocalModel>;

/// The plan for the flags: a catalog model, or (when `model` names an existing path) the model
/// `load` reads from it.
pub fn resolve(cat: &Catalog, a: &PlanArgs, load: Loader) -> Res<(Plan, Inputs)> {
    let inputs = inputs_of(a)?;
    let path = Path::new(&a.model);
    if path.exists() {
        let gpu = plan::resolve_gpu(cat, &a.gpu).map_err(usage)?;
        let (arch, name, report) = load(path)?;
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

pub fn plan_text(p: &Plan, u: Units) -> String {
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

pub fn units(a: &PlanArgs) -> Units {
    if a.decimal {
        Units::Decimal
    } else {
        Units::Binary
    }
}

/// What `plan` (`check` = false) or `check` prints for a plan, and its exit status.
pub fn render(p: &Plan, a: &PlanArgs, check: bool) -> Output {
    let stdout = if a.json {
        format!(
            "{}\n",
            serde_json::to_string_pretty(&plan_json(p))
                .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
        )
    } else if check {
        format!("{}\n", p.estimate.verdict)
    } else {
        plan_text(p, units(a))
    };
    Output::status(stdout, !check || fits(p.estimate.fit))
}

/// `plan` / `check`.
pub fn run(cat: &Catalog, a: &PlanArgs, check: bool, load: Loader) -> Res<Output> {
    let (p, _) = resolve(cat, a, load)?;
    Ok(render(&p, a, check))
}
