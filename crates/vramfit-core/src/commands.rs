//! Ready-to-paste launch commands: the plan's [`Launch`] (the plan itself, or the plan with
//! its first checked fix when it does not start), in the checkpoint of its format.
//!
//! Flags as each engine documents them:
//! - vLLM `vllm serve` (`vllm/engine/arg_utils.py`): `--tensor-parallel-size`,
//!   `--pipeline-parallel-size`, `--max-model-len`, `--gpu-memory-utilization`,
//!   `--quantization fp8` (online FP8 of a 16-bit checkpoint), `--dtype`,
//!   `--kv-cache-dtype`, `--max-num-seqs`, `--max-num-batched-tokens`, `--block-size`,
//!   `--enable-expert-parallel`; `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` (`vllm/envs.py`).
//!   A pre-quantized checkpoint (AWQ, GPTQ, FP8, NVFP4, MXFP4) needs no `--quantization`:
//!   vLLM reads `quantization_config` from its `config.json`.
//! - SGLang `python -m sglang.launch_server` (`python/sglang/srt/server_args.py`): `--tp`,
//!   `--pp-size`, `--context-length`, `--mem-fraction-static`, `--quantization`,
//!   `--kv-cache-dtype fp8_e4m3`, `--max-running-requests`, `--chunked-prefill-size`,
//!   `--ep-size` (expert parallelism over the TP group);
//!   `SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1`.
//! - TensorRT-LLM `trtllm-serve` (docs `commands/trtllm-serve`): `--backend pytorch`,
//!   `--tp_size`, `--pp_size`, `--max_seq_len`, `--max_batch_size`, `--max_num_tokens`,
//!   `--kv_cache_free_gpu_memory_fraction`, `--ep_size`; the KV dtype through `--extra_llm_api_options`
//!   (`kv_cache_config: dtype: fp8`). It loads pre-quantized (ModelOpt) checkpoints only.
//! - transformers `from_pretrained(..., device_map="auto", torch_dtype=...)`; a
//!   pre-quantized checkpoint carries its `quantization_config`.
//! - llama.cpp `llama-server -hf REPO:QUANT` (GGUF; `-c` is split over the `-np` slots,
//!   [`Launch::slots`], each holding `max_model_len`; `-ngl`, `--split-mode layer`,
//!   `--cache-type-k/v`).

use crate::dtype::{KvDtype, WeightFormat};
use crate::engine::Engine;
use crate::plan::{placeholder_repo, Launch, Plan};

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// One launch command.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Command {
    /// Stable id: `vllm`, `sglang`, `trtllm`, `transformers`, `llama_cpp`.
    pub id: &'static str,
    /// Label: `vLLM`, `SGLang`, `TensorRT-LLM`, `transformers`, `llama.cpp`.
    pub label: &'static str,
    /// The command (a Python snippet for transformers).
    pub text: String,
}

/// The command ids, in the order [`all`] lists them.
pub const IDS: [&str; 5] = ["vllm", "sglang", "trtllm", "transformers", "llama_cpp"];

/// The repo the command loads: the launch's checkpoint, or a placeholder when the engine
/// cannot quantize while loading.
fn repo(l: &Launch, online_ok: bool) -> String {
    let c = &l.checkpoint;
    match (&c.prequantized, c.online && !online_ok) {
        (_, false) => c.repo.clone(),
        (Some(r), true) => r.clone(),
        (None, true) => placeholder_repo(&c.repo, &l.format.id().to_ascii_uppercase()),
    }
}

fn line(c: &mut String, flag: &str, v: impl std::fmt::Display) {
    c.push_str(&format!(" \\\n  {flag} {v}"));
}

/// `vllm serve …`.
#[must_use]
pub fn vllm(l: &Launch) -> String {
    let mut c = String::new();
    if l.allow_long_max_model_len {
        c.push_str("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 ");
    }
    c.push_str(&format!("vllm serve {}", shell_quote(&repo(l, true))));
    if l.tensor_parallel_size > 1 {
        line(&mut c, "--tensor-parallel-size", l.tensor_parallel_size);
    }
    if l.pipeline_parallel_size > 1 {
        line(&mut c, "--pipeline-parallel-size", l.pipeline_parallel_size);
    }
    line(&mut c, "--max-model-len", l.max_model_len);
    line(
        &mut c,
        "--gpu-memory-utilization",
        format!("{:.2}", l.gpu_memory_utilization),
    );
    if l.checkpoint.online {
        line(&mut c, "--quantization", "fp8");
    }
    match l.format {
        WeightFormat::Fp16 => line(&mut c, "--dtype", "float16"),
        WeightFormat::Fp32 => line(&mut c, "--dtype", "float32"),
        _ => {}
    }
    if l.kv_dtype == KvDtype::Fp8 {
        line(&mut c, "--kv-cache-dtype", "fp8");
    }
    line(&mut c, "--max-num-seqs", l.max_num_seqs);
    line(&mut c, "--max-num-batched-tokens", l.max_num_batched_tokens);
    if let Some(b) = l.block_size {
        line(&mut c, "--block-size", b);
    }
    if l.expert_parallel {
        c.push_str(" \\\n  --enable-expert-parallel");
    }
    vllm_features(&mut c, l);
    c
}

