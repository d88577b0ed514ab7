//! The model check: what the sizing core says about the model behind a message, and the
//! findings it adds ([`check_model`], [`with_model`]). Pure, and built without the `oom`
//! feature too: the web page, which holds the catalog and the sizing core, runs it on the
//! report the import worker read (the worker carries neither: its size budget).
//!
//! # The facts
//! - **Model**: the one the message names ([`OomReport::model`], looked up in the catalog as
//!   written, then as its last `owner/name`, then as its last path segment) or else the
//!   caller's ([`Hints::model`]).
//! - **Checkpoint format**: the quantized repo's format when the name is one of the
//!   catalog's `quantized_repos`; the caller's [`Hints::format`] for the caller's model;
//!   else the catalog's `stored_dtype` ([`Model::native_format`]).
//! - **Weights** = [`weights_per_gpu`] of that format at TP 1 × PP 1 (`sizing/weights.rs`:
//!   parameters × bytes per parameter of the format, vocabulary padding, quantization
//!   scales). Llama 3.1 70B in bf16: 70,553,706,496 × 2 B = 141,107,412,992 B = 131.42 GiB.
//! - **Load dtype**: a `torch_dtype=` / `dtype=` / `--dtype` in the text; else, for
//!   Transformers, fp32: `PreTrainedModel.from_pretrained` in Transformers v4 loads in
//!   `torch.float32` unless `torch_dtype` is given (v5 made `"auto"`, the checkpoint's dtype,
//!   the default: huggingface/trl#5457 documents both; huggingface/transformers#36567);
//!   vLLM and SGLang load `--dtype auto` (the checkpoint's dtype; fp32 checkpoints as
//!   16-bit). An fp32 load of a 16-bit checkpoint doubles the weights (4 B per parameter).
//! - **Capacity**: the message's `total capacity` (what the card reported), else the chosen
//!   GPU's usable memory ([`Gpu::usable_bytes`]).
//! - **Weights fit** when weights ≤ capacity (the weights alone, before any KV cache,
//!   activation or CUDA context).
//! - **Only GPU 0**: the text names one device, index 0, and no `device_map` that spreads
//!   (`auto`, `balanced`, `balanced_low_0`, `sequential`: Accelerate's strategies).
//!
//! # The fixes, each planned before it is offered
//! On a card of the message's capacity (the chosen GPU, or the catalog GPU of the nearest
//! memory, with its memory set to that capacity), with vLLM's defaults, at the length of
//! [`Hints::max_model_len`], else the message's `max_model_len`, else the model's maximum:
//! - a layout: [`fewest_gpus`] (the smallest valid TP × PP where one request of the length
//!   starts); when the length was not given and a smaller layout holds the weights but not
//!   the full length, also that layout at the longest length it holds
//!   ([`Estimate::max_model_len_fit`], rounded down to a multiple of 1,024), if it is at
//!   least [`MIN_SHORT_LEN`] tokens;
//! - the catalog's quantized checkpoints (`quantized_repos`): the first 4-bit one (AWQ before
//!   GPTQ) and the first 8-bit one (FP8 before INT8), each on the fewest GPUs, one if it
//!   can (shortened as above when the length was not given);
//! - fp32 loads: `torch_dtype=torch.bfloat16` (the checkpoint's dtype), when its weights fit.
//!
//! Every layout offered was estimated ([`estimate_bytes`]) and [`Fit::starts`].

use super::diagnose::GENERIC_HEADLINE;
use super::{Cause, Finding, Hints, Loader, OomReport, OomSource};
use crate::catalog::{Gpu, Model};
use crate::dtype::WeightFormat;
use crate::layout::{ep_problem, fewest_gpus, valid_layouts};
use crate::sizing::{estimate_bytes, weights_per_gpu, Estimate, Fit, Scenario};
use crate::units::{fmt_bytes_torch as fmt_bytes, fmt_count};
use serde::Serialize;

/// Shortest `--max-model-len` offered as a fix.
pub const MIN_SHORT_LEN: u64 = 4096;

