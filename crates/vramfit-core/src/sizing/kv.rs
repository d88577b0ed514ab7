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
//! TensorRT-LLM, transformers) keep one uniform group of all the stage's layers. With
//! pipeline stages the groups are the whole model's, each stage allocating tensors for the
//! layers of them it holds, and the pool takes the smallest block count of the stages
//! (`get_kv_cache_configs`; [`kv_groups_compact`]).
//!
//! **Per-layer KV shapes** (Gemma 4: global layers with their own head dim and KV heads).
//! Source: `vllm/v1/core/kv_cache_utils.py` at commit
//! `001cabc1be16a59a70d720ed61a13b678c060a18` (`get_kv_cache_groups`,
//! `unify_kv_cache_spec_page_size`, `get_kv_cache_config_from_groups`). A model whose layers
//! are all one attention type but differ in size is one `UniformTypeKVCacheSpecs` group:
//! `num_blocks = pool ÷ Σ layer pages`. Mixed types with different page sizes are unified
//! first: a layer whose page is smaller gets `block_size × (max page ÷ its page)` tokens per
//! block (or, when that does not divide, keeps its block size and a padded page), so a
//! block holds `block_size × max bytes per token` per layer of a group. Layers that share
//! an earlier layer's KV (`kv_sharing_target_layer_name`, Gemma 3n/4) and recurrent and
//! MLP-only layers are in no attention group.
//!
//! **Recurrent layers** (linear attention, Mamba). vLLM gives each a `MambaSpec` whose page
//! holds one request's whole state (`vllm/v1/kv_cache_interface.py`), and first raises the
//! attention block size until an attention page holds it
//! (`HybridAttentionMambaModelConfig.verify_and_update_config`, without prefix caching):
//! `block = align × ⌈mamba page ÷ (align × attention bytes per token)⌉`, `align =
//! max(16, block_size)`; the Mamba page is padded to the attention page. Recurrent layers
//! then form groups of `group_size` layers like any other kind, and a request takes one
//! block in each recurrent group. Engines without the hybrid allocator: the state (all
//! recurrent layers of the stage) is counted as `⌈state ÷ block bytes⌉` more blocks of the
//! pool.

use super::{Engine, Scenario};
use crate::model::LayerAttention;
use serde::Serialize;
use std::fmt;

