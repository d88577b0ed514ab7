//! Decimal text → `f64`, correctly rounded (IEEE 754 round-half-to-even), without the
//! standard library's `f64::from_str`.
//!
//! Why a reader of our own: `core`'s `dec2flt` (the Eisel–Lemire algorithm with a 10 KB
//! table of 128-bit powers of five, plus a big-decimal fallback) is ~15 KB of the gzipped
//! web bundle (docs/PERFORMANCE.md, "First-load size"), spent on the few numbers a person
//! types (prices, memory utilization) or a share link carries. This reader returns the same
//! `f64` as `str::parse::<f64>` for every number (the tests compare the two bit for bit over
//! hand-picked hard cases and 100,000 random inputs).
//!
//! Method:
//! - **Fast path** (W. D. Clinger, "How to read floating point numbers accurately",
//!   PLDI 1990): with at most 2^53 as the integer of significant digits `w` and a decimal
//!   exponent `e` with |e| ≤ 22, `w` and `10^|e|` are both exact doubles, so one IEEE
//!   multiplication or division gives the correctly rounded result. Every number a person
//!   types takes this path.
//! - **Exact path** for the rest: the value `w · 10^e` is formed exactly as a big integer
//!   (e ≥ 0) or as the quotient of two (e < 0) with 63 or 64 quotient bits and a sticky bit
//!   for the remainder, then rounded by hand. Digits past the 800th only set the sticky bit:
//!   no point halfway between two doubles has more than 767 significant digits, so they can
//!   only break a tie, which the sticky bit does. Microseconds, not nanoseconds.
//!
//! Syntax: `[+-]digits[.digits][(e|E)[+-]digits]` with at least one mantissa digit (`5.`,
//! `.5` and `1e3` are numbers), as `f64::from_str` reads it, except that `inf`, `infinity`
//! and `nan` are refused: none of our inputs may be one. A number too large for `f64` reads
//! as infinity and one too small as zero, as with `from_str`.

/// Reads a decimal number, or `None` when `s` is not one (see the [module docs](self)).
///
/// # Example
/// ```
/// use vramfit_core::decimal::parse_f64;
/// assert_eq!(parse_f64("0.9"), Some(0.9));
/// assert_eq!(parse_f64("-2.5e3"), Some(-2500.0));
/// assert_eq!(parse_f64("1,5"), None);
/// ```
#[must_use]
pub fn parse_f64(s: &str) -> Option<f64> {
    let (neg, digits, exp) = split(s.as_bytes())?;
    let value = magnitude(&digits, exp);
    Some(if neg { -value } else { value })
}

