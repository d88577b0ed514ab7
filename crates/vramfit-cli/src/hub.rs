//! The CLI's Hugging Face Hub client: drives `vramfit_core::hub::Import` (which decides the
//! requests and reads the answers) over `ureq`, with a cache directory.
//!
//! Environment (names and meanings as `huggingface_hub` reads them, see the core's `hub`
//! module docs for the sources): `HF_ENDPOINT` (default `https://huggingface.co`), `HF_TOKEN`
//! (else `HUGGING_FACE_HUB_TOKEN`) sent as `Authorization: Bearer`, `HF_HUB_OFFLINE=1` (only
//! the cache). The cache is vramfit's own (it holds header bytes, not whole files, so it is
//! not `HF_HOME`'s layout): `VRAMFIT_CACHE_DIR`, else `$XDG_CACHE_HOME/vramfit`, else
//! `~/.cache/vramfit` (the XDG base-directory default).
//!
//! The Hub answers `resolve` URLs with a redirect to its CDN: redirects are followed (at most
//! 5), and the token goes only to the same host (`ureq`'s `RedirectAuthHeaders::SameHost`).
//! A 200 to a Range request is never read: the response is dropped, which closes the
//! connection. Bodies are read through `take(limit + 1)`, so a server that sends more than
//! asked is cut off one byte past the limit and the core names the problem.

use crate::out::{Failure, Res};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;
use vramfit_core::hub::{self, Fetched, HubError, Import, Kind, Repo, Request};

/// What the environment says about the Hub.
#[derive(Debug, Clone, Default)]
pub struct HubEnv {
    /// `HF_ENDPOINT`.
    pub endpoint: Option<String>,
    /// `HF_TOKEN` or `HUGGING_FACE_HUB_TOKEN`.
    pub token: Option<String>,
    /// `HF_HUB_OFFLINE`.
    pub offline: bool,
    /// The cache directory (`None`: no cache).
    pub cache: Option<PathBuf>,
}

impl HubEnv {
    /// Reads the process environment.
    pub fn from_process() -> Self {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let cache = var("VRAMFIT_CACHE_DIR")
            .map(PathBuf::from)
            .or_else(|| var("XDG_CACHE_HOME").map(|x| Path::new(&x).join("vramfit")))
            .or_else(|| var("HOME").map(|h| Path::new(&h).join(".cache").join("vramfit")));
        HubEnv {
            endpoint: var("HF_ENDPOINT"),
            token: var("HF_TOKEN").or_else(|| var("HUGGING_FACE_HUB_TOKEN")),
            offline: hub::env_true(var("HF_HUB_OFFLINE").as_deref()),
            cache,
        }
    }
}

/// A model imported from the Hub, and the warnings of the import (a cache that could not be
/// written).
pub struct HubModel {
    pub fetched: Fetched,
    pub warnings: Vec<String>,
}

/// A failure naming the repo, exit 2.
fn fail(repo: &str, cause: impl std::fmt::Display) -> Failure {
    Failure::Usage(format!("`{repo}` from the Hugging Face Hub: {cause}"))
}

