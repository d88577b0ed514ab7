//! Every number agrees with the verdict (issue 15): a plan that does not start has no speed
//! and no cost, "GPUs needed" is a layout that starts, every offered fix starts when planned
//! again, and what vLLM refuses is "will not start" with the reason. Hand-worked cases from
//! the examples, then the property over the whole catalog × GPUs × formats.

use std::sync::LazyLock;
use vramfit_core::catalog::Catalog;
use vramfit_core::dtype::{KvDtype, WeightFormat};
use vramfit_core::plan::{plan, Fix, Inputs, Plan};
use vramfit_core::sizing::{Fit, Refusal, GIB};

static CAT: LazyLock<Catalog> = LazyLock::new(Catalog::bundled);

fn at(model: &str, gpu: &str, f: impl FnOnce(&mut Inputs)) -> (Inputs, Plan) {
    let mut i = Inputs {
        model: model.into(),
        gpu: gpu.into(),
        ..Inputs::default()
    };
    f(&mut i);
    let p = plan(&CAT, &i).unwrap_or_else(|e| panic!("{model} on {gpu}: {e}"));
    (i, p)
}

/// The plan of `inputs` with `fix` applied.
fn with(inputs: &Inputs, fix: &Fix) -> Plan {
    plan(&CAT, &fix.apply(inputs)).expect("plans")
}

#[test]
fn seventy_b_on_one_a100_needs_two_and_says_so() {
    // Llama 3.1 70B bf16: 70,553,706,496 parameters × 2 B = 131.4 GiB of weights at TP 1,
    // above the 0.9 × 79.56 GiB = 71.6 GiB budget of one A100 80 GB.
    let (i, p) = at("llama-3.1-70b", "a100-80gb-sxm", |i| {
        i.tensor_parallel_size = Some(1);
    });
    assert_eq!(p.parameters, 70_553_706_496);
    assert!(p.estimate.weights_bytes >= 2 * p.parameters);
    assert!(p.estimate.weights_bytes > p.estimate.budget_bytes);
    assert_eq!(p.estimate.fit, Fit::WeightsTooLarge);
    assert!(
        p.run.is_none(),
        "no speed or cost for a server that does not start"
    );
    // "GPUs needed" names the fewest layout that starts: TP 2 (65.7 GiB of weights each).
    let n = p.needed.expect("a layout starts");
    assert_eq!(
        (n.gpus, n.tensor_parallel_size, n.pipeline_parallel_size),
        (2, 2, 1)
    );
    assert_eq!(n.to_string(), "2 (TP 2)");
    assert_eq!(p.gpus_needed, 2);
    assert!(
        p.verdict
            .starts_with("will not start at TP 1 × PP 1 (as given): weights and runtime"),
        "{}",
        p.verdict
    );
    assert_eq!(p.fixes[0].tensor_parallel_size, Some(2));
    assert!(
        p.verdict.contains("fix: `--tensor-parallel-size 2`"),
        "{}",
        p.verdict
    );
    for f in &p.fixes {
        assert!(with(&i, f).run.is_some(), "{f} does not start");
    }
    // The formats table: fp8 (70.5 GB of weights) does not fit one A100 at 8192 tokens either;
    // it says what it would take instead of a speed.
    let fp8 = p
        .formats
        .iter()
        .find(|r| r.format == WeightFormat::Fp8)
        .unwrap();
    assert_eq!(fp8.decode_tokens_per_s, None);
    assert_eq!(fp8.total_gpus, 0);
    assert!(
        fp8.outcome.starts_with("fits at ≤ ") || fp8.outcome.starts_with("needs TP"),
        "{}",
        fp8.outcome
    );
}

