//! llama.cpp's GGUF weights: the bytes of each tensor at the type `llama-quantize` gives it,
//! and which of them a GPU holds.
//!
//! # Sources
//! - **Types per tensor**: ggml-org/llama.cpp `src/llama-quant.cpp` at commit
//!   `007dbbf3fd17eefe9b47fee45f48f7ba5e62b714`: `tensor_allows_quantization` (only 2-D and
//!   3-D `*.weight` tensors, not norms, not the MoE router `ffn_gate_inp`),
//!   `llama_tensor_get_type_impl` (the mixes) and `tensor_type_fallback` (a row length that
//!   is not a multiple of the type's block: Q4_K → Q5_0, Q5_K → Q5_1, Q6_K → Q8_0, then F16).
//!   The file types the plan's commands name (`WeightFormat::gguf_quant`):
//!   - **Q4_K_M**: Q4_K everywhere but the output projection (Q6_K; Q8_0 for Falcon or a
//!     row length off 256), `ffn_down` in the layers `use_more_bits(layer, n_layer_all)`
//!     picks (the first and last eighth and every third between: Q6_K; Falcon's: Q6_K in
//!     the first sixteenth, Q5_K where `use_more_bits`), `attn_v` (or a fused `attn_qkv`,
//!     Phi-3's and Falcon's, whole) at Q6_K in the attention layers `use_more_bits` picks
//!     and Q5_K elsewhere in 80-layer models (`LLM_TYPE_70B`: Llama and Qwen2), and for
//!     8-expert models (Mixtral) `attn_k`/`attn_v` at Q8_0 and `attn_output` at Q5_K. A tied
//!     embedding takes the output's type. A recurrent layer's (Mamba, linear attention)
//!     projections take the base type.
//!   - **Q8_0**: every quantizable tensor.
//!   - **MXFP4_MOE** (gpt-oss as published): routed experts MXFP4, every other quantizable
//!     tensor Q8_0.
//!   - **F16 / BF16 / F32**: every 2-D weight at that width.
//!
//!   Tensors left unquantized (norms, biases, routers, gpt-oss's expert biases) are F32, as
//!   `convert_hf_to_gguf.py` writes 1-D tensors and the router.
//! - **Block sizes** (`ggml/src/ggml-common.h`): Q4_K 144 B and Q5_K 176 B and Q6_K 210 B per
//!   256 values; Q8_0 34 B, Q4_0 18 B, Q5_0 22 B, Q5_1 24 B and MXFP4 17 B per 32.
//! - **Placement** (`src/llama-model.cpp`, `load_tensors`): the input embedding stays on the
//!   CPU ("there is very little benefit to offloading the input layer, so always keep it on
//!   the CPU"); the layers split over the GPUs with the output counted as one more layer
//!   ([`device_of_layer`]), so the first GPUs take the extra layers and the last the output.
//!   A tied embedding is loaded twice: on the CPU for the input and on the last GPU as the
//!   output (`TENSOR_DUPLICATED`).
//!
//! Shapes come from the core's parameter breakdown (`model/params.rs`): q and o are each half
//! of the attention's sharded weights and k and v each half of the K/V weights (MLA's
//! projections all take the base type); gate, up and down are thirds of a gated MLP (halves
//! of a plain one).
//!
//! Checked against `llama-bench`'s `size` column (the whole file's tensors), by hand for
//! Llama 3 8B Q4_K_M (its load log's CPU and GPU buffers) and for the split over two GPUs:
//! `tests/it/gguf.rs`.

use super::Scenario;
use crate::dtype::WeightFormat;
use crate::model::ModelArch;

/// The GGUF file type of a weight format, as the plan's llama.cpp command names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ftype {
    /// `F32`.
    F32,
    /// `F16` (also `BF16`: the same bytes).
    F16,
    /// `Q8_0`.
    Q8_0,
    /// `Q4_K_M`.
    Q4KM,
    /// `MXFP4_MOE` (gpt-oss).
    Mxfp4Moe,
}

