//! The bundled catalog of GPUs and models.
//!
//! Data, not code: one JSON file per vendor (`catalog/gpus/*.json`) and per model family
//! (`catalog/models/*.json`). With the feature `bundled` (the CLI, the tests) they are
//! embedded with `include_str!` ([`Catalog::load`]). The web app does not embed them: it
//! fetches one file of them all, [`WEB_FILE`], beside its wasm, and reads it with
//! [`Catalog::from_web_file`] (the service worker keeps it for offline use).
//! Every entry carries a `source`; see README.md "Contributing to the catalog" for the schema.
//! Ids are stable: they appear in share links and CLI scripts. A renamed id stays as an alias.

use crate::dtype::WeightFormat;
use crate::model::{ConfigError, ModelArch};
use serde::Serialize;
use serde_json::Value;

pub mod names;
pub mod platform;
mod read;
pub use names::{GpuMatch, MatchKind, UnknownGpu};
use std::collections::BTreeMap;

// One list of the catalog's files per kind, in the order the catalog reads them (the order of
// its lists in the app): `$m!` gets the paths, relative to `src/catalog`.
macro_rules! gpu_files {
    ($m:ident) => {
        $m![
            "gpus/nvidia.json",
            "gpus/amd.json",
            "gpus/intel.json",
            "gpus/apple.json"
        ]
    };
}
macro_rules! model_files {
    ($m:ident) => {
        $m![
            "models/llama.json",
            "models/mistral.json",
            "models/qwen.json",
            "models/gemma.json",
            "models/phi.json",
            "models/deepseek.json",
            "models/kimi.json",
            "models/glm.json",
            "models/gpt_oss.json",
            "models/granite.json",
            "models/falcon.json"
        ]
    };
}
macro_rules! platform_files {
    ($m:ident) => {
        $m![
            "platforms/nvidia.json",
            "platforms/amd.json",
            "platforms/intel.json",
            "platforms/apple.json"
        ]
    };
}
macro_rules! paths {
    ($($p:literal),*) => {
        [$($p),*]
    };
}
#[cfg(feature = "bundled")]
macro_rules! embedded {
    ($($p:literal),*) => {
        [$(($p, include_str!(concat!(env!("OUT_DIR"), "/", $p)))),*]
    };
}

/// The GPU files' paths, relative to `src/catalog`.
pub const GPU_PATHS: [&str; 4] = gpu_files!(paths);
/// The model files' paths.
pub const MODEL_PATHS: [&str; 11] = model_files!(paths);
/// The platform files' paths ([`platform`]).
pub const PLATFORM_PATHS: [&str; 4] = platform_files!(paths);
/// The cost model's defaults and dated API prices: the path.
pub const TCO_PATH: &str = "tco.json";

/// The embedded GPU files: (path, contents).
#[cfg(feature = "bundled")]
pub const GPU_FILES: [(&str, &str); 4] = gpu_files!(embedded);
/// The embedded model files.
#[cfg(feature = "bundled")]
pub const MODEL_FILES: [(&str, &str); 11] = model_files!(embedded);
/// The embedded platform files ([`platform`]).
#[cfg(feature = "bundled")]
pub const PLATFORM_FILES: [(&str, &str); 4] = platform_files!(embedded);
/// The embedded cost model's defaults and dated API prices.
#[cfg(feature = "bundled")]
pub const TCO_FILE: &str = include_str!(concat!(env!("OUT_DIR"), "/tco.json"));

/// The web app's copy of the catalog, a file beside its wasm: its name, by content
/// (`catalog-<hash>.json`, written by `build.rs`, copied next to the bundle by
/// `scripts/catalog_file.py`). [`Catalog::from_web_file`] reads it.
pub const WEB_FILE: &str = env!("VRAMFIT_WEB_CATALOG");

/// Typical gap between nvidia-smi's total and CUDA's total on NVIDIA GPUs, MiB.
pub const DRIVER_RESERVE_MIB: u64 = 450;

