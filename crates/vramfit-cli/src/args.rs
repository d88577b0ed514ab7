//! The command line as clap parses it: flags spelled as `vllm serve` spells them.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "vramfit", version, about = "Will your LLM fit? GPU memory, layout, speed and cost for LLM inference, as vLLM accounts it.", long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand)]
pub enum Cmd {
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
    Accuracy(AccuracyArgs),
    /// What to buy: every catalog GPU in every server platform that takes it, ranked by total
    /// cost of ownership for the workload, with renting and an API to compare.
    #[command(mut_arg("gpu", |a| a.required(false).default_value("h100-sxm").hide(true)))]
    Budget(BudgetArgs),
}

#[derive(Args, Clone)]
pub struct BudgetArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Years of service (default: the catalog's, 4).
    #[arg(long)]
    pub years: Option<f64>,
    /// Electricity price, USD per kWh (default: the catalog's).
    #[arg(long = "kwh-price")]
    pub kwh_price: Option<f64>,
    /// Power usage effectiveness of the facility (default: the catalog's).
    #[arg(long)]
    pub pue: Option<f64>,
    /// Share of the hours at the planned load, 0-1 (default: the catalog's).
    #[arg(long)]
    pub utilization: Option<f64>,
    /// Resale value at the end, as a fraction of the purchase (0-1).
    #[arg(long)]
    pub resale: Option<f64>,
    /// An API's price per million input tokens, USD, to compare with.
    #[arg(long = "api-input-price")]
    pub api_input_price: Option<f64>,
    /// The API's price per million output tokens, USD.
    #[arg(long = "api-output-price")]
    pub api_output_price: Option<f64>,
    /// Power cap for the whole deployment, kW at the wall.
    #[arg(long = "max-power-kw")]
    pub max_power_kw: Option<f64>,
    /// Power cap per rack, kW.
    #[arg(long = "max-rack-kw")]
    pub max_rack_kw: Option<f64>,
    /// Budget cap for the purchase, USD.
    #[arg(long = "max-budget-usd")]
    pub max_budget_usd: Option<f64>,
    /// Only hardware that can be bought and run on premises.
    #[arg(long = "on-prem")]
    pub on_prem: bool,
    /// Only this GPU vendor (nvidia, amd, intel, apple).
    #[arg(long)]
    pub vendor: Option<String>,
    /// Print every option (the table shows the first 25).
    #[arg(long)]
    pub all: bool,
}

#[derive(Args, Clone)]
pub struct AccuracyArgs {
    /// Compare the report with this file (docs/ACCURACY.md) and enforce the held-out targets
    /// and the shipped constants; exit 1 on any difference or failure.
    #[arg(long, value_name = "FILE")]
    pub check: Option<std::path::PathBuf>,
}

#[derive(Args, Clone)]
pub struct OomArgs {
    /// File with the error text; `-` or absent reads stdin.
    pub file: Option<PathBuf>,
    /// The model being run (catalog id or repo id), to check for fp32 weights and size its
    /// weights against the GPU (a model the message names takes precedence).
    #[arg(long)]
    pub model: Option<String>,
    /// The GPU it ran on (catalog id, alias or nvidia-smi name), when the message does not
    /// say its capacity; also the card the fixes are planned on.
    #[arg(long)]
    pub gpu: Option<String>,
    /// How many GPUs the run was meant to use (enables "everything landed on GPU 0").
    #[arg(long, value_name = "N")]
    pub gpus: Option<u64>,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Clone)]
pub struct ListArgs {
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Filter by substring (name, id, family, vendor).
    #[arg(long)]
    pub search: Option<String>,
}

