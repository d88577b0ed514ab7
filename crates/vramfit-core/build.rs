//! Compacts the catalog JSON for embedding. For wasm32 (the web bundle) it also drops the
//! long provenance fields the app's first screen never shows (notes, derivations, price
//! sources, and each entry's `source`, ~30 KB of the gzipped bundle: the Catalog view
//! fetches them from `catalog-sources.json`, which `scripts/catalog_sources.py` writes next
//! to the bundle) and the keys of each model's `config` that sizing never reads
//! (`src/catalog/wasm_slim.rs`, ~3 KB gzipped); the native build (CLI, tests) keeps every
//! field.

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
            // A file that is not valid JSON is copied as is: the catalog test reports it.
            let compact = match serde_json::from_str::<serde_json::Value>(&text) {
                Ok(mut v) => {
                    if wasm {
                        slim(&mut v, &keys);
                    }
                    serde_json::to_string(&v).expect("serialize")
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
    // The web bundle keeps the values and dates; the sources are in the file (and the CLI).
    let compact = serde_json::from_str::<serde_json::Value>(&tco).map_or(tco, |mut v| {
        if wasm {
            drop_sources(&mut v);
        }
        serde_json::to_string(&v).expect("serialize")
    });
    fs::write(Path::new(&out).join("tco.json"), compact).expect("write");
}
