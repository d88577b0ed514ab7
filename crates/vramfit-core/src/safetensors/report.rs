//! [`Report::from_headers`]: the summary of the shards of one model
//! (parameter and byte counts per dtype, logical parameters with packed
//! weights unpacked, quantization scheme, MoE split) and the warnings a user
//! sizing it should read. The heuristics behind the scheme and the unpacking
//! are in [`quant`](super::quant).

#[cfg(feature = "import")]
use super::quant::{detect_quantization, packing_of, packing_rank, Packing, TensorIndex};
use super::Quantization;
#[cfg(feature = "import")]
use super::{Dtype, Header, TensorInfo};
use serde::Serialize;
use std::collections::BTreeMap;
#[cfg(feature = "import")]
use std::collections::BTreeSet;

/// Split of the (logical) parameters between MoE experts and the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
pub struct MoeSplit {
    /// Logical parameters of tensors whose name contains `.experts.` (and not
    /// `shared_expert`).
    pub expert_parameters: u64,
    /// Logical parameters of all other tensors (attention, embeddings, shared
    /// experts, routers, norms).
    pub shared_parameters: u64,
    /// Number of expert tensors.
    pub expert_tensor_count: u64,
}

impl MoeSplit {
    /// Whether any expert tensor was found.
    #[must_use]
    pub const fn is_moe(&self) -> bool {
        self.expert_tensor_count > 0
    }
}

/// Summary of the shards of one model.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Report {
    /// Number of tensors over all shards.
    pub tensor_count: u64,
    /// Raw element count summed over all tensors, as the reference counts
    /// elements (a packed int32 holding eight 4-bit weights counts once).
    pub parameter_count: u64,
    /// Element count with packed weights unpacked: GPTQ/AWQ `qweight` int32
    /// x8 (or the factor implied by `g_idx`/`scales` shapes), compressed-tensors
    /// int32 `weight_packed` x8, MXFP4 `_blocks` x2, NVFP4 packed U8 x2,
    /// bitsandbytes 4-bit U8 x2. Scales, zeros and indices count as stored.
    pub logical_parameter_count: u64,
    /// Raw elements per dtype name.
    pub elements_per_dtype: BTreeMap<String, u64>,
    /// Bytes per dtype name.
    pub bytes_per_dtype: BTreeMap<String, u64>,
    /// Dtype names present, sorted.
    pub dtypes: Vec<String>,
    /// Bytes of tensor data over all shards.
    pub total_bytes: u64,
    /// F32 holds more than half of the bytes.
    pub fp32_checkpoint: bool,
    /// `total_bytes * 8 / parameter_count` (0 without parameters). Not read back from JSON:
    /// [`Report::refresh_ratios`] recomputes it.
    #[serde(skip_deserializing)]
    pub effective_bits_per_param: f64,
    /// `total_bytes * 8 / logical_parameter_count` (0 without parameters). Not read back
    /// from JSON, like the one above.
    #[serde(skip_deserializing)]
    pub effective_bits_per_logical_param: f64,
    /// Detected quantization scheme.
    pub quantization: Quantization,
    /// Expert vs non-expert parameters (logical counts).
    pub moe: MoeSplit,
    /// Things a user sizing this model should know.
    pub warnings: Vec<String>,
    /// Bytes by tensor-parallel sharding class (from the tensor names); empty in a report
    /// read from JSON written before the field existed.
    #[serde(default)]
    pub shards: super::ShardBytes,
}

#[cfg(feature = "import")]
fn is_expert_tensor(name: &str) -> bool {
    name.contains(".experts.") && !name.contains("shared_expert")
}

fn ratio(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        crate::units::real(num) / crate::units::real(den)
    }
}

