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
//!     row length off 256), `attn_v` and `ffn_down` in the layers `use_more_bits` picks (the
//!     first and last eighth and every third between: Q6_K; Falcon's `ffn_down`: Q6_K in the
//!     first sixteenth, Q5_K where `use_more_bits`), `attn_v` at Q5_K elsewhere in 80-layer
//!     Llama models (`LLM_TYPE_70B`), and for 8-expert models (Mixtral) `attn_k`/`attn_v` at
//!     Q8_0 and `attn_output` at Q5_K. A tied embedding takes the output's type.
//!   - **Q8_0**: every quantizable tensor.
//!   - **MXFP4_MOE** (gpt-oss as published): routed experts MXFP4, every other quantizable
//!     tensor Q8_0.
//!   - **F16 / BF16 / F32**: every 2-D weight at that width.
//!
//!   Tensors left unquantized (norms, biases, routers) are F32, as `convert_hf_to_gguf.py`
//!   writes 1-D tensors and the router.
//! - **Block sizes** (`ggml/src/ggml-common.h`): Q4_K 144 B and Q5_K 176 B and Q6_K 210 B per
//!   256 values; Q8_0 34 B, Q4_0 18 B, Q5_0 22 B, Q5_1 24 B and MXFP4 17 B per 32.
//! - **Placement** (`src/llama-model.cpp`, `load_tensors`): the input embedding stays on the
//!   CPU ("there is very little benefit to offloading the input layer, so always keep it on
//!   the CPU"); the layers split over the GPUs; the output projection goes with the last
//!   layers. A tied embedding is loaded twice: on the CPU for the input and on the last GPU
//!   as the output (`TENSOR_DUPLICATED`).
//!
//! Shapes come from the core's parameter breakdown (`model/params.rs`): q and o are each half
//! of the attention's sharded weights and k and v each half of the K/V weights (MLA's
//! projections all take the base type); gate, up and down are thirds of a gated MLP (halves
//! of a plain one).
//!
//! Checked against `llama-bench`'s `size` column (the whole file's tensors) and a load log's
//! tensor-type counts: `tests/it/hand_values.rs`, `gguf_files_weigh_as_llama_bench_prints`.

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

/// The bytes of a model's GGUF file at `ftype`: the input embedding, the output projection
/// (0 when tied) and each layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GgufBytes {
    /// `token_embd.weight` (kept on the CPU).
    pub token_embd: u64,
    /// `output.weight` on the last GPU: the tied embedding's copy when tied.
    pub output: u64,
    /// `output_norm` and other tensors outside the layers.
    pub other: u64,
    /// Each layer's tensors.
    pub layers: Vec<u64>,
    /// Each layer's routed-expert tensors (a subset of `layers`).
    pub experts: Vec<u64>,
}

impl GgufBytes {
    /// The file's tensors in all (`llama-bench`'s `size`): a tied embedding once.
    #[must_use]
    pub fn file(&self, tied: bool) -> u64 {
        let layers: u64 = self.layers.iter().sum();
        self.token_embd + if tied { 0 } else { self.output } + self.other + layers
    }
}

