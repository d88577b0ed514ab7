//! Weight bytes per GPU and per pipeline stage.
//!
//! Column/row-parallel matrices split 1/TP; K/V projections replicated when `kv_heads < TP`;
//! MLA down-projections, norms and routers replicated; embedding and LM head vocab-parallel
//! over the vocabulary padded to a multiple of 64 (`vocab_parallel_embedding.py`,
//! `DEFAULT_VOCAB_PADDING_SIZE`). Pipeline stages hold `layers / PP` layers (the first the
//! embedding, the last the LM head). Quantized bytes: see [`crate::dtype`]; the layout per
//! GPU architecture (MXFP4 expert padding, FP8 block scales on Marlin) and the parts a
//! checkpoint keeps in 16 bits: see `sizing/quant_layout.rs`.
//!
//! # From the checkpoint's headers
//! With [`Scenario::checkpoint`] set, the bytes are the headers' (exact at TP 1), split by
//! the tensor-name classes of [`crate::safetensors::ShardBytes`]: embedding and LM head
//! `ceil(bytes × padded vocab / vocab / TP)`, layer projections 1/TP, K/V over
//! `min(TP, kv_heads)` ranks, replicated tensors whole, experts 1/TP, unknown tensors 1/TP
//! (assumed). A pipeline stage of `n` of `L` layers holds `n/L` of the layer bytes (exact at
//! PP 1: the headers' layers are not all alike in every model). Added, as in memory but not
//! in the files: the rotary cache, the vocabulary padding, and the MXFP4 expert padding of
//! the GPU's kernel.

use super::quant_layout::{
    fp8_block_scale_bytes, kept_format, mxfp4_backend, mxfp4_experts_bytes, Mxfp4Backend,
};
use super::Scenario;
use crate::dtype::WeightFormat;
use crate::safetensors::ShardBytes;
use serde::Serialize;

/// Where a checkpoint's bytes come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HeaderSource {
    /// The safetensors headers (every tensor's name and size).
    Headers,
    /// `model.safetensors.index.json`'s `metadata.total_size` only (no names' sizes).
    Index,
}

/// A checkpoint's bytes, for sizing its weights from the files instead of the config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeaderWeights {
    /// The format the checkpoint is stored in (the bytes apply to it only).
    pub format: WeightFormat,
    /// Its bytes by sharding class.
    pub shards: ShardBytes,
    /// Headers or index.
    pub source: HeaderSource,
}

impl HeaderWeights {
    /// From an index's `total_size` alone: every byte split 1/TP and spread over the
    /// pipeline stages by layers (an assumption: the index does not say which tensor is
    /// which size).
    #[must_use]
    pub fn from_index_total(format: WeightFormat, total_size: u64) -> Self {
        Self {
            format,
            shards: ShardBytes {
                layer_sharded: total_size,
                ..ShardBytes::default()
            },
            source: HeaderSource::Index,
        }
    }
}

/// Weight bytes on the busiest GPU, and per pipeline stage.
#[must_use]
pub fn weights_per_gpu(s: &Scenario) -> u64 {
    let mut max = 0;
    for_each_stage_weights(s, &mut |bytes| max = max.max(bytes));
    max
}

