//! Every catalog entry is a test case: it parses, its fields are consistent, and the
//! parameter count computed from its `config.json` fields matches the official count.

use std::collections::HashSet;
use vramfit_core::catalog::{Catalog, GPU_FILES, MODEL_FILES};
use vramfit_core::dtype::WeightFormat;
use vramfit_core::model::ModelArch;

fn cat() -> Catalog {
    Catalog::load().expect("bundled catalog parses")
}

#[test]
fn every_catalog_file_in_the_folders_is_embedded() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/src/catalog");
    for (dir, list) in [
        ("gpus", GPU_FILES.iter().map(|f| f.0).collect::<Vec<_>>()),
        ("models", MODEL_FILES.iter().map(|f| f.0).collect()),
    ] {
        for entry in std::fs::read_dir(format!("{root}/{dir}")).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".json") {
                let rel = format!("{dir}/{name}");
                assert!(
                    list.contains(&rel.as_str()),
                    "{rel} exists but is not listed in catalog.rs"
                );
            }
        }
    }
}

#[test]
fn catalog_sizes_meet_the_issue() {
    let c = cat();
    assert!(c.gpus.len() >= 35, "{} GPUs", c.gpus.len());
    assert!(c.models.len() >= 45, "{} models", c.models.len());
}

#[test]
fn ids_and_aliases_are_unique() {
    let c = cat();
    let mut seen = HashSet::new();
    for g in &c.gpus {
        let mut own: Vec<String> = std::iter::once(&g.id)
            .chain(g.aliases.iter())
            .map(|n| n.to_ascii_lowercase())
            .collect();
        own.sort();
        own.dedup();
        for n in own {
            assert!(seen.insert(n.clone()), "GPU name `{n}` is used by two GPUs");
        }
    }
    let mut seen = HashSet::new();
    for m in &c.models {
        assert!(
            seen.insert(m.id.to_ascii_lowercase()),
            "model id `{}` appears twice",
            m.id
        );
        for r in m
            .hf_repo_ids
            .iter()
            .chain(m.quantized_repos.iter().map(|q| &q.repo))
        {
            assert!(
                seen.insert(r.to_ascii_lowercase()),
                "repo `{r}` appears twice"
            );
        }
    }
}

#[test]
fn gpu_fields_are_present_positive_and_consistent() {
    for g in &cat().gpus {
        let ctx = &g.id;
        assert!(!g.source.trim().is_empty(), "{ctx}: source");
        assert!(
            g.memory_usable_mib > 0 && g.memory_marketed_gb > 0.0,
            "{ctx}: memory"
        );
        // Marketed HBM/GDDR sizes are binary: an "80 GB" H100 has 81920 MiB, shows 81559.
        // OK because: marketed GB is a small number.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let marketed_mib = (g.memory_marketed_gb * 1024.0).round() as u64;
        assert!(
            g.memory_usable_mib <= marketed_mib,
            "{ctx}: usable {} MiB > marketed {} GB",
            g.memory_usable_mib,
            g.memory_marketed_gb
        );
        assert!(g.memory_bandwidth_gb_per_s > 0.0, "{ctx}: bandwidth");
        let t = &g.dense_tflops;
        for (k, v) in [
            ("fp32", t.fp32),
            ("tf32", t.tf32),
            ("bf16", t.bf16),
            ("fp16", t.fp16),
            ("fp8", t.fp8),
            ("int8", t.int8),
            ("fp4", t.fp4),
        ] {
            if let Some(v) = v {
                assert!(v > 0.0 && v.is_finite(), "{ctx}: {k} = {v}");
            }
        }
        assert!(t.bf16.or(t.fp16).is_some(), "{ctx}: no 16-bit tensor rate");
        if let (Some(b), Some(f8)) = (t.bf16, t.fp8) {
            assert!(
                f8 >= b * 0.99,
                "{ctx}: fp8 {f8} below bf16 {b}: sparse/dense mix-up?"
            );
        }
        if let Some(fr) = g.unified_memory_gpu_fraction {
            assert!(fr > 0.0 && fr <= 1.0, "{ctx}: fraction");
        }
        assert!(g.gpus_per_node() >= 1);
        if let Some(p) = g.price.purchase_usd {
            assert!(
                p > 0.0 && g.price.purchase_date.is_some(),
                "{ctx}: purchase price needs a date"
            );
        }
        if let Some(p) = g.price.cloud_usd_per_hour {
            assert!(
                p > 0.0 && g.price.cloud_date.is_some(),
                "{ctx}: cloud price needs a date"
            );
        }
    }
}