/// Where a fact of the model check came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The pasted message.
    Message,
    /// The caller's choice ([`Hints`]).
    Chosen,
}

/// One planned fix: a layout, format and length at which the model starts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckedFix {
    /// The format (the checkpoint's, or a quantized checkpoint's).
    pub format: WeightFormat,
    /// The quantized checkpoint's repo, when the fix is one.
    pub repo: Option<String>,
    /// `--tensor-parallel-size`.
    pub tensor_parallel_size: u64,
    /// `--pipeline-parallel-size`.
    pub pipeline_parallel_size: u64,
    /// GPUs (TP × PP).
    pub gpus: u64,
    /// `--max-model-len` it was planned at.
    pub max_model_len: u64,
    /// Whether the length was lowered from the full one to start.
    pub shortened: bool,
    /// Weight bytes on each GPU.
    pub weights_per_gpu_bytes: u64,
    /// KV-pool bytes on each GPU.
    pub kv_pool_bytes: u64,
    /// The fix in words (with the flags).
    pub text: String,
}

/// What the sizing core says about the model behind a message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelCheck {
    /// Catalog id.
    pub model_id: String,
    /// Display name.
    pub model_name: String,
    /// Whether the message named it or the caller chose it.
    pub model_from: Origin,
    /// Total parameters (catalog).
    pub parameters: u64,
    /// The checkpoint's format.
    pub format: WeightFormat,
    /// Weight bytes in that format, on one GPU.
    pub weights_bytes: u64,
    /// The format the text shows it was loaded in (fp32 for Transformers without a dtype).
    pub loaded_format: WeightFormat,
    /// Weight bytes as loaded.
    pub loaded_bytes: u64,
    /// The card's memory.
    pub capacity_bytes: Option<u64>,
    /// Where the capacity came from.
    pub capacity_from: Option<Origin>,
    /// Whether the weights at the checkpoint's format fit in the capacity.
    pub weights_fit: Option<bool>,
    /// Whether the weights as loaded fit.
    pub loaded_fit: Option<bool>,
    /// The text names only GPU 0 and no spreading `device_map`.
    pub only_gpu0: bool,
    /// GPUs the caller meant to use.
    pub gpus_chosen: Option<u64>,
    /// Length the fixes were planned at (before shortening).
    pub max_model_len: u64,
    /// Planned fixes, each of which starts.
    pub fixes: Vec<CheckedFix>,
}

/// The catalog model behind the message: the one it names, else the caller's.
fn resolve<'a>(
    r: &OomReport,
    h: &Hints<'a>,
) -> Option<(&'a Model, Option<WeightFormat>, Option<u64>, Origin)> {
    if let (Some(name), Some(cat)) = (r.model.as_deref(), h.catalog) {
        let name = name.trim_start_matches("https://huggingface.co/");
        let segs: Vec<&str> = name.split('/').filter(|x| !x.is_empty()).collect();
        let tail2 = segs.len().checked_sub(2).map(|i| segs[i..].join("/"));
        let last = segs.last().map(|x| (*x).to_string());
        for cand in [Some(name.to_string()), tail2, last].into_iter().flatten() {
            if let Some(m) = cat.model(&cand) {
                return Some((m.model, m.format, m.group_size, Origin::Message));
            }
        }
    }
    h.model.map(|m| (m, h.format, None, Origin::Chosen))
}

/// The format the text says the weights were loaded in.
fn load_format(r: &OomReport, checkpoint: WeightFormat) -> WeightFormat {
    if checkpoint.is_quantized() {
        return checkpoint;
    }
    if let Some(d) = r.dtype.as_deref() {
        let d = d.trim_start_matches("torch.");
        return match WeightFormat::parse(d) {
            Some(f) if !d.eq_ignore_ascii_case("auto") && !f.is_quantized() => f,
            _ => checkpoint,
        };
    }
    if r.loader == Some(Loader::Transformers) {
        WeightFormat::Fp32
    } else {
        checkpoint
    }
}

