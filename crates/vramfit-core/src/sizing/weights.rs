//! Weight bytes per GPU and per pipeline stage.
//!
//! Column/row-parallel matrices split 1/TP; K/V projections replicated when `kv_heads < TP`;
//! MLA down-projections, norms and routers replicated; embedding and LM head vocab-parallel
//! over the vocabulary padded to a multiple of 64 (`vocab_parallel_embedding.py`,
//! `DEFAULT_VOCAB_PADDING_SIZE`). Pipeline stages hold `layers / PP` layers (the first the
//! embedding, the last the LM head). Quantized bytes: see [`crate::dtype`].

use super::Scenario;

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
    layer_bytes_with_kv_heads(s, p, s.model.kv_heads)
}

/// [`layer_bytes_per_rank`] for a layer with `kv_heads` KV heads (Gemma 4's global layers).
fn layer_bytes_with_kv_heads(s: &Scenario, p: &crate::model::ParamBreakdown, kv_heads: u64) -> u64 {
    let m = &s.model;
    let tp = s.tensor_parallel_size.max(1);
    let (f, g) = (s.format, s.group_size);
    let hp = f.high_precision_bytes();
    let kv_shard = if kv_heads >= tp { tp } else { kv_heads.max(1) };
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
        if mixed {
            bytes += (start..start + n)
                .map(|i| kind_bytes(m.layer_kind(i)))
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

#[cfg(test)]
mod tests;
