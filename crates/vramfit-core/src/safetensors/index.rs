//! [`check_against_index`]: cross-checks shard headers against
//! `model.safetensors.index.json` (its `weight_map` and `metadata.total_size`),
//! and [`index_shards`]: the shard file names an index names.

use super::via_serde::json_kind;
use super::{Header, HeaderError};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// One inconsistency between `model.safetensors.index.json` and the shards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum IndexProblem {
    /// The index maps tensors to a shard that was not supplied.
    MissingShard {
        /// Shard file name.
        shard: String,
        /// Tensors the index places in it.
        tensors: Vec<String>,
    },
    /// The index lists a tensor that no supplied shard holds (its shard was
    /// supplied).
    TensorNotFound {
        /// Tensor name.
        tensor: String,
        /// Shard the index names.
        shard: String,
    },
    /// The tensor is in a different shard than the index says.
    WrongShard {
        /// Tensor name.
        tensor: String,
        /// Shard the index names.
        index_shard: String,
        /// Shard that holds it.
        found_in: String,
    },
    /// A shard holds a tensor the index does not list.
    NotInIndex {
        /// Tensor name.
        tensor: String,
        /// Shard that holds it.
        shard: String,
    },
    /// A supplied shard is not referenced by the index.
    UnusedShard {
        /// Shard file name.
        shard: String,
    },
    /// `metadata.total_size` differs from the bytes of the tensors (only
    /// checked when no shard is missing).
    TotalSizeMismatch {
        /// `metadata.total_size`.
        declared: u64,
        /// Sum of tensor bytes over the shards.
        actual: u64,
    },
}

impl fmt::Display for IndexProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IndexProblem::MissingShard { shard, tensors } => write!(
                f,
                "shard `{shard}` is missing; the index places {} tensor(s) in it",
                tensors.len()
            ),
            IndexProblem::TensorNotFound { tensor, shard } => write!(
                f,
                "the index places tensor `{tensor}` in `{shard}`, but no shard holds it"
            ),
            IndexProblem::WrongShard {
                tensor,
                index_shard,
                found_in,
            } => write!(
                f,
                "the index places tensor `{tensor}` in `{index_shard}`, but it is in `{found_in}`"
            ),
            IndexProblem::NotInIndex { tensor, shard } => write!(
                f,
                "tensor `{tensor}` of shard `{shard}` is not listed in the index"
            ),
            IndexProblem::UnusedShard { shard } => {
                write!(f, "shard `{shard}` is not referenced by the index")
            }
            IndexProblem::TotalSizeMismatch { declared, actual } => write!(
                f,
                "the index declares total_size {declared} bytes, but the tensors hold {actual}"
            ),
        }
    }
}

/// Result of [`check_against_index`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexCheck {
    /// Number of tensors in `weight_map`.
    pub indexed_tensors: u64,
    /// Distinct shard names in `weight_map`, sorted.
    pub indexed_shards: Vec<String>,
    /// `metadata.total_size`, if present.
    pub declared_total_size: Option<u64>,
    /// Sum of tensor bytes over the supplied shards.
    pub actual_total_size: u64,
    /// Everything that does not match.
    pub problems: Vec<IndexProblem>,
}

impl IndexCheck {
    /// No problems found.
    #[must_use]
    pub fn is_consistent(&self) -> bool {
        self.problems.is_empty()
    }
}

/// File name part of a path (`a/b/model-00001.safetensors` -> `model-00001.safetensors`).
fn base_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

