//! Reading models the user brings: local files (through `Blob.slice`, header bytes only) and
//! Hugging Face repos (HTTP Range requests, header bytes only). The parsing and the Hub's
//! request sequence are the core's (`vramfit_core::hub`); this module moves bytes and puts
//! the core's answers together.

use js_sys::Uint8Array;
use vramfit_core::hub::{Import, Kind, Repo, Request};
use vramfit_core::safetensors::{self, check_against_index, Header, Report};
use vramfit_protocol::Imported;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Blob, File};

/// Reads `[start, end)` of a blob (never more).
async fn slice(blob: &Blob, start: u64, end: u64) -> Result<Vec<u8>, String> {
    // OK because: f64 represents every offset below 2^53 exactly (files are < 8 PiB).
    #[allow(clippy::cast_precision_loss)]
    let part = blob
        .slice_with_f64_and_f64(start as f64, end as f64)
        .map_err(|e| format!("{e:?}"))?;
    let buf = JsFuture::from(part.array_buffer())
        .await
        .map_err(|e| format!("could not read the file: {e:?}"))?;
    Ok(Uint8Array::new(&buf).to_vec())
}

/// Reads a whole small file as text (config.json, index).
pub async fn read_text(file: &File) -> Result<String, String> {
    if file.size() > 50e6 {
        return Err(format!("{} is too large for a JSON file", file.name()));
    }
    let t = JsFuture::from(file.text())
        .await
        .map_err(|e| format!("could not read {}: {e:?}", file.name()))?;
    t.as_string()
        .ok_or_else(|| format!("{} is not text", file.name()))
}

/// Reads and parses one safetensors header: 8 bytes, then exactly the header.
pub async fn read_header(file: &File) -> Result<Header, String> {
    let name = file.name();
    // OK because: File.size is an integral number of bytes below 2^53.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let size = file.size() as u64;
    if size == 0 {
        return safetensors::parse_header(&[], Some(0)).map_err(|e| format!("{name}: {e}"));
    }
    let first = slice(file, 0, size.min(8)).await?;
    let len = safetensors::header_len(&first).map_err(|e| format!("{name}: {e}"))?;
    if len.saturating_add(8) > size {
        return Err(format!(
            "{name}: header length {len} goes beyond the file ({size} bytes)"
        ));
    }
    let header = slice(file, 8, 8 + len).await?;
    safetensors::parse_header(&header, Some(size)).map_err(|e| format!("{name}: {e}"))
}

/// Sends one request of the import (`vramfit_core::hub` decides which and reads the answer).
/// A server that ignores Range (200 instead of 206) is aborted before the body is read, so a
/// shard is never downloaded whole.
async fn get(im: &mut Import, req: &Request, token: &str) -> Result<(), String> {
    let what = &req.file;
    let ctl = AbortController::new().map_err(|e| format!("{e:?}"))?;
    let signal = ctl.signal();
    let mut r = gloo_net::http::Request::get(&req.url).abort_signal(Some(&signal));
    if let Some(range) = req.range_header() {
        r = r.header("Range", &range);
    }
    if !token.trim().is_empty() {
        r = r.header("Authorization", &format!("Bearer {}", token.trim()));
    }
    let resp = r.send().await.map_err(|e| {
        format!("{what}: network error ({e}). You may be offline, or the server does not allow cross-origin requests (CORS).")
    })?;
    match im.status(resp.status()) {
        Ok(true) => {}
        Ok(false) => {
            ctl.abort();
            return Ok(());
        }
        Err(e) => {
            ctl.abort();
            return Err(e.to_string());
        }
    }
    if let Err(e) = im.content_range(resp.headers().get("content-range").as_deref()) {
        ctl.abort();
        return Err(e.to_string());
    }
    let bytes = resp.binary().await.map_err(|e| format!("{what}: {e}"))?;
    im.body(&bytes).map_err(|e| e.to_string())
}

/// Shard names and their headers, side by side: the report reads the headers as one slice,
/// with no copy.
#[derive(Default)]
pub struct Shards {
    /// File names.
    pub names: Vec<String>,
    /// Their headers, in the same order.
    pub headers: Vec<Header>,
}

impl Shards {
    fn push(&mut self, name: String, header: Header) {
        self.names.push(name);
        self.headers.push(header);
    }
}

