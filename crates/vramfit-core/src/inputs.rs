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

pub mod features;
mod keys;
pub use features::{Features, Lora, Multimodal, SpecMethod, Speculative};
pub use keys::{
    by_url, human_int, key, step_text, Key, Range, KEYS, MAX_COMMAND_LEN, MAX_VALUE_LEN,
};

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
    /// `--max-model-len -1` (vLLM's `auto`): vLLM picks the longest length whose KV fits
    /// (`sizing/estimate.rs`, [`crate::sizing::Estimate::vllm_auto_max_model_len`]).
    pub fit_max_model_len: bool,
    /// Multimodal limits, LoRA, speculative decoding and the smaller flags (issue 18).
    #[serde(flatten)]
    pub features: Features,
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
            fit_max_model_len: false,
            features: Features::default(),
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

/// What a buyer states besides the workload: the years and prices of a total cost of
/// ownership, the API it is compared with, and the constraints an answer must keep
/// ([`crate::budget`]). The defaults are the catalog's sourced ones (`catalog/tco.json`;
/// the test `the_buyer_defaults_are_the_catalogs` keeps them equal).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Buyer {
    /// Years of service the hardware is bought for.
    pub years: f64,
    /// Electricity, USD per kWh.
    pub kwh_price_usd: f64,
    /// Power usage effectiveness of the facility (facility power ÷ IT power).
    pub pue: f64,
    /// Share of the hours the hardware serves at the planned load (the rest it idles).
    pub utilization: f64,
    /// Resale value at the end of service, as a fraction of the purchase; `None` = none.
    pub resale_fraction: Option<f64>,
    /// An API's price per million input tokens, USD, to compare with.
    pub api_input_usd_per_million: Option<f64>,
    /// Its price per million output tokens, USD.
    pub api_output_usd_per_million: Option<f64>,
    /// Power cap for the whole deployment, kW (at the wall, before PUE).
    pub max_power_kw: Option<f64>,
    /// Power cap per rack, kW.
    pub max_rack_kw: Option<f64>,
    /// Budget cap for the purchase, USD.
    pub max_budget_usd: Option<f64>,
    /// Only hardware that can be bought and run on premises (no rent, no API).
    pub on_prem: bool,
    /// Only this GPU vendor (`nvidia`, `amd`, `intel`, `apple`); `None` = any.
    pub vendor: Option<&'static str>,
}

/// The GPU vendors [`Buyer::vendor`] takes (the catalog's `vendor` values).
pub const VENDORS: [&str; 4] = ["nvidia", "amd", "intel", "apple"];

