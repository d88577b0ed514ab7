//! The whole scenario as a URL query string, so a link reproduces it.
//!
//! Keys are short and follow vLLM's flags (`tp` and `pp` are vLLM's own short aliases):
//!
//! | key | meaning | vLLM flag |
//! |---|---|---|
//! | `model` | catalog id or HF repo id | `model` |
//! | `gpu` | catalog GPU id | – |
//! | `quant` | weight format (`bf16`, `fp8`, `int4-awq`, …) | `--quantization` / `--dtype` |
//! | `kv` | KV-cache dtype | `--kv-cache-dtype` |
//! | `engine` | `vllm-0.19`, `sglang`, `trtllm`, `transformers` | – |
//! | `util` | memory fraction | `--gpu-memory-utilization` |
//! | `len` | context length | `--max-model-len` |
//! | `seqs` | max sequences | `--max-num-seqs` |
//! | `batched` | max batched tokens | `--max-num-batched-tokens` |
//! | `block` | KV block size | `--block-size` |
//! | `tp`, `pp` | parallel sizes (absent = fewest GPUs) | `-tp`, `-pp` |
//! | `ep` | expert parallelism (`1`) | `--enable-expert-parallel` |
//! | `users`, `prompt`, `output` | workload | – |
//! | `tps` | target tokens/s per user | – |
//! | `cmd` | a pasted launch command to check (up to [`MAX_COMMAND_LEN`] characters) | – |
//! | `img`, `vid`, `aud`, `frames`, `pixels`, `mmtp`, `skipmm` | multimodal limits, resolution, encoder sharding, profiling | `--limit-mm-per-prompt`, `--mm-processor-kwargs`, `--mm-encoder-tp-mode`, `--skip-mm-profiling` |
//! | `lora`, `loras`, `rank`, `cpuloras`, `fsl`, `loramods` | LoRA | `--enable-lora`, `--max-loras`, `--max-lora-rank`, `--max-cpu-loras`, `--fully-sharded-loras`, `--lora-target-modules` |
//! | `spec`, `spectok`, `specmodel`, `accept` | speculative decoding | `--speculative-config` |
//! | `eager`, `offload`, `swap`, `nopc`, `kvbytes` | the smaller flags | `--enforce-eager`, `--cpu-offload-gb`, `--swap-space`, `--no-enable-prefix-caching`, `--kv-cache-memory-bytes` |
//!
//! Decoding never fails: an unknown or malformed value falls back to its default and is
//! reported in a [`Notice`] for the UI to show. Values are percent-decoded; nothing decoded
//! is ever treated as markup.

use crate::inputs::{by_url, key, Field, Inputs, KEYS, MAX_COMMAND_LEN};

mod views;
pub use views::VIEW_IDS;

/// A parameter that was ignored, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Notice {
    /// The key.
    pub key: String,
    /// What was wrong.
    pub message: String,
}

pub use crate::inputs::MAX_VALUE_LEN;

/// Longest value accepted for a key: [`MAX_COMMAND_LEN`] for the pasted command,
/// [`MAX_VALUE_LEN`] for the rest.
fn max_len(field: Option<Field>) -> usize {
    if field == Some(Field::Command) {
        MAX_COMMAND_LEN
    } else {
        MAX_VALUE_LEN
    }
}

