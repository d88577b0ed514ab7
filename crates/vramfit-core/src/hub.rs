//! Importing a model from the Hugging Face Hub, header bytes only: the URLs, the Range
//! arithmetic, the shard list, the size limits, the error texts, and the sequence of
//! requests ([`Import`]), written once for both drivers: the web worker (`gloo-net`) and the
//! CLI (`ureq`). No I/O here: a driver asks [`Import::request`] what to fetch, sends it,
//! and hands back the status ([`Import::status`]) and the body ([`Import::body`]).
//!
//! The sequence: `config.json` (whole), `model.safetensors.index.json` (whole; a 404 means a
//! single-file repo, `model.safetensors`), then for each shard two Range requests: bytes
//! `[0, 8)` (the little-endian header length `N`) and `[8, 8 + N)` (the JSON header). So an
//! import transfers `config + index + Σ (8 + N_shard)` bytes and never tensor data.
//!
//! Sources:
//! - URL scheme `{endpoint}/{repo_id}/resolve/{revision}/{filename}`, default endpoint
//!   `https://huggingface.co`, `HF_ENDPOINT` overriding it (trailing `/` stripped),
//!   `DEFAULT_REVISION = "main"`: `huggingface_hub`, `src/huggingface_hub/constants.py`
//!   (`ENDPOINT`, `HUGGINGFACE_CO_URL_TEMPLATE`) at commit
//!   03333b689b5a2dee604676791c0792ede6246a31. Its `hf_hub_url`
//!   (`src/huggingface_hub/file_download.py`) quotes the revision with no safe characters
//!   and the file name with `/` kept: [`Repo::url`] does the same.
//! - The same `constants.py`: `HF_HUB_OFFLINE` (true values `1`, `ON`, `YES`, `TRUE`, see
//!   [`env_true`]), `HF_HOME` (default `$XDG_CACHE_HOME/huggingface`, else
//!   `~/.cache/huggingface`), `SAFETENSORS_SINGLE_FILE`, `SAFETENSORS_INDEX_FILE`. The
//!   token: `HF_TOKEN` (and the older `HUGGING_FACE_HUB_TOKEN`), sent as
//!   `Authorization: Bearer <token>`: the environment-variables page of the
//!   `huggingface_hub` docs (<https://huggingface.co/docs/huggingface_hub/package_reference/environment_variables>;
//!   v0.12 names `HUGGING_FACE_HUB_TOKEN`).
//! - Repo ids: `huggingface_hub`, `src/huggingface_hub/utils/_validators.py`,
//!   `REPO_ID_REGEX`: an optional namespace and a name of 1–96 characters of `[\w\-.]`,
//!   starting and ending with a word character, and no `--` or `..`. [`is_repo_id`] asks for
//!   the namespace (a bare name is a catalog id here).
//! - Range requests: RFC 9110 §14.1.2, `bytes=first-last` with `last` inclusive (so
//!   `[a, b)` is `bytes=a-(b-1)`); a server that ignores Range answers 200 with the whole
//!   file (§14.2), which a driver must not read.
//! - Limits: a header is at most `MAX_HEADER_SIZE` (100 MB, the safetensors reference's
//!   limit, [`crate::safetensors`]); `config.json` and the index at most [`MAX_JSON_BYTES`]
//!   (50 MB, the worker's limit for dropped JSON files; real indexes are tens of KB).

use crate::safetensors::{self, Header, HeaderError, MAX_HEADER_SIZE};
use std::fmt;

/// The Hub's address when `HF_ENDPOINT` is not set.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";
/// The revision when none is given.
pub const DEFAULT_REVISION: &str = "main";
/// The model's configuration.
pub const CONFIG_FILE: &str = "config.json";
/// The shard index of a sharded checkpoint.
pub const INDEX_FILE: &str = "model.safetensors.index.json";
/// The one file of an unsharded checkpoint.
pub const SINGLE_FILE: &str = "model.safetensors";
/// The largest `config.json` or index accepted, bytes.
pub const MAX_JSON_BYTES: u64 = 50_000_000;
/// Bytes of the safetensors length prefix.
pub const PREFIX_BYTES: u64 = 8;

