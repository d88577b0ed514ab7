//! Memory per GPU, the way the serving engine accounts it.
//!
//! One [`Scenario`] (a model in a format at a layout, the engine's flags, the workload) on one
//! GPU gives an [`Estimate`]: weights, activation peak, runtime memory, the KV pool, its blocks
//! and what they hold, and a [`Verdict`] with the fix. [`estimate`](fn@estimate) and
//! [`estimate_bytes`] never fail: "does not fit" is a verdict.
//!
//! # vLLM V1 (default: follows v0.19; `vllm-0.16` selects the v0.11–v0.16 accounting)
//! ```text
//! budget      = gpu_memory_utilization × total memory (nvidia-smi total)
//! non_kv      = weights + activation_peak + non_torch_increase
//! kv_pool     = budget − non_kv
//! page        = block_size × kv bytes per token per layer (per GPU)
//! num_blocks  = kv_pool ÷ (page × layers per KV group)      (uniform: layers per group = layers)
//! ```
//! CUDA context and CUDA graphs lie outside the budget but show in nvidia-smi. SGLang,
//! TensorRT-LLM and Hugging Face transformers size their pools from the same parts, each
//! its own way; llama.cpp allocates a fixed KV cache for its `-c` context and has no budget
//! fraction (`sizing/llama_cpp.rs`).
//!
//! # The parts
//! Each part's docs hold its formulas and the engine sources they follow.
//! - `sizing/weights.rs`: weights per GPU and per pipeline stage ([`weights_per_gpu`],
//!   [`stage_weights`]): tensor-parallel sharding, replication, vocabulary padding, the
//!   pipeline split.
//! - `sizing/quant_layout.rs`: quantized weights as vLLM holds them per GPU architecture
//!   ([`GpuArch`], [`mxfp4_experts_bytes`], [`quant_config_ignores`]): kernel padding, scales,
//!   modules kept in 16 bits.
//! - `sizing/kv.rs`: the KV groups of vLLM's hybrid allocator and the blocks a request needs
//!   ([`KvGroup`], [`KvGroups`], [`kv_groups`], [`blocks_for_len`]).
//! - `sizing/estimate.rs`: the engine accounting ([`Estimate`], [`estimate`](fn@estimate),
//!   [`estimate_bytes`], [`vllm_defaults`], [`Estimate::longest_len_for_users`]): budget,
//!   activation peak, non-torch memory, CUDA context and graphs, and the pool of vLLM, SGLang,
//!   TensorRT-LLM and transformers.
//! - `sizing/llama_cpp.rs`: what llama.cpp's `llama-server` allocates at start-up
//!   ([`llama_cpp::Context`], [`llama_cpp::kv_bytes`], [`llama_cpp::compute_bytes`]): the
//!   whole `-c` context's KV cache, sliding-window caches, recurrent state, the compute
//!   buffer of one ubatch; no memory fraction.
//! - `sizing/verdict.rs`: [`Fit`], [`Verdict`], [`Warning`] / [`Warnings`] and their texts;
//!   [`fmt_gib`].
//! - `sizing/refusal.rs`: what the engine refuses whatever the memory ([`Refusal`],
//!   [`refusal`], [`layout_refusal`]): TP against the heads, PP against the layers, a length
//!   above the model's, a block size no attention backend takes.
//! - this file: the calibrated constants, [`Scenario`], and the number conversions the parts
//!   share.

mod estimate;
pub mod features;
pub mod gguf;
mod kv;
pub mod llama_cpp;
pub mod lora;
pub mod mm;
mod quant_layout;
mod refusal;
pub mod spec;
mod verdict;
mod weights;

