//! What the engine refuses before it counts a byte: the configuration checks that make
//! `vllm serve` exit at start-up whatever the memory.
//!
//! # Sources
//! - **Tensor parallel and attention heads** (vLLM `vllm/config/model.py`,
//!   `verify_with_parallel_config`: "Total number of attention heads ({n}) must be divisible
//!   by tensor parallel size ({tp})"; KV heads are split when TP divides them and replicated
//!   when TP is a multiple of them, `vllm/model_executor/layers/linear.py`
//!   `QKVParallelLinear`). SGLang and TensorRT-LLM shard attention the same way. MLA models
//!   (one latent KV) have no KV-head rule.
//! - **Pipeline stages**: every stage holds at least one layer (`get_pp_indices`,
//!   `vllm/distributed/utils.py`).
//! - **Tensor parallel inside one node**: TP over NVLink inside the node; across nodes vLLM
//!   needs a Ray cluster, which this tool does not plan (PP crosses nodes instead).
//! - **Expert parallel**: the routed experts divide over the EP ranks (`FusedMoE`,
//!   `--enable-expert-parallel`, EP size = TP here).
//! - **`max_model_len` above the model's maximum** (vLLM `vllm/config/model.py`,
//!   `_get_and_verify_max_len`: "User-specified max_model_len ({n}) is greater than the
//!   derived max_model_len ({m}) … set VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"; SGLang
//!   `model_config.py`: "is greater than the derived context_length … set
//!   SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1").
//! - **Tensor parallelism with llama.cpp**: `llama-server` splits a model over GPUs by
//!   layers (`--split-mode layer`, the default: a pipeline split, `src/llama-model.cpp`
//!   `llama_split_mode`); its row split (`--split-mode row`) is not the tensor parallelism
//!   the core models, so TP > 1 is refused and the layouts it takes are PP only.
//! - **Block size** (vLLM `vllm/config/cache.py`: `BlockSize = Literal[1, 8, 16, 32, 64, 128,
//!   256]`; the CUDA attention backends FlashAttention and Triton take
//!   `MultipleOf(16)` kernel block sizes, `get_supported_kernel_block_sizes`, so 1 and 8 find
//!   no backend: "No valid attention backend found … block_size not supported").
//! - **Weight formats below their compute capability** (vLLM, NVIDIA GPUs): each method's
//!   `get_min_capability()` (`vllm/model_executor/layers/quantization/*.py`), checked in
//!   `VllmConfig._get_quantization_config` ("The quantization method … is not supported for
//!   the current GPU. Minimum capability: …"), and compressed-tensors' per-scheme check.
//!   Read in the PyPI source releases 0.11.0–0.19.1: FP8 (`fp8`, and compressed-tensors'
//!   FP8 on its W8A16 fallback) and NVFP4 (`modelopt_fp4`) 8.0 before v0.14 and 7.5 from it
//!   (Marlin for sm75, vLLM PR #29901); AWQ and INT8 W8A8 7.5; MXFP4 8.0; GPTQ 6.0. 16-bit
//!   checkpoints load on any (bf16 is cast to fp16 below 8.0). [`min_capability`].
//! - **Batched tokens below sequences** (vLLM `vllm/config/scheduler.py`, `SchedulerConfig`:
//!   "max_num_batched_tokens (…) must be greater than or equal to max_num_seqs (…)"): every
//!   running sequence takes at least one token a step. vLLM lowers its default sequences to
//!   the batched tokens (`vllm/engine/arg_utils.py`), so only both set by hand contradict
//!   (`sizing/estimate.rs`).

use super::{Engine, Scenario};
use crate::model::ModelArch;
use serde::Serialize;
use std::fmt;

/// Block sizes vLLM's `CacheConfig` accepts (`vllm/config/cache.py`).
pub const VLLM_BLOCK_SIZES: [u64; 7] = [1, 8, 16, 32, 64, 128, 256];