#[derive(Args, Clone)]
pub struct InspectArgs {
    /// A .safetensors file, a model directory, a model.safetensors.index.json, or a Hugging
    /// Face repo id (`owner/name`, header bytes read by HTTP Range).
    pub path: PathBuf,
    /// The Hub revision (branch, tag or commit) of a repo id.
    #[arg(long, default_value = "main")]
    pub revision: String,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// The flags a `--command` sets itself (given both ways, which one holds would be a guess).
const COMMAND_SETS: [&str; 12] = [
    "model",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "max_model_len",
    "gpu_memory_utilization",
    "kv_cache_dtype",
    "quantization",
    "dtype",
    "max_num_seqs",
    "max_num_batched_tokens",
    "block_size",
    "engine",
];

#[derive(Args, Clone)]
pub struct PlanArgs {
    /// Catalog id, Hugging Face repo id, path to a config.json, or a model directory. A repo
    /// id the catalog lacks is imported from the Hub (config and safetensors headers only).
    #[arg(
        required_unless_present = "command",
        default_value = "",
        hide_default_value = true
    )]
    pub model: String,
    /// `check` only: a pasted launch command to check on --gpu (`vllm serve …`,
    /// `python -m sglang.launch_server …`, `trtllm-serve …`, wrapped in `docker run` or a
    /// Kubernetes `args:` list). The model and the engine's flags come from it; the workload
    /// flags (--users, --prompt-tokens, …) apply.
    #[arg(long, conflicts_with_all = COMMAND_SETS)]
    pub command: Option<String>,
    /// Catalog GPU id, alias, or the name nvidia-smi prints.
    #[arg(long)]
    pub gpu: String,
    /// --tensor-parallel-size (default: fewest GPUs that fit).
    #[arg(long = "tensor-parallel-size", short = 't', visible_alias = "tp")]
    pub tensor_parallel_size: Option<u64>,
    /// --pipeline-parallel-size.
    #[arg(long = "pipeline-parallel-size", visible_alias = "pp")]
    pub pipeline_parallel_size: Option<u64>,
    /// --max-model-len (default: the model's max_position_embeddings): tokens (`32k` =
    /// 32 000, `32K` = 32 768 as vLLM reads them), or `-1` / `auto`: the length vLLM picks
    /// itself (the longest one request fits).
    #[arg(long = "max-model-len", allow_hyphen_values = true)]
    pub max_model_len: Option<String>,
    /// --gpu-memory-utilization (vLLM; the engine's fraction for others).
    #[arg(long = "gpu-memory-utilization")]
    pub gpu_memory_utilization: Option<f64>,
    /// --kv-cache-dtype: auto, bf16, fp16, fp8.
    #[arg(long = "kv-cache-dtype", default_value = "auto")]
    pub kv_cache_dtype: String,
    /// --quantization: fp8, awq, gptq, w8a8, mxfp4, nvfp4 …
    #[arg(long)]
    pub quantization: Option<String>,
    /// --dtype: auto, bfloat16, float16, float32.
    #[arg(long)]
    pub dtype: Option<String>,
    /// --max-num-seqs.
    #[arg(long = "max-num-seqs")]
    pub max_num_seqs: Option<u64>,
    /// --max-num-batched-tokens.
    #[arg(long = "max-num-batched-tokens")]
    pub max_num_batched_tokens: Option<u64>,
    /// --block-size.
    #[arg(long = "block-size")]
    pub block_size: Option<u64>,
    /// --enable-expert-parallel (MoE experts split by expert over the TP ranks).
    #[arg(long = "enable-expert-parallel")]
    pub enable_expert_parallel: bool,
    /// Print only the launch command of one engine, ready to paste: vllm, sglang, trtllm,
    /// transformers, llama_cpp (the plan's, or the plan with its first fix when it does not
    /// start).
    #[arg(long = "print-command", value_parser = ["vllm", "sglang", "trtllm", "transformers", "llama_cpp"])]
    pub print_command: Option<String>,
    /// As VLLM_ALLOW_LONG_MAX_MODEL_LEN=1: accept a --max-model-len above the model's maximum.
    #[arg(long = "allow-long-max-model-len")]
    pub allow_long_max_model_len: bool,
    /// Target decode tokens/s per user (picks a wider layout if needed).
    #[arg(long = "target-tokens-per-s")]
    pub target_tokens_per_s: Option<f64>,
    /// Longest acceptable time to first token, ms (picks a wider layout if needed).
    #[arg(long = "max-ttft-ms")]
    pub max_ttft_ms: Option<f64>,
    /// Requests per second arriving (Poisson); sizes replicas so they keep up (users then
    /// count for nothing).
    #[arg(long = "request-rate")]
    pub request_rate: Option<f64>,
    /// Fraction of each prompt found in the prefix cache (0–1).
    #[arg(long = "prefix-cache-hit-rate")]
    pub prefix_cache_hit_rate: Option<f64>,
    /// Engine: vllm (= vllm-0.19), vllm-0.16, sglang, trtllm, transformers, llama.cpp.
    #[arg(long, default_value = "vllm")]
    pub engine: String,
    /// Concurrent users.
    #[arg(long, default_value_t = 1)]
    pub users: u64,
    /// Prompt tokens per request.
    #[arg(long = "prompt-tokens", default_value_t = 1024)]
    pub prompt_tokens: u64,
    /// Output tokens per request.
    #[arg(long = "output-tokens", default_value_t = 256)]
    pub output_tokens: u64,
    /// The Hub revision (branch, tag or commit) of a repo id the catalog lacks, imported
    /// from the Hugging Face Hub (HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE, VRAMFIT_CACHE_DIR).
    #[arg(long)]
    pub revision: Option<String>,
    /// Multimodal limits, LoRA, speculative decoding and the smaller vLLM flags.
    #[command(flatten)]
    pub features: FeatureArgs,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
    /// Show GB (10^9) instead of GiB (2^30).
    #[arg(long)]
    pub decimal: bool,
}

