//! Numbers worked out by hand from real `config.json` values (arithmetic in the comments),
//! and from published measurements (source named).

use vramfit_core::catalog::Catalog;
use vramfit_core::dtype::{KvDtype, WeightFormat};
use vramfit_core::inputs::Field;
use vramfit_core::plan::{plan, Inputs};
use vramfit_core::sizing::{estimate_bytes, weights_per_gpu, Engine, Fit, Scenario, GIB};

use crate::support::{arch, on, scen};

#[test]
fn kv_bytes_per_token_from_real_configs() {
    // Llama-3.1-8B: 32 layers × 2 (K, V) × 8 KV heads × 128 head_dim × 2 B = 131,072.
    assert_eq!(
        arch("llama-3.1-8b").kv_bytes_per_token_unsharded(2),
        131_072
    );
    // Mistral-Small-24B: 40 × 2 × 8 × 128 × 2 = 163,840.
    assert_eq!(
        arch("mistral-small-3.1-24b").kv_bytes_per_token_unsharded(2),
        163_840
    );
    // Qwen2.5-7B: 28 × 2 × 4 × 128 × 2 = 57,344.
    assert_eq!(arch("qwen2.5-7b").kv_bytes_per_token_unsharded(2), 57_344);
    // DeepSeek-V3 MLA: 61 layers × (kv_lora_rank 512 + qk_rope_head_dim 64) × 2 B = 70,272,
    // the same on every TP rank (the latent is replicated, not split).
    let ds = arch("deepseek-v3");
    for tp in [1, 2, 8, 16] {
        assert_eq!(
            ds.kv_bytes_per_token_layer(2, tp) * ds.layers,
            70_272,
            "TP {tp}"
        );
    }
    // fp8 KV halves it: 61 × 576 × 1 = 35,136.
    assert_eq!(ds.kv_bytes_per_token_layer(1, 8) * ds.layers, 35_136);
}

#[test]
fn kv_heads_are_replicated_when_fewer_than_tp() {
    // Llama-3.1-70B: 8 KV heads. TP 8 → 1 head per GPU: 80 × 2 × 1 × 128 × 2 = 40,960 B.
    // TP 16 → still 1 head per GPU (replicated), not half a head.
    let m = arch("llama-3.1-70b");
    assert_eq!(m.kv_bytes_per_token_layer(2, 8) * m.layers, 40_960);
    assert_eq!(m.kv_bytes_per_token_layer(2, 16) * m.layers, 40_960);
    // TP 2 → 4 heads: 80 × 2 × 4 × 128 × 2 = 163,840.
    assert_eq!(m.kv_bytes_per_token_layer(2, 2) * m.layers, 163_840);
}

#[test]
fn llama_3_1_8b_weights_bf16_and_fp8() {
    // bf16: 8,030,261,248 parameters × 2 B = 16,060,522,496 B (the checkpoint's total_size),
    // plus vLLM's rotary cos/sin cache: 131,072 positions × 128 × 2 B = 33,554,432 B.
    // Sum 16,094,076,928 B = 14.99 GiB, what vLLM logs ("Loading weights took 14.99 GiB").
    let s = scen("llama-3.1-8b", 1);
    assert_eq!(weights_per_gpu(&s), 16_060_522_496 + 33_554_432);
    assert_eq!(
        format!("{:.2}", weights_per_gpu(&s) as f64 / GIB as f64),
        "14.99"
    );
    // Online fp8 keeps embeddings and LM head in bf16: vLLM loads 8.49 GiB
    // (../shared/ENGINES.md; RedHatAI w8a8 log in ../shared/calibration: 8.49 GiB).
    // By hand: embed + lm_head 2 × 128,256 × 4,096 × 2 B = 2,101,346,304 B; the other
    // 6,979,321,856 linear params at 1 B + per-channel fp32 scales; norms bf16 → 8.46 GiB.
    let mut s = scen("llama-3.1-8b", 1);
    s.format = WeightFormat::Fp8;
    let gib = weights_per_gpu(&s) as f64 / GIB as f64;
    assert!((gib - 8.49).abs() / 8.49 < 0.01, "{gib}");
}

#[test]
fn qwen2_5_7b_on_h100_matches_the_vllm_log() {
    // vLLM v0.19 on H100 (79.19 GiB total), util 0.95, max_model_len 8192, bf16:
    // weights 14.25 GiB, KV cache 58.53 GiB, 68,500 blocks, 133.79× concurrency
    // (llm-d-planner accuracy/results/v0.19.0, ../shared/calibration).
    let mut s = scen("qwen2.5-7b", 1);
    s.flags.gpu_memory_utilization = Some(0.95);
    s.flags.max_model_len = Some(8192);
    let e = estimate_bytes(&s, (79.19 * GIB as f64) as u64);
    let kv = e.kv_pool_bytes as f64 / GIB as f64;
    assert!((kv - 58.53).abs() / 58.53 < 0.01, "{kv}");
    // Blocks = pool ÷ (16 tokens × 57,344 B) — 917,504 B per block.
    assert_eq!(e.kv_blocks, e.kv_pool_bytes / 917_504);
    assert!(
        (e.max_concurrency - 133.79).abs() / 133.79 < 0.01,
        "{}",
        e.max_concurrency
    );
    // fp8 KV doubles the blocks: 137,000 measured.
    s.flags.kv_dtype = KvDtype::Fp8;
    let e8 = estimate_bytes(&s, (79.19 * GIB as f64) as u64);
    assert!(
        (e8.kv_blocks as f64 - 137_000.0).abs() / 137_000.0 < 0.01,
        "{}",
        e8.kv_blocks
    );
}

