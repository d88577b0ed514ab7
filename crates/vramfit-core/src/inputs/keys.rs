//! The input table: one row per input ([`KEYS`]), with its URL key, CLI flag, label,
//! unit, range and default, and the range checks every parser shares.

use super::Field;

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
pub const KEYS: [Key; 56] = [
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
    Key {
        field: Field::Years,
        url: "years",
        flag: "--years",
        label: "Years of service",
        unit: "years",
        range: Range::Float {
            min: 0.25,
            max: 20.0,
        },
        default: "4",
        auto: false,
    },
    Key {
        field: Field::KwhPrice,
        url: "kwh",
        flag: "--kwh-price",
        label: "Electricity",
        unit: "USD/kWh",
        range: Range::Float { min: 0.0, max: 2.0 },
        default: "0.146",
        auto: false,
    },
    Key {
        field: Field::Pue,
        url: "pue",
        flag: "--pue",
        label: "PUE",
        unit: "",
        range: Range::Float { min: 1.0, max: 3.0 },
        default: "1.56",
        auto: false,
    },
    Key {
        field: Field::Utilization,
        url: "busy",
        flag: "--utilization",
        label: "Utilisation",
        unit: "fraction of hours",
        range: Range::Float {
            min: 0.01,
            max: 1.0,
        },
        default: "0.6",
        auto: false,
    },
    Key {
        field: Field::Resale,
        url: "resale",
        flag: "--resale",
        label: "Resale value",
        unit: "fraction of purchase",
        range: Range::Float { min: 0.0, max: 1.0 },
        default: "",
        auto: false,
    },
    Key {
        field: Field::ApiInputPrice,
        url: "apiin",
        flag: "--api-input-price",
        label: "API input price",
        unit: "USD per M tokens",
        range: Range::Float {
            min: 0.0,
            max: 1000.0,
        },
        default: "",
        auto: false,
    },
    Key {
        field: Field::ApiOutputPrice,
        url: "apiout",
        flag: "--api-output-price",
        label: "API output price",
        unit: "USD per M tokens",
        range: Range::Float {
            min: 0.0,
            max: 1000.0,
        },
        default: "",
        auto: false,
    },
    Key {
        field: Field::MaxPowerKw,
        url: "maxkw",
        flag: "--max-power-kw",
        label: "Power cap",
        unit: "kW",
        range: Range::Float {
            min: 0.01,
            max: 1e6,
        },
        default: "",
        auto: false,
    },
    Key {
        field: Field::MaxRackKw,
        url: "rackkw",
        flag: "--max-rack-kw",
        label: "Power per rack",
        unit: "kW",
        range: Range::Float {
            min: 0.1,
            max: 1000.0,
        },
        default: "",
        auto: false,
    },
    Key {
        field: Field::MaxBudgetUsd,
        url: "maxusd",
        flag: "--max-budget-usd",
        label: "Budget cap",
        unit: "USD",
        range: Range::Float {
            min: 1.0,
            max: 1e12,
        },
        default: "",
        auto: false,
    },
    Key {
        field: Field::OnPrem,
        url: "onprem",
        flag: "--on-prem",
        label: "On-prem only",
        unit: "",
        range: Range::Flag,
        default: "",
        auto: false,
    },
    Key {
        field: Field::Vendor,
        url: "vendor",
        flag: "--vendor",
        label: "GPU vendor",
        unit: "",
        range: Range::Choice,
        default: "",
        auto: false,
    },
    Key {
        field: Field::MmImages,
        url: "img",
        flag: "--images-per-prompt",
        label: "Images per prompt",
        unit: "images",
        range: Range::Int { min: 0, max: 1024 },
        default: "",
        auto: false,
    },
    Key {
        field: Field::MmVideos,
        url: "vid",
        flag: "--videos-per-prompt",
        label: "Videos per prompt",
        unit: "videos",
        range: Range::Int { min: 0, max: 1024 },
        default: "",
        auto: false,
    },
    Key {
        field: Field::MmAudios,
        url: "aud",
        flag: "--audios-per-prompt",
        label: "Audio clips per prompt",
        unit: "clips",
        range: Range::Int { min: 0, max: 1024 },
        default: "",
        auto: false,
    },
    Key {
        field: Field::MmFrames,
        url: "frames",
        flag: "--video-frames",
        label: "Frames per video",
        unit: "frames",
        range: Range::Int { min: 1, max: 4096 },
        default: "",
        auto: false,
    },
    Key {
        field: Field::MmMaxPixels,
        url: "pixels",
        flag: "--max-pixels",
        label: "Max pixels per image",
        unit: "pixels",
        range: Range::Int {
            min: 784,
            max: 100000000,
        },
        default: "",
        auto: false,
    },
    Key {
        field: Field::EnableLora,
        url: "lora",
        flag: "--enable-lora",
        label: "LoRA adapters",
        unit: "",
        range: Range::Flag,
        default: "",
        auto: false,
    },
    Key {
        field: Field::MaxLoras,
        url: "loras",
        flag: "--max-loras",
        label: "Adapters per batch",
        unit: "adapters",
        range: Range::Int { min: 1, max: 256 },
        default: "1",
        auto: false,
    },
    Key {
        field: Field::MaxLoraRank,
        url: "rank",
        flag: "--max-lora-rank",
        label: "Max LoRA rank",
        unit: "",
        range: Range::Int { min: 1, max: 512 },
        default: "16",
        auto: false,
    },
    Key {
        field: Field::MaxCpuLoras,
        url: "cpuloras",
        flag: "--max-cpu-loras",
        label: "Adapters cached in host memory",
        unit: "adapters",
        range: Range::Int { min: 1, max: 65536 },
        default: "",
        auto: false,
    },
    Key {
        field: Field::FullyShardedLoras,
        url: "fsl",
        flag: "--fully-sharded-loras",
        label: "Fully sharded LoRA",
        unit: "",
        range: Range::Flag,
        default: "",
        auto: false,
    },
    Key {
        field: Field::SpecMethod,
        url: "spec",
        flag: "--speculative-method",
        label: "Speculative decoding",
        unit: "",
        range: Range::Choice,
        default: "",
        auto: false,
    },
    Key {
        field: Field::SpecTokens,
        url: "spectok",
        flag: "--num-speculative-tokens",
        label: "Speculative tokens",
        unit: "tokens per step",
        range: Range::Int { min: 1, max: 32 },
        default: "",
        auto: false,
    },
    Key {
        field: Field::SpecModel,
        url: "specmodel",
        flag: "--speculative-model",
        label: "Draft model",
        unit: "",
        range: Range::Text,
        default: "",
        auto: false,
    },
    Key {
        field: Field::SpecAcceptance,
        url: "accept",
        flag: "--acceptance-rate",
        label: "Draft acceptance rate",
        unit: "fraction per token",
        range: Range::Float {
            min: 0.0,
            max: 0.99,
        },
        default: "",
        auto: false,
    },
    Key {
        field: Field::EnforceEager,
        url: "eager",
        flag: "--enforce-eager",
        label: "Eager mode (no CUDA graphs)",
        unit: "",
        range: Range::Flag,
        default: "",
        auto: false,
    },
    Key {
        field: Field::CpuOffloadGb,
        url: "offload",
        flag: "--cpu-offload-gb",
        label: "CPU offload",
        unit: "GiB per GPU",
        range: Range::Float {
            min: 0.0,
            max: 100000.0,
        },
        default: "",
        auto: false,
    },
    Key {
        field: Field::SwapSpace,
        url: "swap",
        flag: "--swap-space",
        label: "Swap space",
        unit: "GiB per GPU",
        range: Range::Float {
            min: 0.0,
            max: 100000.0,
        },
        default: "",
        auto: false,
    },
    Key {
        field: Field::NoPrefixCaching,
        url: "nopc",
        flag: "--no-enable-prefix-caching",
        label: "Prefix caching off",
        unit: "",
        range: Range::Flag,
        default: "",
        auto: false,
    },
    Key {
        field: Field::KvCacheMemoryBytes,
        url: "kvbytes",
        flag: "--kv-cache-memory-bytes",
        label: "KV cache size",
        unit: "bytes per GPU",
        range: Range::Int {
            min: 1048576,
            max: 1125899906842624,
        },
        default: "",
        auto: false,
    },
    Key {
        field: Field::MmEncoderTpMode,
        url: "mmtp",
        flag: "--mm-encoder-tp-mode",
        label: "Encoder under TP",
        unit: "",
        range: Range::Choice,
        default: "",
        auto: false,
    },
    Key {
        field: Field::SkipMmProfiling,
        url: "skipmm",
        flag: "--skip-mm-profiling",
        label: "Skip multimodal profiling",
        unit: "",
        range: Range::Flag,
        default: "",
        auto: false,
    },
    Key {
        field: Field::LoraTargetModules,
        url: "loramods",
        flag: "--lora-target-modules",
        label: "LoRA target modules",
        unit: "",
        range: Range::Text,
        default: "",
        auto: false,
    },
];