/// Percent-encodes a URL component (RFC 3986 unreserved characters pass through).
#[must_use]
pub fn enc(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Percent-decodes (and `+` → space); invalid escapes are kept literally.
#[must_use]
pub fn decode_component(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                if let Some(v) = hex {
                    out.push(v);
                    i += 3;
                } else {
                    out.push(b'%');
                    i += 1;
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Encodes the inputs that differ from the defaults, in the order of [`KEYS`].
///
/// # Example
/// ```
/// use vramfit_core::{plan::Inputs, share};
/// let mut i = Inputs::default();
/// i.flags.max_model_len = Some(32768);
/// i.tensor_parallel_size = Some(2);
/// let q = share::encode(&i);
/// assert_eq!(q, "len=32768&tp=2");
/// assert_eq!(share::decode(&q).0, i);
/// ```
#[must_use]
pub fn encode(i: &Inputs) -> String {
    let mut parts: Vec<String> = Vec::new();
    for k in &KEYS {
        if let Some(v) = i.text(k.field).filter(|v| v != k.default) {
            parts.push(format!("{}={}", k.url, enc(&v)));
        }
    }
    parts.join("&")
}

/// Decodes a query string (with or without a leading `?`). Unknown keys and bad values are
/// reported and ignored; the rest applies over the defaults. Model and GPU names are not
/// checked against the catalog here (the caller does, and falls back with a notice).
#[must_use]
pub fn decode(query: &str) -> (Inputs, Vec<Notice>) {
    let mut i = Inputs::default();
    let mut notices = Vec::new();
    let q = query.strip_prefix('?').unwrap_or(query);
    for pair in q.split('&').filter(|p| !p.is_empty()).take(64) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let key = decode_component(k);
        let val = decode_component(v);
        let max = max_len(by_url(&key).map(|r| r.field));
        if val.chars().count() > max {
            notices.push(Notice {
                key,
                message: format!("value longer than {max} characters ignored"),
            });
            continue;
        }
        let r = match by_url(&key) {
            Some(row) => i.set(row.field, &val),
            None if UI_KEYS.contains(&key.as_str()) => Ok(()),
            None => Err("unknown parameter".to_string()),
        };
        if let Err(message) = r {
            notices.push(Notice { key, message });
        }
    }
    // The page's own keys, read as the page reads them ([`ui_param`]: the first usable
    // occurrence), so that a notice says what the page shows.
    for key in ["view", "units"] {
        if let Some(Err(message)) = ui_param(q, key).map(|v| ui_value(key, &v)) {
            notices.push(Notice {
                key: key.to_string(),
                message,
            });
        }
    }
    (i, notices)
}

/// Keys the page reads for itself (which view, which units, which theme).
pub const UI_KEYS: [&str; 3] = ["view", "units", "theme"];

/// A page key's value the page cannot read, said like an input's: the page then opens "Size
/// it" (`view`) or shows the default units (`units`). An empty value is the default, unsaid.
/// `theme` is taken as it is: the page follows the system's light or dark setting.
fn ui_value(key: &str, val: &str) -> Result<(), String> {
    match key {
        "view" if !val.is_empty() && !VIEW_IDS.contains(&val) => Err(format!(
            "unknown view `{val}`; showing `size` (one of {})",
            VIEW_IDS.join(", ")
        )),
        "units" if !val.is_empty() && crate::units::Units::parse(val).is_none() => {
            Err(format!("unknown units `{val}`; showing `gib` (or `gb`)"))
        }
        _ => Ok(()),
    }
}

/// The value of a UI-only key (`view`, `units`) in a query string.
#[must_use]
pub fn ui_param(query: &str, key: &str) -> Option<String> {
    let q = query.strip_prefix('?').unwrap_or(query);
    q.split('&').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (decode_component(k) == key)
            .then(|| decode_component(v))
            .filter(|v| v.chars().count() <= MAX_VALUE_LEN)
    })
}

/// [`decode`], then checks the model and GPU against the catalog: an unknown one falls back
/// to the default with a notice (a stale or hand-edited link never breaks the page) naming
/// the closest GPUs; an ambiguous GPU name (`catalog::names`) keeps its value with a notice
/// naming the entry it reads as and the others.
#[must_use]
pub fn decode_checked(cat: &crate::catalog::Catalog, query: &str) -> (Inputs, Vec<Notice>) {
    let (mut i, mut notices) = decode(query);
    let d = Inputs::default();
    if cat.model(&i.model).is_none() {
        notices.push(Notice {
            key: key(Field::Model).url.into(),
            message: format!("unknown model `{}`; showing `{}`", i.model, d.model),
        });
        i.model = d.model.clone();
    }
    match cat.resolve_gpu(&i.gpu) {
        // An ambiguous name (`gpu=H100`) keeps its value and says which entry it reads.
        Ok(m) => notices.extend(m.notice.map(|message| Notice {
            key: key(Field::Gpu).url.into(),
            message,
        })),
        Err(e) => {
            let closest = if e.suggestions.is_empty() {
                String::new()
            } else {
                format!(" (closest: {})", e.suggestions.join(", "))
            };
            notices.push(Notice {
                key: key(Field::Gpu).url.into(),
                message: format!("unknown GPU `{}`; showing `{}`{closest}", i.gpu, d.gpu),
            });
            i.gpu = d.gpu;
        }
    }
    (i, notices)
}