/// The card the fixes are planned on: the chosen GPU or the catalog's nearest in memory,
/// with the message's capacity as its memory.
fn card(cap: u64, from: Origin, h: &Hints) -> Option<Gpu> {
    let base = h.gpu.cloned().or_else(|| {
        h.catalog?
            .gpus
            .iter()
            .min_by_key(|g| g.usable_bytes().abs_diff(cap))
            .cloned()
    })?;
    if from == Origin::Chosen {
        return Some(base);
    }
    let mut g = base;
    let mib = cap >> 20;
    g.memory_cuda_total_mib = Some(mib);
    g.memory_usable_mib = mib;
    g.unified_memory_gpu_fraction = None;
    Some(g)
}

/// Rounds a context length down to a multiple of 1,024.
fn round_len(n: u64) -> u64 {
    n / 1024 * 1024
}

fn count_word(n: u64) -> String {
    const WORDS: [&str; 9] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
    ];
    usize::try_from(n)
        .ok()
        .and_then(|i| WORDS.get(i))
        .map_or_else(|| fmt_count(n), |w| (*w).to_string())
}

fn format_label(f: WeightFormat) -> &'static str {
    match f {
        WeightFormat::Int4Awq => "AWQ",
        WeightFormat::Int4Gptq => "GPTQ",
        WeightFormat::Fp8 | WeightFormat::Fp8Block | WeightFormat::Fp8Ffn => "FP8",
        WeightFormat::Int8W8a8 => "INT8 W8A8",
        WeightFormat::Nvfp4 => "NVFP4",
        WeightFormat::Mxfp4 | WeightFormat::Mxfp4Experts => "MXFP4",
        other => other.id(),
    }
}

/// The planning context: the card, the base scenario and whether the length is the caller's.
struct Planner<'a> {
    gpu: &'a Gpu,
    base: Scenario,
    length_given: bool,
    /// The card in words: one, and several.
    card: (String, String),
}

impl Planner<'_> {
    fn with(
        &self,
        format: WeightFormat,
        group: u64,
        tp: u64,
        pp: u64,
        len: Option<u64>,
    ) -> Scenario {
        let mut s = self.base.clone();
        s.format = format;
        s.group_size = group;
        s.tensor_parallel_size = tp;
        s.pipeline_parallel_size = pp;
        if len.is_some() {
            s.flags.max_model_len = len;
        }
        s
    }

    fn fix(&self, s: &Scenario, e: &Estimate, repo: Option<&str>, shortened: bool) -> CheckedFix {
        let (tp, pp) = (s.tensor_parallel_size, s.pipeline_parallel_size);
        let gpus = tp * pp;
        let mut flags = Vec::new();
        if tp > 1 {
            flags.push(format!("--tensor-parallel-size {tp}"));
        }
        if pp > 1 {
            flags.push(format!("--pipeline-parallel-size {pp}"));
        }
        if shortened || self.length_given {
            flags.push(format!("--max-model-len {}", s.model_len()));
        }
        let on = if gpus == 1 {
            format!("on one {}", self.card.0)
        } else {
            format!("on {gpus} {}", self.card.1)
        };
        let flags = if flags.is_empty() {
            String::new()
        } else {
            format!("`{}` ", flags.join(" "))
        };
        let what = match repo {
            Some(r) => format!(
                "The {} checkpoint `{r}` ({} of weights), ",
                format_label(s.format),
                fmt_bytes(weights_per_gpu(&self.with(
                    s.format,
                    s.group_size,
                    1,
                    1,
                    None
                )))
            ),
            None => String::new(),
        };
        let each = if gpus > 1 {
            format!(": {} of weights on each", fmt_bytes(e.weights_bytes))
        } else {
            String::new()
        };
        let len = if shortened {
            format!(
                "; the full {} tokens do not fit there",
                fmt_count(self.base.model_len())
            )
        } else {
            format!(", {}-token requests", fmt_count(s.model_len()))
        };
        let text = format!(
            "{what}{flags}(vLLM, {}) {on}{each}{len} (planned: it starts).",
            s.format.id()
        );
        CheckedFix {
            format: s.format,
            repo: repo.map(str::to_string),
            tensor_parallel_size: tp,
            pipeline_parallel_size: pp,
            gpus,
            max_model_len: s.model_len(),
            shortened,
            weights_per_gpu_bytes: e.weights_bytes,
            kv_pool_bytes: e.kv_pool_bytes,
            text,
        }
    }

    /// The fewest GPUs at the full length, and a smaller layout at a shorter length.
    fn layouts(&self, format: WeightFormat, group: u64, repo: Option<&str>) -> Vec<CheckedFix> {
        let total = self.gpu.usable_bytes();
        let s = self.with(format, group, 1, 1, None);
        let full = fewest_gpus(&s, self.gpu).map(|p| {
            let sc = self.with(
                format,
                group,
                p.tensor_parallel_size,
                p.pipeline_parallel_size,
                None,
            );
            self.fix(&sc, &p.estimate, repo, false)
        });
        let mut out = Vec::new();
        if !self.length_given {
            for (tp, pp) in valid_layouts(&s.model, self.gpu.gpus_per_node()) {
                if full.as_ref().is_some_and(|f| tp * pp >= f.gpus) {
                    break;
                }
                if ep_problem(&s.model, tp, s.flags.expert_parallel).is_some() {
                    continue;
                }
                let e = estimate_bytes(&self.with(format, group, tp, pp, None), total);
                if e.fit != Fit::KvTooSmall {
                    continue;
                }
                let len = round_len(e.max_model_len_fit);
                if len < MIN_SHORT_LEN {
                    continue;
                }
                let sc = self.with(format, group, tp, pp, Some(len));
                let e = estimate_bytes(&sc, total);
                if e.fit.starts() {
                    out.push(self.fix(&sc, &e, repo, true));
                    break;
                }
            }
        }
        out.extend(full);
        out
    }
}