/// The deployment features as `vllm serve` spells them (`vllm/engine/arg_utils.py`;
/// `--swap-space` is left out: V1 allocates nothing for it and v0.18 removed it).
fn vllm_features(c: &mut String, l: &Launch) {
    let x = &l.features;
    let json = |pairs: &[(&str, Option<String>)]| -> Option<String> {
        let body: Vec<String> = pairs
            .iter()
            .filter_map(|(k, v)| v.as_ref().map(|v| format!("\"{k}\": {v}")))
            .collect();
        (!body.is_empty()).then(|| format!("{{{}}}", body.join(", ")))
    };
    let n = |v: Option<u64>| v.map(|v| v.to_string());
    if let Some(j) = json(&[
        ("image", n(x.mm.images)),
        ("video", n(x.mm.videos)),
        ("audio", n(x.mm.audios)),
    ]) {
        line(c, "--limit-mm-per-prompt", shell_quote(&j));
    }
    if let Some(j) = json(&[
        ("max_pixels", n(x.mm.max_pixels)),
        ("num_frames", n(x.mm.frames)),
    ]) {
        line(c, "--mm-processor-kwargs", shell_quote(&j));
    }
    if x.mm.encoder_data_parallel {
        line(c, "--mm-encoder-tp-mode", "data");
    }
    if x.mm.skip_profiling {
        c.push_str(" \\\n  --skip-mm-profiling");
    }
    if x.lora.enabled {
        c.push_str(" \\\n  --enable-lora");
        line(c, "--max-loras", x.lora.max_loras);
        line(c, "--max-lora-rank", x.lora.max_rank);
        if let Some(m) = x.lora.max_cpu_loras {
            line(c, "--max-cpu-loras", m);
        }
        if x.lora.fully_sharded {
            c.push_str(" \\\n  --fully-sharded-loras");
        }
        if let Some(t) = x.lora.target_modules {
            line(c, "--lora-target-modules", t.text());
        }
    }
    if let Some(m) = x.spec.method {
        use crate::inputs::SpecMethod;
        let model = match (m, l.draft_repo.is_empty()) {
            (SpecMethod::Ngram | SpecMethod::Mtp, true) => None,
            (_, false) => Some(format!("\"{}\"", l.draft_repo.replace(['"', '\\'], ""))),
            (_, true) => Some("\"DRAFT_MODEL_REPO\"".to_string()),
        };
        let k = l.spec_tokens;
        let mut pairs = vec![("method", Some(format!("\"{}\"", m.id())))];
        pairs.push(("model", model));
        pairs.push(("num_speculative_tokens", Some(k.to_string())));
        if let Some(j) = json(&pairs) {
            line(c, "--speculative-config", shell_quote(&j));
        }
    }
    if x.enforce_eager {
        c.push_str(" \\\n  --enforce-eager");
    }
    if let Some(g) = x.cpu_offload_gib.filter(|g| *g > 0.0) {
        line(c, "--cpu-offload-gb", crate::inputs::short(g));
    }
    if x.no_prefix_caching {
        c.push_str(" \\\n  --no-enable-prefix-caching");
    }
    if let Some(b) = x.kv_cache_memory_bytes {
        line(c, "--kv-cache-memory-bytes", b);
    }
}