#[test]
fn gemma_3_12b_hybrid_kv_groups() {
    // Gemma-3-12B: 48 layers, every 6th global → 8 full + 40 sliding (window 1024).
    // vLLM groups layers by the smaller count (8): 5 sliding groups + 1 full group = 6,
    // so "KV cache size" = blocks / 6 × 16 tokens (2.667 tokens per block in the log).
    let mut s = scen("gemma-3-12b", 1);
    s.flags.max_model_len = Some(8192);
    let (groups, size) = vramfit_core::sizing::kv_groups(&s);
    assert_eq!((groups.len(), size), (6, 8));
    let e = estimate_bytes(&s, 80 * GIB);
    assert_eq!(e.kv_tokens, e.kv_blocks / 6 * 16);
    // One 8192-token request: full group 512 blocks + 5 sliding groups × (512 + 1) = 3,077.
    assert_eq!(
        vramfit_core::sizing::blocks_for_len(&groups, 16, 8192, 8192),
        3_077
    );
}

#[test]
fn vllm_refuses_when_one_request_does_not_fit() {
    // Llama-3.1-70B bf16 on one H100: weights alone (~131 GiB) exceed the budget.
    let mut s = scen("llama-3.1-70b", 1);
    s.flags.max_model_len = Some(131_072);
    let e = estimate_bytes(&s, (79.19 * GIB as f64) as u64);
    assert_eq!(e.fit, vramfit_core::sizing::Fit::WeightsTooLarge);
    // The verdict states the problem; fixes are planned (tests/it/fixes.rs).
    assert!(!e.verdict.to_string().contains("--"), "{}", e.verdict);
    // Llama-3.1-8B bf16 on a 24 GB card with the full 131,072 context: 16 GiB of KV for one
    // request (131,072 × 131,072 B) cannot fit next to 15 GiB of weights.
    let mut s = scen("llama-3.1-8b", 1);
    s.flags.max_model_len = Some(131_072);
    let e = estimate_bytes(&s, 23 * GIB);
    assert_eq!(e.fit, vramfit_core::sizing::Fit::KvTooSmall);
    assert_eq!(e.kv_bytes_per_request, 131_072 * 131_072);
    assert!(
        e.verdict
            .to_string()
            .contains("one request of 131,072 tokens needs 16.00 GiB of KV cache"),
        "{}",
        e.verdict
    );
}

#[test]
fn expert_parallel_needs_experts_to_divide() {
    // Mixtral-8x7B has 8 experts: EP over 16 ranks is impossible; over 8 it is fine.
    let m = arch("mixtral-8x7b");
    assert!(vramfit_core::layout::ep_problem(&m, 16, true).is_some());
    assert!(vramfit_core::layout::ep_problem(&m, 8, true).is_none());
    assert!(vramfit_core::layout::ep_problem(&m, 16, false).is_none());
}

#[test]
fn a_speed_target_widens_the_layout_instead_of_adding_replicas() {
    let cat = Catalog::bundled();
    let base = on("llama-3.1-70b", "h100-sxm");
    let p = plan(&cat, &base).unwrap();
    let slow = p.run.as_ref().unwrap().speed.decode_tokens_per_s_per_user;
    let fast = plan(
        &cat,
        &Inputs {
            workload: vramfit_core::inputs::Workload {
                target_tokens_per_s: Some(slow * 1.3),
                ..base.workload
            },
            ..base
        },
    )
    .unwrap();
    assert!(
        fast.tensor_parallel_size > p.tensor_parallel_size,
        "{} vs {}",
        fast.tensor_parallel_size,
        p.tensor_parallel_size
    );
    assert!(
        fast.run
            .as_ref()
            .unwrap()
            .speed
            .decode_tokens_per_s_per_user
            >= slow * 1.3
    );
}

