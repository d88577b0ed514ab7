//! KV-cache groups (vLLM V1 hybrid allocator) and the blocks one request needs.
//!
//! Source: `vllm/v1/core/kv_cache_utils.py` (`get_kv_cache_config`,
//! `check_enough_kv_cache_memory`, `get_max_concurrency_for_kv_cache_config`).
//!
//! **Hybrid sliding-window models** (Gemma 2/3, gpt-oss): layers are grouped into KV groups
//! of `min(layers of each type)` layers; all groups share one pool of blocks; a sliding layer
//! needs `min(window − 1 + max_num_batched_tokens, max_model_len)` tokens of blocks (+1 block)
//! per request, a full layer `max_model_len`. The log's "KV cache size: N tokens" is
//! `num_blocks ÷ groups × block_size`. Engines without hybrid allocation (SGLang,
//! TensorRT-LLM, transformers) keep one uniform group of all the stage's layers.

use super::{Engine, Scenario};
use crate::model::LayerAttention;
use serde::Serialize;
use std::fmt;

/// One KV-cache group (vLLM V1 hybrid allocator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KvGroup {
    /// Sliding window, or `None` for full attention.
    pub window: Option<u64>,
    /// Layers in this group (on this GPU's pipeline stage).
    pub layers: u64,
}

/// A short list of `Copy` items kept inline up to `N`, on the heap past that: the sliding
/// windows of a model (one or two kinds) fit inline, so an estimate allocates nothing.
#[derive(Clone)]
enum Inline<T: Copy, const N: usize> {
    Inline { len: usize, items: [T; N] },
    Heap(Vec<T>),
}

impl<T: Copy, const N: usize> Inline<T, N> {
    fn new(fill: T) -> Self {
        Self::Inline {
            len: 0,
            items: [fill; N],
        }
    }

    fn push(&mut self, x: T) {
        match self {
            Self::Inline { len, items } if *len < N => {
                items[*len] = x;
                *len += 1;
            }
            Self::Inline { items, .. } => {
                let mut v = Vec::with_capacity(2 * N + 1);
                v.extend_from_slice(&items[..]);
                v.push(x);
                *self = Self::Heap(v);
            }
            Self::Heap(v) => v.push(x),
        }
    }

    fn as_slice(&self) -> &[T] {
        match self {
            Self::Inline { len, items } => &items[..*len],
            Self::Heap(v) => v,
        }
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Self::Inline { len, items } => &mut items[..*len],
            Self::Heap(v) => v,
        }
    }
}

/// The KV groups of an estimate (vLLM hybrid allocator), kept as the layer counts they are
/// cut from: the layers of each sliding window, then the full-attention layers, each cut
/// into groups of `group_size` layers (the last group of a kind may hold fewer).
/// [`KvGroups::iter`] lists the groups in vLLM's order; serialized as that list.
#[derive(Clone)]
pub struct KvGroups {
    /// (window, layers) of each sliding window, in order of first appearance.
    windows: Inline<(u64, u64), 2>,
    /// Full-attention layers.
    full: u64,
    /// Layers per group (at least 1).
    group_size: u64,
}

impl KvGroups {
    /// The groups, in vLLM's order (sliding windows first, then full attention).
    pub fn iter(&self) -> impl Iterator<Item = KvGroup> + '_ {
        let size = self.group_size.max(1);
        let cut = move |window: Option<u64>, n: u64| {
            (0..n.div_ceil(size)).map(move |k| KvGroup {
                window,
                layers: (n - k * size).min(size),
            })
        };
        self.windows
            .as_slice()
            .iter()
            .flat_map(move |&(w, n)| cut(Some(w), n))
            .chain(cut(None, self.full))
    }

    /// Number of groups.
    #[must_use]
    pub fn len(&self) -> usize {
        usize::try_from(self.count()).unwrap_or(usize::MAX)
    }

    /// Whether there are no groups (never, for an estimate).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    /// The groups as a list.
    #[must_use]
    pub fn to_vec(&self) -> Vec<KvGroup> {
        self.iter().collect()
    }

    /// Layers per group (tensor slots).
    #[must_use]
    pub fn group_size(&self) -> u64 {
        self.group_size
    }

    /// Groups of `n` layers of one kind.
    fn groups_of(&self, n: u64) -> u64 {
        n.div_ceil(self.group_size.max(1))
    }

    pub(super) fn count(&self) -> u64 {
        self.windows
            .as_slice()
            .iter()
            .map(|&(_, n)| self.groups_of(n))
            .sum::<u64>()
            + self.groups_of(self.full)
    }

    /// Layers over all groups.
    pub(super) fn layers(&self) -> u64 {
        self.windows.as_slice().iter().map(|&(_, n)| n).sum::<u64>() + self.full
    }

    /// [`blocks_for_len`] over these groups: the groups of one kind need the same blocks each,
    /// so each kind's blocks are counted once and multiplied by its groups.
    pub(super) fn blocks_for_len(
        &self,
        block_size: u64,
        max_num_batched_tokens: u64,
        len: u64,
    ) -> u64 {
        let one = |window: Option<u64>| {
            blocks_for_len(
                &[KvGroup { window, layers: 0 }],
                block_size,
                max_num_batched_tokens,
                len,
            )
        };
        let sliding: u64 = self
            .windows
            .as_slice()
            .iter()
            .map(|&(w, n)| self.groups_of(n) * one(Some(w)))
            .sum();
        let full = self.groups_of(self.full);
        sliding + if full == 0 { 0 } else { full * one(None) }
    }
}

