// Shared by `build.rs` (through `include!`) and the catalog tests: what the web bundle's
// copy of the catalog leaves out. Only std and serde_json, so that the build script can
// compile it.
//
// A model's `config` keeps only the keys that `model.rs` can read: every object key of the
// config (nested ones too, e.g. `rope_scaling`, `text_config`) is kept when it appears as a
// string literal in `model.rs`, which is a superset of the keys `ModelArch::from_config`
// looks up. The rest (token ids, `initializer_range`, `transformers_version`, ...) is a
// third of the models' bytes. The catalog test `the_web_catalog_sizes_like_the_full_one`
// checks that every model reads to the same `ModelArch` either way.

/// The string literals of `model_rs` that look like config keys.
fn config_keys(model_rs: &str) -> std::collections::BTreeSet<String> {
    model_rs
        .split('"')
        .skip(1)
        .step_by(2)
        .filter(|s| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
        .map(str::to_owned)
        .collect()
}

/// Drops every object key of `config` (recursively) that is not in `keys`.
fn slim_config(config: &mut serde_json::Value, keys: &std::collections::BTreeSet<String>) {
    match config {
        serde_json::Value::Object(m) => {
            m.retain(|k, _| keys.contains(k));
            for v in m.values_mut() {
                slim_config(v, keys);
            }
        }
        serde_json::Value::Array(items) => {
            for v in items {
                slim_config(v, keys);
            }
        }
        _ => {}
    }
}
