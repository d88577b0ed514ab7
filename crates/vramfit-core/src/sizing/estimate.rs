//! The engine accounting: one scenario on one GPU, step by step (the formula is in the
//! [parent module's docs](super)).
//!
//! # vLLM V1 (default: follows v0.19; `vllm-0.16` selects the v0.11–v0.16 accounting)
//! Source: `vllm/v1/worker/gpu_worker.py` (`determine_available_memory`),
//! `vllm/utils/mem_utils.py` (`memory_profiling`), `vllm/v1/core/kv_cache_utils.py`
//! (`get_kv_cache_config`, `check_enough_kv_cache_memory`,
//! `get_max_concurrency_for_kv_cache_config`), `vllm/engine/arg_utils.py` (defaults).
//!
//! - **Weights** per GPU: see `sizing/weights.rs` ([`weights_per_gpu`]); KV groups and
//!   blocks: `sizing/kv.rs`.
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
//!   × TP size above (NCCL's per-peer channel buffers grow with the ranks a rank connects
//!   to: all of its TP group for the all-reduce, only its two neighbours for PP's sends; the
//!   logs are all PP 1, so a PP > 1 layout's share is not validated).
//! - **CUDA context** (~0.5 GiB at TP1, ~1.5 GiB with NCCL) exists before profiling and is not
//!   charged to the budget, but nvidia-smi shows it. **CUDA graphs** are captured after KV
//!   sizing (v0.19 default), also outside the budget: [`CUDA_GRAPH_BASE_GIB`] +
//!   [`CUDA_GRAPH_PER_LAYER_GIB`] × layers, fitted to the v0.19 logs' "graph capturing took".
//! - **KV pool into blocks**: the `page` and `num_blocks` of the formula, over the KV groups
//!   of `sizing/kv.rs` (hybrid sliding-window models: several groups share one pool).
//!
//! # SGLang
//! `python/sglang/srt/model_executor/model_runner.py` (`profile_max_num_token`): the pool is
//! `mem_fraction_static × total − (total − free after loading weights)`; cell per token as
//! vLLM's; page size 1.
//!
//! # TensorRT-LLM
//! `docs/source/reference/memory.md`: KV cache = `free_gpu_memory_fraction` (0.9) of the
//! memory free after weights and the activation buffer (sized by `max_num_tokens` at build);
//! 32 tokens per block.
//!
//! # Hugging Face transformers
//! Weights at the load dtype, plus a dynamic KV cache for the requests, plus a prefill
//! activation (logits of the prompt in fp32); `device_map="auto"` splits layers (no TP).
//!
//! # llama.cpp (`llama-server`)
//! Its own accounting, with the llama.cpp sources of each formula: `sizing/llama_cpp.rs`
//! (weights, the whole `-c` context's KV cache, the compute buffer of one ubatch; no memory
//! fraction).