/// Whether an environment value means "on", as `huggingface_hub`'s `_is_true` reads it.
#[must_use]
pub fn env_true(value: Option<&str>) -> bool {
    value.is_some_and(|v| ["1", "ON", "YES", "TRUE"].contains(&v.trim().to_uppercase().as_str()))
}

/// Whether `s` is a Hub repo id of the form `owner/name` (see the module docs).
#[must_use]
pub fn is_repo_id(s: &str) -> bool {
    let part = |p: &str| {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        (1..=96).contains(&p.len())
            && p.chars().all(|c| word(c) || c == '-' || c == '.')
            && p.starts_with(word)
            && p.ends_with(word)
            && !p.contains("--")
            && !p.contains("..")
    };
    matches!(s.split_once('/'), Some((o, n)) if part(o) && part(n))
}

/// Percent-encodes everything but RFC 3986's unreserved characters (and `/` when `keep_slash`).
fn quote(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) || (keep_slash && b == b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Why an import stopped. The texts are the ones both drivers show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HubError {
    /// Not `owner/name`.
    BadRepo(String),
    /// An empty revision or one with spaces or control characters.
    BadRevision(String),
    /// `HF_ENDPOINT` is not an `http://` or `https://` address.
    BadEndpoint(String),
    /// The server answered an HTTP status other than success.
    Status {
        /// The file asked for.
        file: String,
        /// The status.
        status: u16,
        /// The URL asked.
        url: String,
    },
    /// A Range request was answered 200 (the whole file): the driver stops reading.
    IgnoredRange {
        /// The file asked for.
        file: String,
    },
    /// More bytes than asked for (or than [`MAX_JSON_BYTES`]).
    TooLong {
        /// The file asked for.
        file: String,
        /// The most bytes accepted.
        limit: u64,
    },
    /// A 206 whose `Content-Range` starts elsewhere than the byte asked for.
    WrongRange {
        /// The file asked for.
        file: String,
        /// The `Content-Range` value.
        got: String,
    },
    /// `config.json` is not UTF-8.
    NotUtf8(String),
    /// A header or the index was rejected by the parser.
    Header {
        /// The file.
        file: String,
        /// The parser's reason.
        error: HeaderError,
    },
    /// The index names a shard outside the repo (`..`, an absolute path).
    BadShardName(String),
    /// A driver answered after the import was complete (a driver bug).
    Finished,
}

/// The text of an HTTP status for `what` (a file name) at `url`, worded for people.
#[must_use]
pub fn http_error(status: u16, what: &str, url: &str) -> String {
    match status {
        401 | 403 => format!("{what}: access denied ({status}). The repo is gated or private: accept its licence on the Hub and paste an access token."),
        404 => format!("{what}: not found (404) at {url}. Check the repo id and revision."),
        416 => format!("{what}: the server refused the byte range (416)."),
        s => format!("{what}: the server answered {s} for {url}."),
    }
}

impl fmt::Display for HubError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadRepo(r) => write!(f, "`{r}` is not a repo id of the form owner/name"),
            Self::BadRevision(r) => write!(f, "`{r}` is not a revision (a branch, tag or commit)"),
            Self::BadEndpoint(e) => write!(
                f,
                "`{e}` is not a Hub address (HF_ENDPOINT must start with http:// or https://)"
            ),
            Self::Status { file, status, url } => f.write_str(&http_error(*status, file, url)),
            Self::IgnoredRange { file } => write!(f, "{file}: the server ignored the Range request and started sending the whole file; aborted to avoid downloading it."),
            Self::TooLong { file, limit } => {
                write!(f, "{file}: the server sent more than the {limit} bytes asked for")
            }
            Self::WrongRange { file, got } => write!(
                f,
                "{file}: the server sent another byte range (Content-Range: {got})"
            ),
            Self::NotUtf8(file) => write!(f, "{file} is not UTF-8"),
            Self::Header { file, error } => write!(f, "{file}: {error}"),
            Self::BadShardName(n) => write!(f, "suspicious shard name `{n}` in the index"),
            Self::Finished => f.write_str("the import was already complete"),
        }
    }
}

