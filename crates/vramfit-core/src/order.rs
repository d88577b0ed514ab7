//! One sort for the small lists of the program (layouts, cost rows, OOM findings, name
//! suggestions, table rows).
//!
//! Every distinct `slice::sort_by` closure instantiates the standard library's sort
//! (driftsort or ipnsort: 1.5–5 KB of wasm each); the web bundle carried ~48 KB of them.
//! [`sort_by`] sorts an index permutation through one shared, non-generic comparison call,
//! so every caller shares a single instantiation and only a few dozen bytes are generic.
//! Ties keep their input order (the permutation breaks them by index), as `sort_by` does.
//! A checkpoint's tensors go through it too when their header is not in offset order (the
//! reference writer's headers are, and skip the sort); collecting into a `BTreeSet` sorts
//! with the standard stable sort as well, so sets on the web's paths are filled by
//! insertion.

use std::cmp::Ordering;

/// Sorts `v` stably by `cmp`.
pub fn sort_by<T>(v: &mut Vec<T>, cmp: impl Fn(&T, &T) -> Ordering) {
    let order = permutation(v.len(), &|a, b| cmp(&v[a], &v[b]));
    let mut slots: Vec<Option<T>> = v.drain(..).map(Some).collect();
    v.extend(
        order
            .into_iter()
            .filter_map(|i| slots.get_mut(i).and_then(Option::take)),
    );
}

/// Sorts `v` stably by the key `key` returns.
pub fn sort_by_key<T, K: Ord>(v: &mut Vec<T>, key: impl Fn(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// The indices `0..n` in the order `cmp` gives, ties by index.
fn permutation(n: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_unstable_by(|&a, &b| cmp(a, b).then(a.cmp(&b)));
    idx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_the_standard_stable_sort() {
        let mut seed = 0x2545_f491_u64;
        for len in 0..60 {
            let mut v: Vec<(u8, usize)> = (0..len)
                .map(|i| {
                    seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    ((seed >> 60) as u8, i)
                })
                .collect();
            let mut expected = v.clone();
            expected.sort_by_key(|p| p.0);
            sort_by_key(&mut v, |p| p.0);
            assert_eq!(v, expected, "len {len}");
            let mut desc = v.clone();
            sort_by(&mut desc, |a, b| b.0.cmp(&a.0));
            let mut expected = v.clone();
            expected.sort_by_key(|p| std::cmp::Reverse(p.0));
            assert_eq!(desc, expected, "len {len} descending");
        }
    }
}
