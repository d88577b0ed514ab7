//! GPU names as people write them (`catalog::names`): every row of every
//! `tests/data/gpu_spellings*.csv` (columns `spelling,expected_id,source`, and optionally
//! `ambiguous` = `yes`/`no`: whether the name fits several entries and gets a notice), and the
//! ranking of suggestions for unknown names.

use vramfit_core::catalog::{Catalog, MatchKind};

fn cat() -> Catalog {
    Catalog::load().expect("catalog loads")
}

/// The fields of one CSV line (RFC 4180 quotes; no newlines inside fields).
fn fields(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// `(file, spelling, expected id, ambiguous?)` of every spelling file.
fn rows() -> Vec<(String, String, String, Option<bool>)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/data")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("gpu_spellings") && n.ends_with(".csv"))
        })
        .collect();
    files.sort();
    assert!(
        files.iter().any(|p| p.ends_with("gpu_spellings.csv")),
        "gpu_spellings.csv is missing"
    );
    let mut out = Vec::new();
    for path in files {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(&path).expect("readable");
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let head = fields(lines.next().expect("a header"));
        let col = |c: &str| head.iter().position(|h| h == c);
        let (s, e, src) = (
            col("spelling").expect("spelling column"),
            col("expected_id").expect("expected_id column"),
            col("source").expect("source column"),
        );
        let amb = col("ambiguous");
        for line in lines {
            let f = fields(line);
            assert!(
                f.get(src).is_some_and(|x| !x.trim().is_empty()),
                "{name}: `{line}` has no source"
            );
            let ambiguous = amb.and_then(|a| f.get(a)).map(|x| x == "yes");
            out.push((name.clone(), f[s].clone(), f[e].clone(), ambiguous));
        }
    }
    out
}