impl std::error::Error for HubError {}

/// A repo at a revision on an endpoint: where the files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// The endpoint, without a trailing `/`.
    pub endpoint: String,
    /// `owner/name`.
    pub id: String,
    /// Branch, tag or commit.
    pub revision: String,
}

impl Repo {
    /// Checks the pieces; `None` or empty endpoint and revision take the defaults.
    ///
    /// # Errors
    /// [`HubError::BadRepo`], [`HubError::BadRevision`], [`HubError::BadEndpoint`].
    ///
    /// # Example
    /// ```
    /// use vramfit_core::hub::Repo;
    /// let r = Repo::new(None, "meta-llama/Llama-3.1-8B", Some("refs/pr/1")).unwrap();
    /// assert_eq!(
    ///     r.url("config.json"),
    ///     "https://huggingface.co/meta-llama/Llama-3.1-8B/resolve/refs%2Fpr%2F1/config.json"
    /// );
    /// ```
    pub fn new(endpoint: Option<&str>, id: &str, revision: Option<&str>) -> Result<Self, HubError> {
        let id = id.trim().trim_matches('/');
        if !is_repo_id(id) {
            return Err(HubError::BadRepo(id.to_string()));
        }
        let endpoint = match endpoint.map(str::trim).filter(|e| !e.is_empty()) {
            None => DEFAULT_ENDPOINT.to_string(),
            Some(e) => {
                let e = e.trim_end_matches('/');
                let rest = e
                    .strip_prefix("https://")
                    .or_else(|| e.strip_prefix("http://"));
                if rest.is_none_or(|r| r.is_empty() || r.chars().any(char::is_whitespace)) {
                    return Err(HubError::BadEndpoint(e.to_string()));
                }
                e.to_string()
            }
        };
        let revision = match revision.map(str::trim).filter(|r| !r.is_empty()) {
            None => DEFAULT_REVISION.to_string(),
            Some(r)
                if r.chars().any(|c| c.is_whitespace() || c.is_control())
                    || r == "."
                    || r == ".." =>
            {
                return Err(HubError::BadRevision(r.to_string()))
            }
            Some(r) => r.to_string(),
        };
        Ok(Self {
            endpoint,
            id: id.to_string(),
            revision,
        })
    }

    /// `{endpoint}/{repo}/resolve/{revision}/{file}`, revision and file percent-encoded.
    #[must_use]
    pub fn url(&self, file: &str) -> String {
        format!(
            "{}/{}/resolve/{}/{}",
            self.endpoint,
            self.id,
            quote(&self.revision, false),
            quote(file, true)
        )
    }

    /// Where a file's cached bytes go, relative to a cache directory, `/`-separated:
    /// `{endpoint}/{owner}/{name}/{revision}/{file}` with the endpoint and revision
    /// percent-encoded (one path component each; no `:` or `/`), so two endpoints or
    /// revisions never share an entry. `file` is a name [`Import`] accepted (no `..`).
    #[must_use]
    pub fn cache_path(&self, file: &str) -> String {
        format!(
            "{}/{}/{}/{}",
            quote(&self.endpoint, false),
            self.id,
            quote(&self.revision, false),
            file
        )
    }
}

/// What a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `config.json`, whole.
    Config,
    /// The index, whole (404: a single-file repo).
    Index,
    /// A shard's first 8 bytes.
    Length,
    /// A shard's header, `[8, 8 + N)`.
    Header,
}

/// One request to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// What it is for.
    pub kind: Kind,
    /// The file in the repo.
    pub file: String,
    /// Its URL.
    pub url: String,
    /// The byte range `[start, end)`, for shards.
    pub range: Option<(u64, u64)>,
}

impl Request {
    /// The `Range` header value: `bytes=start-(end-1)` (RFC 9110: the last byte is inclusive).
    #[must_use]
    pub fn range_header(&self) -> Option<String> {
        self.range
            .map(|(a, b)| format!("bytes={a}-{}", b.saturating_sub(1)))
    }

