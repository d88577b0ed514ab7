//! The core's scenario ([`Inputs`]) from the plan flags.

use crate::args::PlanArgs;
use crate::out::{usage, Res};
use vramfit_core::dtype::{KvDtype, WeightFormat};
use vramfit_core::plan::Inputs;
use vramfit_core::sizing::Engine;

pub fn inputs_of(a: &PlanArgs) -> Res<Inputs> {
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
