use super::*;
use crate::catalog::Catalog;

/// The KV groups as a list, the way they were built before [`KvGroups`] kept counts: vLLM's
/// hybrid groups from the whole model's layers, one group of the busiest stage's layers
/// otherwise.
fn reference_groups(s: &Scenario) -> (Vec<KvGroup>, u64) {
    let m = &s.model;
    let pp = s.pipeline_parallel_size.max(1).min(m.layers.max(1));
    let n_stage = m.layers.div_ceil(pp);
    let hybrid = matches!(s.flags.engine, Engine::Vllm { .. })
        && m.layer_attention
            .iter()
            .any(|a| matches!(a, LayerAttention::Sliding { .. }));
    let stage: Vec<&LayerAttention> = m
        .layer_attention
        .iter()
        .take(usize::try_from(if hybrid { m.layers } else { n_stage }).unwrap_or(0))
        .collect();
    let full = stage
        .iter()
        .filter(|a| matches!(a, LayerAttention::Full))
        .count() as u64;
    let mut windows: Vec<(u64, u64)> = Vec::new();
    for a in &stage {
        if let LayerAttention::Sliding { window } = a {
            match windows.iter_mut().find(|(w, _)| w == window) {
                Some(e) => e.1 += 1,
                None => windows.push((*window, 1)),
            }
        }
    }
    if windows.is_empty() || !matches!(s.flags.engine, Engine::Vllm { .. }) {
        let total = n_stage.max(1);
        return (
            vec![KvGroup {
                window: None,
                layers: total,
            }],
            total,
        );
    }
    if full == 0 && windows.len() == 1 {
        let (w, n) = windows[0];
        return (
            vec![KvGroup {
                window: Some(w),
                layers: n,
            }],
            n,
        );
    }
    let mut counts: Vec<u64> = windows.iter().map(|(_, n)| *n).collect();
    if full > 0 {
        counts.push(full);
    }
    let size = counts.iter().copied().min().unwrap_or(1).max(1);
    let mut groups = Vec::new();
    for (w, n) in &windows {
        for k in 0..n.div_ceil(size) {
            groups.push(KvGroup {
                window: Some(*w),
                layers: (n - k * size).min(size),
            });
        }
    }
    for k in 0..full.div_ceil(size) {
        groups.push(KvGroup {
            window: None,
            layers: (full - k * size).min(size),
        });
    }
    (groups, size)
}

/// Checks the counted groups against the list, and the closed-form longest length
/// against the binary search.
fn check_groups(s: &Scenario) {
    let g = kv_groups_compact(s);
    let (list, size) = reference_groups(s);
    assert_eq!((g.to_vec(), g.group_size), (list.clone(), size));
    assert_eq!(kv_groups(s), (list.clone(), size));
    assert_eq!(g.len(), list.len());
    assert_eq!(g.layers(), list.iter().map(|x| x.layers).sum::<u64>());
    for (bs, tokens) in [(16, 8192), (1, 2048), (32, 1)] {
        for len in [0, 1, 15, 16, 17, 1000, 4096, 131_072] {
            assert_eq!(
                g.blocks_for_len(bs, tokens, len),
                blocks_for_len(&list, bs, tokens, len)
            );
        }
        for kv_blocks in [0, 1, 7, 1000, 123_456, 1 << 30] {
            for cap in [1, 8192, 131_072, 1 << 40] {
                assert_eq!(
                    g.longest_fitting_len(bs, tokens, kv_blocks, cap),
                    g.longest_fitting_len_search(bs, tokens, kv_blocks, cap),
                );
            }
        }
    }
}

#[test]
fn counted_kv_groups_are_the_group_list() {
    let cat = Catalog::bundled();
    for m in &cat.models {
        let mut s = Scenario::new(m.arch().unwrap());
        for engine in [Engine::DEFAULT, Engine::Sglang] {
            s.flags.engine = engine;
            for pp in [1, 2, 3, 4, 8] {
                s.pipeline_parallel_size = pp;
                check_groups(&s);
            }
        }
    }
    // Patterns the catalog lacks: many window sizes (past the inline two), windows only,
    // more full layers than sliding ones, no layers.
    let mut s = Scenario::new(cat.models[0].arch().unwrap());
    let w = |window| LayerAttention::Sliding { window };
    for pattern in [
        vec![w(1), w(2), w(3), w(4), w(5), LayerAttention::Full],
        vec![w(512), w(4096), w(512), w(4096), w(8192)],
        vec![w(128); 7],
        vec![LayerAttention::Full, LayerAttention::Full, w(64)],
        vec![],
    ] {
        s.model.layers = pattern.len() as u64;
        s.model.layer_attention = pattern;
        for pp in [1, 2] {
            s.pipeline_parallel_size = pp;
            check_groups(&s);
        }
    }
}
