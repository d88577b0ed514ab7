//! "Check my command": a pasted engine launch command becomes a plan on the chosen GPU, and
//! the contradictions in it are called out before anything is started.
//!
//! # What is read
//! - `vllm serve REPO [flags]` and `python -m vllm.entrypoints.openai.api_server --model
//!   REPO …`; `python -m sglang.launch_server --model-path REPO …` (and `sglang serve`);
//!   `trtllm-serve [serve] REPO …`.
//! - Any of them as a shell line (quotes, backslash-newline continuations, `#` comments,
//!   `--flag=value`, `VAR=… ` assignments, `export`, `sudo`/`env`/`sh -c '…'`, several
//!   commands joined by `&&` or `;`), wrapped in `docker run … IMAGE …` (`-e`/`--env`,
//!   `--gpus`, `--entrypoint`; `vllm/vllm-openai[:tag]`'s entrypoint is `vllm serve`, so what
//!   follows the image is its arguments, and a `v0.N` tag picks the vLLM version;
//!   `lmsysorg/sglang` images run the command given), or as the YAML of a Kubernetes /
//!   Compose container (`command:` / `args:` block or flow lists, `env:` name/value items,
//!   `image:`). Only flags, with no program, are read as the vLLM image's arguments.
//!   Parsing is [`words`] (the text) then [`flags`] (each engine's flag table).
//!
//! # Flags
//! Every modelled flag is set through the one input table ([`crate::inputs::KEYS`],
//! [`Inputs::set`]), so a value out of range reads as it does in a link or on the CLI. The
//! engines' own spellings map onto its rows:
//!
//! | row | vLLM | SGLang | TensorRT-LLM |
//! |---|---|---|---|
//! | TP | `--tensor-parallel-size`, `-tp` | `--tp-size`, `--tp`, `--tensor-parallel-size` | `--tp_size` |
//! | PP | `--pipeline-parallel-size`, `-pp` | `--pp-size`, `--pipeline-parallel-size` | `--pp_size` |
//! | length | `--max-model-len` (`32k`, `32K`) | `--context-length` | `--max_seq_len` |
//! | memory fraction | `--gpu-memory-utilization` | `--mem-fraction-static` | `--kv_cache_free_gpu_memory_fraction` |
//! | KV dtype | `--kv-cache-dtype` | `--kv-cache-dtype` | – (checkpoint) |
//! | sequences | `--max-num-seqs` | `--max-running-requests` | `--max_batch_size` |
//! | batched tokens | `--max-num-batched-tokens` | `--chunked-prefill-size` | `--max_num_tokens` |
//! | block | `--block-size` | `--page-size` | – |
//! | format | `--quantization`/`-q`, `--dtype` | `--quantization`, `--dtype` | – (checkpoint) |
//! | expert parallel | `--enable-expert-parallel` | `--ep-size` > 1 | `--ep_size` > 1 |
//! | data parallel ([`Command::data_parallel`], not a row: the plan sizes one rank) | `--data-parallel-size`, `-dp`; the ranks on this node `--data-parallel-size-local`, `-dpl`, or one with `--data-parallel-rank`, `-dpn` | `--dp-size`, `--dp`, `--data-parallel-size` | – |
//! | LoRA | `--enable-lora`, `--max-loras`, `--max-lora-rank`, `--max-cpu-loras`, `--fully-sharded-loras` | – | – |
//! | multimodal | `--limit-mm-per-prompt`, `--mm-processor-kwargs` (JSON, onto their rows) | – | – |
//! | speculative | `--speculative-config` (JSON: `method`, `model`, `num_speculative_tokens`) | – | – |
//! | eager | `--enforce-eager` | `--disable-cuda-graph` | – |
//! | offload, swap, KV size | `--cpu-offload-gb`, `--swap-space`, `--kv-cache-memory-bytes` | – | – |
//! | prefix caching off | `--no-enable-prefix-caching` | `--disable-radix-cache` | – |
//! | vLLM's own length | `--max-model-len -1` / `auto` | – | – |
//!
//! A flag left out is the engine's default: TP 1 and PP 1 (not "fewest GPUs": a command
//! runs where it is told), the model's own maximum length, the engine's fraction. vLLM
//! reads underscores in flag names as dashes (`--max_model_len`); the others do not.
//!
//! Every other flag is listed, never dropped ([`Unmodelled`]): flags known to change no
//! memory (network, logging, API keys, tokenizer, chat templates, tool and reasoning
//! parsers, chunked prefill switches, seeds) with `affects_memory`
//! false; everything else — `--max-total-tokens`, SGLang's LoRA and
//! speculative flags, keys of the JSON flags vramfit does not read, a `--quantization`
//! method that names no weight format (`compressed-tensors`, `bitsandbytes`, `gguf`), and any
//! flag vramfit does not know — with `affects_memory` true ("not modelled": the estimate
//! leaves out what it takes or saves).
//!
//! # Checks ([`Check::id`], stable)
//! - `quantization_mismatch`: vLLM infers the quantization from the checkpoint's
//!   `config.json` (`quantization_config.quant_method`, `vllm/config/model.py`
//!   `_verify_quantization`) and refuses a `--quantization` that differs ("Quantization
//!   method specified in the model config (…) does not match the quantization method
//!   specified in the `quantization` argument (…)"); SGLang's `model_config.py` does the same.
//!   An unquantized checkpoint takes only the methods that quantize at load (`fp8`,
//!   `bitsandbytes`, `experts_int8`, `ptpc_fp8`); any other (`awq`, `gptq`, `marlin`,
//!   `compressed-tensors`, `modelopt`, int8, fp4) looks for a quantization config the
//!   checkpoint does not have ("Cannot find the config file for awq",
//!   `vllm/model_executor/model_loader/weight_utils.py`). The catalog's checkpoints in the
//!   flag's format are named (`quantized_repos`).
//! - `unknown_quantization_method`: a `--quantization` value the engine has no method of.
//!   vLLM stops at start with "Unknown quantization method: …" (`vllm/config/model.py`
//!   `_verify_quantization`), SGLang's argparse with "invalid choice"
//!   (`python/sglang/srt/server_args.py` `QUANTIZATION_CHOICES`); the lists, with the
//!   snapshots they come from, are in `checks.rs`. vramfit's own format spellings (`int4`,
//!   `awq-int4`) are not engine methods.
//! - `tp_does_not_divide_heads`, `invalid_layout`, `tp_across_nodes`: the layout rules of
//!   [`crate::layout::layout_problem`] and [`crate::layout::ep_problem`].
//! - `engine_version_not_modelled` (a warning): a `vllm/vllm-openai:vX.Y` image whose version
//!   is outside [`Engine::VLLM_MODELLED`]; the command is planned at the default version.
//! - `max_model_len_above_model`: a length above the model's `max_position_embeddings`;
//!   vLLM refuses it unless `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` (`vllm/config/model.py`
//!   `_get_and_verify_max_len`), SGLang unless `SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1`
//!   (`python/sglang/srt/configs/model_config.py`); TensorRT-LLM gets a warning.
//! - `no_kv_pool`, `kv_pool_too_small`: the plan's estimate leaves no KV pool, or one too
//!   small for one request of the length ([`crate::sizing::Fit`]).
//! - `too_few_gpus`: TP × PP (× DP, [`Command::data_parallel`]) above the GPUs
//!   `CUDA_VISIBLE_DEVICES` or `docker run --gpus` makes visible.
//! - `data_parallel_replicas`, `data_parallel_not_modelled` (notes): data-parallel ranks
//!   that are whole replicas of the layout (a dense model in vLLM, any model in SGLang
//!   without `--enable-dp-attention`: no GPU's memory changes, and the flag is listed with
//!   `affects_memory` false), or ranks that share an MoE model's experts (vLLM: the expert
//!   layers form one group of DP × TP GPUs, "Data Parallel Deployment",
//!   `docs/serving/data_parallel_deployment.md`) or split SGLang's TP group
//!   (`--enable-dp-attention`), which the plan, sized at TP, does not model.
//! - `lora_rank_not_supported`, `cpu_loras_below_max_loras`: `--max-lora-rank` outside
//!   vLLM's ranks (1, 8, 16, 32, 64, 128, 256, 320, 512) and `--max-cpu-loras` below
//!   `--max-loras` (`vllm/config/lora.py`); `lora_with_expert_parallel` (fused-MoE LoRA
//!   asserts no expert parallelism, `vllm/lora/layers/fused_moe.py`); `speculative_model_missing` (EAGLE, EAGLE-3 or
//!   a draft model without its `model`) and `mtp_without_layers` (`vllm/config/
//!   speculative.py`); `architecture_removed` (Llama 3.2 Vision, removed after v0.10.2,
//!   `vllm/model_executor/models/registry.py`); `flag_newer_than_engine` (`--max-model-len
//!   -1` before v0.14, `--lora-target-modules` before v0.19, on a `vllm/vllm-openai:v0.N`
//!   image); `swap_space_ignored` (a note: V1 allocates no swap).
//! - `flags_not_modelled`: the memory-relevant flags of [`Command::unmodelled`].
//!
//! Sources for the flag spellings and defaults: vLLM `vllm/engine/arg_utils.py` (engine
//! arguments, `human_readable_int`), `vllm/config/model.py`; SGLang
//! `python/sglang/srt/server_args.py`; TensorRT-LLM `trtllm-serve` CLI reference
//! (`docs/source/commands/trtllm-serve.rst`: `--tp_size`, `--pp_size`, `--ep_size`,
//! `--max_batch_size`, `--max_num_tokens`, `--max_seq_len`,
//! `--kv_cache_free_gpu_memory_fraction`, `--backend`).