#[test]
fn verdicts_and_warnings_word_for_word() {
    // The texts the CLI prints and the app shows, pinned whole: each kind of verdict and
    // each warning (estimates keep the numbers and write the words when asked).
    let text = |s: &Scenario, total: u64| {
        let e = estimate_bytes(s, total);
        (e.fit, e.verdict.to_string(), e.warnings.to_strings())
    };
    let mut s = scen("llama-3.1-70b", 1);
    s.flags.max_model_len = Some(131_072);
    assert_eq!(
        text(&s, (79.19 * GIB as f64) as u64),
        (
            Fit::WeightsTooLarge,
            "will not start: weights and runtime need more than the 0.90 × memory budget (62.39 GiB short, before any KV cache)".to_string(),
            vec![]
        )
    );
    let mut s = scen("llama-3.1-8b", 1);
    s.flags.max_model_len = Some(131_072);
    assert_eq!(
        text(&s, 23 * GIB),
        (
            Fit::KvTooSmall,
            "will not start: one request of 131,072 tokens needs 16.00 GiB of KV cache, the pool is 4.99 GiB".to_string(),
            vec![]
        )
    );
    let mut s = scen("llama-3.1-8b", 1);
    s.flags.max_model_len = Some(8192);
    s.workload.users = 400;
    s.workload.prompt_tokens = 4000;
    s.workload.output_tokens = 1000;
    assert_eq!(
        text(&s, 80 * GIB),
        (
            Fit::FitsWithQueueing,
            "starts, but only 89.7 requests of 5,000 tokens fit in the KV cache at once; 400 users will queue".to_string(),
            vec![]
        )
    );
    // What vLLM refuses whatever the memory: TP 3 against 32 heads first, then a length
    // above the model's 131,072 (taken, with a warning, under VLLM_ALLOW_LONG_MAX_MODEL_LEN=1).
    let mut s = scen("llama-3.1-8b", 3);
    s.flags.max_model_len = Some(1 << 20);
    s.flags.kv_dtype = KvDtype::Fp8;
    s.workload.users = 2;
    assert_eq!(
        text(&s, 80 * GIB),
        (
            Fit::Refused,
            "will not start: vLLM refuses it: TP 3 does not divide 32 attention heads".to_string(),
            vec![]
        )
    );
    s.tensor_parallel_size = 1;
    assert_eq!(
        text(&s, 80 * GIB),
        (
            Fit::Refused,
            "will not start: vLLM refuses it: `--max-model-len` 1048576 is above the model's maximum of 131072 tokens (allowed only with VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)".to_string(),
            vec![]
        )
    );
    s.flags.allow_long_max_model_len = true;
    // Taken, and then memory decides: 1M tokens of fp8 KV (64 KiB each) exceed the pool.
    let (fit, _, warnings) = text(&s, 80 * GIB);
    assert_eq!(fit, Fit::KvTooSmall);
    assert_eq!(warnings, ["max_model_len 1048576 exceeds the model's max_position_embeddings 131072: taken because VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, but the model was not trained on such lengths and may produce garbage past them"]);
    s.flags.block_size = Some(7);
    assert_eq!(
        text(&s, 80 * GIB).1,
        "will not start: vLLM refuses it: `--block-size` 7 is not one the CUDA attention backends take (16, 32, 64, 128 or 256)"
    );
    let mut s = scen("qwen2.5-7b", 1);
    s.flags.engine = Engine::Transformers;
    s.format = WeightFormat::Fp32;
    s.model.stored_fp32 = true;
    let (fit, verdict, warnings) = text(&s, 80 * GIB);
    assert_eq!(fit, Fit::Fits);
    assert_eq!(
        verdict,
        "fits: KV pool 50.40 GiB holds 737.2 concurrent requests of 1,280 tokens"
    );
    assert_eq!(warnings, ["this is an fp32 checkpoint: 4 bytes per parameter; load it with torch_dtype=torch.bfloat16 to halve it"]);
    // Serialized (the CLI's and the app's JSON), the verdict and warnings are their texts.
    let v = serde_json::to_value(estimate_bytes(&s, 80 * GIB)).unwrap();
    assert_eq!(v["verdict"], verdict.as_str());
    assert_eq!(v["warnings"], serde_json::json!(warnings));
    assert_eq!(
        v["kv_groups"],
        serde_json::json!([{ "window": null, "layers": 28 }])
    );
}

#[test]
fn hybrid_kv_groups_serialize_as_the_list_of_groups() {
    let mut s = scen("gemma-3-12b", 1);
    s.flags.max_model_len = Some(8192);
    let e = estimate_bytes(&s, 80 * GIB);
    let sliding = serde_json::json!({ "window": 1024, "layers": 8 });
    let full = serde_json::json!({ "window": null, "layers": 8 });
    assert_eq!(
        serde_json::to_value(&e).unwrap()["kv_groups"],
        serde_json::json!([sliding, sliding, sliding, sliding, sliding, full])
    );
    assert_eq!(e.kv_groups.to_vec(), vramfit_core::sizing::kv_groups(&s).0);
    // Gemma 3 12B takes images: the profiling run's encoder outputs (8192 ÷ 256 = 32
    // images × 256 tokens × 3840 × 2 B, `sizing/mm.rs`) are held beside the text peak.
    assert_eq!(e.features.encoder_cache_bytes, 32 * 256 * 3840 * 2);
    assert_eq!(
        (e.max_model_len_fit, e.longest_len_for_users(10)),
        (131_072, 26_928)
    );
}

#[test]
fn a_time_to_first_token_target_widens_the_layout() {
    use vramfit_core::catalog::Catalog;
    let cat = Catalog::bundled();
    let mut base = on("llama-3.1-70b", "h100-sxm");
    base.workload.prompt_tokens = 8192;
    let p = plan(&cat, &base).unwrap();
    let slow = p.run.as_ref().unwrap().speed.ttft_s * 1000.0;
    // Prefill of 8192 tokens on the fewest GPUs is compute-bound: TTFT ~ 2 x params x tokens
    // / (TP x peak). Asking for 60 % of it needs at least twice the tensor parallelism.
    let mut fast = base.clone();
    fast.workload.max_ttft_ms = Some(slow * 0.6);
    let q = plan(&cat, &fast).unwrap();
    assert!(
        q.tensor_parallel_size >= 2 * p.tensor_parallel_size,
        "{} vs {}",
        q.tensor_parallel_size,
        p.tensor_parallel_size
    );
    assert!(q.run.as_ref().unwrap().speed.ttft_s * 1000.0 <= slow * 0.6);
    // The same target through the link and back.
    let (back, notices) = vramfit_core::share::decode(&vramfit_core::share::encode(&fast));
    assert!(notices.is_empty(), "{notices:?}");
    assert_eq!(back.workload.max_ttft_ms, fast.workload.max_ttft_ms);
}

