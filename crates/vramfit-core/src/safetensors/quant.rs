//! Quantization heuristics of the checkpoint report: which scheme a
//! checkpoint uses ([`Quantization`]), read from tensor names, dtypes and
//! sibling shapes, and how each packed tensor unpacks for the logical
//! parameter count: GPTQ/AWQ `qweight` int32 x8 (or the factor implied by
//! `g_idx`/`scales` shapes), compressed-tensors int32 `weight_packed` x8,
//! MXFP4 `_blocks` x2, NVFP4 packed U8 x2, bitsandbytes 4-bit U8 x2.

#[cfg(feature = "import")]
use super::{Dtype, TensorInfo};
use serde::Serialize;
#[cfg(feature = "import")]
use std::collections::BTreeMap;

/// Quantization scheme detected from tensor names and dtypes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Quantization {
    /// No packed or scaled weights found.
    None,
    /// GPTQ: `qweight` (packed int32) + `scales` + `qzeros` + `g_idx`.
    Gptq,
    /// AWQ: `qweight` + `scales` + `qzeros`, without `g_idx`.
    Awq,
    /// FP8 weights (`F8_E4M3`/`F8_E5M2`) with `weight_scale` or
    /// `weight_scale_inv` tensors.
    Fp8 {
        /// Scale tensors are 2-D with both dimensions above 1 (block scaling,
        /// e.g. 128x128 as in DeepSeek-V3) rather than per-tensor or
        /// per-channel.
        block_scaled: bool,
    },
    /// compressed-tensors packed integers: `weight_packed` + `weight_scale`.
    CompressedTensorsInt,
    /// MXFP4 (as gpt-oss): U8 `*_blocks` + U8 `*_scales`.
    Mxfp4,
    /// NVFP4: U8 packed weights + F8_E4M3 `weight_scale` + `weight_scale_2`
    /// or `weight_global_scale`.
    Nvfp4,
    /// bitsandbytes: `.absmax` / `.quant_map` (4-bit) or `.SCB` (8-bit).
    BitsAndBytes,
}

impl Quantization {
    /// A short human name, e.g. `"GPTQ"` or `"FP8 (block-scaled)"`.
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            Quantization::None => "none",
            Quantization::Gptq => "GPTQ",
            Quantization::Awq => "AWQ",
            Quantization::Fp8 { block_scaled: true } => "FP8 (block-scaled)",
            Quantization::Fp8 {
                block_scaled: false,
            } => "FP8",
            Quantization::CompressedTensorsInt => "compressed-tensors int",
            Quantization::Mxfp4 => "MXFP4",
            Quantization::Nvfp4 => "NVFP4",
            Quantization::BitsAndBytes => "bitsandbytes",
        }
    }
}

/// Splits `a.b.c` into (`a.b`, `c`).
#[cfg(feature = "import")]
fn split_leaf(name: &str) -> (&str, &str) {
    name.rsplit_once('.').unwrap_or(("", name))
}

/// All tensors of all shards by name (first occurrence wins).
#[cfg(feature = "import")]
pub(super) struct TensorIndex<'a> {
    pub(super) by_name: BTreeMap<&'a str, TensorInfo<'a>>,
    /// Which of [`LEAVES`] occur as a last name component, found in one pass.
    leaves: [bool; LEAVES.len()],
}

/// The last name components [`detect_quantization`] asks about.
#[cfg(feature = "import")]
const LEAVES: [&str; 7] = [
    "qweight",
    "scales",
    "qzeros",
    "g_idx",
    "absmax",
    "quant_map",
    "SCB",
];

#[cfg(feature = "import")]
impl<'a> TensorIndex<'a> {
    fn sibling(&self, prefix: &str, leaf: &str) -> Option<TensorInfo<'a>> {
        if prefix.is_empty() {
            self.by_name.get(leaf).copied()
        } else {
            self.by_name
                .get(format!("{prefix}.{leaf}").as_str())
                .copied()
        }
    }

    pub(super) fn new(by_name: BTreeMap<&'a str, TensorInfo<'a>>) -> Self {
        let mut leaves = [false; LEAVES.len()];
        for name in by_name.keys() {
            for (seen, leaf) in leaves.iter_mut().zip(LEAVES) {
                *seen |= leaf_is(name, leaf);
            }
        }
        TensorIndex { by_name, leaves }
    }

    /// Whether some tensor's last name component is `leaf`, one of [`LEAVES`].
    fn has_leaf(&self, leaf: &str) -> bool {
        debug_assert!(LEAVES.contains(&leaf), "`{leaf}` is not in LEAVES");
        LEAVES
            .iter()
            .position(|&l| l == leaf)
            .is_some_and(|i| self.leaves[i])
    }
}

/// How a tensor is packed, for the logical parameter count.
#[cfg(feature = "import")]
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Packing {
    Plain,
    QWeight(u64),
    CompressedInt,
    Mxfp4,
    Nvfp4,
    Bnb4,
}

#[cfg(feature = "import")]
impl Packing {
    pub(super) const fn factor(self) -> u64 {
        match self {
            Packing::Plain => 1,
            Packing::QWeight(f) => f,
            Packing::CompressedInt => 8,
            Packing::Mxfp4 | Packing::Nvfp4 | Packing::Bnb4 => 2,
        }
    }
}

/// Whether `leaf` is the last component of `name` (`a.b.leaf` or `leaf`): a suffix test,
/// cheaper than [`split_leaf`], which the report calls only for the tensors it must.
#[cfg(feature = "import")]
fn leaf_is(name: &str, leaf: &str) -> bool {
    name.strip_suffix(leaf)
        .is_some_and(|p| p.is_empty() || p.ends_with('.'))
}

