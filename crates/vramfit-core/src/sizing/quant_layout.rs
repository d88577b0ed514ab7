//! Quantized weights as vLLM holds them after `process_weights_after_loading`, per GPU
//! architecture: the kernel each format gets, the padding that kernel asks for, the scales at
//! their real shapes, and the modules a checkpoint keeps in 16 bits.
//!
//! The bytes per quantized parameter of each format are in [`crate::dtype`]; this module
//! holds what depends on the GPU (the kernel) and on the checkpoint's `quantization_config`.
//!
//! # Sources (vLLM, `vllm-project/vllm`, files read at commit 007d5005 for `mxfp4.py` and
//! 01b817db for `utils/mxfp4_utils.py`, both of the v0.11 … v0.19 line)
//! - MXFP4 MoE (`vllm/model_executor/layers/quantization/mxfp4.py`, `get_mxfp4_backend` and
//!   `Mxfp4MoEMethod.create_weights`): the experts are `w13_weight [E, 2·I, H/2]` u8,
//!   `w13_weight_scale [E, 2·I, H/32]` u8 (e8m0), `w13_bias [E, 2·I]` bf16, `w2_weight
//!   [E, H, I/2]`, `w2_weight_scale [E, H, I/32]`, `w2_bias [E, H]` bf16, with `I` the
//!   intermediate size per TP rank, both padded for the kernel **before** loading:
//!   - Marlin (`Mxfp4Backend.MARLIN`: Ampere, Ada, consumer Blackwell SM120, and Hopper when
//!     the `triton_kernels` package is absent): `I` to a multiple of 128, `H` to 256 ("the
//!     moe marlin kernel requires that for each linear n % 256 == 0 and k % 128 == 0").
//!     `prepare_moe_fp4_layer_for_marlin` (`utils/marlin_utils_fp4.py`) repacks the padded
//!     values and permutes the scales at the same sizes; biases stay bf16.
//!   - FlashInfer TRT-LLM on datacenter Blackwell (`SM100_FI_MXFP4_BF16`, the default with
//!     FlashInfer on SM100): `I` and `H` to multiples of 256; the biases become fp32
//!     (`w13_bias.data.to(torch.float32)` before the shuffle).
//!   - Triton (`triton_kernels`, SM90/SM100 without FlashInfer): `I` to 64, `H` unpadded;
//!     the Hopper swizzle (`triton_kernels` `swizzle_mxfp4_value_hopper`, `HopperMXScaleLayout`)
//!     pads values to 16 × 64 tiles and scale rows to 256; biases fp32. Not chosen here: see
//!     below.
//!   - ROCm (`current_platform.is_rocm()`, the Triton backend): `I` and `H` to
//!     `get_padding_alignment()` (256 on gfx950 / MI355X, 128 otherwise); the values keep
//!     the strided layout; biases fp32.
//!   - Attention, router, embeddings and LM head are never MXFP4: `Mxfp4Config
//!     .get_quant_method` returns `UnquantizedLinearMethod` for every `LinearBase`.
//!
//!   gpt-oss-20b on H100 (calibration row `openai/gpt-oss-20b` of
//!   `tests/data/measurements.csv`: "vLLM measured 13.47-13.72 GiB loaded (v0.11-v0.19)"):
//!   the checkpoint holds 13,761,264,768 B = 12.82 GiB, which is what the unpadded count
//!   gives (5–6.5 % below the logs). The Marlin padding (`H` 2880 → 3072, `I` 2880 → 2944)
//!   adds 917 MB to the experts: 13.67 GiB, inside the logged range; the Triton layout would
//!   give 12.84 GiB, outside it. Hopper is therefore sized with the Marlin layout. Two
//!   more single-GPU logs agree: gpt-oss-20b on A100 (Marlin by necessity) "Model loading
//!   took 13.72 GiB" (myoceane.fr, "vLLM … A100", 2026-04-18; 13.687 predicted), and
//!   gpt-oss-120b on one 80 GB GPU with vLLM v0.11.2 "65.9651 GiB"
//!   (blog.huikang.dev/2025/12/28/vllm-logs.html; 65.913 predicted, the checkpoint 60.8).
//! - NVFP4 (`modelopt.py`, `ModelOptNvFp4LinearMethod` / `compressed_tensors` NVFP4): `weight
//!   [N, K/2]` u8, `weight_scale [N, K/16]` fp8 e4m3, `weight_scale_2` and `input_scale` one
//!   fp32 each. On Blackwell the CUTLASS/FlashInfer path swizzles the block scales, padding
//!   `N` to 128 and `K/16` to 4 (`swizzle_blockscale`): nothing for the shapes of the catalog
//!   (multiples of 128 and 64). Elsewhere `prepare_fp4_layer_for_marlin` repacks at the same
//!   sizes. So [`crate::dtype`]'s 4.5 bits hold on every architecture.
//! - FP8 (`fp8.py`): per-tensor / per-channel scales one fp32 each; block `[128, 128]`:
//!   `weight_scale_inv [ceil(N/128), ceil(K/128)]` fp32. On GPUs without FP8 tensor cores
//!   (compute capability < 8.9: Ampere, Turing) vLLM runs FP8 weight-only through Marlin
//!   (`utils/marlin_utils_fp8.py`, `prepare_fp8_layer_for_marlin`), which expands block scales
//!   to one 16-bit scale per 128 input channels of every output channel: `N × K/128 × 2`
//!   bytes instead of `N/128 × K/128 × 4` (+1.5 % of the weights), see
//!   [`fp8_block_scale_bytes`].
//! - GPTQ / AWQ on Marlin (`gptq_marlin.py`, `awq_marlin.py`, `utils/marlin_utils.py`):
//!   `gptq_marlin_repack` / `awq_marlin_repack` keep `qweight` at `K·N/8` int32 and the
//!   scales at `K/g × N` fp16 (permuted); AWQ keeps its zero points (repacked, same size);
//!   symmetric GPTQ and compressed-tensors W4A16 have none; `g_idx` is emptied without
//!   act-order (`marlin_make_empty_g_idx`). Marlin rejects shapes it cannot tile
//!   (`check_marlin_supports_shape`: N per rank % 64, K per rank % 128) instead of padding
//!   them. So the sizes are the checkpoint's; [`crate::dtype`] counts a 4-bit zero point per
//!   group for GPTQ too (0.4 % of the weights), which the one log we have (Llama-3.1-8B
//!   w4a16 on H100: 5.38 GiB; the count without zero points gives 5.34) does not contradict.
//! - Modules kept in 16 bits: the checkpoint's `quantization_config` lists them
//!   (`modules_to_not_convert` for mxfp4, AWQ, bitsandbytes; `ignore` for compressed-tensors
//!   and modelopt; vLLM `utils/quant_utils.py` `is_layer_skipped`): see
//!   [`quant_config_ignores`].

