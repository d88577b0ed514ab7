//! The header parser's fast path: a strict scanner for the shape of JSON that
//! real safetensors headers have, reading straight into [`TensorInfo`]s
//! without building `serde_json` values.
//!
//! The reference writer (huggingface/safetensors `serialize`) emits exactly
//! this subset: one object whose values are `__metadata__` (an object of
//! strings) or tensor entries `{"dtype": "...", "shape": [...],
//! "data_offsets": [b, e]}`, keys and strings without escapes, numbers as
//! plain non-negative integers, spaces as padding at the end.
//!
//! The scanner accepts only what it fully understands and returns `None` for
//! anything else (an escape in a string, an unknown dtype, an extra field, a
//! duplicate key, a number with a sign, fraction or exponent, malformed
//! JSON...). The caller then parses the header again through `serde_json`,
//! which gives the precise error or handles the rarer syntax. So the fast path
//! never changes a result: `parse_header` and `parse_header_via_serde` agree
//! on every input, which the property tests (tests/it/properties.rs) and the
//! `safetensors_header` fuzz target check.
//!
//! Memory: tensor names are borrowed from the header while scanning and
//! copied once, into the one string of names of the result ([`Tensors`]).
//! Duplicate names are found by sorting 64-bit hashes of the names (a folded
//! multiply, the construction of foldhash and wyhash): a hash set of the
//! names, with SipHash or with this hash, cost more than the whole scan on
//! 200 000 names, its lookups missing the cache.

use super::header::{Entries, Tensors};
use super::Dtype;

