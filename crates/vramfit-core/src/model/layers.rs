//! Layer kinds and per-layer cache shapes: what each decoder layer caches (full or sliding
//! attention KV with its own shape, a recurrent state, nothing), and the assumptions and
//! provenance the config reader records. Sources in the module docs of [`super`].

use super::ModelArch;
use std::fmt;

/// How the attention of one layer stores its KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum LayerAttention {
    /// Attends to the whole context.
    Full,
    /// Attends to the last `window` tokens only.
    Sliding {
        /// Window length in tokens.
        window: u64,
    },
    /// Linear attention or a state-space (Mamba) mixer: a constant state per request, no
    /// per-token KV (vLLM `MambaSpec`).
    Recurrent,
    /// No token mixer at all (Nemotron-H's MLP-only and MoE-only layers): no cache.
    MlpOnly,
}

/// KV shape of the global (full-attention) layers where it differs from the others
/// (Gemma 4: `global_head_dim`, `num_global_key_value_heads`; vLLM `gemma4.py`
/// `Gemma4DecoderLayer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct GlobalAttention {
    /// KV heads of the global layers.
    pub kv_heads: u64,
    /// Head dimension of the global layers.
    pub head_dim: u64,
    /// `attention_k_eq_v`: the checkpoint has no V projection on these layers. vLLM loads
    /// K into both the K and V slots of `qkv_proj` and caches K and V as for any layer, so
    /// the KV cache is unchanged; only the checkpoint's parameter count drops.
    pub k_eq_v: bool,
}

/// The constant per-request state of a recurrent layer (vLLM
/// `vllm/model_executor/layers/mamba/mamba_utils.py`, `MambaStateShapeCalculator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum RecurrentState {
    /// Qwen3-Next GatedDeltaNet: conv state `(2·k_heads·k_dim + v_heads·v_dim) × (kernel − 1)`
    /// and temporal state `v_heads × v_dim × k_dim` (`gated_delta_net_state_shape`).
    GatedDeltaNet {
        /// `linear_num_key_heads`.
        key_heads: u64,
        /// `linear_num_value_heads`.
        value_heads: u64,
        /// `linear_key_head_dim`.
        key_head_dim: u64,
        /// `linear_value_head_dim`.
        value_head_dim: u64,
        /// `linear_conv_kernel_dim`.
        conv_kernel: u64,
    },
    /// Mamba1 (Jamba): conv state `inner × (kernel − 1)` and temporal state `inner ×
    /// state` (`mamba1_state_shape`), `inner = mamba_expand × hidden`.
    Mamba1 {
        /// `mamba_expand × hidden_size`.
        inner: u64,
        /// `mamba_d_state`.
        state_size: u64,
        /// `mamba_d_conv`.
        conv_kernel: u64,
        /// `mamba_dt_rank` (`⌈hidden / 16⌉` when "auto").
        dt_rank: u64,
    },
    /// Mamba2 (Nemotron-H, Bamba): conv state `(heads·head_dim + 2·groups·state) ×
    /// (kernel − 1)` and temporal state `heads × head_dim × state` (`mamba2_state_shape`).
    Mamba2 {
        /// `mamba_num_heads`.
        heads: u64,
        /// `mamba_head_dim`.
        head_dim: u64,
        /// `ssm_state_size`.
        state_size: u64,
        /// `n_groups`.
        groups: u64,
        /// `conv_kernel`.
        conv_kernel: u64,
    },
}

impl RecurrentState {
    /// State elements of one layer on one GPU at tensor parallelism `tp` (heads and
    /// channels split over TP, as `divide(…, tp_world_size)` does).
    #[must_use]
    pub fn elements(&self, tp: u64) -> u64 {
        let tp = tp.max(1);
        match *self {
            Self::GatedDeltaNet {
                key_heads,
                value_heads,
                key_head_dim,
                value_head_dim,
                conv_kernel,
            } => {
                let conv_dim = 2 * key_heads * key_head_dim + value_heads * value_head_dim;
                conv_dim / tp * conv_kernel.saturating_sub(1)
                    + value_heads / tp * value_head_dim * key_head_dim
            }
            Self::Mamba2 {
                heads,
                head_dim,
                state_size,
                groups,
                conv_kernel,
            } => {
                let conv_dim = heads * head_dim + 2 * groups * state_size;
                conv_dim / tp * conv_kernel.saturating_sub(1) + heads / tp * head_dim * state_size
            }
            Self::Mamba1 {
                inner,
                state_size,
                conv_kernel,
                ..
            } => inner / tp * (conv_kernel.saturating_sub(1) + state_size),
        }
    }
}

