//! Catalog entries read from JSON values, field by field.
//!
//! Hand-written rather than `#[derive(Deserialize)]`: the derived visitors of [`Gpu`],
//! [`Model`] and their parts were ~25 KB of the web bundle's code before wasm-opt (~7 KB
//! gzipped, docs/PERFORMANCE.md "First-load size"), where these readers share a few helpers.
//! They read as the derive did: unknown keys are ignored, an optional field may be missing or
//! `null`, a field with a default may be missing, and anything else names the field. The unit
//! test below checks them against the derived `Deserialize` on every catalog file.

use super::platform::{
    ApiPrice, Platform, PlatformKind, PlatformLink, PlatformPower, PlatformPrice, Sourced, Tco,
};
use super::{DenseTflops, GgufRepo, Gpu, Interconnect, Model, NonTextParams, Price, QuantizedRepo};
use serde_json::{Map, Value};
use std::cell::RefCell;

/// Every entry of one catalog file (a JSON list), read by `read`; errors name the file, the
/// entry and the field.
#[cfg(all(test, feature = "bundled"))]
pub(super) fn entries<T>(
    path: &str,
    text: &str,
    read: fn(&mut Value) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("catalog {path}: {e}"))?;
    entries_of(path, v, read)
}

/// Every entry of one catalog file, parsed (`v`), read by `read`.
pub(super) fn entries_of<T>(
    path: &str,
    v: Value,
    read: fn(&mut Value) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let Value::Array(items) = v else {
        return Err(format!("catalog {path}: expected a list of entries"));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, mut item)| {
            read(&mut item).map_err(|e| match item.get("id").and_then(Value::as_str) {
                Some(id) => format!("catalog {path}: entry {i} (`{id}`): {e}"),
                None => format!("catalog {path}: entry {i}: {e}"),
            })
        })
        .collect()
}

/// A JSON object being read. The readers never return early: a bad field records the first
/// error and reads as its default, and [`Obj::done`] turns the whole into `Err` (with early
/// returns every `?` also dropped the fields already read: `gpu` was 5.9 KB of wasm, now
/// 4.2 KB).
struct Obj<'a> {
    map: &'a Map<String, Value>,
    first_error: RefCell<Option<String>>,
}