/// Imports `repo` at `revision`: config, index and each shard's header (from the cache when
/// there, else over HTTP).
pub fn import(repo: &str, revision: Option<&str>, env: &HubEnv) -> Res<HubModel> {
    let r = Repo::new(env.endpoint.as_deref(), repo, revision).map_err(|e| fail(repo, e))?;
    let mut cache = env.cache.as_deref().map(|d| Cache::new(d, &r));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(5)
        .redirect_auth_headers(ureq::config::RedirectAuthHeaders::SameHost)
        .timeout_connect(Some(Duration::from_secs(10)))
        .timeout_global(Some(Duration::from_secs(120)))
        .user_agent(concat!("vramfit/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let mut im = Import::new(r);
    let mut warnings = Vec::new();
    while let Some(req) = im.request() {
        let answer = match cache.as_ref().and_then(|c| c.get(&req)) {
            Some(a) => a,
            None if env.offline => {
                return Err(fail(
                    repo,
                    format!("{} is not in the cache and HF_HUB_OFFLINE is set", req.file),
                ))
            }
            None => {
                fetch(&agent, &req, env.token.as_deref(), &mut im).map_err(|e| fail(repo, e))?
            }
        };
        let from_network = matches!(answer, Answer::Fetched(_) | Answer::FetchedMissing);
        match &answer {
            Answer::Cached(b) => {
                im.status(if req.range.is_some() { 206 } else { 200 })
                    .and_then(|_| im.body(b))
                    .map_err(|e| fail(repo, e))?;
            }
            Answer::CachedMissing => {
                im.status(404).map_err(|e| fail(repo, e))?;
            }
            // `fetch` has fed the import.
            Answer::Fetched(_) | Answer::FetchedMissing => {}
        }
        if from_network {
            if let Some(c) = cache.as_mut() {
                if let Err(e) = c.put(&req, &answer) {
                    warnings.push(format!(
                        "could not write the Hub cache ({e}); the next run fetches again"
                    ));
                    cache = None;
                }
            }
        }
    }
    let fetched = im
        .finish()
        .ok_or_else(|| fail(repo, "the import stopped early"))?;
    Ok(HubModel { fetched, warnings })
}

/// An answer, from the network or the cache.
enum Answer {
    Fetched(Vec<u8>),
    FetchedMissing,
    Cached(Vec<u8>),
    CachedMissing,
}

/// Sends one request and feeds the import its status and body.
fn fetch(
    agent: &ureq::Agent,
    req: &Request,
    token: Option<&str>,
    im: &mut Import,
) -> Result<Answer, String> {
    let mut call = agent.get(&req.url);
    if let Some(range) = req.range_header() {
        call = call.header("Range", &range);
    }
    if let Some(t) = token {
        call = call.header("Authorization", &format!("Bearer {}", t.trim()));
    }
    let resp = call.call().map_err(|e| network(&req.url, &e))?;
    let status = resp.status().as_u16();
    // On Err (a 200 to a Range request, a 401 …) `resp` is dropped unread: the connection
    // closes without the body.
    if !im.status(status).map_err(|e| e.to_string())? {
        return Ok(Answer::FetchedMissing);
    }
    let range = resp
        .headers()
        .get("content-range")
        .and_then(|v| v.to_str().ok());
    im.content_range(range).map_err(|e| e.to_string())?;
    let mut body = Vec::new();
    resp.into_body()
        .into_reader()
        .take(req.limit().saturating_add(1))
        .read_to_end(&mut body)
        .map_err(|e| format!("{}: the connection broke while reading ({e})", req.file))?;
    im.body(&body).map_err(|e: HubError| e.to_string())?;
    Ok(Answer::Fetched(body))
}

/// A transport error in words: offline, DNS, refused, timed out.
fn network(url: &str, e: &ureq::Error) -> String {
    let host = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest.split('/').next().unwrap_or(rest));
    let why = match e {
        ureq::Error::HostNotFound => "the host name does not resolve".to_string(),
        ureq::Error::ConnectionFailed => "the connection failed".to_string(),
        ureq::Error::Timeout(t) => format!("timed out ({t})"),
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            "connection refused".to_string()
        }
        // std reports a failed getaddrinfo as an uncategorised I/O error with this text.
        ureq::Error::Io(io) if io.to_string().contains("lookup address") => {
            "the host name does not resolve".to_string()
        }
        other => other.to_string(),
    };
    format!("cannot reach {host}: {why}. Offline? With HF_HUB_OFFLINE=1 vramfit uses only its cache; HF_ENDPOINT sets the Hub's address.")
}

/// The cache: config and index as files, each shard's first `8 + N` bytes as
/// `<shard>.header`, an index the repo lacks as `model.safetensors.index.json.absent`, under
/// `<dir>/hub/<Repo::cache_path>`.
struct Cache {
    root: PathBuf,
    repo: Repo,
    /// The current shard's 8 length bytes, written with its header.
    prefix: Vec<u8>,
}

impl Cache {
    fn new(dir: &Path, repo: &Repo) -> Self {
        Cache {
            root: dir.join("hub"),
            repo: repo.clone(),
            prefix: Vec::new(),
        }
    }

    fn path(&self, file: &str, suffix: &str) -> PathBuf {
        let mut p = self.root.clone();
        for part in self.repo.cache_path(file).split('/') {
            p.push(part);
        }
        p.as_mut_os_string().push(suffix);
        p
    }

    fn get(&self, req: &Request) -> Option<Answer> {
        match req.kind {
            Kind::Config | Kind::Index => {
                if req.kind == Kind::Index && self.path(&req.file, ".absent").exists() {
                    return Some(Answer::CachedMissing);
                }
                std::fs::read(self.path(&req.file, ""))
                    .ok()
                    .map(Answer::Cached)
            }
            Kind::Length | Kind::Header => {
                let bytes = std::fs::read(self.path(&req.file, ".header")).ok()?;
                let (a, b) = req.range?;
                let (a, b) = (usize::try_from(a).ok()?, usize::try_from(b).ok()?);
                bytes.get(a..b).map(|s| Answer::Cached(s.to_vec()))
            }
        }
    }

    fn put(&mut self, req: &Request, answer: &Answer) -> std::io::Result<()> {
        let (path, bytes) = match (req.kind, answer) {
            (Kind::Index, Answer::FetchedMissing) => (self.path(&req.file, ".absent"), Vec::new()),
            (Kind::Length, Answer::Fetched(b)) => {
                self.prefix.clone_from(b);
                return Ok(());
            }
            (Kind::Header, Answer::Fetched(b)) => {
                let mut all = std::mem::take(&mut self.prefix);
                all.extend_from_slice(b);
                (self.path(&req.file, ".header"), all)
            }
            (_, Answer::Fetched(b)) => (self.path(&req.file, ""), b.clone()),
            _ => return Ok(()),
        };
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d)?;
        }
        // Written whole, then renamed: a reader never sees half a file.
        let mut tmp = path.clone();
        tmp.as_mut_os_string()
            .push(format!(".tmp{}", std::process::id()));
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, &path)
    }
}