#[test]
fn a_request_holds_its_images_tokens_in_the_count_the_warning_and_the_speed() {
    // Qwen2.5-VL-7B-Instruct on an H100 with `--limit-mm-per-prompt '{"image": 4}'`: each
    // image at the processor's `max_pixels` 12,845,056 is 12,845,056 / (28 × 28) = 16,384
    // tokens (14-pixel patches merged 2 × 2), so a request of 1,024 prompt + 256 output
    // tokens holds 1,024 + 4 × 16,384 + 256 = 66,816 tokens, ⌈66,816 / 16⌉ = 4,176 blocks.
    // vLLM checks "text tokens plus multimodal tokens" against the length
    // (`vllm/v1/engine/processor.py` `_validate_model_input`). Before, the verdict said
    // "requests of 1280 tokens" beside a count made at 66,816.
    let cat = Catalog::bundled();
    let mut i = on("qwen2.5-vl-7b", "h100-sxm");
    // The model's own length (the page's default is 8,192).
    i.flags.max_model_len = None;
    i.flags.features.mm.images = Some(4);
    let p = plan(&cat, &i).unwrap();
    assert_eq!(p.media_tokens, 65_536);
    assert_eq!(p.workload_tokens, 1_280);
    assert_eq!(p.counted_tokens(), 66_816);
    let e = &p.estimate;
    let conc = e.kv_blocks as f64 / 4_176.0;
    assert!((e.max_concurrency_workload - conc).abs() < 1e-9);
    assert!(
        p.verdict.ends_with(&format!(
            "holds {conc:.1} concurrent requests of 66,816 tokens"
        )),
        "{}",
        p.verdict
    );
    assert!(!p
        .warnings
        .iter()
        .any(|x| x.contains("longer than the context")));
    // 64 images: 1,024 + 64 × 16,384 + 256 = 1,049,856 tokens, past the 128,000 of the
    // model's `max_position_embeddings`: refused, said so, and counted at 128,000 tokens,
    // for the speed too (before, no warning, and a decode speed of 0.0 tok/s).
    i.flags.features.mm.images = Some(64);
    let p = plan(&cat, &i).unwrap();
    assert_eq!(p.counted_tokens(), 128_000);
    let w = "requests of 1,049,856 tokens (1,024 prompt + 1,048,576 from 64 images + 256 output) are longer than the context length of 128,000 tokens: vLLM refuses them; the KV cache's figures and the speed count requests of 128,000 tokens";
    assert!(p.warnings.iter().any(|x| x == w), "{:?}", p.warnings);
    let run = p.run.as_ref().unwrap();
    assert!(run.speed.decode_tokens_per_s_per_user > 0.0);
    // Cut to the length, the request is the same as one of 127,744 prompt tokens (the
    // output kept) with no more images than fit: its time to first token is a prefill of
    // about 128k tokens, longer than the 4-image request's 66,816.
    i.flags.features.mm.images = Some(4);
    let four = plan(&cat, &i).unwrap();
    assert!(run.speed.ttft_s > four.run.as_ref().unwrap().speed.ttft_s);
    // transformers' `generate` runs past the length: at 8,192 tokens its 4-image requests
    // count whole, 66,816 tokens in one-token blocks (before, cut to 8,192, while its speed
    // took them whole), and no warning is given.
    i.flags.engine = Engine::Transformers;
    i.flags.max_model_len = Some(8192);
    let t = plan(&cat, &i).unwrap();
    assert_eq!(t.counted_tokens(), 66_816);
    let e = &t.estimate;
    assert_eq!(e.block_size, 1);
    assert!((e.max_concurrency_workload - e.kv_blocks as f64 / 66_816.0).abs() < 1e-9);
    assert!(!t.warnings.iter().any(|x| x.contains("context length")));
    // Its prefill runs the images' 65,536 tokens through the decoder with the prompt's
    // 1,024: the activation peak is that of a 66,560-token text prompt (before, of 1,024).
    let mut text = i.clone();
    text.flags.features.mm.images = None;
    text.workload.prompt_tokens = 66_560;
    let text = plan(&cat, &text).unwrap();
    assert_eq!(e.activation_bytes, text.estimate.activation_bytes);
    i.flags.engine = Engine::DEFAULT;
    i.flags.max_model_len = None;
    // `--max-model-len -1` on an L4 (24 GB): vLLM picks the longest length whose KV fits,
    // shorter than the model's; a 100,000-token prompt is counted, and its speed taken, at
    // that length (before, the speed was cut at the model's 131,072 tokens, did not fit the
    // pool, and read 0.0 tok/s).
    let mut i = on("llama-3.1-8b", "l4");
    i.set(vramfit_core::inputs::Field::MaxModelLen, "-1")
        .unwrap();
    i.workload.prompt_tokens = 100_000;
    let p = plan(&cat, &i).unwrap();
    let len = p.estimate.max_model_len;
    assert!(len < 100_256, "{len}");
    assert_eq!(p.counted_tokens(), len);
    assert!(p.run.as_ref().unwrap().speed.decode_tokens_per_s_per_user > 0.0);
}