/// Weight bytes one decode step reads on the busiest GPU: [`weights_per_gpu`] less the input
/// embedding table where the step only gathers from it (one row per token: vLLM's
/// `VocabParallelEmbedding.forward` is an `F.embedding` lookup, not a matrix multiply), which
/// is when the LM head is a tensor of its own: untied embeddings, or any pipeline-parallel
/// layout (the last stage allocates its own LM head, the first stage's table is only looked
/// up). Tied at PP 1, the table is the LM head and every step reads it whole. A multimodal
/// tower ([`extras_per_gpu`]) runs on a request's images and videos in its prefill, not in
/// the decoder's steps, so its bytes are left out too (from the config, or from the
/// headers' tower tensors).
#[must_use]
pub fn weights_read_per_step(s: &Scenario) -> u64 {
    let pp = s.pipeline_parallel_size.max(1).min(s.model.layers.max(1));
    let m = &s.model;
    let gathered = match s
        .checkpoint
        .as_ref()
        .filter(|c| c.format == s.format && !c.shards.is_empty())
    {
        // llama.cpp's stages hold no input embedding (`sizing/gguf.rs`): only the tower.
        _ if s.flags.engine == super::Engine::LlamaCpp => extras_per_gpu(s),
        Some(c) => {
            let c = &c.shards;
            let table = if lm_head_loaded(m, c) > 0 || pp > 1 {
                vocab_shard_of(s, c.embed)
            } else {
                0
            };
            table + tower_from_headers(s, c)
        }
        None => {
            let table = if !m.tied_embeddings || pp > 1 {
                vocab_table_shard(s)
            } else {
                0
            };
            table + extras_per_gpu(s)
        }
    };
    // The stages' sizes through the one stage walk (`dyn`: one copy in the wasm for its
    // three callers).
    let (mut max, mut stage) = (0, 0);
    for_each_stage_weights(s, &mut |bytes| {
        let read = if stage == 0 {
            bytes.saturating_sub(gathered)
        } else {
            bytes
        };
        max = max.max(read);
        stage += 1;
    });
    max
}

/// The parameters outside the decoder that the engine loads: a multimodal tower unless the
/// engine skips it (every modality off, `sizing/mm.rs`). A multi-token-prediction module is
/// not loaded by the model itself: vLLM's `load_weights` skips the `num_nextn_predict_layers`
/// layers (`deepseek_v2.py`, `glm4_moe.py`: `get_spec_layer_idx_from_weight_name`), which
/// only the MTP drafter loads (`--speculative-config '{"method": "mtp"}'`, counted then by
/// `sizing/spec.rs`). It was counted here until the speed model gained MLA's decode math
/// (`serving`): its bytes had stood in for that cost on the DeepSeek-R1 speed rows.
#[must_use]
pub fn extra_loaded(s: &Scenario) -> u64 {
    let m = &s.model;
    if m.vision.is_none() && m.mtp_layers > 0 {
        return 0;
    }
    if super::mm::tower_skipped(s) {
        return 0;
    }
    m.extra_params
}

/// [`extra_loaded`]'s bytes on one GPU of the first stage, 16-bit: split over the TP ranks,
/// a multimodal tower like the model unless `--mm-encoder-tp-mode data`
/// ([`super::mm::tower_shards`]).
#[must_use]
pub fn extras_per_gpu(s: &Scenario) -> u64 {
    ceil_div(extra_loaded(s), extra_shards(s)) * s.format.high_precision_bytes()
}

/// The ranks the parameters outside the decoder are split over: a multimodal tower's
/// ([`super::mm::tower_shards`]), else TP.
fn extra_shards(s: &Scenario) -> u64 {
    if s.model.vision.is_some() {
        super::mm::tower_shards(s)
    } else {
        s.tensor_parallel_size.max(1)
    }
}

/// The embedding's (or an untied LM head's) bytes on one TP rank from the config: the
/// vocabulary padded to 64 (`vocab_parallel_embedding.py`), split 1/TP, 16-bit.
#[must_use]
pub fn vocab_table_shard(s: &Scenario) -> u64 {
    let m = &s.model;
    ceil_div(m.vocab.div_ceil(64) * 64, s.tensor_parallel_size.max(1))
        * m.hidden
        * s.format.high_precision_bytes()
}

/// A checkpoint's vocabulary-parallel tensor of `bytes` on one TP rank: scaled to the
/// vocabulary padded to 64, split 1/TP.
fn vocab_shard_of(s: &Scenario, bytes: u64) -> u64 {
    let vocab = s.model.vocab;
    ceil_div(
        mul_div(bytes, vocab.div_ceil(64) * 64, vocab.max(1)),
        s.tensor_parallel_size.max(1),
    )
}

fn ceil_div(a: u64, b: u64) -> u64 {
    a.div_ceil(b.max(1))
}

/// Weight bytes of each pipeline stage on one of its TP ranks.
#[must_use]
pub fn stage_weights(s: &Scenario) -> Vec<u64> {
    let mut out = Vec::new();
    for_each_stage_weights(s, &mut |bytes| out.push(bytes));
    out
}

