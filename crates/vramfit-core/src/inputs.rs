//! One input model: the question as the user states it, and one table that describes every
//! input once.
//!
//! - [`EngineFlags`] are the serving engine's flags (`vllm serve` spelling) and [`Workload`]
//!   the traffic; both [`Inputs`] (what the user states) and [`crate::sizing::Scenario`]
//!   (one resolved sizing question) embed them, so the field list is written once.
//! - [`KEYS`] has one row per input: its field, URL key, CLI flag, UI label, unit, range and
//!   default. The URL codec ([`crate::share`]), the CLI's validation and the UI fields'
//!   limits are derived from it, and [`Inputs::set`] is the one parser and range check, so an
//!   out-of-range value gets the same message in all three.
//!
//! Adding an input: the field (in [`EngineFlags`], [`Workload`] or [`Inputs`]), its row in
//! [`KEYS`] with a [`Field`] variant, its arms in [`Inputs::text`] / [`Inputs::set`], and the
//! code that uses it.
//!
//! Ranges: the whole-number inputs are bounded where vLLM itself refuses or where the model
//! stops meaning anything (`--gpu-memory-utilization` below 0.05 leaves no room for weights
//! on any catalog GPU; `--block-size` above 1024 is beyond every engine's kernels; TP/PP up
//! to 128 GPUs). Anything the table accepts must be sized without a panic (the `share_link`
//! fuzz target checks it).

use crate::dtype::{KvDtype, WeightFormat};
use crate::engine::Engine;
use serde::Serialize;

/// The serving engine's flags that change memory or speed (`vllm serve` spelling).
/// `None` means the engine's default for the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EngineFlags {
    /// `--kv-cache-dtype`.
    pub kv_dtype: KvDtype,
    /// Engine whose accounting to follow.
    pub engine: Engine,
    /// `--gpu-memory-utilization` (or the engine's fraction); `None` = engine default.
    pub gpu_memory_utilization: Option<f64>,
    /// `--max-model-len`; `None` = the model's `max_position_embeddings`.
    pub max_model_len: Option<u64>,
    /// `--max-num-seqs`; `None` = engine default for the GPU.
    pub max_num_seqs: Option<u64>,
    /// `--max-num-batched-tokens`; `None` = engine default for the GPU.
    pub max_num_batched_tokens: Option<u64>,
    /// `--block-size`; `None` = engine default.
    pub block_size: Option<u64>,
    /// `--enable-expert-parallel`: experts are split over the TP ranks by expert instead of
    /// by slice (same bytes per GPU; the expert count must divide over the ranks).
    pub expert_parallel: bool,
    /// `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` (SGLang: `SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1`):
    /// the engine takes a `--max-model-len` above the model's `max_position_embeddings`.
    pub allow_long_max_model_len: bool,
}

impl Default for EngineFlags {
    /// The engine's defaults, vLLM V1 (v0.19), context = the model's maximum.
    fn default() -> Self {
        Self {
            kv_dtype: KvDtype::Auto,
            engine: Engine::DEFAULT,
            gpu_memory_utilization: None,
            max_model_len: None,
            max_num_seqs: None,
            max_num_batched_tokens: None,
            block_size: None,
            expert_parallel: false,
            allow_long_max_model_len: false,
        }
    }
}

/// The traffic one deployment serves.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Workload {
    /// Concurrent users (requests in flight).
    pub users: u64,
    /// Prompt tokens per request.
    pub prompt_tokens: u64,
    /// Output tokens per request.
    pub output_tokens: u64,
    /// Target decode tokens/s per user.
    pub target_tokens_per_s: Option<f64>,
    /// Longest acceptable time to first token, ms.
    pub max_ttft_ms: Option<f64>,
    /// Requests per second arriving (Poisson); `None` = `users` requests always in flight.
    pub request_rate: Option<f64>,
    /// Fraction of each prompt the engine's prefix cache already holds (0–1); `None` = 0.
    pub prefix_cache_hit_rate: Option<f64>,
}

impl Default for Workload {
    /// One user, a 1024-token prompt, 256 output tokens, no speed target.
    fn default() -> Self {
        Self {
            users: 1,
            prompt_tokens: 1024,
            output_tokens: 256,
            target_tokens_per_s: None,
            max_ttft_ms: None,
            request_rate: None,
            prefix_cache_hit_rate: None,
        }
    }
}

