//! Memory per GPU, the way the serving engine accounts it.
//!
//! # vLLM V1 (default: follows v0.19; `vllm-0.16` selects the v0.11–v0.16 accounting)
//! Source: `vllm/v1/worker/gpu_worker.py` (`determine_available_memory`),
//! `vllm/utils/mem_utils.py` (`memory_profiling`), `vllm/v1/core/kv_cache_utils.py`
//! (`get_kv_cache_config`, `check_enough_kv_cache_memory`,
//! `get_max_concurrency_for_kv_cache_config`), `vllm/engine/arg_utils.py` (defaults).
//!
//! ```text
//! budget      = gpu_memory_utilization × total memory (nvidia-smi total)
//! non_kv      = weights + activation_peak + non_torch_increase
//! kv_pool     = budget − non_kv
//! page        = block_size × kv bytes per token per layer (per GPU)
//! num_blocks  = kv_pool ÷ (page × layers per KV group)      (uniform: layers per group = layers)
//! ```
//! - **Weights** per GPU: column/row-parallel matrices split 1/TP; K/V projections replicated
//!   when `kv_heads < TP`; MLA down-projections, norms and routers replicated; embedding and
//!   LM head vocab-parallel over the vocabulary padded to a multiple of 64
//!   (`vocab_parallel_embedding.py`, `DEFAULT_VOCAB_PADDING_SIZE`). Pipeline stages hold
//!   `layers / PP` layers (the first the embedding, the last the LM head). Quantized bytes:
//!   see [`crate::dtype`].
//! - **Activation peak** of the profiling run = max(forward pass over
//!   `max_num_batched_tokens` tokens, sampler warm-up). Forward: the MLP intermediates
//!   (`gate_up` output `2 × intermediate/TP`, activation output `intermediate/TP`) plus four
//!   hidden-size buffers per token, in the activation dtype; MoE: `top_k × (3 × moe_intermediate/TP
//!   + hidden)` per token (fused-MoE intermediate caches). Sampler: `_dummy_sampler_run` over
//!   `max_num_seqs` rows of full-vocabulary fp32 logits; the measured peak is
//!   [`SAMPLER_COPIES_V17`] such copies in v0.17+ and [`SAMPLER_COPIES_V11`] in v0.11–v0.16
//!   (Qwen3-14B on H100: 2.23 GiB vs 5.64 GiB, ../shared/calibration). The retained hidden
//!   states of the forward (`tokens × hidden × 2 B`) stay allocated during sampling.
//! - **Defaults** (`arg_utils.py`, `_set_default_args`, OpenAI server): on GPUs with ≥ 70 GiB,
//!   `max_num_batched_tokens = 8192` and `max_num_seqs = 1024`; below, 2048 and 256.
//! - **Non-torch increase** during profiling (NCCL communicators, custom all-reduce buffers):
//!   [`NON_TORCH_TP1_GIB`] at world size 1; [`NON_TORCH_MULTI_GIB`] + [`NON_TORCH_PER_RANK_GIB`]
//!   × world size above (NCCL's per-peer channel buffers grow with the ranks).
//! - **CUDA context** (~0.5 GiB at TP1, ~1.5 GiB with NCCL) exists before profiling and is not
//!   charged to the budget, but nvidia-smi shows it. **CUDA graphs** are captured after KV
//!   sizing (v0.19 default), also outside the budget: [`CUDA_GRAPH_BASE_GIB`] +
//!   [`CUDA_GRAPH_PER_LAYER_GIB`] × layers, fitted to the v0.19 logs' "graph capturing took".
//! - **Hybrid sliding-window models** (Gemma 2/3, gpt-oss): layers are grouped into KV groups
//!   of `min(layers of each type)` layers; all groups share one pool of blocks; a sliding layer
//!   needs `min(window − 1 + max_num_batched_tokens, max_model_len)` tokens of blocks (+1 block)
//!   per request, a full layer `max_model_len`. The log's "KV cache size: N tokens" is
//!   `num_blocks ÷ groups × block_size`.
//!
//! # SGLang
//! `python/sglang/srt/model_executor/model_runner.py` (`profile_max_num_token`): the pool is
//! `mem_fraction_static × total − (total − free after loading weights)`; cell per token as
//! above; page size 1.
//!
//! # TensorRT-LLM
//! `docs/source/reference/memory.md`: KV cache = `free_gpu_memory_fraction` (0.9) of the
//! memory free after weights and the activation buffer (sized by `max_num_tokens` at build);
//! 32 tokens per block.
//!
//! # Hugging Face transformers
//! Weights at the load dtype, plus a dynamic KV cache for the requests, plus a prefill
//! activation (logits of the prompt in fp32); `device_map="auto"` splits layers (no TP).

use crate::catalog::Gpu;
use crate::dtype::{KvDtype, WeightFormat};
use crate::inputs::{EngineFlags, Workload};
use crate::model::{LayerAttention, ModelArch};
use serde::Serialize;
use std::fmt;

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
/// Non-torch at world size > 1, per rank, GiB.
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
        }
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

/// Weight bytes on the busiest GPU, and per pipeline stage.
#[must_use]
pub fn weights_per_gpu(s: &Scenario) -> u64 {
    let mut max = 0;
    for_each_stage_weights(s, |bytes| max = max.max(bytes));
    max
}

fn ceil_div(a: u64, b: u64) -> u64 {
    a.div_ceil(b.max(1))
}

/// Weight bytes of each pipeline stage on one of its TP ranks.
#[must_use]
pub fn stage_weights(s: &Scenario) -> Vec<u64> {
    let mut out = Vec::new();
    for_each_stage_weights(s, |bytes| out.push(bytes));
    out
}

