//! New architectures read without refusal: Gemma 4 (per-layer KV shapes, `top_k_experts`,
//! K = V), Qwen3-Next (linear-attention state + full-attention KV), shared-KV layers,
//! assumptions instead of refusals. Every number is worked out by hand in the comments from
//! the fixture configs (`tests/data/configs/SOURCES.md`) and vLLM's source (cited in
//! `model.rs` and `sizing/kv.rs`).

use vramfit_core::catalog::Catalog;
use vramfit_core::dtype::WeightFormat;
use vramfit_core::inputs::Inputs;
use vramfit_core::model::{GlobalAttention, LayerAttention, ModelArch, RecurrentState};
use vramfit_core::plan::plan_arch;
use vramfit_core::sizing::{estimate_bytes, kv_groups, Scenario, GIB};

const GEMMA4: &str = include_str!("../data/configs/gemma-4-26b-a4b-it.config.json");
const QWEN3_NEXT: &str = include_str!("../data/configs/qwen3-coder-next.config.json");

fn gemma4() -> ModelArch {
    ModelArch::from_config_str(GEMMA4).expect("Gemma 4 26B-A4B reads")
}

/// The Gemma 4 fixture with its `text_config` edited by `edit`.
fn gemma4_with(edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) -> String {
    let mut v: serde_json::Value = serde_json::from_str(GEMMA4).expect("fixture is JSON");
    edit(v["text_config"].as_object_mut().expect("text_config"));
    v.to_string()
}

#[test]
fn gemma4_reads_top_k_experts_and_its_global_layers() {
    let m = gemma4();
    // The issue's refusal: "missing the required field `num_experts_per_tok`".
    let moe = m.moe.expect("MoE");
    assert_eq!(
        (moe.experts, moe.experts_per_token, moe.expert_intermediate),
        (128, 8, 704)
    );
    assert!(m.assumptions.is_empty(), "{:?}", m.assumptions);
    assert!(m
        .provenance
        .iter()
        .any(|p| p.quantity == "experts_per_token"
            && p.source == "config"
            && p.detail == "top_k_experts"));
    assert_eq!(
        m.global_attention,
        Some(GlobalAttention {
            kv_heads: 2,
            head_dim: 512,
            k_eq_v: true
        })
    );
    // layer_types: 5 sliding (window 1024) then 1 full, five times.
    assert_eq!(m.attention_of(0), LayerAttention::Sliding { window: 1024 });
    assert_eq!(m.attention_of(5), LayerAttention::Full);
    assert_eq!(
        m.layer_attention
            .iter()
            .filter(|a| **a == LayerAttention::Full)
            .count(),
        5
    );
}

#[test]
fn gemma4_kv_bytes_per_layer_kind() {
    let m = gemma4();
    // bf16, TP 1. Sliding: 2 (K, V) × 8 KV heads × 256 × 2 B = 8,192 B/token.
    assert_eq!(m.layer_kv_bytes_per_token(0, 2, 1), 8_192);
    // Full: 2 × 2 global KV heads × 512 global head dim × 2 B = 4,096 B/token. K = V does not
    // halve it: vLLM loads K into the K and V slots and caches both (gemma4.py).
    assert_eq!(m.layer_kv_bytes_per_token(5, 2, 1), 4_096);
    // All layers: 25 × 8,192 + 5 × 4,096 = 204,800 + 20,480 = 225,280 B/token.
    assert_eq!(m.kv_bytes_per_token_unsharded(2), 225_280);
    // The one-shape model read everything as 8 × 256: 30 × 8,192 = 245,760 — 9% more.
    // TP 2: sliding 8/2 = 4 heads → 4,096; full 2/2 = 1 head → 2 × 1 × 512 × 2 = 2,048.
    assert_eq!(m.layer_kv_bytes_per_token(0, 2, 2), 4_096);
    assert_eq!(m.layer_kv_bytes_per_token(5, 2, 2), 2_048);
    // TP 4: sliding 2 heads → 2,048; full 2 < 4 heads are replicated, 1 per GPU → 2,048.
    assert_eq!(m.layer_kv_bytes_per_token(0, 2, 4), 2_048);
    assert_eq!(m.layer_kv_bytes_per_token(5, 2, 4), 2_048);
}