/// Longest value accepted for any key but the pasted command (characters); the URL codec
/// ignores longer ones ([`crate::share`]), and the draft model's id is held to it.
pub const MAX_VALUE_LEN: usize = 200;

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

    /// The message for an empty value: what the row takes, with its range.
    fn empty(&self, what: &str) -> String {
        format!(
            "empty: `{}` takes {what} between {} and {}",
            self.flag,
            self.min_text(),
            self.max_text()
        )
    }

    fn outside(&self, got: &str) -> String {
        format!(
            "`{}` must be between {} and {}; got {got}",
            self.flag,
            self.min_text(),
            self.max_text()
        )
    }

    /// The smallest value as text (for messages and the UI field's tooltip); empty if none.
    #[must_use]
    pub fn min_text(&self) -> String {
        match self.range {
            Range::Int { min, .. } => min.to_string(),
            Range::Float { min, .. } => min.to_string(),
            _ => String::new(),
        }
    }

    /// The largest value as text (for messages and the UI field's tooltip); empty if none.
    #[must_use]
    pub fn max_text(&self) -> String {
        match self.range {
            Range::Int { max, .. } => max.to_string(),
            Range::Float { max, .. } => max.to_string(),
            _ => String::new(),
        }
    }

    /// A whole number in the row's range. A whole number beyond `u64` or below zero gets the
    /// range message (it is a whole number, only not one this row takes); `-0` is 0, as
    /// Python's `int` reads it.
    pub(super) fn int(&self, v: &str) -> Result<u64, String> {
        let t = v.trim();
        if t.is_empty() {
            return Err(self.empty("a whole number"));
        }
        let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
        match t.parse::<u64>() {
            Ok(n) => self.check_int(n),
            Err(_) if is_digits(digits) && digits.bytes().all(|b| b == b'0') => self.check_int(0),
            Err(_) if is_digits(digits) => Err(self.outside(t)),
            Err(_) => Err(format!("`{v}` is not a whole number")),
        }
    }

    pub(super) fn float(&self, v: &str) -> Result<f64, String> {
        if v.trim().is_empty() {
            return Err(self.empty("a number"));
        }
        let x =
            crate::decimal::parse_f64(v.trim()).ok_or_else(|| format!("`{v}` is not a number"))?;
        self.check_float(x)
    }
}