/// MoE layers among layers `start..start + n` (layers past `is_moe` are dense).
fn moe_layers_in(is_moe: &[bool], start: u64, n: u64) -> u64 {
    let clip = |i: u64| usize::try_from(i).map_or(is_moe.len(), |i| i.min(is_moe.len()));
    let range = &is_moe[clip(start)..clip(start.saturating_add(n))];
    u64::try_from(range.iter().filter(|&&x| x).count()).unwrap_or(0)
}

/// Weight bytes of one decoder layer with parameters `p` on one TP rank: sharded matrices
/// split over TP, K/V projections over at most `kv_heads` ranks (replicated beyond), norms
/// and routers replicated in 16-bit.
fn layer_bytes_per_rank(s: &Scenario, p: &crate::model::ParamBreakdown) -> u64 {
    let m = &s.model;
    let tp = s.tensor_parallel_size.max(1);
    let (f, g) = (s.format, s.group_size);
    let hp = f.high_precision_bytes();
    let kv_shard = if m.kv_heads >= tp {
        tp
    } else {
        m.kv_heads.max(1)
    };
    let fa = f.attention_format();
    fa.linear_bytes(ceil_div(p.attn_sharded, tp), m.hidden, g)
        + f.linear_bytes(ceil_div(p.linear_sharded, tp), m.hidden, g)
        + fa.linear_bytes(ceil_div(p.linear_kv, kv_shard), m.hidden, g)
        + fa.linear_bytes(p.linear_replicated, m.hidden, g)
        + f.expert_bytes(ceil_div(p.expert, tp), m.hidden, g)
        + (p.router + p.replicated) * hp
        + ceil_div(p.bias_sharded, tp) * hp
        + ceil_div(p.bias_kv, kv_shard) * hp
}

/// Calls `each` with the weight bytes of every pipeline stage, first to last, on one of its
/// TP ranks (allocates nothing: every estimate calls it).
fn for_each_stage_weights(s: &Scenario, mut each: impl FnMut(u64)) {
    let m = &s.model;
    let tp = s.tensor_parallel_size.max(1);
    let pp = s.pipeline_parallel_size.max(1).min(m.layers.max(1));
    let hp = s.format.high_precision_bytes();
    let layer_bytes = |is_moe: bool| layer_bytes_per_rank(s, &m.layer_params_of_kind(is_moe));
    // Bytes of one MoE and one dense layer, sized when a stage first holds one.
    let (mut moe_layer, mut dense_layer) = (None, None);
    let vocab_padded = m.vocab.div_ceil(64) * 64;
    let vocab_shard = ceil_div(vocab_padded, tp) * m.hidden * hp;
    // Layer ranges per stage: vLLM `get_pp_indices` gives each stage layers/pp, the
    // remainder to the last stages.
    let base = m.layers / pp;
    let rem = m.layers % pp;
    let mut start = 0;
    for stage in 0..pp {
        let n = base + u64::from(stage >= pp - rem);
        let mut bytes = 0u64;
        // Layers differ only in being MoE or dense: size one of each kind and count them
        // (an estimate must not walk every layer).
        let n_moe = moe_layers_in(&m.layer_is_moe, start, n);
        let n_dense = n - n_moe;
        if n_moe > 0 {
            bytes += n_moe * *moe_layer.get_or_insert_with(|| layer_bytes(true));
        }
        if n_dense > 0 {
            bytes += n_dense * *dense_layer.get_or_insert_with(|| layer_bytes(false));
        }
        start += n;
        if stage == 0 {
            bytes += vocab_shard;
            bytes += ceil_div(m.extra_params, tp) * hp;
        }
        // Rotary cos/sin cache: allocated with the model on every GPU.
        bytes += m.rope_cache_bytes;
        if stage == pp - 1 {
            bytes += m.hidden * hp; // final norm
            if !m.tied_embeddings || pp > 1 {
                bytes += vocab_shard;
            }
        }
        each(bytes);
    }
}

/// Default `max_num_seqs` and `max_num_batched_tokens` of vLLM's OpenAI server for a GPU.
#[must_use]
pub fn vllm_defaults(gpu_bytes: u64) -> (u64, u64) {
    if gpu_bytes >= 70 * GIB {
        (1024, 8192)
    } else {
        (256, 2048)
    }
}

// OK because: all u64 → f64 conversions below are of byte counts < 2^53 (8 PiB).
#[allow(clippy::cast_precision_loss)]
fn f(x: u64) -> f64 {
    x as f64
}

// OK because: inputs are finite, non-negative and below 2^63 by construction.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
fn to_u64(x: f64) -> u64 {
    if x.is_finite() && x > 0.0 {
        x.min(9.0e18) as u64
    } else {
        0
    }
}

fn gib(x: f64) -> u64 {
    to_u64(x * f(GIB))
}

/// One KV-cache group (vLLM V1 hybrid allocator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KvGroup {
    /// Sliding window, or `None` for full attention.
    pub window: Option<u64>,
    /// Layers in this group (on this GPU's pipeline stage).
    pub layers: u64,
}

/// A short list of `Copy` items kept inline up to `N`, on the heap past that: the sliding
/// windows of a model (one or two kinds) fit inline, so an estimate allocates nothing.
#[derive(Clone)]
enum Inline<T: Copy, const N: usize> {
    Inline { len: usize, items: [T; N] },
    Heap(Vec<T>),
}

impl<T: Copy, const N: usize> Inline<T, N> {
    fn new(fill: T) -> Self {
        Self::Inline {
            len: 0,
            items: [fill; N],
        }
    }

    fn push(&mut self, x: T) {
        match self {
            Self::Inline { len, items } if *len < N => {
                items[*len] = x;
                *len += 1;
            }
            Self::Inline { items, .. } => {
                let mut v = Vec::with_capacity(2 * N + 1);
                v.extend_from_slice(&items[..]);
                v.push(x);
                *self = Self::Heap(v);
            }
            Self::Heap(v) => v.push(x),
        }
    }

