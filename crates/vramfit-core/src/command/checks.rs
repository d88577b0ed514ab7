//! The contradictions of a planned command (ids and sources in the parent module's docs).

use super::{format_of, truthy, Check, Command, Severity};
use crate::catalog::{Gpu, ModelMatch};
use crate::dtype::WeightFormat;
use crate::engine::Engine;
use crate::inputs::{key, Field};
use crate::layout::{ep_problem, layout_problem, TP_CANDIDATES};
use crate::model::ModelArch;
use crate::plan::Plan;
use crate::sizing::Fit;
use crate::units::{fmt_count, fmt_gib, fmt_gib_signed};

/// The kind of quantization a format is, as engines name the method (`None`: 16/32-bit).
pub(super) fn family(f: WeightFormat) -> Option<&'static str> {
    match f {
        WeightFormat::Int4Awq => Some("AWQ"),
        WeightFormat::Int4Gptq => Some("GPTQ"),
        WeightFormat::Fp8 | WeightFormat::Fp8Block | WeightFormat::Fp8Ffn => Some("FP8"),
        WeightFormat::Int8W8a8 => Some("INT8 W8A8"),
        WeightFormat::Mxfp4 | WeightFormat::Mxfp4Experts => Some("MXFP4"),
        WeightFormat::Nvfp4 => Some("NVFP4"),
        WeightFormat::Bf16 | WeightFormat::Fp16 | WeightFormat::Fp32 => None,
    }
}

/// Methods that quantize an unquantized checkpoint while loading it.
const ONLINE: [&str; 4] = ["fp8", "ptpc_fp8", "bitsandbytes", "experts_int8"];
/// Methods that read a quantization config the checkpoint must carry.
const NEEDS_CONFIG: [&str; 5] = [
    "compressed-tensors",
    "modelopt",
    "modelopt_fp4",
    "gguf",
    "fbgemm_fp8",
];

/// The flag that set a field, as written with its value (`--tp 3`).
fn written(c: &Command, field: Field) -> Option<String> {
    let spellings = spellings(c.engine, field);
    c.flags
        .iter()
        .rev()
        .find(|f| {
            let name = if matches!(c.engine, Engine::Vllm { .. }) && f.flag.starts_with("--") {
                format!("--{}", f.flag[2..].replace('_', "-"))
            } else {
                f.flag.clone()
            };
            spellings.contains(&name.as_str())
        })
        .map(|f| match &f.value {
            Some(v) => format!("{} {v}", f.flag),
            None => f.flag.clone(),
        })
}

/// The engine's spellings of a row.
fn spellings(e: Engine, field: Field) -> &'static [&'static str] {
    match (e, field) {
        (Engine::Sglang, Field::TensorParallelSize) => {
            &["--tp-size", "--tp", "--tensor-parallel-size"]
        }
        (Engine::Sglang, Field::PipelineParallelSize) => &["--pp-size", "--pipeline-parallel-size"],
        (Engine::Sglang, Field::MaxModelLen) => &["--context-length"],
        (Engine::Sglang, Field::GpuMemoryUtilization) => &["--mem-fraction-static"],
        (Engine::TrtLlm, Field::TensorParallelSize) => &["--tp_size"],
        (Engine::TrtLlm, Field::PipelineParallelSize) => &["--pp_size"],
        (Engine::TrtLlm, Field::MaxModelLen) => &["--max_seq_len"],
        (Engine::TrtLlm, Field::GpuMemoryUtilization) => &["--kv_cache_free_gpu_memory_fraction"],
        (_, Field::TensorParallelSize) => &["--tensor-parallel-size", "-tp"],
        (_, Field::PipelineParallelSize) => &["--pipeline-parallel-size", "-pp"],
        (_, Field::MaxModelLen) => &["--max-model-len"],
        (_, Field::GpuMemoryUtilization) => &["--gpu-memory-utilization"],
        (_, Field::Format) => &["--quantization", "-q"],
        (_, Field::MaxLoraRank) => &["--max-lora-rank"],
        (_, Field::MaxCpuLoras) => &["--max-cpu-loras"],
        (_, Field::SpecMethod) => &["--speculative-config"],
        (_, Field::SwapSpace) => &["--swap-space"],
        _ => &[],
    }
}