#[cfg(all(test, feature = "bundled"))] // the tests read the embedded catalog
mod tests {
    use super::*;
    use crate::dtype::{KvDtype, WeightFormat};
    use crate::engine::Engine;
    use crate::inputs::{Buyer, EngineFlags, Workload};

    #[test]
    fn garbage_falls_back_with_notices() {
        let (i, n) = decode("?len=abc&tp=0&users=5&zzz=1&quant=int3&model=%3Cscript%3E");
        assert_eq!(i.flags.max_model_len, Inputs::default().flags.max_model_len);
        assert_eq!(i.tensor_parallel_size, None);
        assert_eq!(i.workload.users, 5);
        assert_eq!(i.model, "<script>");
        let keys: Vec<_> = n.iter().map(|n| n.key.as_str()).collect();
        assert_eq!(keys, ["len", "tp", "zzz", "quant"]);
    }

    #[test]
    fn a_page_key_the_page_cannot_read_is_said() {
        let (_, n) = decode("?view=sizing&units=GiB&theme=dark&view=&units=");
        let said: Vec<_> = n
            .iter()
            .map(|n| (n.key.as_str(), n.message.as_str()))
            .collect();
        assert_eq!(
            said,
            [
                ("view", "unknown view `sizing`; showing `size` (one of size, quant, budget, scaling, oom, catalog, accuracy)"),
                ("units", "unknown units `GiB`; showing `gib` (or `gb`)"),
            ]
        );
        for v in VIEW_IDS {
            assert!(decode(&format!("view={v}&units=gb")).1.is_empty(), "{v}");
        }
        // The page reads a key's first usable occurrence (`ui_param`); the notice is about
        // that one, never about a later copy the page does not read.
        assert!(decode("view=quant&view=sizing&units=gb&units=GB")
            .1
            .is_empty());
        let (_, n) = decode("view=sizing&view=quant");
        assert_eq!(n.len(), 1);
        assert!(
            n[0].message.starts_with("unknown view `sizing`"),
            "{}",
            n[0].message
        );
    }