    fn as_slice(&self) -> &[T] {
        match self {
            Self::Inline { len, items } => &items[..*len],
            Self::Heap(v) => v,
        }
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Self::Inline { len, items } => &mut items[..*len],
            Self::Heap(v) => v,
        }
    }
}

/// The KV groups of an estimate (vLLM hybrid allocator), kept as the layer counts they are
/// cut from: the layers of each sliding window, then the full-attention layers, each cut
/// into groups of `group_size` layers (the last group of a kind may hold fewer).
/// [`KvGroups::iter`] lists the groups in vLLM's order; serialized as that list.
#[derive(Clone)]
pub struct KvGroups {
    /// (window, layers) of each sliding window, in order of first appearance.
    windows: Inline<(u64, u64), 2>,
    /// Full-attention layers.
    full: u64,
    /// Layers per group (at least 1).
    group_size: u64,
}

impl KvGroups {
    /// The groups, in vLLM's order (sliding windows first, then full attention).
    pub fn iter(&self) -> impl Iterator<Item = KvGroup> + '_ {
        let size = self.group_size.max(1);
        let cut = move |window: Option<u64>, n: u64| {
            (0..n.div_ceil(size)).map(move |k| KvGroup {
                window,
                layers: (n - k * size).min(size),
            })
        };
        self.windows
            .as_slice()
            .iter()
            .flat_map(move |&(w, n)| cut(Some(w), n))
            .chain(cut(None, self.full))
    }

    /// Number of groups.
    #[must_use]
    pub fn len(&self) -> usize {
        usize::try_from(self.count()).unwrap_or(usize::MAX)
    }

    /// Whether there are no groups (never, for an estimate).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// The groups as a list.
    #[must_use]
    pub fn to_vec(&self) -> Vec<KvGroup> {
        self.iter().collect()
    }

    /// Layers per group (tensor slots).
    #[must_use]
    pub fn group_size(&self) -> u64 {
        self.group_size
    }

    /// Groups of `n` layers of one kind.
    fn groups_of(&self, n: u64) -> u64 {
        n.div_ceil(self.group_size.max(1))
    }

    fn count(&self) -> u64 {
        self.windows
            .as_slice()
            .iter()
            .map(|&(_, n)| self.groups_of(n))
            .sum::<u64>()
            + self.groups_of(self.full)
    }

    /// Layers over all groups.
    fn layers(&self) -> u64 {
        self.windows.as_slice().iter().map(|&(_, n)| n).sum::<u64>() + self.full
    }

    /// [`blocks_for_len`] over these groups: the groups of one kind need the same blocks each,
    /// so each kind's blocks are counted once and multiplied by its groups.
    fn blocks_for_len(&self, block_size: u64, max_num_batched_tokens: u64, len: u64) -> u64 {
        let one = |window: Option<u64>| {
            blocks_for_len(
                &[KvGroup { window, layers: 0 }],
                block_size,
                max_num_batched_tokens,
                len,
            )
        };
        let sliding: u64 = self
            .windows
            .as_slice()
            .iter()
            .map(|&(w, n)| self.groups_of(n) * one(Some(w)))
            .sum();
        let full = self.groups_of(self.full);
        sliding + if full == 0 { 0 } else { full * one(None) }
    }
}

impl PartialEq for KvGroups {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl fmt::Debug for KvGroups {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for KvGroups {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_seq(self.iter())
    }
}

/// KV groups of the busiest pipeline stage, and layers per group (tensor slots).
#[must_use]
pub fn kv_groups(s: &Scenario) -> (Vec<KvGroup>, u64) {
    let groups = kv_groups_compact(s);
    (groups.to_vec(), groups.group_size)
}

/// [`kv_groups`] without allocating (for every estimate).
fn kv_groups_compact(s: &Scenario) -> KvGroups {
    let m = &s.model;
    let pp = s.pipeline_parallel_size.max(1).min(m.layers.max(1));
    let n_stage = m.layers.div_ceil(pp);
    let uniform = |layers: u64| KvGroups {
        windows: Inline::new((0, 0)),
        full: layers,
        group_size: layers,
    };
    if !matches!(s.flags.engine, Engine::Vllm { .. }) {
        // An engine without hybrid allocation: every layer keeps the full context, except
        // SGLang/TRT-LLM which we treat conservatively.
        return uniform(n_stage.max(1));
    }
    let stage_layers = m
        .layer_attention
        .iter()
        .take(usize::try_from(n_stage).unwrap_or(0));
    let mut full = 0u64;
    // (window, layers), in order of first appearance.
    let mut windows: Inline<(u64, u64), 2> = Inline::new((0, 0));
    for a in stage_layers {
        match a {
            LayerAttention::Full => full += 1,
            LayerAttention::Sliding { window } => {
                match windows.as_mut_slice().iter_mut().find(|(w, _)| w == window) {
                    Some(e) => e.1 += 1,
                    None => windows.push((*window, 1)),
                }
            }
        }
    }
    let kinds = windows.as_slice();
    if kinds.is_empty() {
        // Uniform.
        return uniform(n_stage.max(1));
    }
    if full == 0 && kinds.len() == 1 {
        let n = kinds[0].1;
        return KvGroups {
            windows,
            full: 0,
            group_size: n,
        };
    }
    let group_size = kinds
        .iter()
        .map(|(_, n)| *n)
        .chain((full > 0).then_some(full))
        .min()
        .unwrap_or(1)
        .max(1);
    KvGroups {
        windows,
        full,
        group_size,
    }
}

/// The memory verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fit {
    /// Starts and serves the workload.
    Fits,
    /// Starts, but the workload's concurrency exceeds what the KV pool holds at once
    /// (requests queue).
    FitsWithQueueing,
    /// One request of `max_model_len` does not fit in the KV pool.
    KvTooSmall,
    /// Weights and runtime alone exceed the budget.
    WeightsTooLarge,
}

