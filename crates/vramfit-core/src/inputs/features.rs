//! What real deployments add to a `vllm serve` line (issue 18): multimodal limits, LoRA
//! adapters, speculative decoding, and the smaller flags (`--enforce-eager`,
//! `--cpu-offload-gb`, `--swap-space`, prefix caching, `--kv-cache-memory-bytes`).
//!
//! Each value is one row of the input table ([`super::KEYS`]); vLLM's compound JSON flags
//! (`--limit-mm-per-prompt`, `--mm-processor-kwargs`, `--speculative-config`) are read by
//! [`apply_vllm_json`] onto those rows, so the CLI and a pasted command spell them as
//! `vllm serve` does and a link carries the same values.
//!
//! Sources of the defaults: vLLM `vllm/config/lora.py` (`max_loras = 1`, `max_lora_rank =
//! 16`, `max_cpu_loras = max_loras`), `vllm/config/speculative.py` (methods and their
//! names), `vllm/config/cache.py` (`swap_space = 4` GiB, `cpu_offload_gb = 0`,
//! `kv_cache_memory_bytes`), `vllm/config/multimodal.py` (`limit_per_prompt`).

use serde::Serialize;
use serde_json::Value;

/// `--limit-mm-per-prompt` and the processor's resolution (`--mm-processor-kwargs`).
/// `None` = vLLM's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Multimodal {
    /// Images per prompt (`{"image": N}`).
    pub images: Option<u64>,
    /// Videos per prompt (`{"video": N}`).
    pub videos: Option<u64>,
    /// Audio clips per prompt (`{"audio": N}`).
    pub audios: Option<u64>,
    /// Frames sampled per video (`--mm-processor-kwargs '{"num_frames": N}'`; Qwen-VL's
    /// `max_frames` / `fps` bound the same count).
    pub frames: Option<u64>,
    /// Pixels per image the processor resizes to at most (`max_pixels`, Qwen-VL family).
    pub max_pixels: Option<u64>,
    /// `--mm-encoder-tp-mode data`: every rank holds the whole encoder and encodes its share
    /// of the items (default `weights`: the encoder is sharded like the language model).
    pub encoder_data_parallel: bool,
    /// `--skip-mm-profiling`: the profiling run leaves the encoder out (no reservation; the
    /// user leaves the headroom).
    pub skip_profiling: bool,
}

impl Multimodal {
    /// Whether the limits turn every modality off (`{"image": 0, "video": 0, …}`).
    #[must_use]
    pub fn all_off(&self) -> bool {
        self.images == Some(0) && self.videos == Some(0) && self.audios == Some(0)
    }
}

/// `--enable-lora` and its sizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Lora {
    /// `--enable-lora`.
    pub enabled: bool,
    /// `--max-loras`: adapter slots on each GPU (vLLM default 1).
    pub max_loras: u64,
    /// `--max-lora-rank` (vLLM default 16).
    pub max_rank: u64,
    /// `--max-cpu-loras`: adapters cached in host memory (default: `max_loras`).
    pub max_cpu_loras: Option<u64>,
    /// `--fully-sharded-loras`: the A matrices of column-parallel layers are sharded too.
    pub fully_sharded: bool,
    /// `--lora-target-modules` (vLLM 0.19): the modules wrapped ([`LoraModules`]); `None` =
    /// every module vLLM supports for the model.
    pub target_modules: Option<LoraModules>,
}

/// A set of LoRA target modules (`--lora-target-modules`), by the packed module vLLM wraps:
/// the q/k/v projections are one `qkv_proj`, gate and up one `gate_up_proj`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LoraModules(pub u8);