impl Ftype {
    /// The file type of `format` ([`WeightFormat::gguf_quant`]; gpt-oss's MXFP4 experts as
    /// published).
    #[must_use]
    pub fn of(format: WeightFormat) -> Self {
        if format == WeightFormat::Mxfp4Experts {
            return Self::Mxfp4Moe;
        }
        match format.gguf_quant() {
            "Q4_K_M" => Self::Q4KM,
            "Q8_0" => Self::Q8_0,
            "F32" => Self::F32,
            _ => Self::F16,
        }
    }
}

/// ggml tensor types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    F32,
    F16,
    Q8_0,
    Q6K,
    Q5K,
    Q4K,
    Q5_0,
    Q5_1,
    Mxfp4,
}

impl Ty {
    /// Bytes per 256 values.
    fn per_256(self) -> u64 {
        match self {
            Self::F32 => 1024,
            Self::F16 => 512,
            Self::Q8_0 => 272,
            Self::Q6K => 210,
            Self::Q5K | Self::Q5_0 => 176,
            Self::Q4K => 144,
            Self::Q5_1 => 192,
            Self::Mxfp4 => 136,
        }
    }

    fn block(self) -> u64 {
        match self {
            Self::F32 | Self::F16 => 1,
            Self::Q6K | Self::Q5K | Self::Q4K => 256,
            Self::Q8_0 | Self::Q5_0 | Self::Q5_1 | Self::Mxfp4 => 32,
        }
    }

    /// `tensor_type_fallback` for rows of `ncols` values.
    fn fit(self, ncols: u64) -> Self {
        if ncols.is_multiple_of(self.block()) {
            return self;
        }
        let t = match self {
            Self::Q4K => Self::Q5_0,
            Self::Q5K => Self::Q5_1,
            Self::Q6K => Self::Q8_0,
            t => t,
        };
        if ncols.is_multiple_of(t.block()) {
            t
        } else {
            Self::F16
        }
    }

    fn bytes(self, n: u64) -> u64 {
        let b = u128::from(n) * u128::from(self.per_256()) / 256;
        u64::try_from(b).unwrap_or(u64::MAX)
    }
}

/// `use_more_bits` (`llama-quant.cpp`).
fn more_bits(i: u64, n: u64) -> bool {
    i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2
}

/// The bytes of a model's GGUF file outside its layers, at `ftype`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GgufBytes {
    /// `token_embd.weight` (kept on the CPU).
    pub token_embd: u64,
    /// `output.weight` on the last GPU: the tied embedding's copy when tied.
    pub output: u64,
    /// `output_norm` and other tensors outside the layers.
    pub other: u64,
}

/// What the recipe needs of a model, worked out once per call.
struct Recipe<'a> {
    m: &'a ModelArch,
    ftype: Ftype,
    base: Ty,
    falcon: bool,
    fused_qkv: bool,
    type_70b: bool,
    eight_experts: bool,
    mixed: bool,
    mixer_only: bool,
    /// Attention layers (`n_attention_wv`).
    attn_layers: u64,
    /// A dense and an MoE layer's parameters, worked out once when every layer is one of
    /// the two (else per layer, from its kind).
    dense: crate::model::ParamBreakdown,
    moe: crate::model::ParamBreakdown,
}