/// Sign, significant digits (no leading or trailing zeros, as values 0–9) and the decimal
/// exponent of the last one.
fn split(s: &[u8]) -> Option<(bool, Vec<u8>, i64)> {
    let (neg, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let int_len = s.iter().take_while(|c| c.is_ascii_digit()).count();
    let (int, rest) = s.split_at(int_len);
    let (frac, rest) = match rest.split_first() {
        Some((b'.', r)) => {
            let n = r.iter().take_while(|c| c.is_ascii_digit()).count();
            r.split_at(n)
        }
        _ => (&rest[..0], rest),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut exp: i64 = 0;
    if let Some((e, r)) = rest.split_first() {
        if !matches!(e, b'e' | b'E') {
            return None;
        }
        let (eneg, r) = match r.first() {
            Some(b'-') => (true, &r[1..]),
            Some(b'+') => (false, &r[1..]),
            _ => (false, r),
        };
        if r.is_empty() || !r.iter().all(u8::is_ascii_digit) {
            return None;
        }
        for &c in r {
            // Saturates far beyond any f64: 1e-99999999 is zero, 1e99999999 infinity.
            exp = (exp * 10 + i64::from(c - b'0')).min(100_000_000);
        }
        if eneg {
            exp = -exp;
        }
    }
    let mut digits: Vec<u8> = int.iter().chain(frac).map(|c| c - b'0').collect();
    // OK because: the text is shorter than i64::MAX bytes.
    #[allow(clippy::cast_possible_wrap)]
    let mut exp = exp - frac.len() as i64;
    let lead = digits.iter().take_while(|&&d| d == 0).count();
    digits.drain(..lead);
    while digits.last() == Some(&0) {
        digits.pop();
        exp += 1;
    }
    Some((neg, digits, exp))
}

/// Exact powers of ten as doubles (10^22 is the largest).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Digits kept exactly; the rest only set the sticky bit (module docs).
const MAX_DIGITS: usize = 800;

/// The value of `digits · 10^exp`, rounded to the nearest double.
fn magnitude(digits: &[u8], exp: i64) -> f64 {
    if digits.is_empty() {
        return 0.0;
    }
    // OK because: at most MAX_DIGITS digits are used below; the length only bounds the range.
    #[allow(clippy::cast_possible_wrap)]
    let n = digits.len() as i64;
    // The value lies in [10^(n+exp-1), 10^(n+exp)).
    if n + exp > 310 {
        return f64::INFINITY;
    }
    if n + exp < -330 {
        return 0.0;
    }
    if n <= 19 {
        let w = digits.iter().fold(0u64, |w, &d| w * 10 + u64::from(d));
        if w <= 1 << 53 && exp.unsigned_abs() <= 22 {
            // OK because: w ≤ 2^53 is exact as a double, and so is 10^|exp| (Clinger).
            #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
            let (w, p) = (w as f64, POW10[exp.unsigned_abs() as usize]);
            return if exp < 0 { w / p } else { w * p };
        }
    }
    let (kept, sticky) = if digits.len() > MAX_DIGITS {
        // Trailing zeros were stripped, so the dropped digits are not all zero.
        (&digits[..MAX_DIGITS], true)
    } else {
        (digits, false)
    };
    // OK because: kept.len() ≤ MAX_DIGITS.
    #[allow(clippy::cast_possible_wrap)]
    let exp = exp + (digits.len() - kept.len()) as i64;
    let mut big = Big::from_digits(kept);
    if exp >= 0 {
        // OK because: n + exp ≤ 310 above, so 0 ≤ exp ≤ 310.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        big.mul_pow10(exp as u32);
        let bits = big.bits();
        let drop = bits.saturating_sub(64);
        let low_nonzero = big.low_bits_nonzero(drop);
        big.shr(drop);
        // OK because: drop ≤ bits of a number below 10^1110, far below i32::MAX.
        #[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)]
        round(big.low_u64(), drop as i32, sticky || low_nonzero)
    } else {
        // value = N / 10^k: a quotient of 63–64 bits, q = ⌊N · 2^s / 10^k⌋.
        let mut den = Big::from_digits(&[1]);
        // OK because: n + exp ≥ -330 and n ≤ MAX_DIGITS + ..., so 0 < -exp ≤ 1130 + len.
        #[allow(clippy::cast_possible_truncation)]
        den.mul_pow10(exp.unsigned_abs() as u32);
        // OK because: both bit counts are below 10^5.
        #[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)]
        let s = 63 + den.bits() as i32 - big.bits() as i32;
        if s >= 0 {
            big.shl(s.unsigned_abs());
        } else {
            den.shl(s.unsigned_abs());
        }
        let (q, rem_nonzero) = big.div_small_quotient(&den);
        round(q, -s, sticky || rem_nonzero)
    }
}

/// Rounds `q · 2^e2` (plus a nonzero amount below its last bit when `sticky`) to the
/// nearest double, ties to even. `q` has at least 55 bits whenever rounding happens.
fn round(q: u64, e2: i32, sticky: bool) -> f64 {
    if q == 0 {
        return 0.0;
    }
    // OK because: bit counts are at most 64.
    #[allow(clippy::cast_possible_wrap)]
    let len = (64 - q.leading_zeros()) as i32;
    let top = len - 1 + e2; // the value lies in [2^top, 2^(top+1))
    if top > 1023 {
        return f64::INFINITY;
    }
    // Bits of q below the result's last bit: 53 significant bits for a normal number, or
    // a last bit worth 2^-1074 for a subnormal one.
    let shift = if top >= -1022 { len - 53 } else { -1074 - e2 };
    let m = if shift <= 0 {
        q << shift.unsigned_abs()
    } else if shift > 64 {
        // Less than half of the smallest subnormal.
        0
    } else {
        let m = q.checked_shr(shift.unsigned_abs()).unwrap_or(0);
        let rem = q & u64::MAX.checked_shr(64 - shift.unsigned_abs()).unwrap_or(0);
        let half = 1u64 << (shift - 1);
        if rem > half || (rem == half && (sticky || m & 1 == 1)) {
            m + 1
        } else {
            m
        }
    };
    if top < -1022 {
        // Subnormal; a carry into 2^52 is the smallest normal number, whose bits these are.
        return f64::from_bits(m);
    }
    // m is in [2^52, 2^53], 2^53 after a carry.
    let (m, top) = if m == 1 << 53 {
        (m >> 1, top + 1)
    } else {
        (m, top)
    };
    if top > 1023 {
        return f64::INFINITY;
    }
    // OK because: -1022 ≤ top ≤ 1023, so the biased exponent is 1..=2046.
    #[allow(clippy::cast_sign_loss)]
    let biased = (top + 1023) as u64;
    f64::from_bits((biased << 52) | (m & ((1 << 52) - 1)))
}

/// A non-negative big integer, 32-bit limbs, least significant first.
struct Big(Vec<u32>);

impl Big {
    fn from_digits(digits: &[u8]) -> Self {
        let mut b = Big(Vec::with_capacity(digits.len() / 9 + 2));
        for chunk in digits.chunks(9) {
            let v = chunk.iter().fold(0u32, |v, &d| v * 10 + u32::from(d));
            // OK because: chunks have 1..=9 digits.
            #[allow(clippy::cast_possible_truncation)]
            b.mul_add(10u32.pow(chunk.len() as u32), v);
        }
        b
    }

    fn mul_add(&mut self, m: u32, add: u32) {
        let mut carry = u64::from(add);
        for limb in &mut self.0 {
            let t = u64::from(*limb) * u64::from(m) + carry;
            // OK because: the low 32 bits are kept on purpose.
            #[allow(clippy::cast_possible_truncation)]
            {
                *limb = t as u32;
            }
            carry = t >> 32;
        }
        if carry > 0 {
            // OK because: carry < 2^32.
            #[allow(clippy::cast_possible_truncation)]
            self.0.push(carry as u32);
        }
    }

    fn mul_pow10(&mut self, mut k: u32) {
        while k >= 9 {
            self.mul_add(1_000_000_000, 0);
            k -= 9;
        }
        self.mul_add(10u32.pow(k), 0);
    }

    fn bits(&self) -> u32 {
        let n = self.0.iter().rposition(|&l| l != 0).map_or(0, |i| i + 1);
        // OK because: at most a few hundred limbs.
        #[allow(clippy::cast_possible_truncation)]
        n.checked_sub(1)
            .map_or(0, |i| i as u32 * 32 + 32 - self.0[i].leading_zeros())
    }

    fn low_bits_nonzero(&self, bits: u32) -> bool {
        let (whole, part) = ((bits / 32) as usize, bits % 32);
        self.0.iter().take(whole).any(|&l| l != 0)
            || (part > 0
                && self
                    .0
                    .get(whole)
                    .is_some_and(|&l| l & ((1 << part) - 1) != 0))
    }

    fn shl(&mut self, bits: u32) {
        let (whole, part) = ((bits / 32) as usize, bits % 32);
        if part > 0 {
            self.0.push(0);
            for i in (0..self.0.len()).rev() {
                let lower = if i > 0 {
                    self.0[i - 1] >> (32 - part)
                } else {
                    0
                };
                self.0[i] = (self.0[i] << part) | lower;
            }
        }
        self.0.splice(0..0, std::iter::repeat_n(0, whole));
    }

    fn shr(&mut self, bits: u32) {
        let (whole, part) = ((bits / 32) as usize, bits % 32);
        self.0.drain(..whole.min(self.0.len()));
        if part > 0 {
            for i in 0..self.0.len() {
                let upper = self.0.get(i + 1).map_or(0, |&u| u << (32 - part));
                self.0[i] = (self.0[i] >> part) | upper;
            }
        }
    }

    fn low_u64(&self) -> u64 {
        self.0
            .iter()
            .take(2)
            .rev()
            .fold(0u64, |v, &l| (v << 32) | u64::from(l))
    }

    fn ge(&self, other: &Big) -> bool {
        let len = self.0.len().max(other.0.len());
        for i in (0..len).rev() {
            let (a, b) = (
                self.0.get(i).copied().unwrap_or(0),
                other.0.get(i).copied().unwrap_or(0),
            );
            if a != b {
                return a > b;
            }
        }
        true
    }

    /// `self -= other`; `self ≥ other`.
    fn sub(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let t = i64::from(self.0[i]) - i64::from(other.0.get(i).copied().unwrap_or(0)) - borrow;
            borrow = i64::from(t < 0);
            // OK because: t + 2^32 is in 0..2^32 when t is negative.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            {
                self.0[i] = (t + (borrow << 32)) as u32;
            }
        }
    }

    /// `(⌊self / den⌋, remainder ≠ 0)` for a quotient below 2^64, by restoring division.
    fn div_small_quotient(mut self, den: &Big) -> (u64, bool) {
        let mut d = Big(den.0.clone());
        d.shl(63);
        let mut q = 0u64;
        for _ in 0..64 {
            q <<= 1;
            if self.ge(&d) {
                self.sub(&d);
                q |= 1;
            }
            d.shr(1);
        }
        (q, self.bits() > 0)
    }
}