fn parse_total_size(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64().and_then(|f| {
                // Some writers emit floats; accept exact non-negative integers.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let u = f as u64;
                (f >= 0.0 && f.fract() == 0.0 && f < 1.8e19).then_some(u)
            })
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Cross-checks shard headers against `model.safetensors.index.json`.
/// `shards` pairs each shard's file name (a path is reduced to its file name)
/// with its parsed header.
///
/// # Errors
///
/// [`HeaderError::InvalidIndex`] when the index is not JSON, not an object,
/// lacks a `weight_map` object of strings, or has a `metadata.total_size`
/// that is not a non-negative integer.
pub fn check_against_index(
    shards: &[(String, &Header)],
    index_json: &[u8],
) -> Result<IndexCheck, HeaderError> {
    let invalid = |reason: String| HeaderError::InvalidIndex { reason };
    let root: Value =
        crate::json_from_bytes(index_json).map_err(|e| invalid(format!("not valid JSON: {e}")))?;
    let Value::Object(root) = root else {
        return Err(invalid(format!(
            "expected a JSON object, found {}",
            json_kind(&root)
        )));
    };
    let Some(Value::Object(weight_map)) = root.get("weight_map") else {
        return Err(invalid("missing `weight_map` object".to_owned()));
    };
    let declared_total_size = match root.get("metadata").and_then(|m| m.get("total_size")) {
        None | Some(Value::Null) => None,
        Some(v) => Some(parse_total_size(v).ok_or_else(|| {
            invalid(format!(
                "`metadata.total_size` must be a non-negative integer, found {v}"
            ))
        })?),
    };
    let mut index: BTreeMap<&str, &str> = BTreeMap::new();
    for (tensor, shard) in weight_map {
        let Value::String(shard) = shard else {
            return Err(invalid(format!(
                "`weight_map` value of `{tensor}` must be a shard file name, found {}",
                json_kind(shard)
            )));
        };
        index.insert(tensor.as_str(), base_name(shard));
    }

    // Sets filled by insertion: `collect` into a set sorts with the standard stable sort,
    // ~4 KB of wasm for each element type (see `order`).
    let mut supplied = BTreeSet::new();
    for (n, _) in shards {
        supplied.insert(base_name(n));
    }
    // tensor -> shard that holds it (first one).
    let mut holder: BTreeMap<&str, &str> = BTreeMap::new();
    let mut actual_total_size = 0u64;
    for (name, header) in shards {
        actual_total_size = actual_total_size.saturating_add(header.data_len);
        for t in header.tensors() {
            holder.entry(t.name).or_insert(base_name(name));
        }
    }

    let mut indexed_shards = BTreeSet::new();
    for &shard in index.values() {
        indexed_shards.insert(shard);
    }
    let mut problems = Vec::new();
    let mut missing: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (&tensor, &shard) in &index {
        match holder.get(tensor) {
            Some(&found_in) if found_in == shard => {}
            Some(&found_in) => problems.push(IndexProblem::WrongShard {
                tensor: tensor.to_owned(),
                index_shard: shard.to_owned(),
                found_in: found_in.to_owned(),
            }),
            None if supplied.contains(shard) => problems.push(IndexProblem::TensorNotFound {
                tensor: tensor.to_owned(),
                shard: shard.to_owned(),
            }),
            None => missing.entry(shard).or_default().push(tensor.to_owned()),
        }
    }
    let any_missing = !missing.is_empty();
    for (shard, tensors) in missing {
        problems.push(IndexProblem::MissingShard {
            shard: shard.to_owned(),
            tensors,
        });
    }
    for (&tensor, &shard) in &holder {
        if !index.contains_key(tensor) {
            problems.push(IndexProblem::NotInIndex {
                tensor: tensor.to_owned(),
                shard: shard.to_owned(),
            });
        }
    }
    for &shard in &supplied {
        if !indexed_shards.contains(shard) {
            problems.push(IndexProblem::UnusedShard {
                shard: shard.to_owned(),
            });
        }
    }
    if let Some(declared) = declared_total_size {
        if !any_missing && declared != actual_total_size {
            problems.push(IndexProblem::TotalSizeMismatch {
                declared,
                actual: actual_total_size,
            });
        }
    }

    Ok(IndexCheck {
        indexed_tensors: index.len() as u64,
        indexed_shards: indexed_shards.into_iter().map(str::to_owned).collect(),
        declared_total_size,
        actual_total_size,
        problems,
    })
}

/// The shard file names a `model.safetensors.index.json` names (sorted, unique).
///
/// # Errors
/// [`HeaderError::InvalidIndex`] when the text is not an index.
pub fn index_shards(index_json: &[u8]) -> Result<Vec<String>, HeaderError> {
    let invalid = |reason: String| HeaderError::InvalidIndex { reason };
    let root: Value = crate::json_from_bytes(index_json).map_err(invalid)?;
    let map = root
        .get("weight_map")
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("no `weight_map` object".into()))?;
    let mut v: Vec<String> = map
        .values()
        .filter_map(|x| x.as_str().map(str::to_string))
        .collect();
    crate::order::sort_by(&mut v, String::cmp);
    v.dedup();
    Ok(v)
}