/// One KV-cache group (vLLM V1 hybrid allocator).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct KvGroup {
    /// Sliding window, or `None` for full attention.
    pub window: Option<u64>,
    /// Layers in this group, over the whole model (a pipeline stage holds some of them:
    /// [`kv_groups_compact`]).
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
    /// Bytes one token takes in one block row over all tensor slots: a block holds
    /// `block_size × slot_bytes` bytes. Hybrid: the largest per-layer bytes × the tensors of
    /// the busiest pipeline stage (`group_size` with one stage); one group: the sum over the
    /// stage's layers.
    slot_bytes: u64,
    /// Tokens-per-block multiplier of the sliding and the full layers (page unification).
    window_ratio: u64,
    /// See `window_ratio`.
    full_ratio: u64,
    /// KV bytes one token takes over the stage's layers on this GPU.
    bytes_per_token: u64,
    /// Recurrent-state bytes one request holds over the stage's layers on this GPU.
    state_bytes: u64,
    /// vLLM: groups of recurrent layers (one block per request each); 0 elsewhere.
    state_groups: u64,
    /// vLLM with recurrent layers: the attention block size raised to hold a Mamba page.
    block_size: Option<u64>,
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

    /// Bytes one token takes in one block row over all tensor slots (see the field).
    #[must_use]
    pub fn slot_bytes(&self) -> u64 {
        self.slot_bytes
    }

    /// Hybrid groups (sliding windows beside other layers): the bytes a request holds on
    /// the busiest stage per token of its context, over every group of each kind, as
    /// (full-attention, sliding): a group takes `slot_bytes ÷ ratio` a token, whichever stage
    /// holds its layers ([`kv_groups_compact`]). `None` for one uniform group.
    #[must_use]
    pub fn held_per_token(&self) -> Option<(u64, u64)> {
        let windows = self.windows.as_slice();
        if windows.is_empty() {
            return None;
        }
        let per = |groups: u64, ratio: u64| groups.saturating_mul(self.slot_bytes) / ratio.max(1);
        let sliding: u64 = windows.iter().map(|&(_, n)| self.groups_of(n)).sum();
        Some((
            per(self.groups_of(self.full), self.full_ratio),
            per(sliding, self.window_ratio),
        ))
    }

    /// KV bytes one token takes over the stage's layers on this GPU.
    #[must_use]
    pub fn bytes_per_token(&self) -> u64 {
        self.bytes_per_token
    }

    /// Recurrent-state bytes one request holds over the stage's layers on this GPU.
    #[must_use]
    pub fn state_bytes(&self) -> u64 {
        self.state_bytes
    }

    /// The block size the engine runs at when asked for `asked`: vLLM raises it for
    /// models with Mamba-like layers (module docs).
    #[must_use]
    pub fn block_size(&self, asked: u64) -> u64 {
        self.block_size.map_or(asked, |b| b.max(asked))
    }

    /// Blocks one request's recurrent state takes, at `block_size`.
    fn state_blocks(&self, block_size: u64) -> u64 {
        if self.state_groups > 0 {
            return self.state_groups;
        }
        let block = block_size.max(1).saturating_mul(self.slot_bytes);
        if self.state_bytes == 0 || block == 0 {
            0
        } else {
            self.state_bytes.div_ceil(block)
        }
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
            + self.state_groups
    }

    /// Layers over all groups.
    #[cfg(all(test, feature = "bundled"))]
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
        let one = |window: Option<u64>, ratio: u64| {
            blocks_for_len(
                &[KvGroup { window, layers: 0 }],
                block_size.max(1).saturating_mul(ratio.max(1)),
                max_num_batched_tokens,
                len,
            )
        };
        let sliding: u64 = self
            .windows
            .as_slice()
            .iter()
            .map(|&(w, n)| self.groups_of(n) * one(Some(w), self.window_ratio))
            .sum();
        let full = self.groups_of(self.full);
        let state = if len == 0 {
            0
        } else {
            self.state_blocks(block_size)
        };
        sliding
            + if full == 0 {
                0
            } else {
                full * one(None, self.full_ratio)
            }
            + state
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

/// The KV groups (vLLM's hybrid groups are the whole model's, [`kv_groups_compact`]; one
/// uniform group holds the busiest stage's layers), and layers per group.
#[must_use]
pub fn kv_groups(s: &Scenario) -> (Vec<KvGroup>, u64) {
    let groups = kv_groups_compact(s);
    (groups.to_vec(), groups.group_size)
}

/// The attention kinds of a range of layers: full-attention layers, the layers of each
/// sliding window (in order of first appearance) and recurrent layers; layers that share an
/// earlier layer's KV are left out. The KV groups count them, and so does the serving
/// model's stage (`serving/layouts.rs`).
#[derive(Clone)]
pub(crate) struct Kinds {
    /// Full-attention layers.
    pub(crate) full: u64,
    windows: Inline<(u64, u64), 2>,
    recurrent: u64,
}

impl Kinds {
    /// The kinds of layers `start..end` (a layer the config lists no kind for is full).
    pub(crate) fn of(m: &crate::model::ModelArch, start: u64, end: u64) -> Self {
        let mut k = Self {
            full: 0,
            windows: Inline::new((0, 0)),
            recurrent: 0,
        };
        for i in start..end {
            if m.shares_kv(i) {
                continue;
            }
            match m.attention_of(i) {
                LayerAttention::Full => k.full += 1,
                LayerAttention::Sliding { window } => {
                    match k
                        .windows
                        .as_mut_slice()
                        .iter_mut()
                        .find(|(w, _)| *w == window)
                    {
                        Some(e) => e.1 += 1,
                        None => k.windows.push((window, 1)),
                    }
                }
                LayerAttention::Recurrent => k.recurrent += 1,
                LayerAttention::MlpOnly => {}
            }
        }
        k
    }

    /// Sliding-window layers, all windows together.
    pub(crate) fn window_layers(&self) -> u64 {
        self.windows.as_slice().iter().map(|&(_, n)| n).sum()
    }

    /// The widest sliding window (0 without one).
    pub(crate) fn widest_window(&self) -> u64 {
        self.windows
            .as_slice()
            .iter()
            .map(|&(w, _)| w)
            .max()
            .unwrap_or(0)
    }

