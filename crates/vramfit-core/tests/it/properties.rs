//! Invariants over the whole catalog and random scenarios (proptest).

use proptest::prelude::*;
use std::sync::LazyLock;
use vramfit_core::catalog::Catalog;
use vramfit_core::dtype::WeightFormat;
use vramfit_core::layout::{fewest_gpus, layout_problem};
use vramfit_core::sizing::{estimate_bytes, stage_weights, weights_per_gpu, Engine, Scenario, GIB};

static CAT: LazyLock<Catalog> = LazyLock::new(Catalog::bundled);

fn scen(i: usize) -> Scenario {
    let m = &CAT.models[i % CAT.models.len()];
    Scenario::new(m.arch().unwrap())
}

/// Weights per GPU of `s` in each of `formats` (`s` keeps the last).
fn weights_in<const N: usize>(s: &mut Scenario, formats: [WeightFormat; N]) -> [u64; N] {
    formats.map(|f| {
        s.format = f;
        weights_per_gpu(s)
    })
}

#[test]
fn int4_below_fp8_below_bf16_for_every_model() {
    use WeightFormat::{Bf16, Fp8, Int4Awq};
    for m in &CAT.models {
        let mut s = Scenario::new(m.arch().unwrap());
        let [b, f8, i4] = weights_in(&mut s, [Bf16, Fp8, Int4Awq]);
        assert!(i4 < f8 && f8 < b, "{}: int4 {i4} fp8 {f8} bf16 {b}", m.id);
    }
}

#[test]
fn gguf_files_order_and_split_without_losing_bytes_for_every_model() {
    // llama.cpp (`sizing/gguf.rs`): Q4_K_M below Q8_0 below F16 for every catalog model, and
    // the layers split over 1–4 GPUs hold the same bytes in all.
    for m in &CAT.models {
        let mut s = Scenario::new(m.arch().unwrap());
        s.flags.engine = Engine::LlamaCpp;
        let [b, q8, q4] = weights_in(
            &mut s,
            [
                WeightFormat::Bf16,
                WeightFormat::Int8W8a8,
                WeightFormat::Int4Awq,
            ],
        );
        assert!(q4 < q8 && q8 < b, "{}: Q4_K_M {q4} Q8_0 {q8} F16 {b}", m.id);
        let whole: u64 = stage_weights(&s).iter().sum();
        for pp in 2..=4 {
            s.pipeline_parallel_size = pp;
            let split = stage_weights(&s);
            assert_eq!(split.len() as u64, pp.min(s.model.layers), "{}", m.id);
            assert_eq!(split.iter().sum::<u64>(), whole, "{} at PP {pp}", m.id);
        }
        s.pipeline_parallel_size = 1;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn more_context_or_users_never_needs_less(i in 0usize..200, len in 256u64..200_000, extra in 1u64..100_000, users in 1u64..64) {
        let mut s = scen(i);
        s.flags.max_model_len = Some(len);
        let a = estimate_bytes(&s, 80 * GIB);
        s.flags.max_model_len = Some(len + extra);
        let b = estimate_bytes(&s, 80 * GIB);
        prop_assert!(b.kv_bytes_per_request >= a.kv_bytes_per_request);
        prop_assert!(b.max_concurrency <= a.max_concurrency + 1e-9);
        prop_assert!(b.weights_bytes + b.activation_bytes >= a.weights_bytes + a.activation_bytes);
        // More users of the same length can never fit more easily.
        let cat_gpu = CAT.gpu("h100-sxm").unwrap();
        s.workload.users = users;
        let few = fewest_gpus(&s, cat_gpu).map(|p| p.total_gpus);
        s.workload.users = users * 2;
        let many = fewest_gpus(&s, cat_gpu).map(|p| p.total_gpus);
        if let (Some(f), Some(m)) = (few, many) { prop_assert!(m >= f); }
    }

    #[test]
    fn more_tp_never_raises_weights_per_gpu(i in 0usize..200, k in 0usize..4) {
        let mut s = scen(i);
        let tps = [1u64, 2, 4, 8, 16];
        let (a, b) = (tps[k], tps[k + 1]);
        if layout_problem(&s.model, a, 1, 64).is_none() && layout_problem(&s.model, b, 1, 64).is_none() {
            s.tensor_parallel_size = a;
            let wa = weights_per_gpu(&s);
            s.tensor_parallel_size = b;
            prop_assert!(weights_per_gpu(&s) <= wa);
        }
    }

    #[test]
    fn the_gpu_count_is_a_valid_layout(i in 0usize..200, g in 0usize..100, len in 1024u64..65_536) {
        let mut s = scen(i);
        s.flags.max_model_len = Some(len);
        let gpu = &CAT.gpus[g % CAT.gpus.len()];
        if let Some(p) = fewest_gpus(&s, gpu) {
            prop_assert!(layout_problem(&s.model, p.tensor_parallel_size, p.pipeline_parallel_size, gpu.gpus_per_node()).is_none());
            prop_assert!(p.total_gpus == p.tensor_parallel_size * p.pipeline_parallel_size * p.replicas);
            prop_assert!(p.estimate.kv_blocks > 0);
        }
    }
}
