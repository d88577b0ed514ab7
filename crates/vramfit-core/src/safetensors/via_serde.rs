//! The general path of the header parse: `serde_json` reads the header into
//! values (object entries kept in order, duplicates included), which are then
//! checked entry by entry with a precise error for each problem. The fast path
//! ([`scan`](super::scan)) hands every header it does not fully understand to
//! this one, so both give the same result for every input.

use super::header::{Entries, Tensors};
use super::{Dtype, HeaderError};
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// The general path: `serde_json` reads the header into values, which are
/// then checked entry by entry with a precise error for each problem.
pub(super) fn entries_via_serde(text: &str) -> Result<Entries, HeaderError> {
    let entries = match serde_json::from_str::<RawTop>(text) {
        Ok(RawTop::Object(entries)) => entries,
        Ok(RawTop::Other(found)) => return Err(HeaderError::NotAnObject { found }),
        Err(e) => return Err(HeaderError::InvalidJson(e.to_string())),
    };

    // The reference parser (`safetensors` 0.4+, `Metadata`) reads the entries into a map, so
    // an entry repeated identically is one tensor: kept once here, and named in
    // `repeated` (the report warns). A repeat that differs stays an error: which one the
    // reference keeps depends on its map, and the data section cannot hold both.
    let mut seen: BTreeMap<&str, &Value> = BTreeMap::new();
    let mut repeated: BTreeSet<&str> = BTreeSet::new();
    let mut metadata = Vec::new();
    let mut tensors = Tensors::default();
    for (key, value) in &entries {
        if let Some(first) = seen.get(key.as_str()) {
            if *first != value {
                return Err(HeaderError::DuplicateKey { key: key.clone() });
            }
            if key != "__metadata__" && repeated.insert(key.as_str()) {
                tensors.repeated.push(key.clone());
            }
            continue;
        }
        seen.insert(key.as_str(), value);
        if key == "__metadata__" {
            // `"__metadata__": null` is no metadata (the reference's `Option<HashMap>`).
            if !value.is_null() {
                metadata = parse_metadata(value)?;
            }
        } else {
            parse_entry(key, value, &mut tensors)?;
        }
    }
    tensors.shrink();
    Ok((tensors, metadata))
}

pub(super) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn parse_metadata(value: &Value) -> Result<Vec<(String, String)>, HeaderError> {
    let Value::Object(map) = value else {
        return Err(HeaderError::InvalidMetadata {
            reason: format!(
                "expected an object of string values, found {}",
                json_kind(value)
            ),
        });
    };
    let mut entries = map
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => Ok((k.clone(), s.clone())),
            other => Err(HeaderError::InvalidMetadata {
                reason: format!(
                    "value of `{k}` must be a string, found {}",
                    json_kind(other)
                ),
            }),
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Sorted whatever map type serde_json was built with.
    crate::order::sort_by(&mut entries, |a, b| a.0.cmp(&b.0));
    Ok(entries)
}

fn parse_entry(name: &str, value: &Value, out: &mut Tensors) -> Result<(), HeaderError> {
    let invalid = |reason: String| HeaderError::InvalidTensorEntry {
        tensor: name.to_owned(),
        reason,
    };
    let Value::Object(obj) = value else {
        return Err(invalid(format!(
            "expected an object with dtype, shape and data_offsets, found {}",
            json_kind(value)
        )));
    };
    let field = |key: &str| {
        obj.get(key)
            .ok_or_else(|| invalid(format!("missing `{key}`")))
    };
    let dtype = match field("dtype")? {
        Value::String(s) => Dtype::from_name(s).ok_or_else(|| HeaderError::UnknownDtype {
            tensor: name.to_owned(),
            dtype: s.clone(),
        })?,
        other => {
            return Err(invalid(format!(
                "`dtype` must be a string, found {}",
                json_kind(other)
            )))
        }
    };
    let u64_array = |key: &str| -> Result<Vec<u64>, HeaderError> {
        let Value::Array(items) = field(key)? else {
            return Err(invalid(format!(
                "`{key}` must be an array of non-negative integers"
            )));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_u64().ok_or_else(|| {
                    invalid(format!(
                        "`{key}[{i}]` must be a non-negative integer below 2^64, found {v}"
                    ))
                })
            })
            .collect()
    };
    let shape = u64_array("shape")?;
    let offsets = u64_array("data_offsets")?;
    let [begin, end] = offsets[..] else {
        return Err(invalid(format!(
            "`data_offsets` must be [begin, end], found {} numbers",
            offsets.len()
        )));
    };
    let mark = out.dims_mark();
    for d in shape {
        out.dim(d);
    }
    out.end(name, dtype, mark, (begin, end));
    Ok(())
}

/// The top-level JSON value, keeping object entries in order (duplicates
/// included) and reporting what anything else is.
enum RawTop {
    Object(Vec<(String, Value)>),
    Other(&'static str),
}

impl<'de> Deserialize<'de> for RawTop {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TopVisitor)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = RawTop;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawTop, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry::<String, Value>()? {
            entries.push(entry);
        }
        Ok(RawTop::Object(entries))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawTop, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(RawTop::Other("an array"))
    }

    fn visit_bool<E>(self, _: bool) -> Result<RawTop, E> {
        Ok(RawTop::Other("a boolean"))
    }

    fn visit_i64<E>(self, _: i64) -> Result<RawTop, E> {
        Ok(RawTop::Other("a number"))
    }

    fn visit_u64<E>(self, _: u64) -> Result<RawTop, E> {
        Ok(RawTop::Other("a number"))
    }

    fn visit_f64<E>(self, _: f64) -> Result<RawTop, E> {
        Ok(RawTop::Other("a number"))
    }

    fn visit_str<E>(self, _: &str) -> Result<RawTop, E> {
        Ok(RawTop::Other("a string"))
    }

    fn visit_unit<E>(self) -> Result<RawTop, E> {
        Ok(RawTop::Other("null"))
    }
}