/// The scenario as the user states it. Every field has a default; see [`Inputs::default`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Inputs {
    /// Catalog model id, alias or Hugging Face repo id.
    pub model: String,
    /// Catalog GPU id or alias.
    pub gpu: String,
    /// Weight format; `None` = what the model id implies (native or its quantized repo).
    pub format: Option<WeightFormat>,
    /// `--tensor-parallel-size`; `None` = fewest GPUs.
    pub tensor_parallel_size: Option<u64>,
    /// `--pipeline-parallel-size`; `None` = fewest GPUs.
    pub pipeline_parallel_size: Option<u64>,
    /// The engine's flags.
    #[serde(flatten)]
    pub flags: EngineFlags,
    /// The traffic.
    #[serde(flatten)]
    pub workload: Workload,
    /// A pasted engine launch command to check ([`crate::command`]); empty = none. It rides
    /// in the URL so a share link carries it; the plan itself never reads it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub command: String,
}

impl Default for Inputs {
    fn default() -> Self {
        Self {
            model: "llama-3.1-8b".into(),
            gpu: "h100-sxm".into(),
            format: None,
            tensor_parallel_size: None,
            pipeline_parallel_size: None,
            flags: EngineFlags {
                max_model_len: Some(8192),
                ..EngineFlags::default()
            },
            workload: Workload::default(),
            command: String::new(),
        }
    }
}

/// Every input, one variant each (the rows of [`KEYS`], in their order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// [`Inputs::model`].
    Model,
    /// [`Inputs::gpu`].
    Gpu,
    /// [`Inputs::format`].
    Format,
    /// [`EngineFlags::kv_dtype`].
    KvDtype,
    /// [`EngineFlags::engine`].
    Engine,
    /// [`EngineFlags::gpu_memory_utilization`].
    GpuMemoryUtilization,
    /// [`EngineFlags::max_model_len`].
    MaxModelLen,
    /// [`EngineFlags::max_num_seqs`].
    MaxNumSeqs,
    /// [`EngineFlags::max_num_batched_tokens`].
    MaxNumBatchedTokens,
    /// [`EngineFlags::block_size`].
    BlockSize,
    /// [`Inputs::tensor_parallel_size`].
    TensorParallelSize,
    /// [`Inputs::pipeline_parallel_size`].
    PipelineParallelSize,
    /// [`Workload::users`].
    Users,
    /// [`Workload::prompt_tokens`].
    PromptTokens,
    /// [`Workload::output_tokens`].
    OutputTokens,
    /// [`Workload::target_tokens_per_s`].
    TargetTokensPerS,
    /// [`Workload::max_ttft_ms`].
    MaxTtftMs,
    /// [`Workload::request_rate`].
    RequestRate,
    /// [`Workload::prefix_cache_hit_rate`].
    PrefixCacheHitRate,
    /// [`EngineFlags::expert_parallel`].
    ExpertParallel,
    /// [`EngineFlags::allow_long_max_model_len`].
    AllowLongMaxModelLen,
    /// [`Inputs::command`].
    Command,
}

/// What values an input takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// Free text: a catalog id, alias or repo id (must not be empty), or the pasted launch
    /// command (may be empty: no command; at most [`MAX_COMMAND_LEN`] characters).
    Text,
    /// One of a list of ids (formats, dtypes, engines).
    Choice,
    /// A whole number in `min..=max`.
    Int {
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// A decimal number in `min..=max`.
    Float {
        /// Smallest accepted value.
        min: f64,
        /// Largest accepted value.
        max: f64,
    },
    /// On or off (`1`/`0`, `true`/`false`).
    Flag,
}

/// One input, described once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Key {
    /// The field it sets.
    pub field: Field,
    /// URL query key (stable: links in the wild use it).
    pub url: &'static str,
    /// CLI flag, as `vllm serve` spells it where vLLM has one.
    pub flag: &'static str,
    /// UI label.
    pub label: &'static str,
    /// Unit of the value (empty when it has none).
    pub unit: &'static str,
    /// Accepted values.
    pub range: Range,
    /// The default, as the URL writes it (empty = none: engine default or automatic).
    pub default: &'static str,
    /// `auto` is accepted and means "no value" (the engine's default, fewest GPUs, the
    /// model's maximum).
    pub auto: bool,
}

