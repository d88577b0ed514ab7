//! Inputs the fuzzing found (fuzz/regressions/): each must now be rejected with a clear
//! error or sized without panicking (overflow) and quickly.

use std::time::Instant;
use vramfit_core::dtype::WeightFormat;
use vramfit_core::model::ModelArch;
use vramfit_core::share::{decode, encode};
use vramfit_core::sizing::{estimate_bytes, Scenario};

#[test]
fn share_link_regressions_read_back() {
    // The `share_link` target's property: a decoded link encodes to one that decodes to the
    // same inputs, with no notices.
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/regressions/share_link"
    );
    let mut n = 0;
    for e in std::fs::read_dir(dir).expect("regressions folder") {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        n += 1;
        let (inputs, _) = decode(&String::from_utf8_lossy(&bytes));
        let link = encode(&inputs);
        let (again, notices) = decode(&link);
        assert_eq!(inputs, again, "{link}");
        assert!(notices.is_empty(), "{link}: {notices:?}");
    }
    assert!(n >= 1);
    // The input it found: a subnormal tokens/s target, written as 321 characters before.
    let (i, _) = decode("tps=31e-320");
    assert_eq!(i.workload.target_tokens_per_s, Some(3.1e-319));
    assert_eq!(encode(&i), "tps=3.1e-319");
    let (i, _) = decode("tps=0.000001&util=0.9");
    assert_eq!(encode(&i), "util=0.9&tps=0.000001");
}

#[test]
fn config_json_regressions_never_panic() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fuzz/regressions/config_json"
    );
    let mut n = 0;
    for e in std::fs::read_dir(dir).expect("regressions folder") {
        let p = e.unwrap().path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        n += 1;
        let text = std::fs::read_to_string(&p).unwrap();
        let t0 = Instant::now();
        match ModelArch::from_config_str(&text) {
            Err(e) => assert!(!e.to_string().is_empty()),
            Ok(arch) => {
                let _ = arch.params().total();
                let _ = arch.kv_bytes_per_token_layer(2, 8);
                for (format, tp, pp, len) in [
                    (WeightFormat::Fp32, 1, 1, u64::MAX),
                    (WeightFormat::Int4Awq, 8, 4, 1 << 20),
                ] {
                    let mut s = Scenario::new(arch.clone());
                    s.format = format;
                    s.tensor_parallel_size = tp;
                    s.pipeline_parallel_size = pp;
                    s.flags.max_model_len = Some(len);
                    s.flags.block_size = Some(u64::MAX);
                    s.flags.max_num_batched_tokens = Some(u64::MAX);
                    let e = estimate_bytes(&s, 80 << 30);
                    assert!(!e.verdict.to_string().is_empty());
                }
            }
        }
        // Not a timing assertion on speed, a guard against walking millions of layers.
        assert!(
            t0.elapsed().as_secs() < 5,
            "{} took {:?}",
            p.display(),
            t0.elapsed()
        );
    }
    assert!(n >= 17, "only {n} regression inputs found");
}

/// `base` reads; each (field, from, to, message): `base` with that field's value `from`
/// written as `to` is refused with `message`.
fn broken_one_at_a_time(base: &str, cases: &[(&str, &str, &str, &str)]) {
    assert!(ModelArch::from_config_str(base).is_ok());
    for (field, from, to, message) in cases {
        let text = base.replacen(
            &format!("\"{field}\":{from}"),
            &format!("\"{field}\":{to}"),
            1,
        );
        assert_ne!(text, base, "{field}");
        let e = ModelArch::from_config_str(&text).unwrap_err();
        assert_eq!(e.to_string(), *message, "{field} = {to}");
    }
}

#[test]
fn a_config_saved_with_a_byte_order_mark_reads() {
    let cfg = r#"{"architectures":["LlamaForCausalLM"],"hidden_size":4096,
      "intermediate_size":14336,"num_hidden_layers":32,"num_attention_heads":32,
      "num_key_value_heads":8,"vocab_size":128256,"max_position_embeddings":131072}"#;
    assert_eq!(
        ModelArch::from_config_str(&format!("\u{feff}{cfg}")),
        ModelArch::from_config_str(cfg)
    );
    assert!(ModelArch::from_config_str(cfg).is_ok());
}