use crate::dtype::WeightFormat;
use serde::Serialize;
use serde_json::Value;

/// The GPU architecture, as far as vLLM's kernel choice depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GpuArch {
    /// Compute capability 7.0 (Volta): no Marlin.
    Volta,
    /// 7.5 (Turing: T4, RTX 20): no Marlin in the layouts modelled here.
    Turing,
    /// 8.0 / 8.6 (A100, A10, RTX 30).
    Ampere,
    /// 8.9 (L4, L40S, RTX 40).
    Ada,
    /// 9.0 (H100, H200, H20).
    Hopper,
    /// 10.x (B200, GB200, B300): the SM100 family.
    BlackwellDatacenter,
    /// 12.x (RTX 50, RTX PRO 6000): SM120.
    BlackwellConsumer,
    /// AMD CDNA 3 (MI300X, MI325X: gfx942).
    Cdna3,
    /// AMD CDNA 4 (MI355X: gfx950).
    Cdna4,
    /// Anything else (Intel, Apple): the checkpoint's layout is assumed.
    Other,
}

impl GpuArch {
    /// From a catalog GPU's `architecture` and name (`"Blackwell"` names both SM100 and
    /// SM120 chips; the RTX ones are SM120).
    #[must_use]
    pub fn from_catalog(architecture: Option<&str>, name: &str) -> Option<Self> {
        let a = architecture?.to_ascii_lowercase();
        Some(match a.as_str() {
            "volta" => Self::Volta,
            "turing" => Self::Turing,
            "ampere" => Self::Ampere,
            "ada lovelace" | "ada" => Self::Ada,
            "hopper" => Self::Hopper,
            "cdna 3" | "cdna3" => Self::Cdna3,
            "cdna 4" | "cdna4" => Self::Cdna4,
            "blackwell" | "blackwell ultra" => {
                if name.to_ascii_lowercase().contains("rtx") {
                    Self::BlackwellConsumer
                } else {
                    Self::BlackwellDatacenter
                }
            }
            _ => Self::Other,
        })
    }

    /// Whether vLLM's Marlin kernels run (compute capability ≥ 8.0, NVIDIA).
    #[must_use]
    pub fn has_marlin(self) -> bool {
        !matches!(
            self,
            Self::Volta | Self::Turing | Self::Cdna3 | Self::Cdna4 | Self::Other
        )
    }