/// SGLang `launch_server`.
#[must_use]
pub fn sglang(l: &Launch) -> String {
    let mut c = String::new();
    if l.allow_long_max_model_len {
        c.push_str("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 ");
    }
    c.push_str(&format!(
        "python -m sglang.launch_server --model-path {}",
        shell_quote(&repo(l, true))
    ));
    if l.tensor_parallel_size > 1 {
        line(&mut c, "--tp", l.tensor_parallel_size);
    }
    if l.pipeline_parallel_size > 1 {
        line(&mut c, "--pp-size", l.pipeline_parallel_size);
    }
    line(&mut c, "--context-length", l.max_model_len);
    line(
        &mut c,
        "--mem-fraction-static",
        format!("{:.2}", l.gpu_memory_utilization),
    );
    if l.checkpoint.online {
        line(&mut c, "--quantization", "fp8");
    }
    match l.format {
        WeightFormat::Fp16 => line(&mut c, "--dtype", "float16"),
        WeightFormat::Fp32 => line(&mut c, "--dtype", "float32"),
        _ => {}
    }
    if l.kv_dtype == KvDtype::Fp8 {
        line(&mut c, "--kv-cache-dtype", "fp8_e4m3");
    }
    line(&mut c, "--max-running-requests", l.max_num_seqs);
    line(&mut c, "--chunked-prefill-size", l.max_num_batched_tokens);
    // SGLang's expert parallelism is a size, the TP group's (`server_args.py` `ep_size`).
    if l.expert_parallel && l.tensor_parallel_size > 1 {
        line(&mut c, "--ep-size", l.tensor_parallel_size);
    }
    if l.features.enforce_eager {
        c.push_str(" \\\n  --disable-cuda-graph");
    }
    if l.features.no_prefix_caching {
        c.push_str(" \\\n  --disable-radix-cache");
    }
    c
}

/// Whether `trtllm-serve` loads a checkpoint of this format as the catalog lists it: 16-bit,
/// and the FP8 / NVFP4 / MXFP4 checkpoints ModelOpt and the model makers publish. AutoAWQ,
/// GPTQ and INT8 W8A8 repos are not ModelOpt checkpoints (TensorRT-LLM docs, "Quantization").
fn trtllm_loads(f: WeightFormat) -> bool {
    !matches!(
        f,
        WeightFormat::Int4Awq | WeightFormat::Int4Gptq | WeightFormat::Int8W8a8
    )
}

/// TensorRT-LLM `trtllm-serve` (PyTorch backend).
#[must_use]
pub fn trtllm(l: &Launch) -> String {
    let mut c = String::new();
    if l.kv_dtype == KvDtype::Fp8 {
        c.push_str("printf 'kv_cache_config:\\n  dtype: fp8\\n' > kv_fp8.yaml && ");
    }
    let r = if trtllm_loads(l.format) {
        repo(l, false)
    } else {
        placeholder_repo(&l.checkpoint.repo, "MODELOPT")
    };
    c.push_str(&format!(
        "trtllm-serve {} \\\n  --backend pytorch",
        shell_quote(&r)
    ));
    line(&mut c, "--tp_size", l.tensor_parallel_size);
    line(&mut c, "--pp_size", l.pipeline_parallel_size);
    line(&mut c, "--max_seq_len", l.max_model_len);
    line(&mut c, "--max_batch_size", l.max_num_seqs);
    line(&mut c, "--max_num_tokens", l.max_num_batched_tokens);
    // `trtllm-serve --ep_size`: the experts split by expert over the TP group.
    if l.expert_parallel && l.tensor_parallel_size > 1 {
        line(&mut c, "--ep_size", l.tensor_parallel_size);
    }
    // A share of the memory left after weights and buffers, not of the total: the plan's
    // fraction when it was planned for TensorRT-LLM, else TensorRT-LLM's default 0.9.
    let free = if l.engine == Engine::TrtLlm {
        l.gpu_memory_utilization
    } else {
        0.9
    };
    line(
        &mut c,
        "--kv_cache_free_gpu_memory_fraction",
        format!("{free:.2}"),
    );
    if l.kv_dtype == KvDtype::Fp8 {
        line(&mut c, "--extra_llm_api_options", "kv_fp8.yaml");
    }
    c
}

/// transformers `from_pretrained`.
#[must_use]
pub fn transformers(l: &Launch) -> String {
    let dtype = match l.format {
        WeightFormat::Fp16 => "torch.float16",
        WeightFormat::Fp32 => "torch.float32",
        _ => "torch.bfloat16",
    };
    let note =
        if l.checkpoint.known && (!l.checkpoint.online || l.checkpoint.prequantized.is_some()) {
            ""
        } else {
            "  # replace with a checkpoint in this format"
        };
    format!(
        "import torch\nfrom transformers import AutoModelForCausalLM\nmodel = AutoModelForCausalLM.from_pretrained(\n    \"{}\",{note}\n    device_map=\"auto\",  # splits layers over {} GPU(s)\n    torch_dtype={dtype},\n)",
        repo(l, false).replace(['"', '\\'], ""),
        l.tensor_parallel_size * l.pipeline_parallel_size
    )
}