#[test]
fn gemma4_parameters_match_the_model_card() {
    let p = gemma4().params();
    // h = 2816, vocab 262,144 (tied): embedding 262,144 × 2816 = 738,197,504.
    // Sliding attention: q 2816 × 16 × 256 = 11,534,336, k = v 2816 × 8 × 256 = 5,767,168,
    //   o 11,534,336, q/k norms 2 × 256 → 34,603,520.
    // Global attention (K = V, no v_proj): q 2816 × 16 × 512 = 23,068,672, k 2816 × 2 × 512
    //   = 2,883,584, o 23,068,672, norms 2 × 512 → 49,021,952.
    // Dense MLP beside the experts: 3 × 2816 × 2112 = 17,842,176.
    // MoE: 128 × 3 × 2816 × 704 = 761,266,176 + router 2816 × 128 = 360,448 + router scale
    //   2816 + per-expert scale 128 → 761,629,568.
    // Norms: 7 × 2816 = 19,712, layer scalar 1.
    // Layer: sliding 814,094,977, global 828,513,409.
    // Total: 25 × 814,094,977 + 5 × 828,513,409 + 738,197,504 + final norm 2816
    //   = 20,352,374,425 + 4,142,567,045 + 738,200,320 = 25,233,141,790.
    assert_eq!(p.total(), 25_233_141_790);
    // Model card: "25.2B total parameters" — within 0.2% (the text decoder alone).
    let card = 25.2e9;
    assert!((p.total() as f64 - card).abs() / card < 0.002);
    // Active: 8 of 128 experts: 8 × 3 × 2816 × 704 = 47,579,136 per layer instead of
    // 761,266,176 → 25,233,141,790 − 30 × 713,687,040 = 3,822,530,590; card "3.8B active".
    assert_eq!(p.active(), 3_822_530_590);
    assert!((p.active() as f64 - 3.8e9).abs() / 3.8e9 < 0.01);
}

#[test]
fn gemma4_vllm_pages_global_layers_at_twice_the_block() {
    let s = Scenario::new(gemma4());
    let e = estimate_bytes(&s, 80 * GIB);
    assert_eq!(e.kv_bytes_per_token, 225_280);
    // vLLM groups (kv_cache_utils.py): 25 sliding and 5 full layers → group size
    // min(25, 5) = 5: five sliding groups and one full group.
    let (groups, size) = kv_groups(&s);
    assert_eq!((groups.len(), size), (6, 5));
    // unify_kv_cache_spec_page_size: the sliding page (8,192 B/token) is the largest; the
    // full page (4,096) takes 8,192 / 4,096 = 2× the tokens: 32 per block at block 16.
    // One block over the 5 tensor slots: 16 × 8,192 × 5 = 655,360 B.
    assert_eq!(e.block_size, 16);
    let block = 16 * 8_192 * 5;
    assert_eq!(e.kv_blocks, e.kv_pool_bytes / block);
    // A request of max_model_len: each sliding group ⌈min(1023 + batched, len) / 16⌉ + 1
    // blocks, the full group ⌈len / 32⌉.
    let (len, batched) = (e.max_model_len, e.max_num_batched_tokens);
    let sliding = (1023 + batched).min(len).div_ceil(16) + 1;
    let blocks = 5 * sliding + len.div_ceil(32);
    assert_eq!(e.kv_bytes_per_request, blocks * block);
}