#[test]
fn a_config_field_present_with_an_unusable_value_is_not_called_missing() {
    // Llama-3.1-8B's config.json with one field broken at a time: present but no whole number
    // is "unusable", naming what it is; only an absent (or null) field is "missing".
    let base = r#"{"architectures":["LlamaForCausalLM"],"hidden_size":4096,
      "intermediate_size":14336,"num_hidden_layers":32,"num_attention_heads":32,
      "num_key_value_heads":8,"vocab_size":128256,"max_position_embeddings":131072}"#;
    broken_one_at_a_time(base, &[
        ("hidden_size", "4096", "-1", "config.json field `hidden_size` is unusable: expected a non-negative integer, got -1"),
        ("num_hidden_layers", "32", "1e30", "config.json field `num_hidden_layers` is unusable: expected a non-negative integer, got a decimal number"),
        ("num_attention_heads", "32", "\"32\"", "config.json field `num_attention_heads` is unusable: expected a non-negative integer, got a string"),
        ("vocab_size", "128256", "-5", "config.json field `vocab_size` is unusable: expected a non-negative integer, got -5"),
        ("hidden_size", "4096", "null", "config.json is missing the required field `hidden_size`"),
        ("max_position_embeddings", "131072", "0", "config.json field `max_position_embeddings` is unusable: 0 positions; a model holds at least one"),
    ]);
}

#[test]
fn a_config_message_names_the_file_it_came_from() {
    // A dropped `my-model.json` (the page takes any .json as the config) or a CLI path: the
    // message names that file, not `config.json`.
    let e = ModelArch::from_config_str("{\"hidden_size\": 4096,").unwrap_err();
    let m = e.in_file("my-model.json");
    assert!(m.starts_with("my-model.json is not valid JSON: "), "{m}");
    assert!(
        e.to_string().starts_with("config.json is not valid JSON: "),
        "{e}"
    );
    let e = ModelArch::from_config_str("[1]").unwrap_err();
    assert_eq!(
        e.in_file("models/a.json"),
        "models/a.json must be a JSON object"
    );
    let e = ModelArch::from_config_str("{\"hidden_size\": -1}").unwrap_err();
    assert_eq!(
        e.in_file("b.json"),
        "b.json field `hidden_size` is unusable: expected a non-negative integer, got -1"
    );
    let e = ModelArch::from_config_str("{}").unwrap_err();
    assert_eq!(
        e.in_file("c.json"),
        "c.json is missing the required field `hidden_size`"
    );
}

#[test]
fn an_unusable_value_under_an_alias_is_named_as_the_config_spells_it() {
    // GPT-2's config.json (openai-community/gpt2) spells the sizes `n_embd`, `n_layer`,
    // `n_head`: a broken one is named so, not "missing `hidden_size`", which the file never had.
    let base = r#"{"architectures":["GPT2LMHeadModel"],"model_type":"gpt2","n_embd":768,
      "n_layer":12,"n_head":12,"n_positions":1024,"vocab_size":50257}"#;
    broken_one_at_a_time(base, &[
        ("n_embd", "768", "-1", "config.json field `n_embd` is unusable: expected a non-negative integer, got -1"),
        ("n_layer", "12", "\"12\"", "config.json field `n_layer` is unusable: expected a non-negative integer, got a string"),
        ("n_head", "12", "12.5", "config.json field `n_head` is unusable: expected a non-negative integer, got a decimal number"),
        ("n_embd", "768", "null", "config.json is missing the required field `hidden_size`"),
        ("n_embd", "768", "0", "config.json field `n_embd` is unusable: 0 is out of range (1..=65536)"),
        ("n_layer", "12", "4096", "config.json field `n_layer` is unusable: 4096 is out of range (1..=1024)"),
    ]);
}