/// Scans `text`; `None` means "not the common shape: use the general path".
pub(super) fn entries(text: &str) -> Option<Entries> {
    let mut s = Scanner {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    s.expect(b'{')?;
    let mut tensors = Tensors::for_header(text.len());
    let mut hashes = Vec::with_capacity(text.len() / 60);
    let mut metadata = None;
    if s.peek()? == b'}' {
        s.pos += 1;
    } else {
        loop {
            let key = s.string()?;
            s.expect(b':')?;
            if key == "__metadata__" {
                if metadata.is_some() {
                    return None;
                }
                metadata = Some(s.metadata()?);
            } else {
                hashes.push(name_hash(key));
                s.tensor(key, &mut tensors)?;
            }
            match s.next_byte()? {
                b',' => {}
                b'}' => break,
                _ => return None,
            }
        }
    }
    s.skip_ws();
    if s.pos != s.bytes.len() {
        return None;
    }
    // Distinct names: no two equal 64-bit hashes. Equal hashes (a duplicate
    // name, or a collision) send the header to the general path, whose
    // ordered set finds and names the duplicate.
    if has_equal(&mut hashes) {
        return None;
    }
    tensors.shrink();
    Some((tensors, metadata.unwrap_or_default()))
}

struct Scanner<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Scanner<'a> {
    /// Skips JSON whitespace (space, tab, line feed, carriage return).
    fn skip_ws(&mut self) {
        while let Some(&c) = self.bytes.get(self.pos) {
            if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                break;
            }
            self.pos += 1;
        }
    }

    /// The next byte after whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.bytes.get(self.pos).copied()
    }

    /// The next byte after whitespace, consumed.
    fn next_byte(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        (self.next_byte()? == c).then_some(())
    }

    /// Consumes `lit` if the text continues with exactly it (no whitespace).
    /// A fixed-size array, so that the comparison compiles to a few loads
    /// instead of a call to `memcmp`.
    fn literal<const N: usize>(&mut self, lit: &[u8; N]) -> Option<()> {
        let next = self.bytes.get(self.pos..)?.first_chunk::<N>()?;
        (next == lit).then(|| self.pos += N)
    }

    /// A string without escapes or control characters, borrowed.
    fn string(&mut self) -> Option<&'a str> {
        self.expect(b'"')?;
        self.string_body()
    }

    /// The rest of a string whose opening quote was consumed.
    fn string_body(&mut self) -> Option<&'a str> {
        let start = self.pos;
        let rest = self.bytes.get(start..)?;
        let len = string_end(rest)?;
        if rest[len] != b'"' {
            return None;
        }
        self.pos = start + len + 1;
        // Both ends sit next to an ASCII quote: always a char boundary.
        self.text.get(start..start + len)
    }

    /// A non-negative integer below 2^64 as JSON writes it (no sign, no
    /// leading zero, no fraction or exponent), after optional whitespace.
    fn number(&mut self) -> Option<u64> {
        self.skip_ws();
        self.digits()
    }

    /// [`Scanner::number`] with no whitespace before it, in one pass.
    fn digits(&mut self) -> Option<u64> {
        let b = self.bytes;
        let mut i = self.pos;
        let first = *b.get(i)?;
        let mut n = u64::from(first.wrapping_sub(b'0'));
        if n > 9 {
            return None;
        }
        i += 1;
        if n != 0 {
            while let Some(&c) = b.get(i) {
                let d = c.wrapping_sub(b'0');
                if d > 9 {
                    break;
                }
                n = n.checked_mul(10)?.checked_add(u64::from(d))?;
                i += 1;
            }
        }
        // A leading zero followed by a digit, a fraction or an exponent.
        if matches!(b.get(i), Some(b'0'..=b'9' | b'.' | b'e' | b'E')) {
            return None;
        }
        self.pos = i;
        Some(n)
    }

    /// `[n, n, ...]`, pushed onto `out`'s dimensions.
    fn shape(&mut self, out: &mut Tensors) -> Option<()> {
        self.expect(b'[')?;
        if self.peek()? == b']' {
            self.pos += 1;
            return Some(());
        }
        loop {
            out.dim(self.number()?);
            match self.next_byte()? {
                b',' => {}
                b']' => return Some(()),
                _ => return None,
            }
        }
    }

    /// `[begin, end]`.
    fn offsets(&mut self) -> Option<(u64, u64)> {
        self.expect(b'[')?;
        let begin = self.number()?;
        self.expect(b',')?;
        let end = self.number()?;
        self.expect(b']')?;
        Some((begin, end))
    }

    /// A tensor entry, recorded in `out`: first as the reference writer lays
    /// it out, byte for byte; failing that, as any JSON with exactly the three
    /// fields in any order.
    fn tensor(&mut self, name: &str, out: &mut Tensors) -> Option<()> {
        let (start, mark) = (self.pos, out.dims_mark());
        if self.tensor_compact(name, out).is_some() {
            return Some(());
        }
        self.pos = start;
        out.dims.truncate(mark);
        self.tensor_any(name, out)
    }

    /// `{"dtype":"X","shape":[n,...],"data_offsets":[b,e]}` with no
    /// whitespace: fixed punctuation compared as whole literals.
    fn tensor_compact(&mut self, name: &str, out: &mut Tensors) -> Option<()> {
        self.literal(br#"{"dtype":""#)?;
        let dtype = Dtype::from_name(self.string_body()?)?;
        self.literal(br#","shape":["#)?;
        let mark = out.dims_mark();
        if self.literal(b"]").is_none() {
            loop {
                out.dim(self.digits()?);
                let c = *self.bytes.get(self.pos)?;
                self.pos += 1;
                match c {
                    b',' => {}
                    b']' => break,
                    _ => return None,
                }
            }
        }
        self.literal(br#","data_offsets":["#)?;
        let begin = self.digits()?;
        self.literal(b",")?;
        let end = self.digits()?;
        self.literal(b"]}")?;
        out.end(name, dtype, mark, (begin, end));
        Some(())
    }

    /// A tensor entry with exactly the three fields, each once, any order.
    fn tensor_any(&mut self, name: &str, out: &mut Tensors) -> Option<()> {
        self.expect(b'{')?;
        let mark = out.dims_mark();
        let (mut dtype, mut shape, mut offsets) = (None, None, None);
        loop {
            let key = self.string()?;
            self.expect(b':')?;
            match key {
                "dtype" if dtype.is_none() => dtype = Some(Dtype::from_name(self.string()?)?),
                "shape" if shape.is_none() => shape = Some(self.shape(out)?),
                "data_offsets" if offsets.is_none() => offsets = Some(self.offsets()?),
                _ => return None,
            }
            match self.next_byte()? {
                b',' => {}
                b'}' => break,
                _ => return None,
            }
        }
        shape?;
        out.end(name, dtype?, mark, offsets?);
        Some(())
    }

    /// `__metadata__`: an object of strings with distinct keys, sorted by key
    /// (as the general path's ordered map gives them).
    fn metadata(&mut self) -> Option<Vec<(String, String)>> {
        self.expect(b'{')?;
        let mut out = Vec::new();
        if self.peek()? == b'}' {
            self.pos += 1;
            return Some(out);
        }
        loop {
            let key = self.string()?;
            self.expect(b':')?;
            let value = self.string()?;
            out.push((key.to_owned(), value.to_owned()));
            match self.next_byte()? {
                b',' => {}
                b'}' => break,
                _ => return None,
            }
        }
        crate::order::sort_by(&mut out, |a, b| a.0.cmp(&b.0));
        if out.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        Some(out)
    }
}

/// Index of the first `"`, `\\` or control character (below 0x20) in
/// `bytes`, eight bytes at a time (SWAR: the classic "has zero byte" and "has
/// byte less than" bit tricks, exact for the lowest flagged byte).
fn string_end(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let flagged = |w: u64| {
        let quote = w ^ (ONES * u64::from(b'"'));
        let backslash = w ^ (ONES * u64::from(b'\\'));
        let zero = |v: u64| v.wrapping_sub(ONES) & !v;
        (zero(quote) | zero(backslash) | w.wrapping_sub(ONES * 0x20) & !w) & HIGH
    };
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let m = flagged(u64::from_le_bytes(w));
        if m != 0 {
            return Some(at + (m.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map(|i| at + i)
}

/// Whether two of `hashes` are equal, sorting them in place: first into
/// about `len / 32` buckets by their top bits (an in-place counting sort, the
/// "American flag" permutation), then each bucket on its own. Linear in
/// practice for well-mixed hashes, no extra memory but the bucket counts, and
/// a third of the time of one `sort_unstable` of 200 000 hashes.
fn has_equal(hashes: &mut [u64]) -> bool {
    let n = hashes.len();
    // floor(log2 n) - 5 bits, 1..=16: about 32 hashes a bucket.
    let bits = (usize::BITS - n.leading_zeros()).saturating_sub(6).min(16);
    if bits == 0 {
        hashes.sort_unstable();
        return hashes.windows(2).any(|w| w[0] == w[1]);
    }
    // OK because: the top `bits` (< 32) bits of a u64 fit a usize on every target.
    #[allow(clippy::cast_possible_truncation)]
    let bucket = |h: u64| (h >> (64 - bits)) as usize;
    let mut ends = vec![0usize; 1 << bits];
    for &h in hashes.iter() {
        ends[bucket(h)] += 1;
    }
    let mut sum = 0;
    for e in &mut ends {
        sum += *e;
        *e = sum;
    }
    // next[b]: first slot of bucket b not yet holding one of its hashes.
    let mut next: Vec<usize> = Vec::with_capacity(ends.len());
    next.push(0);
    next.extend_from_slice(&ends[..ends.len() - 1]);
    for b in 0..ends.len() {
        while next[b] < ends[b] {
            let h = hashes[next[b]];
            let home = bucket(h);
            if home == b {
                next[b] += 1;
            } else {
                hashes.swap(next[b], next[home]);
                next[home] += 1;
            }
        }
    }
    let mut start = 0;
    ends.iter().any(|&end| {
        let b = &mut hashes[start..end];
        start = end;
        b.sort_unstable();
        b.windows(2).any(|w| w[0] == w[1])
    })
}

/// Hash of a tensor name: a folded multiply per 8-byte word (the construction of foldhash
/// and wyhash; constants from the fractional digits of pi), the length mixed into the last
/// word so that trailing zero bytes count.
fn name_hash(name: &str) -> u64 {
    const K0: u64 = 0x243f_6a88_85a3_08d3;
    const K1: u64 = 0x1319_8a2e_0370_7344;
    let mix = |state: u64, word: u64| fold_mul(state ^ word, K0);
    let bytes = name.as_bytes();
    let mut chunks = bytes.chunks_exact(8);
    let mut state = K1;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        state = mix(state, u64::from_le_bytes(w));
    }
    let rest = chunks.remainder();
    state = mix(state, tail_word(bytes) ^ ((rest.len() as u64) << 59));
    fold_mul(state, K1)
}

/// The last `len % 8` bytes of `bytes` as a little-endian word, zero-extended:
/// one load of the last eight bytes, shifted (copying the few bytes into a
/// zeroed buffer called `memcpy` and stalled the load after it).
fn tail_word(bytes: &[u8]) -> u64 {
    let r = bytes.len() % 8;
    if r == 0 {
        return 0;
    }
    match bytes.last_chunk::<8>() {
        Some(last) => u64::from_le_bytes(*last) >> (8 * (8 - r)),
        None => bytes.iter().rev().fold(0, |w, &b| (w << 8) | u64::from(b)),
    }
}

/// 64-bit folded multiply: the high and low halves of the 128-bit product,
/// XORed.
// OK because: the truncation to the low 64 bits is the hash's folding, on purpose.
#[allow(clippy::cast_possible_truncation)]
const fn fold_mul(a: u64, b: u64) -> u64 {
    let full = (a as u128) * (b as u128);
    (full as u64) ^ ((full >> 64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A header as the reference writer lays it out: the fast path takes it
    /// (the differential tests alone would pass with a fast path that always
    /// gives up) and agrees with the general path.
    #[test]
    fn the_reference_layout_takes_the_fast_path() {
        let text = concat!(
            r#"{"__metadata__":{"format":"pt","b":"x"},"#,
            r#""model.embed_tokens.weight":{"dtype":"BF16","shape":[8,4],"data_offsets":[0,64]},"#,
            r#""model.layers.0.w":{"dtype":"F8_E4M3","shape":[2,2,2,2,2],"data_offsets":[64,96]},"#,
            r#""scale":{"dtype":"F32","shape":[],"data_offsets":[96,100]},"#,
            r#""é":{"shape":[3],"data_offsets":[100,103],"dtype":"U8"}}    "#
        );
        let fast = entries(text).expect("the fast path takes the reference layout");
        let general = super::super::via_serde::entries_via_serde(text).expect("valid");
        assert_eq!(fast.0.rows(), general.0.rows());
        assert_eq!(fast.1, general.1);
        let rows = fast.0.rows();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[1].shape, [2, 2, 2, 2, 2]);
        assert_eq!(rows[3].name, "é");
        assert_eq!(fast.1[0], ("b".to_owned(), "x".to_owned()));
    }

    /// The reference writer's entries take the byte-for-byte branch; any
    /// other spacing or field order is left to the general one.
    #[test]
    fn compact_entries_take_the_literal_branch() {
        let read = |entry: &str| {
            let mut s = Scanner {
                text: entry,
                bytes: entry.as_bytes(),
                pos: 0,
            };
            let mut out = Tensors::default();
            let taken = s.tensor_compact("w", &mut out).is_some();
            (
                taken,
                s.pos == entry.len(),
                out.rows().first().map(|t| t.shape.to_vec()),
            )
        };
        assert_eq!(
            read(r#"{"dtype":"BF16","shape":[64,7],"data_offsets":[0,896]}"#),
            (true, true, Some(vec![64, 7]))
        );
        assert_eq!(
            read(r#"{"dtype":"F32","shape":[],"data_offsets":[10,14]}"#),
            (true, true, Some(vec![]))
        );
        for other in [
            r#"{"dtype": "BF16","shape":[64,7],"data_offsets":[0,896]}"#,
            r#"{"shape":[64,7],"dtype":"BF16","data_offsets":[0,896]}"#,
            r#"{"dtype":"BF16","shape":[64, 7],"data_offsets":[0,896]}"#,
            r#"{"dtype":"BF16","shape":[064],"data_offsets":[0,896]}"#,
        ] {
            assert!(!read(other).0, "{other}");
        }
    }

    #[test]
    fn the_fast_path_gives_up_on_what_it_does_not_handle() {
        for text in [
            r#"{"a\"b":{"dtype":"U8","shape":[],"data_offsets":[0,1]}}"#,
            r#"{"w":{"dtype":"U8","shape":[],"data_offsets":[0,1],"x":1}}"#,
            r#"{"w":{"dtype":"U8","shape":[1.0],"data_offsets":[0,1]}}"#,
            r#"{"w":{"dtype":"U8","shape":[01],"data_offsets":[0,1]}}"#,
            r#"{"w":{"dtype":"U8","shape":[18446744073709551616],"data_offsets":[0,1]}}"#,
            r#"{"w":{"dtype":"u8","shape":[],"data_offsets":[0,1]}}"#,
            r#"{"w":{"dtype":"U8","shape":[],"data_offsets":[0,1]},"w":{"dtype":"U8","shape":[],"data_offsets":[1,2]}}"#,
            r#"{"__metadata__":{"a":"1","a":"2"}}"#,
            r#"{} {}"#,
        ] {
            assert!(entries(text).is_none(), "{text}");
        }
        // Unrelated names never collide in the duplicate check.
        let a = name_hash("model.layers.1.mlp.experts.10.w");
        assert_ne!(a, name_hash("model.layers.10.mlp.experts.1.w"));
        assert_ne!(name_hash(""), name_hash("\0"));
    }

    #[test]
    fn has_equal_finds_any_repeated_hash() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in [0usize, 1, 2, 63, 64, 100, 5000] {
            let distinct: Vec<u64> = (0..n).map(|_| next()).collect();
            assert!(!has_equal(&mut distinct.clone()), "n {n}");
            if n > 1 {
                // Any pair, in the same bucket or not, and after sorting the
                // rest still holds every value.
                for (i, j) in [(0, n - 1), (n / 2, n / 3), (1, 0)] {
                    let mut v = distinct.clone();
                    v[i] = v[j];
                    if i != j {
                        assert!(has_equal(&mut v), "n {n} pair {i} {j}");
                    }
                }
                let mut v = distinct.clone();
                has_equal(&mut v);
                let mut sorted = distinct.clone();
                sorted.sort_unstable();
                v.sort_unstable();
                assert_eq!(v, sorted);
            }
        }
    }

    #[test]
    fn tail_word_is_the_zero_padded_remainder() {
        let bytes: Vec<u8> = (1..=20).collect();
        for len in 0..=20 {
            let b = &bytes[..len];
            let rest = &b[len - len % 8..];
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            assert_eq!(tail_word(b), u64::from_le_bytes(w), "len {len}");
        }
    }

    #[test]
    fn string_end_finds_the_first_stop_byte_at_every_position() {
        for len in 0..20 {
            for stop in [b'"', b'\\', 0x00, 0x1f] {
                let mut bytes = vec![b'a'; len];
                bytes.push(stop);
                bytes.extend_from_slice(b"\"zz");
                assert_eq!(string_end(&bytes), Some(len), "len {len} stop {stop}");
            }
            // Bytes just above the stop set, and non-ASCII, never stop it.
            let mut bytes = vec![0x20u8, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xe9, 0xff];
            bytes.truncate(len.min(9));
            assert_eq!(string_end(&bytes), None);
        }
    }
}