/// What a Hugging Face import found.
pub struct HubModel {
    /// config.json text.
    pub config: String,
    /// The shards' names (as the index lists them) and their headers.
    pub shards: Shards,
    /// Bytes transferred for headers.
    pub header_bytes: u64,
}

/// Imports a repo: config.json, the index (or the single model.safetensors), then each
/// shard's header with two Range requests, in the order `vramfit_core::hub::Import` gives.
/// `progress(done, total)` is called per shard.
pub async fn import_hub(
    endpoint: &str,
    repo: &str,
    revision: &str,
    token: &str,
    mut progress: impl FnMut(usize, usize),
) -> Result<HubModel, String> {
    let repo = Repo::new(Some(endpoint), repo, Some(revision)).map_err(|e| e.to_string())?;
    let mut im = Import::new(repo);
    while let Some(req) = im.request() {
        get(&mut im, &req, token).await?;
        if req.kind == Kind::Header {
            let (done, total) = im.shards_done();
            progress(done, total);
        }
    }
    let found = im
        .finish()
        .ok_or_else(|| "the Hub import stopped early".to_string())?;
    Ok(HubModel {
        config: found.config,
        shards: Shards {
            names: found.names,
            headers: found.headers,
        },
        header_bytes: found.header_bytes,
    })
}

/// Turns config text and headers into the imported model (or an error naming the problem).
/// The config is read once, on the page, which needs the `ModelArch` (`vramfit-protocol`).
pub fn assemble(
    name: String,
    config: Option<(String, String)>,
    shards: &Shards,
    index: Option<&[u8]>,
    source: String,
    read: u64,
) -> Result<Imported, String> {
    let report = (!shards.headers.is_empty()).then(|| Report::from_headers(&shards.headers));
    let mut index_problems = Vec::new();
    if let Some(idx) = index {
        let named: Vec<(String, &Header)> =
            shards.names.iter().cloned().zip(&shards.headers).collect();
        let check = check_against_index(&named, idx)
            .map_err(|e| format!("model.safetensors.index.json: {e}"))?;
        index_problems = check.problems.iter().map(ToString::to_string).collect();
    }
    if config.is_none() && report.is_none() {
        return Err("no config.json or .safetensors file among the files".into());
    }
    let (config, config_file) = match config {
        Some((file, text)) => (Some(text), (file != "config.json").then_some(file)),
        None => (None, None),
    };
    Ok(Imported {
        name,
        config,
        config_file,
        report,
        shards: shards.headers.len(),
        index_problems,
        source,
        header_bytes_read: read,
    })
}

/// Reads a drop or a pick: config.json, the index and every shard's header.
pub async fn load_files(files: Vec<File>, progress: &dyn Fn(String)) -> Result<Imported, String> {
    let mut config = None;
    let mut index = None;
    let mut read_shards = Shards::default();
    let shards: Vec<&File> = files
        .iter()
        .filter(|f| f.name().ends_with(".safetensors"))
        .collect();
    let total = shards.len();
    let mut read = 0u64;
    // The config is `config.json` where it is among the files, else the first other JSON
    // file (a renamed config). The other JSON files of a model folder
    // (`generation_config.json`, `tokenizer_config.json`, …) are not read.
    let has_config = files.iter().any(|f| f.name() == "config.json");
    for f in &files {
        let n = f.name();
        if n.ends_with(".index.json") {
            index = Some(read_text(f).await?.into_bytes());
        } else if n.ends_with(".json") {
            if n == "config.json" || (!has_config && config.is_none()) {
                config = Some((n.clone(), read_text(f).await?));
            }
        } else if !n.ends_with(".safetensors") {
            return Err(format!(
                "`{n}` is neither a .safetensors file nor a JSON file"
            ));
        }
    }
    for (i, f) in shards.iter().enumerate() {
        let h = read_header(f).await?;
        read += 8 + h.header_len;
        read_shards.push(f.name(), h);
        progress(format!("read {} of {total} headers", i + 1));
    }
    // The first shard's name, else the config's file (`config.json`, or the JSON file taken
    // as the config); with neither, `assemble` refuses the drop.
    let name = shards.first().map_or_else(
        || {
            config
                .as_ref()
                .map(|(file, _)| file.clone())
                .unwrap_or_default()
        },
        |f| f.name().trim_end_matches(".safetensors").to_string(),
    );
    assemble(
        name,
        config,
        &read_shards,
        index.as_deref(),
        "files".into(),
        read,
    )
}
