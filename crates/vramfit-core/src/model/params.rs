//! Parameter counts of a decoder layer by kind, grouped by how tensor parallelism shards
//! them (module shapes and sources in [`super`]).

use super::{LayerAttention, LayerKind, Mixer, ModelArch, RecurrentState};

impl ModelArch {
    /// The parameter breakdown of the whole model (no sharding).
    #[must_use]
    pub fn params(&self) -> ParamBreakdown {
        let h = self.hidden;
        let embed = self.vocab * h;
        let lm_head = if self.tied_embeddings {
            0
        } else {
            self.vocab * h
        };
        // Layers of one kind are alike: count each kind, size it once (a model has a few
        // kinds; `params` is on the serving model's path).
        let mixer_only = self.mixer_only();
        let mut kinds: Vec<(LayerKind, u64)> = Vec::with_capacity(4);
        for i in 0..self.layers {
            let k = self.layer_kind_in(i, mixer_only);
            match kinds.iter_mut().find(|(x, _)| *x == k) {
                Some(e) => e.1 += 1,
                None => kinds.push((k, 1)),
            }
        }
        let mut layer_sum = ParamBreakdown::default();
        for (k, n) in kinds {
            let p = self.layer_params_of(k);
            for _ in 0..n {
                layer_sum.add(&p);
            }
        }
        layer_sum.embedding = embed;
        layer_sum.lm_head = lm_head;
        layer_sum.replicated += h * if self.norm_bias { 2 } else { 1 }; // final norm
        if self.dense_bias && self.norm_bias {
            // lm_head bias (Phi-2)
            layer_sum.replicated += self.vocab;
        }
        layer_sum.extra = self.extra_params;
        layer_sum
    }

    /// Parameters of decoder layer `i`, split by how tensor parallelism shards them.
    #[must_use]
    pub fn layer_params(&self, i: u64) -> ParamBreakdown {
        self.layer_params_of(self.layer_kind(i))
    }

    /// Parameters of a decoder layer that is MoE (`is_moe`, when the model has experts) or
    /// dense, with the model's default attention.
    #[must_use]
    pub fn layer_params_of_kind(&self, is_moe: bool) -> ParamBreakdown {
        self.layer_params_of(LayerKind {
            moe: is_moe,
            mixer: Mixer::Attention,
            mlp: true,
        })
    }