    #[test]
    fn round_trip_of_every_field() {
        let i = Inputs {
            model: "Qwen/Qwen2.5-7B-Instruct".into(),
            gpu: "NVIDIA H100 80GB HBM3".into(),
            format: Some(WeightFormat::Int4Awq),
            tensor_parallel_size: Some(4),
            pipeline_parallel_size: Some(2),
            flags: EngineFlags {
                kv_dtype: KvDtype::Fp8,
                engine: Engine::Sglang,
                gpu_memory_utilization: Some(0.95),
                max_model_len: None,
                max_num_seqs: Some(64),
                max_num_batched_tokens: Some(4096),
                block_size: Some(32),
                expert_parallel: true,
                allow_long_max_model_len: true,
                fit_max_model_len: false,
                features: crate::inputs::Features {
                    mm: crate::inputs::Multimodal {
                        images: Some(2),
                        videos: Some(0),
                        audios: None,
                        frames: Some(16),
                        max_pixels: Some(1_003_520),
                        encoder_data_parallel: true,
                        skip_profiling: true,
                    },
                    lora: crate::inputs::Lora {
                        enabled: true,
                        max_loras: 4,
                        max_rank: 64,
                        max_cpu_loras: Some(8),
                        fully_sharded: true,
                        target_modules: Some(crate::inputs::features::LoraModules(1 | 8)),
                    },
                    spec: crate::inputs::Speculative {
                        method: Some(crate::inputs::SpecMethod::Eagle3),
                        tokens: Some(3),
                        acceptance: Some(0.7),
                    },
                    enforce_eager: true,
                    cpu_offload_gib: Some(4.5),
                    swap_space_gib: Some(8.0),
                    no_prefix_caching: true,
                    kv_cache_memory_bytes: Some(21_474_836_480),
                },
            },
            workload: Workload {
                users: 17,
                prompt_tokens: 2000,
                output_tokens: 500,
                target_tokens_per_s: Some(30.5),
                max_ttft_ms: Some(750.0),
                request_rate: Some(2.5),
                prefix_cache_hit_rate: Some(0.25),
            },
            buyer: Buyer {
                years: 5.5,
                kwh_price_usd: 0.09,
                pue: 1.2,
                utilization: 0.8,
                resale_fraction: Some(0.1),
                api_input_usd_per_million: Some(0.23),
                api_output_usd_per_million: Some(0.4),
                max_power_kw: Some(40.0),
                max_rack_kw: Some(17.5),
                max_budget_usd: Some(250_000.0),
                on_prem: true,
                vendor: Some("amd"),
            },
            command: "vllm serve 'a b' \\\n  --tp=2 # é & = ?".into(),
            spec_model: "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B".into(),
        };
        let (back, notices) = decode(&encode(&i));
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(back, i);
    }

    #[test]
    fn the_pasted_command_rides_in_the_link_up_to_its_own_length() {
        let i = Inputs {
            command: format!("vllm serve {}", "x".repeat(600)),
            ..Inputs::default()
        };
        let q = encode(&i);
        assert!(q.starts_with("cmd=vllm%20serve%20xxx"), "{q}");
        let (back, notices) = decode(&q);
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(back, i);
        // Past its limit it is ignored with a notice, as any over-long value.
        let long = format!("cmd={}", "x".repeat(MAX_COMMAND_LEN + 1));
        let (back, notices) = decode(&long);
        assert_eq!(back.command, "");
        assert_eq!(notices[0].key, "cmd");
        // Other keys keep the short limit.
        let (_, notices) = decode(&format!("model={}", "x".repeat(MAX_VALUE_LEN + 1)));
        assert_eq!(notices.len(), 1);
    }

    #[test]
    fn percent_decoding_never_panics() {
        for s in ["%", "%4", "%zz", "a=%", "=%%%", "%E2%82", "len=%ff%fe"] {
            let _ = decode(s);
            let _ = decode_component(s);
        }
    }

    #[test]
    fn an_ambiguous_gpu_gets_a_notice_and_an_unknown_one_its_suggestions() {
        let cat = crate::catalog::Catalog::bundled();
        // `H100` fits the SXM5, PCIe and NVL entries: kept, read as the SXM5, with a notice.
        let (i, n) = decode_checked(&cat, "?gpu=H100");
        assert_eq!(i.gpu, "H100");
        assert_eq!(n.len(), 1);
        assert_eq!(n[0].key, "gpu");
        assert!(
            n[0].message
                .starts_with("`H100` read as NVIDIA H100 SXM5 80GB; also: h100-pcie, h100-nvl"),
            "{}",
            n[0].message
        );
        // No H100 has 40 GB: unknown, the default shown, the H100s suggested first.
        let (i, n) = decode_checked(&cat, "?gpu=H100%2040GB");
        assert_eq!(i.gpu, Inputs::default().gpu);
        assert!(
            n[0].message.starts_with(&format!(
                "unknown GPU `H100 40GB`; showing `{}` (closest: h100-sxm, h100-pcie, h100-nvl",
                Inputs::default().gpu
            )),
            "{}",
            n[0].message
        );
        // nvidia-smi's exact name: no notice.
        let (_, n) = decode_checked(&cat, "?gpu=NVIDIA%20H100%2080GB%20HBM3");
        assert!(n.is_empty(), "{n:?}");
    }
}