#[test]
fn qwen3_next_holds_a_constant_state_and_full_attention_kv() {
    let m = ModelArch::from_config_str(QWEN3_NEXT).expect("Qwen3-Next reads");
    // full_attention_interval 4: layers 3, 7, …, 47 are full attention, 36 are linear.
    assert_eq!(m.attention_of(3), LayerAttention::Full);
    assert_eq!(m.attention_of(0), LayerAttention::Recurrent);
    let full = m
        .layer_attention
        .iter()
        .filter(|a| **a == LayerAttention::Full)
        .count();
    assert_eq!(full, 12);
    assert!(matches!(
        m.recurrent,
        Some(RecurrentState::GatedDeltaNet { .. })
    ));
    // KV: 12 full layers × 2 × 2 KV heads × 256 × 2 B = 12 × 2,048 = 24,576 B/token; the
    // linear layers hold none.
    assert_eq!(m.kv_bytes_per_token_unsharded(2), 24_576);
    // State per linear layer (gated_delta_net_state_shape): conv (2 × 16 × 128 + 32 × 128)
    // × (4 − 1) = 8,192 × 3 = 24,576 and temporal 32 × 128 × 128 = 524,288 elements,
    // × 2 B = 1,097,728 B; over 36 layers 39,518,208 B per request.
    assert_eq!(m.state_bytes_per_request_layer(2, 1), 1_097_728);
    // TP 2: 8,192 / 2 × 3 + 16 × 128 × 128 = 12,288 + 262,144 = 274,432 × 2 = 548,864.
    assert_eq!(m.state_bytes_per_request_layer(2, 2), 548_864);
    // Parameters: the published safetensors totals of Qwen3-Coder-Next.
    // Full layer: q+gate 2048 × 16 × 256 × 2 = 16,777,216, k = v 2048 × 2 × 256 = 1,048,576
    //   each, o 4096 × 2048 = 8,388,608, q/k norms 512 → 27,263,488.
    // Linear layer: in_proj_qkvz 2048 × (2 × 2048 + 2 × 4096) = 25,165,824, in_proj_ba
    //   2048 × 64 = 131,072, out_proj 8,388,608, conv 8,192 × 4 = 32,768, A_log + dt_bias 64,
    //   norm 128 → 33,718,464.
    // MoE: 512 × 3 × 2048 × 512 = 1,610,612,736 + router 1,048,576 + shared expert
    //   3,145,728 + shared gate 2048 → 1,614,809,088; 2 norms 4,096 per layer.
    // 12 × 1,642,076,672 + 36 × 1,648,531,648 + 2 × 151,936 × 2048 + 2048 = 79,674,391,296.
    let p = m.params();
    assert_eq!(p.total(), 79_674_391_296);
    assert_eq!(p.active(), 3_874_929_408);
    // vLLM (HybridAttentionMambaModelConfig): attention block = 16 × ⌈1,097,728 / (16 ×
    // 2,048)⌉ = 16 × ⌈33.5⌉ = 544 tokens. Groups of min(12 full, 36 linear) = 12 layers: one
    // full group, 3 linear groups. A block over the 12 slots: 544 × 2,048 × 12 =
    // 13,369,344 B; a request takes ⌈len / 544⌉ + 3 blocks (one per linear group).
    let s = Scenario::new(m);
    let e = estimate_bytes(&s, 80 * GIB);
    assert_eq!(e.kv_bytes_per_token, 24_576);
    assert_eq!(e.block_size, 544);
    let block = 544 * 2_048 * 12;
    assert_eq!(e.kv_blocks, e.kv_pool_bytes / block);
    assert_eq!(e.kv_tokens, e.kv_blocks / 4 * 544);
    assert_eq!(
        e.kv_bytes_per_request,
        (e.max_model_len.div_ceil(544) + 3) * block
    );
}

#[test]
fn unknown_experts_per_token_is_assumed_and_warned() {
    let text = gemma4_with(|t| {
        t.remove("top_k_experts");
    });
    let m = ModelArch::from_config_str(&text).expect("sized with an assumption, not refused");
    // 128 experts: the usual top-8 (Qwen3-MoE, Gemma 4 itself, DeepSeek-V3).
    assert_eq!(m.moe.map(|x| x.experts_per_token), Some(8));
    assert_eq!(m.assumptions.len(), 1);
    assert_eq!(m.assumptions[0].field, "experts_per_token");
    assert_eq!(m.assumptions[0].value, "8");
    assert!(m
        .provenance
        .iter()
        .any(|p| p.quantity == "experts_per_token" && p.source == "assumption"));
    // The plan says so, in its warnings and its assumptions list.
    let cat = Catalog::bundled();
    let gpu = cat.gpu("h100-sxm").expect("h100-sxm in catalog");
    let i = Inputs::default();
    let plan = plan_arch(
        m,
        "config.json".into(),
        "config.json".into(),
        WeightFormat::Bf16,
        None,
        None,
        gpu,
        &i,
    );
    assert!(
        plan.warnings
            .iter()
            .any(|w| w.starts_with("assumed experts_per_token = 8")),
        "{:?}",
        plan.warnings
    );
    assert_eq!(plan.assumptions.len(), 1);
    // 8 of 128 is also the real value: the same active parameters as the real config.
    assert_eq!(plan.active_parameters, 3_822_530_590);
}

#[test]
fn an_unknown_layer_kind_is_sized_as_full_attention_with_a_warning() {
    let text = gemma4_with(|t| {
        t["layer_types"][0] = serde_json::json!("mystery_attention");
    });
    let m = ModelArch::from_config_str(&text).expect("sized with an assumption");
    assert_eq!(m.attention_of(0), LayerAttention::Full);
    assert_eq!(m.assumptions.len(), 1);
    assert!(m.assumptions[0].why.contains("mystery_attention"));
    // Layer 0 now keeps the whole context in the global shape: 2 × 2 × 512 × 2 = 4,096 B.
    assert_eq!(m.layer_kv_bytes_per_token(0, 2, 1), 4_096);
}