/// The GGUF bytes of `m` at `ftype`.
#[must_use]
pub fn gguf_bytes(m: &ModelArch, ftype: Ftype) -> GgufBytes {
    let falcon = m.architecture.to_ascii_lowercase().contains("falcon");
    let llama_70b = m.layers == 80 && m.architecture.to_ascii_lowercase().contains("llama");
    let eight_experts = m.moe.is_some_and(|x| x.experts == 8);
    let h = m.hidden;
    // The file type's base type (the type of every tensor no rule names).
    let base = match ftype {
        Ftype::F32 => Ty::F32,
        Ftype::F16 => Ty::F16,
        Ftype::Q8_0 | Ftype::Mxfp4Moe => Ty::Q8_0,
        Ftype::Q4KM => Ty::Q4K,
    };
    let output_ty = match ftype {
        Ftype::Q4KM if !falcon && h.is_multiple_of(256) => Ty::Q6K,
        Ftype::Q4KM => Ty::Q8_0,
        _ => base,
    };
    let vocab = m.vocab.saturating_mul(h);
    let token_embd = if m.tied_embeddings {
        output_ty.fit(h).bytes(vocab)
    } else {
        base.fit(h).bytes(vocab)
    };
    // Tied, the same bytes: the embedding at the output's type, copied to the last GPU.
    let output = output_ty.fit(h).bytes(vocab);
    let mixed = m.global_attention.is_some()
        || m.layer_attention.iter().any(|a| {
            matches!(
                a,
                crate::model::LayerAttention::Recurrent | crate::model::LayerAttention::MlpOnly
            )
        });
    let mixer_only = m.mixer_only();
    let n = m.layers;
    let q_width = m.heads.saturating_mul(m.head_dim);
    let k4m = ftype == Ftype::Q4KM;
    // `ffn_down` tensors: one per layer, two in MoE layers with shared experts (the index
    // `layer_info` compares the layer against, for MoE models).
    let shared = m.moe.is_some_and(|x| x.shared_intermediate > 0);
    let n_down = if m.moe.is_some() {
        n + if shared {
            m.layer_is_moe.iter().filter(|x| **x).count() as u64
        } else {
            0
        }
    } else {
        n
    };
    let down_ty = |i: u64| -> Ty {
        match ftype {
            Ftype::Q4KM if falcon && i < n / 16 => Ty::Q6K,
            Ftype::Q4KM if falcon && more_bits(i, n) => Ty::Q5K,
            Ftype::Q4KM if !falcon && more_bits(i, n_down.max(1)) => Ty::Q6K,
            _ => base,
        }
    };
    let (mut layers, mut experts) = (Vec::new(), Vec::new());
    for i in 0..n {
        let is_moe = m.layer_is_moe.get(usize::try_from(i).unwrap_or(usize::MAX)) == Some(&true);
        let p = if mixed {
            m.layer_params_of(m.layer_kind_in(i, mixer_only))
        } else {
            m.layer_params_of_kind(is_moe)
        };
        let attn = if m.mla.is_some() {
            base.fit(h).bytes(p.attn_sharded + p.linear_replicated)
        } else {
            let half = p.attn_sharded / 2;
            let o_ty = if k4m && eight_experts { Ty::Q5K } else { base };
            base.fit(h).bytes(p.attn_sharded - half) + o_ty.fit(q_width.max(1)).bytes(half)
        };
        let k = p.linear_kv / 2;
        let v_ty = match ftype {
            Ftype::Q4KM if eight_experts => Ty::Q8_0,
            Ftype::Q4KM if more_bits(i, n) => Ty::Q6K,
            Ftype::Q4KM if llama_70b => Ty::Q5K,
            _ => base,
        };
        let k_ty = if k4m && eight_experts { Ty::Q8_0 } else { base };
        let kv = k_ty.fit(h).bytes(k) + v_ty.fit(h).bytes(p.linear_kv - k);
        // Dense MLP or shared experts: gate, up, down (or up, down).
        let parts = if m.gated_mlp { 3 } else { 2 };
        let mlp_down = p.linear_sharded / parts;
        let inter = if m.intermediate > 0 {
            m.intermediate
        } else {
            h
        };
        let mlp =
            base.fit(h).bytes(p.linear_sharded - mlp_down) + down_ty(i).fit(inter).bytes(mlp_down);
        let ex = if p.expert > 0 {
            let down = p.expert / 3;
            let e_inter = m.moe.map_or(h, |x| x.expert_intermediate.max(1));
            if ftype == Ftype::Mxfp4Moe {
                Ty::Mxfp4.bytes(p.expert)
            } else {
                base.fit(h).bytes(p.expert - down) + down_ty(i).fit(e_inter).bytes(down)
            }
        } else {
            0
        };
        let f32_tensors = (p.router + p.replicated + p.bias_sharded + p.bias_kv).saturating_mul(4);
        layers.push(attn + kv + mlp + ex + f32_tensors);
        experts.push(ex);
    }
    GgufBytes {
        token_embd,
        output,
        other: h.saturating_mul(4),
        layers,
        experts,
    }
}

/// The layers of each of `pp` stages, as the core splits them (`weights.rs`: `layers / pp`
/// each, the remainder to the last stages).
fn stage_ranges(layers: u64, pp: u64) -> impl Iterator<Item = (u64, u64)> {
    let pp = pp.max(1).min(layers.max(1));
    let (base, rem) = (layers / pp, layers % pp);
    let mut start = 0;
    (0..pp).map(move |stage| {
        let n = base + u64::from(stage >= pp - rem);
        let r = (start, start + n);
        start += n;
        r
    })
}

/// Calls `each` with the GGUF weight bytes on a GPU of every pipeline stage, first to last:
/// the stage's layers, the output projection on the last, the multimodal tower (the
/// `--mmproj` file, as the core sizes it) on the first; the input embedding is on the CPU.
/// `sizing/weights.rs` walks these stages for llama.cpp.
pub(super) fn for_each_stage(s: &Scenario, each: &mut dyn FnMut(u64)) {
    let g = gguf_bytes(&s.model, Ftype::of(s.format));
    let pp = s.pipeline_parallel_size.max(1).min(s.model.layers.max(1));
    let tower = super::weights::extras_per_gpu(s);
    for (stage, (a, b)) in stage_ranges(s.model.layers, pp).enumerate() {
        let layers: u64 = g
            .layers
            .iter()
            .skip(usize::try_from(a).unwrap_or(usize::MAX))
            .take(usize::try_from(b - a).unwrap_or(0))
            .sum();
        let last = stage as u64 + 1 == pp;
        each(
            layers + if last { g.output + g.other } else { 0 } + if stage == 0 { tower } else { 0 },
        );
    }
}

/// GGUF routed-expert bytes of the busiest stage's layers (for the speed model's split of a
/// step's reads into dense and expert weights).
#[must_use]
pub fn expert_bytes_per_gpu(s: &Scenario) -> u64 {
    let g = gguf_bytes(&s.model, Ftype::of(s.format));
    let pp = s.pipeline_parallel_size.max(1).min(s.model.layers.max(1));
    stage_ranges(s.model.layers, pp)
        .map(|(a, b)| {
            g.experts
                .iter()
                .skip(usize::try_from(a).unwrap_or(usize::MAX))
                .take(usize::try_from(b - a).unwrap_or(0))
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0)
}