    /// The NVIDIA compute capability × 10 (75 for 7.5); `None` for AMD and others.
    #[must_use]
    pub fn compute_capability(self) -> Option<u32> {
        match self {
            Self::Volta => Some(70),
            Self::Turing => Some(75),
            Self::Ampere => Some(80),
            Self::Ada => Some(89),
            Self::Hopper => Some(90),
            Self::BlackwellDatacenter => Some(100),
            Self::BlackwellConsumer => Some(120),
            Self::Cdna3 | Self::Cdna4 | Self::Other => None,
        }
    }

    /// Whether the GPU has FP8 tensor cores (compute capability ≥ 8.9).
    #[must_use]
    pub fn has_fp8(self) -> bool {
        matches!(
            self,
            Self::Ada
                | Self::Hopper
                | Self::BlackwellDatacenter
                | Self::BlackwellConsumer
                | Self::Cdna3
                | Self::Cdna4
        )
    }
}

/// The MXFP4 MoE kernel vLLM picks (`get_mxfp4_backend`, see the [module docs](self)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Mxfp4Backend {
    /// Marlin: `I` to 128, `H` to 256, bf16 biases.
    Marlin,
    /// FlashInfer TRT-LLM (SM100): `I` and `H` to 256, fp32 biases.
    FlashInferTrtllm,
    /// `triton_kernels` on ROCm: `I` and `H` to `align` (256 on gfx950, else 128:
    /// `mxfp4_utils.get_padding_alignment`), fp32 biases, unswizzled values.
    RocmTriton {
        /// The padding multiple.
        align: u64,
    },
    /// No GPU known (or not NVIDIA): the checkpoint's shapes.
    Checkpoint,
}

/// The MXFP4 MoE backend on `arch`.
#[must_use]
pub fn mxfp4_backend(arch: Option<GpuArch>) -> Mxfp4Backend {
    match arch {
        Some(GpuArch::BlackwellDatacenter) => Mxfp4Backend::FlashInferTrtllm,
        Some(GpuArch::Cdna3) => Mxfp4Backend::RocmTriton { align: 128 },
        Some(GpuArch::Cdna4) => Mxfp4Backend::RocmTriton { align: 256 },
        Some(a) if a.has_marlin() => Mxfp4Backend::Marlin,
        _ => Mxfp4Backend::Checkpoint,
    }
}

/// `(hidden, intermediate per rank)` as the backend pads them.
#[must_use]
pub fn mxfp4_expert_dims(backend: Mxfp4Backend, hidden: u64, inter: u64) -> (u64, u64) {
    let up = |x: u64, m: u64| x.div_ceil(m) * m;
    match backend {
        Mxfp4Backend::Marlin => (up(hidden, 256), up(inter, 128)),
        Mxfp4Backend::FlashInferTrtllm => (up(hidden, 256), up(inter, 256)),
        Mxfp4Backend::RocmTriton { align } => (up(hidden, align), up(inter, align)),
        Mxfp4Backend::Checkpoint => (hidden, inter),
    }
}

/// Bytes of `experts` MXFP4 experts of hidden size `hidden` and intermediate size `inter`
/// (per rank) as `backend` holds them: values (half a byte), e8m0 scales (one byte per 32),
/// and, with `bias`, the `w13`/`w2` biases (bf16, fp32 on FlashInfer TRT-LLM).
#[must_use]
pub fn mxfp4_experts_bytes(
    backend: Mxfp4Backend,
    experts: u64,
    hidden: u64,
    inter: u64,
    bias: bool,
) -> u64 {
    let (h, i) = mxfp4_expert_dims(backend, hidden, inter);
    // w13 [2I, H] and w2 [H, I]: 3·I·H values; K is H for w13 and I for w2.
    let values = (2 * i * h / 2) + (h * i / 2);
    let scales = 2 * i * h.div_ceil(32) + h * i.div_ceil(32);
    let bias_bytes = if bias {
        let b = match backend {
            Mxfp4Backend::FlashInferTrtllm | Mxfp4Backend::RocmTriton { .. } => 4,
            Mxfp4Backend::Marlin | Mxfp4Backend::Checkpoint => 2,
        };
        (2 * i + h) * b
    } else {
        0
    };
    experts * (values + scales + bias_bytes)
}