/// Every check, most serious first.
pub(super) fn run(
    c: &Command,
    m: &ModelMatch<'_>,
    checkpoint: WeightFormat,
    gpu: &Gpu,
    arch: &ModelArch,
    p: &Plan,
) -> Vec<Check> {
    let mut out = Vec::new();
    version(c, &mut out);
    quantization(c, m, checkpoint, &mut out);
    layout(c, gpu, arch, p, &mut out);
    length(c, arch, &mut out);
    pool(c, p, &mut out);
    visible(c, p, &mut out);
    data_parallel(c, arch, p, &mut out);
    features(c, arch, &mut out);
    // A flag another check already names (an unknown `--quantization`) is not listed again.
    let named: Vec<&String> = out.iter().flat_map(|c| &c.flags).collect();
    let memory: Vec<String> = c
        .unmodelled
        .iter()
        .filter(|u| u.affects_memory)
        .map(|u| match &u.value {
            Some(v) => format!("{} {v}", u.flag),
            None => u.flag.clone(),
        })
        .filter(|f| !named.contains(&f))
        .collect();
    if !memory.is_empty() {
        out.push(Check {
            id: "flags_not_modelled",
            message: format!(
                "not modelled: {}; the estimate leaves out the memory {}",
                memory.join(", "),
                if memory.len() == 1 {
                    "it takes or saves"
                } else {
                    "they take or save"
                }
            ),
            flags: memory,
            severity: Severity::Note,
        });
    }
    let rank = |s: Severity| match s {
        Severity::WillNotStart => 0,
        Severity::Warning => 1,
        Severity::Note => 2,
    };
    crate::order::sort_by_key(&mut out, |c| rank(c.severity));
    out
}

/// The LoRA ranks vLLM takes (`vllm/config/lora.py`, `MaxLoRARanks`).
pub const LORA_RANKS: [u64; 9] = [1, 8, 16, 32, 64, 128, 256, 320, 512];