mod checks;
mod flags;
mod words;

pub use words::EnvVar;

use crate::catalog::Catalog;
use crate::dtype::WeightFormat;
use crate::engine::Engine;
use crate::inputs::{Inputs, MAX_COMMAND_LEN};
use crate::plan::{self, Plan, PlanError};
use serde::Serialize;

/// One flag as written, with its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flag {
    /// The flag as written (`--tp`, `--max_model_len`).
    pub flag: String,
    /// Its value (`None` for a switch).
    pub value: Option<String>,
}

/// A flag (or stray word) the check does not model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unmodelled {
    /// The flag as written.
    pub flag: String,
    /// Its value, if it took one.
    pub value: Option<String>,
    /// `false`: known to change no memory; `true`: may change memory, not in the estimate.
    pub affects_memory: bool,
}

/// A pasted command, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// The engine it starts (vLLM at v0.19 unless an image tag says otherwise).
    pub engine: Engine,
    /// The model as written (a repo id).
    pub model: String,
    /// The question it asks, set through the input table: TP and PP as given (1 when not),
    /// the length as given (the model's maximum when not), the engine's flags; the GPU and
    /// workload are the defaults until [`check`] sets them.
    pub inputs: Inputs,
    /// Every flag, in order.
    pub flags: Vec<Flag>,
    /// The flags not modelled, in order.
    pub unmodelled: Vec<Unmodelled>,
    /// Environment variables seen.
    pub env: Vec<EnvVar>,
    /// `--quantization` as written (lower case).
    pub quantization: Option<String>,
    /// `--dtype` as written (lower case).
    pub dtype: Option<String>,
    /// `docker run --gpus` as written.
    pub docker_gpus: Option<String>,
    /// Data-parallel ranks (vLLM `--data-parallel-size`, SGLang `--dp-size`); 1 when not
    /// given. Each rank is a TP × PP group of its own, except SGLang's with
    /// `--enable-dp-attention`, whose ranks split the TP group.
    pub data_parallel: u64,
    /// The data-parallel ranks this command runs on its node when it runs fewer than all
    /// (vLLM `--data-parallel-size-local`, or one with `--data-parallel-rank`, multi-node
    /// deployments); `None`: all of them.
    pub data_parallel_local: Option<u64>,
    /// The container image, when one is named.
    pub image: Option<String>,
}