#[test]
fn every_real_spelling_resolves_to_its_entry() {
    let c = cat();
    let rows = rows();
    let mine = rows
        .iter()
        .filter(|r| r.0.ends_with("gpu_spellings.csv"))
        .count();
    assert!(
        mine >= 60,
        "gpu_spellings.csv has {mine} rows, want at least 60"
    );
    let mut failures = Vec::new();
    for (file, spelling, want, ambiguous) in &rows {
        let got = c.resolve_gpu(spelling);
        let ok = match (want.as_str(), &got) {
            ("unknown", Err(_)) => true,
            ("unknown", Ok(_)) | (_, Err(_)) => false,
            (id, Ok(m)) => {
                m.gpu.id == id
                    && ambiguous.is_none_or(|a| {
                        a == m.notice.is_some() && a == (m.how == MatchKind::MostCommon)
                    })
            }
        };
        if !ok {
            let got = match got {
                Ok(m) => format!("{} ({:?}, notice {:?})", m.gpu.id, m.how, m.notice),
                Err(e) => e.to_string(),
            };
            failures.push(format!(
                "{file}: `{spelling}`: want {want} (ambiguous {ambiguous:?}), got {got}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_most_common_variant_comes_with_a_notice_naming_the_others() {
    let c = cat();
    // The bare H100 is the SXM5 part (its alias `H100`); the PCIe (80 GB) and the NVL (94 GB)
    // fit too, and differ in memory and form factor.
    let m = c.resolve_gpu("H100").unwrap();
    assert_eq!(m.gpu.id, "h100-sxm");
    let others: Vec<_> = m.others.iter().map(|g| g.id.as_str()).collect();
    assert_eq!(others, ["h100-pcie", "h100-nvl"]);
    assert_eq!(
        m.notice.as_deref(),
        Some(
            "`H100` read as NVIDIA H100 SXM5 80GB; also: h100-pcie, h100-nvl \
             — name the memory size or form factor to pick one"
        )
    );
    // 80 GB leaves the SXM5 and the PCIe card (94 GB is 17.5 % away, past the 8 %), which
    // differ only in form factor.
    let m = c.resolve_gpu("NVIDIA H100 80GB").unwrap();
    assert_eq!(
        m.notice.as_deref(),
        Some(
            "`NVIDIA H100 80GB` read as NVIDIA H100 SXM5 80GB; also: h100-pcie \
             — name the form factor to pick one"
        )
    );
    // HBM3 rules the PCIe card out (HBM2e): nvidia-smi's name of the SXM5 part is exact.
    let m = c.resolve_gpu("NVIDIA H100 80GB HBM3").unwrap();
    assert_eq!((m.gpu.id.as_str(), m.notice), ("h100-sxm", None));
    // The A100 PCIe read as the 80 GB card (its alias `A100 PCIe`), the 40 GB named.
    let m = c.resolve_gpu("A100 PCIe").unwrap();
    assert_eq!(m.gpu.id, "a100-80gb-pcie");
    assert_eq!(
        m.others.iter().map(|g| g.id.as_str()).collect::<Vec<_>>(),
        ["a100-40gb-pcie"]
    );
    // 40 GB leaves two entries with no alias that fits: the first in catalog order (SXM).
    let m = c.resolve_gpu("NVIDIA A100 40GB").unwrap();
    assert_eq!(m.gpu.id, "a100-40gb-sxm");
    assert!(m
        .notice
        .is_some_and(|n| n.ends_with("name the form factor to pick one")));
    // An id is an id.
    assert_eq!(c.resolve_gpu("h100-pcie").unwrap().how, MatchKind::Id);
}

#[test]
fn a_name_that_contradicts_every_entry_is_unknown() {
    let c = cat();
    // No H100 has 40 GB (80, 80, 94); no L40S is an SXM module; no M4 Max entry has 64 GB.
    for name in [
        "H100 40GB",
        "L40S SXM",
        "Apple M4 Max 64GB",
        "H100 GDDR6",
        "V100 80GB",
    ] {
        assert!(c.resolve_gpu(name).is_err(), "{name}");
        assert!(c.gpu(name).is_none(), "{name}");
    }
}

#[test]
fn h100_like_misses_suggest_the_h100s_first() {
    let c = cat();
    // `H100 40GB`: words `h`, `100`. Each H100 entry has both: 6 + 6 = 12. The H200s: `h` 6,
    // `100` one digit from `200` (2), `200` missing (-1): 7. The A100 40GB entries have `100`
    // (6), not `h` (single letters score only when equal), lack `a` (-1), and agree on 40 GB
    // (+1): 6. The V100s: 6 - 1 = 5.
    let e = c.resolve_gpu("H100 40GB").unwrap_err();
    assert_eq!(
        e.suggestions,
        ["h100-sxm", "h100-pcie", "h100-nvl", "h200-sxm", "h200-nvl"]
    );
    assert_eq!(
        e.to_string(),
        format!(
            "unknown GPU `H100 40GB`; closest catalog ids: {}",
            e.suggestions.join(", ")
        )
    );
    // `h10` (the CLI's test typo): `h` 6, `10` is one digit from `100` (2), `100` missing (-1):
    // 7 for the H100s; the A10: `10` 6, `a` missing: 5.
    let e = c.resolve_gpu("h10").unwrap_err();
    assert!(e.suggestions[0].starts_with("h100"), "{:?}", e.suggestions);
}

#[test]
fn v100_typos_suggest_the_v100s_first() {
    let c = cat();
    // `V1000`: `v` 6, `1000` one digit from `100` (2), `100` missing (-1): 7 for both V100s;
    // the H100s: 2 - 2 = 0 (not suggested).
    let e = c.resolve_gpu("Tesla V1000").unwrap_err();
    assert_eq!(&e.suggestions[..2], ["v100-16gb", "v100-32gb"]);
    assert!(
        !e.suggestions.iter().any(|s| s.starts_with("h100")),
        "{:?}",
        e.suggestions
    );
    // `V100S` (vllm-project/vllm#10147's collect_env; not in the catalog): `v` 6, `100` 6,
    // `s` 0: 12.
    let e = c.resolve_gpu("Tesla V100S-PCIE-32GB").unwrap_err();
    assert_eq!(e.suggestions[0], "v100-32gb", "{:?}", e.suggestions);
}

#[test]
fn new_entries_resolve_from_their_name_alone() {
    // An entry with no aliases resolves from the structure of its name.
    let mut c = cat();
    let mut g = c.gpus.iter().find(|g| g.id == "l40s").unwrap().clone();
    g.id = "a40".into();
    g.name = "NVIDIA A40 48GB".into();
    g.aliases.clear();
    c.gpus.push(g);
    for name in ["NVIDIA A40", "A40 48 GB", "a40-48g", "NVIDIA A40 (48GB)"] {
        assert_eq!(c.gpu(name).map(|g| g.id.as_str()), Some("a40"), "{name}");
    }
    assert!(c.gpu("A40 24GB").is_none());
}

#[test]
fn every_catalog_name_and_alias_resolves_to_its_own_entry() {
    let c = cat();
    for g in &c.gpus {
        for name in std::iter::once(&g.name).chain(&g.aliases) {
            let m = c.resolve_gpu(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(m.gpu.id, g.id, "`{name}`");
        }
    }
}

#[test]
fn garbage_is_unknown_never_a_panic() {
    let c = cat();
    for name in [
        "",
        "   ",
        "((((",
        "...",
        "\u{2026}",
        "NVIDIA",
        "80GB",
        "H100 99999999999999999999999999999GB",
        "H100 0GB",
        "GB",
        "ＨＢＭ３",
        "GPU 0:",
    ] {
        assert!(c.resolve_gpu(name).is_err(), "`{name}`");
    }
    // No word in common with any entry: nothing to suggest, and the message says so.
    let e = c.resolve_gpu("zzzz").unwrap_err();
    assert!(e.suggestions.is_empty());
    assert_eq!(
        e.to_string(),
        "unknown GPU `zzzz`; no catalog GPU shares a word with it"
    );
}