impl Report {
    /// Summarises the headers of the shards of one model.
    #[cfg(feature = "import")]
    #[must_use]
    pub fn from_headers(headers: &[Header]) -> Report {
        let mut by_name: BTreeMap<&str, TensorInfo<'_>> = BTreeMap::new();
        let mut duplicates = BTreeSet::new();
        for t in headers.iter().flat_map(Header::tensors) {
            // First occurrence wins; one search per tensor.
            match by_name.entry(t.name) {
                std::collections::btree_map::Entry::Vacant(v) => {
                    v.insert(t);
                }
                std::collections::btree_map::Entry::Occupied(_) => {
                    duplicates.insert(t.name);
                }
            }
        }
        let idx = TensorIndex::new(by_name);

        let mut tensor_count = 0u64;
        let mut parameter_count = 0u64;
        let mut logical_parameter_count = 0u64;
        let mut total_bytes = 0u64;
        // (elements, bytes, seen) per dtype in `Dtype::ALL` order; named at the end, not
        // once per tensor.
        let mut per_dtype = [(0u64, 0u64, false); Dtype::ALL.len()];
        let mut moe = MoeSplit::default();
        let mut shards = super::ShardBytes::default();
        // The layers that are MTP modules (each holds an `eh_proj`: DeepSeek-V3, GLM-4.5),
        // found before the tensors are tallied, which then go to `ShardBytes::mtp`.
        let mtp_layers: Vec<usize> = headers
            .iter()
            .flat_map(Header::tensors)
            .filter(|t| t.name.contains(".eh_proj."))
            .filter_map(|t| super::shard::layer_of(t.name))
            .collect();
        // Which packings occur (by rank), and the smallest and largest qweight factor.
        let mut packed_kinds = [false; 6];
        let mut packed_factors: Option<(u64, u64)> = None;

        for t in headers.iter().flat_map(Header::tensors) {
            let elements = t.element_count().unwrap_or(u64::MAX);
            let bytes = t.byte_len();
            let packing = packing_of(&t, &idx);
            let logical = elements.saturating_mul(packing.factor());
            if packing != Packing::Plain {
                packed_kinds[usize::from(packing_rank(packing))] = true;
                if let Packing::QWeight(f) = packing {
                    packed_factors =
                        Some(packed_factors.map_or((f, f), |(lo, hi)| (lo.min(f), hi.max(f))));
                }
            }
            tensor_count += 1;
            parameter_count = parameter_count.saturating_add(elements);
            logical_parameter_count = logical_parameter_count.saturating_add(logical);
            total_bytes = total_bytes.saturating_add(bytes);
            // vLLM creates parameters in the model dtype and copies the checkpoint into them:
            // an F32 norm or bias of a 16-bit checkpoint is held at 2 bytes; scales stay fp32
            // (`weight_scale`, `weight_scale_inv`, `input_scale` are fp32 parameters).
            let held = if t.dtype == Dtype::F32 && !t.name.contains("scale") {
                elements.saturating_mul(2)
            } else {
                bytes
            };
            let in_mtp = !mtp_layers.is_empty()
                && super::shard::layer_of(t.name).is_some_and(|l| mtp_layers.contains(&l));
            if in_mtp {
                shards.add_mtp(held, logical);
            } else {
                shards.add(t.name, held);
            }
            if let Some(i) = Dtype::ALL.iter().position(|&d| d == t.dtype) {
                let (e, b, seen) = &mut per_dtype[i];
                *e = e.saturating_add(elements);
                *b = b.saturating_add(bytes);
                *seen = true;
            }
            if is_expert_tensor(t.name) {
                moe.expert_parameters = moe.expert_parameters.saturating_add(logical);
                moe.expert_tensor_count += 1;
            } else {
                moe.shared_parameters = moe.shared_parameters.saturating_add(logical);
            }
        }

        // Filled by insertion: collecting into a map sorts, with a sort of its own in the wasm.
        let name = |f: fn(&(u64, u64, bool)) -> u64| -> BTreeMap<String, u64> {
            let mut named = BTreeMap::new();
            for (d, v) in Dtype::ALL.iter().zip(&per_dtype).filter(|(_, v)| v.2) {
                named.insert(d.name().to_owned(), f(v));
            }
            named
        };
        let elements_per_dtype = name(|v| v.0);
        let bytes_per_dtype = name(|v| v.1);
        let f32_bytes = bytes_per_dtype.get("F32").copied().unwrap_or(0);
        let fp32_checkpoint = f32_bytes > total_bytes.saturating_sub(f32_bytes);
        let quantization = detect_quantization(&idx);

        let mut warnings = Vec::new();
        if tensor_count == 0 {
            warnings.push("no tensors: these headers describe an empty checkpoint".to_owned());
        }
        if fp32_checkpoint {
            warnings.push(
                "this is an fp32 checkpoint: 4 bytes per parameter; load it with \
                 torch_dtype=bfloat16 to halve it"
                    .to_owned(),
            );
        }
        for (rank, _) in packed_kinds.iter().enumerate().filter(|(_, &seen)| seen) {
            warnings.push(packing_warning(
                rank,
                packed_factors.unwrap_or((8, 8)),
                logical_parameter_count,
            ));
        }
        for h in headers {
            if let Some(first) = h.repeated.first() {
                warnings.push(format!(
                    "the header repeats {} tensor entr{} identically (e.g. `{first}`): the reference parser and vLLM load it, and each is counted once",
                    h.repeated.len(),
                    if h.repeated.len() == 1 { "y" } else { "ies" }
                ));
            }
        }
        if let Some(first) = duplicates.iter().next() {
            warnings.push(format!(
                "{} tensor name(s) appear in more than one shard (e.g. `{first}`); they are \
                 counted once per shard",
                duplicates.len()
            ));
        }

        let mut report = Report {
            tensor_count,
            parameter_count,
            logical_parameter_count,
            dtypes: elements_per_dtype.keys().cloned().collect(),
            elements_per_dtype,
            bytes_per_dtype,
            total_bytes,
            fp32_checkpoint,
            effective_bits_per_param: 0.0,
            effective_bits_per_logical_param: 0.0,
            quantization,
            moe,
            warnings,
            shards,
        };
        report.refresh_ratios();
        report
    }