impl LoraModules {
    /// Every module and its names (packed name first, then the names adapters use).
    pub const NAMES: [(u8, &'static [&'static str]); 7] = [
        (1, &["qkv_proj", "q_proj", "k_proj", "v_proj"]),
        (2, &["o_proj"]),
        (4, &["gate_up_proj", "gate_proj", "up_proj"]),
        (8, &["down_proj"]),
        (16, &["embed_tokens"]),
        (32, &["lm_head"]),
        (64, &["experts", "gate"]),
    ];

    /// Whether the set holds the module of bit `bit`.
    #[must_use]
    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    /// Reads `q_proj,v_proj` or `["qkv_proj", "o_proj"]`.
    ///
    /// # Errors
    /// A module name vramfit does not know, naming it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut bits = 0u8;
        for w in text
            .split([',', ' ', '[', ']'])
            .map(|w| w.trim().trim_matches(|c| c == '"' || c == '\''))
            .filter(|w| !w.is_empty())
        {
            let (bit, _) = Self::NAMES
                .iter()
                .find(|(_, names)| names.contains(&w))
                .ok_or_else(|| {
                    format!(
                        "unknown LoRA target module `{w}` (qkv_proj or q_proj/k_proj/v_proj, o_proj, gate_up_proj or gate_proj/up_proj, down_proj, embed_tokens, lm_head, experts and the router gate)"
                    )
                })?;
            bits |= bit;
        }
        if bits == 0 {
            return Err("`--lora-target-modules` names no module".into());
        }
        Ok(Self(bits))
    }

    /// The packed names, comma-separated (the URL's form).
    #[must_use]
    pub fn text(self) -> String {
        Self::NAMES
            .iter()
            .filter(|(b, _)| self.has(*b))
            .map(|(_, n)| n[0])
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl Default for Lora {
    fn default() -> Self {
        Self {
            enabled: false,
            max_loras: 1,
            max_rank: 16,
            max_cpu_loras: None,
            fully_sharded: false,
            target_modules: None,
        }
    }
}

/// A speculative-decoding method (`--speculative-config`'s `method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SpecMethod {
    /// Prompt lookup (n-gram matching on the CPU): no weights, no KV.
    Ngram,
    /// An EAGLE head: one decoder layer on the target's hidden states.
    Eagle,
    /// An EAGLE-3 head (one layer over three of the target's layers' hidden states).
    Eagle3,
    /// The model's own multi-token-prediction layers (`num_nextn_predict_layers`).
    Mtp,
    /// A separate, smaller draft model.
    DraftModel,
}

impl SpecMethod {
    /// Every method, in the order the UI lists them.
    pub const ALL: [Self; 5] = [
        Self::Ngram,
        Self::Eagle,
        Self::Eagle3,
        Self::Mtp,
        Self::DraftModel,
    ];

    /// The id (URL value; vLLM's `method` name).
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Self::Ngram => "ngram",
            Self::Eagle => "eagle",
            Self::Eagle3 => "eagle3",
            Self::Mtp => "mtp",
            Self::DraftModel => "draft_model",
        }
    }

    /// Reads a method as vLLM names it (`deepseek_mtp`, `qwen3_next_mtp`, `[ngram]` …).
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        let s = s
            .trim()
            .trim_matches(|c| c == '[' || c == ']')
            .to_ascii_lowercase();
        match s.as_str() {
            "ngram" | "prompt_lookup" | "ngram_gpu" => Some(Self::Ngram),
            "eagle" => Some(Self::Eagle),
            "eagle3" | "eagle-3" => Some(Self::Eagle3),
            "draft_model" | "draft" => Some(Self::DraftModel),
            _ if s == "mtp" || s.ends_with("_mtp") => Some(Self::Mtp),
            _ => None,
        }
    }

    /// The method vLLM infers from a draft model's name when `method` is absent
    /// (`vllm/config/speculative.py`: `ngram` / `[ngram]`, "eagle3" or "eagle" in the name,
    /// else a draft model).
    #[must_use]
    pub fn from_model_name(name: &str) -> Self {
        let n = name.to_ascii_lowercase();
        if n.trim_matches(|c| c == '[' || c == ']') == "ngram" {
            Self::Ngram
        } else if n.contains("eagle3") || n.contains("eagle-3") {
            Self::Eagle3
        } else if n.contains("eagle") {
            Self::Eagle
        } else {
            Self::DraftModel
        }
    }
}

