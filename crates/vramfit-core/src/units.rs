//! Display formatting: the one place byte counts and rates become text.
//!
//! GiB (2^30) and GB (10^9) are never mixed silently: every formatted size names its unit,
//! and [`Units`] says which family the UI shows.

use serde::{Deserialize, Serialize};

/// Which unit family to show sizes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Units {
    /// Binary: KiB, MiB, GiB (what nvidia-smi's MiB and vLLM's logs use).
    #[default]
    Binary,
    /// Decimal: kB, MB, GB (what vendors print).
    Decimal,
}

impl Units {
    /// `gib` or `gb`.
    #[must_use]
    pub fn id(self) -> &'static str {
        match self {
            Self::Binary => "gib",
            Self::Decimal => "gb",
        }
    }

    /// Parses `gib`/`gb`.
    #[must_use]
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "gib" => Some(Self::Binary),
            "gb" => Some(Self::Decimal),
            _ => None,
        }
    }
}

/// A count (bytes, tokens, parameters) as an `f64`: the one `u64 → f64` conversion of the
/// core. Exact below 2^53 (8 PiB of bytes), which every count the core handles is.
// OK because: counts below 2^53 are exact; above, the relative error is < 2^-52.
#[allow(clippy::cast_precision_loss)]
#[must_use]
pub fn real(x: u64) -> f64 {
    x as f64
}

/// A non-negative real as a whole count, rounded toward zero: the one `f64 → u64`
/// conversion of the core. NaN, infinities and negatives are 0; values past 9·10^18
/// saturate there.
// OK because: clamped to [0, 9e18] first, which u64 holds.
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
#[must_use]
pub fn whole(x: f64) -> u64 {
    if x.is_finite() && x > 0.0 {
        x.min(9.0e18) as u64
    } else {
        0
    }
}

use real as f;

/// Bytes as GiB with two decimals, whatever their size (the engines' logs' unit).
///
/// # Example
/// ```
/// assert_eq!(vramfit_core::units::fmt_gib(3 << 29), "1.50 GiB");
/// ```
#[must_use]
pub fn fmt_gib(bytes: u64) -> String {
    format!("{:.2} GiB", f(bytes) / f(1 << 30))
}

/// A signed byte count as GiB with two decimals (a budget that went negative).
#[must_use]
pub fn fmt_gib_signed(bytes: i64) -> String {
    let mag = fmt_gib(bytes.unsigned_abs());
    if bytes < 0 {
        format!("-{mag}")
    } else {
        mag
    }
}

/// Bytes the way PyTorch's allocator messages write them: 1024-based, two decimals, the
/// largest unit below the value (`bytes`, `KiB`, `MiB`, `GiB`).
///
/// # Example
/// ```
/// use vramfit_core::units::fmt_bytes_torch;
/// assert_eq!(fmt_bytes_torch(512), "512 bytes");
/// assert_eq!(fmt_bytes_torch(20 << 20), "20.00 MiB");
/// ```
#[must_use]
pub fn fmt_bytes_torch(b: u64) -> String {
    let (kib, mib, gib) = (1u64 << 10, 1u64 << 20, 1u64 << 30);
    if b < kib {
        format!("{b} bytes")
    } else if b < mib {
        format!("{:.2} KiB", f(b) / f(kib))
    } else if b < gib {
        format!("{:.2} MiB", f(b) / f(mib))
    } else {
        format!("{:.2} GiB", f(b) / f(gib))
    }
}

/// Formats bytes with two decimals in GiB or GB (MiB/MB below 1 GiB).
///
/// # Example
/// ```
/// use vramfit_core::units::{fmt_bytes, Units};
/// assert_eq!(fmt_bytes(16_060_522_496, Units::Binary), "14.96 GiB");
/// assert_eq!(fmt_bytes(16_060_522_496, Units::Decimal), "16.06 GB");
/// ```
#[must_use]
pub fn fmt_bytes(bytes: u64, units: Units) -> String {
    let (g, m, gs, ms) = match units {
        Units::Binary => (f(1 << 30), f(1 << 20), "GiB", "MiB"),
        Units::Decimal => (1e9, 1e6, "GB", "MB"),
    };
    let b = f(bytes);
    if b >= g * 0.995 || bytes == 0 {
        format!("{:.2} {gs}", b / g)
    } else {
        format!("{:.0} {ms}", b / m)
    }
}

/// Formats a signed byte count (negative pools).
#[must_use]
pub fn fmt_bytes_signed(bytes: i64, units: Units) -> String {
    if bytes < 0 {
        format!("−{}", fmt_bytes(bytes.unsigned_abs(), units))
    } else {
        fmt_bytes(bytes.unsigned_abs(), units)
    }
}

/// Formats a band of bytes: `12.30 GiB ± 0.20`.
#[must_use]
pub fn fmt_bytes_band(value: f64, low: f64, high: f64, units: Units) -> String {
    let g = match units {
        Units::Binary => f(1 << 30),
        Units::Decimal => 1e9,
    };
    let unit = match units {
        Units::Binary => "GiB",
        Units::Decimal => "GB",
    };
    let half = ((high - low) / 2.0 / g).abs();
    if !value.is_finite() {
        return "–".into();
    }
    format!("{:.2} {unit} ± {half:.2}", value / g)
}

/// Formats a count with thousands separators.
///
/// # Example
/// ```
/// assert_eq!(vramfit_core::units::fmt_count(1_234_567), "1,234,567");
/// ```
#[must_use]
pub fn fmt_count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Formats a finite float with `digits` decimals, or `–` for NaN/∞ (never shows NaN).
#[must_use]
pub fn fmt_num(x: f64, digits: usize) -> String {
    if x.is_finite() {
        format!("{x:.digits$}")
    } else {
        "–".into()
    }
}

/// A non-negative number rounded to a whole one with thousands separators (`15,746,422`);
/// `–` when it is not finite.
#[must_use]
pub fn fmt_whole(x: f64) -> String {
    if x.is_finite() {
        fmt_count(whole(x.round()))
    } else {
        "–".into()
    }
}

/// Formats parameters as `8.03 B` / `494 M`.
#[must_use]
pub fn fmt_params(n: u64) -> String {
    let x = f(n);
    if x >= 1e9 {
        format!("{:.2} B", x / 1e9)
    } else {
        format!("{:.0} M", x / 1e6)
    }
}

/// Formats USD: `$1,234` or `$0.42`.
#[must_use]
pub fn fmt_usd(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    if x >= 100.0 {
        // OK because: finite and below 2^53 for any realistic budget.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let n = x.round() as u64;
        format!("${}", fmt_count(n))
    } else {
        format!("${x:.2}")
    }
}

/// Formats a fraction as a percentage with one decimal (`0.123` → `12.3%`).
#[must_use]
pub fn fmt_pct(fraction: f64) -> String {
    if fraction.is_finite() {
        format!("{:.1}%", fraction * 100.0)
    } else {
        "–".into()
    }
}

/// Formats seconds as whole milliseconds (`0.0314` → `31`), `–` when not finite.
#[must_use]
pub fn fmt_ms(seconds: f64) -> String {
    fmt_num(seconds * 1000.0, 0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn whole_numbers_are_grouped_in_thousands() {
        assert_eq!(super::fmt_whole(15_746_421.6), "15,746,422");
        assert_eq!(super::fmt_whole(999.4), "999");
        assert_eq!(super::fmt_whole(0.0), "0");
        assert_eq!(super::fmt_whole(f64::NAN), "–");
        assert_eq!(super::fmt_whole(f64::INFINITY), "–");
    }
}