impl Default for Buyer {
    fn default() -> Self {
        Self {
            years: 4.0,
            kwh_price_usd: 0.146,
            pue: 1.56,
            utilization: 0.6,
            resale_fraction: None,
            api_input_usd_per_million: None,
            api_output_usd_per_million: None,
            max_power_kw: None,
            max_rack_kw: None,
            max_budget_usd: None,
            on_prem: false,
            vendor: None,
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
    /// The buyer's years, prices and constraints ([`crate::budget`]).
    #[serde(flatten)]
    pub buyer: Buyer,
    /// A pasted engine launch command to check ([`crate::command`]); empty = none. It rides
    /// in the URL so a share link carries it; the plan itself never reads it.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub command: String,
    /// The draft model of `--speculative-config` (`"model"`): a catalog id, alias or repo id;
    /// empty = none (EAGLE heads are then shaped from the target, `sizing/spec.rs`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub spec_model: String,
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
            buyer: Buyer::default(),
            command: String::new(),
            spec_model: String::new(),
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
    /// [`Buyer::years`].
    Years,
    /// [`Buyer::kwh_price_usd`].
    KwhPrice,
    /// [`Buyer::pue`].
    Pue,
    /// [`Buyer::utilization`].
    Utilization,
    /// [`Buyer::resale_fraction`].
    Resale,
    /// [`Buyer::api_input_usd_per_million`].
    ApiInputPrice,
    /// [`Buyer::api_output_usd_per_million`].
    ApiOutputPrice,
    /// [`Buyer::max_power_kw`].
    MaxPowerKw,
    /// [`Buyer::max_rack_kw`].
    MaxRackKw,
    /// [`Buyer::max_budget_usd`].
    MaxBudgetUsd,
    /// [`Buyer::on_prem`].
    OnPrem,
    /// [`Buyer::vendor`].
    Vendor,
    /// [`Multimodal::images`].
    MmImages,
    /// [`Multimodal::videos`].
    MmVideos,
    /// [`Multimodal::audios`].
    MmAudios,
    /// [`Multimodal::frames`].
    MmFrames,
    /// [`Multimodal::max_pixels`].
    MmMaxPixels,
    /// [`Lora::enabled`].
    EnableLora,
    /// [`Lora::max_loras`].
    MaxLoras,
    /// [`Lora::max_rank`].
    MaxLoraRank,
    /// [`Lora::max_cpu_loras`].
    MaxCpuLoras,
    /// [`Lora::fully_sharded`].
    FullyShardedLoras,
    /// [`Speculative::method`].
    SpecMethod,
    /// [`Speculative::tokens`].
    SpecTokens,
    /// [`Inputs::spec_model`].
    SpecModel,
    /// [`Speculative::acceptance`].
    SpecAcceptance,
    /// [`Features::enforce_eager`].
    EnforceEager,
    /// [`Features::cpu_offload_gib`].
    CpuOffloadGb,
    /// [`Features::swap_space_gib`].
    SwapSpace,
    /// [`Features::no_prefix_caching`].
    NoPrefixCaching,
    /// [`Features::kv_cache_memory_bytes`].
    KvCacheMemoryBytes,
    /// [`Multimodal::encoder_data_parallel`].
    MmEncoderTpMode,
    /// [`Multimodal::skip_profiling`].
    SkipMmProfiling,
    /// [`Lora::target_modules`].
    LoraTargetModules,
}

impl Inputs {
    /// A field's value as the URL writes it; `None` when it has no value (automatic, the
    /// engine's default). The model's maximum context is `auto`.
    #[must_use]
    pub fn text(&self, field: Field) -> Option<String> {
        let f = &self.flags;
        let w = &self.workload;
        let b = &self.buyer;
        let n = |x: Option<u64>| x.map(|x| x.to_string());
        match field {
            Field::Model => Some(self.model.clone()),
            Field::Gpu => Some(self.gpu.clone()),
            Field::Format => self.format.map(|x| x.id().to_string()),
            Field::KvDtype => Some(f.kv_dtype.id().to_string()),
            Field::Engine => Some(f.engine.id()),
            Field::GpuMemoryUtilization => f.gpu_memory_utilization.map(short),
            Field::MaxModelLen if f.fit_max_model_len => Some("-1".into()),
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
            Field::Years => Some(short(b.years)),
            Field::KwhPrice => Some(short(b.kwh_price_usd)),
            Field::Pue => Some(short(b.pue)),
            Field::Utilization => Some(short(b.utilization)),
            Field::Resale => b.resale_fraction.map(short),
            Field::ApiInputPrice => b.api_input_usd_per_million.map(short),
            Field::ApiOutputPrice => b.api_output_usd_per_million.map(short),
            Field::MaxPowerKw => b.max_power_kw.map(short),
            Field::MaxRackKw => b.max_rack_kw.map(short),
            Field::MaxBudgetUsd => b.max_budget_usd.map(short),
            Field::OnPrem => b.on_prem.then(|| "1".to_string()),
            Field::Vendor => b.vendor.map(str::to_string),
            Field::SpecModel => (!self.spec_model.is_empty()).then(|| self.spec_model.clone()),
            _ => features_text(&f.features, field),
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
        let b = &mut self.buyer;
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
            Field::Resale if clear => b.resale_fraction = None,
            Field::ApiInputPrice if clear => b.api_input_usd_per_million = None,
            Field::ApiOutputPrice if clear => b.api_output_usd_per_million = None,
            Field::MaxPowerKw if clear => b.max_power_kw = None,
            Field::MaxRackKw if clear => b.max_rack_kw = None,
            Field::MaxBudgetUsd if clear => b.max_budget_usd = None,
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
                        "unknown engine `{value}` (vllm, vllm-0.{} to vllm-0.{}, sglang, trtllm, transformers, llama.cpp; MLX is not modelled)",
                        Engine::VLLM_MODELLED.start(),
                        Engine::VLLM_MODELLED.end()
                    ),
                })?;
            }
            Field::GpuMemoryUtilization => f.gpu_memory_utilization = Some(k.float(value)?),
            Field::MaxModelLen if auto => {
                f.max_model_len = None;
                f.fit_max_model_len = false;
            }
            // vLLM's `-1` (its `auto`): the longest length that fits, checked at the model's
            // maximum.
            Field::MaxModelLen if v == "-1" => {
                f.max_model_len = None;
                f.fit_max_model_len = true;
            }
            Field::MaxModelLen => {
                f.max_model_len = Some(k.int(value)?);
                f.fit_max_model_len = false;
            }
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
                    "the pasted text is {} characters, more than the {} a command may have: it is not checked",
                    crate::units::fmt_count(value.chars().count() as u64),
                    crate::units::fmt_count(MAX_COMMAND_LEN as u64)
                ));
            }
            // Kept as pasted (a text box must not lose the space just typed); only blank
            // text is "no command". The checker reads it, the plan does not.
            Field::Command if v.is_empty() => self.command.clear(),
            Field::Command => self.command = value.to_string(),
            Field::Years => b.years = k.float(value)?,
            Field::KwhPrice => b.kwh_price_usd = k.float(value)?,
            Field::Pue => b.pue = k.float(value)?,
            Field::Utilization => b.utilization = k.float(value)?,
            Field::Resale => b.resale_fraction = Some(k.float(value)?),
            Field::ApiInputPrice => b.api_input_usd_per_million = Some(k.float(value)?),
            Field::ApiOutputPrice => b.api_output_usd_per_million = Some(k.float(value)?),
            Field::MaxPowerKw => b.max_power_kw = Some(k.float(value)?),
            Field::MaxRackKw => b.max_rack_kw = Some(k.float(value)?),
            Field::MaxBudgetUsd => b.max_budget_usd = Some(k.float(value)?),
            Field::OnPrem => b.on_prem = flag(value)?,
            Field::Vendor if v.is_empty() || v.eq_ignore_ascii_case("any") => b.vendor = None,
            Field::SpecModel if value.chars().count() > MAX_VALUE_LEN => {
                return Err(format!(
                    "`{}` is longer than {MAX_VALUE_LEN} characters",
                    k.flag
                ));
            }
            Field::SpecModel => self.spec_model = v.to_string(),
            Field::MmImages
            | Field::MmVideos
            | Field::MmAudios
            | Field::MmFrames
            | Field::MmMaxPixels
            | Field::EnableLora
            | Field::MaxLoras
            | Field::MaxLoraRank
            | Field::MaxCpuLoras
            | Field::FullyShardedLoras
            | Field::SpecMethod
            | Field::SpecTokens
            | Field::SpecAcceptance
            | Field::EnforceEager
            | Field::CpuOffloadGb
            | Field::SwapSpace
            | Field::NoPrefixCaching
            | Field::KvCacheMemoryBytes
            | Field::MmEncoderTpMode
            | Field::SkipMmProfiling
            | Field::LoraTargetModules => set_feature(&mut f.features, k, clear, value)?,
            Field::Vendor => {
                b.vendor = Some(
                    VENDORS
                        .into_iter()
                        .find(|x| x.eq_ignore_ascii_case(v))
                        .ok_or_else(|| {
                            format!("unknown GPU vendor `{v}` (any, {})", VENDORS.join(", "))
                        })?,
                );
            }
        }
        Ok(())
    }
}

