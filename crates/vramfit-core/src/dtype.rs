//! Weight formats and KV-cache dtypes, and the bytes each costs.
//!
//! # Sources
//! - FP8 (`--quantization fp8`, compressed-tensors `FP8-dynamic`): e4m3 weights, 1 byte each,
//!   one fp32 scale per output channel (per tensor for online fp8); embeddings, LM head,
//!   norms and MoE routers stay in the model dtype (vLLM `fp8.py`, `compressed_tensors`).
//!   Measured: Llama-3.1-8B 14.99 GiB bf16 → 8.49 GiB fp8 (../shared/ENGINES.md).
//! - FP8 block (DeepSeek-V3, Kimi K2): 1 byte + one fp32 `weight_scale_inv` per 128×128 block.
//! - INT8 W8A8 (compressed-tensors): 1 byte + one fp32 scale per output channel.
//! - INT4 W4A16 AWQ / GPTQ: 4 bits packed in int32 (`qweight`), one fp16 scale and one 4-bit
//!   zero point (`qzeros`, packed) per group of `group_size` input channels (AutoAWQ,
//!   AutoGPTQ formats; vLLM `awq.py`, `gptq.py`); GPTQ adds an int32 `g_idx` per input row.
//! - MXFP4 (OCP Microscaling v1.0): 4-bit e2m1 values, one 8-bit e8m0 scale per block of 32
//!   = 4.25 bits. gpt-oss stores only MoE experts in MXFP4, the rest in bf16.
//! - NVFP4: 4-bit e2m1, one fp8 e4m3 scale per 16 values, one fp32 scale per tensor = 4.5 bits.
//!
//! These are the bytes per parameter of the checkpoint layouts. What vLLM's kernels make of
//! them on each GPU architecture (MXFP4 experts padded for Marlin or FlashInfer, FP8 block
//! scales expanded on Marlin, the Marlin repack of GPTQ/AWQ, the modules a checkpoint keeps
//! in 16 bits) is in `sizing/quant_layout.rs`, with the vLLM source files it follows; MXFP4
//! experts are sized there at their real shapes (bf16 biases included), not through
//! [`WeightFormat::expert_bytes`].

use serde::{Deserialize, Serialize};
use std::fmt;

/// How the weights are stored in GPU memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum WeightFormat {
    /// 4 bytes per parameter.
    Fp32,
    /// bfloat16, 2 bytes.
    Bf16,
    /// float16, 2 bytes.
    Fp16,
    /// FP8 e4m3 with per-channel (or per-tensor) scales.
    Fp8,
    /// FP8 e4m3 with 128×128 block scales (DeepSeek, Kimi).
    Fp8Block,
    /// FP8 on the MLP only, attention in bf16 (Meta's Llama-3.1-405B-Instruct-FP8).
    Fp8Ffn,
    /// INT8 weights and activations, per-channel scales.
    Int8W8a8,
    /// INT4 weights, 16-bit activations, AWQ layout.
    Int4Awq,
    /// INT4 weights, 16-bit activations, GPTQ / compressed-tensors W4A16 layout.
    Int4Gptq,
    /// MXFP4 on MoE experts only, rest bf16 (gpt-oss as shipped).
    Mxfp4Experts,
    /// MXFP4 on every linear layer.
    Mxfp4,
    /// NVFP4 on every linear layer.
    Nvfp4,
}

impl WeightFormat {
    /// Every format, in the order the UI lists them.
    pub const ALL: [Self; 12] = [
        Self::Bf16,
        Self::Fp16,
        Self::Fp32,
        Self::Fp8,
        Self::Fp8Block,
        Self::Fp8Ffn,
        Self::Int8W8a8,
        Self::Int4Awq,
        Self::Int4Gptq,
        Self::Mxfp4,
        Self::Mxfp4Experts,
        Self::Nvfp4,
    ];