    /// Computes the two bits-per-parameter ratios from the counts. A report read back from
    /// JSON (the web app's import worker sends it to the page that way) gets them from here,
    /// so they equal the sender's bit for bit: a JSON float need not read back exactly.
    pub fn refresh_ratios(&mut self) {
        let bits = self.total_bytes.saturating_mul(8);
        self.effective_bits_per_param = ratio(bits, self.parameter_count);
        self.effective_bits_per_logical_param = ratio(bits, self.logical_parameter_count);
    }
}

/// The warning for packing `rank` (see [`packing_rank`]); `(lo, hi)`: the smallest and
/// largest qweight factor seen.
#[cfg(feature = "import")]
fn packing_warning(rank: usize, (lo, hi): (u64, u64), logical: u64) -> String {
    match rank {
        1 => {
            let factor = if lo == hi {
                format!("{lo}x")
            } else {
                format!("{lo}x to {hi}x")
            };
            let bits = if lo == hi && 32u64.is_multiple_of(lo) {
                format!("int{}", 32 / lo)
            } else {
                "int".to_owned()
            };
            format!(
                "packed {bits} weights: parameter_count counts packed int32 elements, the \
                 logical parameter count is about {factor} for those tensors \
                 (logical_parameter_count = {logical})"
            )
        }
        2 => format!(
            "compressed-tensors packed weights: parameter_count counts packed int32 elements; \
             logical_parameter_count assumes 4-bit (8 per int32) = {logical}"
        ),
        3 => format!(
            "MXFP4 weights: `_blocks` tensors hold two 4-bit values per U8 byte, so \
             parameter_count counts half of them (logical_parameter_count = {logical})"
        ),
        4 => format!(
            "NVFP4 weights: packed U8 tensors hold two 4-bit values per byte, so \
             parameter_count counts half of them (logical_parameter_count = {logical})"
        ),
        _ => format!(
            "bitsandbytes 4-bit weights: U8 tensors hold two 4-bit values per byte, so \
             parameter_count counts half of them (logical_parameter_count = {logical})"
        ),
    }
}