impl<'a> Hints<'a> {
    /// What an app's [`Inputs`](crate::inputs::Inputs) know: its catalog model (and the
    /// format its name or the format field implies), its GPU, its GPU count when it set a
    /// layout (TP × PP), its `--max-model-len`.
    #[must_use]
    pub fn from_inputs(cat: &'a crate::catalog::Catalog, inputs: &crate::inputs::Inputs) -> Self {
        let m = cat.model(&inputs.model);
        let layout =
            inputs.tensor_parallel_size.is_some() || inputs.pipeline_parallel_size.is_some();
        Hints {
            model_parameters: m.as_ref().map(|m| m.model.parameters_total),
            catalog: Some(cat),
            model: m.as_ref().map(|m| m.model),
            format: inputs.format.or_else(|| m.as_ref().and_then(|m| m.format)),
            gpu: cat.gpu(&inputs.gpu),
            gpu_count: layout.then(|| {
                inputs.tensor_parallel_size.unwrap_or(1).max(1)
                    * inputs.pipeline_parallel_size.unwrap_or(1).max(1)
            }),
            max_model_len: inputs.flags.max_model_len,
        }
    }
}

/// What the sizing core says about the model behind `report`: its weights against the
/// card, and planned fixes. `None` when no model is known (neither named in a message the
/// catalog knows nor given in [`Hints::model`]) or its config does not read.
#[must_use]
pub fn check_model(report: &OomReport, hints: &Hints) -> Option<ModelCheck> {
    let (model, implied, group, model_from) = resolve(report, hints)?;
    let arch = model.arch().ok()?;
    let format = implied.unwrap_or_else(|| model.native_format());
    let group = group.unwrap_or(128);
    let mut base = Scenario::new(arch);
    base.group_size = group;
    let length = hints.max_model_len.or(report.max_model_len);
    base.flags.max_model_len = length;
    let weights_at = |f: WeightFormat| {
        let mut s = base.clone();
        s.format = f;
        weights_per_gpu(&s)
    };
    let weights = weights_at(format);
    let loaded_format = load_format(report, format);
    let loaded = weights_at(loaded_format);
    let (cap, cap_from) = match (report.total_capacity_bytes, hints.gpu) {
        (Some(c), _) => (Some(c), Some(Origin::Message)),
        (None, Some(g)) => (Some(g.usable_bytes()), Some(Origin::Chosen)),
        (None, None) => (None, None),
    };
    let only_gpu0 = match report.gpu_indices[..] {
        [0] => true,
        [] => report.gpu_index == Some(0),
        _ => false,
    } && !report.device_map.as_deref().is_some_and(|d| {
        ["auto", "balanced", "balanced_low_0", "sequential"]
            .contains(&d.to_ascii_lowercase().as_str())
    });
    let mut fixes = Vec::new();
    if let (Some(c), Some(from)) = (cap, cap_from) {
        if let Some(gpu) = card(c, from, hints) {
            let card = match from {
                Origin::Chosen => (gpu.name.clone(), format!("× {}", gpu.name)),
                Origin::Message => (
                    format!("GPU of {}", fmt_bytes(c)),
                    format!("GPUs of {}", fmt_bytes(c)),
                ),
            };
            let p = Planner {
                gpu: &gpu,
                base: {
                    let mut b = base.clone();
                    b.format = format;
                    b
                },
                length_given: length.is_some(),
                card,
            };
            fixes = p.layouts(format, group, None);
            let most = fixes.iter().map(|f| f.gpus).max().unwrap_or(u64::MAX);
            for q in checkpoints(model, format) {
                let qf = WeightFormat::parse(&q.format).unwrap_or(format);
                let mut l = p.layouts(qf, q.group_size.unwrap_or(128), Some(&q.repo));
                l.retain(|f| f.gpus <= most);
                fixes.extend(l.into_iter().take(1));
            }
        }
    }
    Some(ModelCheck {
        model_id: model.id.clone(),
        model_name: model.name.clone(),
        model_from,
        parameters: model.parameters_total,
        format,
        weights_bytes: weights,
        loaded_format,
        loaded_bytes: loaded,
        capacity_bytes: cap,
        capacity_from: cap_from,
        weights_fit: cap.map(|c| weights <= c),
        loaded_fit: cap.map(|c| loaded <= c),
        only_gpu0,
        gpus_chosen: hints.gpu_count,
        max_model_len: base.model_len(),
        fixes,
    })
}