/// What vLLM refuses among the deployment features (`vllm/config/lora.py`
/// `_validate_lora_config`, `vllm/config/speculative.py`, `vllm/model_executor/models/
/// registry.py`'s removed architectures), and the flags it ignores.
fn features(c: &Command, arch: &ModelArch, out: &mut Vec<Check>) {
    if !matches!(c.engine, Engine::Vllm { .. }) {
        return;
    }
    let x = &c.inputs.flags.features;
    let flag = |f: Field, fallback: &str| written(c, f).unwrap_or_else(|| fallback.to_string());
    let mut refuse = |id: &'static str, flags: Vec<String>, message: String| {
        out.push(Check {
            id,
            flags,
            message,
            severity: Severity::WillNotStart,
        });
    };
    if x.lora.enabled && !LORA_RANKS.contains(&x.lora.max_rank) {
        refuse(
            "lora_rank_not_supported",
            vec![flag(Field::MaxLoraRank, "--max-lora-rank")],
            format!(
                "vLLM takes `--max-lora-rank` {} only; {} is refused at start-up",
                LORA_RANKS.map(|r| r.to_string()).join(", "),
                x.lora.max_rank
            ),
        );
    }
    // Flags newer than the version the command runs (a `vllm/vllm-openai:v0.N` image).
    let minor = match c.inputs.flags.engine {
        Engine::Vllm { minor } => minor,
        _ => Engine::VLLM_MODELLED.end().to_owned(),
    };
    for (on, since, what) in [
        (c.inputs.flags.fit_max_model_len, 14, "`--max-model-len -1`"),
        (
            x.lora.target_modules.is_some(),
            19,
            "`--lora-target-modules`",
        ),
    ] {
        if on && minor < since {
            refuse(
                "flag_newer_than_engine",
                Vec::new(),
                format!("{what} came with vLLM 0.{since}; vLLM 0.{minor} refuses it"),
            );
        }
    }
    if x.lora.enabled && c.inputs.flags.expert_parallel && arch.moe.is_some() {
        refuse(
            "lora_with_expert_parallel",
            vec!["--enable-lora".into(), "--enable-expert-parallel".into()],
            "vLLM's fused-MoE LoRA does not take expert parallelism (`vllm/lora/layers/fused_moe.py` asserts it): drop one of them".into(),
        );
    }
    if x.lora.enabled && x.lora.max_cpu_loras.is_some_and(|m| m < x.lora.max_loras) {
        refuse(
            "cpu_loras_below_max_loras",
            vec![flag(Field::MaxCpuLoras, "--max-cpu-loras")],
            format!(
                "`--max-cpu-loras` ({}) must be at least `--max-loras` ({}): vLLM refuses it",
                x.lora.max_cpu_loras.unwrap_or(0),
                x.lora.max_loras
            ),
        );
    }
    use crate::inputs::SpecMethod;
    match x.spec.method {
        Some(m @ (SpecMethod::Eagle | SpecMethod::Eagle3 | SpecMethod::DraftModel))
            if c.inputs.spec_model.trim().is_empty() =>
        {
            refuse(
                "speculative_model_missing",
                vec![flag(Field::SpecMethod, "--speculative-config")],
                format!(
                    "`--speculative-config` method `{}` needs the draft's `model` (a head or a smaller model's repo)",
                    m.id()
                ),
            );
        }
        Some(SpecMethod::Mtp) if arch.mtp_layers == 0 => refuse(
            "mtp_without_layers",
            vec![flag(Field::SpecMethod, "--speculative-config")],
            "`--speculative-config` method `mtp` needs multi-token-prediction layers; this model's config has none (`num_nextn_predict_layers`)".into(),
        ),
        _ => {}
    }
    if arch
        .vision
        .is_some_and(|v| v.family == crate::model::VisionFamily::Mllama)
    {
        refuse(
            "architecture_removed",
            Vec::new(),
            "vLLM removed `MllamaForConditionalGeneration` (Llama 3.2 Vision) after v0.10.2: it will not load on the modelled versions".into(),
        );
    }
    if x.swap_space_gib.is_some() {
        out.push(Check {
            id: "swap_space_ignored",
            flags: vec![flag(Field::SwapSpace, "--swap-space")],
            message: "vLLM V1 allocates no swap blocks (preempted requests are recomputed) and v0.18 removed `--swap-space`: it changes nothing".into(),
            severity: Severity::Note,
        });
    }
}

/// A `vllm/vllm-openai:vX.Y` image of a version whose accounting is not modelled
/// ([`Engine::VLLM_MODELLED`]): planned as the default version, said out loud.
fn version(c: &Command, out: &mut Vec<Check>) {
    let Some((image, tag)) = c
        .image
        .as_deref()
        .and_then(|i| Some((i, i.rsplit_once(':')?.1)))
    else {
        return;
    };
    if let (Engine::Vllm { .. }, Some(Engine::Vllm { minor }), None) = (
        c.engine,
        Engine::parse_any(&format!("vllm-{tag}")),
        Engine::parse(&format!("vllm-{tag}")),
    ) {
        out.push(Check {
            id: "engine_version_not_modelled",
            flags: vec![image.to_string()],
            message: format!(
                "vLLM 0.{minor} is not modelled (vllm-0.{} to vllm-0.{} are): planned as vLLM {}, whose memory accounting may differ from this image's",
                Engine::VLLM_MODELLED.start(),
                Engine::VLLM_MODELLED.end(),
                c.engine.id().trim_start_matches("vllm-")
            ),
            severity: Severity::Warning,
        });
    }
}