/// A feature row's value as the URL writes it (see [`Inputs::text`]).
fn features_text(x: &Features, field: Field) -> Option<String> {
    let n = |x: Option<u64>| x.map(|x| x.to_string());
    let on = |b: bool| b.then(|| "1".to_string());
    match field {
        Field::MmImages => n(x.mm.images),
        Field::MmVideos => n(x.mm.videos),
        Field::MmAudios => n(x.mm.audios),
        Field::MmFrames => n(x.mm.frames),
        Field::MmMaxPixels => n(x.mm.max_pixels),
        Field::EnableLora => on(x.lora.enabled),
        Field::MaxLoras => Some(x.lora.max_loras.to_string()),
        Field::MaxLoraRank => Some(x.lora.max_rank.to_string()),
        Field::MaxCpuLoras => n(x.lora.max_cpu_loras),
        Field::FullyShardedLoras => on(x.lora.fully_sharded),
        Field::SpecMethod => x.spec.method.map(|m| m.id().to_string()),
        Field::SpecTokens => n(x.spec.tokens),
        Field::SpecAcceptance => x.spec.acceptance.map(short),
        Field::EnforceEager => on(x.enforce_eager),
        Field::CpuOffloadGb => x.cpu_offload_gib.map(short),
        Field::SwapSpace => x.swap_space_gib.map(short),
        Field::NoPrefixCaching => on(x.no_prefix_caching),
        Field::KvCacheMemoryBytes => n(x.kv_cache_memory_bytes),
        Field::MmEncoderTpMode => x.mm.encoder_data_parallel.then(|| "data".to_string()),
        Field::SkipMmProfiling => on(x.mm.skip_profiling),
        Field::LoraTargetModules => x.lora.target_modules.map(features::LoraModules::text),
        _ => None,
    }
}

