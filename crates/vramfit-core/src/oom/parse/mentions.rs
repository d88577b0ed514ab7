//! What the pasted text says besides the allocator's numbers: the model it names, the
//! devices it names, the loader, `device_map` and the load dtype (read by [`read`] into
//! the [`OomReport`]).
//!
//! # Where a model name is found (first pattern that matches wins; the last match of it)
//!
//! | pattern | written by |
//! |---|---|
//! | `Can't load the model for 'X'` (also `… tokenizer for`, `… config for`) | Transformers `modeling_utils.py` / `tokenization_utils_base.py` / `configuration_utils.py`, `OSError` on a failed load |
//! | `from_pretrained('X'` / `from_pretrained("X"` | the user's code, in a traceback |
//! | `vllm serve X` | the vLLM CLI command line |
//! | `--model X`, `--model=X`, `--model-path X` (SGLang) | vLLM's / SGLang's command lines |
//! | `model='X'` / `model="X"` | vLLM's engine-config log line (`Initializing a V1 LLM engine … with config: model='X', …`), `LLM(model="X")` |
//! | `models--owner--name` | the Hugging Face cache directory in a traceback path (`~/.cache/huggingface/hub/models--meta-llama--Llama-3.1-70B/…`) |
//! | `huggingface.co/owner/name` | a model URL (two path segments; `huggingface.co/docs`, `/datasets`, `/spaces`, `/models` and the like are not models) |
//!
//! A name is 1–200 characters of `A–Z a–z 0–9 . _ - / :`; trailing `.`, `,`, `:`, `;` are
//! dropped (sentence punctuation). Its case is kept (the matching is case-insensitive: the
//! text is lower-cased byte for byte, which keeps every offset, and the name is cut from the
//! original).
//!
//! # Devices, loader, `device_map`, dtype
//! - Device indices: every `GPU n` and `cuda:n` (distinct, in order of first appearance, at
//!   most [`MAX_DEVICES`]).
//! - Loader: vLLM when `vllm` occurs anywhere (its tracebacks also pass through Transformers'
//!   config code), else SGLang when `sglang` occurs, else Transformers when
//!   `from_pretrained`, `modeling_utils`, `Can't load the model for` or `transformers/`
//!   occurs.
//! - `device_map=V` and `torch_dtype=V` / `dtype=V` / `--dtype V`: the value `V`, unquoted.

use super::{find_from, floor_boundary, parse_u32, Loader, OomReport, MAX_SCAN_BYTES};

/// At most this many device indices are kept.
pub const MAX_DEVICES: usize = 64;
/// Longest model name taken from a message.
const MAX_NAME: usize = 200;

/// Reads the mentions of `text` (the original, not the normalized text) into `r`.
pub(super) fn read(text: &str, r: &mut OomReport) {
    let orig = &text[..floor_boundary(text, MAX_SCAN_BYTES)];
    // ASCII lower-casing keeps every byte offset, so a match in `low` cuts `orig`.
    let low = orig.to_ascii_lowercase();
    r.model = model_name(orig, &low);
    r.gpu_indices = device_indices(&low);
    r.loader = loader(&low);
    r.device_map = value_after(orig, &low, &["device_map="]);
    r.dtype = value_after(
        orig,
        &low,
        &["torch_dtype=", "--dtype ", "--dtype=", "(dtype=", " dtype="],
    );
}

fn name_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-' | b'/' | b':')
}

/// The name starting at `start` of `orig`: name characters up to the first other byte.
fn name_at(orig: &str, start: usize) -> Option<String> {
    let bytes = orig.as_bytes();
    let mut end = start;
    while end < bytes.len() && end - start <= MAX_NAME && name_char(bytes[end]) {
        end += 1;
    }
    let name = orig.get(start..end)?.trim_end_matches(['.', ',', ':', ';']);
    (!name.is_empty() && name.len() <= MAX_NAME && !name.starts_with('-')).then(|| name.to_string())
}

/// The quoted name right after `pat` (which ends with its opening quote).
fn quoted(orig: &str, low: &str, pat: &str) -> Option<String> {
    let i = low.rfind(pat)? + pat.len();
    let quote = *pat.as_bytes().last()?;
    let name = name_at(orig, i)?;
    (low.as_bytes().get(i + name.len()) == Some(&quote)).then_some(name)
}

/// The last `pat` whose byte before is not part of an identifier.
fn rfind_word(low: &str, pat: &str) -> Option<usize> {
    let mut end = low.len();
    while let Some(i) = low.get(..end)?.rfind(pat) {
        let before = i
            .checked_sub(1)
            .and_then(|j| low.as_bytes().get(j).copied());
        if !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
            return Some(i);
        }
        end = i;
    }
    None
}