/// The catalog's quantized checkpoints offered: the first 4-bit (AWQ before GPTQ) and the
/// first 8-bit (FP8 before INT8), unless the checkpoint is already in that class.
fn checkpoints(m: &Model, current: WeightFormat) -> Vec<&crate::catalog::QuantizedRepo> {
    let pick = |wanted: &[WeightFormat]| {
        wanted.iter().find_map(|w| {
            m.quantized_repos
                .iter()
                .find(|q| WeightFormat::parse(&q.format) == Some(*w))
        })
    };
    let four = [WeightFormat::Int4Awq, WeightFormat::Int4Gptq];
    let eight = [
        WeightFormat::Fp8,
        WeightFormat::Fp8Block,
        WeightFormat::Int8W8a8,
    ];
    let mut out = Vec::new();
    if !four.contains(&current) {
        out.extend(pick(&four));
    }
    if !eight.contains(&current) && !four.contains(&current) {
        out.extend(pick(&eight));
    }
    out
}

fn fix_texts(c: &ModelCheck, max_gpus: Option<u64>) -> Vec<String> {
    c.fixes
        .iter()
        .filter(|f| max_gpus.is_none_or(|m| f.gpus <= m))
        .map(|f| f.text.clone())
        .collect()
}

fn capacity_words(c: &ModelCheck) -> String {
    match (c.capacity_bytes, c.capacity_from) {
        (Some(b), Some(Origin::Message)) => {
            format!("the GPU's {} (from the message)", fmt_bytes(b))
        }
        (Some(b), _) => format!("the chosen GPU's {}", fmt_bytes(b)),
        _ => "the GPU".to_string(),
    }
}