    /// The most body bytes accepted: the range's length, or [`MAX_JSON_BYTES`].
    #[must_use]
    pub fn limit(&self) -> u64 {
        self.range
            .map_or(MAX_JSON_BYTES, |(a, b)| b.saturating_sub(a))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Config,
    Index,
    Length(usize),
    Header(usize, u64),
    Done,
}

/// What an import found.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The repo it came from.
    pub repo: Repo,
    /// `config.json`.
    pub config: String,
    /// The index bytes (`None`: a single-file repo).
    pub index: Option<Vec<u8>>,
    /// The shards' names, as the index lists them.
    pub names: Vec<String>,
    /// Their headers, in the same order.
    pub headers: Vec<Header>,
    /// Σ (8 + N) over the shards: the header bytes transferred.
    pub header_bytes: u64,
}

/// The request sequence of one import (see the module docs).
///
/// # Example
/// ```
/// use vramfit_core::hub::{Import, Kind, Repo};
/// let mut im = Import::new(Repo::new(Some("http://127.0.0.1:9"), "o/m", None).unwrap());
/// assert_eq!(im.request().unwrap().kind, Kind::Config);
/// assert!(im.status(200).unwrap());
/// im.body(br#"{"hidden_size": 8}"#).unwrap();
/// assert_eq!(im.request().unwrap().file, "model.safetensors.index.json");
/// assert!(!im.status(404).unwrap()); // no index: one file
/// let len = im.request().unwrap();
/// assert_eq!((len.file.as_str(), len.range_header().unwrap().as_str()), ("model.safetensors", "bytes=0-7"));
/// ```
#[derive(Debug, Clone)]
pub struct Import {
    repo: Repo,
    step: Step,
    config: String,
    index: Option<Vec<u8>>,
    shards: Vec<String>,
    headers: Vec<Header>,
    header_bytes: u64,
}