#[test]
fn requests_longer_than_the_context_are_counted_at_it_and_warned() {
    // Llama-3.1-8B on an H100 at `--max-model-len 512`, with the default workload of 1,024
    // prompt + 256 output tokens: vLLM refuses each such request (HTTP 400, "This model's
    // maximum context length is 512 tokens"). The concurrency counts requests cut to 512
    // tokens, 512 / 16 = 32 blocks each, and the verdict says 512, not 1,280.
    let cat = Catalog::bundled();
    let mut i = on("llama-3.1-8b", "h100-sxm");
    i.flags.max_model_len = Some(512);
    assert_eq!(
        (i.workload.prompt_tokens, i.workload.output_tokens),
        (1024, 256)
    );
    let p = plan(&cat, &i).unwrap();
    let e = &p.estimate;
    assert_eq!(e.block_size, 16);
    let conc = e.kv_blocks as f64 / 32.0;
    assert!(
        (e.max_concurrency_workload - conc).abs() < 1e-9,
        "{}",
        e.max_concurrency_workload
    );
    assert!(
        p.verdict.ends_with(&format!(
            "holds {conc:.1} concurrent requests of 512 tokens"
        )),
        "{}",
        p.verdict
    );
    assert_eq!(p.counted_tokens(), 512);
    let w = "requests of 1,280 tokens (1,024 prompt + 256 output) are longer than the context length of 512 tokens: vLLM refuses them; the KV cache's figures and the speed count requests of 512 tokens";
    assert!(p.warnings.iter().any(|x| x == w), "{:?}", p.warnings);
    // Exactly the context length: vLLM takes it (prompt + output > length is refused),
    // SGLang does not (≥).
    let warned = |p: &vramfit_core::plan::Plan| {
        p.warnings
            .iter()
            .any(|x| x.contains("the context length of 1,280 tokens: "))
    };
    i.flags.max_model_len = Some(1280);
    assert!(!warned(&plan(&cat, &i).unwrap()));
    i.flags.engine = Engine::Sglang;
    let sg = plan(&cat, &i).unwrap();
    assert!(warned(&sg));
    assert!(
        sg.warnings.iter().any(|x| {
            x.starts_with(
            "requests of 1,280 tokens (1,024 prompt + 256 output) are as long as the context length"
        )
        }),
        "{:?}",
        sg.warnings
    );
    i.flags.engine = Engine::DEFAULT;
    // At 2,048 tokens they fit, and no warning is given.
    i.flags.max_model_len = Some(2048);
    let p = plan(&cat, &i).unwrap();
    assert!(
        p.verdict.ends_with("concurrent requests of 1,280 tokens"),
        "{}",
        p.verdict
    );
    assert!(
        !p.warnings
            .iter()
            .any(|x| x.contains("longer than the context")),
        "{:?}",
        p.warnings
    );
}

#[test]
fn a_set_kv_size_larger_than_the_gpu_names_itself_as_the_cause() {
    // `--kv-cache-memory-bytes 100 GiB` on an 80 GiB GPU: vLLM takes the pool as given, so
    // what must fit is weights + activations + non-torch + the pool + CUDA graphs + the
    // context, against the whole GPU (not the 0.90 fraction, which it then ignores).
    use vramfit_core::units::fmt_gib;
    let mut s = scen("llama-3.1-8b", 1);
    s.flags.max_model_len = Some(8192);
    s.flags.features.kv_cache_memory_bytes = Some(100 * GIB);
    let e = estimate_bytes(&s, 80 * GIB);
    assert_eq!(e.fit, Fit::WeightsTooLarge);
    let need = e.weights_bytes
        + e.activation_bytes
        + e.non_torch_bytes
        + 100 * GIB
        + e.cuda_graph_bytes
        + e.cuda_context_bytes;
    assert!(need > 80 * GIB);
    assert_eq!(
        e.verdict.to_string(),
        format!(
            "will not start: weights, runtime and the KV cache set by `--kv-cache-memory-bytes` (100.00 GiB) need {}, more than the GPU's 80.00 GiB",
            fmt_gib(need)
        )
    );
    // 40 GiB fits beside the 8B model's 15 GiB of weights.
    s.flags.features.kv_cache_memory_bytes = Some(40 * GIB);
    assert!(estimate_bytes(&s, 80 * GIB).fit.starts());

    // The plan's checked fix: the largest whole GiB left beside the rest on an H100
    // (79.19 GiB as CUDA reports it), which then starts.
    let cat = Catalog::bundled();
    let mut i = on("llama-3.1-8b", "h100-sxm");
    i.flags.max_model_len = Some(8192);
    i.flags.features.kv_cache_memory_bytes = Some(100 * GIB);
    let p = plan(&cat, &i).unwrap();
    let e = &p.estimate;
    assert_eq!(e.fit, Fit::WeightsTooLarge);
    let rest = e.weights_bytes
        + e.activation_bytes
        + e.non_torch_bytes
        + e.cuda_graph_bytes
        + e.cuda_context_bytes;
    let room = (e.gpu_total_bytes - rest) / GIB * GIB;
    assert!((50 * GIB..70 * GIB).contains(&room), "{room}");
    let f = p.fixes.first().expect("a fix");
    assert_eq!(f.kv_cache_memory_bytes, Some(room));
    assert_eq!(f.to_string(), format!("`--kv-cache-memory-bytes {room}`"));
    assert_eq!(
        f.outcome(),
        format!("fits with a {} KV cache", fmt_gib(room))
    );
    assert!(plan(&cat, &f.apply(&i)).unwrap().estimate.fit.starts());
}