#[test]
fn awq_seventy_b_on_an_l40s_fits_at_the_length_the_pool_holds() {
    let (i, p) = at("llama-3.1-70b", "l40s", |i| {
        i.format = Some(WeightFormat::Int4Awq);
        i.tensor_parallel_size = Some(1);
        i.flags.max_model_len = Some(8192);
    });
    assert_eq!(p.estimate.fit, Fit::KvTooSmall);
    // KV per token: 80 layers × 8 KV heads × 128 dims × 2 (K, V) × 2 B = 327,680 B; a
    // 16-token block is 5,242,880 B, and the longest request is the whole blocks the pool
    // holds × 16.
    assert_eq!(p.estimate.kv_bytes_per_token, 80 * 8 * 128 * 2 * 2);
    let blocks = p.estimate.kv_pool_bytes / (16 * 327_680);
    let longest = blocks * 16;
    assert_eq!(longest, 7_488);
    assert_eq!(p.fixes[0].max_model_len, Some(longest));
    assert_eq!(p.context_fix(), Some(7_488));
    assert_eq!(p.fixes[0].outcome(), "fits at ≤ 7,488 tokens");
    assert!(with(&i, &p.fixes[0]).run.is_some());
    assert!(with(
        &i,
        &Fix {
            max_model_len: Some(longest + 16),
            ..Fix::default()
        }
    )
    .run
    .is_none());
    // The commands are the fixed plan: the AWQ checkpoint at 7,488 tokens, no bf16 id and no
    // `--quantization` (vLLM reads it from the checkpoint's config).
    let vllm = vramfit_core::commands::by_id(&p, "vllm").unwrap();
    assert!(
        vllm.starts_with("vllm serve hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4 "),
        "{vllm}"
    );
    assert!(vllm.contains("--max-model-len 7488"), "{vllm}");
    assert!(
        !vllm.contains("--quantization") && !vllm.contains("meta-llama/Llama-3.1-70B-Instruct "),
        "{vllm}"
    );
    let sglang = vramfit_core::commands::by_id(&p, "sglang").unwrap();
    assert!(
        sglang.contains("--model-path hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4"),
        "{sglang}"
    );
    assert!(sglang.contains("--context-length 7488"), "{sglang}");
    let gguf = vramfit_core::commands::by_id(&p, "llama_cpp").unwrap();
    assert!(gguf.contains(":Q4_K_M"), "{gguf}");
    assert!(
        !gguf.contains("meta-llama/Llama-3.1-70B-Instruct-GGUF"),
        "{gguf}"
    );
    assert!(vramfit_core::commands::notes(&p)[0].contains("`--max-model-len 7488`"));
}

#[test]
fn what_vllm_refuses_will_not_start_with_the_reason_and_a_fix_that_does() {
    // TP 3 against Llama 3.1 8B's 32 heads.
    let (i, p) = at("llama-3.1-8b", "h100-sxm", |i| {
        i.tensor_parallel_size = Some(3)
    });
    assert_eq!(p.estimate.fit, Fit::Refused);
    assert_eq!(
        p.estimate.refusal,
        Some(Refusal::TpHeads { tp: 3, heads: 32 })
    );
    assert!(p.run.is_none());
    assert!(
        p.verdict
            .contains("vLLM refuses it: TP 3 does not divide 32 attention heads"),
        "{}",
        p.verdict
    );
    assert!(!p.fixes.is_empty());
    for f in &p.fixes {
        let q = with(&i, f);
        assert!(q.run.is_some(), "{f}: {}", q.verdict);
        let tp = f.tensor_parallel_size.unwrap();
        assert_eq!(32 % tp, 0, "{f}");
    }
    // A length above the model's 131,072, refused without VLLM_ALLOW_LONG_MAX_MODEL_LEN.
    let (i, p) = at("llama-3.1-8b", "h100-sxm", |i| {
        i.flags.max_model_len = Some(1_000_000)
    });
    assert_eq!(
        p.estimate.refusal,
        Some(Refusal::LongerThanModel {
            max_model_len: 1_000_000,
            max_position_embeddings: 131_072
        })
    );
    // No layout starts it as asked: "GPUs needed" names none, the fix names the length.
    assert_eq!(p.needed, None);
    assert_eq!(p.fixes[0].max_model_len, Some(131_072));
    assert!(with(&i, &p.fixes[0]).run.is_some());
    assert!(
        p.fixes.iter().all(|f| f.tensor_parallel_size.is_none()),
        "{:?}",
        p.fixes
    );
    let (_, q) = at("llama-3.1-8b", "h100-sxm", |i| {
        i.flags.max_model_len = Some(200_000);
        i.flags.allow_long_max_model_len = true;
    });
    assert!(q.run.is_some(), "{}", q.verdict);
    assert!(q
        .warnings
        .iter()
        .any(|w| w.contains("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")));
    // Block sizes: 7 is not in vLLM's `BlockSize` literal; 8 is, but no CUDA attention
    // backend takes it (multiples of 16); 32 is fine.
    for (b, refused) in [(7, true), (8, true), (16, false), (32, false), (256, false)] {
        let (i, p) = at("llama-3.1-8b", "h100-sxm", |i| i.flags.block_size = Some(b));
        assert_eq!(
            p.estimate.fit == Fit::Refused,
            refused,
            "block {b}: {}",
            p.verdict
        );
        if refused {
            assert_eq!(p.fixes[0].block_size, Some(16));
            assert!(with(&i, &p.fixes[0]).run.is_some());
        }
    }
    // SGLang does not take vLLM's block sizes: no refusal there.
    let (_, p) = at("llama-3.1-8b", "h100-sxm", |i| {
        i.flags.block_size = Some(7);
        i.flags.engine = vramfit_core::engine::Engine::Sglang;
    });
    assert!(p.run.is_some());
}

