//! The serving engine whose memory accounting and defaults to follow.
//!
//! Defaults per engine: vLLM `gpu_memory_utilization` 0.9 and 16-token blocks
//! (`vllm/engine/arg_utils.py`, `vllm/config/cache.py`); SGLang `mem_fraction_static` 0.88
//! and page size 1 (`python/sglang/srt/server_args.py`); TensorRT-LLM
//! `free_gpu_memory_fraction` 0.9 and 32 tokens per block (`docs/source/reference/memory.md`);
//! transformers uses the whole device and a per-token dynamic cache; llama.cpp's
//! `llama-server` has no memory fraction (it allocates the whole `-c` context up front and
//! either fits or fails: `sizing/llama_cpp.rs`) and no paged blocks (one cell per token).

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
    /// llama.cpp's `llama-server` (GGUF; Metal, CUDA, Vulkan backends).
    LlamaCpp,
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

    /// vLLM minor versions whose accounting is modelled: the V1 engine from v0.11 on, in its
    /// two eras (v0.11–v0.16 and v0.17+: `sizing/estimate.rs`), up to the newest calibrated,
    /// v0.19. v0.6–v0.10 (the V0 engine, or V1 before its profiler settled) are not.
    pub const VLLM_MODELLED: std::ops::RangeInclusive<u32> = 11..=19;

    /// Parses `vllm`, `vllm-0.19` (any modelled version, [`Engine::VLLM_MODELLED`]),
    /// `sglang`, `trtllm`, `tensorrt-llm`, `transformers`, `hf`, `llama.cpp` (also
    /// `llama-cpp`, `llamacpp`, `llama_cpp`, `llama-server`). A vLLM version that is not
    /// modelled is `None` ([`Engine::parse_any`] reads it, to say so). MLX is not modelled:
    /// `mlx` is `None`.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        Self::parse_any(s).filter(|e| match e {
            Self::Vllm { minor } => Self::VLLM_MODELLED.contains(minor),
            _ => true,
        })
    }

    /// [`Engine::parse`] for any vLLM version, modelled or not.
    #[must_use]
    pub fn parse_any(s: &str) -> Option<Self> {
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
            "llama.cpp" | "llama-cpp" | "llamacpp" | "llama_cpp" | "llama-server" => Self::LlamaCpp,
            _ => return None,
        })
    }

    /// The engine without its version (`vllm`, `sglang`, `trtllm`, `transformers`,
    /// `llama.cpp`).
    #[must_use]
    pub fn family(self) -> &'static str {
        match self {
            Self::Vllm { .. } => "vllm",
            Self::Sglang => "sglang",
            Self::TrtLlm => "trtllm",
            Self::Transformers => "transformers",
            Self::LlamaCpp => "llama.cpp",
        }
    }

    /// The engine's name as its users write it (`vLLM`, `SGLang`, `TensorRT-LLM`,
    /// `transformers`, `llama.cpp`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Vllm { .. } => "vLLM",
            Self::Sglang => "SGLang",
            Self::TrtLlm => "TensorRT-LLM",
            Self::Transformers => "transformers",
            Self::LlamaCpp => "llama.cpp",
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
            Self::LlamaCpp => "llama.cpp".into(),
        }
    }

    /// Default memory fraction: vLLM `gpu_memory_utilization` 0.9, SGLang
    /// `mem_fraction_static` 0.88, TRT-LLM `free_gpu_memory_fraction` 0.9, transformers 1.0,
    /// llama.cpp 1.0 (it has no such fraction: `gpu_memory_utilization` is ignored for it).
    #[must_use]
    pub fn default_memory_fraction(self) -> f64 {
        match self {
            Self::Vllm { .. } | Self::TrtLlm => 0.9,
            Self::Sglang => 0.88,
            Self::Transformers | Self::LlamaCpp => 1.0,
        }
    }

    /// Whether a request is held within the context length: vLLM, SGLang and TensorRT-LLM
    /// refuse a longer one; llama.cpp's server refuses a prompt that fills its slot and stops
    /// an output that does; transformers runs past it (sources: `plan/features.rs`
    /// `too_long`).
    #[must_use]
    pub fn holds_requests_within_length(self) -> bool {
        self != Self::Transformers
    }

    /// KV block size in tokens.
    #[must_use]
    pub fn default_block_size(self) -> u64 {
        match self {
            Self::Vllm { .. } => 16,
            Self::Sglang | Self::Transformers | Self::LlamaCpp => 1,
            Self::TrtLlm => 32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Engine;

    #[test]
    fn only_modelled_vllm_versions_parse() {
        assert_eq!(Engine::parse("vllm"), Some(Engine::Vllm { minor: 19 }));
        assert_eq!(Engine::parse("vllm-0.16"), Some(Engine::Vllm { minor: 16 }));
        assert_eq!(
            Engine::parse("vllm@v0.11.2"),
            Some(Engine::Vllm { minor: 11 })
        );
        // The V0 engine (v0.6) and versions newer than the calibration are not modelled.
        for v in ["vllm-0.6", "vllm-0.10", "vllm-0.20"] {
            assert_eq!(Engine::parse(v), None, "{v}");
            assert!(
                matches!(Engine::parse_any(v), Some(Engine::Vllm { .. })),
                "{v}"
            );
        }
        let mut i = crate::inputs::Inputs::default();
        let e = i.set(crate::inputs::Field::Engine, "vllm-0.6").unwrap_err();
        assert_eq!(e, "vLLM 0.6 is not modelled: the modelled versions are vllm-0.11 to vllm-0.19 (the V1 engine; `vllm` is vllm-0.19)");
        assert_eq!(i.flags.engine, Engine::DEFAULT, "the inputs are unchanged");
    }

    #[test]
    fn llama_cpp_parses_by_its_spellings_and_mlx_does_not() {
        for s in [
            "llama.cpp",
            "llama-cpp",
            "llamacpp",
            "llama_cpp",
            "llama-server",
            " Llama.CPP ",
        ] {
            assert_eq!(Engine::parse(s), Some(Engine::LlamaCpp), "{s}");
        }
        for s in ["mlx", "mlx-lm", "llama", "ollama"] {
            assert_eq!(Engine::parse(s), None, "{s}");
        }
        let e = Engine::LlamaCpp;
        assert_eq!(e.id(), "llama.cpp");
        assert_eq!(Engine::parse(&e.id()), Some(e), "the id round-trips");
        assert_eq!((e.family(), e.name()), ("llama.cpp", "llama.cpp"));
        assert_eq!(e.default_block_size(), 1);
        // The other engines' ids are unchanged.
        let ids: Vec<String> = [
            Engine::DEFAULT,
            Engine::Sglang,
            Engine::TrtLlm,
            Engine::Transformers,
        ]
        .iter()
        .map(|e| e.id())
        .collect();
        assert_eq!(ids, ["vllm-0.19", "sglang", "trtllm", "transformers"]);
    }
}