/// Dense tensor throughput by precision, in TFLOPS (10^12 FLOP/s), without sparsity.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
pub struct DenseTflops {
    /// FP32 (non-tensor) throughput.
    pub fp32: Option<f64>,
    /// TF32 tensor throughput.
    #[serde(default)]
    pub tf32: Option<f64>,
    /// BF16 tensor throughput (fp32 accumulate).
    pub bf16: Option<f64>,
    /// FP16 tensor throughput (fp32 accumulate).
    pub fp16: Option<f64>,
    /// FP8 tensor throughput.
    pub fp8: Option<f64>,
    /// INT8 tensor throughput (TOPS).
    pub int8: Option<f64>,
    /// FP4 tensor throughput.
    pub fp4: Option<f64>,
}

impl DenseTflops {
    /// Throughput for a key such as `"bf16"`, falling back to the next wider precision the
    /// chip has (an fp8 model on an A100 runs at its bf16 rate through weight-only kernels).
    #[must_use]
    pub fn for_key(&self, key: &str) -> Option<f64> {
        let chain: &[Option<f64>] = match key {
            "fp4" => &[self.fp4, self.fp8, self.bf16, self.fp16],
            "fp8" => &[self.fp8, self.bf16, self.fp16],
            "int8" => &[self.int8, self.bf16, self.fp16],
            "fp16" => &[self.fp16, self.bf16],
            "fp32" => &[self.tf32, self.fp32],
            _ => &[self.bf16, self.fp16],
        };
        chain
            .iter()
            .flatten()
            .copied()
            .find(|x| *x > 0.0)
            .or(self.fp32)
    }
}

/// Intra-node GPU-to-GPU link.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
pub struct Interconnect {
    /// `nvlink`, `pcie`, `infinity-fabric`, `gaudi-roce`, `nvlink-c2c-nvl72`, `unified`.
    pub kind: String,
    /// e.g. "NVLink 4".
    pub generation: Option<String>,
    /// Bandwidth per direction per GPU, GB/s.
    pub gb_per_s_per_direction: Option<f64>,
    /// GPUs the link joins: a scale-up domain (an NVSwitch board's 8, an NVLink bridge's
    /// pair, an NVL72 rack). A server may hold more ([`Gpu::server_gpus`]; the node size is
    /// [`Gpu::gpus_per_node`]).
    pub gpus_per_node: Option<u64>,
    /// The network between nodes, where a platform states it ([`crate::budget`] sets it
    /// from `catalog/platforms`); `None`: [`crate::serving::SOCKET_NETWORK_BYTES_PER_S`].
    #[serde(skip)]
    pub scale_out: Option<ScaleOut>,
}

/// A network between nodes, as the serving model needs it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScaleOut {
    /// Bandwidth per direction per GPU, GB/s.
    pub gb_per_s: f64,
    /// Latency of one transfer, s.
    pub alpha_s: f64,
}

/// Prices with their dates and sources.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
pub struct Price {
    /// Purchase price per GPU in USD.
    pub purchase_usd: Option<f64>,
    /// `street`, `msrp` or `estimate`.
    pub purchase_kind: Option<String>,
    /// When the price was read.
    pub purchase_date: Option<String>,
    /// Where the price comes from.
    pub purchase_source: Option<String>,
    /// On-demand cloud price per GPU-hour in USD.
    pub cloud_usd_per_hour: Option<f64>,
    /// When the cloud price was read.
    pub cloud_date: Option<String>,
    /// Which provider.
    pub cloud_source: Option<String>,
    /// Reserved (committed) cloud price per GPU-hour in USD, where the source gives one.
    #[serde(default)]
    pub cloud_reserved_usd_per_hour: Option<f64>,
    /// Its commitment (`1 year`, `3 year`).
    #[serde(default)]
    pub cloud_reserved_term: Option<String>,
    /// When it was read.
    #[serde(default)]
    pub cloud_reserved_date: Option<String>,
    /// Which provider.
    #[serde(default)]
    pub cloud_reserved_source: Option<String>,
}