#[test]
fn nvidia_smi_names_resolve() {
    let c = cat();
    for (name, id) in [
        ("NVIDIA H100 80GB HBM3", "h100-sxm"),
        ("NVIDIA A100-SXM4-80GB", "a100-80gb-sxm"),
        ("NVIDIA GeForce RTX 4090", "rtx-4090"),
        ("NVIDIA L40S", "l40s"),
    ] {
        assert_eq!(c.gpu(name).map(|g| g.id.as_str()), Some(id), "{name}");
    }
}

/// The accelerators issue 16 adds (their ids are contracts) carry the memory their tools
/// report, each number worked out by hand from the log the entry cites.
#[test]
fn issue_16_accelerators_carry_their_measured_memory() {
    let c = cat();
    let g = |id: &str| c.gpu(id).unwrap_or_else(|| panic!("{id} missing"));
    for id in [
        "gh200-96gb",
        "gh200-144gb",
        "dgx-spark-gb10",
        "ryzen-ai-max-395",
        "h20",
        "h800-sxm",
        "a800-sxm-80gb",
        "l20",
        "mi250x",
        "mi210",
        "rtx-5060-ti-16gb",
        "rtx-4060-ti-16gb",
        "rtx-3060-12gb",
        "rtx-a5000",
        "rtx-a4000",
        "arc-pro-b60",
        "jetson-agx-orin-64gb",
        "jetson-agx-thor",
    ] {
        assert_eq!(g(id).id, id);
    }
    // H20: nvidia-smi '0MiB / 97871MiB'; no CUDA total measured, so less the 450 MiB driver
    // reserve: (97871 - 450) x 2^20 = 97421 x 1,048,576 = 102,153,322,496 B.
    assert_eq!(g("h20").smi_total_bytes(), 97_871 * 1_048_576);
    assert_eq!(g("h20").usable_bytes(), 102_153_322_496);
    // GH200 'NVIDIA GH200 480GB': the 480 GB counts Grace's LPDDR5X, the GPU has 96 GB HBM3;
    // nvidia-smi 97871 MiB -> usable 97421 MiB = 95.14 GiB, below 96 GiB = 103,079,215,104 B.
    let gh = g("NVIDIA GH200 480GB");
    assert_eq!(gh.id, "gh200-96gb");
    assert_eq!(gh.usable_bytes(), 102_153_322_496);
    assert!(gh.usable_bytes() < 96 << 30);
    // MI250X: rocm-smi 'VRAM Total Memory (B): 68702699520' per device = 65520 x 2^20 exactly;
    // one entry is one GCD (ROCm shows two per module), 4 modules a node = 8 GPUs.
    let mi = g("AMD Instinct MI250X");
    assert_eq!(mi.usable_bytes(), 68_702_699_520);
    assert_eq!(mi.memory_marketed_gb, 64.0);
    assert_eq!(mi.gpus_per_node(), 8);
    // MI210: the same 68,702,699,520 B as one MI250X GCD (rocm-smi, Card Model 0x740f).
    assert_eq!(g("mi210").usable_bytes(), g("mi250x").usable_bytes());
    // DGX Spark: CUDA total 121.69 GiB -> 124610 MiB; free at boot 102.2 GiB / 121.69 = 0.84;
    // 124610 x 1,048,576 = 130,663,055,360 B x 0.84 = 109,756,966,502.4 -> 109,756,966,502 B.
    assert_eq!(g("NVIDIA GB10").usable_bytes(), 109_756_966_502);
    // Ryzen AI Max+ 395: Linux default GTT = 1/2 of RAM: 131072 MiB x 2^20 / 2 = 64 GiB.
    assert_eq!(g("ryzen-ai-max-395").usable_bytes(), 64 << 30);
    // L20: PyTorch 'total capacity: 44.53 GiB' -> 44.53 x 1024 = 45598.7 -> 45599 MiB
    // = 47,814,017,024 B, below nvidia-smi's 46068 MiB.
    assert_eq!(g("NVIDIA L20").usable_bytes(), 47_814_017_024);
    // H800 / A800: same silicon as H100 SXM / A100 80GB SXM, NVLink cut to 400 GB/s
    // bidirectional = 200 GB/s per direction (H100 900 -> 450, A100 600 -> 300).
    let (h800, h100) = (g("NVIDIA H800 80GB HBM3"), g("h100-sxm"));
    assert_eq!(h800.dense_tflops, h100.dense_tflops);
    assert_eq!((h800.link_gb_per_s(), h100.link_gb_per_s()), (200.0, 450.0));
    let (a800, a100) = (g("NVIDIA A800-SXM4-80GB"), g("a100-80gb-sxm"));
    assert_eq!(a800.dense_tflops, a100.dense_tflops);
    assert_eq!((a800.link_gb_per_s(), a100.link_gb_per_s()), (200.0, 300.0));
    // H20: 148 dense BF16 TFLOPS = 148 / 989.4 = 15% of H100 SXM, same 900 GB/s NVLink.
    assert_eq!(g("h20").dense_tflops.bf16, Some(148.0));
    assert_eq!(g("h20").link_gb_per_s(), 450.0);
}