impl PartialEq for KvGroups {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl fmt::Debug for KvGroups {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for KvGroups {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_seq(self.iter())
    }
}

/// KV groups of the busiest pipeline stage, and layers per group (tensor slots).
#[must_use]
pub fn kv_groups(s: &Scenario) -> (Vec<KvGroup>, u64) {
    let groups = kv_groups_compact(s);
    (groups.to_vec(), groups.group_size)
}

/// [`kv_groups`] without allocating (for every estimate).
pub(super) fn kv_groups_compact(s: &Scenario) -> KvGroups {
    let m = &s.model;
    let pp = s.pipeline_parallel_size.max(1).min(m.layers.max(1));
    let n_stage = m.layers.div_ceil(pp);
    let uniform = |layers: u64| KvGroups {
        windows: Inline::new((0, 0)),
        full: layers,
        group_size: layers,
    };
    if !matches!(s.flags.engine, Engine::Vllm { .. }) {
        // An engine without hybrid allocation: every layer keeps the full context, except
        // SGLang/TRT-LLM which we treat conservatively.
        return uniform(n_stage.max(1));
    }
    let stage_layers = m
        .layer_attention
        .iter()
        .take(usize::try_from(n_stage).unwrap_or(0));
    let mut full = 0u64;
    // (window, layers), in order of first appearance.
    let mut windows: Inline<(u64, u64), 2> = Inline::new((0, 0));
    for a in stage_layers {
        match a {
            LayerAttention::Full => full += 1,
            LayerAttention::Sliding { window } => {
                match windows.as_mut_slice().iter_mut().find(|(w, _)| w == window) {
                    Some(e) => e.1 += 1,
                    None => windows.push((*window, 1)),
                }
            }
        }
    }
    let kinds = windows.as_slice();
    if kinds.is_empty() {
        // Uniform.
        return uniform(n_stage.max(1));
    }
    if full == 0 && kinds.len() == 1 {
        let n = kinds[0].1;
        return KvGroups {
            windows,
            full: 0,
            group_size: n,
        };
    }
    let group_size = kinds
        .iter()
        .map(|(_, n)| *n)
        .chain((full > 0).then_some(full))
        .min()
        .unwrap_or(1)
        .max(1);
    KvGroups {
        windows,
        full,
        group_size,
    }
}

/// Blocks one request of `len` tokens needs over all KV groups (vLLM
/// `get_max_concurrency_for_kv_cache_config`): a full-attention group `⌈len / block⌉`, a
/// sliding group `⌈min(window − 1 + max_num_batched_tokens, len) / block⌉ + 1`.
#[must_use]
pub fn blocks_for_len(
    groups: &[KvGroup],
    block_size: u64,
    max_num_batched_tokens: u64,
    len: u64,
) -> u64 {
    let bs = block_size.max(1);
    groups
        .iter()
        .map(|g| match g.window {
            None => len.div_ceil(bs),
            Some(w) => {
                w.saturating_sub(1)
                    .saturating_add(max_num_batched_tokens)
                    .min(len)
                    .div_ceil(bs)
                    + 1
            }
        })
        .sum()
}

impl KvGroups {
    /// The largest `len ≤ cap` whose request fits in `kv_blocks` blocks (0 if none): a
    /// binary search on [`blocks_for_len`]. Without sliding windows every group needs
    /// `⌈len / block⌉` blocks, so the answer is `⌊kv_blocks / groups⌋ × block` (capped): the
    /// value the search finds, without searching.
    pub(super) fn longest_fitting_len(
        &self,
        block_size: u64,
        max_num_batched_tokens: u64,
        kv_blocks: u64,
        cap: u64,
    ) -> u64 {
        if self.windows.as_slice().is_empty() {
            let per_group = kv_blocks / self.count().max(1);
            return per_group.saturating_mul(block_size.max(1)).min(cap);
        }
        self.longest_fitting_len_search(block_size, max_num_batched_tokens, kv_blocks, cap)
    }

    /// [`Self::longest_fitting_len`] by binary search, for any groups.
    fn longest_fitting_len_search(
        &self,
        block_size: u64,
        max_num_batched_tokens: u64,
        kv_blocks: u64,
        cap: u64,
    ) -> u64 {
        let (mut lo, mut hi) = (0u64, cap);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.blocks_for_len(block_size, max_num_batched_tokens, mid) <= kv_blocks {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }
}

#[cfg(test)]
mod tests;