/// A number field's text one step up or down, as a browser's `<input type="number">` steps
/// it with the arrow keys (HTML's "step up" algorithm, without its snapping to `min`): `step`
/// is the field's step (`"1"`, `"0.01"`; `"any"` steps by 1), the result is written with the
/// step's or the text's decimals, whichever are more, so that 0.9 + 0.01 is `0.91`, not
/// `0.9100000000000001`. `None` when the
/// text is no number (the field then keeps it as typed); the input table checks the range.
#[must_use]
pub fn step_text(text: &str, step: &str, up: bool) -> Option<String> {
    let x = crate::decimal::parse_f64(text.trim())?;
    let by = crate::decimal::parse_f64(step)
        .filter(|s| *s > 0.0)
        .unwrap_or(1.0);
    let places = |t: &str| t.trim().split_once('.').map_or(0, |(_, d)| d.len());
    let decimals = places(step).max(places(text)).min(17);
    let y = if up { x + by } else { x - by };
    y.is_finite().then(|| format!("{y:.decimals$}"))
}

/// vLLM's `human_readable_int`: `32k` = 32 000, `25.6k` = 25 600, `32K` = 32 768 (binary
/// suffixes take no decimals); anything else is left for the input table to read.
#[must_use]
pub fn human_int(v: &str) -> Option<u64> {
    let last = v.chars().last()?;
    let mult: u64 = match last {
        'k' => 1_000,
        'm' => 1_000_000,
        'g' => 1_000_000_000,
        't' => 1_000_000_000_000,
        'K' => 1 << 10,
        'M' => 1 << 20,
        'G' => 1 << 30,
        'T' => 1 << 40,
        _ => return None,
    };
    let num = &v[..v.len() - 1];
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if int.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || (!frac.is_empty() && last.is_ascii_uppercase())
    {
        return None;
    }
    let whole = int.parse::<u64>().ok()?.checked_mul(mult)?;
    // The decimals, cut to what the multiplier can carry (vLLM truncates with `int()`).
    let mut part = 0u64;
    let mut scale = mult;
    for d in frac.bytes() {
        scale /= 10;
        part += u64::from(d - b'0') * scale;
    }
    whole.checked_add(part)
}

/// True for a non-empty run of ASCII digits.
fn is_digits(t: &str) -> bool {
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}