/// `--speculative-config`: the method, the tokens drafted per step and the acceptance rate
/// the speed model assumes.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Speculative {
    /// The method; `None` = no speculative decoding.
    pub method: Option<SpecMethod>,
    /// `num_speculative_tokens` (`None`: the method's default, see `sizing/spec.rs`).
    pub tokens: Option<u64>,
    /// Probability that each drafted token is accepted (`None`: the method's sourced
    /// default, see `serving/spec.rs`).
    pub acceptance: Option<f64>,
}

/// Every feature flag of issue 18. `Copy`, so [`super::EngineFlags`] stays `Copy`; the
/// draft model's id is text and lives in [`super::Inputs::spec_model`].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Features {
    /// Multimodal limits.
    pub mm: Multimodal,
    /// LoRA adapters.
    pub lora: Lora,
    /// Speculative decoding.
    pub spec: Speculative,
    /// `--enforce-eager`: no CUDA graphs (no graph memory, a slower step).
    pub enforce_eager: bool,
    /// `--cpu-offload-gb`: GiB of weights per GPU kept in host memory.
    pub cpu_offload_gib: Option<f64>,
    /// `--swap-space`: GiB of host memory per GPU for swapped KV blocks.
    pub swap_space_gib: Option<f64>,
    /// `--no-enable-prefix-caching`: prefix caching off (vLLM V1 has it on by default).
    pub no_prefix_caching: bool,
    /// `--kv-cache-memory-bytes`: the KV pool per GPU, set directly (the memory fraction
    /// then does not size it).
    pub kv_cache_memory_bytes: Option<u64>,
}

impl Features {
    /// Whether a feature whose speed no published measurement checks is on (speculative
    /// decoding, CPU offload, LoRA, multimodal items per request): the plan's speed is then
    /// "not validated", without a band.
    #[must_use]
    pub fn speed_unvalidated(&self) -> bool {
        let some = |x: Option<u64>| x.is_some_and(|n| n > 0);
        self.spec.method.is_some()
            || self.cpu_offload_gib.is_some_and(|g| g > 0.0)
            || self.lora.enabled
            || some(self.mm.images)
            || some(self.mm.videos)
            || some(self.mm.audios)
    }
}

/// A compound vLLM flag read onto the rows of the input table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compound {
    /// `--limit-mm-per-prompt '{"image": 2, "video": 0}'`.
    LimitMmPerPrompt,
    /// `--mm-processor-kwargs '{"max_pixels": 1003520, "num_frames": 16}'`.
    MmProcessorKwargs,
    /// `--speculative-config '{"method": "eagle3", "model": "…", "num_speculative_tokens": 3}'`.
    SpeculativeConfig,
}

impl Compound {
    /// The vLLM flag.
    #[must_use]
    pub fn flag(self) -> &'static str {
        match self {
            Self::LimitMmPerPrompt => "--limit-mm-per-prompt",
            Self::MmProcessorKwargs => "--mm-processor-kwargs",
            Self::SpeculativeConfig => "--speculative-config",
        }
    }

    /// The compound flag of a vLLM spelling (dashes or underscores).
    #[must_use]
    pub fn of_flag(flag: &str) -> Option<Self> {
        let f = flag.replace('_', "-");
        [
            Self::LimitMmPerPrompt,
            Self::MmProcessorKwargs,
            Self::SpeculativeConfig,
        ]
        .into_iter()
        .find(|c| c.flag() == f)
    }
}

/// What a compound flag set, as (field, value) pairs for [`super::Inputs::set`], and the
/// keys it did not model (listed to the user).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Applied {
    /// The rows and their values, in order.
    pub rows: Vec<(super::Field, String)>,
    /// Keys of the JSON that vramfit does not model.
    pub ignored: Vec<String>,
}