pub use crate::units::fmt_gib;
pub use estimate::{estimate, estimate_bytes, vllm_defaults, Estimate, Part};
pub use features::FeatureBytes;
pub(crate) use kv::Kinds;
pub use kv::{blocks_for_len, kv_groups, KvGroup, KvGroups};
pub use quant_layout::{
    fp8_block_scale_bytes, kept_format, mxfp4_backend, mxfp4_expert_dims, mxfp4_experts_bytes,
    quant_config_ignores, GpuArch, Kept16, Mxfp4Backend,
};
pub use refusal::{
    engine_tp_refusal, experts_refusal, layout_refusal, refusal, vllm_block_size_ok, Refusal,
    VLLM_BLOCK_SIZES,
};
pub use verdict::{Fit, Verdict, Warning, Warnings};
pub(crate) use weights::moe_layers_in;
pub use weights::{
    layout_padding_per_gpu, stage_weights, weights_per_gpu, weights_read_per_step, HeaderSource,
    HeaderWeights,
};

use crate::dtype::WeightFormat;
use crate::inputs::{EngineFlags, Workload};
use crate::model::ModelArch;
use serde::Serialize;

/// 2^30.
pub const GIB: u64 = 1 << 30;
/// 2^20.
pub const MIB: u64 = 1 << 20;

/// Sampler warm-up peak in fp32 copies of `max_num_seqs × vocab` logits, vLLM ≥ 0.17.
pub const SAMPLER_COPIES_V17: f64 = 3.75;
/// The same for vLLM 0.11–0.16.
pub const SAMPLER_COPIES_V11: f64 = 9.3;
/// Non-torch memory that appears during profiling at world size 1 (v0.18+), GiB.
pub const NON_TORCH_TP1_GIB: f64 = 0.25;
/// Non-torch at world size > 1, constant part, GiB (v0.19 logs: 2.07–2.09 at TP2, 2.21 at TP4).
pub const NON_TORCH_MULTI_GIB: f64 = 1.93;
/// Non-torch at world size > 1, per rank of the TP group, GiB (`sizing/estimate.rs`).
pub const NON_TORCH_PER_RANK_GIB: f64 = 0.07;
/// CUDA context before profiling, TP1, GiB ("init non-torch" in v0.19 logs: 0.51).
pub const CUDA_CONTEXT_GIB: f64 = 0.51;
/// CUDA context with NCCL, GiB (1.51–1.99 in v0.19 logs).
pub const CUDA_CONTEXT_MULTI_GIB: f64 = 1.55;
/// CUDA graph memory, constant part, GiB.
pub const CUDA_GRAPH_BASE_GIB: f64 = 0.35;
/// CUDA graph memory per layer, GiB.
pub const CUDA_GRAPH_PER_LAYER_GIB: f64 = 0.016;

pub use crate::engine::Engine;

/// One sizing question: a model in a format at a layout, with the engine's flags and the
/// workload of [`crate::inputs`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scenario {
    /// The model.
    pub model: ModelArch,
    /// Weight format.
    pub format: WeightFormat,
    /// INT4 group size.
    pub group_size: u64,
    /// `--tensor-parallel-size`.
    pub tensor_parallel_size: u64,
    /// `--pipeline-parallel-size`.
    pub pipeline_parallel_size: u64,
    /// The engine's flags.
    #[serde(flatten)]
    pub flags: EngineFlags,
    /// The workload (users ≥ 1).
    #[serde(flatten)]
    pub workload: Workload,
    /// The GPU's architecture (the kernel, hence the padding, of quantized weights); `None`:
    /// the checkpoint's layout. Set by the plan from the catalog GPU's `architecture`.
    pub gpu_arch: Option<GpuArch>,
    /// Parts the checkpoint's `quantization_config` keeps in 16 bits.
    pub kept_16bit: Kept16,
    /// The checkpoint's bytes by sharding class, from its safetensors headers (or index):
    /// when set and `format` is the checkpoint's, the weights come from them instead of the
    /// config.
    pub checkpoint: Option<HeaderWeights>,
    /// The draft model of speculative decoding's `draft_model` method, resolved by the plan
    /// from [`crate::inputs::Inputs::spec_model`] (`sizing/spec.rs`).
    pub draft_model: Option<Box<ModelArch>>,
    /// The draft's id as the user gave it (the launch command's `"model"`), empty when none.
    pub draft_repo: String,
}

