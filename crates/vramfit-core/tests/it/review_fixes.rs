//! Defects a review of the CLI and the page found (2026-12-06), each checked against numbers
//! worked out by hand from the engines' source.

use vramfit_core::catalog::Catalog;
use vramfit_core::plan::plan;
use vramfit_core::sizing::{estimate_bytes, GIB};

use crate::support::{on, scen};

/// Gemma 3 27B over pipeline stages (62 layers, every 6th global: 10 full + 52 sliding,
/// window 1024; 16 KV heads × 128 × 2 × 2 B = 8,192 B a layer per token at TP 1). vLLM
/// groups the whole model's layers (10 a group: 6 sliding groups, each every 6th sliding
/// layer, and 1 full group) and each stage allocates a tensor per layer of a group it holds
/// (`get_kv_cache_configs`). PP 16 (stages of 3, 4 × 14, 3 layers): no stage holds two
/// layers of one group, so 1 tensor, a 16-token block is 131,072 B; PP 8 (7, 8 × 6, 7):
/// stages hold 2 global layers, 2 tensors, 262,144 B. A 131,072-token request needs 8,192
/// full blocks + 6 × (⌈(1023 + 8192) ÷ 16⌉ + 1) = 3,462 sliding ones: 11,654 blocks. Stage 0
/// alone (layers 0–2 or 0–6, no global layer at PP 16) was sized before.
#[test]
fn gemma_3_27b_kv_groups_over_pipeline_stages() {
    let mut s = scen("gemma-3-27b", 1);
    s.flags.max_model_len = Some(131_072);
    for (pp, block_bytes) in [(16, 131_072), (8, 262_144), (1, 1_310_720)] {
        s.pipeline_parallel_size = pp;
        let (groups, size) = vramfit_core::sizing::kv_groups(&s);
        assert_eq!((groups.len(), size), (7, 10), "PP {pp}");
        assert_eq!(
            vramfit_core::sizing::blocks_for_len(&groups, 16, 8192, 131_072),
            11_654
        );
        let e = estimate_bytes(&s, 80 * GIB);
        assert_eq!(e.kv_blocks, e.kv_pool_bytes / block_bytes, "PP {pp}");
        assert_eq!(e.kv_bytes_per_request, 11_654 * block_bytes, "PP {pp}");
        let conc = e.kv_blocks as f64 / 11_654.0;
        assert!((e.max_concurrency - conc).abs() < 1e-9, "PP {pp}");
    }
}

/// The llama.cpp command of a vLLM plan: `-np` is the busiest replica's users, as many as the
/// plan's KV pool holds at the whole context (llama.cpp allocates `-c` = slots × context up
/// front), not the requests of the workload's length the pool holds. Llama 3.1 8B on one
/// H100: 27,716 blocks of 16 tokens = 443,456 tokens, three requests of 131,072.
#[test]
fn the_llama_cpp_command_of_a_vllm_plan_asks_for_what_the_pool_holds() {
    let cmd = |users: u64| {
        let mut i = on("llama-3.1-8b", "h100-sxm");
        i.workload.users = users;
        i.flags.max_model_len = Some(131_072);
        let p = plan(&Catalog::bundled(), &i).unwrap();
        assert_eq!(p.estimate.kv_tokens, 443_456);
        vramfit_core::commands::llama_cpp(p.launch.as_ref().unwrap())
    };
    assert!(cmd(1).contains("-c 131072 -np 1 "), "{}", cmd(1));
    assert!(cmd(2).contains("-c 262144 -np 2 "), "{}", cmd(2));
    assert!(cmd(4).contains("-c 393216 -np 3 "), "{}", cmd(4));
    // At the page's default 8,192 tokens, 4 users get 4 slots.
    let mut i = on("llama-3.1-8b", "h100-sxm");
    i.workload.users = 4;
    let p = plan(&Catalog::bundled(), &i).unwrap();
    let text = vramfit_core::commands::llama_cpp(p.launch.as_ref().unwrap());
    assert!(text.contains("-c 32768 -np 4 "), "{text}");
    // With a request rate, the requests a replica has in flight (20 req/s: more than the 54
    // whole 8,192-token requests the pool holds, so 54).
    i.workload.users = 1;
    i.workload.request_rate = Some(20.0);
    let p = plan(&Catalog::bundled(), &i).unwrap();
    let text = vramfit_core::commands::llama_cpp(p.launch.as_ref().unwrap());
    assert_eq!(p.estimate.kv_tokens / 8192, 54);
    assert!(text.contains("-c 442368 -np 54 "), "{text}");
}