/// Every input. The URL codec writes keys in this order.
pub const KEYS: [Key; 22] = [
    Key {
        field: Field::Model,
        url: "model",
        flag: "model",
        label: "Model",
        unit: "",
        range: Range::Text,
        default: "llama-3.1-8b",
        auto: false,
    },
    Key {
        field: Field::Gpu,
        url: "gpu",
        flag: "--gpu",
        label: "GPU",
        unit: "",
        range: Range::Text,
        default: "h100-sxm",
        auto: false,
    },
    Key {
        field: Field::Format,
        url: "quant",
        flag: "--quantization",
        label: "Weights",
        unit: "",
        range: Range::Choice,
        default: "",
        auto: true,
    },
    Key {
        field: Field::KvDtype,
        url: "kv",
        flag: "--kv-cache-dtype",
        label: "KV cache",
        unit: "",
        range: Range::Choice,
        default: "auto",
        auto: false,
    },
    Key {
        field: Field::Engine,
        url: "engine",
        flag: "--engine",
        label: "Engine",
        unit: "",
        range: Range::Choice,
        default: "vllm-0.19",
        auto: false,
    },
    Key {
        field: Field::GpuMemoryUtilization,
        url: "util",
        flag: "--gpu-memory-utilization",
        label: "GPU memory utilization",
        unit: "fraction",
        range: Range::Float {
            min: 0.05,
            max: 1.0,
        },
        default: "",
        auto: false,
    },
    Key {
        field: Field::MaxModelLen,
        url: "len",
        flag: "--max-model-len",
        label: "Context length",
        unit: "tokens",
        range: Range::Int {
            min: 1,
            max: 1 << 24,
        },
        default: "8192",
        auto: true,
    },
    Key {
        field: Field::MaxNumSeqs,
        url: "seqs",
        flag: "--max-num-seqs",
        label: "Max sequences",
        unit: "requests",
        range: Range::Int {
            min: 1,
            max: 1 << 16,
        },
        default: "",
        auto: false,
    },
    Key {
        field: Field::MaxNumBatchedTokens,
        url: "batched",
        flag: "--max-num-batched-tokens",
        label: "Max batched tokens",
        unit: "tokens",
        range: Range::Int {
            min: 1,
            max: 1 << 22,
        },
        default: "",
        auto: false,
    },
    Key {
        field: Field::BlockSize,
        url: "block",
        flag: "--block-size",
        label: "KV block size",
        unit: "tokens",
        range: Range::Int { min: 1, max: 1024 },
        default: "",
        auto: false,
    },
    Key {
        field: Field::TensorParallelSize,
        url: "tp",
        flag: "--tensor-parallel-size",
        label: "Tensor parallel",
        unit: "GPUs",
        range: Range::Int { min: 1, max: 128 },
        default: "",
        auto: true,
    },
    Key {
        field: Field::PipelineParallelSize,
        url: "pp",
        flag: "--pipeline-parallel-size",
        label: "Pipeline parallel",
        unit: "GPUs",
        range: Range::Int { min: 1, max: 128 },
        default: "",
        auto: true,
    },
    Key {
        field: Field::Users,
        url: "users",
        flag: "--users",
        label: "Concurrent users",
        unit: "requests",
        range: Range::Int {
            min: 1,
            max: 1 << 20,
        },
        default: "1",
        auto: false,
    },
    Key {
        field: Field::PromptTokens,
        url: "prompt",
        flag: "--prompt-tokens",
        label: "Prompt tokens",
        unit: "tokens",
        range: Range::Int {
            min: 0,
            max: 1 << 24,
        },
        default: "1024",
        auto: false,
    },
    Key {
        field: Field::OutputTokens,
        url: "output",
        flag: "--output-tokens",
        label: "Output tokens",
        unit: "tokens",
        range: Range::Int {
            min: 1,
            max: 1 << 24,
        },
        default: "256",
        auto: false,
    },
    Key {
        field: Field::TargetTokensPerS,
        url: "tps",
        flag: "--target-tokens-per-s",
        label: "Target decode speed",
        unit: "tokens/s per user",
        range: Range::Float { min: 0.0, max: 1e6 },
        default: "",
        auto: false,
    },
    Key {
        field: Field::MaxTtftMs,
        url: "ttft",
        flag: "--max-ttft-ms",
        label: "Max time to first token",
        unit: "ms",
        range: Range::Float { min: 1.0, max: 1e7 },
        default: "",
        auto: false,
    },
    Key {
        field: Field::RequestRate,
        url: "rps",
        flag: "--request-rate",
        label: "Request rate",
        unit: "req/s",
        range: Range::Float {
            min: 0.001,
            max: 1e6,
        },
        default: "",
        auto: false,
    },
    Key {
        field: Field::PrefixCacheHitRate,
        url: "pch",
        flag: "--prefix-cache-hit-rate",
        label: "Prefix cache hit rate",
        unit: "fraction",
        range: Range::Float { min: 0.0, max: 1.0 },
        default: "",
        auto: false,
    },
    Key {
        field: Field::ExpertParallel,
        url: "ep",
        flag: "--enable-expert-parallel",
        label: "Expert parallel (MoE)",
        unit: "",
        range: Range::Flag,
        default: "",
        auto: false,
    },
    Key {
        field: Field::AllowLongMaxModelLen,
        url: "longlen",
        flag: "--allow-long-max-model-len",
        label: "Allow a context above the model's (VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)",
        unit: "",
        range: Range::Flag,
        default: "",
        auto: false,
    },
    Key {
        field: Field::Command,
        url: "cmd",
        flag: "--command",
        label: "Check my command",
        unit: "",
        range: Range::Text,
        default: "",
        auto: false,
    },
];

