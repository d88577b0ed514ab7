use super::*;
use crate::catalog::Catalog;
use crate::dtype::WeightFormat;

#[test]
fn stage_weights_match_walking_every_layer() {
    let cat = Catalog::bundled();
    for entry in &cat.models {
        let mut s = Scenario::new(entry.arch().unwrap());
        for (format, tp, pp) in [
            (WeightFormat::Bf16, 1, 1),
            (WeightFormat::Fp8, 2, 3),
            (WeightFormat::Int4Awq, 8, 4),
            (WeightFormat::Fp8Ffn, 4, 8),
        ] {
            s.format = format;
            s.tensor_parallel_size = tp;
            s.pipeline_parallel_size = pp;
            let stages = stage_weights(&s);
            assert_eq!(stages.iter().copied().max(), Some(weights_per_gpu(&s)));
            // Every layer through `layer_params` (what sizing did before counting kinds).
            let (m, hp) = (&s.model, s.format.high_precision_bytes());
            let layer = |i: u64| layer_bytes_per_rank(&s, &m.layer_params(i));
            let pp = pp.min(m.layers.max(1));
            let vocab_shard = ceil_div(m.vocab.div_ceil(64) * 64, tp) * m.hidden * hp;
            for (stage, bytes) in (0..pp).zip(&stages) {
                let (start, n) = crate::sizing::pp_stage(m.layers, pp, stage);
                let mut walked: u64 = (start..start + n).map(layer).sum();
                walked += m.rope_cache_bytes;
                if stage == 0 {
                    walked += vocab_shard + super::extras_per_gpu(&s);
                }
                if stage == pp - 1 {
                    walked += m.hidden * hp;
                    if !m.tied_embeddings || pp > 1 {
                        walked += vocab_shard;
                    }
                }
                assert_eq!(*bytes, walked, "{} stage {stage}", entry.id);
            }
        }
    }
}

#[test]
fn a_checkpoints_tower_is_sized_and_read_as_a_configs() {
    // Qwen2.5-VL-7B from its headers: the decoder's bytes by class, and the tower's apart. Decode steps read neither the tower nor the untied
    // input table, from the headers as from the config; the tower sits on the first stage,
    // split over TP.
    let cat = Catalog::bundled();
    let arch = cat.model("qwen2.5-vl-7b").unwrap().model.arch().unwrap();
    let mut s = Scenario::new(arch);
    s.tensor_parallel_size = 2;
    // A tower of other bytes than the config's 676,550,144 parameters × 2 B (a re-saved
    // checkpoint): the headers' count is the one sized.
    let (embed, tower) = (152_064 * 3_584 * 2, 1_300_000_000);
    s.checkpoint = Some(HeaderWeights {
        format: s.format,
        shards: ShardBytes {
            embed,
            lm_head: embed,
            layer_sharded: 12_000_000_000,
            tower,
            ..ShardBytes::default()
        },
        source: HeaderSource::Headers,
    });
    assert_eq!(
        weights_per_gpu(&s) - weights_read_per_step(&s),
        embed / 2 + tower / 2
    );
    // The plan's encoder weights (what `--cpu-offload-gb` leaves on the GPU) are the
    // headers' tower too, not the config's estimate of it.
    let e = super::super::estimate_bytes(&s, 80 * crate::sizing::GIB);
    assert_eq!(e.features.encoder_weights_bytes, tower / 2);
    // `--mm-encoder-tp-mode data`: the tower whole on every rank.
    s.flags.features.mm.encoder_data_parallel = true;
    assert_eq!(
        weights_per_gpu(&s) - weights_read_per_step(&s),
        embed / 2 + tower
    );
}

#[test]
fn a_tied_checkpoints_stored_lm_head_is_not_loaded() {
    // falcon-7b ties its embeddings (FalconConfig's default) but its files store
    // `lm_head.weight`; vLLM skips it when tied (`falcon.py` `load_weights`), as Qwen3-0.6B's.
    let cat = Catalog::bundled();
    let mut s = Scenario::new(cat.model("falcon-7b").unwrap().model.arch().unwrap());
    let embed = 65_024 * 4_544 * 2;
    let with = |lm_head| HeaderWeights {
        format: s.format,
        shards: ShardBytes {
            embed,
            lm_head,
            layer_sharded: 12_000_000_000,
            ..ShardBytes::default()
        },
        source: HeaderSource::Headers,
    };
    s.checkpoint = Some(with(embed));
    let stored = weights_per_gpu(&s);
    s.checkpoint = Some(with(0));
    assert_eq!(stored, weights_per_gpu(&s));
    // At PP 2 the last stage allocates its own head, as for any tied model.
    s.pipeline_parallel_size = 2;
    let stages = stage_weights(&s);
    s.checkpoint = Some(with(embed));
    assert_eq!(stage_weights(&s), stages);
}