/// The deployment features (issue 18), spelled as `vllm serve` spells them; each value goes
/// through the core's input table. The JSON flags are read onto the same rows as the
/// single-value ones (`--limit-mm-per-prompt '{"image": 2}'` = `--images-per-prompt 2`).
#[derive(Args, Clone, Default)]
pub struct FeatureArgs {
    /// --limit-mm-per-prompt: items per prompt by modality, e.g. '{"image": 2, "video": 0}'.
    #[arg(long = "limit-mm-per-prompt")]
    pub limit_mm_per_prompt: Option<String>,
    /// --mm-processor-kwargs: the processor's resolution, e.g. '{"max_pixels": 1003520}' or
    /// '{"num_frames": 16}'.
    #[arg(long = "mm-processor-kwargs")]
    pub mm_processor_kwargs: Option<String>,
    /// Images per prompt (as --limit-mm-per-prompt's "image").
    #[arg(long = "images-per-prompt")]
    pub images_per_prompt: Option<String>,
    /// Videos per prompt (as --limit-mm-per-prompt's "video").
    #[arg(long = "videos-per-prompt")]
    pub videos_per_prompt: Option<String>,
    /// Audio clips per prompt (as --limit-mm-per-prompt's "audio").
    #[arg(long = "audios-per-prompt")]
    pub audios_per_prompt: Option<String>,
    /// Frames sampled per video (as --mm-processor-kwargs' "num_frames").
    #[arg(long = "video-frames")]
    pub video_frames: Option<String>,
    /// Pixels per image at most (as --mm-processor-kwargs' "max_pixels", Qwen-VL family).
    #[arg(long = "max-pixels")]
    pub max_pixels: Option<String>,
    /// --mm-encoder-tp-mode: weights (the encoder sharded over TP, vLLM's default) or data
    /// (whole on every rank).
    #[arg(long = "mm-encoder-tp-mode")]
    pub mm_encoder_tp_mode: Option<String>,
    /// --skip-mm-profiling: no multimodal reservation (vLLM then leaves the headroom to you).
    #[arg(long = "skip-mm-profiling")]
    pub skip_mm_profiling: bool,
    /// --language-model-only (vLLM ≥ 0.17): every modality off, the encoder not loaded.
    #[arg(long = "language-model-only")]
    pub language_model_only: bool,
    /// --enable-lora: pre-allocate LoRA adapter slots.
    #[arg(long = "enable-lora")]
    pub enable_lora: bool,
    /// --max-loras: adapters in one batch (slots per GPU; vLLM default 1).
    #[arg(long = "max-loras")]
    pub max_loras: Option<String>,
    /// --max-lora-rank (vLLM default 16).
    #[arg(long = "max-lora-rank")]
    pub max_lora_rank: Option<String>,
    /// --max-cpu-loras: adapters cached in host memory (default: --max-loras).
    #[arg(long = "max-cpu-loras")]
    pub max_cpu_loras: Option<String>,
    /// --fully-sharded-loras: shard the LoRA A matrices over TP too.
    #[arg(long = "fully-sharded-loras")]
    pub fully_sharded_loras: bool,
    /// --lora-target-modules (vLLM 0.19): the modules wrapped, e.g. q_proj,v_proj (default:
    /// every module the model supports).
    #[arg(long = "lora-target-modules", num_args = 1.., value_delimiter = ',')]
    pub lora_target_modules: Vec<String>,
    /// --speculative-config: e.g. '{"method": "eagle3", "model": "…", "num_speculative_tokens": 3}'.
    #[arg(long = "speculative-config")]
    pub speculative_config: Option<String>,
    /// Speculative method: ngram, eagle, eagle3, mtp, draft_model (as the config's "method").
    #[arg(long = "speculative-method")]
    pub speculative_method: Option<String>,
    /// Tokens drafted per step (as the config's "num_speculative_tokens").
    #[arg(long = "num-speculative-tokens")]
    pub num_speculative_tokens: Option<String>,
    /// The draft model (as the config's "model"): catalog id, alias or repo id.
    #[arg(long = "speculative-model")]
    pub speculative_model: Option<String>,
    /// Probability each drafted token is accepted (default: the method's sourced figure).
    #[arg(long = "acceptance-rate")]
    pub acceptance_rate: Option<String>,
    /// --enforce-eager: no CUDA graphs (no graph memory, a slower step).
    #[arg(long = "enforce-eager")]
    pub enforce_eager: bool,
    /// --cpu-offload-gb: GiB of weights per GPU kept in host memory.
    #[arg(long = "cpu-offload-gb")]
    pub cpu_offload_gb: Option<String>,
    /// --swap-space: GiB of host memory per GPU for swapped KV blocks.
    #[arg(long = "swap-space")]
    pub swap_space: Option<String>,
    /// --enable-prefix-caching (vLLM V1's default).
    #[arg(
        long = "enable-prefix-caching",
        conflicts_with = "no_enable_prefix_caching"
    )]
    pub enable_prefix_caching: bool,
    /// --no-enable-prefix-caching: the prefix-cache hit rate then counts for nothing.
    #[arg(long = "no-enable-prefix-caching")]
    pub no_enable_prefix_caching: bool,
    /// --kv-cache-memory-bytes: the KV pool per GPU, set directly (`20G` = 20 GiB).
    #[arg(long = "kv-cache-memory-bytes")]
    pub kv_cache_memory_bytes: Option<String>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Find {
    Gpus,
    Context,
    Concurrency,
    Cheapest,
}