/// vLLM's `--quantization` methods: `QuantizationMethods` in
/// `vllm/model_executor/layers/quantization/__init__.py`, the union of the stored snapshots
/// (0034007, spring 2025; one between, which adds `rtn` and `cpu_gptq`; 05d9095, the newest):
/// a name one release dropped is not called unknown. vLLM refuses any other name at start:
/// argparse's "invalid choice" where the flag lists the methods, else "Unknown quantization
/// method: … Must be one of […]" (`vllm/config/model.py` `_verify_quantization`). `None` and
/// an empty value are no quantization (`vllm/engine/arg_utils.py` `optional_type`).
const VLLM_METHODS: [&str; 37] = [
    "aqlm",
    "auto-round",
    "awq",
    "awq_marlin",
    "bitblas",
    "bitsandbytes",
    "compressed-tensors",
    "cpu_awq",
    "cpu_gptq",
    "deepgemm_fp8",
    "deepspeedfp",
    "experts_int8",
    "fbgemm_fp8",
    "fp8",
    "fp_quant",
    "gguf",
    "gptq",
    "gptq_bitblas",
    "gptq_marlin",
    "gptq_marlin_24",
    "hqq",
    "inc",
    "ipex",
    "marlin",
    "modelopt",
    "modelopt_fp4",
    "moe_wna16",
    "mxfp4",
    "mxfp8",
    "neuron_quant",
    "petit_nvfp4",
    "ptpc_fp8",
    "qqq",
    "quark",
    "rtn",
    "torchao",
    "tpu_int8",
];

/// SGLang's `--quantization` choices (`QUANTIZATION_CHOICES`, `python/sglang/srt/
/// server_args.py`, an argparse `choices` list: any other name stops with "invalid
/// choice"), the newest stored list with `qoq` (an older release's) and `blockwise_int8`
/// (its `BASE_QUANTIZATION_METHODS`).
const SGLANG_METHODS: [&str; 34] = [
    "auto-round",
    "auto-round-int8",
    "awq",
    "awq_marlin",
    "bitsandbytes",
    "blockwise_int8",
    "compressed-tensors",
    "fp8",
    "gguf",
    "gptq",
    "gptq_marlin",
    "humming",
    "marlin",
    "mlx_q4",
    "mlx_q8",
    "modelopt",
    "modelopt_fp4",
    "modelopt_fp8",
    "modelopt_mixed",
    "modelslim",
    "moe_wna16",
    "mxfp4",
    "mxfp8",
    "mxfp_w4a8",
    "nvfp4_online",
    "petit_nvfp4",
    "qoq",
    "quark",
    "quark_int4fp8_moe",
    "quark_mxfp4",
    "unquant",
    "w4afp8",
    "w8a8_fp8",
    "w8a8_int8",
];

/// A `--quantization` value the engine has no method of: it does not start.
fn unknown_method(c: &Command, method: &str, flag: &str) -> Option<Check> {
    // The value as written: the engines compare it as it is (vLLM's `Literal` and SGLang's
    // argparse `choices` are case-sensitive; vramfit's own reading is not).
    let method = flag.split_once(' ').map_or(method, |(_, v)| v);
    let (known, refusal): (&[&str], &str) = match c.engine {
        // `--quantization None` (or empty) is vLLM's "no quantization" (`optional_type`).
        Engine::Vllm { .. } if matches!(method, "None" | "") => return None,
        Engine::Vllm { .. } => (
            &VLLM_METHODS,
            "\"invalid choice\" or \"Unknown quantization method\" (`vllm/config/model.py` `_verify_quantization`)",
        ),
        Engine::Sglang => (
            &SGLANG_METHODS,
            "\"invalid choice\" (`python/sglang/srt/server_args.py` `QUANTIZATION_CHOICES`)",
        ),
        _ => return None,
    };
    if known.contains(&method) {
        return None;
    }
    let near = crate::catalog::Catalog::closest(known.iter().copied(), method, 3);
    Some(Check {
        id: "unknown_quantization_method",
        flags: vec![flag.to_string()],
        message: format!(
            "{} has no quantization method `{method}` (unless a plugin registers one) and stops at start with {refusal}. Closest methods: {}. A quantized checkpoint needs no flag: the engine reads the method from its config.json",
            c.engine.name(),
            near.join(", ")
        ),
        severity: Severity::WillNotStart,
    })
}