#[test]
fn nccl_memory_follows_the_tp_group_not_the_world() {
    // vLLM 0.19's non-torch increase at world size > 1: 1.93 GiB + 0.07 GiB per rank of the
    // TP group (logs: 2.07–2.09 GiB at TP 2, 2.21 at TP 4; all at PP 1). A pipeline stage
    // sends only to its neighbours, so Llama 3.1 8B at TP 8 × PP 4 holds 1.93 + 8 × 0.07 =
    // 2.49 GiB, as at TP 8 × PP 1; before, 1.93 + 32 × 0.07 = 4.17 GiB, and at TP 128 ×
    // PP 128 1,148.81 GiB per GPU.
    let cat = Catalog::bundled();
    // Truncated to whole bytes, as the estimate does.
    let gib = |x: f64| (x * (1u64 << 30) as f64) as u64;
    let at = |tp: &str, pp: &str| {
        let mut i = on("llama-3.1-8b", "h100-sxm");
        i.set(Field::TensorParallelSize, tp).unwrap();
        i.set(Field::PipelineParallelSize, pp).unwrap();
        plan(&cat, &i).unwrap().estimate.non_torch_bytes
    };
    assert_eq!(at("8", "4"), gib(1.93 + 8.0 * 0.07));
    assert_eq!(at("8", "1"), gib(1.93 + 8.0 * 0.07));
    assert_eq!(at("2", "1"), gib(1.93 + 2.0 * 0.07));
    assert_eq!(at("1", "2"), gib(1.93 + 0.07));
    assert_eq!(at("128", "128"), gib(1.93 + 128.0 * 0.07));
}

#[test]
fn the_scale_chart_at_max_load_cuts_a_request_longer_than_the_model_as_the_plan_does() {
    // Llama 3.1 8B (`max_position_embeddings` 131,072) with 200,000-token prompts on an
    // H100: the max-load chart sets the length the requests need, up to the model's own, and
    // counts them cut to it, as the plan does (which warns). Before, it asked for a
    // `--max-model-len` of 200,256, which vLLM refuses, and every layout read "does not fit"
    // with no reason given.
    use vramfit_core::serving::Load;
    let cat = Catalog::bundled();
    let i = on("llama-3.1-8b", "h100-sxm");
    let sc = vramfit_core::plan::scaling_at(&cat, &i, Some((200_000, 256)), Some(Load::MaxLoad))
        .unwrap();
    let tp1 = sc
        .own_link
        .iter()
        .find(|p| (p.tensor_parallel_size, p.pipeline_parallel_size) == (1, 1))
        .unwrap();
    assert!(tp1.fits && tp1.tokens_per_s_total > 0.0);
    // The plan at the same lengths and the model's length starts and warns.
    let mut i = i;
    i.flags.max_model_len = None;
    i.workload.prompt_tokens = 200_000;
    let p = plan(&cat, &i).unwrap();
    assert!(p
        .warnings
        .iter()
        .any(|w| w.contains("count requests of 131,072 tokens")));
}

#[test]
fn llama_cpp_holds_a_request_within_its_slot() {
    // llama.cpp's server with context shift off (its default): a prompt of at least the
    // slot's tokens is refused ("request (… tokens) exceeds the available context size"),
    // a shorter one runs and stops when the slot is full (`n_tokens + 1 >= n_ctx`,
    // `tools/server/server-context.cpp`). The plan's command gives each slot the plan's
    // length, 8,192 here. Before, a 10,000-token prompt "fit", counted at 10,256 tokens, and
    // decoded at 0.0 tok/s, with no warning.
    let cat = Catalog::bundled();
    let mut i = on("llama-3.1-8b", "h100-sxm");
    i.flags.engine = Engine::LlamaCpp;
    assert_eq!(i.flags.max_model_len, Some(8192));
    i.workload.prompt_tokens = 10_000;
    let p = plan(&cat, &i).unwrap();
    assert_eq!(p.counted_tokens(), 8192);
    assert!(
        p.warnings.iter().any(|w| w.starts_with(
            "requests of 10,256 tokens (10,000 prompt + 256 output): prompts of 10,000 tokens fill a llama.cpp slot of 8,192 tokens, and llama.cpp refuses them"
        )),
        "{:?}",
        p.warnings
    );
    assert!(p.run.as_ref().unwrap().speed.decode_tokens_per_s_per_user > 0.0);
    // 8,000 prompt tokens run; the output stops at 8,192 − 8,000 = 192 tokens (the check
    // `n_tokens + 1 >= n_ctx` runs before the sampled token joins the cache).
    i.workload.prompt_tokens = 8_000;
    let p = plan(&cat, &i).unwrap();
    assert!(
        p.warnings
            .iter()
            .any(|w| w.contains("at 192 tokens instead of 256")),
        "{:?}",
        p.warnings
    );
    // 8,000 + 192 = 8,192: every output token comes; no warning.
    i.workload.output_tokens = 192;
    let p = plan(&cat, &i).unwrap();
    assert!(
        !p.warnings.iter().any(|w| w.contains("llama.cpp slot")),
        "{:?}",
        p.warnings
    );
    i.workload.output_tokens = 256;
    // `-c` is padded to 256 cells: at a length of 8,000 the slot holds 8,192, so an
    // 8,100-token prompt is taken (its output stops at 92 tokens), not refused.
    i.flags.max_model_len = Some(8000);
    i.workload.prompt_tokens = 8_100;
    let p = plan(&cat, &i).unwrap();
    assert!(
        p.warnings.iter().any(
            |w| w.contains("slot of 8,192 tokens") && w.contains("at 92 tokens instead of 256")
        ),
        "{:?}",
        p.warnings
    );
    i.flags.max_model_len = Some(8192);
    // 1,024 + 256 fit the slot: no warning.
    i.workload.prompt_tokens = 1_024;
    let p = plan(&cat, &i).unwrap();
    assert!(!p.warnings.iter().any(|w| w.contains("llama.cpp slot")));
}