impl<'a> Recipe<'a> {
    fn new(m: &'a ModelArch, ftype: Ftype) -> Self {
        let arch = m.architecture.to_ascii_lowercase();
        let falcon = arch.contains("falcon") || arch.starts_with("rw");
        let mixed = m.global_attention.is_some()
            || m.layer_attention.iter().any(|a| {
                matches!(
                    a,
                    crate::model::LayerAttention::Recurrent | crate::model::LayerAttention::MlpOnly
                )
            });
        let mixer_only = m.mixer_only();
        let attn_layers = (0..m.layers)
            .filter(|&i| Self::attends(m, mixed, mixer_only, i))
            .count() as u64;
        Self {
            m,
            ftype,
            base: match ftype {
                Ftype::F32 => Ty::F32,
                Ftype::F16 => Ty::F16,
                Ftype::Q8_0 | Ftype::Mxfp4Moe => Ty::Q8_0,
                Ftype::Q4KM => Ty::Q4K,
            },
            falcon,
            // The converters keep these models' fused `attn_qkv` (Phi-3 `qkv_proj`, Falcon
            // `query_key_value`).
            fused_qkv: falcon || arch.contains("phi3"),
            // `LLM_TYPE_70B`: the 80-layer Llama and Qwen2 models (`llama-model.cpp`).
            type_70b: m.layers == 80 && !falcon,
            eight_experts: m.moe.is_some_and(|x| x.experts == 8),
            mixed,
            mixer_only,
            attn_layers,
            dense: if mixed {
                crate::model::ParamBreakdown::default()
            } else {
                m.layer_params_of_kind(false)
            },
            moe: if mixed || m.moe.is_none() {
                crate::model::ParamBreakdown::default()
            } else {
                m.layer_params_of_kind(true)
            },
        }
    }

    fn attends(m: &ModelArch, mixed: bool, mixer_only: bool, i: u64) -> bool {
        !mixed
            || matches!(
                m.layer_kind_in(i, mixer_only).mixer,
                crate::model::Mixer::Attention | crate::model::Mixer::GlobalAttention
            )
    }

    fn q4km(&self) -> bool {
        self.ftype == Ftype::Q4KM
    }

    fn output_ty(&self) -> Ty {
        match self.ftype {
            Ftype::Q4KM if !self.falcon && self.m.hidden.is_multiple_of(256) => Ty::Q6K,
            Ftype::Q4KM => Ty::Q8_0,
            _ => self.base,
        }
    }

    /// `ffn_down`'s type in layer `i` (`layer_info` pairs the layer with `n_layer_all`).
    fn down_ty(&self, i: u64) -> Ty {
        let n = self.m.layers;
        match self.ftype {
            Ftype::Q4KM if self.falcon && i < n / 16 => Ty::Q6K,
            Ftype::Q4KM if self.falcon && more_bits(i, n) => Ty::Q5K,
            Ftype::Q4KM if !self.falcon && more_bits(i, n) => Ty::Q6K,
            _ => self.base,
        }
    }

    /// `attn_v`'s (or fused `attn_qkv`'s) type, for the `iv`-th attention layer.
    fn v_ty(&self, iv: u64) -> Ty {
        match self.ftype {
            Ftype::Q4KM if self.eight_experts => Ty::Q8_0,
            Ftype::Q4KM if more_bits(iv, self.attn_layers) => Ty::Q6K,
            Ftype::Q4KM if self.type_70b => Ty::Q5K,
            _ => self.base,
        }
    }