#[cfg(test)]
// Tests cast small, known values.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::cast_lossless
)]
mod tests {
    use super::parse_f64;

    fn same_as_std(s: &str) {
        let want: Result<f64, _> = s.parse::<f64>();
        let got = parse_f64(s);
        match (want, got) {
            (Ok(w), Some(g)) => assert_eq!(g.to_bits(), w.to_bits(), "{s}: {g:e} vs std {w:e}"),
            (Err(_), None) => {}
            (w, g) => panic!("{s}: {g:?} vs std {w:?}"),
        }
    }

    #[test]
    fn hard_cases_match_the_standard_library() {
        for s in [
            "0",
            "-0",
            "+0",
            "0.0",
            "00.000e5",
            "1",
            "5.",
            ".5",
            "-.5e-1",
            "1e3",
            "1E+3",
            "2.5e-3",
            "0.9",
            "0.93",
            "0.1",
            "0.2",
            "0.3",
            "123456789012345678901234567890",
            // 2^53 ± 1: ties to even.
            "9007199254740992",
            "9007199254740993",
            "9007199254740994",
            "9007199254740995",
            "9007199254740993.0000000000000000000000000000001",
            // Classic hard inputs (Paxson; Rick Regan's exploringbinary.com).
            "7.2057594037927933e16",
            "2.2250738585072011e-308",
            "2.2250738585072012e-308",
            "2.2250738585072014e-308",
            "4.9406564584124654e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "1e-324",
            "3e-324",
            "5e-324",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "1e308",
            "1e309",
            "1e-400",
            "0.30000000000000004",
            "0.1e-22",
            "1e22",
            "1e23",
            "9007199254740993e22",
            "8.98846567431158e307",
            "4.35097645381e-311",
            "1.448997445238699",
            "123456789e-30",
            "3.14159265358979323846264338327950288419716939937510",
            "1e100000000000",
            "1e-100000000000",
        ] {
            same_as_std(s);
        }
        // A tie decided by a digit past the 800th.
        let tie = format!("9007199254740993{}1", "0".repeat(900));
        same_as_std(&tie);
        same_as_std(&format!("{tie}e-917"));
        same_as_std(&format!("0.{}", "3".repeat(2000)));
    }

