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
//! copied once into the result; shapes of up to four dimensions are stored
//! inline ([`Shape`]).
//! Duplicate names are found by sorting 64-bit hashes of the names (a folded
//! multiply, the construction of foldhash and wyhash): a hash set of the
//! names, with SipHash or with this hash, cost more than the whole scan on
//! 200 000 names, its lookups missing the cache.

use super::{Dtype, Entries, Shape, TensorInfo};

/// Scans `text`; `None` means "not the common shape: use the general path".
pub(super) fn entries(text: &str) -> Option<Entries> {
    let mut s = Scanner {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    s.expect(b'{')?;
    // Every entry takes at least ~60 bytes of header: reserve for that many
    // (address space, touched only as filled) and give back the rest at the
    // end, instead of copying the entries at every doubling.
    let mut tensors = Vec::with_capacity(text.len() / 60);
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
    // Distinct names: sorted 64-bit hashes with no two equal. Equal hashes
    // (a duplicate name, or a collision) send the header to the general
    // path, whose ordered set finds and names the duplicate; so no input
    // makes this check slower than O(n log n).
    hashes.sort_unstable();
    if hashes.windows(2).any(|w| w[0] == w[1]) {
        return None;
    }
    tensors.shrink_to_fit();
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

    /// A string without escapes or control characters, borrowed.
    fn string(&mut self) -> Option<&'a str> {
        self.expect(b'"')?;
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
    /// leading zero, no fraction or exponent).
    fn number(&mut self) -> Option<u64> {
        self.skip_ws();
        let start = self.pos;
        let digits = self.bytes.get(start..)?;
        let len = digits
            .iter()
            .position(|c| !c.is_ascii_digit())
            .unwrap_or(digits.len());
        if len == 0 || (len > 1 && digits[0] == b'0') {
            return None;
        }
        // Up to 19 digits cannot overflow u64; longer ones are checked.
        let n = if len <= 19 {
            digits[..len]
                .iter()
                .fold(0u64, |n, &c| n * 10 + u64::from(c - b'0'))
        } else {
            digits[..len].iter().try_fold(0u64, |n, &c| {
                n.checked_mul(10)?.checked_add(u64::from(c - b'0'))
            })?
        };
        self.pos = start + len;
        if matches!(self.bytes.get(self.pos), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        Some(n)
    }

    /// `[n, n, ...]`.
    fn shape(&mut self) -> Option<Shape> {
        self.expect(b'[')?;
        if self.peek()? == b']' {
            self.pos += 1;
            return Some(Shape::from(&[][..]));
        }
        let mut inline = [0u64; Shape::INLINE];
        let mut len = 0;
        let mut spill = Vec::new();
        loop {
            let d = self.number()?;
            if len < Shape::INLINE {
                inline[len] = d;
            } else {
                if spill.is_empty() {
                    spill.extend_from_slice(&inline);
                }
                spill.push(d);
            }
            len += 1;
            match self.next_byte()? {
                b',' => {}
                b']' => break,
                _ => return None,
            }
        }
        Some(if spill.is_empty() {
            Shape::from(&inline[..len])
        } else {
            Shape::from(spill)
        })
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

    /// A tensor entry with exactly the three fields, each once, any order,
    /// pushed onto `out` (built in place: returning it by value cost a copy
    /// of the whole entry per tensor).
    fn tensor(&mut self, name: &str, out: &mut Vec<TensorInfo>) -> Option<()> {
        self.expect(b'{')?;
        let (mut dtype, mut shape, mut offsets) = (None, None, None);
        loop {
            let key = self.string()?;
            self.expect(b':')?;
            match key {
                "dtype" if dtype.is_none() => dtype = Some(Dtype::from_name(self.string()?)?),
                "shape" if shape.is_none() => shape = Some(self.shape()?),
                "data_offsets" if offsets.is_none() => offsets = Some(self.offsets()?),
                _ => return None,
            }
            match self.next_byte()? {
                b',' => {}
                b'}' => break,
                _ => return None,
            }
        }
        let (dtype, shape, data_offsets) = (dtype?, shape?, offsets?);
        out.push(TensorInfo {
            name: name.to_owned(),
            dtype,
            shape,
            data_offsets,
        });
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
    let mut w = [0u8; 8];
    w[..rest.len()].copy_from_slice(rest);
    state = mix(state, u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
    fold_mul(state, K1)
}

/// 64-bit folded multiply: the high and low halves of the 128-bit product,
/// XORed.
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
        let general = super::super::entries_via_serde(text).expect("valid");
        assert_eq!(fast, general);
        assert_eq!(fast.0.len(), 4);
        assert_eq!(fast.0[1].shape, vec![2, 2, 2, 2, 2]);
        assert_eq!(fast.1[0], ("b".to_owned(), "x".to_owned()));
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
            assert_eq!(entries(text), None, "{text}");
        }
        // Unrelated names never collide in the duplicate check.
        let a = name_hash("model.layers.1.mlp.experts.10.w");
        assert_ne!(a, name_hash("model.layers.10.mlp.experts.1.w"));
        assert_ne!(name_hash(""), name_hash("\0"));
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
