//! The CLI's contracts: flags spelled as `vllm serve` spells them, `--json` field names,
//! exit codes (0 fits, 1 does not fit / rejected file, 2 usage error).

use std::process::{Command, Output};

fn vramfit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(args)
        .output()
        .expect("runs")
}

/// `vramfit ARGS…` with these environment variables (and no Hub variables of the caller's).
fn vramfit_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vramfit"));
    for k in [
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "HF_HUB_OFFLINE",
        "HF_ENDPOINT",
        "VRAMFIT_CACHE_DIR",
    ] {
        c.env_remove(k);
    }
    c.args(args)
        .envs(env.iter().copied())
        .output()
        .expect("runs")
}

#[path = "cli/hub.rs"]
mod hub;

fn json(args: &[&str]) -> serde_json::Value {
    let o = vramfit(args);
    assert!(
        o.status.success() || o.status.code() == Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../vramfit-core/tests/fixtures/safetensors"
);

#[test]
fn help_and_version() {
    let h = vramfit(&["--help"]);
    assert!(h.status.success());
    let text = String::from_utf8_lossy(&h.stdout);
    for cmd in ["plan", "check", "fit", "scale", "models", "gpus", "inspect"] {
        assert!(text.contains(cmd), "{cmd} missing from --help");
    }
    let v = vramfit(&["--version"]);
    assert!(String::from_utf8_lossy(&v.stdout).starts_with("vramfit "));
}

#[test]
fn plan_json_has_the_documented_fields() {
    let j = json(&[
        "plan",
        "Qwen/Qwen2.5-7B-Instruct",
        "--gpu",
        "NVIDIA H100 80GB HBM3",
        "--tensor-parallel-size",
        "1",
        "--max-model-len",
        "8192",
        "--gpu-memory-utilization",
        "0.95",
        "--kv-cache-dtype",
        "auto",
        "--json",
    ]);
    for k in [
        "fits",
        "verdict",
        "tensor_parallel_size",
        "pipeline_parallel_size",
    ] {
        assert!(j.get(k).is_some(), "{k}");
    }
    let g = &j["per_gpu"];
    for k in [
        "weights_bytes",
        "activation_bytes",
        "non_torch_bytes",
        "cuda_graph_bytes",
        "kv_pool_bytes",
        "kv_bytes_per_token",
        "kv_blocks",
        "kv_tokens",
        "max_concurrency",
    ] {
        assert!(
            g.get(k).is_some_and(serde_json::Value::is_number),
            "per_gpu.{k}"
        );
    }
    // Hand-worked: 28 layers × 2 × 4 KV heads × 128 × 2 B.
    assert_eq!(g["kv_bytes_per_token"], 57_344);
    assert!(g["weights_bytes"].is_u64(), "bytes are integers");
    assert_eq!(j["fits"], true);
}

#[test]
fn plan_json_says_where_the_weights_came_from() {
    // gpt-oss-20b on H100: 14,695,863,424 B with the Marlin MXFP4 expert padding (worked by
    // hand in vramfit-core's tests/it/quant_layouts.rs), counted from the config.
    let j = json(&[
        "plan",
        "gpt-oss-20b",
        "--gpu",
        "h100",
        "--tp",
        "1",
        "--json",
    ]);
    assert_eq!(j["per_gpu"]["weights_bytes"], 14_695_863_424_u64);
    let w = &j["weights_source"];
    assert_eq!(w["quantity"], "weights");
    assert_eq!(w["source"], "config");
    // 24 layers × (461,815,808 − 423,567,360) B of padding over the checkpoint's shapes.
    let detail = w["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("917962752 B"), "{detail}");
}

#[test]
fn check_exit_codes() {
    let ok = vramfit(&[
        "check",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--max-model-len",
        "8192",
    ]);
    assert_eq!(ok.status.code(), Some(0));
    let no = vramfit(&[
        "check",
        "llama-3.1-70b",
        "--gpu",
        "rtx-4090",
        "--tensor-parallel-size",
        "1",
    ]);
    assert_eq!(no.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&no.stdout).contains("--tensor-parallel-size"));
    let bad = vramfit(&["check", "llama-3.1-8b", "--gpu", "h10"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("unknown GPU `h10`") && err.contains("h100-sxm"),
        "{err}"
    );
    let bad = vramfit(&["plan", "lama-3.1-8b", "--gpu", "h100-sxm"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("llama-3.1-8b"));
    assert_eq!(
        vramfit(&[
            "plan",
            "llama-3.1-8b",
            "--gpu",
            "h100-sxm",
            "--max-model-len",
            "0"
        ])
        .status
        .code(),
        Some(2)
    );
}

#[test]
fn quantized_repo_ids_resolve_to_their_format() {
    let j = json(&[
        "plan",
        "RedHatAI/Meta-Llama-3.1-8B-Instruct-quantized.w8a8",
        "--gpu",
        "h100-sxm",
        "--json",
    ]);
    assert_eq!(j["format"], "int8-w8a8");
    let j = json(&[
        "plan",
        "RedHatAI/Qwen2.5-7B-Instruct-FP8-dynamic",
        "--gpu",
        "h100-sxm",
        "--json",
    ]);
    assert_eq!(j["format"], "fp8");
}

#[test]
fn fit_answers_inverse_questions() {
    // 72B-class dense models start on 2 × H100 at util 0.95 and 8192 tokens (vLLM v0.19 logs of
    // Qwen2.5-72B / Kimi-Dev-72B at TP 2: 3.0 GiB KV pool, ../shared/calibration), but not at
    // 65536 tokens (10 GiB per request on a 5 GiB pool): then 3 GPUs (PP 3; TP 3 does not
    // divide 64 heads).
    let j = json(&[
        "fit",
        "llama-3.1-70b",
        "--gpu",
        "h100-sxm",
        "--find",
        "gpus",
        "--max-model-len",
        "8192",
        "--gpu-memory-utilization",
        "0.95",
        "--json",
    ]);
    assert_eq!(j["answer"], 2);
    let j = json(&[
        "fit",
        "llama-3.1-70b",
        "--gpu",
        "h100-sxm",
        "--find",
        "gpus",
        "--max-model-len",
        "65536",
        "--gpu-memory-utilization",
        "0.95",
        "--json",
    ]);
    assert_eq!(
        (j["answer"].as_u64(), j["pipeline_parallel_size"].as_u64()),
        (Some(3), Some(3))
    );
    let j = json(&[
        "fit",
        "llama-3.1-8b",
        "--gpu",
        "l4",
        "--find",
        "context",
        "--users",
        "4",
        "--json",
    ]);
    assert!(j["answer"].as_u64().unwrap() > 1000);
    let j = json(&[
        "fit",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--find",
        "concurrency",
        "--json",
    ]);
    assert!(j["answer"].as_u64().unwrap() > 10);
    let rows = json(&[
        "fit",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--find",
        "cheapest",
        "--json",
    ]);
    assert!(rows.as_array().unwrap().len() > 10);
}

#[test]
fn scale_json_covers_tp_and_pp() {
    let j = json(&[
        "scale",
        "llama-3.1-70b",
        "--gpu",
        "h100-sxm",
        "--input-len",
        "2048",
        "--output-len",
        "128",
        "--json",
    ]);
    let pts = j["points"].as_array().unwrap();
    for (tp, pp) in [(1, 1), (2, 1), (4, 1), (8, 1), (1, 2), (1, 4), (1, 8)] {
        let p = pts
            .iter()
            .find(|p| p["tensor_parallel_size"] == tp && p["pipeline_parallel_size"] == pp);
        let p = p.unwrap_or_else(|| panic!("TP {tp} PP {pp} missing"));
        for k in ["tokens_per_s_total", "tokens_per_s_per_gpu"] {
            assert!(p[k].is_number());
        }
    }
}

#[test]
fn catalog_listings_have_the_contract_fields() {
    let g = json(&["gpus", "--json"]);
    let g = g.as_array().unwrap();
    assert!(g.len() >= 35);
    for k in [
        "id",
        "name",
        "aliases",
        "memory_usable_bytes",
        "memory_bandwidth_gb_per_s",
        "dense_tflops",
        "source",
    ] {
        assert!(g[0].get(k).is_some(), "gpus.{k}");
    }
    for k in ["fp32", "bf16", "fp16", "fp8", "int8", "fp4"] {
        assert!(g[0]["dense_tflops"].get(k).is_some(), "dense_tflops.{k}");
    }
    // The node (the tensor-parallel limit) beside the link's domain: H100 NVL pairs in
    // servers of 8, RTX 4090s two to a desktop.
    let by_id = |id: &str| g.iter().find(|x| x["id"] == id).unwrap().clone();
    let nvl = by_id("h100-nvl");
    assert_eq!(
        (
            nvl["node_gpus"].as_u64(),
            nvl["interconnect"]["gpus_per_node"].as_u64()
        ),
        (Some(8), Some(2))
    );
    assert_eq!(by_id("rtx-4090")["node_gpus"], 2);
    assert_eq!(by_id("h100-sxm")["node_gpus"], 8);
    let m = json(&["models", "--json"]);
    let m = m.as_array().unwrap();
    assert!(m.len() >= 45);
    for k in [
        "id",
        "hf_repo_ids",
        "num_hidden_layers",
        "hidden_size",
        "intermediate_size",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "vocab_size",
        "parameter_count",
        "source",
    ] {
        assert!(m[0].get(k).is_some(), "models.{k}");
    }
    // Every entry says whether its config.json is a verbatim copy; a few are not.
    let verbatim: Vec<bool> = m
        .iter()
        .map(|e| e["config_verbatim"].as_bool().expect("config_verbatim"))
        .collect();
    assert!(verbatim.contains(&false) && verbatim.contains(&true));
    let r = m.iter().find(|e| e["id"] == "llama-3.1-405b").unwrap();
    assert_eq!(r["config_verbatim"], false);
}

#[test]
fn inspect_reports_and_rejects() {
    let j = json(&[
        "inspect",
        &format!("{FIXTURES}/valid_bf16.safetensors"),
        "--json",
    ]);
    for k in [
        "tensor_count",
        "parameter_count",
        "bytes_per_dtype",
        "dtypes",
        "fp32_checkpoint",
    ] {
        assert!(j.get(k).is_some(), "{k}");
    }
    assert!(j["bytes_per_dtype"].get("BF16").is_some());
    let o = vramfit(&["inspect", &format!("{FIXTURES}/overlap.safetensors")]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("overlap.safetensors"));
    let o = vramfit(&["inspect", &format!("{FIXTURES}/short.safetensors")]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn oom_explains_a_pytorch_message_from_stdin() {
    use std::io::Write;
    let msg = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 3.06 MiB is free. Process 1234 has 23.64 GiB memory in use. Of the allocated memory 16.97 GiB is allocated by PyTorch, and 6.27 GiB is reserved by PyTorch but unallocated.";
    let mut child = Command::new(env!("CARGO_BIN_EXE_vramfit"))
        .args(["oom", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(msg.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // 20.00 MiB = 20 × 2^20 B; 23.65 GiB = 23.65 × 2^30 = 25,393,994,137.6 → 25,393,994,138 B.
    assert_eq!(j["report"]["tried_to_allocate_bytes"], 20_971_520);
    assert_eq!(j["report"]["total_capacity_bytes"], 25_393_994_138u64);
    assert!(j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["cause"] == "Fragmentation"));
    let o = vramfit(&["oom", "/nonexistent/file"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn check_command_contract() {
    let issue = "vllm serve meta-llama/Llama-3.1-70B-Instruct \\\n  --tensor-parallel-size 4 --quantization awq";
    let o = vramfit(&["check", "--command", issue, "--gpu", "h100-sxm", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in [
        "fits",
        "verdict",
        "model",
        "engine",
        "tensor_parallel_size",
        "per_gpu",
    ] {
        assert!(!j[k].is_null(), "plan field `{k}` kept");
    }
    for k in [
        "starts",
        "repo",
        "command_checks",
        "unmodelled_flags",
        "env",
    ] {
        assert!(!j[k].is_null(), "command field `{k}`");
    }
    let c = &j["command_checks"][0];
    assert_eq!(c["id"], "quantization_mismatch");
    assert!(c["flags"].is_array() && c["message"].is_string());
    let ok = vramfit(&[
        "check",
        "--command",
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192",
        "--gpu",
        "h100-sxm",
    ]);
    assert_eq!(ok.status.code(), Some(0));
}

#[test]
fn an_ambiguous_gpu_is_read_as_its_most_common_variant_with_a_notice() {
    // `H100` fits h100-sxm, h100-pcie and h100-nvl (catalog::names): the plan is the SXM5's,
    // the notice goes to stderr in text mode and into `gpu_notice` in the JSON.
    let o = vramfit(&["plan", "llama-3.1-8b", "--gpu", "H100"]);
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("note: `H100` read as NVIDIA H100 SXM5 80GB; also: h100-pcie, h100-nvl"),
        "{err}"
    );
    let j = json(&["plan", "llama-3.1-8b", "--gpu", "H100", "--json"]);
    assert_eq!(j["gpu"], "h100-sxm");
    assert!(j["gpu_notice"]
        .as_str()
        .is_some_and(|n| n.contains("also: h100-pcie, h100-nvl")));
    // `scale` and `fit` say it on stderr in every mode, and in `gpu_notice` in their JSON.
    for args in [
        &[
            "scale",
            "llama-3.1-8b",
            "--gpu",
            "H100",
            "--concurrency",
            "4",
            "--json",
        ][..],
        &[
            "fit",
            "llama-3.1-8b",
            "--gpu",
            "H100",
            "--find",
            "context",
            "--json",
        ],
    ] {
        let j = json(args);
        assert!(
            j["gpu_notice"]
                .as_str()
                .is_some_and(|n| n.contains("also: h100-pcie, h100-nvl")),
            "{args:?}: {j}"
        );
    }
    for args in [
        &[
            "scale",
            "llama-3.1-8b",
            "--gpu",
            "H100",
            "--concurrency",
            "4",
            "--json",
        ][..],
        &["fit", "llama-3.1-8b", "--gpu", "H100", "--find", "context"],
    ] {
        let o = vramfit(args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("note: `H100` read as NVIDIA H100 SXM5 80GB"),
            "{args:?}: {err}"
        );
    }
    // An exact name has no notice and no field.
    let j = json(&[
        "plan",
        "llama-3.1-8b",
        "--gpu",
        "NVIDIA H100 80GB HBM3",
        "--json",
    ]);
    assert_eq!(j["gpu"], "h100-sxm");
    assert!(j.get("gpu_notice").is_none());
    // No H100 has 40 GB: unknown (exit 2), the H100s suggested.
    let bad = vramfit(&["plan", "llama-3.1-8b", "--gpu", "H100 40GB"]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("unknown GPU `H100 40GB`; closest catalog ids: h100-sxm, h100-pcie, h100-nvl"),
        "{err}"
    );
}

/// `plan --json` of a config whose experts-per-token field is absent: sized with the stated
/// assumption (`assumptions`), every read value's source listed (`provenance`).
#[test]
fn plan_json_lists_assumptions_and_provenance() {
    let text = include_str!("../../vramfit-core/tests/data/configs/gemma-4-26b-a4b-it.config.json");
    let mut v: serde_json::Value = serde_json::from_str(text).unwrap();
    v["text_config"]
        .as_object_mut()
        .unwrap()
        .remove("top_k_experts");
    let dir = std::env::temp_dir().join(format!("vramfit-cli-assume-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = dir.join("config.json");
    std::fs::write(&cfg, v.to_string()).unwrap();
    let j = json(&["plan", cfg.to_str().unwrap(), "--gpu", "h100-sxm", "--json"]);
    let a = j["assumptions"].as_array().expect("assumptions is a list");
    assert_eq!(a.len(), 1);
    assert_eq!(a[0]["field"], "experts_per_token");
    assert_eq!(a[0]["value"], "8");
    assert!(a[0]["why"].as_str().unwrap().contains("top_k_experts"));
    let p = j["provenance"].as_array().expect("provenance is a list");
    assert!(p.iter().any(|e| e["quantity"] == "head_dim.global"
        && e["source"] == "config"
        && e["detail"] == "global_head_dim"));
    assert!(j["warnings"].as_array().unwrap().iter().any(|w| w
        .as_str()
        .unwrap()
        .starts_with("assumed experts_per_token = 8")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn budget_json_has_the_documented_fields_and_exit_codes() {
    let j = json(&[
        "budget",
        "llama-3.1-70b",
        "--max-model-len",
        "8192",
        "--years",
        "3",
        "--kwh-price",
        "0.10",
        "--pue",
        "1.3",
        "--api-input-price",
        "0.23",
        "--api-output-price",
        "0.40",
        "--json",
    ]);
    assert_eq!(j["years"], 3.0);
    assert_eq!(j["kwh_price_usd"], 0.10);
    assert!(j["prices_oldest"].is_string() && j["prices_newest"].is_string());
    let options = j["options"].as_array().unwrap();
    assert!(options.len() > 40, "{}", options.len());
    for key in [
        "gpu",
        "gpus",
        "nodes",
        "layout",
        "purchase_usd",
        "servers_usd",
        "power_kw",
        "energy_usd_per_year",
        "tco_usd",
        "cloud_usd_per_hour",
        "usd_per_million_tokens",
        "tokens_per_s",
        "limited_by",
        "excluded",
        "excluded_because",
        "platform",
        "engine",
        "on_demand_usd",
        "api_usd",
        "buy_beats_api_above_tokens_per_month",
    ] {
        assert!(options[0].get(key).is_some(), "options[0] has no `{key}`");
    }
    let hgx = options
        .iter()
        .find(|o| o["gpu"] == "h100-sxm" && o["platform"] == "hgx-h100-8gpu")
        .unwrap();
    assert_eq!(hgx["gpus"], 8);
    assert_eq!(hgx["nodes"], 1);
    assert_eq!(hgx["purchase_usd"], 260_000.0);
    // 10.2 kW × PUE 1.3 × 8766 h × (0.6 + 0.4 × 0.25) × $0.10.
    let e = hgx["energy_usd_per_year"].as_f64().unwrap();
    assert!((e - 10.2 * 1.3 * 8766.0 * 0.7 * 0.10).abs() < 1e-6, "{e}");
    // Kept options come first.
    let first_excluded = options.iter().position(|o| o["excluded"] == true).unwrap();
    assert!(options[first_excluded..]
        .iter()
        .all(|o| o["excluded"] == true));

    // A budget nothing meets: every option excluded, with a reason; exit 1.
    let o = vramfit(&[
        "budget",
        "llama-3.1-70b",
        "--max-budget-usd",
        "10",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for opt in j["options"].as_array().unwrap() {
        assert_eq!(opt["excluded"], true);
        assert!(!opt["excluded_because"].as_str().unwrap().is_empty());
    }
    // Bad values and unknown models are usage errors naming the flag.
    let o = vramfit(&["budget", "llama-3.1-8b", "--pue", "0.5"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("`--pue` must be between 1 and 3"));
    let o = vramfit(&["budget", "llama-3.1-8b", "--vendor", "via"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown GPU vendor `via`"));
    let o = vramfit(&["budget", "no-such-model"]);
    assert_eq!(o.status.code(), Some(2));
    // The table says how old the prices are.
    let o = vramfit(&["budget", "llama-3.1-8b"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("prices dated"));
}

/// Issue 18: the feature flags as `vllm serve` spells them, and `plan --json`'s feature
/// fields (each 0 when the feature is off).
#[test]
fn plan_json_has_the_feature_fields() {
    const FIELDS: [&str; 6] = [
        "mm_reserved_bytes",
        "encoder_cache_bytes",
        "lora_bytes",
        "draft_weights_bytes",
        "draft_kv_bytes",
        "cpu_offload_bytes",
    ];
    let off = json(&[
        "plan",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--max-model-len",
        "8192",
        "--json",
    ]);
    for f in FIELDS {
        assert_eq!(off[f], 0, "{f}");
    }
    assert!(off["vllm_auto_max_model_len"].is_null());
    assert!(off["spec_break_even_concurrency"].is_null());
    let on = json(&[
        "plan",
        "llama-3.1-8b",
        "--gpu",
        "h100-sxm",
        "--max-model-len",
        "-1",
        "--enable-lora",
        "--max-loras",
        "4",
        "--max-lora-rank",
        "64",
        "--speculative-config",
        r#"{"method": "eagle3", "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", "num_speculative_tokens": 3}"#,
        "--cpu-offload-gb",
        "2",
        "--enforce-eager",
        "--json",
    ]);
    assert_eq!(on["lora_bytes"], 1_477_705_728u64 + 56 * 8192 + 24 * 1024);
    assert_eq!(on["draft_weights_bytes"], 424_689_664u64 * 2);
    assert!(on["draft_kv_bytes"].as_u64().unwrap() > 0);
    assert_eq!(on["cpu_offload_bytes"], 2u64 << 30);
    assert_eq!(on["per_gpu"]["cuda_graph_bytes"], 0);
    assert_eq!(on["vllm_auto_max_model_len"], 131_072);
    let vllm = on["commands"]["vllm"].as_str().unwrap();
    for flag in [
        "--enable-lora",
        "--max-loras 4",
        "--speculative-config",
        "--enforce-eager",
        "--cpu-offload-gb 2",
    ] {
        assert!(vllm.contains(flag), "{flag} in {vllm}");
    }
    let mm = json(&[
        "plan",
        "gemma-3-27b",
        "--gpu",
        "h100-sxm",
        "--max-model-len",
        "8192",
        "--json",
    ]);
    assert_eq!(mm["encoder_cache_bytes"], 32 * 256 * 5376 * 2);
    let text = json(&[
        "plan",
        "gemma-3-27b",
        "--gpu",
        "h100-sxm",
        "--max-model-len",
        "8192",
        "--limit-mm-per-prompt",
        r#"{"image": 0}"#,
        "--json",
    ]);
    assert_eq!(text["mm_reserved_bytes"], 0);
    // A bad JSON value is a usage error naming the flag.
    let o = vramfit(&[
        "plan",
        "gemma-3-27b",
        "--gpu",
        "h100-sxm",
        "--limit-mm-per-prompt",
        "image=0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--limit-mm-per-prompt"));
}

#[test]
fn fit_says_when_the_engine_refuses_the_workload_it_answers_for() {
    // 1,024 prompt + 4 images × 16,384 tokens + 256 output = 66,816 tokens, at an 8,192-token
    // length: vLLM refuses each request. `fit` answers for requests cut to 8,192 tokens, as
    // `plan` does, and now says why (before, a bare "concurrency: 121").
    let args = [
        "fit",
        "qwen2.5-vl-7b",
        "--gpu",
        "h100-sxm",
        "--images-per-prompt",
        "4",
        "--max-model-len",
        "8192",
        "--find",
        "concurrency",
    ];
    let out = vramfit(&args);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("concurrency: "), "{stdout}");
    assert!(!stdout.contains("warning"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let w = "vramfit: warning: requests of 66,816 tokens (1,024 prompt + 65,536 from 4 images + 256 output) are longer than the context length of 8,192 tokens: vLLM refuses them";
    assert!(stderr.contains(w), "{stderr}");
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let j = json(&with_json);
    let ws = j["warnings"].as_array().expect("warnings");
    assert!(ws
        .iter()
        .any(|x| x.as_str().unwrap().starts_with("requests of 66,816 tokens")));
    // The longest context stops at the model's `max_position_embeddings`, 128,000 (vLLM
    // refuses a longer `--max-model-len`); before, 380,608 on an L4.
    let j = json(&[
        "fit",
        "qwen2.5-vl-7b",
        "--gpu",
        "l4",
        "--images-per-prompt",
        "4",
        "--find",
        "context",
        "--json",
    ]);
    assert_eq!(j["answer"], 128_000);
}