#[test]
fn parameter_counts_match_official_counts() {
    let mut failures = Vec::new();
    for m in &cat().models {
        let arch = match m.arch() {
            Ok(a) => a,
            Err(e) => {
                failures.push(format!("{}: config unusable: {e}", m.id));
                continue;
            }
        };
        let p = arch.params();
        let computed = p.total();
        // Some checkpoints with tied embeddings still store `lm_head.weight` (Qwen3-0.6B:
        // 596,049,920 + 151,936 × 1,024 = 751,632,384 in its safetensors), so the official
        // count may include one more vocab × hidden.
        let stored_copy = if arch.tied_embeddings {
            arch.vocab * arch.hidden
        } else {
            0
        };
        // OK because: parameter counts are below 2^53.
        #[allow(clippy::cast_precision_loss)]
        let rel = |c: u64| (c as f64 - m.parameters_total as f64).abs() / m.parameters_total as f64;
        let err = rel(computed).min(rel(computed + stored_copy));
        if err > 0.005 {
            failures.push(format!(
                "{}: computed {computed} vs official {} ({:.2}%)",
                m.id,
                m.parameters_total,
                err * 100.0
            ));
        }
        assert!(
            !m.source.is_empty() && !m.parameters_source.is_empty(),
            "{}: sources",
            m.id
        );
        assert!(
            m.parameters_active <= m.parameters_total,
            "{}: active > total",
            m.id
        );
        for q in &m.quantized_repos {
            assert!(
                WeightFormat::parse(&q.format).is_some(),
                "{}: unknown format {}",
                q.repo,
                q.format
            );
        }
    }
    assert!(
        failures.is_empty(),
        "parameter mismatches:\n{}",
        failures.join("\n")
    );
}