use super::features::FeatureBytes;
use super::kv::kv_groups_compact;
use super::{f, gib, to_u64, weights_per_gpu, Engine, Scenario, GIB};
use super::{
    Fit, KvGroups, Refusal, Verdict, Warning, Warnings, CUDA_CONTEXT_GIB, CUDA_CONTEXT_MULTI_GIB,
    CUDA_GRAPH_BASE_GIB, CUDA_GRAPH_PER_LAYER_GIB, NON_TORCH_MULTI_GIB, NON_TORCH_PER_RANK_GIB,
    NON_TORCH_TP1_GIB, SAMPLER_COPIES_V11, SAMPLER_COPIES_V17,
};
use crate::catalog::Gpu;
use crate::dtype::WeightFormat;
use serde::Serialize;

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
    /// Requests of the workload's length (prompt, media and output) that fit at once.
    pub max_concurrency_workload: f64,
    /// Longest `max_model_len` that fits (one request).
    pub max_model_len_fit: u64,
    /// `max_model_len` used.
    pub max_model_len: u64,
    /// The longest request the engine holds, tokens: `max_model_len` for the serving
    /// engines, which refuse a longer one; llama.cpp's slot (`sizing/llama_cpp.rs`);
    /// `u64::MAX` for transformers, whose `generate` runs past the length. The verdict's
    /// count, the speed (`throughput::traffic`) and the plan's warning
    /// (`plan/features.rs` `too_long`) cut a request to it. Not serialized (the sentinel is
    /// past what JSON numbers hold exactly).
    #[serde(skip)]
    pub request_len: u64,
    /// llama.cpp: `(users, length)`, the longest slot length at which the workload's users
    /// each have a slot that fits. Its cells are allocated at start, so the pool's blocks
    /// ([`Estimate::longest_len_for_users`]) do not answer it. `None` for the other engines.
    #[serde(skip)]
    pub slots_longest_len: Option<(u64, u64)>,
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
    /// What the engine refuses, when [`Fit::Refused`].
    pub refusal: Option<Refusal>,
    /// Plain-words verdict with the fix (text via `Display` / `to_string()`).
    pub verdict: Verdict,
    /// Assumptions and warnings (texts via [`Warnings::iter`] / [`Warnings::to_strings`]).
    pub warnings: Warnings,
    /// What the deployment features add or move (`sizing/features.rs`); all 0 when off.
    #[serde(flatten)]
    pub features: FeatureBytes,
    /// The `--max-model-len` vLLM picks itself with `-1` / `auto` (the longest that fits
    /// one request); `None` when the length is given.
    pub vllm_auto_max_model_len: Option<u64>,
}

/// One line of the per-GPU memory breakdown: every presentation (the page's table and chart,
/// Markdown, CSV, the CLI) lists [`Estimate::parts`] with these names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Part {
    /// Stable id (CSV's `quantity` column).
    pub id: &'static str,
    /// Label.
    pub label: &'static str,
    /// Short label (chart legends).
    pub short: &'static str,
    /// What it is, in one sentence.
    pub help: &'static str,
    /// Bytes per GPU.
    pub bytes: u64,
    /// Whether it is inside the engine's budget (`gpu_memory_utilization` × memory).
    pub in_budget: bool,
}

impl Estimate {
    /// Requests one replica holds at once: the workload requests that fit in the KV pool,
    /// capped by `max_num_seqs`, at least one (a replica that starts serves one request).
    #[must_use]
    pub fn requests_per_replica(&self) -> u64 {
        crate::units::whole(
            self.max_concurrency_workload
                .min(crate::units::real(self.max_num_seqs)),
        )
        .max(1)
    }

    /// The one replica rule: replicas of this layout for `users` concurrent requests,
    /// `⌈users ÷ requests per replica⌉`; 1 when the engine does not start (nothing to
    /// replicate; the verdict says why).
    ///
    /// # Example
    #[cfg_attr(feature = "bundled", doc = "```")]
    #[cfg_attr(not(feature = "bundled"), doc = "```ignore")]
    /// let cat = vramfit_core::catalog::Catalog::bundled();
    /// let p = vramfit_core::plan::plan(&cat, &vramfit_core::plan::Inputs::default()).unwrap();
    /// let per = p.estimate.requests_per_replica();
    /// assert_eq!(p.estimate.replicas_for(per), 1);
    /// assert_eq!(p.estimate.replicas_for(per + 1), 2);
    /// assert_eq!(p.estimate.replicas_for(3 * per), 3);
    /// ```
    #[must_use]
    pub fn replicas_for(&self, users: u64) -> u64 {
        if self.fit.starts() {
            users.max(1).div_ceil(self.requests_per_replica())
        } else {
            1
        }
    }