impl<'a> Obj<'a> {
    fn of(v: &'a Value) -> Result<Obj<'a>, String> {
        let map = v
            .as_object()
            .ok_or_else(|| "expected an object".to_owned())?;
        Ok(Obj {
            map,
            first_error: RefCell::new(None),
        })
    }

    fn fail(&self, e: String) {
        self.first_error.borrow_mut().get_or_insert(e);
    }

    /// `value`, or the first error recorded while reading it.
    fn done<T>(self, value: T) -> Result<T, String> {
        self.first_error.into_inner().map_or(Ok(value), Err)
    }

    /// The value of `key`, `None` when missing or `null` (and when `conv` refuses it, which
    /// is recorded).
    fn opt<T>(&self, key: &str, what: &str, conv: impl Fn(&'a Value) -> Option<T>) -> Option<T> {
        match self.map.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => {
                let x = conv(v);
                if x.is_none() {
                    self.fail(format!("`{key}` must be {what}"));
                }
                x
            }
        }
    }

    /// As [`Obj::opt`], recording a missing value too.
    fn req<T: Default>(&self, key: &str, what: &str, conv: impl Fn(&'a Value) -> Option<T>) -> T {
        if matches!(self.map.get(key), None | Some(Value::Null)) {
            self.fail(format!("missing `{key}`"));
        }
        self.opt(key, what, conv).unwrap_or_default()
    }

    #[inline(never)]
    fn opt_f64(&self, key: &str) -> Option<f64> {
        self.opt(key, "a number", Value::as_f64)
    }

    #[inline(never)]
    fn opt_u64(&self, key: &str) -> Option<u64> {
        self.opt(key, "a non-negative integer", Value::as_u64)
    }

    #[inline(never)]
    fn opt_str(&self, key: &str) -> Option<String> {
        self.opt(key, "a string", |v| v.as_str().map(str::to_owned))
    }

    #[inline(never)]
    fn f64(&self, key: &str) -> f64 {
        self.req(key, "a number", Value::as_f64)
    }

    #[inline(never)]
    fn u64(&self, key: &str) -> u64 {
        self.req(key, "a non-negative integer", Value::as_u64)
    }

    #[inline(never)]
    fn str(&self, key: &str) -> String {
        self.req(key, "a string", |v| v.as_str().map(str::to_owned))
    }

    #[inline(never)]
    fn strs(&self, key: &str) -> Vec<String> {
        self.req(key, "a list of strings", |v| {
            v.as_array()?
                .iter()
                .map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
    }

    /// A list of objects, each read by `read` (its error prefixed with the key and index);
    /// empty when missing.
    fn list<T>(&self, key: &str, read: fn(&Value) -> Result<T, String>) -> Vec<T> {
        let items = self.opt(key, "a list", Value::as_array);
        let read_one = |(i, v)| read(v).map_err(|e| format!("`{key}[{i}]`: {e}"));
        match items.map(|l| l.iter().enumerate().map(read_one).collect()) {
            Some(Ok(v)) => v,
            Some(Err(e)) => {
                self.fail(e);
                Vec::new()
            }
            None => Vec::new(),
        }
    }

    /// A nested object read by `read` (its error prefixed with the key); `None` when missing.
    fn nested<T>(&self, key: &str, read: fn(&Value) -> Result<T, String>) -> Option<T> {
        let v = self.map.get(key).filter(|v| !v.is_null())?;
        read(v).map_err(|e| self.fail(format!("`{key}`: {e}"))).ok()
    }

    /// As [`Obj::nested`], recording a missing value too.
    fn nested_req<T: Default>(&self, key: &str, read: fn(&Value) -> Result<T, String>) -> T {
        if matches!(self.map.get(key), None | Some(Value::Null)) {
            self.fail(format!("missing `{key}`"));
        }
        self.nested(key, read).unwrap_or_default()
    }
}

pub(super) fn gpu(v: &mut Value) -> Result<Gpu, String> {
    let o = Obj::of(v)?;
    let gpu = Gpu {
        id: o.str("id"),
        name: o.str("name"),
        aliases: o.strs("aliases"),
        vendor: o.str("vendor"),
        segment: o.str("segment"),
        architecture: o.opt_str("architecture"),
        memory_marketed_gb: o.f64("memory_marketed_gb"),
        memory_type: o.opt_str("memory_type"),
        memory_usable_mib: o.u64("memory_usable_mib"),
        memory_usable_source: o.opt_str("memory_usable_source"),
        memory_cuda_total_mib: o.opt_u64("memory_cuda_total_mib"),
        memory_cuda_total_source: o.opt_str("memory_cuda_total_source"),
        unified_memory_gpu_fraction: o.opt_f64("unified_memory_gpu_fraction"),
        memory_bandwidth_gb_per_s: o.f64("memory_bandwidth_gb_per_s"),
        dense_tflops: o.nested_req("dense_tflops", dense_tflops),
        interconnect: o.nested_req("interconnect", interconnect),
        pcie_generation: o.opt_u64("pcie_generation"),
        server_gpus: None,
        tdp_w: o.opt_f64("tdp_w"),
        price: o.nested("price", price).unwrap_or_default(),
        source: o.opt_str("source").unwrap_or_default(),
        notes: o.opt_str("notes"),
    };
    o.done(gpu)
}

fn dense_tflops(v: &Value) -> Result<DenseTflops, String> {
    let o = Obj::of(v)?;
    let t = DenseTflops {
        fp32: o.opt_f64("fp32"),
        tf32: o.opt_f64("tf32"),
        bf16: o.opt_f64("bf16"),
        fp16: o.opt_f64("fp16"),
        fp8: o.opt_f64("fp8"),
        int8: o.opt_f64("int8"),
        fp4: o.opt_f64("fp4"),
    };
    o.done(t)
}

fn interconnect(v: &Value) -> Result<Interconnect, String> {
    let o = Obj::of(v)?;
    let i = Interconnect {
        kind: o.str("kind"),
        generation: o.opt_str("generation"),
        gb_per_s_per_direction: o.opt_f64("gb_per_s_per_direction"),
        gpus_per_node: o.opt_u64("gpus_per_node"),
        scale_out: None,
    };
    o.done(i)
}

fn price(v: &Value) -> Result<Price, String> {
    let o = Obj::of(v)?;
    let p = Price {
        purchase_usd: o.opt_f64("purchase_usd"),
        purchase_kind: o.opt_str("purchase_kind"),
        purchase_date: o.opt_str("purchase_date"),
        purchase_source: o.opt_str("purchase_source"),
        cloud_usd_per_hour: o.opt_f64("cloud_usd_per_hour"),
        cloud_date: o.opt_str("cloud_date"),
        cloud_source: o.opt_str("cloud_source"),
        cloud_reserved_usd_per_hour: o.opt_f64("cloud_reserved_usd_per_hour"),
        cloud_reserved_term: o.opt_str("cloud_reserved_term"),
        cloud_reserved_date: o.opt_str("cloud_reserved_date"),
        cloud_reserved_source: o.opt_str("cloud_reserved_source"),
    };
    o.done(p)
}

pub(super) fn platform(v: &mut Value) -> Result<Platform, String> {
    let o = Obj::of(v)?;
    let kind = o.str("kind");
    let p = Platform {
        id: o.str("id"),
        name: o.str("name"),
        kind: PlatformKind::parse(&kind),
        vendor: o.str("vendor"),
        gpus: o.strs("gpus"),
        gpus_per_node: o.u64("gpus_per_node"),
        gpu_counts: o.req("gpu_counts", "a list of GPU counts", |v| {
            v.as_array()?.iter().map(Value::as_u64).collect()
        }),
        price: o.nested_req("price", platform_price),
        power: o.nested_req("power", platform_power),
        rack_units: o.opt_u64("rack_units"),
        intra_node_link: o.nested("intra_node_link", platform_link),
        inter_node_link: o.nested("inter_node_link", platform_link),
        engines: o.strs("engines"),
        on_prem: o
            .opt("on_prem", "true or false", Value::as_bool)
            .unwrap_or(true),
        source: o.opt_str("source").unwrap_or_default(),
        notes: o.opt_str("notes"),
    };
    if p.kind.is_none() {
        o.fail(format!(
            "`kind` must be baseboard, pcie-server, workstation, rack or system; got `{kind}`"
        ));
    }
    o.done(p)
}

fn platform_price(v: &Value) -> Result<PlatformPrice, String> {
    let o = Obj::of(v)?;
    let p = PlatformPrice {
        usd_without_gpus: o.opt_f64("usd_without_gpus"),
        system_usd: o.opt_f64("system_usd"),
        kind: o.opt_str("kind"),
        date: o.opt_str("date"),
        source: o.opt_str("source").unwrap_or_default(),
    };
    o.done(p)
}

fn platform_power(v: &Value) -> Result<PlatformPower, String> {
    let o = Obj::of(v)?;
    let p = PlatformPower {
        host_w: o.opt_f64("host_w"),
        system_w: o.opt_f64("system_w"),
        source: o.opt_str("source").unwrap_or_default(),
    };
    o.done(p)
}

fn platform_link(v: &Value) -> Result<PlatformLink, String> {
    let o = Obj::of(v)?;
    let l = PlatformLink {
        kind: o.str("kind"),
        generation: o.opt_str("generation"),
        gb_per_s_per_direction: o
            .opt_f64("gb_per_s_per_direction")
            .or_else(|| o.opt_f64("gb_per_s_per_direction_per_gpu")),
        network_usd_per_node: o.opt_f64("network_usd_per_node"),
        source: o.opt_str("source").unwrap_or_default(),
    };
    o.done(l)
}

fn sourced(v: &Value) -> Result<Sourced, String> {
    let o = Obj::of(v)?;
    let s = Sourced {
        value: o.f64("value"),
        date: o.opt_str("date"),
        source: o.opt_str("source").unwrap_or_default(),
    };
    o.done(s)
}

fn api_price(v: &Value) -> Result<ApiPrice, String> {
    let o = Obj::of(v)?;
    let a = ApiPrice {
        provider: o.str("provider"),
        model: o.str("model"),
        input_usd_per_million: o.f64("input_usd_per_million"),
        output_usd_per_million: o.f64("output_usd_per_million"),
        date: o.opt_str("date"),
        source: o.opt_str("source").unwrap_or_default(),
    };
    o.done(a)
}

/// The cost defaults and API examples of `catalog/tco.json`.
pub(super) fn tco_of(v: &Value) -> Result<Tco, String> {
    let o = Obj::of(v).map_err(|e| format!("catalog tco.json: {e}"))?;
    let d = o.nested_req("defaults", |v| {
        let o = Obj::of(v)?;
        let d = Tco {
            years: o.nested_req("years", sourced),
            kwh_price_usd: o.nested_req("kwh_price_usd", sourced),
            pue: o.nested_req("pue", sourced),
            utilization: o.nested_req("utilization", sourced),
            idle_power_fraction: o.nested_req("idle_power_fraction", sourced),
            resale_fraction: o.nested_req("resale_fraction", sourced),
            api_examples: Vec::new(),
        };
        o.done(d)
    });
    let t = Tco {
        api_examples: o.list("api_examples", api_price),
        ..d
    };
    o.done(t).map_err(|e| format!("catalog tco.json: {e}"))
}

pub(super) fn model(v: &mut Value) -> Result<Model, String> {
    // Moved out of the parsed file, not copied: the configs are most of the catalog.
    let config = v.get_mut("config").map(Value::take);
    let o = Obj::of(v)?;
    let config = match config {
        Some(c @ Value::Object(_)) => c,
        None | Some(Value::Null) => {
            o.fail("missing `config`".to_owned());
            Value::Null
        }
        Some(_) => {
            o.fail("`config` must be an object".to_owned());
            Value::Null
        }
    };
    let m = Model {
        id: o.str("id"),
        name: o.str("name"),
        family: o.str("family"),
        vendor: o.str("vendor"),
        hf_repo_ids: o.strs("hf_repo_ids"),
        quantized_repos: o.list("quantized_repos", quantized_repo),
        gguf_repos: o.list("gguf_repos", gguf_repo),
        stored_dtype: o.str("stored_dtype"),
        config,
        config_verbatim: o
            .opt("config_verbatim", "true or false", Value::as_bool)
            .unwrap_or(true),
        parameters_total: o.u64("parameters_total"),
        parameters_active: o.u64("parameters_active"),
        parameters_source: o.opt_str("parameters_source").unwrap_or_default(),
        parameters_non_text: o.nested("parameters_non_text", non_text),
        context_native: o.u64("context_native"),
        source: o.opt_str("source").unwrap_or_default(),
        notes: o.opt_str("notes"),
        arch_memo: super::ArchMemo::default(),
    };
    o.done(m)
}

fn quantized_repo(v: &Value) -> Result<QuantizedRepo, String> {
    let o = Obj::of(v)?;
    let q = QuantizedRepo {
        repo: o.str("repo"),
        format: o.str("format"),
        group_size: o.opt_u64("group_size"),
    };
    o.done(q)
}

fn gguf_repo(v: &Value) -> Result<GgufRepo, String> {
    let o = Obj::of(v)?;
    let g = GgufRepo {
        repo: o.str("repo"),
        quants: o.strs("quants"),
        source: o.opt_str("source").unwrap_or_default(),
    };
    o.done(g)
}

fn non_text(v: &Value) -> Result<NonTextParams, String> {
    let o = Obj::of(v)?;
    let n = NonTextParams {
        count: o.u64("count"),
        how: o.str("how"),
    };
    o.done(n)
}

#[cfg(all(test, feature = "bundled"))] // the tests read the embedded catalog
mod tests {
    use super::super::{GPU_FILES, MODEL_FILES};
    use super::*;

    /// The readers give what the derived `Deserialize` gives, on every catalog file.
    #[test]
    fn readers_match_the_derived_deserialize() {
        let mut n = 0;
        for (path, text) in GPU_FILES {
            let derived: Vec<Gpu> = serde_json::from_str(text).expect(path);
            assert_eq!(entries(path, text, gpu).expect(path), derived, "{path}");
            n += derived.len();
        }
        for (path, text) in MODEL_FILES {
            let derived: Vec<Model> = serde_json::from_str(text).expect(path);
            assert_eq!(entries(path, text, model).expect(path), derived, "{path}");
            n += derived.len();
        }
        assert!(n > 100, "{n} entries");
    }

    /// llama.cpp's quantization names (`llama-quantize --help`, the ggml types of the
    /// files), and Unsloth's dynamic `UD-` variants of them, as `-hf REPO:TAG` takes them.
    const GGUF_QUANTS: [&str; 30] = [
        "F32", "F16", "BF16", "Q8_0", "Q6_K", "Q5_K_M", "Q5_K_S", "Q5_0", "Q5_1", "Q4_K_M",
        "Q4_K_S", "Q4_0", "Q4_1", "Q3_K_L", "Q3_K_M", "Q3_K_S", "Q2_K", "IQ4_XS", "IQ4_NL",
        "IQ3_M", "IQ3_XS", "IQ3_XXS", "IQ2_M", "IQ2_XS", "IQ2_XXS", "IQ1_M", "IQ1_S", "MXFP4",
        "TQ1_0", "Q8_K_XL",
    ];

    fn known_quant(q: &str) -> bool {
        let base = q.strip_prefix("UD-").unwrap_or(q);
        GGUF_QUANTS.contains(&base)
            || (q.starts_with("UD-") && base.ends_with("_K_XL") && base.len() == 7)
    }

    /// Every GGUF repo names an `owner/name`, llama.cpp quant tags and a source.
    #[test]
    fn gguf_repos_are_repo_ids_with_known_quants_and_a_source() {
        let c = super::super::Catalog::load().expect("catalog");
        let mut n = 0;
        for m in &c.models {
            for g in &m.gguf_repos {
                let parts: Vec<&str> = g.repo.split('/').collect();
                assert!(
                    parts.len() == 2
                        && parts.iter().all(|p| !p.is_empty()
                            && p.bytes()
                                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))),
                    "{}: repo `{}` is not owner/name",
                    m.id,
                    g.repo
                );
                assert!(!g.quants.is_empty(), "{}: {} lists no quants", m.id, g.repo);
                for q in &g.quants {
                    assert!(
                        known_quant(q),
                        "{}: {}: unknown quant tag `{q}`",
                        m.id,
                        g.repo
                    );
                }
                assert!(
                    !g.source.trim().is_empty(),
                    "{}: {} has no source",
                    m.id,
                    g.repo
                );
                n += 1;
            }
        }
        assert!(n > 50, "{n} GGUF repos");
        assert!(known_quant("UD-Q4_K_XL") && !known_quant("q4") && !known_quant("fp16"));
    }

    /// `Model::gguf_repo` gives the first repo that lists the quant, ignoring case.
    #[test]
    fn gguf_repo_is_the_first_repo_with_the_quant() {
        let c = super::super::Catalog::load().expect("catalog");
        let model = |id: &str| c.models.iter().find(|m| m.id == id).expect(id);
        let llama = model("llama-3.1-8b");
        assert_eq!(
            llama.gguf_repo("Q4_K_M"),
            Some("lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF")
        );
        assert_eq!(
            llama.gguf_repo("q8_0"),
            Some("lmstudio-community/Meta-Llama-3.1-8B-Instruct-GGUF")
        );
        assert_eq!(llama.gguf_repo("BF16"), None);
        let qwen = model("qwen3-8b");
        assert_eq!(qwen.gguf_repo("Q4_K_M"), Some("Qwen/Qwen3-8B-GGUF"));
        assert_eq!(qwen.gguf_repo("Q8_0"), Some("unsloth/Qwen3-8B-GGUF"));
        assert_eq!(qwen.gguf_repo("BF16"), Some("unsloth/Qwen3-8B-GGUF"));
        assert_eq!(model("kimi-k2").gguf_repo("Q4_K_M"), None);
    }

    #[test]
    fn a_gguf_repo_without_a_repo_names_the_field() {
        let (path, text) = MODEL_FILES[0];
        let mut v: Value = serde_json::from_str(text).expect(path);
        let first = v[0].clone();
        let mut item = first.clone();
        item["gguf_repos"] = serde_json::json!([{"quants": ["Q8_0"], "source": "s"}]);
        let id = first["id"].as_str().expect("id").to_owned();
        v = Value::Array(vec![item]);
        let e = entries("models/t.json", &v.to_string(), model).expect_err("no repo");
        assert_eq!(
            e,
            format!("catalog models/t.json: entry 0 (`{id}`): `gguf_repos[0]`: missing `repo`")
        );
    }

    #[test]
    fn errors_name_the_file_entry_and_field() {
        let base = || {
            serde_json::json!({
                "id": "x", "name": "X", "aliases": [], "vendor": "nvidia", "segment": "datacenter",
                "memory_marketed_gb": 80, "memory_usable_mib": 81559,
                "memory_bandwidth_gb_per_s": 3350,
                "dense_tflops": {"bf16": 989.4},
                "interconnect": {"kind": "nvlink"},
                "extra": "ignored", "notes": null
            })
        };
        let read = |v: Value| entries("gpus/t.json", &Value::Array(vec![v]).to_string(), gpu);
        let ok = read(base()).expect("a minimal GPU");
        assert_eq!(ok[0].dense_tflops.bf16, Some(989.4));
        assert_eq!(
            (ok[0].price.purchase_usd, ok[0].notes.as_deref()),
            (None, None)
        );
        for (change, message) in [
            (
                ("memory_usable_mib", Value::Null),
                "missing `memory_usable_mib`",
            ),
            (
                ("memory_usable_mib", serde_json::json!(1.5)),
                "`memory_usable_mib` must be a non-negative integer",
            ),
            (
                ("aliases", serde_json::json!(["a", 1])),
                "`aliases` must be a list of strings",
            ),
            (
                ("interconnect", serde_json::json!({"generation": "x"})),
                "`interconnect`: missing `kind`",
            ),
            (
                ("dense_tflops", serde_json::json!({"bf16": "fast"})),
                "`dense_tflops`: `bf16` must be a number",
            ),
        ] {
            let mut v = base();
            v[change.0] = change.1;
            let e = read(v).expect_err(message);
            assert_eq!(e, format!("catalog gpus/t.json: entry 0 (`x`): {message}"));
        }
        let e = entries("models/t.json", "{}", model).expect_err("not a list");
        assert_eq!(e, "catalog models/t.json: expected a list of entries");
        let e = entries("models/t.json", r#"[{"id":"m","config":5}]"#, model).expect_err("config");
        assert_eq!(
            e,
            "catalog models/t.json: entry 0 (`m`): `config` must be an object"
        );
        let e = entries("models/t.json", "[1]", model).expect_err("not an object");
        assert_eq!(e, "catalog models/t.json: entry 0: expected an object");
    }
}