impl Scenario {
    /// A scenario with engine defaults: bf16 (or the model's native format), TP=PP=1,
    /// one user with a 1024-token prompt and 256 output tokens.
    #[must_use]
    pub fn new(model: ModelArch) -> Self {
        Self {
            model,
            format: WeightFormat::Bf16,
            group_size: 128,
            tensor_parallel_size: 1,
            pipeline_parallel_size: 1,
            flags: EngineFlags::default(),
            workload: Workload::default(),
            gpu_arch: None,
            kept_16bit: Kept16::default(),
            checkpoint: None,
            draft_model: None,
            draft_repo: String::new(),
        }
    }

    /// The tokens one request of the workload holds in the KV cache: its prompt, the tokens
    /// its images, videos and audio add to the prompt (explicit multimodal limits,
    /// [`mm::per_request`]), and its output. vLLM checks the prompt with those tokens
    /// against the length ("Make sure that `max_model_len` is no smaller than the number of
    /// text tokens plus multimodal tokens", `vllm/v1/engine/processor.py`
    /// `_validate_model_input`).
    #[must_use]
    pub fn request_tokens(&self) -> u64 {
        self.workload
            .prompt_tokens
            .saturating_add(mm::per_request(self).0)
            .saturating_add(self.workload.output_tokens)
    }

    /// The effective `max_model_len` (at least 1).
    #[must_use]
    pub fn model_len(&self) -> u64 {
        self.flags
            .max_model_len
            .unwrap_or(self.model.max_position_embeddings)
            .max(1)
    }

    /// KV element bytes (fp32 models run their cache at 16 bits).
    #[must_use]
    pub fn kv_bytes(&self) -> u64 {
        self.flags.kv_dtype.bytes()
    }

    /// Tensor × pipeline parallel world size.
    #[must_use]
    pub fn world_size(&self) -> u64 {
        self.tensor_parallel_size.max(1) * self.pipeline_parallel_size.max(1)
    }
}

pub(crate) use crate::units::{real as f, whole as to_u64};

fn gib(x: f64) -> u64 {
    to_u64(x * f(GIB))
}

/// The layers of pipeline stage `rank` of `pp`, as `(first layer, count)`: `layers / pp`
/// each, and the remainder one more each on stages `pp − 2`, `pp − 3`, … (vLLM
/// `get_pp_indices`: `partitions[-i] += 1` for `i` in `2..remaining + 2`; the last stage,
/// which holds the final norm and the LM head, gets none). 22 layers over 4 stages are
/// 5, 6, 6, 5; 61 over 4 are 15, 15, 16, 15.
#[must_use]
pub fn pp_stage(layers: u64, pp: u64, rank: u64) -> (u64, u64) {
    let pp = pp.max(1);
    let (base, rem) = (layers / pp, layers % pp);
    // Stage `r` gets one more when `pp − 1 − rem ≤ r ≤ pp − 2`.
    let extra = |r: u64| u64::from(r + 1 < pp && r + 1 + rem >= pp);
    let first: u64 = (0..rank.min(pp)).map(|r| base + extra(r)).sum();
    (first, base + extra(rank))
}

#[cfg(test)]
mod pp_tests {
    use super::pp_stage;

    /// vLLM's own examples (`get_pp_indices`'s log and docs) and the stages tiling the layers.
    #[test]
    fn stages_split_the_layers_as_vllm_does() {
        let split = |layers, pp| {
            (0..pp)
                .map(|r| pp_stage(layers, pp, r).1)
                .collect::<Vec<_>>()
        };
        assert_eq!(split(22, 4), [5, 6, 6, 5]);
        assert_eq!(split(61, 4), [15, 15, 16, 15]);
        assert_eq!(split(61, 2), [31, 30]);
        assert_eq!(split(5, 3), [2, 2, 1]);
        assert_eq!(split(80, 3), [27, 27, 26]);
        assert_eq!(split(32, 4), [8, 8, 8, 8]);
        for layers in 1..70 {
            for pp in 1..=layers.min(16) {
                let mut next = 0;
                for r in 0..pp {
                    let (first, n) = pp_stage(layers, pp, r);
                    assert_eq!(first, next, "{layers} layers, PP {pp}, stage {r}");
                    assert!(n >= 1);
                    next = first + n;
                }
                assert_eq!(next, layers);
            }
        }
    }
}