/// Per-GPU memory breakdown and what it implies.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    /// Engine budget per GPU (utilization × total).
    pub budget_bytes: u64,
    /// Total memory of the GPU (driver view).
    pub gpu_total_bytes: u64,
    /// Weights on the busiest GPU.
    pub weights_bytes: u64,
    /// Activation peak of the profiling run.
    pub activation_bytes: u64,
    /// Non-torch memory charged to the budget (NCCL, all-reduce buffers).
    pub non_torch_bytes: u64,
    /// CUDA graphs (outside the budget in vLLM v0.19).
    pub cuda_graph_bytes: u64,
    /// CUDA context (outside the budget).
    pub cuda_context_bytes: u64,
    /// KV pool (0 when negative).
    pub kv_pool_bytes: u64,
    /// The pool before clamping, may be negative.
    pub kv_pool_signed_bytes: i64,
    /// KV bytes per token on this GPU (all its layers; sliding layers counted in full).
    pub kv_bytes_per_token: u64,
    /// Block size in tokens.
    pub block_size: u64,
    /// Blocks in the pool.
    pub kv_blocks: u64,
    /// Tokens the pool holds (vLLM's "GPU KV cache size").
    pub kv_tokens: u64,
    /// KV bytes one request of `max_model_len` needs on this GPU.
    pub kv_bytes_per_request: u64,
    /// Requests of `max_model_len` tokens that fit at once.
    pub max_concurrency: f64,
    /// Requests of the workload's length (prompt + output) that fit at once.
    pub max_concurrency_workload: f64,
    /// Longest `max_model_len` that fits (one request).
    pub max_model_len_fit: u64,
    /// `max_model_len` used.
    pub max_model_len: u64,
    /// `max_num_seqs` used.
    pub max_num_seqs: u64,
    /// `max_num_batched_tokens` used.
    pub max_num_batched_tokens: u64,
    /// What nvidia-smi will show per GPU once serving.
    pub nvidia_smi_bytes: u64,
    /// KV groups of the busiest stage (vLLM hybrid allocator).
    pub kv_groups: KvGroups,
    /// The verdict.
    pub fit: Fit,
    /// Plain-words verdict with the fix (text via `Display` / `to_string()`).
    pub verdict: Verdict,
    /// Assumptions and warnings (texts via [`Warnings::iter`] / [`Warnings::to_strings`]).
    pub warnings: Warnings,
}

/// The plain-words verdict of an [`Estimate`] with the fix, kept as the numbers it quotes and
/// written out only when displayed (`Display`, `to_string()`; serialized as its text).
#[derive(Clone, PartialEq)]
pub struct Verdict {
    fit: Fit,
    /// KV pool before clamping.
    pool: i64,
    /// KV bytes of one request of `max_model_len`.
    per_request: u64,
    /// Longest `max_model_len` that fits.
    len_fit: u64,
    /// Requests of the workload's length that fit at once.
    conc: f64,
    /// Memory fraction used.
    util: f64,
    /// Tensor parallel size (at least 1).
    tp: u64,
    /// Whether the KV cache is already fp8.
    kv_fp8: bool,
    /// The scenario's `max_model_len`.
    model_len: u64,
    /// Prompt + output tokens of one request.
    workload_tokens: u64,
    /// Concurrent users.
    users: u64,
}

/// `{:.2} GiB` of a signed byte count (display only).
struct GibSigned(i64);

impl fmt::Display for GibSigned {
    fn fmt(&self, fm: &mut fmt::Formatter<'_>) -> fmt::Result {
        // OK because: display only.
        #[allow(clippy::cast_precision_loss)]
        let v = self.0 as f64 / f(GIB);
        write!(fm, "{v:.2} GiB")
    }
}

/// `{:.2} GiB` of a byte count.
struct Gib(u64);

impl fmt::Display for Gib {
    fn fmt(&self, fm: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(fm, "{:.2} GiB", f(self.0) / f(GIB))
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let util = self.util;
        let conc = self.conc;
        let next_tp = self.tp.wrapping_mul(2).min(64);
        let fp8_hint = if self.kv_fp8 {
            ""
        } else {
            ", `--kv-cache-dtype fp8`"
        };
        match self.fit {
            Fit::WeightsTooLarge => write!(
                f,
                "will not start: weights and runtime need more than the {util:.2} × memory budget (KV pool would be {}) — use `--tensor-parallel-size {next_tp}`, a smaller format (fp8 or int4), or a GPU with more memory",
                GibSigned(self.pool)
            ),
            Fit::KvTooSmall => {
                let len_fit = self.len_fit;
                let round = (len_fit / 1000) * 1000;
                let len_hint = if round >= 1000 { round } else { len_fit };
                write!(
                    f,
                    "will not start: one request of {} tokens needs {} of KV cache, the pool is {} — use `--max-model-len {len_hint}`{fp8_hint}, or `--tensor-parallel-size {next_tp}`",
                    self.model_len,
                    Gib(self.per_request),
                    GibSigned(self.pool)
                )
            }
            Fit::FitsWithQueueing => write!(
                f,
                "starts, but only {conc:.1} requests of {} tokens fit in the KV cache at once; {} users will queue — add GPUs (`--tensor-parallel-size {next_tp}` or replicas){fp8_hint}",
                self.workload_tokens,
                self.users
            ),
            Fit::Fits => write!(
                f,
                "fits: KV pool {} holds {conc:.1} concurrent requests of {} tokens",
                GibSigned(self.pool),
                self.workload_tokens
            ),
        }
    }
}

