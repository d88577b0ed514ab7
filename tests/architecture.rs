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

/// A file's production lines, numbered: everything but `#[cfg(test)]` items (a one-line
/// `mod tests;` or a braced block, however long) and files that are test modules
/// (`tests.rs`). Comments are kept.
fn production_lines(p: &Path) -> Vec<(usize, String)> {
    if p.file_name().is_some_and(|n| n == "tests.rs") {
        return Vec::new();
    }
    let text = fs::read_to_string(p).unwrap();
    let mut out = Vec::new();
    let mut skip_next_item = false;
    let mut depth: i64 = 0;
    let mut in_test_item = false;
    for (i, l) in text.lines().enumerate() {
        let t = l.trim_start();
        if in_test_item {
            depth += braces(l);
            if depth <= 0 {
                in_test_item = false;
            }
            continue;
        }
        // `#[cfg(test)]`, or a test item that needs a feature too (`#[cfg(all(test, …))]`).
        if t.starts_with("#[cfg(test)]") || t.starts_with("#[cfg(all(test,") {
            skip_next_item = true;
            continue;
        }
        if skip_next_item {
            let item = t
                .trim_start_matches("pub(crate) ")
                .trim_start_matches("pub(super) ")
                .trim_start_matches("pub ");
            let starts_item = [
                "mod ",
                "fn ",
                "impl",
                "use ",
                "const ",
                "static ",
                "struct ",
                "enum ",
                "type ",
                "trait ",
                "macro_rules!",
            ]
            .iter()
            .any(|k| item.starts_with(k));
            if !starts_item {
                continue; // attributes (one or many lines) or comments before the item
            }
            skip_next_item = false;
            depth = braces(l);
            in_test_item = depth > 0 || !(t.ends_with(';') || t.ends_with('}'));
            continue;
        }
        out.push((i + 1, l.to_string()));
    }
    out
}

/// Net `{` minus `}` on a line, outside string and char literals (good enough for this
/// code base's formatting: rustfmt puts no brace of code inside a comment after code).
fn braces(l: &str) -> i64 {
    let code = l.split("//").next().unwrap_or("");
    let code = code.replace("'{'", "").replace("'}'", "");
    let mut n = 0;
    let mut in_str = false;
    let mut prev = ' ';
    for c in code.chars() {
        match c {
            '"' if prev != '\\' => in_str = !in_str,
            '{' if !in_str => n += 1,
            '}' if !in_str => n -= 1,
            _ => {}
        }
        prev = c;
    }
    n
}

/// Production lines with `//` comments removed (doc comments name things freely).
fn code_lines(p: &Path) -> Vec<(usize, String)> {
    production_lines(p)
        .into_iter()
        .filter_map(|(n, l)| {
            let code = l.split("//").next().unwrap_or("").to_string();
            (!code.trim().is_empty()).then_some((n, code))
        })
        .collect()
}