/// One GPU of the catalog.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
pub struct Gpu {
    /// Stable id (`h100-sxm`).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Other names, including what nvidia-smi prints.
    pub aliases: Vec<String>,
    /// `nvidia`, `amd`, `intel`, `apple`.
    pub vendor: String,
    /// `datacenter`, `workstation`, `consumer`, `soc`.
    pub segment: String,
    /// Chip architecture.
    pub architecture: Option<String>,
    /// Memory as marketed, GB.
    pub memory_marketed_gb: f64,
    /// Memory type (HBM3, GDDR6X, ...).
    pub memory_type: Option<String>,
    /// Total memory the driver reports, MiB.
    pub memory_usable_mib: u64,
    /// Source of `memory_usable_mib`.
    pub memory_usable_source: Option<String>,
    /// Total memory CUDA reports (`torch.cuda.mem_get_info()[1]`), MiB, where measured.
    /// Lower than nvidia-smi's total by the driver's reservation (H100 80GB: 81089 vs 81559).
    #[serde(default)]
    pub memory_cuda_total_mib: Option<u64>,
    /// Source of `memory_cuda_total_mib`.
    #[serde(default)]
    pub memory_cuda_total_source: Option<String>,
    /// Unified-memory parts (Apple, DGX Spark, Jetson, Ryzen AI Max): fraction of the memory
    /// the GPU may use (OS cap, driver default, or measured free share; the entry says which).
    pub unified_memory_gpu_fraction: Option<f64>,
    /// Peak memory bandwidth, GB/s.
    pub memory_bandwidth_gb_per_s: f64,
    /// Dense TFLOPS per precision.
    pub dense_tflops: DenseTflops,
    /// GPU-to-GPU link.
    pub interconnect: Interconnect,
    /// PCIe generation.
    pub pcie_generation: Option<u64>,
    /// GPUs one server holds at most: the most of any catalog platform that takes this GPU
    /// (`platforms/*.json` `gpus_per_node`), filled when the catalog is assembled; `None`
    /// where no platform takes it. A node can hold more GPUs than its fast link joins: H100
    /// NVL cards are bridged in pairs in servers of 8, two RTX 4090s share a desktop over
    /// PCIe.
    #[serde(default)]
    pub server_gpus: Option<u64>,
    /// Board power, W.
    pub tdp_w: Option<f64>,
    /// Prices.
    #[serde(default)]
    pub price: Price,
    /// Datasheet or vendor page, with date. Empty in the web bundle, which loads the
    /// sources on demand (build.rs).
    #[serde(default)]
    pub source: String,
    /// Traps, derivations.
    #[serde(default)]
    pub notes: Option<String>,
}

impl Gpu {
    /// Memory nvidia-smi reports, bytes.
    #[must_use]
    pub fn smi_total_bytes(&self) -> u64 {
        self.memory_usable_mib.saturating_mul(1 << 20)
    }

    /// Memory the engine sees (CUDA's total; on unified memory the GPU's share of it),
    /// bytes. Where CUDA's total was not measured: nvidia-smi's total less
    /// [`DRIVER_RESERVE_MIB`] (measured deficits: H100 470 MiB, A100-40GB 450, RTX 4090 347).
    #[must_use]
    pub fn usable_bytes(&self) -> u64 {
        let mib = self.memory_cuda_total_mib.unwrap_or_else(|| {
            if self.vendor == "nvidia" {
                self.memory_usable_mib.saturating_sub(DRIVER_RESERVE_MIB)
            } else {
                self.memory_usable_mib
            }
        });
        let total = mib.saturating_mul(1 << 20);
        match self.unified_memory_gpu_fraction {
            // OK because: fraction is validated to (0, 1]; the product is below 2^53.
            #[allow(
                clippy::cast_precision_loss,
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss
            )]
            Some(f) if f > 0.0 && f <= 1.0 => (total as f64 * f) as u64,
            _ => total,
        }
    }

    /// GPUs per node (the tensor-parallel limit): the most a server holds
    /// ([`Gpu::server_gpus`]) or the link's domain, whichever is larger; default 8.
    #[must_use]
    pub fn gpus_per_node(&self) -> u64 {
        self.server_gpus.unwrap_or(0).max(self.link_domain()).max(1)
    }

    /// GPUs the GPU-to-GPU link ([`Gpu::interconnect`]) joins (an NVLink bridge's pair, an
    /// NVSwitch board's 8); default 8. Past it, in a larger server, GPUs talk over PCIe.
    #[must_use]
    pub fn link_domain(&self) -> u64 {
        self.interconnect.gpus_per_node.unwrap_or(8).max(1)
    }

    /// PCIe bandwidth per direction of its x16 slot, GB/s ([`pcie_x16_gb_per_s`]).
    #[must_use]
    pub fn pcie_gb_per_s(&self) -> f64 {
        pcie_x16_gb_per_s(self.pcie_generation)
    }

    /// Link bandwidth per direction in GB/s (PCIe 4.0 x16 when unknown).
    #[must_use]
    pub fn link_gb_per_s(&self) -> f64 {
        self.interconnect
            .gb_per_s_per_direction
            .filter(|x| *x > 0.0)
            .unwrap_or(32.0)
    }

    /// Whether GPUs talk over NVLink / Infinity Fabric (not PCIe).
    #[must_use]
    pub fn has_fast_link(&self) -> bool {
        !matches!(self.interconnect.kind.as_str(), "pcie" | "unified")
    }
}