#[test]
fn the_pre_flight_says_which_layout_it_checked() {
    let (_, auto) = at("llama-3.1-70b", "h100-sxm", |_| {});
    assert!(
        auto.verdict.starts_with(&format!(
            "fits at TP {} × PP {} (chosen: fewest GPUs): ",
            auto.tensor_parallel_size, auto.pipeline_parallel_size
        )),
        "{}",
        auto.verdict
    );
    let (_, given) = at("llama-3.1-70b", "h100-sxm", |i| {
        i.tensor_parallel_size = Some(4)
    });
    assert!(
        given
            .verdict
            .starts_with("fits at TP 4 × PP 1 (as given): "),
        "{}",
        given.verdict
    );
}

#[test]
fn kv_fp8_is_offered_only_where_it_starts() {
    let (i, p) = at("llama-3.1-8b", "rtx-4090", |i| {
        i.tensor_parallel_size = Some(1);
        i.flags.max_model_len = Some(131_072);
    });
    assert_eq!(p.estimate.fit, Fit::KvTooSmall);
    for f in &p.fixes {
        assert!(with(&i, f).run.is_some(), "{f}");
    }
    // 16 GiB of bf16 KV for one 131,072-token request; fp8 halves it to 8 GiB, still above
    // the ~5 GiB pool of a 24 GB card next to 15 GiB of weights: not offered alone.
    assert!(p.estimate.kv_bytes_per_request >= 16 * GIB);
    assert!(!p.fixes.contains(&Fix {
        kv_cache_dtype: Some(KvDtype::Fp8),
        ..Fix::default()
    }));
}