impl Command {
    /// The value of an environment variable, when set with one.
    #[must_use]
    pub fn env_value(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .rev()
            .find(|e| e.name == name)
            .and_then(|e| e.value.as_deref())
    }
}

/// How bad a contradiction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The engine refuses to start (or stops while starting).
    WillNotStart,
    /// It starts, but not as the command suggests.
    Warning,
    /// Worth knowing (flags not modelled).
    Note,
}

/// One contradiction in a command.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// Stable snake_case id (see the module docs).
    pub id: &'static str,
    /// The flags (or variables) involved, as written (`--tensor-parallel-size 3`).
    pub flags: Vec<String>,
    /// Plain words, with numbers. Untrusted text: show it as text, never as markup.
    pub message: String,
    /// How bad it is.
    pub severity: Severity,
}

/// A command planned on a GPU, with its contradictions.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandCheck {
    /// The command as read; its `inputs` are the ones planned (GPU and workload set).
    pub command: Command,
    /// The plan of those inputs.
    pub plan: Plan,
    /// The contradictions, most serious first.
    pub checks: Vec<Check>,
    /// The one answer: "starts: " and the plan's verdict, or "will not start: " and the
    /// first reason (a check that says so, else the plan's verdict).
    pub verdict: String,
}

impl CommandCheck {
    /// Whether the command starts: the plan starts and no check says it will not.
    #[must_use]
    pub fn starts(&self) -> bool {
        self.plan.estimate.fit.starts()
            && !self
                .checks
                .iter()
                .any(|c| c.severity == Severity::WillNotStart)
    }
}