/// Why the engine refuses to start, whatever the memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Refusal {
    /// A parallel size of zero.
    ZeroSize,
    /// TP does not divide the attention heads.
    TpHeads {
        /// Tensor parallel size.
        tp: u64,
        /// Attention heads.
        heads: u64,
    },
    /// TP neither divides nor is a multiple of the KV heads.
    TpKvHeads {
        /// Tensor parallel size.
        tp: u64,
        /// KV heads.
        kv_heads: u64,
    },
    /// TP spans more GPUs than one node has.
    TpAcrossNodes {
        /// Tensor parallel size.
        tp: u64,
        /// GPUs in one node.
        gpus_per_node: u64,
    },
    /// More pipeline stages than layers.
    PpLayers {
        /// Pipeline parallel size.
        pp: u64,
        /// Layers.
        layers: u64,
    },
    /// With expert parallelism, the experts do not divide over the ranks.
    Experts {
        /// Routed experts.
        experts: u64,
        /// EP ranks (= TP).
        tp: u64,
    },
    /// `max_model_len` above the model's `max_position_embeddings`.
    LongerThanModel {
        /// The length asked for.
        max_model_len: u64,
        /// The model's maximum.
        max_position_embeddings: u64,
    },
    /// A block size the engine or its attention backend does not take.
    BlockSize {
        /// The block size asked for.
        block_size: u64,
    },
    /// Tensor parallelism with llama.cpp, which splits layers (`--split-mode layer`).
    LayerSplitOnly {
        /// Tensor parallel size.
        tp: u64,
    },
    /// vLLM: a weight format whose kernels need a newer GPU ([`min_capability`]).
    FormatCapability {
        /// The format.
        format: crate::dtype::WeightFormat,
        /// The compute capability it needs, × 10.
        needs: u32,
        /// The GPU's, × 10.
        has: u32,
    },
    /// vLLM: `--max-num-batched-tokens` below `--max-num-seqs`.
    BatchedBelowSeqs {
        /// `max_num_batched_tokens`.
        tokens: u64,
        /// `max_num_seqs`.
        seqs: u64,
    },
}

impl Refusal {
    /// Stable id (`tp_heads`, `longer_than_model`, …).
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Self::ZeroSize => "zero_size",
            Self::TpHeads { .. } => "tp_heads",
            Self::TpKvHeads { .. } => "tp_kv_heads",
            Self::TpAcrossNodes { .. } => "tp_across_nodes",
            Self::PpLayers { .. } => "pp_layers",
            Self::Experts { .. } => "experts",
            Self::LongerThanModel { .. } => "longer_than_model",
            Self::BlockSize { .. } => "block_size",
            Self::LayerSplitOnly { .. } => "layer_split_only",
            Self::BatchedBelowSeqs { .. } => "batched_below_seqs",
            Self::FormatCapability { .. } => "format_capability",
        }
    }

    /// Whether it is about the layout (TP, PP, EP) rather than a flag.
    #[must_use]
    pub fn is_layout(self) -> bool {
        !matches!(
            self,
            Self::LongerThanModel { .. }
                | Self::BlockSize { .. }
                | Self::BatchedBelowSeqs { .. }
                | Self::FormatCapability { .. }
        )
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::ZeroSize => f.write_str("parallel sizes must be at least 1"),
            Self::TpHeads { tp, heads } => {
                write!(f, "TP {tp} does not divide {heads} attention heads")
            }
            Self::TpKvHeads { tp, kv_heads } => write!(
                f,
                "TP {tp} neither divides nor is a multiple of {kv_heads} KV heads"
            ),
            Self::TpAcrossNodes { tp, gpus_per_node } => {
                write!(f, "TP {tp} exceeds the {gpus_per_node} GPUs of one node")
            }
            Self::PpLayers { pp, layers } => write!(f, "PP {pp} exceeds {layers} layers"),
            Self::Experts { experts, tp } => write!(
                f,
                "with `--enable-expert-parallel`, {experts} experts do not divide over {tp} GPUs"
            ),
            Self::LongerThanModel {
                max_model_len,
                max_position_embeddings,
            } => write!(
                f,
                "`--max-model-len` {max_model_len} is above the model's maximum of {max_position_embeddings} tokens (allowed only with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)"
            ),
            Self::BlockSize { block_size } => write!(
                f,
                "`--block-size` {block_size} is not one the CUDA attention backends take (16, 32, 64, 128 or 256)"
            ),
            Self::LayerSplitOnly { tp } => write!(
                f,
                "TP {tp}: llama.cpp splits layers over GPUs (`--split-mode layer`, a pipeline split), not tensors; use PP {tp}"
            ),
            Self::FormatCapability { format, needs, has } => write!(
                f,
                "its {} kernels need compute capability {}.{} or newer, and this GPU is {}.{} (\"Minimum capability: {needs}. Current capability: {has}.\")",
                format.id(),
                needs / 10,
                needs % 10,
                has / 10,
                has % 10
            ),
            Self::BatchedBelowSeqs { tokens, seqs } => write!(
                f,
                "`--max-num-batched-tokens` {tokens} is below `--max-num-seqs` {seqs} (\"max_num_batched_tokens ({tokens}) must be greater than or equal to max_num_seqs ({seqs})\"); raise it to at least {seqs} or lower `--max-num-seqs`"
            ),
        }
    }
}