/// Sets a feature row (see [`Inputs::set`]); `clear`: an empty optional number.
fn set_feature(x: &mut Features, k: &Key, clear: bool, value: &str) -> Result<(), String> {
    let v = value.trim();
    let opt_int = |o: &mut Option<u64>| -> Result<(), String> {
        *o = if clear { None } else { Some(k.int(value)?) };
        Ok(())
    };
    let opt_float = |o: &mut Option<f64>| -> Result<(), String> {
        *o = if clear { None } else { Some(k.float(value)?) };
        Ok(())
    };
    match k.field {
        Field::MmImages => opt_int(&mut x.mm.images)?,
        Field::MmVideos => opt_int(&mut x.mm.videos)?,
        Field::MmAudios => opt_int(&mut x.mm.audios)?,
        Field::MmFrames => opt_int(&mut x.mm.frames)?,
        Field::MmMaxPixels => opt_int(&mut x.mm.max_pixels)?,
        Field::EnableLora => x.lora.enabled = flag(value)?,
        Field::MaxLoras => x.lora.max_loras = k.int(value)?,
        Field::MaxLoraRank => x.lora.max_rank = k.int(value)?,
        Field::MaxCpuLoras => opt_int(&mut x.lora.max_cpu_loras)?,
        Field::FullyShardedLoras => x.lora.fully_sharded = flag(value)?,
        Field::SpecMethod if v.is_empty() || v == "off" || v == "none" => x.spec.method = None,
        Field::SpecMethod => {
            x.spec.method = Some(SpecMethod::parse(v).ok_or_else(|| {
                format!(
                    "unknown speculative method `{v}` (off, {})",
                    SpecMethod::ALL.map(SpecMethod::id).join(", ")
                )
            })?);
        }
        Field::SpecTokens => opt_int(&mut x.spec.tokens)?,
        Field::SpecAcceptance => opt_float(&mut x.spec.acceptance)?,
        Field::EnforceEager => x.enforce_eager = flag(value)?,
        Field::CpuOffloadGb => opt_float(&mut x.cpu_offload_gib)?,
        Field::SwapSpace => opt_float(&mut x.swap_space_gib)?,
        Field::NoPrefixCaching => x.no_prefix_caching = flag(value)?,
        Field::MmEncoderTpMode => {
            x.mm.encoder_data_parallel = match v {
                "" | "weights" => false,
                "data" => true,
                _ => {
                    return Err(format!(
                        "unknown `--mm-encoder-tp-mode` `{v}` (weights, data)"
                    ))
                }
            };
        }
        Field::SkipMmProfiling => x.mm.skip_profiling = flag(value)?,
        Field::LoraTargetModules if v.is_empty() || v == "all" => x.lora.target_modules = None,
        Field::LoraTargetModules => {
            x.lora.target_modules = Some(features::LoraModules::parse(v)?);
        }
        Field::KvCacheMemoryBytes => {
            x.kv_cache_memory_bytes = if clear {
                None
            } else {
                // vLLM reads `--kv-cache-memory-bytes` as a human-readable size (`20G`).
                let n = human_int(v).map_or_else(|| k.int(value), |n| k.check_int(n))?;
                Some(n)
            };
        }
        _ => {}
    }
    Ok(())
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

    const ALL: [Field; 56] = [
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
        Field::Years,
        Field::KwhPrice,
        Field::Pue,
        Field::Utilization,
        Field::Resale,
        Field::ApiInputPrice,
        Field::ApiOutputPrice,
        Field::MaxPowerKw,
        Field::MaxRackKw,
        Field::MaxBudgetUsd,
        Field::OnPrem,
        Field::Vendor,
        Field::MmImages,
        Field::MmVideos,
        Field::MmAudios,
        Field::MmFrames,
        Field::MmMaxPixels,
        Field::EnableLora,
        Field::MaxLoras,
        Field::MaxLoraRank,
        Field::MaxCpuLoras,
        Field::FullyShardedLoras,
        Field::SpecMethod,
        Field::SpecTokens,
        Field::SpecModel,
        Field::SpecAcceptance,
        Field::EnforceEager,
        Field::CpuOffloadGb,
        Field::SwapSpace,
        Field::NoPrefixCaching,
        Field::KvCacheMemoryBytes,
        Field::MmEncoderTpMode,
        Field::SkipMmProfiling,
        Field::LoraTargetModules,
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
    fn a_whole_number_out_of_reach_gets_the_range_message() {
        // Beyond u64 or below zero is still a whole number: the message gives the range, not
        // "not a whole number". Text that is no number at all says so.
        for k in &KEYS {
            let Range::Int { min, max } = k.range else {
                continue;
            };
            let mut i = Inputs::default();
            let range =
                |got: &str| format!("`{}` must be between {min} and {max}; got {got}", k.flag);
            let huge = "99999999999999999999999";
            assert_eq!(i.set(k.field, huge), Err(range(huge)), "{}", k.url);
            assert_eq!(i.set(k.field, "-7"), Err(range("-7")), "{}", k.url);
            // `-0` is 0: taken where the range starts at 0, refused by the range elsewhere.
            let zero = if min == 0 { Ok(()) } else { Err(range("0")) };
            assert_eq!(i.set(k.field, "-0"), zero, "{}", k.url);
            assert_eq!(
                i.set(k.field, "7 GPUs"),
                Err("`7 GPUs` is not a whole number".to_string()),
                "{}",
                k.url
            );
        }
    }

    #[test]
    fn arrow_keys_step_as_a_number_input_does() {
        assert_eq!(step_text("8192", "1", true).as_deref(), Some("8193"));
        assert_eq!(step_text(" 8192 ", "1", false).as_deref(), Some("8191"));
        assert_eq!(step_text("0.9", "0.01", true).as_deref(), Some("0.91"));
        assert_eq!(step_text("0.3", "0.1", false).as_deref(), Some("0.2"));
        assert_eq!(step_text("2.5", "any", true).as_deref(), Some("3.5"));
        assert_eq!(step_text("", "1", true), None);
        assert_eq!(step_text("0,15", "0.01", true), None);
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
        // A required number is never emptied, and the message says what it takes.
        assert_eq!(
            i.set(Field::Users, " "),
            Err("empty: `--users` takes a whole number between 1 and 1048576".to_string())
        );
        // Nor one that takes `auto`: an empty `--max-model-len=` is vLLM's error, and `?len=`
        // keeps the default (the page's number field sends an emptied box as `auto`).
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