impl fmt::Debug for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string(), f)
    }
}

impl Serialize for Verdict {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_str(self)
    }
}

/// One assumption or warning of an [`Estimate`]; its text via `Display`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Warning {
    /// `max_model_len` exceeds the model's `max_position_embeddings`.
    LongerThanModel {
        /// The `max_model_len` used.
        max_model_len: u64,
        /// The model's `max_position_embeddings`.
        max_position_embeddings: u64,
    },
    /// An fp32 checkpoint loaded at fp32 by transformers.
    Fp32Checkpoint,
    /// The tensor parallel size does not divide the attention heads.
    TpDoesNotDivideHeads {
        /// Tensor parallel size.
        tp: u64,
        /// Attention heads.
        heads: u64,
    },
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::LongerThanModel {
                max_model_len,
                max_position_embeddings,
            } => write!(
                f,
                "max_model_len {max_model_len} exceeds the model's max_position_embeddings {max_position_embeddings}; vLLM refuses unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"
            ),
            Self::Fp32Checkpoint => f.write_str("this is an fp32 checkpoint: 4 bytes per parameter; load it with torch_dtype=torch.bfloat16 to halve it"),
            Self::TpDoesNotDivideHeads { tp, heads } => write!(
                f,
                "tensor_parallel_size {tp} does not divide {heads} attention heads: vLLM refuses this layout"
            ),
        }
    }
}

impl fmt::Debug for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string(), f)
    }
}

impl Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_str(self)
    }
}

/// The warnings of an [`Estimate`], in order (at most one of each [`Warning`] kind);
/// serialized as a list of texts.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Warnings([Option<Warning>; 3]);

impl Warnings {
    fn push(&mut self, w: Warning) {
        if let Some(slot) = self.0.iter_mut().find(|x| x.is_none()) {
            *slot = Some(w);
        }
    }

    /// The warnings, in order.
    pub fn iter(&self) -> impl Iterator<Item = Warning> + '_ {
        self.0.iter().flatten().copied()
    }

    /// How many.
    #[must_use]
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0[0].is_none()
    }

    /// Their texts, in order.
    #[must_use]
    pub fn to_strings(&self) -> Vec<String> {
        self.iter().map(|w| w.to_string()).collect()
    }
}

impl fmt::Debug for Warnings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Warnings {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_seq(self.iter())
    }
}

/// Sizes one scenario on one GPU. Never fails: "does not fit" is a verdict.
///
/// # Example
/// ```
/// use vramfit_core::{model::ModelArch, sizing::{estimate, Scenario}};
/// let cfg = r#"{"architectures":["Qwen2ForCausalLM"],"model_type":"qwen2","hidden_size":3584,
///  "intermediate_size":18944,"num_hidden_layers":28,"num_attention_heads":28,
///  "num_key_value_heads":4,"vocab_size":152064,"tie_word_embeddings":false,
///  "max_position_embeddings":32768}"#;
/// let mut s = Scenario::new(ModelArch::from_config_str(cfg).unwrap());
/// s.flags.max_model_len = Some(8192);
/// let e = estimate(&s, 79.19, None);
/// assert!(e.kv_tokens > 1_000_000);
/// ```
#[must_use]
pub fn estimate(s: &Scenario, gpu_total_gib: f64, gpu: Option<&Gpu>) -> Estimate {
    let total = gpu.map_or_else(|| gib(gpu_total_gib), Gpu::usable_bytes);
    estimate_bytes(s, total)
}