/// Why a command could not be checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum CommandError {
    /// Nothing was pasted.
    Empty,
    /// Longer than [`MAX_COMMAND_LEN`] characters.
    TooLong,
    /// A quote opened and never closed.
    UnclosedQuote {
        /// The quote character.
        quote: char,
    },
    /// No engine command in the text.
    NoEngine {
        /// The first word seen, if any.
        first: Option<String>,
    },
    /// The engine command names no model.
    NoModel {
        /// The engine family.
        engine: &'static str,
    },
    /// A flag that needs a value has none.
    MissingValue {
        /// The flag as written.
        flag: String,
    },
    /// A word that starts with a typographic dash (`—tensor-parallel-size`: a word processor
    /// or chat turned `--` into a dash): Python's argparse, which all three engines parse
    /// their flags with, takes only `-` as a flag's prefix (`prefix_chars`), so the word is an
    /// argument it does not know, and the server stops with "unrecognized arguments".
    DashTypo {
        /// The word as written.
        written: String,
        /// The flag it was meant to be.
        meant: String,
    },
    /// A value the input table refuses.
    BadValue {
        /// The flag as written.
        flag: String,
        /// The input table's message.
        message: String,
    },
    /// The catalog does not know the model.
    UnknownModel {
        /// The model as written.
        name: String,
        /// The closest catalog ids and repo ids.
        closest: Vec<String>,
    },
    /// The plan could not be made (unknown GPU, unusable catalog entry).
    Plan(String),
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => f.write_str("paste a `vllm serve`, `python -m sglang.launch_server` or `trtllm-serve` command"),
            Self::TooLong => write!(f, "the command is longer than {MAX_COMMAND_LEN} characters"),
            Self::UnclosedQuote { quote } => write!(f, "a {quote} quote is never closed"),
            Self::NoEngine { first } => {
                f.write_str("no `vllm serve`, `python -m vllm.entrypoints.openai.api_server`, `python -m sglang.launch_server` or `trtllm-serve` command found")?;
                match first {
                    Some(w) => write!(f, " (the command runs `{w}`)"),
                    None => Ok(()),
                }
            }
            Self::NoModel { engine } => write!(
                f,
                "the {engine} command names no model (vLLM: `vllm serve REPO` or `--model`; SGLang: `--model-path`; TensorRT-LLM: `trtllm-serve REPO`)"
            ),
            Self::MissingValue { flag } => write!(f, "`{flag}` needs a value"),
            Self::DashTypo { written, meant } => write!(
                f,
                "`{written}` starts with a typographic dash, not `-`: the engine's argument parser does not read it as a flag and stops (\"unrecognized arguments\"); write `{meant}`"
            ),
            Self::BadValue { flag, message } => write!(f, "`{flag}`: {message}"),
            Self::UnknownModel { name, closest } => {
                let path = name.starts_with(['/', '.', '~']);
                write!(f, "unknown model `{name}`")?;
                if path {
                    f.write_str(" (a local path: the catalog knows models by Hugging Face repo id)")?;
                }
                write!(f, "; closest: {}", closest.join(", "))
            }
            Self::Plan(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for CommandError {}

/// The engine and its arguments (after the program words).
fn engine_of(words: &[String]) -> Option<(Engine, &[String])> {
    if !words::is_engine_start(words) {
        return None;
    }
    let b = words::base(&words[0]);
    Some(match b {
        "vllm" => (Engine::DEFAULT, &words[2..]),
        "sglang" => (Engine::Sglang, &words[2..]),
        "trtllm-serve" => {
            let skip = if words.get(1).is_some_and(|w| w == "serve") {
                2
            } else {
                1
            };
            (Engine::TrtLlm, &words[skip..])
        }
        _ if words[2].starts_with("vllm") => (Engine::DEFAULT, &words[3..]),
        _ => (Engine::Sglang, &words[3..]),
    })
}

/// Reads a pasted command. No catalog is consulted: the model is as written.
///
/// # Errors
/// What is wrong, naming it: nothing pasted, an unclosed quote, no engine command, no model,
/// a flag without its value, a value the input table refuses (the table's own message).
///
/// # Example
/// ```
/// use vramfit_core::command::parse;
/// let c = parse("vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2 --max-model-len=32k").unwrap();
/// assert_eq!(c.model, "meta-llama/Llama-3.1-8B-Instruct");
/// assert_eq!(c.inputs.tensor_parallel_size, Some(2));
/// assert_eq!(c.inputs.flags.max_model_len, Some(32_000));
/// ```
pub fn parse(text: &str) -> Result<Command, CommandError> {
    if text.trim().is_empty() {
        return Err(CommandError::Empty);
    }
    if text.chars().count() > MAX_COMMAND_LEN {
        return Err(CommandError::TooLong);
    }
    let w = words::read(text)?;
    let Some((mut engine, args)) = engine_of(&w.words) else {
        return Err(CommandError::NoEngine {
            first: w.words.first().cloned(),
        });
    };
    // A `vllm/vllm-openai:v0.16.0` image names the version.
    if let (Engine::Vllm { .. }, Some(tag)) = (
        engine,
        w.image
            .as_deref()
            .and_then(|i| i.rsplit_once(':'))
            .map(|x| x.1),
    ) {
        if let Some(v) = Engine::parse(&format!("vllm-{tag}")) {
            engine = v;
        }
    }
    let mut c = flags::read(engine, args)?;
    c.env = w.env;
    c.docker_gpus = w.docker_gpus;
    c.image = w.image;
    Ok(c)
}

/// The closest catalog ids and repo ids to a name.
fn closest(cat: &Catalog, name: &str) -> Vec<String> {
    let ids = cat.models.iter().flat_map(|m| {
        std::iter::once(m.id.as_str())
            .chain(m.hf_repo_ids.iter().map(String::as_str))
            .chain(m.quantized_repos.iter().map(|q| q.repo.as_str()))
    });
    Catalog::closest(ids, name, 5)
}

/// Reads a pasted command and plans it on `base`'s GPU for `base`'s workload; the engine's
/// version follows `base` when the command names none (an image tag).
///
/// # Errors
/// The errors of [`parse`]; a model the catalog does not know (with the closest ids); an
/// unknown GPU.
///
/// # Example
#[cfg_attr(feature = "bundled", doc = "```")]
#[cfg_attr(not(feature = "bundled"), doc = "```ignore")]
/// use vramfit_core::{catalog::Catalog, command::check, plan::Inputs};
/// let cat = Catalog::bundled();
/// let c = check(&cat, &Inputs::default(), "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --quantization awq").unwrap();
/// assert_eq!(c.checks[0].id, "quantization_mismatch");
/// assert!(!c.starts());
/// ```
pub fn check(cat: &Catalog, base: &Inputs, text: &str) -> Result<CommandCheck, CommandError> {
    let mut c = parse(text)?;
    let m = cat
        .model(&c.model)
        .ok_or_else(|| CommandError::UnknownModel {
            name: c.model.clone(),
            closest: closest(cat, &c.model),
        })?;
    let gpu = plan::resolve_gpu(cat, &base.gpu).map_err(|e| CommandError::Plan(e.to_string()))?;
    c.inputs.gpu.clone_from(&base.gpu);
    c.inputs.workload = base.workload;
    // The env var that lets the engine take a length above the model's.
    let long = match c.engine {
        Engine::Vllm { .. } => Some("VLLM_ALLOW_LONG_MAX_MODEL_LEN"),
        Engine::Sglang => Some("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN"),
        _ => None,
    };
    if long.and_then(|v| c.env_value(v)).is_some_and(truthy) {
        c.inputs.flags.allow_long_max_model_len = true;
    }
    let tagged = c.image.as_deref().is_some_and(|i| i.contains(':'));
    if !tagged && base.flags.engine.family() == c.engine.family() {
        c.inputs.flags.engine = base.flags.engine;
        c.engine = base.flags.engine;
    }
    // A quantized checkpoint loads in its own format: a flag of the same kind (or `--dtype`,
    // which then sets the activations) changes nothing.
    let checkpoint = m.format.unwrap_or_else(|| m.model.native_format());
    if checkpoint.is_quantized() {
        let same = c
            .inputs
            .format
            .is_some_and(|f| checks::family(f) == checks::family(checkpoint));
        if same || c.quantization.is_none() {
            c.inputs.format = None;
        }
    }
    let arch = m
        .model
        .arch()
        .map_err(|e| CommandError::Plan(PlanError::BadModel(e.to_string()).to_string()))?;
    // Data-parallel replicas of the layout change no GPU's memory (`checks::data_parallel`).
    if !checks::dp_changes_memory(&c, &arch) {
        let engine = c.engine;
        for u in &mut c.unmodelled {
            u.affects_memory &= !flags::sets_data_parallel(engine, &u.flag);
        }
    }
    let p = plan::plan(cat, &c.inputs).map_err(|e| CommandError::Plan(e.to_string()))?;
    let checks = checks::run(&c, &m, checkpoint, gpu, &arch, &p);
    let blocking: Vec<&Check> = checks
        .iter()
        .filter(|k| k.severity == Severity::WillNotStart)
        .collect();
    let verdict = match (p.run.is_some(), blocking.first()) {
        (true, None) => format!("the command starts: {}", p.verdict),
        (_, Some(k)) if p.run.is_some() || p.estimate.refusal.is_none() => {
            let more = blocking.len() - 1;
            let tail = if more > 0 {
                format!(" (and {more} more reason(s) below)")
            } else {
                String::new()
            };
            format!("the command will not start: {}{tail}", k.message)
        }
        _ => format!("the command {}", p.verdict),
    };
    Ok(CommandCheck {
        command: c,
        plan: p,
        checks,
        verdict,
    })
}

/// [`check`] on a GPU with the default workload.
///
/// # Errors
/// As [`check`].
pub fn check_command(cat: &Catalog, gpu: &str, text: &str) -> Result<CommandCheck, CommandError> {
    let base = Inputs {
        gpu: gpu.to_string(),
        ..Inputs::default()
    };
    check(cat, &base, text)
}

/// Whether an environment value turns a switch on (`1`, `true`, as vLLM and SGLang read it).
fn truthy(v: &str) -> bool {
    matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true")
}

/// The weight format a `--quantization` value names, if any.
fn format_of(method: &str) -> Option<WeightFormat> {
    WeightFormat::parse(method).filter(|f| f.is_quantized())
}

#[cfg(all(test, feature = "bundled"))] // the tests read the embedded catalog
mod tests;