/// Reads a compound vLLM flag's JSON onto rows of the input table.
///
/// # Errors
/// The value is not a JSON object, or a key holds the wrong kind of value (naming both).
///
/// # Example
/// ```
/// use vramfit_core::inputs::{features::{apply_vllm_json, Compound}, Field};
/// let a = apply_vllm_json(Compound::LimitMmPerPrompt, r#"{"image": 2, "video": 0}"#).unwrap();
/// assert_eq!(a.rows, vec![(Field::MmImages, "2".into()), (Field::MmVideos, "0".into())]);
/// ```
pub fn apply_vllm_json(c: Compound, json: &str) -> Result<Applied, String> {
    use super::Field;
    let flag = c.flag();
    let v: Value = serde_json::from_str(json.trim())
        .map_err(|e| format!("`{flag}` is not JSON ({e}): `{json}`"))?;
    let Value::Object(map) = v else {
        return Err(format!(
            "`{flag}` must be a JSON object, like {}",
            example(c)
        ));
    };
    let mut out = Applied::default();
    let num = |k: &str, v: &Value| -> Result<String, String> {
        match v {
            Value::Number(n) => Ok(n.to_string()),
            // The newer form `{"image": {"count": 2, "width": 512, "height": 512}}`.
            Value::Object(o) => match o.get("count") {
                Some(Value::Number(n)) => Ok(n.to_string()),
                _ => Err(format!(
                    "`{flag}`: `{k}` needs a number or {{\"count\": N}}"
                )),
            },
            _ => Err(format!("`{flag}`: `{k}` must be a number; got {v}")),
        }
    };
    // The dict form's other keys: `num_frames` shrinks the dummy video (a row); the rest
    // (`width`, `height`, `length`) are listed as not modelled.
    let dict = |k: &str, v: &Value, out: &mut Applied| -> Result<(), String> {
        let Value::Object(o) = v else { return Ok(()) };
        for (key, val) in o {
            match (k, key.as_str()) {
                (_, "count") => {}
                ("video", "num_frames") => out.rows.push((super::Field::MmFrames, num(key, val)?)),
                _ => out.ignored.push(format!("{k}.{key}")),
            }
        }
        Ok(())
    };
    for (k, val) in &map {
        let row = match (c, k.as_str()) {
            (Compound::LimitMmPerPrompt, "image") => Some(Field::MmImages),
            (Compound::LimitMmPerPrompt, "video") => Some(Field::MmVideos),
            (Compound::LimitMmPerPrompt, "audio") => Some(Field::MmAudios),
            (Compound::MmProcessorKwargs, "max_pixels") => Some(Field::MmMaxPixels),
            (Compound::MmProcessorKwargs, "num_frames" | "max_frames") => Some(Field::MmFrames),
            (Compound::SpeculativeConfig, "num_speculative_tokens") => Some(Field::SpecTokens),
            _ => None,
        };
        match (c, k.as_str(), row) {
            (Compound::LimitMmPerPrompt, _, Some(f)) => {
                out.rows.push((f, num(k, val)?));
                dict(k, val, &mut out)?;
            }
            (_, _, Some(f)) => out.rows.push((f, num(k, val)?)),
            (Compound::SpeculativeConfig, "method", _) => {
                let Value::String(m) = val else {
                    return Err(format!("`{flag}`: `method` must be text; got {val}"));
                };
                let m = SpecMethod::parse(m).ok_or_else(|| {
                    format!(
                        "`{flag}`: unknown method `{m}` (ngram, eagle, eagle3, mtp, draft_model)"
                    )
                })?;
                out.rows.push((Field::SpecMethod, m.id().to_string()));
            }
            (Compound::SpeculativeConfig, "model", _) => {
                let Value::String(m) = val else {
                    return Err(format!("`{flag}`: `model` must be text; got {val}"));
                };
                out.rows.push((Field::SpecModel, m.clone()));
            }
            _ => out.ignored.push(k.clone()),
        }
    }
    // vLLM infers the method from the draft's name when `method` is absent.
    if c == Compound::SpeculativeConfig && !out.rows.iter().any(|(f, _)| *f == Field::SpecMethod) {
        let m = out
            .rows
            .iter()
            .find(|(f, _)| *f == Field::SpecModel)
            .map_or(SpecMethod::DraftModel, |(_, m)| {
                SpecMethod::from_model_name(m)
            });
        out.rows.insert(0, (Field::SpecMethod, m.id().to_string()));
    }
    // The method first, so the rows after it apply to a method that is set.
    crate::order::sort_by_key(&mut out.rows, |(f, _)| u8::from(*f != Field::SpecMethod));
    Ok(out)
}