/// PCIe bandwidth per direction of an x16 link, GB/s, by generation (PCI-SIG: 2.5, 5, 8, 16,
/// 32 and 64 GT/s per lane for 1.0–6.0, about 1 GB/s per lane at 8 GT/s with 128b/130b);
/// 4.0 when unknown.
#[must_use]
pub fn pcie_x16_gb_per_s(generation: Option<u64>) -> f64 {
    match generation.unwrap_or(4) {
        0 | 1 => 4.0,
        2 => 8.0,
        3 => 16.0,
        4 => 32.0,
        5 => 64.0,
        _ => 128.0,
    }
}

/// A quantized repository mapped to its base architecture.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
pub struct QuantizedRepo {
    /// Hugging Face repo id.
    pub repo: String,
    /// Format id (see [`WeightFormat::parse`]).
    pub format: String,
    /// Group size for INT4.
    #[serde(default)]
    pub group_size: Option<u64>,
}

/// A GGUF repository for llama.cpp (`llama-server -hf REPO:QUANT`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
pub struct GgufRepo {
    /// Hugging Face repo id.
    pub repo: String,
    /// The llama.cpp quantization tags it publishes (`Q4_K_M`, `Q8_0`, `F16`, ...), as far
    /// as the source shows files for them.
    pub quants: Vec<String>,
    /// Where the repo and its files are named.
    #[serde(default)]
    pub source: String,
}

/// Parameters outside the text decoder.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
pub struct NonTextParams {
    /// How many.
    pub count: u64,
    /// How they were counted.
    pub how: String,
}

/// For the test-only derived `Deserialize` that `read`'s test compares against (the
/// `#[serde(default)]` attributes here serve it too; `read` is what loads the catalog).
#[cfg(test)]
const fn verbatim_by_default() -> bool {
    true
}

/// One model checkpoint family entry of the catalog.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(serde::Deserialize))]
pub struct Model {
    /// Stable id (`llama-3.1-8b`).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Family (`Llama 3.1`).
    pub family: String,
    /// Publisher.
    pub vendor: String,
    /// Official repos with this architecture.
    pub hf_repo_ids: Vec<String>,
    /// Quantized repos.
    #[serde(default)]
    pub quantized_repos: Vec<QuantizedRepo>,
    /// GGUF repos for llama.cpp, official ones first (see [`Model::gguf_repo`]).
    #[serde(default)]
    pub gguf_repos: Vec<GgufRepo>,
    /// Dtype of the official checkpoint.
    pub stored_dtype: String,
    /// The `config.json` fields, verbatim.
    pub config: serde_json::Value,
    /// `false` when no verbatim public copy of the `config.json` was found and `config` was
    /// assembled from corroborating copies (every size field cited in `source`, which names
    /// the fields left unverified). Shown in the Catalog view and `vramfit models --json`.
    #[serde(default = "verbatim_by_default")]
    pub config_verbatim: bool,
    /// Official total parameter count.
    pub parameters_total: u64,
    /// Parameters active per token.
    pub parameters_active: u64,
    /// Where the counts come from (absent from the slimmed web bundle).
    #[serde(default)]
    pub parameters_source: String,
    /// Parameters outside the text decoder.
    #[serde(default)]
    pub parameters_non_text: Option<NonTextParams>,
    /// Native context length.
    pub context_native: u64,
    /// Where the config comes from. Empty in the web bundle, which loads the sources on
    /// demand (build.rs).
    #[serde(default)]
    pub source: String,
    /// Notes.
    #[serde(default)]
    pub notes: Option<String>,
    /// [`Model::arch`], read from `config` the first time it is asked for.
    #[serde(skip)]
    pub arch_memo: ArchMemo,
}

