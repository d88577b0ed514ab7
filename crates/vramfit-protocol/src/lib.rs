//! The messages between the web page (`src/worker_client.rs`) and the import worker
//! (`crates/vramfit-worker`), shared by both (ARCHITECTURE.md). Serde types and their JSON:
//! no web crate, and the core's types without its `import` and `oom` features, so the page
//! can depend on this crate.
//!
//! The page posts a plain object `{id, request, files}`: `id` a number the replies echo,
//! `request` the JSON text of a [`Request`], `files` the `File`s of a drop or a picker
//! (for [`Request::ImportFiles`]; a `File` cannot go through serde). The worker answers
//! `{id, kind, text}` ([`Reply::into_parts`]): any number of [`Reply::Progress`], then
//! exactly one of the others.
//!
//! Each side only reads what the other writes, with code it already carries (the first
//! load and the worker have size budgets, scripts/size_budget.sh): the request's JSON is
//! serde's (externally tagged: `"ImportFiles"`, `{"ExplainOom":{"text":…}}`), but
//! [`Request::to_json`] is written by hand (the page has no JSON writer; serde_json's would
//! cost it ~1.5 KB) and [`Request::from_json`] reads a `serde_json::Value` (the derived
//! reader would cost the worker ~4 KB); a reply names its variant beside its payload, so
//! neither side carries serde's enum code, and the payload is read and written by the
//! readers and writers of `Imported` and `Explained`. The tests check them against serde's
//! derived forms.

use serde::{Deserialize, Serialize};
use vramfit_core::oom::{Finding, OomReport};
use vramfit_core::safetensors::Report;

/// What the page asks the worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Request {
    /// Read the `File`s sent alongside (`.safetensors` shards, their index, config.json):
    /// answered by [`Reply::Imported`].
    ImportFiles,
    /// Import a Hugging Face repo's headers: answered by [`Reply::Imported`].
    ImportHub {
        /// `owner/name`.
        repo: String,
        /// Access token for gated repos (may be empty).
        token: String,
        /// The Hub's base URL.
        endpoint: String,
    },
    /// Explain a pasted out-of-memory message: answered by [`Reply::Explained`].
    ExplainOom {
        /// The pasted text.
        text: String,
        /// The model's parameter count, if known (`vramfit_core::oom::Hints`).
        parameters: Option<u64>,
    },
}

impl Request {
    /// The JSON text of this request, as `serde_json::to_string` writes it.
    #[must_use]
    pub fn to_json(&self) -> String {
        match self {
            Request::ImportFiles => "\"ImportFiles\"".to_owned(),
            Request::ImportHub {
                repo,
                token,
                endpoint,
            } => format!(
                "{{\"ImportHub\":{{\"repo\":{},\"token\":{},\"endpoint\":{}}}}}",
                json_string(repo),
                json_string(token),
                json_string(endpoint)
            ),
            Request::ExplainOom { text, parameters } => {
                let parameters = parameters.map_or_else(|| "null".to_owned(), |p| p.to_string());
                format!(
                    "{{\"ExplainOom\":{{\"text\":{},\"parameters\":{parameters}}}}}",
                    json_string(text)
                )
            }
        }
    }