/// llama.cpp `llama-server` (GGUF).
#[must_use]
pub fn llama_cpp(l: &Launch) -> String {
    let quant = l.format.gguf_quant();
    let hf = match &l.checkpoint.gguf {
        Some((r, q)) => format!("{r}:{q}"),
        None => format!("{}:{quant}", placeholder_repo(&l.checkpoint.repo, "GGUF")),
    };
    let np = l.slots.max(1);
    let mut c = format!(
        "llama-server -hf {} \\\n  -c {} -np {np} -ngl 999",
        shell_quote(&hf),
        l.max_model_len.saturating_mul(np)
    );
    if l.kv_dtype == KvDtype::Fp8 {
        // A quantized V cache needs flash attention (llama.cpp `common/arg.cpp`).
        c.push_str(" -fa on --cache-type-k q8_0 --cache-type-v q8_0");
    }
    if l.tensor_parallel_size * l.pipeline_parallel_size > 1 {
        c.push_str(" --split-mode layer");
    }
    c
}

/// Every command for a plan (none when nothing vramfit tried starts it).
#[must_use]
pub fn all(p: &Plan) -> Vec<Command> {
    let Some(l) = p.launch.as_ref() else {
        return Vec::new();
    };
    let mk = |id, label, text| Command { id, label, text };
    vec![
        mk("vllm", "vLLM", vllm(l)),
        mk("sglang", "SGLang", sglang(l)),
        mk("trtllm", "TensorRT-LLM", trtllm(l)),
        mk("transformers", "transformers", transformers(l)),
        mk("llama_cpp", "llama.cpp", llama_cpp(l)),
    ]
}

/// One command by id (`vllm`, `sglang`, `trtllm`, `transformers`, `llama_cpp`).
#[must_use]
pub fn by_id(p: &Plan, id: &str) -> Option<String> {
    all(p).into_iter().find(|c| c.id == id).map(|c| c.text)
}

/// What the reader of the commands must know: the fix they apply, a placeholder checkpoint,
/// the replicas they stand for.
#[must_use]
pub fn notes(p: &Plan) -> Vec<String> {
    let Some(l) = p.launch.as_ref() else {
        return vec![
            "no command: no change vramfit tried starts this plan, so none would start".into(),
        ];
    };
    let mut n = Vec::new();
    if let Some(f) = l.fix {
        n.push(format!(
            "the plan as given does not start; these commands apply the fix {f}"
        ));
    }
    if !l.checkpoint.known {
        n.push(format!(
            "the catalog knows no {} checkpoint of this model: replace `{}` with one",
            l.format, l.checkpoint.repo
        ));
    }
    if l.checkpoint.gguf.is_none() {
        n.push(format!(
            "the catalog knows no GGUF of this model in {}: the llama.cpp command names a placeholder `YOUR-ORG/…-GGUF` repo",
            l.format.gguf_quant()
        ));
    }
    if !trtllm_loads(l.format) {
        n.push(format!(
            "TensorRT-LLM loads ModelOpt checkpoints, not {} repos: its command names a placeholder `YOUR-ORG/…-MODELOPT`",
            l.format
        ));
    }
    if l.engine != Engine::TrtLlm {
        n.push("`--kv_cache_free_gpu_memory_fraction` is a share of the memory left after the weights (TensorRT-LLM's default 0.90 shown), not of the total: its pool differs from this plan's".into());
    }
    if l.checkpoint.online {
        n.push(match &l.checkpoint.prequantized {
            Some(r) => format!("vLLM and SGLang quantize the 16-bit checkpoint to FP8 while loading; TensorRT-LLM and transformers load the FP8 checkpoint `{r}`"),
            None => "vLLM and SGLang quantize the 16-bit checkpoint to FP8 while loading; TensorRT-LLM and transformers need an FP8 checkpoint".into(),
        });
    }
    if l.replicas > 1 {
        n.push(format!(
            "the workload needs {} replicas: run each command on {} server(s) or GPU sets, behind a load balancer",
            l.replicas, l.replicas
        ));
    }
    if l.engine == Engine::Transformers && l.tensor_parallel_size > 1 {
        n.push("transformers splits layers (device_map), it does not run tensor parallel".into());
    }
    n
}