fn quantization(c: &Command, m: &ModelMatch<'_>, checkpoint: WeightFormat, out: &mut Vec<Check>) {
    let Some(method) = c.quantization.as_deref() else {
        return;
    };
    let engine = c.engine.name();
    let flag = written(c, Field::Format).unwrap_or_else(|| format!("--quantization {method}"));
    if let Some(check) = unknown_method(c, method, &flag) {
        out.push(check);
        return;
    }
    let wanted = format_of(method);
    let repo = &c.model;
    let name = &m.model.name;
    if let Some(have) = family(checkpoint) {
        // A quantized checkpoint: its config names the method.
        if let Some(w) = wanted.filter(|w| family(*w) != Some(have)) {
            out.push(Check {
                id: "quantization_mismatch",
                flags: vec![flag.clone()],
                message: format!(
                    "`{repo}` is quantized with {have}: its config.json names its quantization, and {engine} refuses a `--quantization` that differs (`{flag}` asks for {}). Drop the flag: {engine} reads the method from the checkpoint",
                    family(w).unwrap_or("another format")
                ),
                severity: Severity::WillNotStart,
            });
        }
        return;
    }
    let needs_config =
        NEEDS_CONFIG.contains(&method) || (!ONLINE.contains(&method) && wanted.is_some());
    if !needs_config {
        return;
    }
    let kind = wanted.and_then(family).unwrap_or(method);
    let stored = match checkpoint {
        WeightFormat::Fp16 => "fp16",
        WeightFormat::Fp32 => "fp32",
        _ => "bf16",
    };
    let matching: Vec<&str> = m
        .model
        .quantized_repos
        .iter()
        .filter(|q| {
            let f = crate::dtype::WeightFormat::parse(&q.format);
            match wanted {
                Some(w) => f.and_then(family) == family(w),
                None => false,
            }
        })
        .map(|q| q.repo.as_str())
        .collect();
    let advice = if matching.is_empty() {
        format!("The catalog knows no {kind} checkpoint of {name}; drop the flag to serve the {stored} weights, or `--quantization fp8` to quantize them while loading")
    } else {
        format!(
            "Serve the catalog's {kind} checkpoint instead, without the flag: {}",
            matching.join(", ")
        )
    };
    out.push(Check {
        id: "quantization_mismatch",
        flags: vec![flag.clone()],
        message: format!(
            "`{repo}` is the {stored} checkpoint of {name}: it holds no {kind} weights. {engine} infers quantization from the checkpoint's config.json, and with `{flag}` it looks for {kind} weights and a quantization config that the checkpoint does not have: it refuses to start. {advice}"
        ),
        severity: Severity::WillNotStart,
    });
}