/// [`estimate`] for a GPU given by its total bytes.
#[must_use]
#[allow(clippy::too_many_lines)] // one engine model, step by step, as the module docs read
pub fn estimate_bytes(s: &Scenario, gpu_total_bytes: u64) -> Estimate {
    let m = &s.model;
    let mut warnings = Warnings::default();
    let tp = s.tensor_parallel_size.max(1);
    let world = s.world_size();
    let util = s
        .flags.gpu_memory_utilization
        .filter(|u| u.is_finite() && *u > 0.0 && *u <= 1.0)
        .unwrap_or_else(|| s.flags.engine.default_memory_fraction());
    let (def_seqs, def_tokens) = vllm_defaults(gpu_total_bytes);
    // Clamped to ranges no engine exceeds, so that every product below stays inside u64.
    let max_model_len = s.model_len().min(1 << 32);
    let max_num_seqs = s.flags.max_num_seqs.unwrap_or(def_seqs).clamp(1, 1 << 20);
    let max_num_batched_tokens = s
        .flags.max_num_batched_tokens
        .unwrap_or(def_tokens)
        .clamp(1, 1 << 26);
    let block_size = s
        .flags.block_size
        .unwrap_or_else(|| s.flags.engine.default_block_size())
        .clamp(1, 1 << 16);
    if max_model_len > m.max_position_embeddings {
        warnings.push(Warning::LongerThanModel {
            max_model_len,
            max_position_embeddings: m.max_position_embeddings,
        });
    }
    if m.stored_fp32 && s.flags.engine == Engine::Transformers && s.format == WeightFormat::Fp32 {
        warnings.push(Warning::Fp32Checkpoint);
    }
    if !m.heads.is_multiple_of(tp) {
        warnings.push(Warning::TpDoesNotDivideHeads { tp, heads: m.heads });
    }

    let weights = weights_per_gpu(s);
    let act_bytes = 2u64; // activations are 16-bit
    let budget = to_u64(util * f(gpu_total_bytes));

    // Activation peak (vLLM profiling run).
    let h = m.hidden;
    let forward_per_token = {
        let dense_layers = m.layer_is_moe.iter().any(|x| !*x);
        let mlp = if !dense_layers {
            0
        } else if m.gated_mlp {
            3 * m.intermediate / tp
        } else {
            2 * m.intermediate / tp
        };
        (mlp + 4 * h) * act_bytes
    };
    let forward_peak = forward_per_token * max_num_batched_tokens;
    let copies = match s.flags.engine {
        Engine::Vllm { minor } if minor <= 16 => SAMPLER_COPIES_V11,
        _ => SAMPLER_COPIES_V17,
    };
    let sampler_peak =
        to_u64(copies * f(max_num_seqs * m.vocab * 4)) + max_num_batched_tokens * h * act_bytes;
    // Fused-MoE intermediate caches stay allocated as a workspace (vLLM
    // `fused_moe.py`, `intermediate_cache1..3`): T × top_k × (2N + N + hidden) × 2 B.
    let moe_workspace = match m.moe {
        Some(moe) if m.layer_is_moe.iter().any(|x| *x) => {
            max_num_batched_tokens
                * moe.experts_per_token
                * (3 * moe.expert_intermediate.div_ceil(tp) + h)
                * act_bytes
        }
        _ => 0,
    };
    let (activation, non_torch, cuda_graph, context) = match s.flags.engine {
        Engine::Vllm { minor } => {
            let non_torch = if world == 1 {
                if minor >= 18 {
                    NON_TORCH_TP1_GIB
                } else {
                    0.13
                }
            } else {
                NON_TORCH_MULTI_GIB + NON_TORCH_PER_RANK_GIB * f(world)
            };
            let layers_stage = m.layers.div_ceil(s.pipeline_parallel_size.max(1));
            let moe_factor = if m.moe.is_some() { 1.3 } else { 1.0 };
            let graphs =
                (CUDA_GRAPH_BASE_GIB + CUDA_GRAPH_PER_LAYER_GIB * f(layers_stage)) * moe_factor;
            let ctx = if world == 1 {
                CUDA_CONTEXT_GIB
            } else {
                CUDA_CONTEXT_MULTI_GIB
            };
            (
                forward_peak.max(sampler_peak) + moe_workspace,
                gib(non_torch),
                gib(graphs),
                gib(ctx),
            )
        }
        Engine::Sglang => {
            // SGLang reserves (1 - mem_fraction_static) for activations and graphs; charge
            // nothing extra to the static part.
            (
                0,
                0,
                0,
                gib(if world == 1 {
                    CUDA_CONTEXT_GIB
                } else {
                    CUDA_CONTEXT_MULTI_GIB
                }),
            )
        }
        Engine::TrtLlm => {
            // Activation buffer sized for max_num_tokens (8192 default) at build time.
            (
                forward_peak,
                0,
                0,
                gib(if world == 1 {
                    CUDA_CONTEXT_GIB
                } else {
                    CUDA_CONTEXT_MULTI_GIB
                }),
            )
        }
        Engine::Transformers => {
            // Prefill of the whole prompt batch at once: the fp32 logits dominate.
            let tokens = s
                .workload.prompt_tokens
                .clamp(1, 1 << 32)
                .saturating_mul(s.workload.users.clamp(1, 1 << 20));
            let logits = tokens.saturating_mul(m.vocab * 4);
            (
                forward_per_token
                    .saturating_mul(tokens)
                    .saturating_add(logits),
                0,
                0,
                gib(CUDA_CONTEXT_GIB),
            )
        }
    };

    let pool_signed: i64 = match s.flags.engine {
        Engine::Sglang => {
            i128_to_i64(i128::from(budget) - i128::from(weights) - i128::from(context))
        }
        Engine::TrtLlm => {
            let free = i128::from(gpu_total_bytes)
                - i128::from(weights)
                - i128::from(activation)
                - i128::from(context);
            // OK because: util ≤ 1 and |free| < 2^63.
            #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
            let v = (util * free as f64) as i128;
            i128_to_i64(v)
        }
        Engine::Transformers => i128_to_i64(
            i128::from(budget) - i128::from(weights) - i128::from(activation) - i128::from(context),
        ),
        Engine::Vllm { .. } => i128_to_i64(
            i128::from(budget)
                - i128::from(weights)
                - i128::from(activation)
                - i128::from(non_torch),
        ),
    };
    let pool = u64::try_from(pool_signed).unwrap_or(0);

    // KV layout.
    let per_layer = m.kv_bytes_per_token_layer(s.kv_bytes(), tp);
    let groups = kv_groups_compact(s);
    let group_size = groups.group_size;
    let layers_on_gpu = groups.layers();
    let kv_bytes_per_token = per_layer * layers_on_gpu;
    let page = block_size * per_layer;
    let kv_blocks = if page == 0 {
        0
    } else {
        pool / page.saturating_mul(group_size)
    };
    let n_groups = groups.count().max(1);
    let kv_tokens = kv_blocks / n_groups * block_size;
    // Blocks one request of `len` tokens needs, over all groups (vLLM
    // `get_max_concurrency_for_kv_cache_config`).
    let blocks_for = |len: u64| groups.blocks_for_len(block_size, max_num_batched_tokens, len);
    let req_blocks = blocks_for(max_model_len);
    let kv_bytes_per_request = req_blocks.saturating_mul(page).saturating_mul(group_size);
    let max_concurrency = if req_blocks == 0 {
        0.0
    } else {
        f(kv_blocks) / f(req_blocks)
    };
    let workload_len = s
        .workload.prompt_tokens
        .saturating_add(s.workload.output_tokens)
        .clamp(1, max_model_len);
    let wl_blocks = blocks_for(workload_len);
    let max_concurrency_workload = if wl_blocks == 0 {
        0.0
    } else {
        f(kv_blocks) / f(wl_blocks)
    };
    // Longest single request that fits.
    // Capped at the model's max_position_embeddings: vLLM refuses longer max_model_len.
    let max_model_len_fit = groups.longest_fitting_len(
        block_size,
        max_num_batched_tokens,
        kv_blocks,
        m.max_position_embeddings.max(1),
    );

    let nvidia_smi = match s.flags.engine {
        Engine::Vllm { .. } => budget.max(weights + activation + non_torch) + cuda_graph + context,
        _ => weights + pool + activation + context,
    };

    let fit = if weights + activation + non_torch > budget {
        Fit::WeightsTooLarge
    } else if kv_blocks < req_blocks {
        Fit::KvTooSmall
    } else if max_concurrency_workload + 1e-9 < f(s.workload.users) {
        Fit::FitsWithQueueing
    } else {
        Fit::Fits
    };
    let verdict = Verdict {
        fit,
        pool: pool_signed,
        per_request: kv_bytes_per_request,
        len_fit: max_model_len_fit,
        conc: max_concurrency_workload,
        util,
        tp,
        kv_fp8: s.flags.kv_dtype == KvDtype::Fp8,
        model_len: s.model_len(),
        // Wrapping as the text always did (release arithmetic); the plan reports workloads.
        workload_tokens: s.workload.prompt_tokens.wrapping_add(s.workload.output_tokens),
        users: s.workload.users,
    };
    Estimate {
        budget_bytes: budget,
        gpu_total_bytes,
        weights_bytes: weights,
        activation_bytes: activation,
        non_torch_bytes: non_torch,
        cuda_graph_bytes: cuda_graph,
        cuda_context_bytes: context,
        kv_pool_bytes: pool,
        kv_pool_signed_bytes: pool_signed,
        kv_bytes_per_token,
        block_size,
        kv_blocks,
        kv_tokens,
        kv_bytes_per_request,
        max_concurrency,
        max_concurrency_workload,
        max_model_len_fit,
        max_model_len,
        max_num_seqs,
        max_num_batched_tokens,
        nvidia_smi_bytes: nvidia_smi,
        kv_groups: groups,
        fit,
        verdict,
        warnings,
    }
}