/// MoE layers among layers `start..start + n` (layers past `is_moe` are dense).
pub(crate) fn moe_layers_in(is_moe: &[bool], start: u64, n: u64) -> u64 {
    let clip = |i: u64| usize::try_from(i).map_or(is_moe.len(), |i| i.min(is_moe.len()));
    let range = &is_moe[clip(start)..clip(start.saturating_add(n))];
    u64::try_from(range.iter().filter(|&&x| x).count()).unwrap_or(0)
}

/// Weight bytes of one decoder layer with parameters `p` on one TP rank: sharded matrices
/// split over TP, K/V projections over at most `kv_heads` ranks (replicated beyond), norms
/// and routers replicated in 16-bit.
pub(super) fn layer_bytes_per_rank(s: &Scenario, p: &crate::model::ParamBreakdown) -> u64 {
    layer_bytes_with_kv_heads(s, p, s.model.kv_heads)
}

/// [`layer_bytes_per_rank`] for a layer with `kv_heads` KV heads (Gemma 4's global layers).
fn layer_bytes_with_kv_heads(s: &Scenario, p: &crate::model::ParamBreakdown, kv_heads: u64) -> u64 {
    let tp = s.tensor_parallel_size.max(1);
    let (f, g) = (s.format, s.group_size);
    let hp = f.high_precision_bytes();
    let kv_shard = if kv_heads >= tp { tp } else { kv_heads.max(1) };
    let kept = s.kept_16bit;
    let fa = kept_format(f.attention_format(), kept.attention);
    let fm = kept_format(f, kept.mlp);
    let lin = |fmt: WeightFormat, n: u64| linear_bytes_on(s, fmt, n, g);
    lin(fa, ceil_div(p.attn_sharded, tp))
        + lin(fm, ceil_div(p.linear_sharded, tp))
        + lin(fa, ceil_div(p.linear_kv, kv_shard))
        + lin(fa, p.linear_replicated)
        + expert_bytes_per_rank(s, p, kept_format(f, kept.experts))
        + (p.router + p.replicated) * hp
        + ceil_div(p.bias_sharded, tp) * hp
        + ceil_div(p.bias_kv, kv_shard) * hp
}

/// `n` linear parameters of `fmt` as the scenario's GPU holds them (FP8 block scales differ
/// on Marlin; every other format as [`WeightFormat::linear_bytes`]).
fn linear_bytes_on(s: &Scenario, fmt: WeightFormat, n: u64, g: u64) -> u64 {
    if fmt == WeightFormat::Fp8Block {
        n + fp8_block_scale_bytes(n, s.model.hidden, s.gpu_arch)
    } else {
        fmt.linear_bytes(n, s.model.hidden, g)
    }
}

/// Experts (and intermediate size) one rank holds: whole experts under EP, a 1/TP slice of
/// each expert's intermediate size otherwise (vLLM `FusedMoE`).
fn local_experts(s: &Scenario, moe: &crate::model::Moe) -> (u64, u64) {
    let tp = s.tensor_parallel_size.max(1);
    if s.flags.expert_parallel {
        (ceil_div(moe.experts, tp), moe.expert_intermediate)
    } else {
        (moe.experts, ceil_div(moe.expert_intermediate, tp))
    }
}

/// Routed-expert bytes of one MoE layer on one rank in `fmt`: MXFP4 at the padded shapes of
/// the GPU's kernel, every other format by parameter count.
fn expert_bytes_per_rank(s: &Scenario, p: &crate::model::ParamBreakdown, fmt: WeightFormat) -> u64 {
    let m = &s.model;
    match (fmt, m.moe) {
        (WeightFormat::Mxfp4Experts | WeightFormat::Mxfp4, Some(moe)) if p.expert > 0 => {
            let (experts, inter) = local_experts(s, &moe);
            let backend = mxfp4_backend(s.gpu_arch);
            mxfp4_experts_bytes(backend, experts, m.hidden, inter, moe.expert_bias)
        }
        (WeightFormat::Fp8Block, _) => {
            let n = ceil_div(p.expert, s.tensor_parallel_size.max(1));
            n + fp8_block_scale_bytes(n, m.hidden, s.gpu_arch)
        }
        _ => fmt.expert_bytes(
            ceil_div(p.expert, s.tensor_parallel_size.max(1)),
            m.hidden,
            s.group_size,
        ),
    }
}