    /// Reads the JSON text of a request, as [`Request::to_json`] or serde writes it (keys
    /// it does not know are ignored).
    ///
    /// # Errors
    /// `serde_json`'s message for text that is not JSON, or "not a request".
    pub fn from_json(text: &str) -> Result<Request, String> {
        use serde_json::Value;
        let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let field = |variant: &str, name: &str| v.get(variant)?.get(name);
        let text = |variant: &str, name: &str| {
            field(variant, name)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let request = if v.as_str() == Some("ImportFiles") {
            Some(Request::ImportFiles)
        } else if v.get("ImportHub").is_some() {
            text("ImportHub", "repo").and_then(|repo| {
                Some(Request::ImportHub {
                    repo,
                    token: text("ImportHub", "token")?,
                    endpoint: text("ImportHub", "endpoint")?,
                })
            })
        } else {
            let parameters = match field("ExplainOom", "parameters") {
                None | Some(Value::Null) => Some(None),
                Some(p) => p.as_u64().map(Some),
            };
            parameters.and_then(|parameters| {
                Some(Request::ExplainOom {
                    text: text("ExplainOom", "text")?,
                    parameters,
                })
            })
        };
        request.ok_or_else(|| "not a request".to_owned())
    }
}

/// `s` as a JSON string, escaped as `serde_json` escapes it.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c < ' ' => {
                let hex = |d: u32| char::from_digit(d, 16).unwrap_or('0');
                out.push_str("\\u00");
                out.push(hex(u32::from(c) >> 4));
                out.push(hex(u32::from(c) & 0xf));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// What the worker says about one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    /// A status line; the answer comes later.
    Progress(String),
    /// The answer to [`Request::ImportFiles`] and [`Request::ImportHub`].
    Imported(Imported),
    /// The answer to [`Request::ExplainOom`].
    Explained(Explained),
    /// The problem, worded for people.
    Failed(String),
}

impl Reply {
    /// Whether this is the request's last reply (its answer).
    #[must_use]
    pub const fn is_last(&self) -> bool {
        !matches!(self, Reply::Progress(_))
    }

    /// The reply as the worker posts it: the variant's name (as serde names it) and its
    /// text: the JSON of the payload ([`Imported`], [`Explained`]) or the line itself.
    ///
    /// # Errors
    /// `serde_json`'s message (it has none for these types).
    pub fn into_parts(self) -> Result<(&'static str, String), String> {
        let json = |r: serde_json::Result<String>| r.map_err(|e| e.to_string());
        Ok(match self {
            Reply::Progress(line) => ("Progress", line),
            Reply::Imported(m) => ("Imported", json(serde_json::to_string(&m))?),
            Reply::Explained(e) => ("Explained", json(serde_json::to_string(&e))?),
            Reply::Failed(why) => ("Failed", why),
        })
    }

    /// Reads what [`Reply::into_parts`] wrote.
    ///
    /// # Errors
    /// An unknown name, or a payload that does not read.
    pub fn from_parts(kind: &str, text: String) -> Result<Reply, String> {
        let read = |e: serde_json::Error| e.to_string();
        match kind {
            "Progress" => Ok(Reply::Progress(text)),
            "Imported" => serde_json::from_str(&text)
                .map(Reply::Imported)
                .map_err(read),
            "Explained" => serde_json::from_str(&text)
                .map(Reply::Explained)
                .map_err(read),
            "Failed" => Ok(Reply::Failed(text)),
            other => Err(format!("no reply `{other}`")),
        }
    }
}

/// A model read from files or a Hugging Face repo: headers summarized, config checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Imported {
    /// Display name.
    pub name: String,
    /// The config.json text, read into a `ModelArch` on the page (which needs it; the
    /// worker does not read it too).
    pub config: Option<String>,
    /// The name of the file the config came from, where it is not `config.json` (a dropped
    /// `my-model.json`), so that a message about it names that file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_file: Option<String>,
    /// From the safetensors headers.
    pub report: Option<Report>,
    /// Shards read.
    pub shards: usize,
    /// Disagreements with model.safetensors.index.json.
    pub index_problems: Vec<String>,
    /// `files` or `hub:<repo>`.
    pub source: String,
    /// Header bytes read (to show that only headers were read).
    pub header_bytes_read: u64,
}