    #[test]
    fn refuses_what_is_not_a_number() {
        for s in [
            "", "-", "+", ".", "e5", ".e5", "1e", "1e+", "1.2.3", "1,5", " 1", "1 ", "0x10", "--1",
            "1e5.5", "inf", "infinity", "NaN", "-inf", "١", "1_000",
        ] {
            assert_eq!(parse_f64(s), None, "{s:?}");
        }
    }

    #[test]
    fn random_numbers_match_the_standard_library() {
        // xorshift64*: deterministic, so a failure names its input.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            x.wrapping_mul(0x2545_F491_4F6C_DD1D)
        };
        for i in 0..100_000 {
            let r = next();
            let len = 1 + (r % 24) as usize;
            let digits: String = (0..len)
                .map(|_| char::from(b'0' + (next() % 10) as u8))
                .collect();
            let dot = (next() % (len as u64 + 1)) as usize;
            let exp = (next() % 700) as i64 - 350;
            let s = match i % 4 {
                0 => digits.clone(),
                1 => format!("{}.{}", &digits[..dot], &digits[dot..]),
                2 => format!("{}.{}e{exp}", &digits[..dot], &digits[dot..]),
                // Shortest representations of random doubles: what a share link carries.
                _ => {
                    let v = f64::from_bits(next() >> 1);
                    if v.is_finite() {
                        format!("{v}")
                    } else {
                        digits.clone()
                    }
                }
            };
            same_as_std(&s);
        }
    }
}
