//! ARCHITECTURE.md's invariants, each checked here. They are stated as absences.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(rust_files(&p));
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    out
}

/// Lines of a file with `//` comments removed (doc comments name things freely).
fn code_lines(p: &Path) -> Vec<(usize, String)> {
    let text = fs::read_to_string(p).unwrap();
    let mut in_tests = false;
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            if l.trim_start().starts_with("#[cfg(test)]") {
                in_tests = true;
            }
            let code = l.split("//").next().unwrap_or("").to_string();
            (!in_tests && !code.trim().is_empty()).then_some((i + 1, code))
        })
        .collect()
}

/// Fails naming the file, line and text if any code line under `dir` contains one of `banned`.
fn assert_absent(dir: &str, banned: &[&str], what: &str) {
    assert_absent_outside(dir, None, banned, what);
}

/// [`assert_absent`], skipping the files under `except`.
fn assert_absent_outside(dir: &str, except: Option<&str>, banned: &[&str], what: &str) {
    for f in rust_files(&root().join(dir)) {
        if except.is_some_and(|e| f.starts_with(root().join(e))) {
            continue;
        }
        for (n, line) in code_lines(&f) {
            for b in banned {
                assert!(
                    !line.contains(b),
                    "{}:{n}: `{b}` {what}: {line}",
                    f.display()
                );
            }
        }
    }
}

const WEB_CRATES: [&str; 10] = [
    "leptos",
    "leptos_router",
    "wasm-bindgen",
    "web-sys",
    "js-sys",
    "gloo-net",
    "gloo-file",
    "plotters",
    "reqwest",
    "tokio",
];

#[test]
fn the_core_depends_on_no_web_crate() {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            "vramfit-core",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    let names: Vec<&str> = tree
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(
        names.contains(&"serde_json"),
        "cargo tree output looks wrong: {tree}"
    );
    for bad in WEB_CRATES {
        assert!(
            !names.contains(&bad),
            "vramfit-core depends on web crate `{bad}`:\n{tree}"
        );
    }
}

#[test]
fn the_core_does_no_io() {
    let banned = [
        "std::fs",
        "std::net",
        "std::process",
        "std::env",
        "File::open",
        "println!",
        "eprintln!",
        "std::io::stdin",
    ];
    assert_absent("crates/vramfit-core/src", &banned, "in the core");
}

#[test]
fn byte_counts_are_u64_never_usize() {
    // wasm32's usize is 32 bits; safetensors shards and GPU memory exceed 4 GiB.
    let banned = [
        "_bytes: usize",
        "_bytes: u32",
        "_bytes: f32",
        "bytes: usize",
    ];
    assert_absent("crates/vramfit-core/src", &banned, "(byte counts are u64)");
}

#[test]
fn the_ui_computes_nothing() {
    // Components read the plan and format it with vramfit_core::units; they do no
    // arithmetic on quantities (no casts, no unit constants, no sizing calls).
    let banned = [
        " as f64",
        " as u64",
        "1 << 30",
        "1024",
        "* 100.0",
        "* 1000.0",
        "estimate_bytes",
        "weights_per_gpu",
        ".powi(",
        ".powf(",
    ];
    assert_absent("src/components", &banned, "in a UI component");
}

#[test]
fn the_page_leaves_imports_and_oom_diagnosis_to_the_worker() {
    // The first load carries none of the header parser, the index check or the OOM reader:
    // the page's code (src/) never calls them; the worker (crates/vramfit-worker) does.
    let banned = [
        "parse_header",
        "from_headers",
        "check_against_index",
        "index_shards",
        "oom::parse",
        "diagnose",
        "import_hub",
        "gloo_net",
    ];
    assert_absent(
        "src",
        &banned,
        "belongs to the import worker (crates/vramfit-worker)",
    );
    // The messages between them name no operation by a bare string (they are
    // `vramfit_protocol::Request`), and neither side keeps a copy of them.
    assert_absent(
        "src",
        &["#[path", "\"op\""],
        "(the messages are vramfit-protocol's)",
    );
    // And the worker has no UI.
    assert_absent(
        "crates/vramfit-worker",
        &["leptos", "plotters", "#[path"],
        "in the import worker",
    );
}

