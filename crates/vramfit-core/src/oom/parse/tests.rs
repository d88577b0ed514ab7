//! Tests of the private number readers.

use super::*;

#[test]
fn units_and_rounding() {
    let size = |t: &str| parse_size(t, 0).map(|x| x.0);
    assert_eq!(size("0 bytes"), Some(0));
    assert_eq!(size("1024 bytes"), Some(1024));
    assert_eq!(size("1 b"), Some(1));
    assert_eq!(size("1.5 kib"), Some(1536));
    assert_eq!(size("0.005 kib"), Some(5)); // 5.12 → 5
    assert_eq!(size("0.0005 kib"), Some(1)); // 0.512 → 1 (nearest)
    assert_eq!(size("2 tib"), Some(2 * TIB));
    assert_eq!(size("1.00 gb"), Some(GIB));
    assert_eq!(size("12 parsecs"), None);
    assert_eq!(size("12"), None);
    assert_eq!(size("abc gib"), None);
    // saturation instead of overflow
    assert_eq!(
        size("99999999999999999999999999999999999999999999 gib"),
        Some(u64::MAX)
    );
    assert_eq!(size("18446744073709551616 bytes"), Some(u64::MAX));
    assert_eq!(size("17179869184.00 gib"), Some(u64::MAX)); // exactly 2^64
                                                            // 2^64 − 0.01 × 2^30 = 18446744073698814197.76, still representable
    assert_eq!(size("17179869183.99 gib"), Some(18_446_744_073_698_814_198));
    // 1.123456789012345678 (18 digits kept) × 2^30 = 1206302541.819… → 1206302542
    assert_eq!(
        size("1.123456789012345678901234567890 gib"),
        Some(1_206_302_542)
    );
    assert_eq!(parse_uint("99999999999999999999", 0), None);
    assert_eq!(parse_fraction("1.5", 0), None);
    assert_eq!(parse_fraction("0.92", 0), Some(0.92));
}