/// What [`Model::arch`] read from the model's config, kept after the first call: a page's
/// recompute and a sweep over the catalog read each config once, not once per plan (reading
/// one clones the config: a tenth of the web page's recompute, issue 19). Always equal to
/// another (it is a function of `config`, which the comparison covers).
#[derive(Debug, Clone, Default)]
pub struct ArchMemo(std::sync::OnceLock<Result<ModelArch, ConfigError>>);

impl PartialEq for ArchMemo {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Model {
    /// The architecture, with non-text parameters added.
    ///
    /// # Errors
    /// When the embedded config is unusable (a catalog bug; tests check every entry).
    pub fn arch(&self) -> Result<ModelArch, ConfigError> {
        self.arch_memo
            .0
            .get_or_init(|| {
                let mut a = ModelArch::from_config(&self.config)?;
                a.extra_params = self.parameters_non_text.as_ref().map_or(0, |n| n.count);
                // The entry's format is its `stored_dtype` ([`Model::native_format`]); the
                // web file leaves `quantization_config` out.
                a.config_quantization = None;
                Ok(a)
            })
            .clone()
    }

    /// The first GGUF repo that publishes quantization `quant` (`Q4_K_M`, `Q8_0`, `BF16`;
    /// case-insensitive), for `llama-server -hf REPO:QUANT`.
    #[must_use]
    pub fn gguf_repo(&self, quant: &str) -> Option<&str> {
        self.gguf_repos
            .iter()
            .find(|g| g.quants.iter().any(|q| q.eq_ignore_ascii_case(quant)))
            .map(|g| g.repo.as_str())
    }

    /// The format the official checkpoint loads in.
    #[must_use]
    pub fn native_format(&self) -> WeightFormat {
        match self.stored_dtype.as_str() {
            "fp8" => WeightFormat::Fp8Block,
            "mxfp4" => WeightFormat::Mxfp4Experts,
            "fp16" => WeightFormat::Fp16,
            // vLLM's `--dtype auto` casts fp32 checkpoints to fp16/bf16.
            _ => WeightFormat::Bf16,
        }
    }
}

/// The whole catalog.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// All GPUs.
    pub gpus: Vec<Gpu>,
    /// All models.
    pub models: Vec<Model>,
    /// Server platforms the GPUs are bought in ([`platform`]).
    pub platforms: Vec<platform::Platform>,
    /// The cost model's defaults and API examples.
    pub tco: platform::Tco,
}

/// How a name resolved to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelMatch<'a> {
    /// The catalog entry.
    pub model: &'a Model,
    /// The format implied by the name (a quantized repo), if any.
    pub format: Option<WeightFormat>,
    /// Its group size.
    pub group_size: Option<u64>,
}

fn norm(s: &str) -> String {
    s.trim().to_ascii_lowercase()
}

