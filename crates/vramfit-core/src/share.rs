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
//!
//! Decoding never fails: an unknown or malformed value falls back to its default and is
//! reported in a [`Notice`] for the UI to show. Values are percent-decoded; nothing decoded
//! is ever treated as markup.

use crate::dtype::{KvDtype, WeightFormat};
use crate::plan::Inputs;
use crate::sizing::Engine;

/// A parameter that was ignored, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Notice {
    /// The key.
    pub key: String,
    /// What was wrong.
    pub message: String,
}

/// Longest value accepted for any key (longer ones are ignored).
pub const MAX_VALUE_LEN: usize = 200;

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

/// Encodes the inputs that differ from the defaults, in a fixed key order.
///
/// # Example
/// ```
/// use vramfit_core::{plan::Inputs, share};
/// let mut i = Inputs::default();
/// i.max_model_len = Some(32768);
/// i.tensor_parallel_size = Some(2);
/// let q = share::encode(&i);
/// assert_eq!(q, "len=32768&tp=2");
/// assert_eq!(share::decode(&q).0, i);
/// ```
#[must_use]
pub fn encode(i: &Inputs) -> String {
    let d = Inputs::default();
    let mut parts: Vec<String> = Vec::new();
    let mut push = |k: &str, v: String| parts.push(format!("{k}={}", enc(&v)));
    if i.model != d.model {
        push("model", i.model.clone());
    }
    if i.gpu != d.gpu {
        push("gpu", i.gpu.clone());
    }
    if let Some(f) = i.format {
        push("quant", f.id().into());
    }
    if i.kv_dtype != d.kv_dtype {
        push("kv", i.kv_dtype.id().into());
    }
    if i.engine != d.engine {
        push("engine", i.engine.id());
    }
    if let Some(u) = i.gpu_memory_utilization {
        push("util", short(u));
    }
    if i.max_model_len != d.max_model_len {
        push(
            "len",
            i.max_model_len.map_or("auto".into(), |x| x.to_string()),
        );
    }
    if let Some(x) = i.max_num_seqs {
        push("seqs", x.to_string());
    }
    if let Some(x) = i.max_num_batched_tokens {
        push("batched", x.to_string());
    }
    if let Some(x) = i.block_size {
        push("block", x.to_string());
    }
    if let Some(x) = i.tensor_parallel_size {
        push("tp", x.to_string());
    }
    if let Some(x) = i.pipeline_parallel_size {
        push("pp", x.to_string());
    }
    if i.users != d.users {
        push("users", i.users.to_string());
    }
    if i.prompt_tokens != d.prompt_tokens {
        push("prompt", i.prompt_tokens.to_string());
    }
    if i.output_tokens != d.output_tokens {
        push("output", i.output_tokens.to_string());
    }
    if let Some(t) = i.target_tokens_per_s {
        push("tps", short(t));
    }
    if i.expert_parallel {
        push("ep", "1".into());
    }
    parts.join("&")
}

/// A float as the shortest text that reads back to it. `Display` never writes an exponent,
/// so 3.1e-319 would be 321 characters, over [`MAX_VALUE_LEN`] (the `share_link` fuzz target
/// found it): past 24 characters the run of zeros becomes an exponent. String work on the
/// `Display` digits, so the web bundle carries no second float formatter.
fn short(x: f64) -> String {
    let s = format!("{x}");
    if s.len() <= 24 {
        return s;
    }
    let (sign, body) = s.strip_prefix('-').map_or(("", s.as_str()), |b| ("-", b));
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = format!("{int}{frac}");
    let sig = digits.trim_start_matches('0');
    let lead = digits.len() - sig.len();
    let sig = sig.trim_end_matches('0');
    let Some(first) = sig.chars().next() else {
        return s;
    };
    // OK because: the text is a few hundred characters.
    #[allow(clippy::cast_possible_wrap)]
    let exp = int.len() as i64 - lead as i64 - 1;
    let rest = &sig[1..];
    let dot = if rest.is_empty() { "" } else { "." };
    format!("{sign}{first}{dot}{rest}e{exp}")
}

fn int(v: &str, lo: u64, hi: u64) -> Result<u64, String> {
    let n: u64 = v
        .trim()
        .parse()
        .map_err(|_| format!("`{v}` is not a whole number"))?;
    if n < lo || n > hi {
        return Err(format!("{n} is outside {lo}..={hi}"));
    }
    Ok(n)
}