    fn window_of(&self, window: u64) -> u64 {
        self.windows
            .as_slice()
            .iter()
            .find(|(w, _)| *w == window)
            .map_or(0, |&(_, n)| n)
    }
}

/// [`kv_groups`] without allocating (for every estimate).
///
/// With pipeline stages, vLLM forms the groups from the whole model's layers and projects
/// them onto each stage (`vllm/v1/core/kv_cache_utils.py` `get_kv_cache_configs`: "Generate
/// the KV cache groups based on the layer ratio of the whole model", then
/// `project_kv_cache_groups_to_worker`); a group takes every `G`-th layer of its kind
/// (`layers[i::num_groups]`, `_get_kv_cache_groups_uniform_page_size`), so a stage holding
/// `L` layers of a kind cut into `G` groups holds at most `⌈L ÷ G⌉` of any one group. Each
/// stage allocates that many tensors (`group_size = max(len(group.layer_names))`,
/// `get_kv_cache_config_from_groups`) and every stage takes the smallest block count of them
/// all, so the stage with the most tensors sets the blocks of the pool. A request needs
/// blocks in every group, whichever stage holds its layers. The layer counts of the groups
/// listed ([`KvGroups::iter`]) are the whole model's. Engines without the hybrid allocator
/// keep one group of the stage whose layers hold the most KV per token.
pub(super) fn kv_groups_compact(s: &Scenario) -> KvGroups {
    let m = &s.model;
    let pp = s.pipeline_parallel_size.max(1).min(m.layers.max(1));
    let (dtype, tp) = (s.kv_bytes(), s.tensor_parallel_size.max(1));
    let w_bytes = m.kv_bytes_per_token_kind(LayerAttention::Sliding { window: 1 }, dtype, tp);
    let f_bytes = m.kv_bytes_per_token_kind(LayerAttention::Full, dtype, tp);
    let state_layer = m.state_bytes_per_request_layer(dtype, tp);
    let per_token = |k: &Kinds| k.full * f_bytes + k.window_layers() * w_bytes;
    let all = Kinds::of(m, 0, m.layers);
    let stage = |r: u64| {
        let (first, n) = crate::sizing::pp_stage(m.layers, pp, r);
        Kinds::of(m, first, first + n)
    };
    // The stage whose layers hold the most KV per token (then recurrent state). One stage:
    // the whole model; every layer full attention (most models): the stage of the most
    // layers, `⌈layers ÷ pp⌉` (`pp_stage`), without walking the stages.
    let busiest = if pp == 1 {
        all.clone()
    } else if all.full == m.layers {
        Kinds {
            full: m.layers.div_ceil(pp),
            windows: Inline::new((0, 0)),
            recurrent: 0,
        }
    } else {
        (1..pp).fold(stage(0), |a, r| {
            let b = stage(r);
            let key = |k: &Kinds| (per_token(k), k.recurrent);
            if key(&b) > key(&a) {
                b
            } else {
                a
            }
        })
    };
    let bytes_per_token = per_token(&busiest);
    let state_bytes = busiest.recurrent.saturating_mul(state_layer);
    let kv_layers = busiest.full + busiest.window_layers();
    let uniform = || KvGroups {
        windows: Inline::new((0, 0)),
        full: kv_layers.max(1),
        group_size: kv_layers.max(1),
        slot_bytes: bytes_per_token,
        window_ratio: 1,
        full_ratio: 1,
        bytes_per_token,
        state_bytes,
        state_groups: 0,
        block_size: None,
    };
    let vllm = matches!(s.flags.engine, Engine::Vllm { .. });
    let all_kv = all.full + all.window_layers();
    if vllm && all.recurrent > 0 && all_kv > 0 {
        let g = hybrid_with_state(s, &all, (w_bytes, f_bytes), uniform());
        return KvGroups {
            slot_bytes: g.slot_bytes / g.group_size.max(1)
                * stage_tensors(&all, g.group_size, pp, &stage),
            ..g
        };
    }
    if !vllm || all.windows.as_slice().is_empty() {
        // An engine without hybrid allocation: every layer keeps the full context, except
        // SGLang/TRT-LLM which we treat conservatively. vLLM without sliding layers: one
        // group (`UniformTypeKVCacheSpecs` when the layers differ in size).
        return uniform();
    }
    let kinds = all.windows.as_slice();
    let max_bytes = if all.full > 0 {
        w_bytes.max(f_bytes)
    } else {
        w_bytes
    };
    // `unify_kv_cache_spec_page_size`: a smaller page takes more tokens per block when it
    // divides the largest, else keeps its block size in a padded page.
    let ratio = |b: u64| {
        if b > 0 && max_bytes % b == 0 {
            max_bytes / b
        } else {
            1
        }
    };
    let group_size = if all.full == 0 && kinds.len() == 1 {
        kinds[0].1
    } else {
        kinds
            .iter()
            .map(|(_, n)| *n)
            .chain((all.full > 0).then_some(all.full))
            .min()
            .unwrap_or(1)
            .max(1)
    };
    KvGroups {
        slot_bytes: max_bytes.saturating_mul(stage_tensors(&all, group_size, pp, &stage)),
        windows: all.windows,
        full: all.full,
        group_size,
        window_ratio: ratio(w_bytes),
        full_ratio: ratio(f_bytes),
        bytes_per_token,
        state_bytes,
        state_groups: 0,
        block_size: None,
    }
}