fn weights_words(c: &ModelCheck) -> String {
    format!(
        "{} ({} parameters) takes {} of weights in {}, the checkpoint's format{}",
        c.model_name,
        fmt_count(c.parameters),
        fmt_bytes(c.weights_bytes),
        c.format.id(),
        if c.model_from == Origin::Message {
            ", as the message names it"
        } else {
            ""
        }
    )
}

fn fp32_finding(c: &ModelCheck) -> Finding {
    let fit = match c.loaded_fit.zip(c.weights_fit) {
        Some((false, true)) => format!(
            "; {} holds the {} of {} but not the {} of fp32",
            capacity_words(c),
            fmt_bytes(c.weights_bytes),
            c.format.id(),
            fmt_bytes(c.loaded_bytes)
        ),
        _ => String::new(),
    };
    let mut fixes = vec![format!(
        "Load with `torch_dtype=torch.{}` (`dtype=` in recent Transformers; `torch_dtype=\"auto\"` \
         keeps the checkpoint's dtype): {} of weights instead of {}.",
        if c.format == WeightFormat::Fp16 { "float16" } else { "bfloat16" },
        fmt_bytes(c.weights_bytes),
        fmt_bytes(c.loaded_bytes)
    )];
    if c.weights_fit == Some(false) {
        fixes.push(
            "That alone is not enough here: see the fixes for the weights above.".to_string(),
        );
    }
    Finding {
        cause: Cause::Fp32Suspected,
        headline: format!(
            "Loaded in fp32, {} needs {}: twice its {} in {}",
            c.model_name,
            fmt_bytes(c.loaded_bytes),
            fmt_bytes(c.weights_bytes),
            c.format.id()
        ),
        detail: format!(
            "The text shows a Transformers load{} and no `torch_dtype`: Transformers v4 loads \
             weights in fp32 (4 bytes per parameter) unless told otherwise{fit}.",
            if c.model_from == Origin::Message {
                " of the model it names"
            } else {
                ""
            }
        ),
        fixes,
    }
}

fn weights_finding(c: &ModelCheck) -> Finding {
    let mut fixes = fix_texts(c, None);
    if fixes.is_empty() {
        fixes.push(
            "No layout of up to 64 × 16 of these GPUs starts it: use GPUs with more memory."
                .to_string(),
        );
    }
    fixes.push(
        "Transformers/Accelerate: `device_map=\"auto\"` spreads the layers over the GPUs \
         (as many as the layouts above)."
            .to_string(),
    );
    Finding {
        cause: Cause::WeightsDoNotFit,
        headline: format!(
            "{} needs {} in {}: the weights alone do not fit in {}",
            c.model_name,
            fmt_bytes(c.weights_bytes),
            c.format.id(),
            fmt_bytes(c.capacity_bytes.unwrap_or(0))
        ),
        detail: format!(
            "{}; {} is smaller, before any KV cache, activation or CUDA context. No memory \
             setting makes them fit: spread them over GPUs or load a smaller checkpoint.",
            weights_words(c),
            capacity_words(c)
        ),
        fixes,
    }
}

fn unknown_card_finding(c: &ModelCheck) -> Finding {
    Finding {
        cause: Cause::GenuinelyOutOfMemory,
        headline: format!(
            "{} needs {} of weights in {}",
            c.model_name,
            fmt_bytes(c.weights_bytes),
            c.format.id()
        ),
        detail: format!(
            "{}. The message does not say how much memory the GPU has.",
            weights_words(c)
        ),
        fixes: vec![
            "Name the GPU (`--gpu`, or choose it in the app) to check the weights against it \
             and get a layout that starts."
                .to_string(),
        ],
    }
}