/// Longest pasted command accepted (characters): a Kubernetes manifest's container section
/// fits; the URL codec takes this key up to this length instead of
/// [`crate::share::MAX_VALUE_LEN`].
pub const MAX_COMMAND_LEN: usize = 8000;

/// The row of a field.
#[must_use]
pub fn key(field: Field) -> &'static Key {
    // Every Field has exactly one row (test `every_field_has_one_row`); the fallback is
    // never taken.
    KEYS.iter().find(|k| k.field == field).unwrap_or(&KEYS[0])
}

/// The row of a URL key.
#[must_use]
pub fn by_url(url: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.url == url)
}

impl Key {
    /// Checks a whole number against the row's range.
    ///
    /// # Errors
    /// The one out-of-range message: "`--block-size` must be between 1 and 1024; got 0".
    pub fn check_int(&self, n: u64) -> Result<u64, String> {
        match self.range {
            Range::Int { min, max } if n < min || n > max => Err(self.outside(&n.to_string())),
            _ => Ok(n),
        }
    }

    /// Checks a decimal number against the row's range (NaN and infinities are refused).
    ///
    /// # Errors
    /// The one out-of-range message, as [`Key::check_int`].
    pub fn check_float(&self, x: f64) -> Result<f64, String> {
        match self.range {
            Range::Float { min, max } if !x.is_finite() || x < min || x > max => {
                Err(self.outside(&x.to_string()))
            }
            _ => Ok(x),
        }
    }

    fn outside(&self, got: &str) -> String {
        format!(
            "`{}` must be between {} and {}; got {got}",
            self.flag,
            self.min_text(),
            self.max_text()
        )
    }

    /// The smallest value as text (for messages and the UI field's `min`); empty if none.
    #[must_use]
    pub fn min_text(&self) -> String {
        match self.range {
            Range::Int { min, .. } => min.to_string(),
            Range::Float { min, .. } => min.to_string(),
            _ => String::new(),
        }
    }

    /// The largest value as text (for messages and the UI field's `max`); empty if none.
    #[must_use]
    pub fn max_text(&self) -> String {
        match self.range {
            Range::Int { max, .. } => max.to_string(),
            Range::Float { max, .. } => max.to_string(),
            _ => String::new(),
        }
    }

    fn int(&self, v: &str) -> Result<u64, String> {
        let n: u64 = v
            .trim()
            .parse()
            .map_err(|_| format!("`{v}` is not a whole number"))?;
        self.check_int(n)
    }

    fn float(&self, v: &str) -> Result<f64, String> {
        let x =
            crate::decimal::parse_f64(v.trim()).ok_or_else(|| format!("`{v}` is not a number"))?;
        self.check_float(x)
    }
}

