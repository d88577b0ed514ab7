//! The serving engine whose memory accounting and defaults to follow.
//!
//! Defaults per engine: vLLM `gpu_memory_utilization` 0.9 and 16-token blocks
//! (`vllm/engine/arg_utils.py`, `vllm/config/cache.py`); SGLang `mem_fraction_static` 0.88
//! and page size 1 (`python/sglang/srt/server_args.py`); TensorRT-LLM
//! `free_gpu_memory_fraction` 0.9 and 32 tokens per block (`docs/source/reference/memory.md`);
//! transformers uses the whole device and a per-token dynamic cache.

use serde::Serialize;

/// The serving engine whose accounting to follow. Serialized as its id (`vllm-0.19`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// vLLM V1 of a version (minor number, 0.x).
    Vllm {
        /// Minor version: 19 for v0.19.
        minor: u32,
    },
    /// SGLang.
    Sglang,
    /// TensorRT-LLM (LLM API / trtllm-serve).
    TrtLlm,
    /// Hugging Face transformers `generate`.
    Transformers,
}

impl Serialize for Engine {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.serialize_str(&self.id())
    }
}

impl<'de> serde::Deserialize<'de> for Engine {
    fn deserialize<D: serde::Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        let s = String::deserialize(de)?;
        Self::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown engine `{s}`")))
    }
}

impl Engine {
    /// The default: vLLM v0.19.
    pub const DEFAULT: Self = Self::Vllm { minor: 19 };

    /// Parses `vllm`, `vllm-0.19`, `vllm-0.16`, `sglang`, `trtllm`, `tensorrt-llm`, `transformers`, `hf`.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim().to_ascii_lowercase();
        if s == "vllm" {
            return Some(Self::DEFAULT);
        }
        if let Some(v) = s.strip_prefix("vllm-").or_else(|| s.strip_prefix("vllm@")) {
            let v = v.trim_start_matches('v');
            let minor = v
                .strip_prefix("0.")?
                .split('.')
                .next()?
                .parse::<u32>()
                .ok()?;
            return Some(Self::Vllm { minor });
        }
        Some(match s.as_str() {
            "sglang" => Self::Sglang,
            "trtllm" | "tensorrt-llm" | "trt-llm" => Self::TrtLlm,
            "transformers" | "hf" => Self::Transformers,
            _ => return None,
        })
    }

    /// The engine without its version (`vllm`, `sglang`, `trtllm`, `transformers`).
    #[must_use]
    pub fn family(self) -> &'static str {
        match self {
            Self::Vllm { .. } => "vllm",
            Self::Sglang => "sglang",
            Self::TrtLlm => "trtllm",
            Self::Transformers => "transformers",
        }
    }

    /// The engine's name as its users write it (`vLLM`, `SGLang`, `TensorRT-LLM`,
    /// `transformers`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Vllm { .. } => "vLLM",
            Self::Sglang => "SGLang",
            Self::TrtLlm => "TensorRT-LLM",
            Self::Transformers => "transformers",
        }
    }

    /// Stable id.
    #[must_use]
    pub fn id(self) -> String {
        match self {
            Self::Vllm { minor } => format!("vllm-0.{minor}"),
            Self::Sglang => "sglang".into(),
            Self::TrtLlm => "trtllm".into(),
            Self::Transformers => "transformers".into(),
        }
    }

    /// Default memory fraction: vLLM `gpu_memory_utilization` 0.9, SGLang
    /// `mem_fraction_static` 0.88, TRT-LLM `free_gpu_memory_fraction` 0.9, transformers 1.0.
    #[must_use]
    pub fn default_memory_fraction(self) -> f64 {
        match self {
            Self::Vllm { .. } | Self::TrtLlm => 0.9,
            Self::Sglang => 0.88,
            Self::Transformers => 1.0,
        }
    }

    /// KV block size in tokens.
    #[must_use]
    pub fn default_block_size(self) -> u64 {
        match self {
            Self::Vllm { .. } => 16,
            Self::Sglang | Self::Transformers => 1,
            Self::TrtLlm => 32,
        }
    }
}
