//! [`Dtype`]: the element types of the format, with their header names and bit
//! sizes, as in the reference `Dtype` enum (huggingface/safetensors
//! `safetensors/src/tensor.rs`, `Dtype::bitsize`), and the exact byte count of
//! a tensor, `elements * bits / 8`, in checked `u64` arithmetic.

use serde::Serialize;
use std::fmt;

/// Element type of a tensor: every dtype of the reference `Dtype` enum, in its
/// order (increasing alignment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(non_camel_case_types)]
pub enum Dtype {
    /// Boolean, one byte per element.
    BOOL,
    /// MXFP4 element (E2M1), 4 bits: two per byte.
    F4,
    /// MXFP6 element (E2M3), 6 bits.
    F6_E2M3,
    /// MXFP6 element (E3M2), 6 bits.
    F6_E3M2,
    /// Unsigned 8-bit integer.
    U8,
    /// Signed 8-bit integer.
    I8,
    /// FP8 E5M2.
    F8_E5M2,
    /// FP8 E4M3 (`float8_e4m3fn`).
    F8_E4M3,
    /// FP8 E8M0 (MX block scale).
    F8_E8M0,
    /// FP8 E4M3, finite with unsigned zero (`float8_e4m3fnuz`).
    F8_E4M3FNUZ,
    /// FP8 E5M2, finite with unsigned zero (`float8_e5m2fnuz`).
    F8_E5M2FNUZ,
    /// Signed 16-bit integer.
    I16,
    /// Unsigned 16-bit integer.
    U16,
    /// IEEE half precision.
    F16,
    /// bfloat16.
    BF16,
    /// Signed 32-bit integer.
    I32,
    /// Unsigned 32-bit integer.
    U32,
    /// IEEE single precision.
    F32,
    /// Complex number made of two F32.
    C64,
    /// IEEE double precision.
    F64,
    /// Signed 64-bit integer.
    I64,
    /// Unsigned 64-bit integer.
    U64,
}

impl Dtype {
    /// Every dtype, in the reference order.
    pub const ALL: [Dtype; 22] = [
        Dtype::BOOL,
        Dtype::F4,
        Dtype::F6_E2M3,
        Dtype::F6_E3M2,
        Dtype::U8,
        Dtype::I8,
        Dtype::F8_E5M2,
        Dtype::F8_E4M3,
        Dtype::F8_E8M0,
        Dtype::F8_E4M3FNUZ,
        Dtype::F8_E5M2FNUZ,
        Dtype::I16,
        Dtype::U16,
        Dtype::F16,
        Dtype::BF16,
        Dtype::I32,
        Dtype::U32,
        Dtype::F32,
        Dtype::C64,
        Dtype::F64,
        Dtype::I64,
        Dtype::U64,
    ];

    /// The name the format uses in headers, e.g. `"BF16"` or `"F8_E4M3"`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Dtype::BOOL => "BOOL",
            Dtype::F4 => "F4",
            Dtype::F6_E2M3 => "F6_E2M3",
            Dtype::F6_E3M2 => "F6_E3M2",
            Dtype::U8 => "U8",
            Dtype::I8 => "I8",
            Dtype::F8_E5M2 => "F8_E5M2",
            Dtype::F8_E4M3 => "F8_E4M3",
            Dtype::F8_E8M0 => "F8_E8M0",
            Dtype::F8_E4M3FNUZ => "F8_E4M3FNUZ",
            Dtype::F8_E5M2FNUZ => "F8_E5M2FNUZ",
            Dtype::I16 => "I16",
            Dtype::U16 => "U16",
            Dtype::F16 => "F16",
            Dtype::BF16 => "BF16",
            Dtype::I32 => "I32",
            Dtype::U32 => "U32",
            Dtype::F32 => "F32",
            Dtype::C64 => "C64",
            Dtype::F64 => "F64",
            Dtype::I64 => "I64",
            Dtype::U64 => "U64",
        }
    }

    /// Size of one element in bits (the reference `Dtype::bitsize`).
    #[must_use]
    pub const fn bits(self) -> u64 {
        match self {
            Dtype::F4 => 4,
            Dtype::F6_E2M3 | Dtype::F6_E3M2 => 6,
            Dtype::BOOL
            | Dtype::U8
            | Dtype::I8
            | Dtype::F8_E5M2
            | Dtype::F8_E4M3
            | Dtype::F8_E8M0
            | Dtype::F8_E4M3FNUZ
            | Dtype::F8_E5M2FNUZ => 8,
            Dtype::I16 | Dtype::U16 | Dtype::F16 | Dtype::BF16 => 16,
            Dtype::I32 | Dtype::U32 | Dtype::F32 => 32,
            Dtype::C64 | Dtype::F64 | Dtype::I64 | Dtype::U64 => 64,
        }
    }

    /// The dtype with this exact (case-sensitive) header name.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Dtype> {
        Some(match name {
            "BOOL" => Dtype::BOOL,
            "F4" => Dtype::F4,
            "F6_E2M3" => Dtype::F6_E2M3,
            "F6_E3M2" => Dtype::F6_E3M2,
            "U8" => Dtype::U8,
            "I8" => Dtype::I8,
            "F8_E5M2" => Dtype::F8_E5M2,
            "F8_E4M3" => Dtype::F8_E4M3,
            "F8_E8M0" => Dtype::F8_E8M0,
            "F8_E4M3FNUZ" => Dtype::F8_E4M3FNUZ,
            "F8_E5M2FNUZ" => Dtype::F8_E5M2FNUZ,
            "I16" => Dtype::I16,
            "U16" => Dtype::U16,
            "F16" => Dtype::F16,
            "BF16" => Dtype::BF16,
            "I32" => Dtype::I32,
            "U32" => Dtype::U32,
            "F32" => Dtype::F32,
            "C64" => Dtype::C64,
            "F64" => Dtype::F64,
            "I64" => Dtype::I64,
            "U64" => Dtype::U64,
            _ => return None,
        })
    }

    /// Byte count of `elements` elements of this dtype.
    ///
    /// # Errors
    ///
    /// `Err(None)` on `u64` overflow, `Err(Some(bits))` when the elements do
    /// not fill a whole number of bytes (sub-byte dtypes).
    #[cfg(feature = "import")]
    pub(super) fn bytes_for(self, elements: u64) -> Result<u64, Option<u64>> {
        // elements * bits / 8, split so that no spurious overflow occurs when
        // elements * bits exceeds u64 but the byte count does not.
        let bits = self.bits();
        let whole = (elements / 8).checked_mul(bits).ok_or(None)?;
        let rest_bits = (elements % 8) * bits; // at most 7 * 64
        if !rest_bits.is_multiple_of(8) {
            return Err(Some(rest_bits % 8));
        }
        whole.checked_add(rest_bits / 8).ok_or(None)
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Dtype {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}