#[test]
fn shared_kv_layers_allocate_nothing() {
    // Gemma-3n-style (synthetic values): 30 layers, the last 10 reuse earlier KV (vLLM
    // `kv_sharing_target_layer_name`), 4 sliding + 1 full repeated, 2 KV heads × 256.
    let lt: Vec<&str> = (0..30)
        .map(|i| {
            if (i + 1) % 5 == 0 {
                "full_attention"
            } else {
                "sliding_attention"
            }
        })
        .collect();
    let cfg = serde_json::json!({
        "model_type": "gemma3n_text", "hidden_size": 2048, "num_hidden_layers": 30,
        "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 256,
        "intermediate_size": 8192, "vocab_size": 262400, "sliding_window": 512,
        "layer_types": lt, "num_kv_shared_layers": 10
    });
    let m = ModelArch::from_config(&cfg).expect("reads");
    // Per layer 2 × 2 × 256 × 2 = 2,048 B/token; layers 20..30 hold none.
    assert_eq!(m.layer_kv_bytes_per_token(19, 2, 1), 2_048);
    assert_eq!(m.layer_kv_bytes_per_token(20, 2, 1), 0);
    // 20 × 2,048 = 40,960 B/token (30 × 2,048 = 61,440 without sharing).
    assert_eq!(m.kv_bytes_per_token_unsharded(2), 40_960);
    // vLLM groups the 20 caching layers only: 16 sliding + 4 full → size 4, 4 + 1 groups.
    let (groups, size) = kv_groups(&Scenario::new(m));
    assert_eq!((groups.len(), size), (5, 4));
}