fn layout(c: &Command, gpu: &Gpu, arch: &ModelArch, p: &Plan, out: &mut Vec<Check>) {
    let tp = p.tensor_parallel_size;
    let pp = p.pipeline_parallel_size;
    let tp_flag = written(c, Field::TensorParallelSize);
    let pp_flag = written(c, Field::PipelineParallelSize);
    let flags: Vec<String> = tp_flag.iter().chain(pp_flag.iter()).cloned().collect();
    let node = gpu.gpus_per_node();
    let valid: Vec<String> = TP_CANDIDATES
        .iter()
        .filter(|&&t| layout_problem(arch, t, pp, node).is_none())
        .map(u64::to_string)
        .collect();
    let engine = c.engine.name();
    // The plan's own refusal (`sizing/refusal.rs`), not a second copy of the rule.
    if matches!(
        p.estimate.refusal,
        Some(crate::sizing::Refusal::TpHeads { .. })
    ) {
        out.push(Check {
            id: "tp_does_not_divide_heads",
            flags: tp_flag.iter().cloned().collect(),
            message: format!(
                "TP {tp} does not divide the {} attention heads of {}: {engine} refuses this layout. TP sizes that work here: {}",
                arch.heads,
                p.model_name,
                valid.join(", ")
            ),
            severity: Severity::WillNotStart,
        });
        return;
    }
    if tp > node {
        out.push(Check {
            id: "tp_across_nodes",
            flags,
            message: format!(
                "TP {tp} spans more than the {node} GPUs of one {} node: tensor parallelism across nodes needs a Ray cluster and runs over the network, which vramfit does not plan (its verdict is \"will not start\"); use TP ≤ {node} with `--pipeline-parallel-size` across nodes",
                gpu.name
            ),
            severity: Severity::WillNotStart,
        });
        return;
    }
    if let Some(problem) = layout_problem(arch, tp, pp, node)
        .or_else(|| ep_problem(arch, tp, c.inputs.flags.expert_parallel))
    {
        out.push(Check {
            id: "invalid_layout",
            flags,
            message: format!("{problem}: {engine} refuses this layout"),
            severity: Severity::WillNotStart,
        });
    }
}

fn length(c: &Command, arch: &ModelArch, out: &mut Vec<Check>) {
    let Some(len) = c.inputs.flags.max_model_len else {
        return;
    };
    let max = arch.max_position_embeddings;
    if len <= max {
        return;
    }
    let flag = written(c, Field::MaxModelLen)
        .unwrap_or_else(|| format!("{} {len}", key(Field::MaxModelLen).flag));
    let var = match c.engine {
        Engine::Vllm { .. } => Some("VLLM_ALLOW_LONG_MAX_MODEL_LEN"),
        Engine::Sglang => Some("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"),
        _ => None,
    };
    let engine = c.engine.name();
    let (message, severity) = match var {
        Some(v) if c.env_value(v).is_some_and(truthy) => (
            format!("{len} tokens is above the model's max_position_embeddings ({max}); {v}=1 lets {engine} start, but positions past {max} were never trained and may give wrong output"),
            Severity::Warning,
        ),
        Some(v) => (
            format!("{len} tokens is above the model's max_position_embeddings ({max}): {engine} refuses it unless {v}=1 is set; use {} {max} or less", flag.split(' ').next().unwrap_or(&flag)),
            Severity::WillNotStart,
        ),
        None => (
            format!("{len} tokens is above the model's max_position_embeddings ({max}): positions past {max} were never trained"),
            Severity::Warning,
        ),
    };
    let mut flags = vec![flag];
    if let Some(v) = var.filter(|v| c.env_value(v).is_some()) {
        flags.push(format!("{v}={}", c.env_value(v).unwrap_or_default()));
    }
    out.push(Check {
        id: "max_model_len_above_model",
        flags,
        message,
        severity,
    });
}