impl Inputs {
    /// A field's value as the URL writes it; `None` when it has no value (automatic, the
    /// engine's default). The model's maximum context is `auto`.
    #[must_use]
    pub fn text(&self, field: Field) -> Option<String> {
        let f = &self.flags;
        let w = &self.workload;
        let n = |x: Option<u64>| x.map(|x| x.to_string());
        match field {
            Field::Model => Some(self.model.clone()),
            Field::Gpu => Some(self.gpu.clone()),
            Field::Format => self.format.map(|x| x.id().to_string()),
            Field::KvDtype => Some(f.kv_dtype.id().to_string()),
            Field::Engine => Some(f.engine.id()),
            Field::GpuMemoryUtilization => f.gpu_memory_utilization.map(short),
            Field::MaxModelLen => Some(n(f.max_model_len).unwrap_or_else(|| "auto".into())),
            Field::MaxNumSeqs => n(f.max_num_seqs),
            Field::MaxNumBatchedTokens => n(f.max_num_batched_tokens),
            Field::BlockSize => n(f.block_size),
            Field::TensorParallelSize => n(self.tensor_parallel_size),
            Field::PipelineParallelSize => n(self.pipeline_parallel_size),
            Field::Users => Some(w.users.to_string()),
            Field::PromptTokens => Some(w.prompt_tokens.to_string()),
            Field::OutputTokens => Some(w.output_tokens.to_string()),
            Field::TargetTokensPerS => w.target_tokens_per_s.map(short),
            Field::MaxTtftMs => w.max_ttft_ms.map(short),
            Field::RequestRate => w.request_rate.map(short),
            Field::PrefixCacheHitRate => w.prefix_cache_hit_rate.map(short),
            Field::ExpertParallel => f.expert_parallel.then(|| "1".to_string()),
            Field::AllowLongMaxModelLen => f.allow_long_max_model_len.then(|| "1".to_string()),
            Field::Command => (!self.command.is_empty()).then(|| self.command.clone()),
        }
    }