impl Catalog {
    /// Reads the catalog's parts in order: `part(path)` gives the parsed JSON of one file.
    fn assemble(mut part: impl FnMut(&str) -> Result<Value, String>) -> Result<Self, String> {
        let mut c = Catalog::default();
        for path in GPU_PATHS {
            c.gpus
                .append(&mut read::entries_of(path, part(path)?, read::gpu)?);
        }
        for path in MODEL_PATHS {
            c.models
                .append(&mut read::entries_of(path, part(path)?, read::model)?);
        }
        for path in PLATFORM_PATHS {
            c.platforms
                .append(&mut read::entries_of(path, part(path)?, read::platform)?);
        }
        c.tco = read::tco_of(&part(TCO_PATH)?)?;
        for g in &mut c.gpus {
            g.server_gpus = c
                .platforms
                .iter()
                .filter(|p| p.gpus.contains(&g.id))
                .map(|p| p.gpus_per_node)
                .max();
        }
        Ok(c)
    }

    /// Parses the embedded catalog.
    ///
    /// # Errors
    /// A message naming the file, the entry and the field (a catalog bug; tests check it).
    #[cfg(feature = "bundled")]
    pub fn load() -> Result<Self, String> {
        let files = GPU_FILES
            .iter()
            .chain(&MODEL_FILES)
            .chain(&PLATFORM_FILES)
            .chain(&[(TCO_PATH, TCO_FILE)]);
        Self::assemble(|path| {
            let text = files.clone().find(|f| f.0 == path).map_or("", |f| f.1);
            serde_json::from_str(text).map_err(|e| format!("catalog {path}: {e}"))
        })
    }

    /// The embedded catalog; panics never: on a (tested-against) parse error it is empty.
    #[cfg(feature = "bundled")]
    #[must_use]
    pub fn bundled() -> Self {
        Self::load().unwrap_or_default()
    }

    /// Reads the web app's catalog file ([`WEB_FILE`]), as the page fetched its bytes: one
    /// JSON object whose members are the catalog's files by path.
    ///
    /// # Errors
    /// A message naming the problem: not UTF-8, not JSON, a missing or unknown part, or a bad
    /// entry (the file, the entry and the field).
    pub fn from_web_file(bytes: &[u8]) -> Result<Self, String> {
        let v =
            crate::json_from_bytes(bytes).map_err(|e| format!("catalog file {WEB_FILE}: {e}"))?;
        let Value::Object(mut parts) = v else {
            return Err(format!(
                "catalog file {WEB_FILE}: expected an object of catalog files"
            ));
        };
        let c = Self::assemble(|path| {
            parts
                .remove(path)
                .ok_or_else(|| format!("catalog file {WEB_FILE} has no `{path}`"))
        })?;
        match parts.keys().next() {
            Some(extra) => Err(format!("catalog file {WEB_FILE}: unknown part `{extra}`")),
            None => Ok(c),
        }
    }

    /// Finds a GPU by id, name, alias or any spelling [`names`] reads (nvidia-smi, rocm-smi,
    /// engines' logs, benchmark tables); an ambiguous name gives the most common variant.
    #[must_use]
    pub fn gpu(&self, name: &str) -> Option<&Gpu> {
        self.resolve_gpu(name).ok().map(|m| m.gpu)
    }