fn example(c: Compound) -> &'static str {
    match c {
        Compound::LimitMmPerPrompt => r#"{"image": 1, "video": 0}"#,
        Compound::MmProcessorKwargs => r#"{"max_pixels": 1003520}"#,
        Compound::SpeculativeConfig => r#"{"method": "eagle3", "num_speculative_tokens": 3}"#,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Field, Inputs};
    use super::*;

    #[test]
    fn compound_flags_read_onto_rows() {
        let a = apply_vllm_json(
            Compound::SpeculativeConfig,
            r#"{"model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3, "draft_tensor_parallel_size": 1}"#,
        )
        .unwrap();
        assert_eq!(a.rows[0], (Field::SpecMethod, "eagle3".into()));
        assert!(a.rows.contains(&(Field::SpecTokens, "3".into())));
        assert_eq!(a.ignored, vec!["draft_tensor_parallel_size".to_string()]);
        let a =
            apply_vllm_json(Compound::SpeculativeConfig, r#"{"method": "deepseek_mtp"}"#).unwrap();
        assert_eq!(a.rows, vec![(Field::SpecMethod, "mtp".into())]);
        let a = apply_vllm_json(
            Compound::LimitMmPerPrompt,
            r#"{"image": {"count": 2, "width": 512, "height": 512}}"#,
        )
        .unwrap();
        assert_eq!(a.rows, vec![(Field::MmImages, "2".into())]);
        let mut i = Inputs::default();
        for (f, v) in a.rows {
            i.set(f, &v).unwrap();
        }
        assert_eq!(i.flags.features.mm.images, Some(2));
    }

    #[test]
    fn bad_compound_values_name_the_flag() {
        let e = apply_vllm_json(Compound::LimitMmPerPrompt, "image=2").unwrap_err();
        assert!(e.starts_with("`--limit-mm-per-prompt` is not JSON"), "{e}");
        let e = apply_vllm_json(Compound::LimitMmPerPrompt, "[1]").unwrap_err();
        assert!(e.contains("must be a JSON object"), "{e}");
        let e = apply_vllm_json(Compound::LimitMmPerPrompt, r#"{"image": "two"}"#).unwrap_err();
        assert!(e.contains("`image` must be a number"), "{e}");
        let e = apply_vllm_json(Compound::SpeculativeConfig, r#"{"method": "magic"}"#).unwrap_err();
        assert!(e.contains("unknown method `magic`"), "{e}");
    }

    #[test]
    fn methods_read_as_vllm_names_them() {
        for (s, m) in [
            ("[ngram]", SpecMethod::Ngram),
            ("deepseek_mtp", SpecMethod::Mtp),
            ("qwen3_next_mtp", SpecMethod::Mtp),
            ("EAGLE3", SpecMethod::Eagle3),
            ("draft_model", SpecMethod::DraftModel),
        ] {
            assert_eq!(SpecMethod::parse(s), Some(m), "{s}");
        }
        for m in SpecMethod::ALL {
            assert_eq!(SpecMethod::parse(m.id()), Some(m));
        }
        assert_eq!(
            SpecMethod::from_model_name("RedHatAI/Llama-3.1-8B-Instruct-speculator.eagle3"),
            SpecMethod::Eagle3
        );
        assert_eq!(
            SpecMethod::from_model_name("meta-llama/Llama-3.2-1B-Instruct"),
            SpecMethod::DraftModel
        );
    }
}