/// A value the config did not give, filled in so that sizing goes on; shown as a warning.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Assumption {
    /// The concept (the usual field name).
    pub field: String,
    /// The value assumed.
    pub value: String,
    /// Why this value.
    pub why: String,
}

impl fmt::Display for Assumption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "assumed {} = {}: {}", self.field, self.value, self.why)
    }
}

/// Where a derived number comes from: an open list other readers (weights from headers)
/// add to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Provenance {
    /// What the number is (`experts_per_token`, `kv_heads.global`, …).
    pub quantity: String,
    /// `config`, `headers`, `default` (the transformers class default) or `assumption`.
    pub source: String,
    /// The field it was read from, or why it was assumed.
    pub detail: String,
}

/// What a layer's token mixer is, for its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Mixer {
    /// Attention with the model's default KV shape.
    Attention,
    /// Full attention with the global KV shape ([`GlobalAttention`]).
    GlobalAttention,
    /// Linear attention or Mamba.
    Recurrent,
    /// No mixer (an MLP-only layer).
    None,
}

/// The parameter kind of a decoder layer: layers of one kind have the same parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct LayerKind {
    /// MoE MLP (else dense, when the layer has one).
    pub moe: bool,
    /// The token mixer.
    pub mixer: Mixer,
    /// Whether the layer has an MLP (Nemotron-H's mixer layers have none).
    pub mlp: bool,
}

impl ModelArch {
    /// Whether any layer uses a sliding window.
    #[must_use]
    pub fn has_sliding_layers(&self) -> bool {
        self.layer_attention
            .iter()
            .any(|a| matches!(a, LayerAttention::Sliding { .. }))
    }

    /// KV-cache bytes one token occupies in one layer on one GPU, at `dtype_bytes` per
    /// element, with tensor parallelism `tp`.
    ///
    /// MHA/GQA: `2 × max(1, kv_heads / tp) × head_dim × bytes` — KV heads are replicated
    /// when there are fewer than `tp` (vLLM `QKVParallelLinear`). MLA: `(kv_lora_rank +
    /// qk_rope_head_dim) × bytes`, the same on every rank (vLLM `MLAAttentionSpec`).
    #[must_use]
    pub fn kv_bytes_per_token_layer(&self, dtype_bytes: u64, tp: u64) -> u64 {
        if let Some(mla) = self.mla {
            return (mla.kv_lora_rank + mla.qk_rope_head_dim) * dtype_bytes;
        }
        let kv_per_gpu = if self.kv_heads >= tp {
            self.kv_heads / tp.max(1)
        } else {
            1
        };
        2 * kv_per_gpu * self.head_dim * dtype_bytes
    }

    /// KV bytes per token over all layers on one GPU, ignoring sliding windows (TP=1).
    #[must_use]
    pub fn kv_bytes_per_token_unsharded(&self, dtype_bytes: u64) -> u64 {
        (0..self.layers)
            .map(|i| self.layer_kv_bytes_per_token(i, dtype_bytes, 1))
            .sum()
    }