#[derive(Args, Clone)]
pub struct FitArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// What to find.
    #[arg(long, value_enum)]
    pub find: Find,
}

#[derive(Args, Clone)]
pub struct ScaleArgs {
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Input length for max-load throughput.
    #[arg(long = "input-len")]
    pub input_len: Option<u64>,
    /// Output length for max-load throughput.
    #[arg(long = "output-len")]
    pub output_len: Option<u64>,
    /// Requests in flight per layout (instead of max load or the users).
    #[arg(long, conflicts_with = "request_rate")]
    pub concurrency: Option<u64>,
    /// Use PCIe instead of the GPU's own interconnect.
    #[arg(long)]
    pub pcie: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(args: &[&str]) -> PlanArgs {
        let argv = ["vramfit", "plan"].into_iter().chain(args.iter().copied());
        match Cli::try_parse_from(argv).unwrap().cmd {
            Cmd::Plan(a) => a,
            _ => unreachable!(),
        }
    }

    #[test]
    fn plan_defaults_are_vllms() {
        let a = plan(&["m", "--gpu", "g"]);
        assert_eq!((a.model.as_str(), a.gpu.as_str()), ("m", "g"));
        assert_eq!(a.kv_cache_dtype, "auto");
        assert_eq!(a.engine, "vllm");
        assert_eq!((a.users, a.prompt_tokens, a.output_tokens), (1, 1024, 256));
        assert!(a.tensor_parallel_size.is_none() && a.max_model_len.is_none());
        assert!(!a.json && !a.decimal && !a.enable_expert_parallel);
    }

