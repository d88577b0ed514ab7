//! Compacts the catalog JSON for embedding, and writes the web app's copy of it.
//!
//! - Embedded (feature `bundled`: the CLI, the tests): every field natively; for wasm32 the
//!   slim copy below.
//! - The web file (`OUT_DIR/web/catalog-<hash>.json`, its name in the env var
//!   `VRAMFIT_WEB_CATALOG`, which `catalog::WEB_FILE` reads): the whole catalog in one JSON
//!   object, one member per catalog file, slim. The page fetches it beside its wasm instead of
//!   embedding it (issue 19: data beside the code, fetched in parallel and cached by the
//!   service worker); `scripts/catalog_file.py` copies it into the build folder. Slim: without
//!   the long provenance fields the app's first screen never shows (notes, derivations, price
//!   sources, and each entry's `source`, ~30 KB gzipped: the Catalog view fetches them from
//!   `catalog-sources.json`, which `scripts/catalog_sources.py` writes next to the bundle)
//!   and the keys of each model's `config` that sizing never reads
//!   (`src/catalog/wasm_slim.rs`, ~3 KB gzipped).

// Outside the core library: a build script reads the catalog files and writes the compacted copy.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::fs;
use std::path::Path;

const DROP: [&str; 5] = [
    "source",
    "notes",
    "memory_usable_source",
    "memory_cuda_total_source",
    "parameters_source",
];

include!("src/catalog/wasm_slim.rs");

fn slim(v: &mut serde_json::Value, keys: &std::collections::BTreeSet<String>) {
    if let serde_json::Value::Array(items) = v {
        for item in items {
            if let serde_json::Value::Object(m) = item {
                for k in DROP {
                    m.remove(k);
                }
                if let Some(config) = m.get_mut("config") {
                    slim_config(config, keys);
                }
                if let Some(serde_json::Value::Object(p)) = m.get_mut("price") {
                    p.remove("purchase_source");
                    p.remove("cloud_source");
                    p.remove("cloud_reserved_source");
                }
                // Platforms: the sources of the price, the power and the links.
                for part in ["price", "power", "intra_node_link", "inter_node_link"] {
                    if let Some(serde_json::Value::Object(p)) = m.get_mut(part) {
                        p.remove("source");
                    }
                }
                if let Some(serde_json::Value::Array(g)) = m.get_mut("gguf_repos") {
                    for r in g {
                        if let serde_json::Value::Object(r) = r {
                            r.remove("source");
                        }
                    }
                }
                if let Some(serde_json::Value::Object(n)) = m.get_mut("parameters_non_text") {
                    n.insert("how".into(), serde_json::Value::String(String::new()));
                }
            }
        }
    }
}

/// Removes every `source` key, at any depth.
fn drop_sources(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("source");
            m.values_mut().for_each(drop_sources);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(drop_sources),
        _ => {}
    }
}

fn main() {
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "wasm32");
    let out = std::env::var("OUT_DIR").expect("OUT_DIR");
    println!("cargo:rerun-if-changed=src/catalog");
    println!("cargo:rerun-if-changed=src/model.rs");
    println!("cargo:rerun-if-changed=src/model/aliases.rs");
    println!("cargo:rerun-if-changed=src/model/read.rs");
    println!("cargo:rerun-if-changed=src/model/vision.rs");
    // The keys `model.rs` reads, its alias table (`model/aliases.rs`) included.
    let keys = config_keys(
        &(fs::read_to_string("src/model.rs").expect("read src/model.rs")
            + &fs::read_to_string("src/model/aliases.rs").expect("read src/model/aliases.rs")
            + &fs::read_to_string("src/model/read.rs").expect("read src/model/read.rs")
            + &fs::read_to_string("src/model/vision.rs").expect("read src/model/vision.rs")),
    );
    let mut web = serde_json::Map::new();
    for dir in ["gpus", "models", "platforms"] {
        let src = Path::new("src/catalog").join(dir);
        fs::create_dir_all(Path::new(&out).join(dir)).expect("out dir");
        for e in fs::read_dir(&src).expect("catalog dir") {
            let p = e.expect("entry").path();
            if p.extension().is_none_or(|x| x != "json") {
                continue;
            }
            println!("cargo:rerun-if-changed={}", p.display());
            let text = fs::read_to_string(&p).expect("read catalog file");
            // A file that is not valid JSON is copied as is, and left out of the web file
            // (which then fails to read, naming the part): the catalog test reports it.
            let name = format!("{dir}/{}", p.file_name().expect("name").to_string_lossy());
            let compact = match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(mut v) => {
                    let full = (!wasm).then(|| serde_json::to_string(&v).expect("serialize"));
                    slim(&mut v, &keys);
                    let slim = serde_json::to_string(&v).expect("serialize");
                    web.insert(name, v);
                    full.unwrap_or(slim)
                }
                Err(_) => text,
            };
            fs::write(
                Path::new(&out).join(dir).join(p.file_name().expect("name")),
                compact,
            )
            .expect("write");
        }
    }
    let tco = fs::read_to_string("src/catalog/tco.json").expect("read src/catalog/tco.json");
    // The web file (and the wasm32 embedded copy) keeps the values and dates; the sources are
    // in the source file (and the CLI's copy).
    let compact = serde_json::from_str::<serde_json::Value>(&tco).map_or(tco, |mut v| {
        let full = (!wasm).then(|| serde_json::to_string(&v).expect("serialize"));
        drop_sources(&mut v);
        let slim = serde_json::to_string(&v).expect("serialize");
        web.insert("tco.json".into(), v);
        full.unwrap_or(slim)
    });
    fs::write(Path::new(&out).join("tco.json"), compact).expect("write");
    // The web file, named by its content (a new catalog is a new name, so caches never serve
    // an old one): FNV-1a, 64 bits, as 16 hex digits.
    let body = serde_json::to_string(&serde_json::Value::Object(web)).expect("serialize");
    let hash = body.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let name = format!("catalog-{hash:016x}.json");
    let web_dir = Path::new(&out).join("web");
    let _ = fs::remove_dir_all(&web_dir); // one file: the current one
    fs::create_dir_all(&web_dir).expect("web dir");
    fs::write(web_dir.join(&name), body).expect("write");
    println!("cargo:rustc-env=VRAMFIT_WEB_CATALOG={name}");
}
