//! The core's scenario ([`Inputs`]) from the plan flags.

use crate::args::PlanArgs;
use crate::out::{usage, Res};
use vramfit_core::inputs::{key, Field};
use vramfit_core::plan::Inputs;

/// The plan flags as [`Inputs`]: every value goes through the core's input table
/// (`Inputs::set`), so a value out of range gets the same message as in a link or the page.
pub fn inputs_of(a: &PlanArgs) -> Res<Inputs> {
    if a.command.is_some() {
        return Err(usage("`--command` is read by `vramfit check` only"));
    }
    let mut i = Inputs::default();
    // The CLI sizes at the model's own maximum context unless told otherwise.
    i.flags.max_model_len = None;
    let num = |x: Option<u64>| x.map(|x| x.to_string());
    let float = |x: Option<f64>| x.map(|x| x.to_string());
    let given: [(Field, Option<String>); 19] = [
        (Field::Model, Some(a.model.clone())),
        (Field::Gpu, Some(a.gpu.clone())),
        (Field::Format, a.dtype.clone()),
        (Field::Format, a.quantization.clone()),
        (Field::KvDtype, Some(a.kv_cache_dtype.clone())),
        (Field::Engine, Some(a.engine.clone())),
        (Field::GpuMemoryUtilization, float(a.gpu_memory_utilization)),
        // vLLM's `auto` is its `-1` (the length it picks); the link's `auto` is the model's.
        (
            Field::MaxModelLen,
            a.max_model_len.as_deref().map(|v| {
                let v = v.trim();
                if v == "auto" {
                    "-1".to_string()
                } else {
                    vramfit_core::inputs::human_int(v)
                        .map_or_else(|| v.to_string(), |n| n.to_string())
                }
            }),
        ),
        (Field::MaxNumSeqs, num(a.max_num_seqs)),
        (Field::MaxNumBatchedTokens, num(a.max_num_batched_tokens)),
        (Field::BlockSize, num(a.block_size)),
        (Field::TensorParallelSize, num(a.tensor_parallel_size)),
        (Field::PipelineParallelSize, num(a.pipeline_parallel_size)),
        (Field::Users, Some(a.users.to_string())),
        (Field::PromptTokens, Some(a.prompt_tokens.to_string())),
        (Field::OutputTokens, Some(a.output_tokens.to_string())),
        (Field::MaxTtftMs, float(a.max_ttft_ms)),
        (Field::RequestRate, float(a.request_rate)),
        (Field::PrefixCacheHitRate, float(a.prefix_cache_hit_rate)),
    ];
    for (field, value) in given {
        // `--dtype auto` is the model's own dtype: no format (the Format row's `auto`).
        let Some(value) = value else { continue };
        i.set(field, &value).map_err(|e| {
            let flag = match field {
                Field::Format if a.quantization.as_deref() == Some(value.as_str()) => {
                    "--quantization"
                }
                Field::Format => "--dtype",
                _ => key(field).flag,
            };
            if e.contains(flag) {
                usage(e)
            } else {
                usage(format!("{flag}: {e}"))
            }
        })?;
    }
    if let Some(t) = a.target_tokens_per_s.filter(|t| t.is_finite() && *t > 0.0) {
        i.set(Field::TargetTokensPerS, &t.to_string())
            .map_err(usage)?;
    }
    i.flags.expert_parallel = a.enable_expert_parallel;
    i.flags.allow_long_max_model_len = a.allow_long_max_model_len;
    features_of(&a.features, &mut i)?;
    Ok(i)
}