/// The KV tensors the busiest pipeline stage allocates for the whole model's groups of
/// `group_size` layers (see [`kv_groups_compact`]): over the stages and kinds, the most
/// layers of one group a stage holds, `⌈layers of the kind on the stage ÷ groups of the
/// kind⌉`. One stage: `group_size` itself.
fn stage_tensors(all: &Kinds, group_size: u64, pp: u64, stage: &dyn Fn(u64) -> Kinds) -> u64 {
    if pp <= 1 {
        return group_size;
    }
    let gs = group_size.max(1);
    let most = |on: u64, of: u64| {
        if on == 0 {
            0
        } else {
            on.div_ceil(of.div_ceil(gs))
        }
    };
    (0..pp)
        .map(|r| {
            let k = stage(r);
            all.windows
                .as_slice()
                .iter()
                .map(|&(w, n)| most(k.window_of(w), n))
                .chain([most(k.full, all.full), most(k.recurrent, all.recurrent)])
                .max()
                .unwrap_or(0)
        })
        .max()
        .unwrap_or(gs)
        .max(1)
}

/// vLLM's groups for a model with recurrent layers (module docs): the attention block
/// raised to hold one layer's state, then groups of `group_size` layers of each kind.
fn hybrid_with_state(
    s: &Scenario,
    all: &Kinds,
    (w_bytes, f_bytes): (u64, u64),
    base: KvGroups,
) -> KvGroups {
    let (windows, full, recurrent) = (all.windows.clone(), all.full, all.recurrent);
    let n_window = all.window_layers();
    let attn1 = match (n_window > 0, full > 0) {
        (true, true) => w_bytes.max(f_bytes),
        (true, false) => w_bytes,
        _ => f_bytes,
    };
    let mamba_page = s
        .model
        .state_bytes_per_request_layer(s.kv_bytes(), s.tensor_parallel_size.max(1));
    let asked = s
        .flags
        .block_size
        .unwrap_or_else(|| s.flags.engine.default_block_size())
        .max(1);
    let align = asked.max(16);
    let block = if attn1 == 0 {
        asked
    } else {
        align.saturating_mul(mamba_page.div_ceil(align.saturating_mul(attn1)).max(1))
    };
    let group_size = windows
        .as_slice()
        .iter()
        .map(|(_, n)| *n)
        .chain((full > 0).then_some(full))
        .chain(Some(recurrent))
        .min()
        .unwrap_or(1)
        .max(1);
    let ratio = |b: u64| {
        if b > 0 && attn1 % b == 0 {
            attn1 / b
        } else {
            1
        }
    };
    KvGroups {
        windows,
        full,
        group_size,
        slot_bytes: attn1.saturating_mul(group_size),
        window_ratio: ratio(w_bytes),
        full_ratio: ratio(f_bytes),
        state_groups: recurrent.div_ceil(group_size),
        block_size: Some(block.max(asked)),
        ..base
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
        if self.windows.as_slice().is_empty() && self.state_bytes == 0 {
            let per_group = kv_blocks / self.count().max(1);
            return per_group
                .saturating_mul(block_size.max(1).saturating_mul(self.full_ratio.max(1)))
                .min(cap);
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

#[cfg(all(test, feature = "bundled"))] // the tests read the embedded catalog
mod tests;