    /// Layer `i`'s bytes and its routed experts' bytes; `iv` attention layers precede it.
    fn layer(&self, i: u64, iv: u64) -> (u64, u64) {
        let m = self.m;
        let (h, base) = (m.hidden, self.base);
        let is_moe = m.layer_is_moe.get(usize::try_from(i).unwrap_or(usize::MAX)) == Some(&true);
        let kind = self.mixed.then(|| m.layer_kind_in(i, self.mixer_only));
        let p = match kind {
            Some(k) => m.layer_params_of(k),
            None if is_moe => self.moe,
            None => self.dense,
        };
        let attends = Self::attends(m, self.mixed, self.mixer_only, i);
        let recurrent = kind.is_some_and(|k| k.mixer == crate::model::Mixer::Recurrent);
        let add = |a: u64, b: u64| a.saturating_add(b);
        let attn = if recurrent {
            // A recurrent mixer's projections (in the sharded sums) take the base type.
            0
        } else if m.mla.is_some() {
            base.fit(h).bytes(add(p.attn_sharded, p.linear_replicated))
        } else {
            let o = p.attn_sharded / 2;
            let q = p.attn_sharded - o;
            let k = p.linear_kv / 2;
            let v = p.linear_kv - k;
            let v_ty = if attends { self.v_ty(iv) } else { base };
            let o_ty = if self.q4km() && self.eight_experts {
                Ty::Q5K
            } else {
                base
            };
            let o_bytes = o_ty.fit(m.heads.saturating_mul(m.head_dim).max(1)).bytes(o);
            if self.fused_qkv {
                add(v_ty.fit(h).bytes(add(add(q, k), v)), o_bytes)
            } else {
                let k_ty = if self.q4km() && self.eight_experts {
                    Ty::Q8_0
                } else {
                    base
                };
                add(
                    add(base.fit(h).bytes(q), k_ty.fit(h).bytes(k)),
                    add(v_ty.fit(h).bytes(v), o_bytes),
                )
            }
        };
        // Dense MLP or shared experts: gate, up, down (or up, down); a recurrent layer's
        // mixer projections sit in these sums too, at the base type.
        let mlp = if recurrent {
            base.fit(h)
                .bytes(add(add(p.linear_sharded, p.attn_sharded), p.linear_kv))
        } else {
            let down = p.linear_sharded / if m.gated_mlp { 3 } else { 2 };
            let inter = match m.moe {
                Some(x) if is_moe && x.shared_intermediate > 0 => x.shared_intermediate,
                _ => m.intermediate,
            };
            add(
                base.fit(h).bytes(p.linear_sharded - down),
                self.down_ty(i).fit(inter.max(1)).bytes(down),
            )
        };
        // Routed experts (3-D tensors); their biases (gpt-oss) stay F32.
        let (ex, ex_bias) = match m.moe {
            Some(x) if p.expert > 0 => {
                let bias = if x.expert_bias {
                    x.experts
                        .saturating_mul(add(x.expert_intermediate.saturating_mul(2), h))
                        .min(p.expert)
                } else {
                    0
                };
                let w = p.expert - bias;
                let bytes = if self.ftype == Ftype::Mxfp4Moe {
                    Ty::Mxfp4.bytes(w)
                } else {
                    let down = w / 3;
                    add(
                        base.fit(h).bytes(w - down),
                        self.down_ty(i)
                            .fit(x.expert_intermediate.max(1))
                            .bytes(down),
                    )
                };
                (bytes, bias.saturating_mul(4))
            }
            _ => (0, 0),
        };
        let f32_tensors =
            add(add(p.router, p.replicated), add(p.bias_sharded, p.bias_kv)).saturating_mul(4);
        let all = add(add(attn, mlp), add(add(ex, ex_bias), f32_tensors));
        (all, ex)
    }

    /// Calls `each(i, bytes, expert bytes)` for every layer, in order.
    fn for_each_layer(&self, each: &mut dyn FnMut(u64, u64, u64)) {
        let mut iv = 0;
        for i in 0..self.m.layers {
            let (b, e) = self.layer(i, iv);
            each(i, b, e);
            if Self::attends(self.m, self.mixed, self.mixer_only, i) {
                iv += 1;
            }
        }
    }

    fn outside(&self) -> GgufBytes {
        let m = self.m;
        let h = m.hidden;
        let vocab = m.vocab.saturating_mul(h);
        let output_ty = self.output_ty();
        GgufBytes {
            token_embd: if m.tied_embeddings {
                output_ty.fit(h).bytes(vocab)
            } else {
                self.base.fit(h).bytes(vocab)
            },
            // Tied, the same bytes: the embedding at the output's type, copied to the last GPU.
            output: output_ty.fit(h).bytes(vocab),
            other: h.saturating_mul(4),
        }
    }
}