/// Bytes the GPU's MXFP4 kernel adds to one MoE layer's experts on one rank (padding), over
/// the checkpoint's shapes; 0 for other formats.
fn mxfp4_padding_per_layer(s: &Scenario) -> u64 {
    let m = &s.model;
    match (s.format, m.moe) {
        (WeightFormat::Mxfp4Experts | WeightFormat::Mxfp4, Some(moe)) => {
            let (experts, inter) = local_experts(s, &moe);
            let bytes = |b| mxfp4_experts_bytes(b, experts, m.hidden, inter, moe.expert_bias);
            bytes(mxfp4_backend(s.gpu_arch)).saturating_sub(bytes(Mxfp4Backend::Checkpoint))
        }
        _ => 0,
    }
}

/// `a × b / c` without overflow (0 when `c` is 0).
fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    if c == 0 {
        return 0;
    }
    let q = u128::from(a) * u128::from(b) / u128::from(c);
    u64::try_from(q).unwrap_or(u64::MAX)
}

/// The bytes the GPU's kernel adds to the checkpoint's (MXFP4 expert padding) on the
/// busiest rank: what [`Scenario::checkpoint`]'s headers do not show.
#[must_use]
pub fn layout_padding_per_gpu(s: &Scenario) -> u64 {
    let pp = s.pipeline_parallel_size.max(1).min(s.model.layers.max(1));
    let moe_layers = moe_layers_in(&s.model.layer_is_moe, 0, s.model.layers);
    mxfp4_padding_per_layer(s) * moe_layers.div_ceil(pp)
}

/// The multimodal tower's bytes on one GPU of the first stage: from the checkpoint's headers
/// when the weights are sized from them (their tower tensors), else from the config
/// ([`extras_per_gpu`]); 0 without a tower. What `--cpu-offload-gb` leaves on the GPU and
/// the plan reports as the encoder's weights.
#[must_use]
pub fn tower_per_gpu(s: &Scenario) -> u64 {
    match s.checkpoint.as_ref().filter(|c| {
        c.format == s.format && c.source == HeaderSource::Headers && !c.shards.is_empty()
    }) {
        Some(c) => tower_from_headers(s, &c.shards),
        None if s.model.vision.is_some() => extras_per_gpu(s),
        None => 0,
    }
}

/// A checkpoint's tower bytes on one GPU of the first stage, as [`extras_per_gpu`] sizes a
/// config's: split over its shards (TP, or whole with `--mm-encoder-tp-mode data`), none when
/// the engine skips the tower.
fn tower_from_headers(s: &Scenario, c: &ShardBytes) -> u64 {
    if c.tower == 0 || super::mm::tower_skipped(s) {
        return 0;
    }
    ceil_div(c.tower, extra_shards(s))
}

/// A checkpoint's LM head bytes as the engine loads them: none when the config ties the
/// embeddings, even where the files store `lm_head.weight` (Qwen3-0.6B, Falcon: vLLM's
/// `load_weights` skips it then, `qwen3.py`, `falcon.py`).
fn lm_head_loaded(m: &crate::model::ModelArch, c: &ShardBytes) -> u64 {
    if m.tied_embeddings {
        0
    } else {
        c.lm_head
    }
}

/// [`for_each_stage_weights`] from the checkpoint's headers ([module docs](self)).
fn for_each_stage_from_headers(s: &Scenario, c: &ShardBytes, each: &mut dyn FnMut(u64)) {
    let m = &s.model;
    let tp = s.tensor_parallel_size.max(1);
    let layers = m.layers.max(1);
    let pp = s.pipeline_parallel_size.max(1).min(layers);
    let kv_shard = if m.kv_heads >= tp {
        tp
    } else {
        m.kv_heads.max(1)
    };
    let per_layer_rank = ceil_div(c.layer_sharded, tp)
        + ceil_div(c.layer_kv, kv_shard)
        + c.layer_replicated
        + ceil_div(c.layer_expert, tp);
    let pad = mxfp4_padding_per_layer(s);
    let vocab_shard = |bytes: u64| vocab_shard_of(s, bytes);
    for stage in 0..pp {
        let (start, n) = crate::sizing::pp_stage(layers, pp, stage);
        let mut bytes = mul_div(per_layer_rank, n, layers);
        bytes += moe_layers_in(&m.layer_is_moe, start, n) * pad;
        if stage == 0 {
            bytes += vocab_shard(c.embed) + ceil_div(c.unknown, tp) + tower_from_headers(s, c);
        }
        bytes += m.rope_cache_bytes;
        if stage == pp - 1 {
            bytes += c.replicated;
            let lm_head = lm_head_loaded(m, c);
            if lm_head > 0 {
                bytes += vocab_shard(lm_head);
            } else if pp > 1 {
                // Tied: the last stage allocates its own LM head.
                bytes += vocab_shard(c.embed);
            }
        }
        each(bytes);
    }
}