    /// Resolves a GPU name by its structure ([`names`]): the entry, how it matched, the other
    /// entries an ambiguous name fits and the notice naming them.
    ///
    /// # Errors
    /// [`UnknownGpu`] with catalog ids ranked by token similarity when no entry fits.
    ///
    /// # Example
    #[cfg_attr(feature = "bundled", doc = "```")]
    #[cfg_attr(not(feature = "bundled"), doc = "```ignore")]
    /// let cat = vramfit_core::catalog::Catalog::bundled();
    /// let m = cat.resolve_gpu("NVIDIA H100 80GB").unwrap();
    /// assert_eq!(m.gpu.id, "h100-sxm");
    /// assert_eq!(m.others.len(), 1); // h100-pcie is 80 GB too
    /// let e = cat.resolve_gpu("H100 40GB").unwrap_err();
    /// assert!(e.suggestions[0].starts_with("h100"));
    /// ```
    pub fn resolve_gpu(&self, name: &str) -> Result<GpuMatch<'_>, UnknownGpu> {
        names::resolve(self, name)
    }

    /// Finds a model by id, Hugging Face repo id or quantized repo id (case-insensitive).
    #[must_use]
    pub fn model(&self, name: &str) -> Option<ModelMatch<'_>> {
        let n = norm(
            name.trim_start_matches("https://huggingface.co/")
                .trim_end_matches('/'),
        );
        if let Some(m) = self.models.iter().find(|m| norm(&m.id) == n) {
            return Some(ModelMatch {
                model: m,
                format: None,
                group_size: None,
            });
        }
        if let Some(m) = self
            .models
            .iter()
            .find(|m| m.hf_repo_ids.iter().any(|r| norm(r) == n))
        {
            return Some(ModelMatch {
                model: m,
                format: None,
                group_size: None,
            });
        }
        for m in &self.models {
            if let Some(q) = m.quantized_repos.iter().find(|q| norm(&q.repo) == n) {
                return Some(ModelMatch {
                    model: m,
                    format: WeightFormat::parse(&q.format),
                    group_size: q.group_size,
                });
            }
        }
        None
    }

    /// The closest ids to an unknown name by edit distance, best first (for "did you mean"
    /// on model ids; GPU names rank by tokens: [`Catalog::resolve_gpu`]).
    #[must_use]
    pub fn closest<'a>(ids: impl Iterator<Item = &'a str>, name: &str, n: usize) -> Vec<String> {
        let target = norm(name);
        let mut scored: Vec<(usize, &str)> = ids
            .map(|id| (edit_distance(&norm(id), &target), id))
            .collect();
        crate::order::sort_by_key(&mut scored, |(d, id)| (*d, id.len()));
        scored
            .into_iter()
            .take(n)
            .map(|(_, id)| id.to_string())
            .collect()
    }

    /// Models grouped by family, in catalog order.
    #[must_use]
    pub fn families(&self) -> BTreeMap<&str, Vec<&Model>> {
        let mut m: BTreeMap<&str, Vec<&Model>> = BTreeMap::new();
        for model in &self.models {
            m.entry(model.family.as_str()).or_default().push(model);
        }
        m
    }
}