fn single_gpu_finding(c: &ModelCheck, n: u64) -> Finding {
    let mut fixes = fix_texts(c, Some(n));
    if fixes.is_empty() {
        fixes.push(format!(
            "Even {} GPUs like this one do not hold it: see the fixes for the weights.",
            count_word(n)
        ));
    }
    fixes.push("Check that `CUDA_VISIBLE_DEVICES` lists all GPUs (`nvidia-smi -L`).".to_string());
    fixes.push(
        "Transformers/Accelerate: load with `device_map=\"auto\"` to spread the layers."
            .to_string(),
    );
    Finding {
        cause: Cause::SingleGpuVisible,
        headline: format!("Everything landed on GPU 0 of the {} chosen", count_word(n)),
        detail: format!(
            "The message names only GPU 0 and no `device_map` that spreads the model; {} needs \
             {} of weights, more than one GPU's {}.",
            c.model_name,
            fmt_bytes(c.loaded_bytes.max(c.weights_bytes)),
            fmt_bytes(c.capacity_bytes.unwrap_or(0))
        ),
        fixes,
    }
}

fn kv_finding(c: &ModelCheck, r: &OomReport) -> Finding {
    let cap = c.capacity_bytes.unwrap_or(0);
    let tried = r.tried_to_allocate_bytes.map_or_else(String::new, |t| {
        format!(" The failed request of {} came on top.", fmt_bytes(t))
    });
    let mut fixes = fix_texts(c, None);
    fixes.push(
        "`--kv-cache-dtype fp8` halves the KV cache; smaller batches or `--max-num-seqs` shrink \
         the activations."
            .to_string(),
    );
    Finding {
        cause: Cause::KvAndActivations,
        headline: format!(
            "The weights fit ({} of {}); the KV cache and activations did not",
            fmt_bytes(c.loaded_bytes),
            fmt_bytes(cap)
        ),
        detail: format!(
            "{}, leaving {} of {} for the KV cache, activations and the CUDA context at \
             {}-token requests.{tried}",
            weights_words(c),
            fmt_bytes(cap.saturating_sub(c.loaded_bytes)),
            capacity_words(c),
            fmt_count(c.max_model_len)
        ),
        fixes,
    }
}

/// `findings` with the model check's findings ([`check_model`]): the weights against the
/// card ([`Cause::WeightsDoNotFit`]), an fp32 load ([`Cause::Fp32Suspected`]), everything on
/// GPU 0 of several ([`Cause::SingleGpuVisible`]), or, when the weights fit and the message
/// has no budget to judge, the KV cache and activations ([`Cause::KvAndActivations`]). They
/// replace the generic finding and a budget rule's finding of the same cause. vLLM's own
/// messages (which come after the weights loaded, at a layout the message does not show)
/// are left as they are.
#[must_use]
pub fn with_model(report: &OomReport, hints: &Hints, findings: Vec<Finding>) -> Vec<Finding> {
    if !matches!(
        report.source,
        OomSource::PyTorchCuda | OomSource::PyTorchHip | OomSource::CudaDriver | OomSource::Cublas
    ) {
        return findings;
    }
    let Some(c) = check_model(report, hints) else {
        return findings;
    };
    let fp32 = c.loaded_format == WeightFormat::Fp32 && c.format != WeightFormat::Fp32;
    let mut lead = Vec::new();
    if let Some(n) = c.gpus_chosen.filter(|&n| n >= 2) {
        if c.only_gpu0 && c.loaded_fit == Some(false) {
            lead.push(single_gpu_finding(&c, n));
        }
    }
    match (c.weights_fit, c.loaded_fit) {
        (Some(false), _) => {
            lead.push(weights_finding(&c));
            if fp32 {
                lead.push(fp32_finding(&c));
            }
        }
        (Some(true), Some(false)) => lead.push(fp32_finding(&c)),
        (Some(true), _) => {
            if findings.iter().all(|f| f.headline == GENERIC_HEADLINE) {
                lead.push(kv_finding(&c, report));
            }
        }
        (None, _) => {
            if fp32 {
                lead.push(fp32_finding(&c));
            }
            lead.push(unknown_card_finding(&c));
        }
    }
    if lead.is_empty() {
        return findings;
    }
    let ours: Vec<Cause> = lead.iter().map(|f| f.cause).collect();
    lead.extend(
        findings
            .into_iter()
            .filter(|f| f.headline != GENERIC_HEADLINE && !ours.contains(&f.cause)),
    );
    lead
}