fn float(v: &str, lo: f64, hi: f64) -> Result<f64, String> {
    let x = crate::decimal::parse_f64(v.trim()).ok_or_else(|| format!("`{v}` is not a number"))?;
    if !x.is_finite() || x < lo || x > hi {
        return Err(format!("{x} is outside {lo}..={hi}"));
    }
    Ok(x)
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
        if val.chars().count() > MAX_VALUE_LEN {
            notices.push(Notice {
                key,
                message: format!("value longer than {MAX_VALUE_LEN} characters ignored"),
            });
            continue;
        }
        let r: Result<(), String> = match key.as_str() {
            "model" if !val.trim().is_empty() => {
                i.model = val.trim().to_string();
                Ok(())
            }
            "gpu" if !val.trim().is_empty() => {
                i.gpu = val.trim().to_string();
                Ok(())
            }
            "quant" => WeightFormat::parse(&val)
                .map(|f| i.format = Some(f))
                .ok_or_else(|| format!("unknown format `{val}`")),
            "kv" => KvDtype::parse(&val)
                .map(|k| i.kv_dtype = k)
                .ok_or_else(|| format!("unknown KV dtype `{val}`")),
            "engine" => Engine::parse(&val)
                .map(|e| i.engine = e)
                .ok_or_else(|| format!("unknown engine `{val}`")),
            "util" => float(&val, 0.05, 1.0).map(|x| i.gpu_memory_utilization = Some(x)),
            "len" if val == "auto" => {
                i.max_model_len = None;
                Ok(())
            }
            "len" => int(&val, 1, 1 << 24).map(|x| i.max_model_len = Some(x)),
            "seqs" => int(&val, 1, 1 << 16).map(|x| i.max_num_seqs = Some(x)),
            "batched" => int(&val, 1, 1 << 22).map(|x| i.max_num_batched_tokens = Some(x)),
            "block" => int(&val, 1, 1024).map(|x| i.block_size = Some(x)),
            "tp" => int(&val, 1, 128).map(|x| i.tensor_parallel_size = Some(x)),
            "pp" => int(&val, 1, 128).map(|x| i.pipeline_parallel_size = Some(x)),
            "users" => int(&val, 1, 1 << 20).map(|x| i.users = x),
            "prompt" => int(&val, 0, 1 << 24).map(|x| i.prompt_tokens = x),
            "output" => int(&val, 1, 1 << 24).map(|x| i.output_tokens = x),
            "tps" => float(&val, 0.0, 1e6).map(|x| i.target_tokens_per_s = Some(x)),
            "ep" => match val.as_str() {
                "1" | "true" => {
                    i.expert_parallel = true;
                    Ok(())
                }
                "0" | "false" => Ok(()),
                _ => Err(format!("`{val}` is not 0 or 1")),
            },
            "view" | "units" | "theme" => Ok(()), // UI-only keys
            _ => Err("unknown parameter".to_string()),
        };
        if let Err(message) = r {
            notices.push(Notice { key, message });
        }
    }
    (i, notices)
}

/// The value of a UI-only key (`view`, `units`) in a query string.
#[must_use]
pub fn ui_param(query: &str, key: &str) -> Option<String> {
    let q = query.strip_prefix('?').unwrap_or(query);
    q.split('&').find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (decode_component(k) == key)
            .then(|| decode_component(v))
            .filter(|v| v.len() <= MAX_VALUE_LEN)
    })
}

/// [`decode`], then checks the model and GPU against the catalog: an unknown one falls back
/// to the default with a notice (a stale or hand-edited link never breaks the page).
#[must_use]
pub fn decode_checked(cat: &crate::catalog::Catalog, query: &str) -> (Inputs, Vec<Notice>) {
    let (mut i, mut notices) = decode(query);
    let d = Inputs::default();
    if cat.model(&i.model).is_none() {
        notices.push(Notice {
            key: "model".into(),
            message: format!("unknown model `{}`; showing `{}`", i.model, d.model),
        });
        i.model = d.model.clone();
    }
    if cat.gpu(&i.gpu).is_none() {
        notices.push(Notice {
            key: "gpu".into(),
            message: format!("unknown GPU `{}`; showing `{}`", i.gpu, d.gpu),
        });
        i.gpu = d.gpu;
    }
    (i, notices)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_falls_back_with_notices() {
        let (i, n) = decode("?len=abc&tp=0&users=5&zzz=1&quant=int3&model=%3Cscript%3E");
        assert_eq!(i.max_model_len, Inputs::default().max_model_len);
        assert_eq!(i.tensor_parallel_size, None);
        assert_eq!(i.users, 5);
        assert_eq!(i.model, "<script>");
        let keys: Vec<_> = n.iter().map(|n| n.key.as_str()).collect();
        assert_eq!(keys, ["len", "tp", "zzz", "quant"]);
    }

    #[test]
    fn round_trip_of_every_field() {
        let i = Inputs {
            model: "Qwen/Qwen2.5-7B-Instruct".into(),
            gpu: "NVIDIA H100 80GB HBM3".into(),
            format: Some(WeightFormat::Int4Awq),
            kv_dtype: KvDtype::Fp8,
            engine: Engine::Sglang,
            gpu_memory_utilization: Some(0.95),
            max_model_len: None,
            max_num_seqs: Some(64),
            max_num_batched_tokens: Some(4096),
            block_size: Some(32),
            tensor_parallel_size: Some(4),
            pipeline_parallel_size: Some(2),
            users: 17,
            prompt_tokens: 2000,
            output_tokens: 500,
            target_tokens_per_s: Some(30.5),
            expert_parallel: true,
        };
        let (back, notices) = decode(&encode(&i));
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(back, i);
    }

    #[test]
    fn percent_decoding_never_panics() {
        for s in ["%", "%4", "%zz", "a=%", "=%%%", "%E2%82", "len=%ff%fe"] {
            let _ = decode(s);
            let _ = decode_component(s);
        }
    }
}