/// Levenshtein distance on chars, with a substring bonus.
fn edit_distance(a: &str, b: &str) -> usize {
    if a.contains(b) || b.contains(a) {
        return a.len().abs_diff(b.len()) / 4;
    }
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The catalog's `source` texts by id, as `scripts/catalog_sources.py` writes them to
/// `catalog-sources.json` next to the web bundle (`{"gpus": {id: source}, "models": {...}}`).
/// The web file ([`WEB_FILE`], build.rs) carries the catalog without them, and the page loads
/// this file when the Catalog view opens.
#[derive(Debug, Clone, PartialEq)]
pub struct Sources(serde_json::Value);

impl Sources {
    /// Parses `catalog-sources.json`.
    ///
    /// # Errors
    ///
    /// A message naming the problem when the text is not JSON or not that shape.
    pub fn from_json(text: &[u8]) -> Result<Sources, String> {
        let v: serde_json::Value = crate::json_from_bytes(text)
            .map_err(|e| format!("catalog-sources.json is not JSON: {e}"))?;
        for kind in ["gpus", "models"] {
            if !v.get(kind).is_some_and(serde_json::Value::is_object) {
                return Err(format!("catalog-sources.json has no `{kind}` object"));
            }
        }
        Ok(Sources(v))
    }

    /// The source of GPU `id`.
    #[must_use]
    pub fn gpu(&self, id: &str) -> Option<&str> {
        self.0.get("gpus")?.get(id)?.as_str()
    }

    /// The source of model `id`.
    #[must_use]
    pub fn model(&self, id: &str) -> Option<&str> {
        self.0.get("models")?.get(id)?.as_str()
    }
}

#[cfg(all(test, feature = "bundled"))]
mod web_file_tests {
    use super::*;

    /// This build's web file, as `build.rs` wrote it.
    const WEB_TEXT: &str = include_str!(concat!(
        env!("OUT_DIR"),
        "/web/",
        env!("VRAMFIT_WEB_CATALOG")
    ));

    /// A catalog entry without what the web file leaves out: provenance text (every key that
    /// names a source, the notes, how non-text parameters were counted) and the model's
    /// config (compared through its architecture below).
    fn without_provenance(v: impl Serialize) -> Value {
        fn strip(v: &mut Value) {
            match v {
                Value::Object(m) => {
                    m.retain(|k, _| {
                        !(k.contains("source") || k == "notes" || k == "how" || k == "config")
                    });
                    m.values_mut().for_each(strip);
                }
                Value::Array(a) => a.iter_mut().for_each(strip),
                _ => {}
            }
        }
        let mut v = serde_json::to_value(v).expect("serialize");
        strip(&mut v);
        v
    }

    #[test]
    fn the_web_file_is_the_embedded_catalog_without_provenance() {
        let full = Catalog::load().expect("embedded catalog");
        let web = Catalog::from_web_file(WEB_TEXT.as_bytes()).expect("web file");
        assert!(
            WEB_FILE.starts_with("catalog-") && WEB_FILE.ends_with(".json"),
            "{WEB_FILE}"
        );
        assert!(
            full.gpus.len() > 30 && full.models.len() > 50,
            "{} gpus",
            full.gpus.len()
        );
        let ids = |c: &Catalog| {
            (
                c.gpus.iter().map(|g| g.id.clone()).collect::<Vec<_>>(),
                c.models.iter().map(|m| m.id.clone()).collect::<Vec<_>>(),
                c.platforms.iter().map(|p| p.id.clone()).collect::<Vec<_>>(),
            )
        };
        // The same entries in the same order (the order of the app's lists).
        assert_eq!(ids(&web), ids(&full));
        for (w, f) in web.gpus.iter().zip(&full.gpus) {
            assert_eq!(without_provenance(w), without_provenance(f), "{}", f.id);
            assert!(
                w.source.is_empty(),
                "{}: the web file carries the source",
                w.id
            );
        }
        for (w, f) in web.models.iter().zip(&full.models) {
            assert_eq!(without_provenance(w), without_provenance(f), "{}", f.id);
            assert_eq!(w.arch(), f.arch(), "{}", f.id);
        }
        for (w, f) in web.platforms.iter().zip(&full.platforms) {
            assert_eq!(without_provenance(w), without_provenance(f), "{}", f.id);
        }
        assert_eq!(without_provenance(&web.tco), without_provenance(&full.tco));
        // Lighter than the embedded files: the provenance is most of their text.
        let embedded: usize = GPU_FILES
            .iter()
            .chain(&MODEL_FILES)
            .chain(&PLATFORM_FILES)
            .map(|f| f.1.len())
            .sum();
        assert!(
            WEB_TEXT.len() * 10 < embedded * 8,
            "{} of {embedded} B",
            WEB_TEXT.len()
        );
    }

    #[test]
    fn a_bad_web_file_names_the_problem() {
        let err = |text: &str| Catalog::from_web_file(text.as_bytes()).expect_err(text);
        assert!(err("<html>").contains(WEB_FILE), "{}", err("<html>"));
        // Bytes that are not UTF-8 (the page hands the file's bytes over as they came).
        assert_eq!(
            Catalog::from_web_file(&[0x7b, 0x22, 0xff, 0x22, 0x7d]).expect_err("not UTF-8"),
            format!("catalog file {WEB_FILE}: not UTF-8 (from byte 2)")
        );
        assert_eq!(
            err("[]"),
            format!("catalog file {WEB_FILE}: expected an object of catalog files")
        );
        assert_eq!(
            err("{}"),
            format!("catalog file {WEB_FILE} has no `gpus/nvidia.json`")
        );
        let mut v: Value = serde_json::from_str(WEB_TEXT).expect("json");
        v["extra.json"] = Value::Array(Vec::new());
        assert_eq!(
            err(&v.to_string()),
            format!("catalog file {WEB_FILE}: unknown part `extra.json`")
        );
        v.as_object_mut().expect("object").remove("extra.json");
        v["gpus/amd.json"][0]["memory_usable_mib"] = Value::String("lots".into());
        let e = err(&v.to_string());
        assert!(e.starts_with("catalog gpus/amd.json: entry 0 (`"), "{e}");
        assert!(e.contains("memory_usable_mib"), "{e}");
    }
}