#[test]
fn a_transformers_request_the_kv_cache_cannot_hold_once_does_not_queue() {
    // transformers runs a request past the length, whole: 1,024 + 150,000 output tokens of
    // Llama 3.1 8B (128 KiB of KV per token) on a 24 GB L4 need 151,024 × 128 KiB = 18.4 GiB
    // of KV cache, more than what the weights leave. Before, "starts, but only 0.3 requests
    // … fit; 1 users will queue", at 0.0 tok/s; the first request runs out of memory instead.
    let cat = Catalog::bundled();
    let mut i = on("llama-3.1-8b", "l4");
    i.flags.engine = Engine::Transformers;
    i.tensor_parallel_size = Some(1);
    i.workload.output_tokens = 150_000;
    let p = plan(&cat, &i).unwrap();
    let e = &p.estimate;
    assert_eq!(e.fit, Fit::KvTooSmall, "{}", p.verdict);
    assert_eq!(e.kv_bytes_per_token, 131_072);
    assert!(
        e.verdict.to_string().starts_with(&format!(
            "will not start: one request of 151,024 tokens needs {}",
            vramfit_core::units::fmt_gib(151_024 * 131_072)
        )),
        "{}",
        e.verdict
    );
}

#[test]
fn llama_cpp_longest_context_for_users_is_the_longest_their_slots_fit_at() {
    // llama.cpp allocates every slot's cells at start: the longest context each of 4 users
    // can have is the longest `--max-model-len` at which 4 slots fit (`-np 4`), and one
    // 256-cell step more does not. Before, the pool's allocated cells answered it: 32,768
    // each on an L4, where a plan at that length held one request.
    let cat = Catalog::bundled();
    let mut i = on("llama-3.1-8b", "l4");
    i.flags.engine = Engine::LlamaCpp;
    i.tensor_parallel_size = Some(1);
    i.workload.users = 4;
    let l = plan(&cat, &i).unwrap().estimate.longest_len_for_users(4);
    assert!(l > 0);
    let at = |len: u64| {
        let mut j = i.clone();
        j.flags.max_model_len = Some(len);
        plan(&cat, &j).unwrap().estimate
    };
    let fits = at(l);
    assert_eq!(fits.fit, Fit::Fits, "{}", fits.verdict);
    assert!(fits.max_concurrency >= 4.0);
    let over = at(l + 256);
    assert!(over.max_concurrency < 4.0, "{}", over.verdict);
}

#[test]
fn a_decode_step_reads_the_lm_head_but_only_looks_up_the_input_embedding() {
    use vramfit_core::serving::Replica;
    use vramfit_core::sizing::weights_read_per_step;
    let cat = Catalog::bundled();
    let h100 = cat.gpu("h100-sxm").unwrap();
    // Llama 3.1 8B, untied: the input table is 128,256 × 4,096 × 2 B = 1,050,673,152 B
    // (128,256 is already a multiple of 64), only looked up each step; its LM head, as
    // large, is read whole.
    let s = scen("llama-3.1-8b", 1);
    assert_eq!(
        weights_per_gpu(&s) - weights_read_per_step(&s),
        1_050_673_152
    );
    // At TP 2 each rank holds (and skips) half of the padded vocabulary.
    let s2 = scen("llama-3.1-8b", 2);
    assert_eq!(
        weights_per_gpu(&s2) - weights_read_per_step(&s2),
        64_128 * 4_096 * 2
    );
    // The speed model streams those bytes and multiplies 2 × (active − embedding)
    // parameters per token: 8,030,261,248 − 525,336,576 = 7,504,924,672.
    let e = estimate_bytes(&s, (79.19 * GIB as f64) as u64);
    let r = Replica::of(&s, h100, &e);
    assert_eq!(r.dense_bytes, weights_read_per_step(&s) as f64);
    assert_eq!(r.dense_params, 7_504_924_672.0);
    // Qwen2.5-VL-7B: its untied table, 152,064 × 3,584 × 2 B = 1,089,994,752 B, and its
    // vision tower, 676,550,144 parameters × 2 B = 1,353,100,288 B (the catalog's count, the
    // printed `model.visual`), are loaded but no decode step reads them; nor multiplies by
    // them: 2 × (7,615,616,512 − 544,997,376) FLOPs per token, the text decoder (Qwen2.5-7B's
    // shapes and count) less its input table.
    let vl = scen("qwen2.5-vl-7b", 1);
    assert_eq!(
        weights_per_gpu(&vl) - weights_read_per_step(&vl),
        1_089_994_752 + 1_353_100_288
    );
    let r = Replica::of(&vl, h100, &estimate_bytes(&vl, (79.19 * GIB as f64) as u64));
    assert_eq!(r.dense_params, (7_615_616_512u64 - 544_997_376) as f64);
    // Llama 3.2 1B ties its embeddings: at PP 1 the table is the LM head, read every step.
    let tied = scen("llama-3.2-1b", 1);
    assert_eq!(weights_read_per_step(&tied), weights_per_gpu(&tied));
    // At PP 2 the last stage allocates its own LM head, and the first stage's table
    // (128,256 × 2,048 × 2 B = 525,336,576 B) is only looked up.
    let mut pp = scen("llama-3.2-1b", 1);
    pp.pipeline_parallel_size = 2;
    let stages = vramfit_core::sizing::stage_weights(&pp);
    // The last stage (its layers, the final norm and its LM head) is the busier one.
    assert_eq!(stages.len(), 2);
    assert_eq!(
        weights_read_per_step(&pp),
        (stages[0] - 525_336_576).max(stages[1])
    );
}