/// `cargo tree -e features` for the wasm target, one line per package or feature.
fn wasm_features(package: &str) -> String {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            package,
            "-e",
            "features",
            "--target",
            "wasm32-unknown-unknown",
            "--prefix",
            "none",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_page_builds_the_core_without_import_or_oom() {
    // The page depends on the core with `default-features = false`, so a call from src/ to
    // the header parser, `Report::from_headers`, the index check or the OOM reader does not
    // compile. Trunk builds the page alone (features unify per build, not per workspace), so
    // the worker's and the CLI's features stay out of it: the page's tree, as cargo resolves
    // it for the wasm target, has the core without them.
    let page = wasm_features("vramfit-web");
    assert!(
        page.lines().any(|l| l.starts_with("vramfit-core v")),
        "cargo tree output looks wrong: {page}"
    );
    for feature in ["default", "import", "oom"] {
        let line = format!("vramfit-core feature \"{feature}\"");
        assert!(
            !page.lines().any(|l| l.trim() == line),
            "the page builds the core with `{feature}`:\n{page}"
        );
    }
    // The worker has them (the check above reads the right lines), and no UI crate.
    let worker = wasm_features("vramfit-worker");
    for feature in ["import", "oom"] {
        let line = format!("vramfit-core feature \"{feature}\"");
        assert!(
            worker.lines().any(|l| l.trim() == line),
            "the worker builds the core without `{feature}`:\n{worker}"
        );
    }
    for ui in ["leptos", "plotters"] {
        assert!(
            !worker.lines().any(|l| l.starts_with(&format!("{ui} "))),
            "the import worker depends on `{ui}`:\n{worker}"
        );
    }
}

#[test]
fn numbers_are_read_without_the_standard_float_parser() {
    // `f64::from_str` brings core's dec2flt (~15 KB of the gzipped bundle);
    // `vramfit_core::decimal::parse_f64` gives the same value for every input.
    let banned = [
        "parse::<f64>",
        "parse::<f32>",
        "f64::from_str",
        ": f64 = s",
        ": f64 = v",
    ];
    for dir in ["src", "crates/vramfit-core/src"] {
        assert_absent(dir, &banned, "(use vramfit_core::decimal::parse_f64)");
    }
}

#[test]
fn untrusted_text_is_never_markup() {
    // `inner_html` only for the chart, whose SVG plotters builds and escapes.
    for f in rust_files(&root().join("src")) {
        for (n, line) in code_lines(&f) {
            if line.contains("inner_html") {
                assert!(
                    line.contains("inner_html=chart") || line.contains("inner_html=scaling_chart"),
                    "{}:{n}: inner_html outside a chart: {line}",
                    f.display()
                );
            }
        }
    }
}

#[test]
fn the_top_level_is_what_the_design_names() {
    let allowed = [
        "Cargo.toml",
        "Cargo.lock",
        "src",
        "style",
        "public",
        "index.html",
        "tests",
        "Trunk.toml",
        "crates",
        "README.md",
        "ARCHITECTURE.md",
        ".ci",
        "scripts",
        "dev",
        "docs",
        "rust-toolchain.toml",
        ".gitignore",
        "fuzz",
        ".cargo",
    ];
    let out = Command::new("git")
        .args(["ls-files"])
        .current_dir(root())
        .output()
        .expect("git runs");
    for f in String::from_utf8_lossy(&out.stdout).lines() {
        let top = f.split('/').next().unwrap();
        assert!(allowed.contains(&top), "unexpected top-level entry `{top}`");
    }
}

#[test]
fn test_hooks_listed_in_architecture_exist_in_the_ui() {
    let arch = fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let ui: String = rust_files(&root().join("src"))
        .iter()
        .map(|f| fs::read_to_string(f).unwrap())
        .collect();
    for id in [
        "weights-per-gpu",
        "kv-pool-per-gpu",
        "total-per-gpu",
        "gpus-needed",
        "max-context",
        "max-concurrency",
        "decode-tokens-per-s",
        "verdict",
        "share-link",
    ] {
        assert!(arch.contains(id), "ARCHITECTURE.md does not list `{id}`");
        assert!(
            ui.contains(&format!("\"{id}\"")),
            "the UI has no data-testid `{id}`"
        );
    }
}
