//! Ready-to-copy launch commands for the chosen layout and precision.
//!
//! Flags as documented by each engine: `vllm serve` (vLLM engine arguments),
//! SGLang `python -m sglang.launch_server` (`--tp`, `--mem-fraction-static`,
//! `--context-length`, `--quantization`, `--kv-cache-dtype`), transformers
//! `from_pretrained(..., device_map="auto", torch_dtype=...)` with bitsandbytes for 8/4-bit,
//! and llama.cpp `llama-server` (`-c`, `-ngl`, `-np`, `--cache-type-k/v`, `--split-mode`).

use crate::dtype::{KvDtype, WeightFormat};
use crate::plan::Plan;

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./:=@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The repo id to launch (first official repo id, or the catalog id).
fn repo(p: &Plan, repos: &[String]) -> String {
    repos.first().cloned().unwrap_or_else(|| p.model_id.clone())
}

/// `vllm serve …`.
#[must_use]
pub fn vllm(p: &Plan, repo_id: &str) -> String {
    let mut c = format!("vllm serve {}", shell_quote(repo_id));
    if p.tensor_parallel_size > 1 {
        c.push_str(&format!(
            " \\\n  --tensor-parallel-size {}",
            p.tensor_parallel_size
        ));
    }
    if p.pipeline_parallel_size > 1 {
        c.push_str(&format!(
            " \\\n  --pipeline-parallel-size {}",
            p.pipeline_parallel_size
        ));
    }
    c.push_str(&format!(
        " \\\n  --max-model-len {}",
        p.estimate.max_model_len
    ));
    let util = crate::units::real(p.estimate.budget_bytes)
        / crate::units::real(p.estimate.gpu_total_bytes.max(1));
    c.push_str(&format!(" \\\n  --gpu-memory-utilization {:.2}", util));
    match p.format {
        WeightFormat::Fp8 => c.push_str(" \\\n  --quantization fp8"),
        WeightFormat::Fp16 => c.push_str(" \\\n  --dtype float16"),
        _ => {}
    }
    if p.kv_dtype == KvDtype::Fp8 {
        c.push_str(" \\\n  --kv-cache-dtype fp8");
    }
    c.push_str(&format!(
        " \\\n  --max-num-seqs {}",
        p.estimate.max_num_seqs
    ));
    c
}

/// SGLang `launch_server`.
#[must_use]
pub fn sglang(p: &Plan, repo_id: &str) -> String {
    let mut c = format!(
        "python -m sglang.launch_server --model-path {}",
        shell_quote(repo_id)
    );
    if p.tensor_parallel_size > 1 {
        c.push_str(&format!(" --tp {}", p.tensor_parallel_size));
    }
    if p.pipeline_parallel_size > 1 {
        c.push_str(&format!(" --pp-size {}", p.pipeline_parallel_size));
    }
    c.push_str(&format!(" --context-length {}", p.estimate.max_model_len));
    if p.format == WeightFormat::Fp8 {
        c.push_str(" --quantization fp8");
    }
    if p.kv_dtype == KvDtype::Fp8 {
        c.push_str(" --kv-cache-dtype fp8_e4m3");
    }
    c
}

/// transformers `from_pretrained`.
#[must_use]
pub fn transformers(p: &Plan, repo_id: &str) -> String {
    let (dtype, extra) = match p.format {
        WeightFormat::Fp16 => ("torch.float16", String::new()),
        WeightFormat::Fp32 => ("torch.float32", String::new()),
        WeightFormat::Int8W8a8 => ("torch.bfloat16", ",\n    quantization_config=BitsAndBytesConfig(load_in_8bit=True)".to_string()),
        WeightFormat::Int4Awq | WeightFormat::Int4Gptq | WeightFormat::Nvfp4 | WeightFormat::Mxfp4 => (
            "torch.bfloat16",
            ",\n    quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\",\n        bnb_4bit_compute_dtype=torch.bfloat16)".to_string(),
        ),
        _ => ("torch.bfloat16", String::new()),
    };
    let import = if extra.is_empty() {
        "AutoModelForCausalLM"
    } else {
        "AutoModelForCausalLM, BitsAndBytesConfig"
    };
    format!(
        "import torch\nfrom transformers import {import}\nmodel = AutoModelForCausalLM.from_pretrained(\n    \"{}\",\n    device_map=\"auto\",  # splits layers over {} GPU(s)\n    torch_dtype={dtype}{extra},\n)",
        repo_id.replace('"', ""),
        p.tensor_parallel_size * p.pipeline_parallel_size
    )
}

/// llama.cpp `llama-server` (GGUF).
#[must_use]
pub fn llama_cpp(p: &Plan, repo_id: &str) -> String {
    let quant = match p.format {
        WeightFormat::Int4Awq
        | WeightFormat::Int4Gptq
        | WeightFormat::Mxfp4
        | WeightFormat::Nvfp4
        | WeightFormat::Mxfp4Experts => "Q4_K_M",
        WeightFormat::Fp8
        | WeightFormat::Fp8Block
        | WeightFormat::Fp8Ffn
        | WeightFormat::Int8W8a8 => "Q8_0",
        WeightFormat::Fp32 => "F32",
        WeightFormat::Fp16 => "F16",
        WeightFormat::Bf16 => "BF16",
    };
    // GGUF conversions are published as `<repo>-GGUF` by many uploaders; `-hf` takes one.
    let mut c = format!(
        "llama-server -hf {}-GGUF:{quant} \\\n  -c {} -ngl 999 -np {}",
        shell_quote(repo_id),
        p.estimate.max_model_len,
        p.replicas.max(1)
    );
    if p.kv_dtype == KvDtype::Fp8 {
        c.push_str(" --cache-type-k q8_0 --cache-type-v q8_0");
    }
    if p.tensor_parallel_size * p.pipeline_parallel_size > 1 {
        c.push_str(" --split-mode layer");
    }
    c
}

/// Every command, labelled, for a plan and the model's repo ids.
#[must_use]
pub fn all(p: &Plan) -> Vec<(&'static str, String)> {
    let r = repo(p, &p.repo_ids);
    vec![
        ("vLLM", vllm(p, &r)),
        ("SGLang", sglang(p, &r)),
        ("transformers", transformers(p, &r)),
        ("llama.cpp", llama_cpp(p, &r)),
    ]
}