fn pool(c: &Command, p: &Plan, out: &mut Vec<Check>) {
    let e = &p.estimate;
    let util_flag = written(c, Field::GpuMemoryUtilization);
    let util = crate::units::real(e.budget_bytes) / crate::units::real(e.gpu_total_bytes.max(1));
    let util_text = match &util_flag {
        Some(f) => format!("`{f}`"),
        None => format!("the default memory fraction ({util:.2})"),
    };
    let engine = c.engine.name();
    match e.fit {
        Fit::WeightsTooLarge => {
            let mut flags: Vec<String> = util_flag.iter().cloned().collect();
            flags.extend(written(c, Field::TensorParallelSize));
            out.push(Check {
                id: "no_kv_pool",
                flags,
                message: format!(
                    "with {util_text}, {engine} may use {} of each GPU's {}; weights take {}, activations {} and other buffers {}, leaving a KV pool of {}: no room for the KV cache, so it stops while starting. {}",
                    fmt_gib(e.budget_bytes),
                    fmt_gib(e.gpu_total_bytes),
                    fmt_gib(e.weights_bytes),
                    fmt_gib(e.activation_bytes),
                    fmt_gib(e.non_torch_bytes),
                    fmt_gib_signed(e.kv_pool_signed_bytes),
                    fixes(p)
                ),
                severity: Severity::WillNotStart,
            });
        }
        Fit::KvTooSmall => {
            let mut flags: Vec<String> = written(c, Field::MaxModelLen).into_iter().collect();
            flags.extend(util_flag.iter().cloned());
            out.push(Check {
                id: "kv_pool_too_small",
                flags,
                message: format!(
                    "one request of {} tokens needs {} of KV cache on each GPU, but with {util_text} the pool is {} ({} tokens): {engine} refuses to start. At most {} tokens fit. {}",
                    fmt_count(e.max_model_len),
                    fmt_gib(e.kv_bytes_per_request),
                    fmt_gib(e.kv_pool_bytes),
                    fmt_count(e.kv_tokens),
                    fmt_count(e.max_model_len_fit),
                    fixes(p)
                ),
                severity: Severity::WillNotStart,
            });
        }
        // What the engine refuses has its own check above (layout, length).
        Fit::Fits | Fit::FitsWithQueueing | Fit::Refused => {}
    }
}

/// The plan's checked fixes, in words (each starts when planned again).
fn fixes(p: &Plan) -> String {
    if p.fixes.is_empty() {
        return "No change vramfit tried starts it.".to_string();
    }
    let f: Vec<String> = p.fixes.iter().map(ToString::to_string).collect();
    format!("Checked fixes: {}.", f.join("; or "))
}