    /// Parameters of a decoder layer of kind `kind`: layers of one kind are alike, so sizing
    /// computes one of each kind and counts them.
    ///
    /// Besides the attention of the module docs: global layers use their own KV shape and,
    /// with `attention_k_eq_v`, have no V projection in the checkpoint (transformers
    /// `Gemma4TextConfig`); Gemma 4 layers with `enable_moe_block` hold the dense MLP *and*
    /// the experts, a router (`hidden × experts` + a `hidden` scale), a per-expert scale, 3
    /// more norms and a layer scalar (vLLM `gemma4.py` `Gemma4DecoderLayer`,
    /// `Gemma4Router`, `Gemma4MoE`); Qwen3-Next's output gate doubles q (`qwen3_next.py`).
    /// Recurrent layers (vLLM `qwen3_next.py` `Qwen3NextGatedDeltaNet`; `mamba_mixer2.py`
    /// `MambaMixer2`): GatedDeltaNet `in_proj_qkvz = hidden × (2·key + 2·value)`,
    /// `in_proj_ba = hidden × 2·v_heads`, conv `(2·key + value) × kernel`, `A_log`,
    /// `dt_bias`, a `v_dim` norm, `out_proj = value × hidden`; Mamba2 `in_proj = hidden ×
    /// (2·inner + 2·groups·state + heads)`, conv `(inner + 2·groups·state) × (kernel + 1)`
    /// (weight and bias), `A_log`, `D`, `dt_bias`, an `inner` norm, `out_proj = inner ×
    /// hidden`, with `inner = heads × head_dim`.
    #[must_use]
    #[allow(clippy::too_many_lines)] // one module after another, in the order of the layer
    pub fn layer_params_of(&self, kind: LayerKind) -> ParamBreakdown {
        let h = self.hidden;
        let is_moe = kind.moe;
        let mut p = ParamBreakdown::default();
        let (kv_heads, head_dim) = match kind.mixer {
            Mixer::GlobalAttention => self.kv_shape(LayerAttention::Full),
            _ => (self.kv_heads, self.head_dim),
        };
        // Attention
        if kind.mixer == Mixer::None {
        } else if kind.mixer == Mixer::Recurrent {
            match self.recurrent {
                Some(RecurrentState::GatedDeltaNet {
                    key_heads,
                    value_heads,
                    key_head_dim,
                    value_head_dim,
                    conv_kernel,
                }) => {
                    let key = key_heads * key_head_dim;
                    let value = value_heads * value_head_dim;
                    p.linear_sharded += h * (2 * key + 2 * value) + h * 2 * value_heads;
                    p.linear_sharded += value * h;
                    p.replicated += (2 * key + value) * conv_kernel + 2 * value_heads;
                    p.replicated += value_head_dim;
                }
                Some(RecurrentState::Mamba2 {
                    heads,
                    head_dim,
                    state_size,
                    groups,
                    conv_kernel,
                }) => {
                    let inner = heads * head_dim;
                    let conv_dim = inner + 2 * groups * state_size;
                    p.linear_sharded += h * (2 * inner + 2 * groups * state_size + heads);
                    p.linear_sharded += inner * h;
                    p.replicated += conv_dim * (conv_kernel + 1) + 3 * heads + inner;
                }
                Some(RecurrentState::Mamba1 {
                    inner,
                    state_size,
                    conv_kernel,
                    dt_rank,
                }) => {
                    // vLLM `mamba_mixer.py` `MambaMixer`: in_proj h × 2·inner, conv1d
                    // (weight + bias), x_proj inner × (dt_rank + 2·state), dt_proj (+ bias),
                    // A inner × state, D, out_proj inner × h.
                    p.linear_sharded += h * 2 * inner + inner * h;
                    p.linear_sharded += inner * (dt_rank + 2 * state_size) + dt_rank * inner;
                    p.replicated += inner * (conv_kernel + 1) + inner * state_size + 2 * inner;
                }
                None => {}
            }
        } else if let Some(m) = self.mla {
            let qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim;
            match m.q_lora_rank {
                Some(r) => {
                    p.linear_replicated += h * r; // q_a_proj (ReplicatedLinear)
                    p.replicated += r; // q_a_layernorm
                    p.attn_sharded += r * self.heads * qk_head; // q_b_proj
                }
                None => p.attn_sharded += h * self.heads * qk_head,
            }
            p.linear_replicated += h * (m.kv_lora_rank + m.qk_rope_head_dim); // kv_a_proj_with_mqa
            p.replicated += m.kv_lora_rank; // kv_a_layernorm
            p.attn_sharded += m.kv_lora_rank * self.heads * (m.qk_nope_head_dim + m.v_head_dim);
            p.attn_sharded += self.heads * m.v_head_dim * h; // o_proj
        } else {
            let gate = if self.attn_output_gate { 2 } else { 1 };
            let q = h * self.heads * head_dim * gate;
            let kv = h * kv_heads * head_dim;
            // K = V: the checkpoint has no v_proj on these layers.
            let k_eq_v = kind.mixer == Mixer::GlobalAttention
                && self.global_attention.is_some_and(|g| g.k_eq_v);
            let kv_mats = if k_eq_v { 1 } else { 2 };
            p.attn_sharded += q + self.heads * head_dim * h;
            p.linear_kv += kv_mats * kv;
            if self.qkv_bias {
                p.bias_sharded += self.heads * head_dim;
                p.bias_kv += kv_mats * kv_heads * head_dim;
            }
            if self.dense_bias {
                p.replicated += h; // o_proj bias (RowParallel bias is replicated)
            }
            if self.qk_norm {
                p.replicated += 2 * head_dim;
            }
        }
        let norms = if self.mixer_only() {
            1
        } else {
            self.norms_per_layer
        };
        p.replicated += norms * h * if self.norm_bias { 2 } else { 1 };
        if !kind.mlp {
            return p;
        }
        if self.dense_beside_moe {
            // Gemma 4: the dense MLP runs beside the experts; 3 more norms, a router scale,
            // a per-expert scale and the layer scalar.
            let mats = if self.gated_mlp { 3 } else { 2 };
            p.linear_sharded += mats * h * self.intermediate;
            if let (true, Some(m)) = (is_moe, self.moe) {
                p.replicated += 3 * h + h + m.experts + 1;
            }
        }
        // MLP
        match (is_moe, self.moe) {
            (true, Some(m)) => {
                p.expert += m.experts * 3 * h * m.expert_intermediate;
                if m.expert_bias {
                    p.expert += m.experts * (2 * m.expert_intermediate + h);
                }
                p.router += h * m.experts + if m.expert_bias { m.experts } else { 0 };
                p.linear_sharded += 3 * h * m.shared_intermediate;
                if m.shared_gate {
                    p.router += h;
                }
                p.active_expert += m.experts_per_token * 3 * h * m.expert_intermediate;
            }
            _ => {
                let mats = if self.gated_mlp { 3 } else { 2 };
                p.linear_sharded += mats * h * self.intermediate;
                if self.dense_bias {
                    p.bias_sharded += self.intermediate;
                    p.replicated += h;
                }
            }
        }
        p
    }
}