    /// The attention kind of layer `i` (full when the list is short).
    #[must_use]
    pub fn attention_of(&self, i: u64) -> LayerAttention {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.layer_attention.get(i))
            .copied()
            .unwrap_or(LayerAttention::Full)
    }

    /// Whether layer `i` reuses an earlier layer's KV cache (the last
    /// `num_kv_shared_layers`; vLLM gives such a layer a `kv_sharing_target_layer_name` and
    /// no KV cache spec of its own, `gemma4.py` / `gemma3n.py`).
    #[must_use]
    pub fn shares_kv(&self, i: u64) -> bool {
        self.kv_shared_layers > 0 && i >= self.layers.saturating_sub(self.kv_shared_layers)
    }

    /// KV heads and head dimension of the attention layers of kind `a` (the global shape
    /// on full layers where the model has one).
    #[must_use]
    pub fn kv_shape(&self, a: LayerAttention) -> (u64, u64) {
        match (a, self.global_attention) {
            (LayerAttention::Full, Some(g)) => (g.kv_heads, g.head_dim),
            _ => (self.kv_heads, self.head_dim),
        }
    }

    /// KV bytes one token occupies in layers of kind `a` on one GPU: the per-kind form of
    /// [`Self::kv_bytes_per_token_layer`]; 0 for recurrent and MLP-only layers.
    #[must_use]
    pub fn kv_bytes_per_token_kind(&self, a: LayerAttention, dtype_bytes: u64, tp: u64) -> u64 {
        match a {
            LayerAttention::Recurrent | LayerAttention::MlpOnly => 0,
            _ if self.mla.is_some() => self.kv_bytes_per_token_layer(dtype_bytes, tp),
            _ => {
                let (kv, d) = self.kv_shape(a);
                let kv_per_gpu = if kv >= tp { kv / tp.max(1) } else { 1 };
                2 * kv_per_gpu * d * dtype_bytes
            }
        }
    }

    /// FLOPs one decoding token spends on each cached token in one layer of kind `a`, on one
    /// GPU of `tp` (its query heads): the scores and the weighted sum, a multiply-add each
    /// per element. Grouped-query attention: `2 × heads × (head_dim + head_dim)`. MLA decodes
    /// with the up-projections absorbed into the query and output (DeepSeek-V2 report §2.1.2;
    /// vLLM `MLACommonImpl._forward_decode`, FlashMLA), so each head scores the latent and
    /// rope parts and sums the latent: `2 × heads × (2 × kv_lora_rank + qk_rope_head_dim)`,
    /// 278,528 per token for DeepSeek-V3's 128 heads against the 576 KV elements it reads,
    /// where GQA's Llama-3.1-8B does 16,384 per 2,048 elements: MLA's decode attention is
    /// bound by compute, GQA's by bandwidth. 0 for recurrent and MLP-only layers.
    #[must_use]
    pub fn attn_decode_flops_per_cached_token(&self, a: LayerAttention, tp: u64) -> u64 {
        let heads = self.heads.div_ceil(tp.max(1));
        match (a, self.mla) {
            (LayerAttention::Recurrent | LayerAttention::MlpOnly, _) => 0,
            (_, Some(m)) => 2 * heads * (2 * m.kv_lora_rank + m.qk_rope_head_dim),
            _ => 4 * heads * self.kv_shape(a).1,
        }
    }

    /// KV bytes one token occupies in layer `i` on one GPU: 0 for a layer that shares an
    /// earlier layer's KV, and for recurrent and MLP-only layers.
    #[must_use]
    pub fn layer_kv_bytes_per_token(&self, i: u64, dtype_bytes: u64, tp: u64) -> u64 {
        if self.shares_kv(i) {
            return 0;
        }
        self.kv_bytes_per_token_kind(self.attention_of(i), dtype_bytes, tp)
    }

    /// Constant state bytes one request holds in one recurrent layer on one GPU, at
    /// `dtype_bytes` per element (vLLM keeps conv and temporal states in the model dtype
    /// unless `mamba_ssm_cache_dtype` says otherwise); 0 without recurrent layers.
    #[must_use]
    pub fn state_bytes_per_request_layer(&self, dtype_bytes: u64, tp: u64) -> u64 {
        self.recurrent
            .map_or(0, |r| r.elements(tp).saturating_mul(dtype_bytes))
    }

    /// The kind of layer `i`, for its parameters.
    #[must_use]
    pub fn layer_kind(&self, i: u64) -> LayerKind {
        self.layer_kind_in(i, self.mixer_only())
    }

    /// [`Self::layer_kind`] with [`Self::mixer_only`] given (a walk over the layers computes
    /// it once, not once per layer).
    #[must_use]
    pub fn layer_kind_in(&self, i: u64, mixer_only: bool) -> LayerKind {
        let moe = usize::try_from(i)
            .ok()
            .and_then(|i| self.layer_is_moe.get(i))
            .copied()
            .unwrap_or(false);
        let attention = self.attention_of(i);
        LayerKind {
            moe,
            mixer: match attention {
                LayerAttention::Full if self.global_attention.is_some() => Mixer::GlobalAttention,
                LayerAttention::Full | LayerAttention::Sliding { .. } => Mixer::Attention,
                LayerAttention::Recurrent => Mixer::Recurrent,
                LayerAttention::MlpOnly => Mixer::None,
            },
            // Nemotron-H: a layer is one block, an attention or Mamba layer has no MLP.
            mlp: !(mixer_only
                && matches!(attention, LayerAttention::Full | LayerAttention::Recurrent)),
        }
    }

    /// Whether each layer holds one block only (Nemotron-H's pattern has `-`/`E` layers).
    #[must_use]
    pub fn mixer_only(&self) -> bool {
        self.layer_attention.contains(&LayerAttention::MlpOnly)
    }
}