#[test]
fn sources_file_is_read_by_id_and_bad_files_are_named() {
    use vramfit_core::catalog::Sources;
    let c = cat();
    // The shape scripts/catalog_sources.py writes.
    let gpus: serde_json::Map<String, serde_json::Value> = c
        .gpus
        .iter()
        .map(|g| (g.id.clone(), g.source.clone().into()))
        .collect();
    let models: serde_json::Map<String, serde_json::Value> = c
        .models
        .iter()
        .map(|m| (m.id.clone(), m.source.clone().into()))
        .collect();
    let text = serde_json::json!({"gpus": gpus, "models": models}).to_string();
    let s = Sources::from_json(text.as_bytes()).expect("parses");
    for g in &c.gpus {
        assert_eq!(s.gpu(&g.id), Some(g.source.as_str()));
        assert!(
            !g.source.is_empty(),
            "{}: the native catalog keeps sources",
            g.id
        );
    }
    for m in &c.models {
        assert_eq!(s.model(&m.id), Some(m.source.as_str()));
    }
    assert_eq!(s.gpu("no-such-gpu"), None);
    assert!(Sources::from_json(b"<html>")
        .unwrap_err()
        .contains("not JSON"));
    assert!(Sources::from_json(br#"{"gpus":{}}"#)
        .unwrap_err()
        .contains("`models`"));
}

/// A config assembled from corroborating copies is flagged (`config_verbatim: false`), and
/// its source says so in the words CONTRIBUTING asks for; a verbatim one is not flagged.
#[test]
fn reconstructed_configs_are_flagged_and_say_so() {
    let c = cat();
    let mut flagged = 0;
    for m in &c.models {
        let says = {
            let s = m.source.to_ascii_lowercase();
            s.contains("no verbatim") || s.contains("not a verbatim")
        };
        assert_eq!(
            !m.config_verbatim,
            says,
            "{}: config_verbatim is {} but the source {} say it is not verbatim",
            m.id,
            m.config_verbatim,
            if says { "does" } else { "does not" }
        );
        flagged += usize::from(!m.config_verbatim);
    }
    assert!(
        flagged > 0 && flagged < c.models.len() / 4,
        "{flagged} flagged"
    );
}

// `config_keys` and `slim_config`, as the build script uses them.
include!("../../src/catalog/wasm_slim.rs");

/// The web file (`catalog::WEB_FILE`) carries each model's `config` with only the keys `model.rs` can read
/// (`build.rs`, `src/catalog/wasm_slim.rs`); every model must size the same from it.
#[test]
fn the_web_catalog_sizes_like_the_full_one() {
    let keys = config_keys(concat!(
        include_str!("../../src/model.rs"),
        include_str!("../../src/model/aliases.rs"),
        include_str!("../../src/model/read.rs"),
        include_str!("../../src/model/vision.rs")
    ));
    let mut slimmed = 0;
    for m in &cat().models {
        let mut config = m.config.clone();
        slim_config(&mut config, &keys);
        slimmed += usize::from(config != m.config);
        // An entry's format is its `stored_dtype`, not its `quantization_config` (which the
        // web file leaves out): `Model::arch` clears it.
        let read = |c: &serde_json::Value| {
            ModelArch::from_config(c).map(|mut a| {
                a.config_quantization = None;
                a
            })
        };
        assert_eq!(read(&config), read(&m.config), "{}", m.id);
    }
    // Most configs carry keys sizing never reads (token ids, initializer_range, ...).
    assert!(slimmed * 2 > cat().models.len(), "{slimmed} slimmed");
}

/// A repo an entry lists loads with that entry's config: where a repo's own `config.json`
/// records another `max_position_embeddings` (vLLM's default `--max-model-len`, the longest
/// length it accepts), the repo resolves to an entry that records its value, or to none (it is
/// imported from the Hub with its own config). The values are the repos' configs as the
/// entries' sources and notes cite them.
#[test]
fn a_repo_resolves_to_an_entry_with_its_own_context_length() {
    let cat = cat();
    let listed = |repo: &str| {
        cat.model(repo)
            .map(|m| m.model.arch().unwrap().max_position_embeddings)
    };
    for (repo, own, in_catalog) in [
        ("Qwen/Qwen2.5-7B-Instruct", 32_768, true),
        ("Qwen/Qwen2.5-7B-Instruct-AWQ", 32_768, true),
        ("Qwen/Qwen2.5-7B", 131_072, true),
        ("Qwen/Qwen2.5-14B-Instruct", 32_768, true),
        ("Qwen/Qwen2.5-14B", 131_072, true),
        ("Qwen/Qwen2.5-32B-Instruct", 32_768, true),
        ("Qwen/Qwen2.5-32B", 131_072, true),
        ("Qwen/Qwen2.5-72B-Instruct", 32_768, true),
        ("Qwen/Qwen2.5-72B", 131_072, false),
        ("Qwen/Qwen3-8B", 40_960, true),
        ("Qwen/Qwen3-8B-Base", 32_768, false),
        ("Qwen/Qwen3-30B-A3B-Base", 32_768, false),
        (
            "meta-llama/Llama-4-Scout-17B-16E-Instruct",
            10_485_760,
            true,
        ),
        ("meta-llama/Llama-4-Scout-17B-16E", 262_144, false),
        ("meta-llama/Llama-4-Maverick-17B-128E", 262_144, false),
    ] {
        let got = listed(repo);
        assert!(
            got.is_none() || got == Some(own),
            "{repo}: {got:?}, its config says {own}"
        );
        assert_eq!(got.is_some(), in_catalog, "{repo}");
    }
}