#[test]
fn impossible_values_are_still_clear_errors() {
    let bad = gemma4_with(|t| {
        t.insert("num_kv_shared_layers".into(), serde_json::json!(30));
    });
    let e = ModelArch::from_config_str(&bad).unwrap_err().to_string();
    assert!(e.contains("num_kv_shared_layers"), "{e}");
    let bad = gemma4_with(|t| {
        t.insert("num_global_key_value_heads".into(), serde_json::json!(32));
    });
    let e = ModelArch::from_config_str(&bad).unwrap_err().to_string();
    assert!(e.contains("num_global_key_value_heads"), "{e}");
    let bad = gemma4_with(|t| {
        t.insert("hybrid_override_pattern".into(), serde_json::json!("M*"));
    });
    let e = ModelArch::from_config_str(&bad).unwrap_err().to_string();
    assert!(e.contains("hybrid_override_pattern"), "{e}");
    let e = ModelArch::from_config_str(r#"{"num_hidden_layers": 2}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("hidden_size"), "{e}");
}

#[test]
fn nemotron_h_pattern_sizes_mamba_state_and_four_attention_layers() {
    // Nemotron-H 4B shape (nvidia `nemotron_h`, as quoted from its config.json by public
    // loader tests): one block per layer, `M` Mamba2, `*` attention, `-` MLP.
    let cfg = serde_json::json!({
        "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
        "vocab_size": 131072, "hidden_size": 3136, "num_hidden_layers": 42,
        "hybrid_override_pattern": "M-M-M-MM-M-M*-M-M*-M-M-M*-M-M-MM*-MMM-M-M-",
        "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
        "intermediate_size": 12544, "ssm_state_size": 128, "mamba_num_heads": 96,
        "mamba_head_dim": 80, "conv_kernel": 4, "n_groups": 8, "use_conv_bias": true,
        "max_position_embeddings": 262144, "tie_word_embeddings": false
    });
    let m = ModelArch::from_config(&cfg).expect("reads");
    let count = |k: LayerAttention| m.layer_attention.iter().filter(|a| **a == k).count();
    // 42 letters: 21 M, 4 *, 17 -.
    assert_eq!(count(LayerAttention::Recurrent), 21);
    assert_eq!(count(LayerAttention::Full), 4);
    assert_eq!(count(LayerAttention::MlpOnly), 17);
    assert!(m.assumptions.is_empty(), "{:?}", m.assumptions);
    // KV only on the 4 attention layers: 4 × 2 × 8 × 128 × 2 B = 16,384 B/token.
    assert_eq!(m.kv_bytes_per_token_unsharded(2), 16_384);
    // Mamba2 state (mamba2_state_shape): conv (96 × 80 + 2 × 8 × 128) × 3 = 9,728 × 3 =
    // 29,184, temporal 96 × 80 × 128 = 983,040; 1,012,224 × 2 B = 2,024,448 B a layer.
    assert_eq!(m.state_bytes_per_request_layer(2, 1), 2_024_448);
    // Per-kind parameters (no MLP in mixer layers, one norm each):
    // MLP layer: up + down 2 × 3136 × 12544 = 78,675,968 + norm 3136 = 78,679,104.
    assert_eq!(m.layer_params(1).total(), 78_679_104);
    // Attention layer: q 3136 × 5120 + k, v 2 × 3136 × 1024 + o 5120 × 3136 + norm
    //   = 16,056,320 + 6,422,528 + 16,056,320 + 3136 = 38,538,304.
    assert_eq!(m.layer_params(12).total(), 38_538_304);
    // Mamba layer: in_proj 3136 × (2 × 7680 + 2048 + 96) = 54,892,544, out_proj 7680 × 3136
    //   = 24,084,480, conv 9,728 × (4 + 1) = 48,640, A_log/D/dt_bias 288, norm 7680,
    //   layer norm 3136 → 79,036,768.
    assert_eq!(m.layer_params(0).total(), 79_036_768);
    // vLLM: attention block 16 × ⌈2,024,448 / (16 × 4,096)⌉ = 16 × ⌈30.9⌉ = 496 tokens;
    // groups of min(4, 21) = 4 layers: 1 attention group, ⌈21 / 4⌉ = 6 Mamba groups. A
    // block: 496 × 4,096 × 4 = 8,126,464 B; a request ⌈len / 496⌉ + 6 blocks.
    let e = estimate_bytes(&Scenario::new(m), 80 * GIB);
    assert_eq!(e.kv_bytes_per_token, 16_384);
    assert_eq!(e.block_size, 496);
    assert_eq!(e.kv_tokens, e.kv_blocks / 7 * 496);
    assert_eq!(
        e.kv_bytes_per_request,
        (e.max_model_len.div_ceil(496) + 6) * 8_126_464
    );
}

#[test]
fn jamba_period_and_mamba1_state() {
    // Jamba shape: the transformers `JambaConfig` defaults (those of Jamba-v0.1):
    // 32 layers, attention at i % 8 == 4, Mamba1 elsewhere; inner 2 × 4096, state 16,
    // conv 4.
    let cfg = serde_json::json!({
        "model_type": "jamba", "hidden_size": 4096, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
        "vocab_size": 65536, "attn_layer_period": 8, "attn_layer_offset": 4,
        "expert_layer_period": 2, "expert_layer_offset": 1, "num_experts": 16,
        "num_experts_per_tok": 2, "mamba_d_state": 16, "mamba_d_conv": 4,
        "mamba_expand": 2, "mamba_dt_rank": 256
    });
    let m = ModelArch::from_config(&cfg).expect("reads");
    assert_eq!(m.attention_of(4), LayerAttention::Full);
    assert_eq!(m.attention_of(12), LayerAttention::Full);
    assert_eq!(m.attention_of(0), LayerAttention::Recurrent);
    // MoE on odd layers (i % 2 == 1): 16 of 32.
    assert_eq!(m.layer_is_moe.iter().filter(|x| **x).count(), 16);
    assert!(!m.layer_is_moe[0] && m.layer_is_moe[1]);
    // KV: 4 attention layers × 2 × 8 × 128 × 2 B = 16,384 B/token.
    assert_eq!(m.kv_bytes_per_token_unsharded(2), 16_384);
    // Mamba1 state (mamba1_state_shape): 8,192 × (4 − 1) + 8,192 × 16 = 155,648 × 2 B.
    assert_eq!(m.state_bytes_per_request_layer(2, 1), 311_296);
}

#[test]
fn the_catalog_configs_need_no_assumption() {
    // Every bundled model is read from its own config.json: none may need a guess, so none
    // of their plans carries an assumption warning.
    for m in &Catalog::bundled().models {
        let a = m.arch().expect("catalog model reads");
        assert!(a.assumptions.is_empty(), "{}: {:?}", m.id, a.assumptions);
        assert!(
            a.provenance
                .iter()
                .any(|p| p.quantity == "hidden" && p.source == "config"),
            "{}",
            m.id
        );
    }
}