/// Bytes of the block scales of `n` FP8-block parameters with input width `in_features`:
/// one fp32 per 128×128 block where FP8 runs natively, one 16-bit scale per 128 inputs of
/// every output channel on Marlin (compute capability < 8.9; `marlin_utils_fp8.py`).
#[must_use]
pub fn fp8_block_scale_bytes(n: u64, in_features: u64, arch: Option<GpuArch>) -> u64 {
    match arch {
        Some(a) if a.has_marlin() && !a.has_fp8() => {
            let rows = n / in_features.max(1);
            rows * in_features.div_ceil(128) * 2
        }
        _ => n.div_ceil(128 * 128) * 4,
    }
}

/// Which parts of every decoder layer the checkpoint keeps in 16 bits, from its
/// `quantization_config` (embeddings, LM head, norms and routers are 16-bit in every
/// format already).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Kept16 {
    /// Attention projections (`self_attn`, `attn`).
    pub attention: bool,
    /// Dense MLP and shared experts (`mlp` without `experts`).
    pub mlp: bool,
    /// Routed experts.
    pub experts: bool,
}

impl Kept16 {
    /// Whether nothing is kept (the format's own rules apply).
    #[must_use]
    pub fn is_empty(self) -> bool {
        self == Self::default()
    }
}

/// The parts a `config.json`'s `quantization_config` keeps in 16 bits, from its
/// `modules_to_not_convert` (mxfp4, AWQ, bitsandbytes) or `ignore` (compressed-tensors,
/// modelopt) list. A pattern counts when it covers every layer (a `*` wildcard, a `re:`
/// regex, or no layer index); lists naming single layers (`model.layers.0.mlp`) leave the
/// part quantized (a stated approximation: a few layers of many). A pattern naming one
/// attention or MLP module (`self_attn.o_proj`) marks the whole part: the sizing keeps
/// parts, not single matrices.
///
/// # Example
/// ```
/// use vramfit_core::sizing::quant_config_ignores;
/// let c = serde_json::json!({"quantization_config": {"quant_method": "mxfp4",
///   "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
///   "model.embed_tokens", "lm_head"]}});
/// let k = quant_config_ignores(&c);
/// assert!(k.attention && !k.mlp && !k.experts);
/// ```
#[must_use]
pub fn quant_config_ignores(config: &Value) -> Kept16 {
    let mut kept = Kept16::default();
    let Some(q) = config
        .get("quantization_config")
        .or_else(|| config.get("text_config")?.get("quantization_config"))
    else {
        return kept;
    };
    let lists = ["modules_to_not_convert", "ignore", "ignored_layers"];
    let patterns = lists
        .iter()
        .filter_map(|k| q.get(*k)?.as_array())
        .flatten()
        .filter_map(Value::as_str);
    for p in patterns {
        let regex = p.starts_with("re:");
        let every_layer = regex || p.contains('*') || !names_a_layer(p);
        if !every_layer {
            continue;
        }
        let p = p.to_ascii_lowercase();
        if p.contains("self_attn") || p.contains(".attn") || p.contains("attention") {
            kept.attention = true;
        } else if p.contains("experts") && !p.contains("shared_expert") {
            kept.experts = true;
        } else if p.ends_with("mlp") || p.contains("shared_expert") || p.contains("proj") {
            // `mlp`, `mlp.*_proj`: dense MLP (a router is `gate` / `router`, 16-bit anyway).
            if !p.contains("self_attn") {
                kept.mlp = true;
            }
        }
    }
    kept
}

/// Whether `pattern` names one decoder layer (`layers.3.` with a number).
fn names_a_layer(pattern: &str) -> bool {
    pattern
        .split('.')
        .collect::<Vec<_>>()
        .windows(2)
        .any(|w| w[0] == "layers" && !w[1].is_empty() && w[1].bytes().all(|b| b.is_ascii_digit()))
}