/// Over the whole catalog × GPUs × (bf16, fp8, int4-awq), at the fewest GPUs and at TP 1:
/// a plan that does not start reports no speed and no cost; "GPUs needed" is a layout that
/// starts; every offered fix starts; the formats rows say the same.
#[test]
fn every_number_agrees_with_the_verdict_over_the_catalog() {
    let mut checked = (0, 0, 0);
    for m in &CAT.models {
        let max_pos = m.arch().unwrap().max_position_embeddings;
        for g in &CAT.gpus {
            for (fi, format) in [WeightFormat::Bf16, WeightFormat::Fp8, WeightFormat::Int4Awq]
                .into_iter()
                .enumerate()
            {
                // One variant per case, rotating: the fewest GPUs; TP 1 as given; TP 3 (which
                // most models refuse); twice the model's length; SGLang; a block size no CUDA
                // backend takes; a long workload at 4 users.
                let variant = (fi + m.id.len() + 3 * g.id.len()) % 7;
                let tp1 = variant == 1;
                let mut i = Inputs {
                    model: m.id.clone(),
                    gpu: g.id.clone(),
                    format: Some(format),
                    tensor_parallel_size: tp1.then_some(1),
                    ..Inputs::default()
                };
                match variant {
                    2 => i.tensor_parallel_size = Some(3),
                    3 => i.flags.max_model_len = Some(2 * m.context_native.max(4096)),
                    4 => i.flags.engine = vramfit_core::engine::Engine::Sglang,
                    5 => i.flags.block_size = Some(8),
                    6 => {
                        i.workload.users = 4;
                        i.workload.prompt_tokens = 6000;
                        i.flags.max_model_len = Some(32_768);
                    }
                    _ => {}
                }
                let p = plan(&CAT, &i).unwrap();
                let what = format!("{} on {} in {format} (tp1 {tp1})", m.id, g.id);
                assert_eq!(p.run.is_some(), p.estimate.fit.starts(), "{what}");
                if let Some(n) = p.needed {
                    // At its layout, with what the engine refuses corrected (a length above
                    // the model's becomes the model's).
                    let mut j = Inputs {
                        tensor_parallel_size: Some(n.tensor_parallel_size),
                        pipeline_parallel_size: Some(n.pipeline_parallel_size),
                        ..i.clone()
                    };
                    if let Some(Refusal::LongerThanModel {
                        max_position_embeddings,
                        ..
                    }) = p.estimate.refusal
                    {
                        j.flags.max_model_len = Some(max_position_embeddings);
                    }
                    let q = plan(&CAT, &j).unwrap();
                    assert!(
                        q.run.is_some(),
                        "{what}: needed {n} does not start: {}",
                        q.verdict
                    );
                    assert_eq!(q.gpus_needed, n.gpus, "{what}");
                    checked.0 += 1;
                } else {
                    assert_eq!(p.gpus_needed, 0, "{what}");
                }
                if p.run.is_some() {
                    assert!(p.fixes.is_empty(), "{what}");
                    assert!(p.launch.as_ref().is_some_and(|l| !l.fixed), "{what}");
                } else {
                    assert!(!p.verdict.starts_with("fits"), "{what}");
                    assert_eq!(p.launch.is_some(), !p.fixes.is_empty(), "{what}");
                    for f in &p.fixes {
                        let q = with(&i, f);
                        assert!(
                            q.run.is_some(),
                            "{what}: fix {f} does not start: {}",
                            q.verdict
                        );
                        // A shorter length still holds one request of the workload (or is
                        // the model's own maximum, when the workload is longer than it).
                        if let Some(l) = f.max_model_len {
                            assert!(
                                l >= q.workload_tokens || l == max_pos,
                                "{what}: {f} below the workload's {} tokens",
                                q.workload_tokens
                            );
                        }
                        checked.1 += 1;
                    }
                }
                for r in &p.formats {
                    let starts = r.estimate.fit.starts();
                    assert_eq!(
                        r.decode_tokens_per_s.is_some(),
                        starts,
                        "{what}: {}",
                        r.format
                    );
                    assert_eq!(r.total_gpus > 0, starts, "{what}: {}", r.format);
                    let none = r.outcome == "does not fit" || r.outcome.starts_with("refused");
                    assert_eq!(
                        r.fix.is_some(),
                        !starts && !none,
                        "{what}: {} {}",
                        r.format,
                        r.outcome
                    );
                    if let Some(f) = r.fix {
                        assert_eq!(f.format, None, "{what}: a row's fix keeps its format");
                        let q = with(
                            &i,
                            &Fix {
                                format: Some(r.format),
                                ..f
                            },
                        );
                        assert!(
                            q.run.is_some(),
                            "{what}: row {} fix {f} does not start",
                            r.format
                        );
                        checked.2 += 1;
                    }
                }
            }
        }
    }
    // The property ran over real cases of each kind.
    eprintln!("needed layouts, plan fixes, row fixes planned again: {checked:?}");
    assert!(
        checked.0 > 4_000 && checked.1 > 2_000 && checked.2 > 5_000,
        "{checked:?}"
    );
}