fn model_name(orig: &str, low: &str) -> Option<String> {
    const LOADS: [&str; 6] = [
        "can't load the model for '",
        "can't load the model for \"",
        "can't load tokenizer for '",
        "can't load tokenizer for \"",
        "can't load config for '",
        "can't load config for \"",
    ];
    let quoted_any = |pats: &[&str]| pats.iter().find_map(|p| quoted(orig, low, p));
    let after_word = |pats: &[&str]| {
        pats.iter().find_map(|p| {
            let i = rfind_word(low, p)? + p.len();
            name_at(orig, super::skip_spaces(low, i))
        })
    };
    quoted_any(&LOADS)
        .or_else(|| quoted_any(&["from_pretrained('", "from_pretrained(\""]))
        .or_else(|| after_word(&["vllm serve "]))
        .or_else(|| after_word(&["--model ", "--model=", "--model-path ", "--model-path="]))
        .or_else(|| {
            ["model='", "model=\""].iter().find_map(|p| {
                let i = rfind_word(low, p)? + p.len();
                let name = name_at(orig, i)?;
                (low.as_bytes().get(i + name.len()) == p.as_bytes().last()).then_some(name)
            })
        })
        .or_else(|| hub_cache_name(orig, low))
        .or_else(|| hub_url_name(orig, low))
}

/// `models--owner--name` (Hugging Face cache directories) as `owner/name`.
fn hub_cache_name(orig: &str, low: &str) -> Option<String> {
    let i = low.rfind("models--")? + "models--".len();
    let dir = name_at(orig, i)?;
    let dir = dir.split('/').next()?;
    let (owner, name) = dir.split_once("--")?;
    (!owner.is_empty() && !name.is_empty()).then(|| format!("{owner}/{name}"))
}

/// `huggingface.co/owner/name` when `owner` is not one of the site's own pages.
fn hub_url_name(orig: &str, low: &str) -> Option<String> {
    const SITE: [&str; 10] = [
        "docs", "datasets", "spaces", "models", "api", "blog", "settings", "join", "login",
        "papers",
    ];
    let mut from = 0;
    let mut last = None;
    while let Some(i) = find_from(low, from, "huggingface.co/") {
        from = i + 1;
        let Some(path) = name_at(orig, i + "huggingface.co/".len()) else {
            continue;
        };
        let mut parts = path.split('/');
        if let (Some(owner), Some(name)) = (parts.next(), parts.next()) {
            if !owner.is_empty()
                && !name.is_empty()
                && !SITE.contains(&owner.to_ascii_lowercase().as_str())
            {
                last = Some(format!("{owner}/{name}"));
            }
        }
    }
    last
}

/// Every `gpu n` and `cuda:n`, distinct, in order of first appearance.
fn device_indices(low: &str) -> Vec<u32> {
    let mut hits: Vec<(usize, u32)> = Vec::new();
    for pat in ["gpu ", "cuda:"] {
        let mut from = 0;
        while let Some(i) = find_from(low, from, pat) {
            from = i + pat.len();
            if let Some(n) = parse_u32(low, from) {
                hits.push((i, n));
                if hits.len() >= 4 * MAX_DEVICES {
                    break;
                }
            }
        }
    }
    crate::order::sort_by_key(&mut hits, |&(i, _)| i);
    let mut out: Vec<u32> = Vec::new();
    for (_, n) in hits {
        if !out.contains(&n) && out.len() < MAX_DEVICES {
            out.push(n);
        }
    }
    out
}

fn loader(low: &str) -> Option<Loader> {
    if low.contains("vllm") {
        Some(Loader::Vllm)
    } else if low.contains("sglang") {
        Some(Loader::Sglang)
    } else if [
        "from_pretrained",
        "modeling_utils",
        "can't load the model for",
        "transformers/",
    ]
    .iter()
    .any(|p| low.contains(p))
    {
        Some(Loader::Transformers)
    } else {
        None
    }
}

/// The value after the last of `pats` (quotes dropped), e.g. `auto` of `device_map="auto"`.
fn value_after(orig: &str, low: &str, pats: &[&str]) -> Option<String> {
    let (i, p) = pats
        .iter()
        .filter_map(|p| low.rfind(p).map(|i| (i, *p)))
        .max_by_key(|&(i, _)| i)?;
    let mut v = super::skip_spaces(low, i + p.len());
    if matches!(low.as_bytes().get(v), Some(b'"' | b'\'')) {
        v += 1;
    }
    name_at(orig, v)
}