/// Blocks one request of `len` tokens needs over all KV groups (vLLM
/// `get_max_concurrency_for_kv_cache_config`): a full-attention group `⌈len / block⌉`, a
/// sliding group `⌈min(window − 1 + max_num_batched_tokens, len) / block⌉ + 1`.
#[must_use]
pub fn blocks_for_len(
    groups: &[KvGroup],
    block_size: u64,
    max_num_batched_tokens: u64,
    len: u64,
) -> u64 {
    let bs = block_size.max(1);
    groups
        .iter()
        .map(|g| match g.window {
            None => len.div_ceil(bs),
            Some(w) => {
                w.saturating_sub(1)
                    .saturating_add(max_num_batched_tokens)
                    .min(len)
                    .div_ceil(bs)
                    + 1
            }
        })
        .sum()
}

impl KvGroups {
    /// The largest `len ≤ cap` whose request fits in `kv_blocks` blocks (0 if none): a
    /// binary search on [`blocks_for_len`]. Without sliding windows every group needs
    /// `⌈len / block⌉` blocks, so the answer is `⌊kv_blocks / groups⌋ × block` (capped): the
    /// value the search finds, without searching.
    fn longest_fitting_len(
        &self,
        block_size: u64,
        max_num_batched_tokens: u64,
        kv_blocks: u64,
        cap: u64,
    ) -> u64 {
        if self.windows.as_slice().is_empty() {
            let per_group = kv_blocks / self.count().max(1);
            return per_group.saturating_mul(block_size.max(1)).min(cap);
        }
        self.longest_fitting_len_search(block_size, max_num_batched_tokens, kv_blocks, cap)
    }

    /// [`Self::longest_fitting_len`] by binary search, for any groups.
    fn longest_fitting_len_search(
        &self,
        block_size: u64,
        max_num_batched_tokens: u64,
        kv_blocks: u64,
        cap: u64,
    ) -> u64 {
        let (mut lo, mut hi) = (0u64, cap);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.blocks_for_len(block_size, max_num_batched_tokens, mid) <= kv_blocks {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }
}

impl Estimate {
    /// Longest context (prompt + output) each of `users` concurrent requests can have:
    /// the largest `L` with `users × blocks(L) ≤ blocks in the pool`.
    #[must_use]
    pub fn longest_len_for_users(&self, users: u64) -> u64 {
        let users = users.max(1);
        let fits = |l: u64| {
            users.saturating_mul(self.kv_groups.blocks_for_len(
                self.block_size,
                self.max_num_batched_tokens,
                l,
            )) <= self.kv_blocks
        };
        let (mut lo, mut hi) = (0u64, self.kv_tokens.saturating_mul(64).clamp(1, 1 << 40));
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }
}

fn i128_to_i64(v: i128) -> i64 {
    i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX })
}