    /// Stable short id (used in URLs, CLI and JSON).
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Self::Fp32 => "fp32",
            Self::Bf16 => "bf16",
            Self::Fp16 => "fp16",
            Self::Fp8 => "fp8",
            Self::Fp8Block => "fp8-block",
            Self::Fp8Ffn => "fp8-ffn",
            Self::Int8W8a8 => "int8-w8a8",
            Self::Int4Awq => "int4-awq",
            Self::Int4Gptq => "int4-gptq",
            Self::Mxfp4Experts => "mxfp4-experts",
            Self::Mxfp4 => "mxfp4",
            Self::Nvfp4 => "nvfp4",
        }
    }

    /// The llama.cpp GGUF quant tag closest to the format (4-bit formats: `Q4_K_M`, 8-bit:
    /// `Q8_0`; llama.cpp `tools/quantize/quantize.cpp` names them).
    #[must_use]
    pub fn gguf_quant(self) -> &'static str {
        match self {
            Self::Int4Awq | Self::Int4Gptq | Self::Mxfp4 | Self::Nvfp4 | Self::Mxfp4Experts => {
                "Q4_K_M"
            }
            Self::Fp8 | Self::Fp8Block | Self::Fp8Ffn | Self::Int8W8a8 => "Q8_0",
            Self::Fp32 => "F32",
            Self::Fp16 => "F16",
            Self::Bf16 => "BF16",
        }
    }

    /// Parses an id or a common synonym (`awq`, `gptq`, `w8a8`, `w4a16`, `float16`, ...).
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim().to_ascii_lowercase();
        Some(match s.as_str() {
            "fp32" | "float32" | "float" => Self::Fp32,
            "bf16" | "bfloat16" | "auto" => Self::Bf16,
            "fp16" | "float16" | "half" => Self::Fp16,
            "fp8" | "fp8-dynamic" | "fp8_e4m3" | "fbgemm_fp8" | "modelopt" => Self::Fp8,
            "fp8-block" | "fp8_block" => Self::Fp8Block,
            "fp8-ffn" | "fbgemm_fp8_ffn" => Self::Fp8Ffn,
            "int8" | "int8-w8a8" | "w8a8" | "int8_w8a8" => Self::Int8W8a8,
            "int4" | "awq" | "int4-awq" | "awq_marlin" => Self::Int4Awq,
            "gptq" | "int4-gptq" | "w4a16" | "gptq_marlin" => Self::Int4Gptq,
            "mxfp4-experts" => Self::Mxfp4Experts,
            "mxfp4" => Self::Mxfp4,
            "nvfp4" | "modelopt_fp4" | "fp4" => Self::Nvfp4,
            _ => return None,
        })
    }

    /// Bytes per element of the unquantized (16-bit or fp32) parts.
    #[must_use]
    pub fn high_precision_bytes(self) -> u64 {
        if self == Self::Fp32 {
            4
        } else {
            2
        }
    }

    /// Storage of `n` quantized linear-layer parameters, in bytes, with `in_features` the
    /// typical input width (for per-channel scale overhead). Rounds up.
    #[must_use]
    pub fn linear_bytes(self, n: u64, in_features: u64, group_size: u64) -> u64 {
        let in_f = in_features.max(1);
        let g = group_size.max(1);
        match self {
            Self::Fp32 => n * 4,
            Self::Bf16 | Self::Fp16 | Self::Mxfp4Experts => n * 2,
            // 1 byte + fp32 scale per output channel (n / in_features channels).
            Self::Fp8 | Self::Fp8Ffn | Self::Int8W8a8 => n + (n / in_f) * 4,
            Self::Fp8Block => n + n.div_ceil(128 * 128) * 4,
            // 0.5 byte + fp16 scale and 4-bit zero per group. GPTQ's int32 `g_idx` (one per
            // input row, < 0.1% of the matrix) is left out.
            Self::Int4Awq | Self::Int4Gptq => {
                n.div_ceil(2) + n.div_ceil(g) * 2 + n.div_ceil(g).div_ceil(2)
            }
            Self::Mxfp4 => n.div_ceil(2) + n.div_ceil(32),
            Self::Nvfp4 => n.div_ceil(2) + n.div_ceil(16),
        }
    }

    /// The format attention weights are stored in (bf16 for FFN-only FP8).
    #[must_use]
    pub fn attention_format(self) -> Self {
        if self == Self::Fp8Ffn {
            Self::Bf16
        } else {
            self
        }
    }

    /// Storage of `n` routed-expert parameters.
    #[must_use]
    pub fn expert_bytes(self, n: u64, in_features: u64, group_size: u64) -> u64 {
        match self {
            Self::Mxfp4Experts => Self::Mxfp4.linear_bytes(n, in_features, group_size),
            other => other.linear_bytes(n, in_features, group_size),
        }
    }

    /// Whether the format is a quantization (quality caveat applies).
    #[must_use]
    pub fn is_quantized(self) -> bool {
        !matches!(self, Self::Fp32 | Self::Bf16 | Self::Fp16)
    }

    /// The dense-TFLOPS key of a GPU that runs this format's matrix multiplies.
    #[must_use]
    pub fn compute_key(self) -> &'static str {
        match self {
            Self::Fp32 => "fp32",
            Self::Fp16 => "fp16",
            // Weight-only formats dequantize to 16-bit before the MMA.
            Self::Bf16 | Self::Int4Awq | Self::Int4Gptq | Self::Mxfp4Experts => "bf16",
            Self::Fp8 | Self::Fp8Block | Self::Fp8Ffn => "fp8",
            Self::Int8W8a8 => "int8",
            Self::Mxfp4 | Self::Nvfp4 => "fp4",
        }
    }

    /// One-line quality caveat for the UI.
    #[must_use]
    pub fn caveat(self) -> &'static str {
        match self {
            Self::Fp32 => "Full precision: twice the memory of bf16 for no quality gain at inference.",
            Self::Bf16 | Self::Fp16 => "Reference quality.",
            Self::Fp8 | Self::Fp8Block | Self::Fp8Ffn => "Near-lossless on most benchmarks (<1% drop); needs FP8 tensor cores (Ada, Hopper, Blackwell, MI300) for speed.",
            Self::Int8W8a8 => "Near-lossless with SmoothQuant-style calibration; fast on Ampere and newer.",
            Self::Int4Awq | Self::Int4Gptq => "Small but measurable quality loss (about 1-3% on reasoning and code); decode is faster, prefill is not.",
            Self::Mxfp4Experts | Self::Mxfp4 => "Used natively by gpt-oss; post-training MXFP4 of other models loses more than INT4 with groups.",
            Self::Nvfp4 => "Blackwell-native; near-FP8 quality with calibrated scales, needs B200/RTX 50 for speed.",
        }
    }
}

impl fmt::Display for WeightFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// KV-cache element type (`--kv-cache-dtype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum KvDtype {
    /// Same as the activations (bf16/fp16; fp32 models run at fp16 in vLLM).
    Auto,
    /// 2 bytes.
    Bf16,
    /// 2 bytes.
    Fp16,
    /// 1 byte (e4m3 or e5m2).
    Fp8,
}

impl KvDtype {
    /// Bytes per cached element.
    #[must_use]
    pub fn bytes(self) -> u64 {
        match self {
            Self::Fp8 => 1,
            _ => 2,
        }
    }

    /// Stable id.
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Bf16 => "bf16",
            Self::Fp16 => "fp16",
            Self::Fp8 => "fp8",
        }
    }

    /// Parses `auto`, `bf16`, `bfloat16`, `fp16`, `half`, `fp8`, `fp8_e4m3`, `fp8_e5m2`.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Self::Auto,
            "bf16" | "bfloat16" => Self::Bf16,
            "fp16" | "float16" | "half" => Self::Fp16,
            "fp8" | "fp8_e4m3" | "fp8_e5m2" | "fp8-e4m3" | "fp8-e5m2" => Self::Fp8,
            _ => return None,
        })
    }
}