/// Calls `each` with the weight bytes of every pipeline stage, first to last, on one of its
/// TP ranks (allocates nothing: every estimate calls it).
fn for_each_stage_weights(s: &Scenario, each: &mut dyn FnMut(u64)) {
    // llama.cpp holds its GGUF file's tensors, whatever checkpoint it was converted from.
    if s.flags.engine == super::Engine::LlamaCpp {
        return super::gguf::for_each_stage(s, each);
    }
    if let Some(c) = s
        .checkpoint
        .as_ref()
        .filter(|c| c.format == s.format && !c.shards.is_empty())
    {
        return for_each_stage_from_headers(s, &c.shards, each);
    }
    let m = &s.model;
    let pp = s.pipeline_parallel_size.max(1).min(m.layers.max(1));
    let hp = s.format.high_precision_bytes();
    let layer_bytes = |is_moe: bool| layer_bytes_per_rank(s, &m.layer_params_of_kind(is_moe));
    // Models whose layers differ in more than MoE vs dense (global layers with their own
    // KV shape, recurrent or MLP-only layers): one size per distinct layer kind.
    let mixed = m.global_attention.is_some()
        || m.layer_attention.iter().any(|a| {
            matches!(
                a,
                crate::model::LayerAttention::Recurrent | crate::model::LayerAttention::MlpOnly
            )
        });
    let mut kinds: Vec<(crate::model::LayerKind, u64)> = Vec::new();
    let mut kind_bytes = |kind: crate::model::LayerKind| -> u64 {
        if let Some(&(_, b)) = kinds.iter().find(|(k, _)| *k == kind) {
            return b;
        }
        let kv_heads = if kind.mixer == crate::model::Mixer::GlobalAttention {
            m.kv_shape(crate::model::LayerAttention::Full).0
        } else {
            m.kv_heads
        };
        let b = layer_bytes_with_kv_heads(s, &m.layer_params_of(kind), kv_heads);
        kinds.push((kind, b));
        b
    };
    // Bytes of one MoE and one dense layer, sized when a stage first holds one.
    let (mut moe_layer, mut dense_layer) = (None, None);
    let vocab_shard = vocab_table_shard(s);
    // Layer ranges per stage: vLLM `get_pp_indices` (`crate::sizing::pp_stage`).
    for stage in 0..pp {
        let (start, n) = crate::sizing::pp_stage(m.layers, pp, stage);
        let mut bytes = 0u64;
        // Layers differ only in being MoE or dense: size one of each kind and count them
        // (an estimate must not walk every layer).
        if mixed {
            let mixer_only = m.mixer_only();
            bytes += (start..start + n)
                .map(|i| kind_bytes(m.layer_kind_in(i, mixer_only)))
                .sum::<u64>();
        } else {
            let n_moe = moe_layers_in(&m.layer_is_moe, start, n);
            let n_dense = n - n_moe;
            if n_moe > 0 {
                bytes += n_moe * *moe_layer.get_or_insert_with(|| layer_bytes(true));
            }
            if n_dense > 0 {
                bytes += n_dense * *dense_layer.get_or_insert_with(|| layer_bytes(false));
            }
        }
        if stage == 0 {
            // The encoder tower is split like the model unless `--mm-encoder-tp-mode data`.
            bytes += vocab_shard + extras_per_gpu(s);
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

#[cfg(all(test, feature = "bundled"))] // the tests read the embedded catalog
mod tests;