#[test]
fn the_production_line_reader_skips_tests_only() {
    let dir = std::env::temp_dir().join(format!("vf-arch-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let f = dir.join("x.rs");
    fs::write(
        &f,
        "fn a() {}\n#[cfg(test)]\n#[allow(\n    x,\n)]\nmod tests;\nfn b() { let s = \"{\"; }\n#[cfg(test)]\n#[allow(x)]\nmod t {\n    fn c() {\n    }\n}\n#[cfg(all(test, feature = \"bundled\"))] // reads the catalog\nmod u {\n    fn e() {}\n}\nfn d() {}\n",
    )
    .unwrap();
    let lines: Vec<String> = code_lines(&f).into_iter().map(|(_, l)| l).collect();
    assert_eq!(
        lines,
        ["fn a() {}", "fn b() { let s = \"{\"; }", "fn d() {}"]
    );
    fs::remove_dir_all(&dir).unwrap();
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
    // Every target, not only the host: a wasm-only web dependency counts too.
    let tree = cargo_tree("vramfit-core", "normal", "all");
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
    // A grouped import (`use std::{fs, io}`) names the module without `std::fs`.
    for f in rust_files(&root().join("crates/vramfit-core/src")) {
        for (n, line) in code_lines(&f) {
            if let Some(group) = line.split("std::{").nth(1) {
                for bad in ["fs", "net", "process", "env"] {
                    assert!(
                        !group
                            .split(|c: char| !c.is_alphanumeric() && c != '_')
                            .any(|w| w == bad),
                        "{}:{n}: `std::{bad}` in the core: {line}",
                        f.display()
                    );
                }
            }
        }
    }
    // And clippy's `disallowed_methods`/`disallowed_types` (crates/vramfit-core/clippy.toml)
    // refuse the file, network and process APIs however they are named.
    let clippy = fs::read_to_string(root().join("crates/vramfit-core/clippy.toml")).unwrap();
    for api in [
        "std::fs::read",
        "std::fs::File",
        "std::net::TcpStream",
        "std::process::Command",
    ] {
        assert!(
            clippy.contains(&format!("\"{api}\"")),
            "clippy.toml does not refuse {api}"
        );
    }
}

/// The core's modules, each with the core modules its production code names.
fn core_module_graph() -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let src = root().join("crates/vramfit-core/src");
    let mut graph = std::collections::BTreeMap::new();
    for f in rust_files(&src) {
        let rel = f.strip_prefix(&src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" {
            continue;
        }
        let deps: &mut std::collections::BTreeSet<String> = graph.entry(top.clone()).or_default();
        for (_, line) in code_lines(&f) {
            for part in line.split("crate::").skip(1) {
                let name: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                if !name.is_empty() && name != top && src.join(format!("{name}.rs")).exists() {
                    deps.insert(name);
                }
            }
        }
    }
    graph
}

#[test]
fn the_core_modules_form_no_cycle() {
    // Layering: a module only uses modules below it (plan above layout, budget above plan).
    let graph = core_module_graph();
    assert!(
        graph.contains_key("plan") && graph["plan"].contains("layout"),
        "{graph:?}"
    );
    fn visit(
        m: &str,
        g: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut std::collections::BTreeSet<String>,
    ) {
        if done.contains(m) {
            return;
        }
        if let Some(i) = path.iter().position(|p| p == m) {
            panic!(
                "core modules form a cycle: {} -> {m}",
                path[i..].join(" -> ")
            );
        }
        path.push(m.to_string());
        for d in g.get(m).into_iter().flatten() {
            visit(d, g, path, done);
        }
        path.pop();
        done.insert(m.to_string());
    }
    let mut done = std::collections::BTreeSet::new();
    for m in graph.keys() {
        visit(m, &graph, &mut Vec::new(), &mut done);
    }
}

#[test]
fn no_file_is_over_900_production_lines() {
    // STYLE.md: past ~900 lines of production code a module has a seam to split along.
    for dir in ["src", "crates"] {
        for f in rust_files(&root().join(dir)) {
            let n = production_lines(&f).len();
            assert!(
                n <= 900,
                "{}: {n} production lines (> 900): split it",
                f.display()
            );
        }
    }
}

#[test]
fn every_input_is_one_row_of_the_table_and_documented() {
    use vramfit_core::inputs::KEYS;
    let arch = fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let section = arch
        .split("## URL keys")
        .nth(1)
        .expect("ARCHITECTURE.md has a URL keys section");
    let listed: Vec<&str> = section
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .flat_map(|l| l.split('`').skip(1).step_by(2))
        .filter(|k| k.chars().all(|c| c.is_ascii_lowercase()))
        .collect();
    let mut expected: Vec<&str> = KEYS.iter().map(|k| k.url).collect();
    expected.extend(vramfit_core::share::UI_KEYS);
    for k in &expected {
        assert!(
            listed.contains(k),
            "ARCHITECTURE.md's URL keys do not list `{k}`"
        );
    }
    for k in &listed {
        assert!(
            expected.contains(k),
            "ARCHITECTURE.md lists `{k}`, which is no input"
        );
    }
    // No second field list: the URL codec and the CLI read the table, not their own.
    for f in [
        "crates/vramfit-core/src/share.rs",
        "crates/vramfit-cli/src/inputs.rs",
    ] {
        let text: String = code_lines(&root().join(f))
            .into_iter()
            .map(|(_, l)| l)
            .collect();
        for k in &KEYS {
            if k.url.len() > 3 {
                assert!(
                    !text.contains(&format!("\"{}\"", k.url)),
                    "{f} spells the URL key `{}` itself; use inputs::KEYS",
                    k.url
                );
            }
        }
    }
}

#[test]
fn the_core_keeps_the_workspace_lints() {
    // Cargo cannot extend `[lints] workspace = true`, so the core repeats the workspace's
    // rows under its own pedantic ones; a row dropped there would silently lapse.
    let rows = |text: &str, table: &str| -> Vec<String> {
        text.split(&format!("[{table}."))
            .skip(1)
            .flat_map(|t| {
                let kind = t.split(']').next().unwrap().to_string();
                t.split(']')
                    .nth(1)
                    .unwrap()
                    .split("\n[")
                    .next()
                    .unwrap()
                    .lines()
                    .filter(|l| l.contains(" = ") && !l.trim_start().starts_with('#'))
                    .map(|l| format!("{kind}.{}", l.trim()))
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let ws = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let core = fs::read_to_string(root().join("crates/vramfit-core/Cargo.toml")).unwrap();
    let ws_rows = rows(&ws, "workspace.lints");
    let core_rows = rows(&core, "lints");
    assert!(
        ws_rows.iter().any(|r| r.starts_with("rust.unsafe_code")),
        "{ws_rows:?}"
    );
    for r in &ws_rows {
        assert!(
            core_rows.contains(r),
            "the core's [lints] lack the workspace's `{r}`"
        );
    }
    assert!(core_rows
        .iter()
        .any(|r| r.starts_with("clippy.cast_possible_truncation")));
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

/// `cargo tree -e features,no-dev` for the wasm target, one line per package or feature: what
/// the shipped wasm is built with (the native unit tests' dev-dependencies left out).
fn wasm_features(package: &str) -> String {
    cargo_tree(package, "features,no-dev", "wasm32-unknown-unknown")
}

/// `cargo tree -p package -e edges --target target --prefix none --offline`, its stdout.
fn cargo_tree(package: &str, edges: &str, target: &str) -> String {
    let out = Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            package,
            "-e",
            edges,
            "--target",
            target,
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
    // compile, and neither does one to the embedded catalog (`bundled`): the page's wasm
    // carries no copy of the catalog's data, which it fetches beside the wasm. Trunk builds the page alone (features unify per build, not per workspace), so
    // the worker's and the CLI's features stay out of it: the page's tree, as cargo resolves
    // it for the wasm target, has the core without them.
    let page = wasm_features("vramfit-web");
    assert!(
        page.lines().any(|l| l.starts_with("vramfit-core v")),
        "cargo tree output looks wrong: {page}"
    );
    for feature in ["default", "import", "oom", "bundled"] {
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
                    line.contains("inner_html=chart")
                        || line.contains("inner_html=scaling_chart")
                        || line.contains("inner_html=latency_chart"),
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

#[test]
fn the_bundle_rules_hold() {
    // ARCHITECTURE.md, "Bundle policy": each of these instantiates code the page would carry
    // once more (a second JSON reader; a sort per closure). The page's crates use the core's
    // one copy instead.
    let banned = [
        "serde_json::from_slice",
        ".sort_by(",
        ".sort_by_key(",
        ".sort_unstable_by(",
    ];
    for dir in ["src", "crates/vramfit-core/src"] {
        assert_absent_outside(
            dir,
            Some("crates/vramfit-core/src/order.rs"),
            &banned,
            "(use vramfit_core::json_from_bytes / vramfit_core::order::sort_by)",
        );
    }
}