/// A `config.json` alone with a `quantization_config` is sized in the format it names
/// (`model/quant.rs`), as the catalog's checkpoint in that format: Llama 3.1 8B's config
/// with hugging-quants' AWQ block is the catalog model at INT4-AWQ, group 128; it was
/// sized at BF16 (14.99 GiB instead of 5.37 GiB).
#[test]
fn a_config_with_a_quantization_config_is_sized_in_its_format() {
    let cat = Catalog::bundled();
    let model = cat.model("llama-3.1-8b").unwrap();
    let mut config = model.model.config.clone();
    config["quantization_config"] = serde_json::json!({
        "quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm", "zero_point": true
    });
    let arch = vramfit_core::model::ModelArch::from_config(&config).unwrap();
    let gpu = cat.gpu("h100-sxm").unwrap();
    let i = on("llama-3.1-8b", "h100-sxm");
    let p = vramfit_core::plan::custom_plan(&cat, arch, "awq-8b", None, gpu, &i);
    let mut want = i.clone();
    want.format = Some(vramfit_core::dtype::WeightFormat::Int4Awq);
    let w = plan(&cat, &want).unwrap();
    assert_eq!(p.format, vramfit_core::dtype::WeightFormat::Int4Awq);
    assert_eq!(p.estimate.weights_bytes, w.estimate.weights_bytes);
    assert!(
        p.estimate.weights_bytes < 6 * GIB,
        "{}",
        p.estimate.weights_bytes
    );
}

/// vLLM refuses fewer batched tokens than sequences when both are set (`SchedulerConfig`:
/// "max_num_batched_tokens (512) must be greater than or equal to max_num_seqs (1024)");
/// with `--max-num-seqs` left out it lowers its default to the batched tokens
/// (`arg_utils.py`: `max_num_seqs = min(max_num_seqs, max_num_batched_tokens)`).
#[test]
fn vllm_refuses_fewer_batched_tokens_than_sequences_set_by_hand() {
    let at = |tokens: u64, seqs: Option<u64>| {
        let mut i = on("llama-3.1-8b", "h100-sxm");
        i.flags.max_num_batched_tokens = Some(tokens);
        i.flags.max_num_seqs = seqs;
        plan(&Catalog::bundled(), &i).unwrap()
    };
    let p = at(512, Some(1024));
    assert_eq!(
        p.estimate.refusal.map(|r| r.id()),
        Some("batched_below_seqs")
    );
    assert!(p.run.is_none());
    assert!(
        p.verdict
            .contains("must be greater than or equal to max_num_seqs (1024)"),
        "{}",
        p.verdict
    );
    // H100's default 1,024 sequences come down to 512 with 512 batched tokens.
    let lowered = at(512, None);
    assert!(lowered.run.is_some(), "{}", lowered.verdict);
    assert_eq!(lowered.estimate.max_num_seqs, 512);
    assert!(at(1024, Some(1024)).run.is_some());
    assert!(at(512, Some(256)).run.is_some());
    // Another engine has no such rule.
    let mut i = on("llama-3.1-8b", "h100-sxm");
    i.flags.max_num_batched_tokens = Some(1);
    i.flags.max_num_seqs = Some(8);
    i.flags.engine = vramfit_core::sizing::Engine::Sglang;
    assert_ne!(
        plan(&Catalog::bundled(), &i)
            .unwrap()
            .estimate
            .refusal
            .map(|r| r.id()),
        Some("batched_below_seqs")
    );
}