    /// The memory breakdown per GPU, in the order it is shown: what the engine's budget holds
    /// (weights, activation peak, non-torch, KV pool), then what sits outside it (CUDA graphs,
    /// CUDA context). Their sum is what nvidia-smi shows, less the budget's unused slack.
    ///
    /// # Example
    #[cfg_attr(feature = "bundled", doc = "```")]
    #[cfg_attr(not(feature = "bundled"), doc = "```ignore")]
    /// let cat = vramfit_core::catalog::Catalog::bundled();
    /// let p = vramfit_core::plan::plan(&cat, &vramfit_core::plan::Inputs::default()).unwrap();
    /// let parts = p.estimate.parts();
    /// assert_eq!(parts[0].bytes, p.estimate.weights_bytes);
    /// assert_eq!(parts.iter().filter(|x| x.in_budget).count(), 4);
    /// ```
    #[must_use]
    pub fn parts(&self) -> [Part; 6] {
        let part = |id, label, short, help, bytes, in_budget| Part {
            id,
            label,
            short,
            help,
            bytes,
            in_budget,
        };
        [
            part(
                "weights",
                "Weights",
                "weights",
                "Model weights on the busiest GPU (TP shards, PP stages)",
                self.weights_bytes,
                true,
            ),
            part(
                "activation",
                "Activation peak",
                "activation",
                "Peak of the engine's profiling forward pass and sampler warm-up",
                self.activation_bytes,
                true,
            ),
            part(
                "non_torch",
                "Non-torch (NCCL, all-reduce)",
                "non-torch",
                "Communication buffers that appear during profiling",
                self.non_torch_bytes,
                true,
            ),
            part(
                "kv_pool",
                "KV cache pool",
                "KV pool",
                "What is left of the budget for the paged KV cache",
                self.kv_pool_bytes,
                true,
            ),
            part(
                "cuda_graphs",
                "CUDA graphs (outside budget)",
                "CUDA graphs",
                "Captured after KV sizing in vLLM v0.19",
                self.cuda_graph_bytes,
                false,
            ),
            part(
                "cuda_context",
                "CUDA context (outside budget)",
                "context",
                "Driver context, present before profiling",
                self.cuda_context_bytes,
                false,
            ),
        ]
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
        .flags
        .gpu_memory_utilization
        .filter(|u| u.is_finite() && *u > 0.0 && *u <= 1.0)
        .unwrap_or_else(|| s.flags.engine.default_memory_fraction());
    let (def_seqs, def_tokens) = vllm_defaults(gpu_total_bytes);
    // Clamped to ranges no engine exceeds, so that every product below stays inside u64.
    let max_model_len = s.model_len().min(1 << 32);
    // One request's tokens (prompt, media, output), read once: each reading walks the
    // multimodal items.
    let request = s.request_tokens();
    let max_num_batched_tokens = s
        .flags
        .max_num_batched_tokens
        .unwrap_or(def_tokens)
        .clamp(1, 1 << 26);
    // vLLM lowers its default sequences to the batched tokens (`vllm/engine/arg_utils.py`:
    // `if orig_max_num_seqs is None: max_num_seqs = min(max_num_seqs,
    // max_num_batched_tokens)`); only both set by hand can contradict each other.
    let max_num_seqs = match s.flags.max_num_seqs {
        Some(n) => n,
        None if matches!(s.flags.engine, Engine::Vllm { .. }) => {
            def_seqs.min(max_num_batched_tokens)
        }
        None => def_seqs,
    }
    .clamp(1, 1 << 20);
    let block_size = s
        .flags
        .block_size
        .unwrap_or_else(|| s.flags.engine.default_block_size())
        .clamp(1, 1 << 16);
    let refusal = super::refusal::refusal(s).or_else(|| {
        (matches!(s.flags.engine, Engine::Vllm { .. }) && max_num_batched_tokens < max_num_seqs)
            .then_some(Refusal::BatchedBelowSeqs {
                tokens: max_num_batched_tokens,
                seqs: max_num_seqs,
            })
    });
    if max_model_len > m.max_position_embeddings && refusal.is_none() {
        warnings.push(Warning::LongerThanModel {
            max_model_len,
            max_position_embeddings: m.max_position_embeddings,
        });
    }
    if m.stored_fp32 && s.flags.engine == Engine::Transformers && s.format == WeightFormat::Fp32 {
        warnings.push(Warning::Fp32Checkpoint);
    }
    if s.flags.engine == Engine::LlamaCpp {
        return super::llama_cpp::estimate(s, gpu_total_bytes, warnings);
    }

    let x = &s.flags.features;
    let vllm = matches!(s.flags.engine, Engine::Vllm { .. });
    let model_weights = weights_per_gpu(s);
    // `--cpu-offload-gb` keeps that much of the weights in host memory (vLLM only).
    let encoder_weights = super::weights::tower_per_gpu(s);
    // `--cpu-offload-gb` keeps that much of the decoder layers' weights in host memory
    // (vLLM only; never the embeddings, the head or the encoder: `maybe_offload_to_cpu`).
    let kept = super::weights::vocab_table_shard(s) * if m.tied_embeddings { 1 } else { 2 }
        + encoder_weights;
    let cpu_offload = if vllm {
        x.cpu_offload_gib
            .filter(|g| g.is_finite() && *g > 0.0)
            .map_or(0, gib)
            .min(model_weights.saturating_sub(kept))
    } else {
        0
    };
    let lora = if vllm {
        super::lora::lora_bytes(s, max_num_batched_tokens, max_num_seqs)
    } else {
        0
    };
    let draft = if vllm { super::spec::draft(s) } else { None };
    let draft_weights = draft.map_or(0, |d| d.weights_bytes);
    let weights = (model_weights - cpu_offload)
        .saturating_add(lora)
        .saturating_add(draft_weights);
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
    // The multimodal profiling run (`sizing/mm.rs`): its peak over the text-only one.
    let mm = super::mm::reservation(s, max_num_batched_tokens, max_num_seqs);
    let text_peak = forward_peak.max(sampler_peak) + moe_workspace;
    let mm_reserved = mm
        .encoder_peak_bytes
        .saturating_sub(text_peak)
        .max(mm.encoder_cache_bytes);
    let (activation, non_torch, cuda_graph, context) = match s.flags.engine {
        Engine::Vllm { minor } => {
            let non_torch = if world == 1 {
                if minor >= 18 {
                    NON_TORCH_TP1_GIB
                } else {
                    0.13
                }
            } else {
                // The per-rank term follows the TP group, whose all-reduce connects every
                // rank to every other; a pipeline stage sends only to its two neighbours
                // (NCCL connects peers on first use), so PP adds no per-rank share. The
                // logs behind the constants are all PP 1 (world = TP); at TP 128 × PP 128
                // the world's 16,384 ranks read 1,149 GiB of NCCL buffers per GPU.
                NON_TORCH_MULTI_GIB + NON_TORCH_PER_RANK_GIB * f(tp)
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
            // `--enforce-eager` captures no graphs.
            let graphs = if x.enforce_eager { 0 } else { gib(graphs) };
            (
                forward_peak.max(sampler_peak) + moe_workspace + mm_reserved,
                gib(non_torch),
                graphs,
                gib(ctx),
            )
        }
        // llama.cpp returned above (`sizing/llama_cpp.rs`).
        Engine::Sglang | Engine::LlamaCpp => {
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
            // The images' tokens go through the decoder with the prompt's.
            let tokens = request
                .saturating_sub(s.workload.output_tokens)
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
        Engine::Sglang | Engine::LlamaCpp => {
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
        // `--kv-cache-memory-bytes` is the pool, whatever the fraction.
        Engine::Vllm { .. } if x.kv_cache_memory_bytes.is_some() => {
            i64::try_from(x.kv_cache_memory_bytes.unwrap_or(0)).unwrap_or(i64::MAX)
        }
        Engine::Vllm { .. } => i128_to_i64(
            i128::from(budget)
                - i128::from(weights)
                - i128::from(activation)
                - i128::from(non_torch),
        ),
    };
    // With the pool given, what must fit is the whole GPU, not the fraction: the bytes the
    // GPU must then hold (also the verdict's and the set-pool fix's, `plan/fix.rs`).
    let set_need = x
        .kv_cache_memory_bytes
        .filter(|_| vllm)
        .map(|kv| weights + activation + non_torch + kv + cuda_graph + context);
    let too_large = match set_need {
        Some(need) => need > gpu_total_bytes,
        None => weights + activation + non_torch > budget,
    };
    let pool = u64::try_from(pool_signed).unwrap_or(0);

    // KV layout.
    // Per-layer shapes and page unification live in `kv.rs`: a block is `block_size ×
    // slot_bytes` bytes over its tensor slots.
    let groups = kv_groups_compact(s);
    // vLLM raises the block size of models with Mamba-like layers (`kv.rs`).
    let block_size = groups.block_size(block_size);
    let n_groups = groups.count().max(1);
    // The draft's attention layers share every block (`sizing/spec.rs`).
    let draft_kv = draft.map_or(0, |d| d.kv_bytes_per_token);
    let kv_bytes_per_token = groups.bytes_per_token() + draft_kv;
    let block_bytes = block_size.saturating_mul(groups.slot_bytes() + draft_kv / n_groups);
    let kv_blocks = pool.checked_div(block_bytes).unwrap_or(0);
    let kv_tokens = kv_blocks / n_groups * block_size;
    // Blocks one request of `len` tokens needs, over all groups (vLLM
    // `get_max_concurrency_for_kv_cache_config`).
    // Longest single request that fits.
    // Capped at the model's max_position_embeddings: vLLM refuses longer max_model_len.
    let max_model_len_fit = groups.longest_fitting_len(
        block_size,
        max_num_batched_tokens,
        kv_blocks,
        m.max_position_embeddings.max(1),
    );
    // `--max-model-len -1`: vLLM takes the longest length whose KV fits one request, up to
    // the model's maximum (`vllm/v1/core/kv_cache_utils.py`).
    let max_model_len = if vllm && s.flags.fit_max_model_len && max_model_len_fit > 0 {
        max_model_len.min(max_model_len_fit)
    } else {
        max_model_len
    };
    let blocks_for = |len: u64| groups.blocks_for_len(block_size, max_num_batched_tokens, len);
    let req_blocks = blocks_for(max_model_len);
    let kv_bytes_per_request = req_blocks.saturating_mul(block_bytes);
    let max_concurrency = if req_blocks == 0 {
        0.0
    } else {
        f(kv_blocks) / f(req_blocks)
    };
    // A speculating request holds `2k + 1` slots past its tokens (lookahead and drafts).
    let ahead = draft.map_or(0, |d| d.lookahead + d.tokens + 1);
    // With explicit multimodal limits each request carries its items' tokens too. The
    // serving engines hold a request within the length (`Engine::holds_requests_within_
    // length`); transformers' `generate` runs past it, so its requests count whole.
    let held = if s.flags.engine.holds_requests_within_length() {
        max_model_len
    } else {
        u64::MAX
    };
    let workload_len = request.saturating_add(ahead).clamp(1, held);
    let wl_blocks = blocks_for(workload_len);
    let max_concurrency_workload = if wl_blocks == 0 {
        0.0
    } else {
        f(kv_blocks) / f(wl_blocks)
    };

    let nvidia_smi = match s.flags.engine {
        // With the pool given, vLLM holds what it allocates, not the fraction.
        Engine::Vllm { .. } if x.kv_cache_memory_bytes.is_some() => {
            weights + activation + non_torch + pool + cuda_graph + context
        }
        Engine::Vllm { .. } => budget.max(weights + activation + non_torch) + cuda_graph + context,
        _ => weights + pool + activation + context,
    };

    let fit = if refusal.is_some() {
        Fit::Refused
    } else if too_large {
        Fit::WeightsTooLarge
    } else if kv_blocks
        < if held == u64::MAX {
            wl_blocks
        } else {
            req_blocks
        }
    {
        // vLLM checks one request of `max_model_len` at start. transformers allocates no
        // length ahead: one request of the workload, whole, must fit, or it runs out of
        // memory.
        Fit::KvTooSmall
    } else if max_concurrency_workload + 1e-9 < f(s.workload.users) {
        Fit::FitsWithQueueing
    } else {
        Fit::Fits
    };
    let verdict = Verdict {
        fit,
        pool: pool_signed,
        // The request the KV cache is too small for, when it is: transformers' whole one.
        per_request: if held == u64::MAX {
            wl_blocks.saturating_mul(block_bytes)
        } else {
            kv_bytes_per_request
        },
        conc: max_concurrency_workload,
        util,
        model_len: if held == u64::MAX {
            workload_len
        } else if vllm && s.flags.fit_max_model_len {
            max_model_len
        } else {
            s.model_len()
        },
        // The length the concurrency counts: a request longer than the context length is
        // cut to it here, and refused by the engine (the plan's warning, `plan::too_long`).
        workload_tokens: request.min(held),
        users: s.workload.users,
        refusal,
        engine: s.flags.engine,
        set_pool: set_need.map(|need| (need, gpu_total_bytes)),
        short: (weights + activation + non_torch).saturating_sub(budget),
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
        request_len: held,
        slots_longest_len: None,
        max_num_seqs,
        max_num_batched_tokens,
        nvidia_smi_bytes: nvidia_smi,
        kv_groups: groups,
        fit,
        refusal,
        verdict,
        warnings,
        features: FeatureBytes {
            lora_bytes: lora,
            cpu_offload_bytes: cpu_offload,
            // `--swap-space` allocates nothing in V1 (`sizing/features.rs`).
            host_bytes: cpu_offload.saturating_add(if vllm {
                super::lora::cpu_lora_bytes(s)
            } else {
                0
            }),
            mm_reserved_bytes: if vllm { mm_reserved } else { 0 },
            encoder_cache_bytes: if vllm { mm.encoder_cache_bytes } else { 0 },
            encoder_weights_bytes: encoder_weights,
            draft_weights_bytes: draft_weights,
            draft_kv_bytes: if draft_kv == 0 {
                0
            } else {
                kv_blocks
                    .saturating_mul(block_size)
                    .saturating_mul(draft_kv / n_groups)
            },
        },
        vllm_auto_max_model_len: (vllm && s.flags.fit_max_model_len).then_some(max_model_len_fit),
    }
}

impl Estimate {
    /// Marks the estimate refused (a rule that needs more than the scenario, such as the
    /// GPUs of one node); an earlier refusal stays.
    pub fn refuse(&mut self, r: Refusal) {
        if self.refusal.is_none() {
            self.refusal = Some(r);
            self.verdict.refusal = Some(r);
        }
        self.fit = Fit::Refused;
        self.verdict.fit = Fit::Refused;
    }

    /// The verdict of one of `replicas` replicas that share the users evenly: the busiest
    /// holds `⌈users ÷ replicas⌉` of them, and they queue only when one replica's KV pool
    /// holds fewer ([`Estimate::replicas_for`] sizes the replicas so that it does not).
    pub fn share_users(&mut self, replicas: u64) {
        if replicas <= 1 || !self.fit.starts() {
            return;
        }
        let busiest = self.verdict.users.div_ceil(replicas);
        self.verdict.users = busiest;
        if self.fit == Fit::FitsWithQueueing && self.verdict.conc + 1e-9 >= f(busiest) {
            self.fit = Fit::Fits;
            self.verdict.fit = Fit::Fits;
        }
    }

    /// Longest context (prompt + output) each of `users` concurrent requests can have:
    /// the largest `L` with `users × blocks(L) ≤ blocks in the pool`.
    #[must_use]
    pub fn longest_len_for_users(&self, users: u64) -> u64 {
        let users = users.max(1);
        if let Some((_, l)) = self.slots_longest_len.filter(|(u, _)| *u == users) {
            return l;
        }
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

/// Default `max_num_seqs` and `max_num_batched_tokens` of vLLM's OpenAI server for a GPU.
#[must_use]
pub fn vllm_defaults(gpu_bytes: u64) -> (u64, u64) {
    if gpu_bytes >= 70 * GIB {
        (1024, 8192)
    } else {
        (256, 2048)
    }
}