/// Entries of a comma-separated device list.
fn count(list: &str) -> u64 {
    let n = list.split(',').filter(|d| !d.trim().is_empty()).count();
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// GPUs a `CUDA_VISIBLE_DEVICES` or `--gpus` value makes visible (`None`: all, or unknown).
fn visible_count(v: &str) -> Option<u64> {
    let v = v.trim().trim_matches(['"', '\'']);
    if v.eq_ignore_ascii_case("all") {
        return None;
    }
    if let Ok(n) = v.parse::<u64>() {
        return Some(n);
    }
    let list = v.strip_prefix("device=").unwrap_or(v);
    Some(count(list))
}

/// The flag that set [`Command::data_parallel`], as written with its value.
fn dp_written(c: &Command) -> Option<String> {
    c.flags
        .iter()
        .rev()
        .find(|f| super::flags::sets_data_parallel(c.engine, &f.flag))
        .map(|f| format!("{} {}", f.flag, f.value.as_deref().unwrap_or_default()))
}

/// SGLang's `--enable-dp-attention`: its data-parallel ranks split the TP group.
fn dp_attention(c: &Command) -> bool {
    c.engine == Engine::Sglang && c.flags.iter().any(|f| f.flag == "--enable-dp-attention")
}

/// Whether the command's data-parallel ranks change what a GPU holds: they do when they
/// share an MoE model's experts (vLLM) or split the TP group's attention (SGLang's
/// `--enable-dp-attention`); whole replicas change nothing ([`data_parallel`]).
pub(super) fn dp_changes_memory(c: &Command, arch: &ModelArch) -> bool {
    c.data_parallel > 1 && (dp_attention(c) || (c.engine != Engine::Sglang && arch.moe.is_some()))
}

/// GPUs the command starts on its node: TP × PP per data-parallel rank it runs (all of
/// them, or [`Command::data_parallel_local`]), TP × PP in all where SGLang's ranks split the
/// TP group.
fn world(c: &Command, p: &Plan) -> u64 {
    let group = p
        .tensor_parallel_size
        .saturating_mul(p.pipeline_parallel_size);
    if dp_attention(c) {
        group
    } else {
        group.saturating_mul(c.data_parallel_local.unwrap_or(c.data_parallel))
    }
}

/// `--data-parallel-size N` (vLLM) and `--dp-size N` (SGLang). vLLM runs each rank as an
/// engine core of its own ("Data Parallel Deployment", `docs/serving/
/// data_parallel_deployment.md`): a dense model's ranks are whole replicas, so no GPU holds
/// more or less; an MoE model's expert layers form one group of DP × TP GPUs (by tensor, or
/// by expert with `--enable-expert-parallel`), so each GPU holds `1/(DP × TP)` of the
/// experts, which the plan (sized at TP) does not model. SGLang's ranks are whole replicas
/// (`data_parallel_controller.py`) unless `--enable-dp-attention` makes them split the TP
/// group's attention, which the plan does not model either.
fn data_parallel(c: &Command, arch: &ModelArch, p: &Plan, out: &mut Vec<Check>) {
    let n = c.data_parallel;
    let Some(flag) = dp_written(c).filter(|_| n > 1) else {
        return;
    };
    let (tp, pp) = (p.tensor_parallel_size, p.pipeline_parallel_size);
    let (id, message) = if !dp_changes_memory(c, arch) {
        (
            "data_parallel_replicas",
            format!(
                "`{flag}` starts {n} copies of TP {tp} × PP {pp} behind one API server ({}): each GPU holds what this plan sizes, and the copies hold {n}× its requests at once",
                match c.data_parallel_local {
                    Some(l) if l != n => format!("{l} of them on this node, {} GPUs", world(c, p)),
                    _ => format!("{} GPUs in all", world(c, p)),
                }
            ),
        )
    } else if dp_attention(c) {
        (
            "data_parallel_not_modelled",
            format!(
                "`{flag}` with `--enable-dp-attention`: the {n} ranks split the TP {tp} group, each attending over its own requests with the attention weights of TP {}; not modelled: the estimate sizes plain TP {tp}",
                (tp / n).max(1)
            ),
        )
    } else {
        let group = tp.saturating_mul(n);
        let how = if c.inputs.flags.expert_parallel {
            "by expert"
        } else {
            "by tensor"
        };
        (
            "data_parallel_not_modelled",
            format!(
                "`{flag}`: the expert layers form one group of DP × TP = {group} GPUs, split {how}, so each GPU holds 1/{group} of the experts, not the 1/{tp} this plan sizes (each rank's attention stays at TP {tp}); not modelled: the estimate leaves out the memory this saves"
            ),
        )
    };
    out.push(Check {
        id,
        flags: vec![flag],
        message,
        severity: Severity::Note,
    });
}

fn visible(c: &Command, p: &Plan, out: &mut Vec<Check>) {
    let world = world(c, p);
    let cuda = c.env_value("CUDA_VISIBLE_DEVICES").map(|v| {
        // A single number here is a device id, not a count (unlike `--gpus 2`).
        (format!("CUDA_VISIBLE_DEVICES={v}"), Some(count(v)))
    });
    let docker = c
        .docker_gpus
        .as_deref()
        .map(|g| (format!("--gpus {g}"), visible_count(g)));
    for (what, n) in cuda.into_iter().chain(docker) {
        let Some(n) = n.filter(|&n| n < world) else {
            continue;
        };
        let mut flags = vec![what.clone()];
        flags.extend(written(c, Field::TensorParallelSize));
        flags.extend(written(c, Field::PipelineParallelSize));
        let dp = if world > p.tensor_parallel_size * p.pipeline_parallel_size {
            flags.extend(dp_written(c));
            format!(" × DP {}", c.data_parallel)
        } else {
            String::new()
        };
        out.push(Check {
            id: "too_few_gpus",
            flags,
            message: format!(
                "TP {} × PP {}{dp} needs {world} GPUs, but `{what}` makes {n} visible: {} stops while starting",
                p.tensor_parallel_size,
                p.pipeline_parallel_size,
                c.engine.name()
            ),
            severity: Severity::WillNotStart,
        });
    }
}