/// Why a layout is refused for a model, if it is (the rules of the module docs; the node
/// rule only when `gpus_per_node` is known).
#[must_use]
pub fn layout_refusal(
    m: &ModelArch,
    tp: u64,
    pp: u64,
    gpus_per_node: Option<u64>,
) -> Option<Refusal> {
    if tp == 0 || pp == 0 {
        return Some(Refusal::ZeroSize);
    }
    if let Some(n) = gpus_per_node.filter(|&n| tp > n) {
        return Some(Refusal::TpAcrossNodes {
            tp,
            gpus_per_node: n,
        });
    }
    if !m.heads.is_multiple_of(tp) {
        return Some(Refusal::TpHeads { tp, heads: m.heads });
    }
    if m.mla.is_none() && !m.kv_heads.is_multiple_of(tp) && !tp.is_multiple_of(m.kv_heads) {
        return Some(Refusal::TpKvHeads {
            tp,
            kv_heads: m.kv_heads,
        });
    }
    if pp > m.layers {
        return Some(Refusal::PpLayers {
            pp,
            layers: m.layers,
        });
    }
    None
}

/// With expert parallelism, whether the routed experts divide over the ranks.
#[must_use]
pub fn experts_refusal(m: &ModelArch, tp: u64, expert_parallel: bool) -> Option<Refusal> {
    match m.moe {
        Some(moe) if expert_parallel && !moe.experts.is_multiple_of(tp.max(1)) => {
            Some(Refusal::Experts {
                experts: moe.experts,
                tp: tp.max(1),
            })
        }
        _ => None,
    }
}

/// Whether a block size is one vLLM's config and its CUDA attention backends take.
#[must_use]
pub fn vllm_block_size_ok(block_size: u64) -> bool {
    VLLM_BLOCK_SIZES.contains(&block_size) && block_size.is_multiple_of(16)
}

/// Whether the engine refuses tensor parallelism of `tp` whatever the model (llama.cpp
/// splits layers only).
#[must_use]
pub fn engine_tp_refusal(engine: Engine, tp: u64) -> Option<Refusal> {
    (engine == Engine::LlamaCpp && tp > 1).then_some(Refusal::LayerSplitOnly { tp })
}

/// What the engine refuses in a scenario, the layout first (without the node rule, which
/// needs the GPU: [`layout_refusal`]).
#[must_use]
pub fn refusal(s: &Scenario) -> Option<Refusal> {
    let m = &s.model;
    let engine = s.flags.engine;
    let tp = s.tensor_parallel_size;
    if let Some(r) = engine_tp_refusal(engine, tp) {
        return Some(r);
    }
    if engine != Engine::Transformers {
        if let Some(r) = layout_refusal(m, tp, s.pipeline_parallel_size, None)
            .or_else(|| experts_refusal(m, tp, s.flags.expert_parallel))
        {
            return Some(r);
        }
    }
    let len = s.model_len();
    let long_refused =
        matches!(engine, Engine::Vllm { .. } | Engine::Sglang) && !s.flags.allow_long_max_model_len;
    if long_refused && len > m.max_position_embeddings {
        return Some(Refusal::LongerThanModel {
            max_model_len: len,
            max_position_embeddings: m.max_position_embeddings,
        });
    }
    if let Engine::Vllm { minor } = engine {
        let has = s.gpu_arch.and_then(super::GpuArch::compute_capability);
        if let Some(has) = has.filter(|h| *h < min_capability(s.format, minor)) {
            return Some(Refusal::FormatCapability {
                format: s.format,
                needs: min_capability(s.format, minor),
                has,
            });
        }
    }
    match (engine, s.flags.block_size) {
        (Engine::Vllm { .. }, Some(b)) if !vllm_block_size_ok(b) => {
            Some(Refusal::BlockSize { block_size: b })
        }
        _ => None,
    }
}

/// The compute capability (× 10) vLLM `0.minor` needs for a weight format on NVIDIA GPUs
/// (module docs): 0 for 16- and 32-bit weights.
#[must_use]
pub fn min_capability(format: crate::dtype::WeightFormat, minor: u32) -> u32 {
    use crate::dtype::WeightFormat as W;
    let marlin_sm75 = minor >= 14;
    match format {
        W::Fp8 | W::Fp8Block | W::Fp8Ffn | W::Nvfp4 if marlin_sm75 => 75,
        W::Fp8 | W::Fp8Block | W::Fp8Ffn | W::Nvfp4 | W::Mxfp4Experts | W::Mxfp4 => 80,
        W::Int4Awq | W::Int8W8a8 => 75,
        W::Int4Gptq => 60,
        W::Bf16 | W::Fp16 | W::Fp32 => 0,
    }
}
