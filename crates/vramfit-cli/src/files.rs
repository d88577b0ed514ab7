//! Everything the CLI reads from disk or stdin. Commands get what is read here as values (or,
//! for a model given as a path, this module's [`read_local_model`] as their loader), so their
//! formatting never touches the file system.

use crate::out::{Failure, Res};
use std::path::{Path, PathBuf};
use vramfit_core::model::ModelArch;
use vramfit_core::safetensors::{self, Header, Report};

/// A model read from a path: its architecture, the name to show, and the shards' report when
/// the path was a directory with safetensors files.
pub type LocalModel = (ModelArch, String, Option<Report>);

/// Reads a model from a path: a config.json, or a directory with config.json (and
/// safetensors shards, read header-only, for the exact weight bytes).
pub fn read_local_model(p: &Path) -> Res<LocalModel> {
    let (cfg_path, dir) = if p.is_dir() {
        (p.join("config.json"), Some(p))
    } else {
        (p.to_path_buf(), None)
    };
    let text = std::fs::read_to_string(&cfg_path)
        .map_err(|e| Failure::Rejected(format!("{}: {e}", cfg_path.display())))?;
    let arch = ModelArch::from_config_str(&text)
        .map_err(|e| Failure::Rejected(e.in_file(&cfg_path.display().to_string())))?;
    let report = match dir {
        Some(d) => {
            let headers = read_headers(d)?;
            (!headers.is_empty()).then(|| {
                Report::from_headers(&headers.into_iter().map(|(_, h)| h).collect::<Vec<_>>())
            })
        }
        None => None,
    };
    let name = p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    Ok((arch, name, report))
}

/// Reads the first 8 bytes and then exactly the header of a file: never the tensor data.
pub fn read_header(path: &Path) -> Res<Header> {
    use std::io::{Read, Seek, SeekFrom};
    let rej = |m: String| Failure::Rejected(format!("{}: {m}", path.display()));
    let mut f = std::fs::File::open(path).map_err(|e| rej(e.to_string()))?;
    let size = f.metadata().map_err(|e| rej(e.to_string()))?.len();
    let mut first = [0u8; 8];
    let n = f.read(&mut first).map_err(|e| rej(e.to_string()))?;
    if size == 0 {
        return safetensors::parse_header(&[], Some(0)).map_err(|e| rej(e.to_string()));
    }
    let len = safetensors::header_len(&first[..n]).map_err(|e| rej(e.to_string()))?;
    if len.saturating_add(8) > size {
        return Err(rej(format!(
            "header length {len} goes beyond the file ({size} bytes)"
        )));
    }
    f.seek(SeekFrom::Start(8)).map_err(|e| rej(e.to_string()))?;
    let mut buf = vec![0u8; usize::try_from(len).map_err(|_| rej("header too large".into()))?];
    f.read_exact(&mut buf).map_err(|e| rej(e.to_string()))?;
    safetensors::parse_header(&buf, Some(size)).map_err(|e| rej(e.to_string()))
}

/// The headers of a directory's `.safetensors` files, sorted by name.
pub fn read_headers(dir: &Path) -> Res<Vec<(String, Header)>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Failure::Rejected(format!("{}: {e}", dir.display())))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "safetensors"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            Ok((
                p.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                read_header(&p)?,
            ))
        })
        .collect()
}

/// An index file next to the shards: its path (for messages) and its bytes.
pub struct IndexFile {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
}

/// What `inspect` reads: the named shards' headers and the index, if any.
pub struct InspectInput {
    pub headers: Vec<(String, Header)>,
    pub index: Option<IndexFile>,
}

/// Reads what `inspect` looks at: a file, a model directory, or an index (and its directory).
pub fn read_inspect_input(p: &Path) -> Res<InspectInput> {
    let (headers, index) = if p.is_dir() {
        let idx = p.join("model.safetensors.index.json");
        (read_headers(p)?, idx.exists().then_some(idx))
    } else if p
        .file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".index.json"))
    {
        let dir = p.parent().unwrap_or(Path::new("."));
        (read_headers(dir)?, Some(p.to_path_buf()))
    } else {
        (
            vec![(
                p.file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                read_header(p)?,
            )],
            None,
        )
    };
    // Read only when there are shards to check it against (else the error is "no shards").
    let index = match index {
        Some(path) if !headers.is_empty() => {
            let bytes = std::fs::read(&path)
                .map_err(|e| Failure::Rejected(format!("{}: {e}", path.display())))?;
            Some(IndexFile { path, bytes })
        }
        _ => None,
    };
    Ok(InspectInput { headers, index })
}

/// What `inspect` looks at for a repo imported from the Hub: its headers and index, as a
/// directory would give them (the index named `owner/name:model.safetensors.index.json`).
pub fn hub_inspect_input(m: crate::hub::HubModel) -> InspectInput {
    let f = m.fetched;
    let index = f.index.map(|bytes| IndexFile {
        path: PathBuf::from(format!("{}:{}", f.repo.id, vramfit_core::hub::INDEX_FILE)),
        bytes,
    });
    InspectInput {
        headers: f.names.into_iter().zip(f.headers).collect(),
        index,
    }
}

/// The text `oom` explains: a file, or stdin for `-` or no file.
pub fn read_oom_text(file: Option<&Path>) -> Res<String> {
    use std::io::Read;
    match file {
        Some(p) if p.as_os_str() != "-" => std::fs::read_to_string(p)
            .map_err(|e| Failure::Rejected(format!("{}: {e}", p.display()))),
        _ => {
            let mut s = String::new();
            std::io::stdin()
                .read_to_string(&mut s)
                .map_err(|e| Failure::Rejected(format!("stdin: {e}")))?;
            Ok(s)
        }
    }
}

/// Reads a text file whole (`accuracy --check FILE`).
pub fn read_text(p: &Path) -> Res<String> {
    std::fs::read_to_string(p).map_err(|e| Failure::Rejected(format!("{}: {e}", p.display())))
}