    /// Parses `value` for `field` and sets it: the one parser and range check of every
    /// input (URL, CLI, UI).
    ///
    /// # Errors
    /// What is wrong with the value, naming it (`unknown KV dtype `fp4``, "`--block-size`
    /// must be between 1 and 1024; got 0"). The inputs are unchanged then.
    ///
    /// # Example
    /// ```
    /// use vramfit_core::inputs::{Field, Inputs};
    /// let mut i = Inputs::default();
    /// i.set(Field::MaxModelLen, "32768").unwrap();
    /// assert_eq!(i.flags.max_model_len, Some(32768));
    /// let e = i.set(Field::GpuMemoryUtilization, "0.03").unwrap_err();
    /// assert_eq!(e, "`--gpu-memory-utilization` must be between 0.05 and 1; got 0.03");
    /// ```
    pub fn set(&mut self, field: Field, value: &str) -> Result<(), String> {
        let k = key(field);
        let v = value.trim();
        let auto = k.auto && v == "auto";
        // An optional number left empty means "no value" (the engine's default).
        let clear = v.is_empty()
            && k.default.is_empty()
            && matches!(k.range, Range::Int { .. } | Range::Float { .. });
        let f = &mut self.flags;
        let w = &mut self.workload;
        match field {
            Field::GpuMemoryUtilization if clear => f.gpu_memory_utilization = None,
            Field::MaxNumSeqs if clear => f.max_num_seqs = None,
            Field::MaxNumBatchedTokens if clear => f.max_num_batched_tokens = None,
            Field::BlockSize if clear => f.block_size = None,
            Field::TensorParallelSize if clear => self.tensor_parallel_size = None,
            Field::PipelineParallelSize if clear => self.pipeline_parallel_size = None,
            Field::TargetTokensPerS if clear => w.target_tokens_per_s = None,
            Field::MaxTtftMs if clear => w.max_ttft_ms = None,
            Field::RequestRate if clear => w.request_rate = None,
            Field::PrefixCacheHitRate if clear => w.prefix_cache_hit_rate = None,
            Field::Model | Field::Gpu if v.is_empty() => {
                return Err(format!("{} is empty", k.label));
            }
            Field::Model => self.model = v.to_string(),
            Field::Gpu => self.gpu = v.to_string(),
            Field::Format if auto => self.format = None,
            Field::Format => {
                self.format = Some(
                    WeightFormat::parse(value)
                        .ok_or_else(|| format!("unknown format `{value}`"))?,
                );
            }
            Field::KvDtype => {
                f.kv_dtype = KvDtype::parse(value)
                    .ok_or_else(|| format!("unknown KV dtype `{value}` (auto, bf16, fp16, fp8)"))?;
            }
            Field::Engine => {
                f.engine = Engine::parse(value).ok_or_else(|| match Engine::parse_any(value) {
                    Some(Engine::Vllm { minor }) => format!(
                        "vLLM 0.{minor} is not modelled: the modelled versions are vllm-0.{} to vllm-0.{} (the V1 engine; `vllm` is vllm-0.{})",
                        Engine::VLLM_MODELLED.start(),
                        Engine::VLLM_MODELLED.end(),
                        Engine::VLLM_MODELLED.end()
                    ),
                    _ => format!(
                        "unknown engine `{value}` (vllm, vllm-0.{} to vllm-0.{}, sglang, trtllm, transformers)",
                        Engine::VLLM_MODELLED.start(),
                        Engine::VLLM_MODELLED.end()
                    ),
                })?;
            }
            Field::GpuMemoryUtilization => f.gpu_memory_utilization = Some(k.float(value)?),
            Field::MaxModelLen if auto => f.max_model_len = None,
            Field::MaxModelLen => f.max_model_len = Some(k.int(value)?),
            Field::MaxNumSeqs => f.max_num_seqs = Some(k.int(value)?),
            Field::MaxNumBatchedTokens => f.max_num_batched_tokens = Some(k.int(value)?),
            Field::BlockSize => f.block_size = Some(k.int(value)?),
            Field::TensorParallelSize if auto => self.tensor_parallel_size = None,
            Field::TensorParallelSize => self.tensor_parallel_size = Some(k.int(value)?),
            Field::PipelineParallelSize if auto => self.pipeline_parallel_size = None,
            Field::PipelineParallelSize => self.pipeline_parallel_size = Some(k.int(value)?),
            Field::Users => w.users = k.int(value)?,
            Field::PromptTokens => w.prompt_tokens = k.int(value)?,
            Field::OutputTokens => w.output_tokens = k.int(value)?,
            Field::TargetTokensPerS => w.target_tokens_per_s = Some(k.float(value)?),
            Field::MaxTtftMs => w.max_ttft_ms = Some(k.float(value)?),
            Field::RequestRate => w.request_rate = Some(k.float(value)?),
            Field::PrefixCacheHitRate => w.prefix_cache_hit_rate = Some(k.float(value)?),
            Field::ExpertParallel => f.expert_parallel = flag(value)?,
            Field::AllowLongMaxModelLen => f.allow_long_max_model_len = flag(value)?,
            Field::Command if value.chars().count() > MAX_COMMAND_LEN => {
                return Err(format!(
                    "`{}` is longer than {MAX_COMMAND_LEN} characters",
                    k.flag
                ));
            }
            // Kept as pasted (a text box must not lose the space just typed); only blank
            // text is "no command". The checker reads it, the plan does not.
            Field::Command if v.is_empty() => self.command.clear(),
            Field::Command => self.command = value.to_string(),
        }
        Ok(())
    }
}

/// An on/off value: `1`/`true` or `0`/`false`.
fn flag(value: &str) -> Result<bool, String> {
    match value.trim() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(format!("`{value}` is not 0 or 1")),
    }
}