/// Formats bytes as GiB with two decimals.
#[must_use]
pub fn fmt_gib(bytes: u64) -> String {
    Gib(bytes).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    /// The KV groups as a list, the way they were built before [`KvGroups`] kept counts.
    fn reference_groups(s: &Scenario) -> (Vec<KvGroup>, u64) {
        let m = &s.model;
        let pp = s.pipeline_parallel_size.max(1).min(m.layers.max(1));
        let n_stage = m.layers.div_ceil(pp);
        let stage: Vec<&LayerAttention> = m
            .layer_attention
            .iter()
            .take(usize::try_from(n_stage).unwrap_or(0))
            .collect();
        let full = stage
            .iter()
            .filter(|a| matches!(a, LayerAttention::Full))
            .count() as u64;
        let mut windows: Vec<(u64, u64)> = Vec::new();
        for a in &stage {
            if let LayerAttention::Sliding { window } = a {
                match windows.iter_mut().find(|(w, _)| w == window) {
                    Some(e) => e.1 += 1,
                    None => windows.push((*window, 1)),
                }
            }
        }
        if windows.is_empty() || !matches!(s.flags.engine, Engine::Vllm { .. }) {
            let total = n_stage.max(1);
            return (
                vec![KvGroup {
                    window: None,
                    layers: total,
                }],
                total,
            );
        }
        if full == 0 && windows.len() == 1 {
            let (w, n) = windows[0];
            return (
                vec![KvGroup {
                    window: Some(w),
                    layers: n,
                }],
                n,
            );
        }
        let mut counts: Vec<u64> = windows.iter().map(|(_, n)| *n).collect();
        if full > 0 {
            counts.push(full);
        }
        let size = counts.iter().copied().min().unwrap_or(1).max(1);
        let mut groups = Vec::new();
        for (w, n) in &windows {
            for k in 0..n.div_ceil(size) {
                groups.push(KvGroup {
                    window: Some(*w),
                    layers: (n - k * size).min(size),
                });
            }
        }
        for k in 0..full.div_ceil(size) {
            groups.push(KvGroup {
                window: None,
                layers: (full - k * size).min(size),
            });
        }
        (groups, size)
    }

    /// Checks the counted groups against the list, and the closed-form longest length
    /// against the binary search.
    fn check_groups(s: &Scenario) {
        let g = kv_groups_compact(s);
        let (list, size) = reference_groups(s);
        assert_eq!((g.to_vec(), g.group_size), (list.clone(), size));
        assert_eq!(kv_groups(s), (list.clone(), size));
        assert_eq!(g.len(), list.len());
        assert_eq!(g.layers(), list.iter().map(|x| x.layers).sum::<u64>());
        for (bs, tokens) in [(16, 8192), (1, 2048), (32, 1)] {
            for len in [0, 1, 15, 16, 17, 1000, 4096, 131_072] {
                assert_eq!(
                    g.blocks_for_len(bs, tokens, len),
                    blocks_for_len(&list, bs, tokens, len)
                );
            }
            for kv_blocks in [0, 1, 7, 1000, 123_456, 1 << 30] {
                for cap in [1, 8192, 131_072, 1 << 40] {
                    assert_eq!(
                        g.longest_fitting_len(bs, tokens, kv_blocks, cap),
                        g.longest_fitting_len_search(bs, tokens, kv_blocks, cap),
                    );
                }
            }
        }
    }

    #[test]
    fn counted_kv_groups_are_the_group_list() {
        let cat = Catalog::bundled();
        for m in &cat.models {
            let mut s = Scenario::new(m.arch().unwrap());
            for engine in [Engine::DEFAULT, Engine::Sglang] {
                s.flags.engine = engine;
                for pp in [1, 2, 3, 4, 8] {
                    s.pipeline_parallel_size = pp;
                    check_groups(&s);
                }
            }
        }
        // Patterns the catalog lacks: many window sizes (past the inline two), windows only,
        // more full layers than sliding ones, no layers.
        let mut s = Scenario::new(cat.models[0].arch().unwrap());
        let w = |window| LayerAttention::Sliding { window };
        for pattern in [
            vec![w(1), w(2), w(3), w(4), w(5), LayerAttention::Full],
            vec![w(512), w(4096), w(512), w(4096), w(8192)],
            vec![w(128); 7],
            vec![LayerAttention::Full, LayerAttention::Full, w(64)],
            vec![],
        ] {
            s.model.layers = pattern.len() as u64;
            s.model.layer_attention = pattern;
            for pp in [1, 2] {
                s.pipeline_parallel_size = pp;
                check_groups(&s);
            }
        }
    }

    #[test]
    fn stage_weights_match_walking_every_layer() {
        let cat = Catalog::bundled();
        for entry in &cat.models {
            let mut s = Scenario::new(entry.arch().unwrap());
            for (format, tp, pp) in [
                (WeightFormat::Bf16, 1, 1),
                (WeightFormat::Fp8, 2, 3),
                (WeightFormat::Int4Awq, 8, 4),
                (WeightFormat::Fp8Ffn, 4, 8),
            ] {
                s.format = format;
                s.tensor_parallel_size = tp;
                s.pipeline_parallel_size = pp;
                let stages = stage_weights(&s);
                assert_eq!(stages.iter().copied().max(), Some(weights_per_gpu(&s)));
                // Every layer through `layer_params` (what sizing did before counting kinds).
                let (m, hp) = (&s.model, s.format.high_precision_bytes());
                let layer = |i: u64| layer_bytes_per_rank(&s, &m.layer_params(i));
                let pp = pp.min(m.layers.max(1));
                let (base, rem) = (m.layers / pp, m.layers % pp);
                let vocab_shard = ceil_div(m.vocab.div_ceil(64) * 64, tp) * m.hidden * hp;
                let mut start = 0;
                for (stage, bytes) in (0..pp).zip(&stages) {
                    let n = base + u64::from(stage >= pp - rem);
                    let mut walked: u64 = (start..start + n).map(layer).sum();
                    start += n;
                    walked += m.rope_cache_bytes;
                    if stage == 0 {
                        walked += vocab_shard + ceil_div(m.extra_params, tp) * hp;
                    }
                    if stage == pp - 1 {
                        walked += m.hidden * hp;
                        if !m.tied_embeddings || pp > 1 {
                            walked += vocab_shard;
                        }
                    }
                    assert_eq!(*bytes, walked, "{} stage {stage}", entry.id);
                }
            }
        }
    }
}