/// The GGUF bytes of `m` at `ftype` outside its layers.
#[must_use]
pub fn gguf_bytes(m: &ModelArch, ftype: Ftype) -> GgufBytes {
    Recipe::new(m, ftype).outside()
}

/// The whole file's tensors (`llama-bench`'s `size`): a tied embedding once.
#[must_use]
pub fn file_bytes(m: &ModelArch, ftype: Ftype) -> u64 {
    let r = Recipe::new(m, ftype);
    let g = r.outside();
    let mut layers = 0u64;
    r.for_each_layer(&mut |_, b, _| layers = layers.saturating_add(b));
    g.token_embd
        .saturating_add(if m.tied_embeddings { 0 } else { g.output })
        .saturating_add(g.other)
        .saturating_add(layers)
}

/// The device llama.cpp gives layer `il` of `n` over `pp` equal GPUs (`llama-model.cpp`
/// `load_tensors`: the output counts as layer `n`, `act_gpu_layers = n + 1`, and layer `il`
/// goes to the first GPU whose cumulative split exceeds `il / (n + 1)`), so the first GPUs
/// take the extra layers and the last the output.
#[must_use]
pub fn device_of_layer(il: u64, n: u64, pp: u64) -> u64 {
    let pp = pp.max(1);
    let d = u128::from(il) * u128::from(pp) / (u128::from(n) + 1);
    u64::try_from(d).unwrap_or(u64::MAX).min(pp - 1)
}

/// Layers on the busiest GPU of `pp` (llama.cpp's split, [`device_of_layer`]).
#[must_use]
pub fn most_layers_on_a_gpu(n: u64, pp: u64) -> u64 {
    let pp = pp.max(1).min(n.max(1));
    // Device `d` holds the layers `il < n` with `⌊il × pp / (n + 1)⌋ = d`; the first holds
    // the most.
    (0..n)
        .take_while(|&il| device_of_layer(il, n, pp) == 0)
        .count() as u64
}

/// Calls `each(bytes, expert bytes)` for every pipeline stage's GPU, first to last: the
/// stage's layers, the output projection on the last, the multimodal tower (the `--mmproj`
/// file, as the core sizes it) on the first; the input embedding is on the CPU.
fn walk_stages(s: &Scenario, each: &mut dyn FnMut(u64, u64)) {
    let r = Recipe::new(&s.model, Ftype::of(s.format));
    let g = r.outside();
    let n = s.model.layers;
    let pp = s.pipeline_parallel_size.max(1).min(n.max(1));
    let (mut stage, mut bytes, mut experts) = (0, super::weights::extras_per_gpu(s), 0);
    r.for_each_layer(&mut |i, b, e| {
        let d = device_of_layer(i, n, pp);
        while stage < d {
            each(bytes, experts);
            (stage, bytes, experts) = (stage + 1, 0, 0);
        }
        bytes = bytes.saturating_add(b);
        experts = experts.saturating_add(e);
    });
    while stage + 1 < pp {
        each(bytes, experts);
        (stage, bytes, experts) = (stage + 1, 0, 0);
    }
    each(
        bytes.saturating_add(g.output).saturating_add(g.other),
        experts,
    );
}

/// The GGUF weight bytes on a GPU of every pipeline stage ([`walk_stages`]);
/// `sizing/weights.rs` walks these stages for llama.cpp (allocates nothing).
pub(super) fn for_each_stage(s: &Scenario, each: &mut dyn FnMut(u64)) {
    walk_stages(s, &mut |bytes, _| each(bytes));
}

/// GGUF routed-expert bytes of the stage that holds the most (for the speed model's split
/// of a step's reads into dense and expert weights).
#[must_use]
pub fn expert_bytes_per_gpu(s: &Scenario) -> u64 {
    let mut max = 0;
    walk_stages(s, &mut |_, experts| max = max.max(experts));
    max
}