/// Parameters grouped by how tensor parallelism shards them and how quantization treats them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ParamBreakdown {
    /// Input embedding (`vocab × hidden`), vocab-parallel, kept 16-bit by quantization.
    pub embedding: u64,
    /// Output projection (0 when tied), vocab-parallel, kept 16-bit.
    pub lm_head: u64,
    /// Attention linear weights split 1/TP (q, o, MLA up-projections), quantized.
    pub attn_sharded: u64,
    /// MLP linear weights split 1/TP (dense MLP, shared experts), quantized.
    pub linear_sharded: u64,
    /// K and V projection weights: split 1/TP, but replicated when kv_heads < TP. Quantized.
    pub linear_kv: u64,
    /// Linear weights replicated on every rank (MLA down-projections), quantized.
    pub linear_replicated: u64,
    /// Routed-expert weights, split over TP×EP, quantized.
    pub expert: u64,
    /// Routed-expert weights one token uses (for bandwidth), a subset of `expert`.
    pub active_expert: u64,
    /// MoE routers, kept 16-bit, replicated.
    pub router: u64,
    /// Biases split 1/TP (q bias, MLP biases), 16-bit.
    pub bias_sharded: u64,
    /// K/V biases (follow K/V sharding), 16-bit.
    pub bias_kv: u64,
    /// Norms and other small replicated tensors, 16-bit.
    pub replicated: u64,
    /// Parameters outside the text decoder (vision tower, MTP), 16-bit.
    pub extra: u64,
}

impl ParamBreakdown {
    fn add(&mut self, o: &Self) {
        self.embedding += o.embedding;
        self.lm_head += o.lm_head;
        self.attn_sharded += o.attn_sharded;
        self.linear_sharded += o.linear_sharded;
        self.linear_kv += o.linear_kv;
        self.linear_replicated += o.linear_replicated;
        self.expert += o.expert;
        self.active_expert += o.active_expert;
        self.router += o.router;
        self.bias_sharded += o.bias_sharded;
        self.bias_kv += o.bias_kv;
        self.replicated += o.replicated;
        self.extra += o.extra;
    }

    /// All parameters.
    #[must_use]
    pub fn total(&self) -> u64 {
        self.embedding
            + self.lm_head
            + self.attn_sharded
            + self.linear_sharded
            + self.linear_kv
            + self.linear_replicated
            + self.expert
            + self.router
            + self.bias_sharded
            + self.bias_kv
            + self.replicated
            + self.extra
    }

    /// Parameters one token touches (MoE: only its experts).
    #[must_use]
    pub fn active(&self) -> u64 {
        self.total() - self.expert + self.active_expert
    }

    /// Parameters a decoder step multiplies one token by (2 FLOPs each): [`Self::active`]
    /// less an untied input embedding (a lookup; tied, it is the LM head) and the parameters
    /// outside the decoder (a multimodal tower runs on media in prefill, an MTP module only
    /// as a drafter).
    #[must_use]
    pub fn multiplied(&self) -> u64 {
        let lookup = if self.lm_head > 0 { self.embedding } else { 0 };
        self.active().saturating_sub(lookup + self.extra)
    }
}