#[test]
fn falcon_ties_its_lm_head_as_vllm_loads_it() {
    // falcon-7b's config has no `tie_word_embeddings`; FalconConfig keeps PretrainedConfig's
    // default, true, and vLLM's FalconForCausalLM then uses the word embeddings as the LM
    // head, so the checkpoint's separate `lm_head.weight` (65,024 × 4,544) is not loaded:
    // 7,217,189,760 − 295,469,056 = 6,921,720,704 parameters.
    let m = arch("falcon-7b");
    assert!(m.tied_embeddings);
    assert_eq!(m.params().total(), 6_921_720_704);
    // The first falcon-7b config, RefinedWeb's (vLLM reads it as Falcon): the same model.
    let rw = vramfit_core::model::ModelArch::from_config(&serde_json::json!({
        "architectures": ["RWForCausalLM"], "model_type": "RefinedWebModel",
        "hidden_size": 4544, "n_head": 71, "n_layer": 32, "vocab_size": 65024,
        "multi_query": true, "parallel_attn": true, "bias": false}))
    .unwrap();
    assert!(rw.tied_embeddings);
    assert_eq!(rw.params().total(), 6_921_720_704);
    // Llama's config class passes false: a config without the key stays untied.
    let llama = vramfit_core::model::ModelArch::from_config(
        &serde_json::json!({"model_type": "llama", "architectures": ["LlamaForCausalLM"],
            "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
            "max_position_embeddings": 131072}),
    )
    .unwrap();
    assert!(!llama.tied_embeddings);
}

#[test]
fn one_config_wide_window_is_full_attention_in_a_tensorrt_engine() {
    use vramfit_core::serving::Replica;
    // Mistral 7B v0.1: sliding_window 4096 on all 32 layers, 8 KV heads × 128 × 2 (K, V) ×
    // 2 B = 4,096 B per layer per token. vLLM and TensorRT-LLM's PyTorch backend read at most
    // the window; a TensorRT engine built without `max_attention_window_size` (trtllm-bench
    // builds with none) attends over the whole sequence.
    let cat = Catalog::bundled();
    let h100 = cat.gpu("h100-sxm").unwrap();
    let mut s = scen("mistral-7b-v0.1", 1);
    s.flags.engine = Engine::TrtLlm;
    let e = estimate_bytes(&s, (79.19 * GIB as f64) as u64);
    let r = Replica::of(&s, h100, &e);
    assert_eq!(
        (r.kv_full_per_token, r.kv_window_per_token, r.window),
        (0.0, 131_072.0, 4096.0)
    );
    let whole = r.attending_whole_sequence();
    assert_eq!(
        (
            whole.kv_full_per_token,
            whole.kv_window_per_token,
            whole.window
        ),
        (131_072.0, 0.0, 0.0)
    );
    assert_eq!(whole.attn_full_flops, r.attn_window_flops);
    // Gemma 2 alternates 4,096-token windows with global layers: the engine's
    // variable-window pools keep the windows.
    let g = scen("gemma-2-9b", 1);
    let e = estimate_bytes(&g, (79.19 * GIB as f64) as u64);
    let r = Replica::of(&g, h100, &e);
    assert_eq!(r.attending_whole_sequence(), r);
}

#[test]
fn a_replica_counts_the_moe_layers_its_dep_traffic_crosses() {
    // DEP ranks gather and reduce-scatter around MoE layers only (`serving::step_time`).
    // From the configs: Llama 4 Maverick interleaves an MoE block every second layer
    // (`interleave_moe_layer_step` 2 of 48), DeepSeek-R1 keeps its first 3 of 61 dense
    // (`first_k_dense_replace`), Qwen3-30B-A3B is MoE in all 48, Llama 3.1 8B in none.
    use vramfit_core::serving::Replica;
    let cat = Catalog::bundled();
    let h200 = cat.gpu("h200-sxm").unwrap();
    let moe = |id: &str, pp: u64| {
        let mut s = scen(id, 8);
        s.pipeline_parallel_size = pp;
        let e = estimate_bytes(&s, h200.usable_bytes());
        let r = Replica::of(&s, h200, &e);
        (r.layers, r.moe_layers)
    };
    assert_eq!(moe("llama-4-maverick-17b-128e", 1), (48.0, 24.0));
    assert_eq!(moe("deepseek-r1", 1), (61.0, 58.0));
    assert_eq!(moe("qwen3-30b-a3b", 1), (48.0, 48.0));
    assert_eq!(moe("llama-3.1-8b", 1), (32.0, 0.0));
    // Per stage: Maverick over 2 stages holds 24 layers, 12 of them MoE.
    assert_eq!(moe("llama-4-maverick-17b-128e", 2), (24.0, 12.0));
}