    #[test]
    fn parallel_sizes_have_vllm_spellings_and_aliases() {
        for t in [["--tensor-parallel-size", "2"], ["--tp", "2"], ["-t", "2"]] {
            assert_eq!(
                plan(&["m", "--gpu", "g", t[0], t[1]]).tensor_parallel_size,
                Some(2)
            );
        }
        for p in [["--pipeline-parallel-size", "3"], ["--pp", "3"]] {
            assert_eq!(
                plan(&["m", "--gpu", "g", p[0], p[1]]).pipeline_parallel_size,
                Some(3)
            );
        }
    }

    #[test]
    fn check_takes_a_command_instead_of_a_model() {
        let argv = [
            "vramfit",
            "check",
            "--command",
            "vllm serve m",
            "--gpu",
            "g",
            "--users",
            "4",
        ];
        let Cmd::Check(a) = Cli::try_parse_from(argv).unwrap().cmd else {
            unreachable!()
        };
        assert_eq!(a.command.as_deref(), Some("vllm serve m"));
        assert_eq!((a.model.as_str(), a.users), ("", 4));
        // The flags the command sets cannot be given beside it.
        for extra in [
            &["m"][..],
            &["--tensor-parallel-size", "2"],
            &["--engine", "sglang"],
        ] {
            let argv = ["vramfit", "check", "--command", "x", "--gpu", "g"]
                .into_iter()
                .chain(extra.iter().copied());
            assert!(Cli::try_parse_from(argv).is_err(), "{extra:?}");
        }
        // Without either, the model is still required.
        assert!(Cli::try_parse_from(["vramfit", "check", "--gpu", "g"]).is_err());
    }

    #[test]
    fn every_command_parses() {
        for argv in [
            &["check", "m", "--gpu", "g"][..],
            &["fit", "m", "--gpu", "g", "--find", "cheapest"],
            &[
                "scale",
                "m",
                "--gpu",
                "g",
                "--input-len",
                "1",
                "--output-len",
                "2",
                "--pcie",
            ],
            &["scale", "m", "--gpu", "g", "--concurrency", "4"],
            &["scale", "m", "--gpu", "g", "--request-rate", "2.5"],
            &[
                "fit",
                "m",
                "--gpu",
                "g",
                "--find",
                "gpus",
                "--request-rate",
                "3",
                "--prefix-cache-hit-rate",
                "0.5",
            ],
            &["models", "--search", "x", "--json"],
            &["gpus"],
            &["inspect", "p", "--json"],
            &["oom", "-", "--model", "m"],
            &[
                "oom", "f", "--model", "m", "--gpu", "g", "--gpus", "4", "--json",
            ],
            &["accuracy"],
        ] {
            let full = std::iter::once("vramfit").chain(argv.iter().copied());
            assert!(Cli::try_parse_from(full).is_ok(), "{argv:?}");
        }
        assert!(Cli::try_parse_from(["vramfit", "fit", "m", "--gpu", "g"]).is_err());
        let both = [
            "vramfit",
            "scale",
            "m",
            "--gpu",
            "g",
            "--concurrency",
            "2",
            "--request-rate",
            "1",
        ];
        assert!(Cli::try_parse_from(both).is_err());
    }
}