/// A float as the shortest text that reads back to it. `Display` never writes an exponent,
/// so 3.1e-319 would be 321 characters, over [`crate::share::MAX_VALUE_LEN`] (the
/// `share_link` fuzz target found it): past 24 characters the run of zeros becomes an
/// exponent. String work on the `Display` digits, so the web bundle carries no second float
/// formatter.
#[must_use]
pub fn short(x: f64) -> String {
    let s = format!("{x}");
    if s.len() <= 24 {
        return s;
    }
    let (sign, body) = s.strip_prefix('-').map_or(("", s.as_str()), |b| ("-", b));
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = format!("{int}{frac}");
    let sig = digits.trim_start_matches('0');
    let lead = digits.len() - sig.len();
    let sig = sig.trim_end_matches('0');
    let Some(first) = sig.chars().next() else {
        return s;
    };
    // OK because: the text is a few hundred characters.
    #[allow(clippy::cast_possible_wrap)]
    let exp = int.len() as i64 - lead as i64 - 1;
    let rest = &sig[1..];
    let dot = if rest.is_empty() { "" } else { "." };
    format!("{sign}{first}{dot}{rest}e{exp}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Field; 22] = [
        Field::Model,
        Field::Gpu,
        Field::Format,
        Field::KvDtype,
        Field::Engine,
        Field::GpuMemoryUtilization,
        Field::MaxModelLen,
        Field::MaxNumSeqs,
        Field::MaxNumBatchedTokens,
        Field::BlockSize,
        Field::TensorParallelSize,
        Field::PipelineParallelSize,
        Field::Users,
        Field::PromptTokens,
        Field::OutputTokens,
        Field::TargetTokensPerS,
        Field::MaxTtftMs,
        Field::RequestRate,
        Field::PrefixCacheHitRate,
        Field::ExpertParallel,
        Field::AllowLongMaxModelLen,
        Field::Command,
    ];

    #[test]
    fn every_field_has_one_row_in_order() {
        let fields: Vec<Field> = KEYS.iter().map(|k| k.field).collect();
        assert_eq!(fields, ALL);
        for (i, a) in KEYS.iter().enumerate() {
            for b in &KEYS[i + 1..] {
                assert_ne!(a.url, b.url);
                assert_ne!(a.flag, b.flag);
            }
        }
    }

    #[test]
    fn the_table_defaults_are_the_inputs_defaults() {
        let d = Inputs::default();
        for k in &KEYS {
            assert_eq!(
                d.text(k.field).unwrap_or_default(),
                k.default,
                "{}: table default differs from Inputs::default()",
                k.url
            );
        }
    }

    #[test]
    fn every_bound_is_accepted_and_one_past_it_refused() {
        for k in &KEYS {
            let mut i = Inputs::default();
            match k.range {
                Range::Int { min, max } => {
                    assert!(i.set(k.field, &min.to_string()).is_ok(), "{}", k.url);
                    assert!(i.set(k.field, &max.to_string()).is_ok(), "{}", k.url);
                    let e = i.set(k.field, &(max + 1).to_string()).unwrap_err();
                    assert_eq!(
                        e,
                        format!(
                            "`{}` must be between {min} and {max}; got {}",
                            k.flag,
                            max + 1
                        )
                    );
                    if min > 0 {
                        assert!(i.set(k.field, &(min - 1).to_string()).is_err());
                    }
                }
                Range::Float { min, max } => {
                    assert!(i.set(k.field, &min.to_string()).is_ok(), "{}", k.url);
                    assert!(i.set(k.field, &max.to_string()).is_ok(), "{}", k.url);
                    assert!(i.set(k.field, &(max * 1.5 + 1.0).to_string()).is_err());
                    assert!(i.set(k.field, "NaN").is_err());
                }
                _ => {}
            }
        }
    }

    #[test]
    fn a_refused_value_leaves_the_inputs_unchanged() {
        let mut i = Inputs::default();
        let before = i.clone();
        for (f, v) in [
            (Field::GpuMemoryUtilization, "0.03"),
            (Field::BlockSize, "0"),
            (Field::KvDtype, "fp3"),
            (Field::Model, "  "),
            (Field::ExpertParallel, "maybe"),
            (Field::Users, "-1"),
        ] {
            assert!(i.set(f, v).is_err(), "{f:?} {v}");
            assert_eq!(i, before);
        }
    }

    #[test]
    fn an_empty_optional_number_is_the_engine_default() {
        let mut i = Inputs::default();
        i.set(Field::GpuMemoryUtilization, "0.9").unwrap();
        i.set(Field::BlockSize, "32").unwrap();
        i.set(Field::GpuMemoryUtilization, " ").unwrap();
        i.set(Field::BlockSize, "").unwrap();
        assert_eq!(i, Inputs::default());
        // A required number is never emptied.
        assert!(i.set(Field::Users, "").is_err());
        assert!(i.set(Field::MaxModelLen, "").is_err());
    }

    #[test]
    fn short_floats_read_back() {
        for x in [0.95, 30.5, 3.1e-319, 1e6, 0.05] {
            assert_eq!(crate::decimal::parse_f64(&short(x)), Some(x));
            assert!(short(x).len() <= 24);
        }
    }
}