/// vLLM's minimum compute capability per weight format (`get_min_capability()`, read in the
/// 0.11.0–0.19.1 source releases): FP8 and NVFP4 8.0 before v0.14 and 7.5 from it, AWQ and
/// INT8 W8A8 7.5, MXFP4 8.0, GPTQ 6.0. V100 is 7.0, T4 7.5; AMD GPUs have no such number.
/// A refused format's fix is the 16-bit checkpoint (fp16 below 8.0).
#[test]
fn vllm_refuses_formats_below_their_compute_capability() {
    use vramfit_core::dtype::WeightFormat as W;
    use vramfit_core::engine::Engine;
    let refusal = |model: &str, gpu: &str, format: Option<W>, minor: u32| {
        let mut i = on(model, gpu);
        i.format = format;
        i.flags.engine = Engine::Vllm { minor };
        let p = plan(&Catalog::bundled(), &i).unwrap();
        (p.estimate.refusal.map(|r| r.id()), p)
    };
    for (model, gpu, format, minor, refused) in [
        ("llama-3.1-8b", "v100-16gb", Some(W::Fp8), 19, true),
        ("llama-3.1-8b", "t4", Some(W::Fp8), 19, false),
        ("llama-3.1-8b", "t4", Some(W::Fp8), 13, true),
        ("llama-3.1-8b", "a100-80gb-sxm", Some(W::Fp8), 13, false),
        ("llama-3.1-8b", "v100-16gb", Some(W::Int4Awq), 19, true),
        ("llama-3.1-8b", "t4", Some(W::Int4Awq), 19, false),
        ("llama-3.1-8b", "v100-16gb", Some(W::Int4Gptq), 19, false),
        ("llama-3.1-8b", "v100-16gb", Some(W::Int8W8a8), 19, true),
        ("llama-3.1-8b", "t4", Some(W::Nvfp4), 13, true),
        ("llama-3.1-8b", "t4", Some(W::Nvfp4), 19, false),
        ("gpt-oss-20b", "t4", None, 19, true),
        ("gpt-oss-20b", "a10g", None, 19, false),
        ("llama-3.1-8b", "v100-16gb", None, 19, false),
        ("llama-3.1-8b", "mi300x", Some(W::Fp8), 19, false),
    ] {
        let (id, p) = refusal(model, gpu, format, minor);
        let want = refused.then_some("format_capability");
        assert_eq!(
            id, want,
            "{model} {gpu} {format:?} v0.{minor}: {}",
            p.verdict
        );
    }
    let (_, p) = refusal("llama-3.1-8b", "v100-16gb", Some(W::Fp8), 19);
    assert!(
        p.verdict
            .contains("need compute capability 7.5 or newer, and this GPU is 7.0"),
        "{}",
        p.verdict
    );
    assert_eq!(p.fixes.first().and_then(|f| f.format), Some(W::Fp16));
}

/// The serving model holds a request's KV as the memory model does over pipeline stages:
/// Gemma 3 27B at PP 16 on H100, one tensor a group on the busiest stage, so a token of
/// context takes 8,192 B in the full group and 6 × 8,192 B in the sliding ones (the first
/// stage, layers 0–2, holds no global layer: it read 0 B of full attention before).
#[test]
fn a_pipeline_stage_holds_every_groups_kv_in_the_serving_model() {
    let cat = Catalog::bundled();
    let mut s = scen("gemma-3-27b", 1);
    s.pipeline_parallel_size = 16;
    s.flags.max_model_len = Some(131_072);
    let gpu = cat.gpu("h100-sxm").unwrap();
    let e = estimate_bytes(&s, gpu.usable_bytes());
    let r = vramfit_core::serving::Replica::of(&s, gpu, &e);
    assert_eq!(r.kv_full_per_token, 8192.0);
    assert_eq!(r.kv_window_per_token, 6.0 * 8192.0);
    // One stage: the layers themselves (10 full, 52 sliding), as before.
    s.pipeline_parallel_size = 1;
    let e = estimate_bytes(&s, 8 * 80 * GIB);
    let r = vramfit_core::serving::Replica::of(&s, gpu, &e);
    assert_eq!(r.kv_full_per_token, 10.0 * 8192.0);
    assert_eq!(r.kv_window_per_token, 52.0 * 8192.0);
}