/// A shard name must stay inside the repo.
fn safe_name(n: &str) -> bool {
    !n.is_empty()
        && !n.starts_with('/')
        && !n.contains('\\')
        && n.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

impl Import {
    /// Starts an import of `repo`.
    #[must_use]
    pub fn new(repo: Repo) -> Self {
        Self {
            repo,
            step: Step::Config,
            config: String::new(),
            index: None,
            shards: Vec::new(),
            headers: Vec::new(),
            header_bytes: 0,
        }
    }

    /// The repo being imported.
    #[must_use]
    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    /// The next request to send (`None`: done, call [`Import::finish`]).
    #[must_use]
    pub fn request(&self) -> Option<Request> {
        let (kind, file, range) = match self.step {
            Step::Config => (Kind::Config, CONFIG_FILE, None),
            Step::Index => (Kind::Index, INDEX_FILE, None),
            Step::Length(i) => (
                Kind::Length,
                self.shards[i].as_str(),
                Some((0, PREFIX_BYTES)),
            ),
            Step::Header(i, n) => (
                Kind::Header,
                self.shards[i].as_str(),
                Some((PREFIX_BYTES, PREFIX_BYTES + n)),
            ),
            Step::Done => return None,
        };
        Some(Request {
            kind,
            file: file.to_string(),
            url: self.repo.url(file),
            range,
        })
    }

    /// (shards whose header is read, shards), for progress lines.
    #[must_use]
    pub fn shards_done(&self) -> (usize, usize) {
        (self.headers.len(), self.shards.len())
    }

    /// The status of the current request's answer. `Ok(true)`: read the body (at most
    /// [`Request::limit`] bytes) and pass it to [`Import::body`]; `Ok(false)`: the answer is
    /// taken (the index's 404), read nothing and go on; `Err`: stop, reading nothing (a 200 to
    /// a Range request is the whole file).
    ///
    /// # Errors
    /// [`HubError::Status`], [`HubError::IgnoredRange`], [`HubError::Finished`].
    pub fn status(&mut self, status: u16) -> Result<bool, HubError> {
        let req = self.request().ok_or(HubError::Finished)?;
        match (status, req.range) {
            (200, Some(_)) => Err(HubError::IgnoredRange { file: req.file }),
            (200, None) | (206, Some(_)) => Ok(true),
            (404, None) if req.kind == Kind::Index => {
                self.shards = vec![SINGLE_FILE.to_string()];
                self.step = Step::Length(0);
                Ok(false)
            }
            (s, _) => Err(HubError::Status {
                file: req.file,
                status: s,
                url: req.url,
            }),
        }
    }

    /// Checks a 206's `Content-Range` (`bytes first-last/size`, RFC 9110 §14.4) against the
    /// range asked for: it must start at the first byte asked. `None` (a browser hides the
    /// header of a cross-origin answer unless the server exposes it) passes; the body's
    /// length is checked by [`Import::body`] and its content by the parser.
    ///
    /// # Errors
    /// [`HubError::WrongRange`].
    pub fn content_range(&self, value: Option<&str>) -> Result<(), HubError> {
        let (Some(req), Some(v)) = (self.request(), value) else {
            return Ok(());
        };
        let Some((start, _)) = req.range else {
            return Ok(());
        };
        let first = v
            .trim()
            .strip_prefix("bytes ")
            .and_then(|r| r.split(['-', '/']).next())
            .and_then(|n| n.trim().parse::<u64>().ok());
        if first == Some(start) {
            Ok(())
        } else {
            Err(HubError::WrongRange {
                file: req.file,
                got: v.to_string(),
            })
        }
    }

    /// The body of the current request's answer (after [`Import::status`] said to read it).
    ///
    /// # Errors
    /// [`HubError::TooLong`], [`HubError::NotUtf8`], [`HubError::Header`] (the index, the
    /// length prefix or the header rejected), [`HubError::BadShardName`], [`HubError::Finished`].
    pub fn body(&mut self, bytes: &[u8]) -> Result<(), HubError> {
        let req = self.request().ok_or(HubError::Finished)?;
        let limit = req.limit();
        if bytes.len() as u64 > limit {
            return Err(HubError::TooLong {
                file: req.file,
                limit,
            });
        }
        let bad = |error| HubError::Header {
            file: req.file.clone(),
            error,
        };
        self.step = match self.step {
            Step::Config => {
                self.config = String::from_utf8(bytes.to_vec())
                    .map_err(|_| HubError::NotUtf8(req.file.clone()))?;
                Step::Index
            }
            Step::Index => {
                let shards = safetensors::index_shards(bytes).map_err(bad)?;
                if let Some(n) = shards.iter().find(|n| !safe_name(n)) {
                    return Err(HubError::BadShardName(n.clone()));
                }
                if shards.is_empty() {
                    return Err(bad(HeaderError::InvalidIndex {
                        reason: "the `weight_map` names no shard".into(),
                    }));
                }
                self.shards = shards;
                self.index = Some(bytes.to_vec());
                Step::Length(0)
            }
            Step::Length(i) => {
                let n = safetensors::header_len(bytes).map_err(bad)?;
                if n > MAX_HEADER_SIZE {
                    return Err(bad(HeaderError::HeaderTooLarge { header_len: n }));
                }
                Step::Header(i, n)
            }
            Step::Header(i, n) => {
                let header = safetensors::parse_header(bytes, None).map_err(bad)?;
                self.headers.push(header);
                self.header_bytes += PREFIX_BYTES + n;
                if i + 1 < self.shards.len() {
                    Step::Length(i + 1)
                } else {
                    Step::Done
                }
            }
            Step::Done => return Err(HubError::Finished),
        };
        Ok(())
    }

    /// What was found, once [`Import::request`] is `None` (`None` while requests remain).
    #[must_use]
    pub fn finish(self) -> Option<Fetched> {
        if self.step != Step::Done {
            return None;
        }
        Some(Fetched {
            repo: self.repo,
            config: self.config,
            index: self.index,
            names: self.shards,
            headers: self.headers,
            header_bytes: self.header_bytes,
        })
    }
}

#[cfg(test)]
mod tests;