/// A pasted out-of-memory message: what it says and what it means.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explained {
    /// The numbers read from the message.
    pub report: OomReport,
    /// Causes, most likely first, with fixes.
    pub findings: Vec<Finding>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use vramfit_core::oom::{Cause, OomSource};

    fn requests() -> Vec<Request> {
        vec![
            Request::ImportFiles,
            Request::ImportHub {
                repo: "owner/name".into(),
                token: String::new(),
                endpoint: "https://huggingface.co".into(),
            },
            Request::ExplainOom {
                text:
                    "CUDA out of memory. \"q\" \\ \n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f} é 😀 </script>"
                        .into(),
                parameters: Some(u64::MAX),
            },
            Request::ExplainOom {
                text: String::new(),
                parameters: None,
            },
        ]
    }

    #[test]
    fn requests_are_written_as_serde_writes_them_and_read_back() {
        for r in requests() {
            let json = r.to_json();
            assert_eq!(json, serde_json::to_string(&r).unwrap());
            assert_eq!(serde_json::from_str::<Request>(&json).unwrap(), r, "{json}");
            assert_eq!(Request::from_json(&json).unwrap(), r, "{json}");
        }
        // Every control character, escaped as serde_json escapes it.
        let text: String = (0u8..0x20).map(char::from).collect();
        let r = Request::ExplainOom {
            text,
            parameters: Some(7),
        };
        assert_eq!(r.to_json(), serde_json::to_string(&r).unwrap());
    }

    #[test]
    fn bad_requests_are_refused_with_a_reason() {
        for bad in [
            "",
            "1",
            "\"Oom\"",
            "{}",
            "{\"ImportHub\":{\"repo\":\"a/b\"}}",
            "{\"ExplainOom\":{\"text\":\"x\",\"parameters\":-1}}",
            "{\"ImportFiles\":null,\"ImportHub\":null}",
        ] {
            assert!(Request::from_json(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn replies_read_back() {
        let imported = Imported {
            name: "m".into(),
            config: Some("{\"a\": 1}".into()),
            config_file: Some("my-model.json".into()),
            report: None,
            shards: 0,
            index_problems: vec!["p".into()],
            source: "files".into(),
            header_bytes_read: 8,
        };
        let explained = Explained {
            report: serde_json::from_value(serde_json::json!({
                "source": OomSource::PyTorchCuda,
                "gpu_index": 0,
                "tried_to_allocate_bytes": 1u64 << 40,
                "total_capacity_bytes": null,
                "free_bytes": null,
                "allocated_by_pytorch_bytes": null,
                "reserved_by_pytorch_bytes": null,
                "reserved_unallocated_bytes": null,
                "this_process_in_use_bytes": null,
                "other_processes": [[12, 34]],
                "max_model_len": null,
                "kv_cache_max_tokens": null,
                "kv_needed_bytes": null,
                "kv_available_bytes": null,
                "estimated_max_model_len": null,
                "gpu_memory_utilization": 0.9,
            }))
            .unwrap(),
            findings: vec![Finding {
                cause: Cause::GenuinelyOutOfMemory,
                headline: "h".into(),
                detail: "d".into(),
                fixes: vec!["f".into()],
            }],
        };
        for r in [
            Reply::Progress("read 1 of 2 headers \"x\"}".into()),
            Reply::Imported(imported),
            Reply::Explained(explained),
            Reply::Failed("no".into()),
        ] {
            let (kind, text) = r.clone().into_parts().unwrap();
            let serde = serde_json::to_value(&r).unwrap();
            let (serde_kind, payload) = serde.as_object().unwrap().iter().next().unwrap();
            assert_eq!(kind, serde_kind);
            match payload {
                serde_json::Value::String(line) => assert_eq!(&text, line),
                p => assert_eq!(
                    serde_json::from_str::<serde_json::Value>(&text).unwrap(),
                    *p
                ),
            }
            assert_eq!(Reply::from_parts(kind, text).unwrap(), r);
        }
        for (kind, text) in [
            ("Done", "x"),
            ("Imported", "1"),
            ("Explained", "{}"),
            ("", ""),
        ] {
            assert!(
                Reply::from_parts(kind, text.into()).is_err(),
                "{kind} {text}"
            );
        }
        assert!(!Reply::Progress(String::new()).is_last());
        assert!(Reply::Failed(String::new()).is_last());
    }
}