#[cfg(feature = "import")]
pub(super) fn packing_of(t: &TensorInfo<'_>, idx: &TensorIndex<'_>) -> Packing {
    let int32 = matches!(t.dtype, Dtype::I32 | Dtype::U32);
    if !int32 && t.dtype != Dtype::U8 {
        return Packing::Plain;
    }
    let (prefix, leaf) = split_leaf(t.name);
    if leaf == "qweight" && int32 {
        return Packing::QWeight(qweight_factor(t, prefix, idx));
    }
    if t.dtype == Dtype::U8 {
        if let Some(stem) = t.name.strip_suffix("_blocks") {
            if idx
                .by_name
                .get(format!("{stem}_scales").as_str())
                .is_some_and(|s| s.dtype == Dtype::U8)
            {
                return Packing::Mxfp4;
            }
        }
        if (leaf == "weight_packed" || leaf == "weight") && is_nvfp4_weight(prefix, idx) {
            return Packing::Nvfp4;
        }
        if leaf == "weight"
            && (idx.sibling(t.name, "absmax").is_some()
                || idx.sibling(t.name, "quant_map").is_some())
        {
            return Packing::Bnb4;
        }
    }
    if leaf == "weight_packed" && int32 && idx.sibling(prefix, "weight_scale").is_some() {
        return Packing::CompressedInt;
    }
    Packing::Plain
}

#[cfg(feature = "import")]
fn is_nvfp4_weight(prefix: &str, idx: &TensorIndex<'_>) -> bool {
    idx.sibling(prefix, "weight_scale")
        .is_some_and(|s| s.dtype == Dtype::F8_E4M3)
        && (idx.sibling(prefix, "weight_scale_2").is_some()
            || idx.sibling(prefix, "weight_global_scale").is_some())
}

/// Elements per int32 of a GPTQ/AWQ `qweight` (32 / bits), from sibling
/// shapes when they tell, else 8 (4-bit).
#[cfg(feature = "import")]
fn qweight_factor(qweight: &TensorInfo<'_>, prefix: &str, idx: &TensorIndex<'_>) -> u64 {
    let plausible = |f: u64| (2..=16).contains(&f).then_some(f);
    let from_shapes = || -> Option<u64> {
        let [rows, cols] = qweight.shape[..] else {
            return None;
        };
        let scales = idx.sibling(prefix, "scales")?;
        let &out = scales.shape.last()?;
        if out == cols {
            // GPTQ layout [in * bits / 32, out]; g_idx has `in` entries.
            let g_idx = idx.sibling(prefix, "g_idx")?;
            let [in_features] = g_idx.shape[..] else {
                return None;
            };
            (rows > 0 && in_features.is_multiple_of(rows)).then(|| in_features / rows)
        } else {
            // AWQ layout [in, out * bits / 32].
            (cols > 0 && out.is_multiple_of(cols)).then(|| out / cols)
        }
    };
    from_shapes().and_then(plausible).unwrap_or(8)
}

#[cfg(feature = "import")]
pub(super) fn detect_quantization(idx: &TensorIndex<'_>) -> Quantization {
    let tensors = || idx.by_name.values().copied();
    let mxfp4 = tensors().any(|t| {
        t.dtype == Dtype::U8
            && t.name.strip_suffix("_blocks").is_some_and(|stem| {
                idx.by_name
                    .get(format!("{stem}_scales").as_str())
                    .is_some_and(|s| s.dtype == Dtype::U8)
            })
    });
    if mxfp4 {
        return Quantization::Mxfp4;
    }
    let nvfp4 = tensors().any(|t| {
        t.dtype == Dtype::U8 && {
            let (prefix, leaf) = split_leaf(t.name);
            (leaf == "weight_packed" || leaf == "weight") && is_nvfp4_weight(prefix, idx)
        }
    });
    if nvfp4 {
        return Quantization::Nvfp4;
    }
    let compressed = tensors().any(|t| {
        leaf_is(t.name, "weight_packed")
            && idx.sibling(split_leaf(t.name).0, "weight_scale").is_some()
    });
    if compressed {
        return Quantization::CompressedTensorsInt;
    }
    if idx.has_leaf("qweight") && idx.has_leaf("scales") && idx.has_leaf("qzeros") {
        return if idx.has_leaf("g_idx") {
            Quantization::Gptq
        } else {
            Quantization::Awq
        };
    }
    if idx.has_leaf("absmax") || idx.has_leaf("quant_map") || idx.has_leaf("SCB") {
        return Quantization::BitsAndBytes;
    }
    let mut fp8 = false;
    let mut block_scaled = false;
    for t in tensors() {
        if !matches!(t.dtype, Dtype::F8_E4M3 | Dtype::F8_E5M2) || !leaf_is(t.name, "weight") {
            continue;
        }
        let prefix = split_leaf(t.name).0;
        for scale_leaf in ["weight_scale", "weight_scale_inv"] {
            if let Some(scale) = idx.sibling(prefix, scale_leaf) {
                fp8 = true;
                if scale.shape.len() == 2 && scale.shape.iter().all(|&d| d > 1) {
                    block_scaled = true;
                }
            }
        }
    }
    if fp8 {
        return Quantization::Fp8 { block_scaled };
    }
    Quantization::None
}

/// Orders packing kinds for deterministic warnings.
#[cfg(feature = "import")]
pub(super) const fn packing_rank(p: Packing) -> u8 {
    match p {
        Packing::Plain => 0,
        Packing::QWeight(_) => 1,
        Packing::CompressedInt => 2,
        Packing::Mxfp4 => 3,
        Packing::Nvfp4 => 4,
        Packing::Bnb4 => 5,
    }
}