/// The format of `part` under `kept` (16-bit when the checkpoint keeps it).
#[must_use]
pub fn kept_format(format: WeightFormat, kept: bool) -> WeightFormat {
    if kept {
        if format == WeightFormat::Fp32 {
            WeightFormat::Fp32
        } else {
            WeightFormat::Bf16
        }
    } else {
        format
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpt_oss_20b_experts_on_marlin_pad_to_256_and_128() {
        // gpt-oss-20b: 32 experts, hidden 2880, intermediate 2880, biases.
        // Checkpoint: 3·2880·2880 = 24,883,200 values → 12,441,600 B; scales
        // 2·2880·90 + 2880·90 = 777,600 B; biases (5760 + 2880)·2 = 17,280 B;
        // ×32 = 32·13,236,480 = 423,567,360 B.
        assert_eq!(
            mxfp4_experts_bytes(Mxfp4Backend::Checkpoint, 32, 2880, 2880, true),
            423_567_360
        );
        // Marlin: H 3072, I 2944: 3·3072·2944/2 = 13,565,952 B; scales 2·2944·96 + 3072·92
        // = 565,248 + 282,624 = 847,872 B; biases (5888 + 3072)·2 = 17,920 B;
        // ×32 = 32·14,431,744 = 461,815,808 B.
        assert_eq!(
            mxfp4_experts_bytes(Mxfp4Backend::Marlin, 32, 2880, 2880, true),
            461_815_808
        );
        // FlashInfer TRT-LLM: H = I = 3072: 3·3072·3072/2 = 14,155,776; scales 3·3072·96 =
        // 884,736; fp32 biases (6144 + 3072)·4 = 36,864; ×32 = 32·15,077,376 = 482,476,032.
        assert_eq!(
            mxfp4_experts_bytes(Mxfp4Backend::FlashInferTrtllm, 32, 2880, 2880, true),
            482_476_032
        );
    }

    #[test]
    fn backends_follow_the_architecture() {
        let arch = |a: &str, n: &str| GpuArch::from_catalog(Some(a), n);
        assert_eq!(arch("Hopper", "H100"), Some(GpuArch::Hopper));
        assert_eq!(
            arch("Blackwell", "NVIDIA B200"),
            Some(GpuArch::BlackwellDatacenter)
        );
        assert_eq!(
            arch("Blackwell", "RTX 5090"),
            Some(GpuArch::BlackwellConsumer)
        );
        assert_eq!(arch("Gaudi 3", "Gaudi 3"), Some(GpuArch::Other));
        assert_eq!(GpuArch::from_catalog(None, "x"), None);
        assert_eq!(mxfp4_backend(Some(GpuArch::Hopper)), Mxfp4Backend::Marlin);
        assert_eq!(mxfp4_backend(Some(GpuArch::Ampere)), Mxfp4Backend::Marlin);
        assert_eq!(
            mxfp4_backend(Some(GpuArch::BlackwellDatacenter)),
            Mxfp4Backend::FlashInferTrtllm
        );
        assert_eq!(
            mxfp4_backend(Some(GpuArch::Volta)),
            Mxfp4Backend::Checkpoint
        );
        assert_eq!(mxfp4_backend(None), Mxfp4Backend::Checkpoint);
        assert_eq!(arch("CDNA 3", "MI300X"), Some(GpuArch::Cdna3));
        assert_eq!(
            mxfp4_backend(Some(GpuArch::Cdna4)),
            Mxfp4Backend::RocmTriton { align: 256 }
        );
    }

    #[test]
    fn fp8_block_scales_on_marlin_are_per_128_inputs_of_each_row() {
        // DeepSeek-V3 down_proj of one expert: [7168, 2048] (N = 7168, K = 2048).
        let n = 7168 * 2048;
        // Native: 56 × 16 blocks × 4 B = 3,584 B.
        assert_eq!(fp8_block_scale_bytes(n, 2048, Some(GpuArch::Hopper)), 3_584);
        // Marlin (A100): 7168 rows × 16 groups × 2 B = 229,376 B.
        assert_eq!(
            fp8_block_scale_bytes(n, 2048, Some(GpuArch::Ampere)),
            229_376
        );
    }

    #[test]
    fn ignore_lists_of_real_configs() {
        // RedHatAI compressed-tensors W4A16: `"ignore": ["lm_head"]`: nothing more kept.
        let ct = serde_json::json!({"quantization_config": {"ignore": ["lm_head"]}});
        assert!(quant_config_ignores(&ct).is_empty());
        // A regex over every layer's attention.
        let re = serde_json::json!({"quantization_config":
            {"ignore": ["lm_head", "re:.*self_attn.*"]}});
        assert_eq!(
            quant_config_ignores(&re),
            Kept16 {
                attention: true,
                ..Kept16::default()
            }
        );
        // Only layer 0's MLP: not every layer, left quantized.
        let one = serde_json::json!({"quantization_config":
            {"modules_to_not_convert": ["model.layers.0.mlp"]}});
        assert!(quant_config_ignores(&one).is_empty());
        // No quantization_config, or a list of non-strings: nothing, no panic.
        assert!(quant_config_ignores(&serde_json::json!({})).is_empty());
        let bad = serde_json::json!({"quantization_config": {"ignore": [1, null]}});
        assert!(quant_config_ignores(&bad).is_empty());
    }
}