/// The feature flags onto `i`: the JSON flags first (read onto rows by the core), then the
/// single-value flags, which win where both are given.
fn features_of(a: &crate::args::FeatureArgs, i: &mut Inputs) -> Res<()> {
    use vramfit_core::inputs::features::{apply_vllm_json, Compound};
    let set = set_row;
    for (c, json) in [
        (Compound::LimitMmPerPrompt, &a.limit_mm_per_prompt),
        (Compound::MmProcessorKwargs, &a.mm_processor_kwargs),
        (Compound::SpeculativeConfig, &a.speculative_config),
    ] {
        let Some(json) = json else { continue };
        let applied = apply_vllm_json(c, json).map_err(usage)?;
        for (field, value) in applied.rows {
            set(i, field, &value, c.flag())?;
        }
    }
    let on = |b: bool| b.then(|| "1".to_string());
    if a.language_model_only {
        for f in [Field::MmImages, Field::MmVideos, Field::MmAudios] {
            set(i, f, "0", "--language-model-only")?;
        }
    }
    let modules = (!a.lora_target_modules.is_empty()).then(|| a.lora_target_modules.join(","));
    let given: [(Field, Option<String>); 22] = [
        (Field::MmEncoderTpMode, a.mm_encoder_tp_mode.clone()),
        (Field::SkipMmProfiling, on(a.skip_mm_profiling)),
        (Field::LoraTargetModules, modules),
        (Field::MmImages, a.images_per_prompt.clone()),
        (Field::MmVideos, a.videos_per_prompt.clone()),
        (Field::MmAudios, a.audios_per_prompt.clone()),
        (Field::MmFrames, a.video_frames.clone()),
        (Field::MmMaxPixels, a.max_pixels.clone()),
        (Field::EnableLora, on(a.enable_lora)),
        (Field::MaxLoras, a.max_loras.clone()),
        (Field::MaxLoraRank, a.max_lora_rank.clone()),
        (Field::MaxCpuLoras, a.max_cpu_loras.clone()),
        (Field::FullyShardedLoras, on(a.fully_sharded_loras)),
        (Field::SpecMethod, a.speculative_method.clone()),
        (Field::SpecTokens, a.num_speculative_tokens.clone()),
        (Field::SpecModel, a.speculative_model.clone()),
        (Field::SpecAcceptance, a.acceptance_rate.clone()),
        (Field::EnforceEager, on(a.enforce_eager)),
        (Field::CpuOffloadGb, a.cpu_offload_gb.clone()),
        (Field::SwapSpace, a.swap_space.clone()),
        (Field::NoPrefixCaching, on(a.no_enable_prefix_caching)),
        (Field::KvCacheMemoryBytes, a.kv_cache_memory_bytes.clone()),
    ];
    for (field, value) in given {
        let Some(value) = value else { continue };
        set(i, field, &value, key(field).flag)?;
    }
    Ok(())
}

/// The `budget` flags as [`Inputs`]: the plan flags, then the buyer's through the same table.
pub fn budget_inputs_of(a: &crate::args::BudgetArgs) -> Res<Inputs> {
    let mut i = inputs_of(&a.plan)?;
    let float = |x: Option<f64>| x.map(|x| x.to_string());
    let given: [(Field, Option<String>); 12] = [
        (Field::Years, float(a.years)),
        (Field::KwhPrice, float(a.kwh_price)),
        (Field::Pue, float(a.pue)),
        (Field::Utilization, float(a.utilization)),
        (Field::Resale, float(a.resale)),
        (Field::ApiInputPrice, float(a.api_input_price)),
        (Field::ApiOutputPrice, float(a.api_output_price)),
        (Field::MaxPowerKw, float(a.max_power_kw)),
        (Field::MaxRackKw, float(a.max_rack_kw)),
        (Field::MaxBudgetUsd, float(a.max_budget_usd)),
        (Field::OnPrem, a.on_prem.then(|| "1".to_string())),
        (Field::Vendor, a.vendor.clone()),
    ];
    for (field, value) in given {
        let Some(value) = value else { continue };
        set_row(&mut i, field, &value, key(field).flag)?;
    }
    Ok(i)
}

/// Sets one row through the core's table; the message names the flag as it was written.
fn set_row(i: &mut Inputs, field: Field, value: &str, flag: &str) -> Res<()> {
    i.set(field, value).map_err(|e| {
        if e.contains(flag) {
            usage(e)
        } else {
            usage(format!("{flag}: {e}"))
        }
    })
}
