//! What a plan knows of a model beyond its config's shapes ([`ModelFiles`]: the
//! checkpoint's bytes from its safetensors headers or index, the parts its
//! `quantization_config` keeps in 16 bits), and where the weights figure came from
//! ([`Provenance`]: headers, index or config, with the assumptions).

use super::{plan_arch_with, same_shape, Inputs, Plan};
use crate::catalog::{Catalog, Gpu};
use crate::dtype::WeightFormat;
use crate::model::ModelArch;
use crate::sizing::Scenario;
use crate::units::real as f;
use serde::Serialize;

/// Where one figure of the plan came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Provenance {
    /// The figure (`"weights"`).
    pub quantity: &'static str,
    /// `"headers"`, `"index"` or `"config"`.
    pub source: &'static str,
    /// The numbers and the assumptions, in words.
    pub detail: String,
}

/// What a plan knows of the model beyond its config's shapes: the checkpoint's bytes, and
/// the parts its `quantization_config` keeps in 16 bits.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelFiles {
    /// The checkpoint's bytes (headers or index).
    pub checkpoint: Option<crate::sizing::HeaderWeights>,
    /// Parts kept in 16 bits ([`crate::sizing::quant_config_ignores`]).
    pub kept_16bit: crate::sizing::Kept16,
    /// The speculative draft model, resolved from the catalog ([`draft_arch`]).
    pub draft: Option<Box<crate::model::ModelArch>>,
}

/// The draft model of `--speculative-config`'s `draft_model` method, from the catalog (by
/// id, alias or repo id); `None` for other methods or a draft the catalog lacks (the plan
/// then says its memory is not counted).
#[must_use]
pub fn draft_arch(
    cat: &crate::catalog::Catalog,
    inputs: &crate::inputs::Inputs,
) -> Option<Box<crate::model::ModelArch>> {
    if inputs.flags.features.spec.method != Some(crate::inputs::SpecMethod::DraftModel) {
        return None;
    }
    let m = cat.model(inputs.spec_model.trim())?;
    m.model.arch().ok().map(Box::new)
}

impl ModelFiles {
    /// Gives `s` what the files say about its format: the checkpoint's bytes when `s` is in
    /// the checkpoint's format, the 16-bit modules when in the `native` one (another format
    /// is another checkpoint). Every scenario of a plan goes through it, the fixes and the
    /// format rows included, so they size the weights as the plan does.
    pub fn apply(&self, s: &mut Scenario, native: WeightFormat) {
        if s.format == native {
            s.kept_16bit = self.kept_16bit;
        }
        s.checkpoint = self.checkpoint.clone().filter(|c| c.format == s.format);
        s.draft_model.clone_from(&self.draft);
    }
}

/// What a catalog model's files say: no headers, the modules its `quantization_config`
/// keeps in 16 bits.
#[must_use]
pub fn catalog_files(model: &crate::catalog::Model) -> ModelFiles {
    ModelFiles {
        checkpoint: None,
        kept_16bit: crate::sizing::quant_config_ignores(&model.config),
        draft: None,
    }
}

/// The provenance of the weights of `s` (its estimate: `weights`).
pub(super) fn weights_provenance(s: &Scenario, weights: u64) -> Provenance {
    use crate::sizing::{layout_padding_per_gpu, HeaderSource};
    let tp = s.tensor_parallel_size.max(1);
    let arch = s
        .gpu_arch
        .map_or_else(|| "no GPU architecture".to_string(), |a| format!("{a:?}"));
    let pad = layout_padding_per_gpu(s);
    let pad_text = if pad > 0 {
        format!(
            "; + {pad} B per GPU of MXFP4 expert padding for the {:?} kernel on {arch} over the checkpoint's shapes",
            crate::sizing::mxfp4_backend(s.gpu_arch)
        )
    } else {
        String::new()
    };
    match s.checkpoint.as_ref().filter(|c| c.format == s.format && !c.shards.is_empty()) {
        Some(c) if c.source == HeaderSource::Headers => {
            let sh = &c.shards;
            let unknown = sh.unknown_example.as_ref().map_or_else(String::new, |e| {
                format!(
                    "; {} B in tensors no rule knows (e.g. `{e}`) split 1/TP (assumed)",
                    sh.unknown
                )
            });
            Provenance {
                quantity: "weights",
                source: "headers",
                detail: format!(
                    "{} B in the safetensors headers (embedding {} B, LM head {} B, layers sharded {} B, K/V {} B, replicated {} B, experts {} B, multimodal tower {} B), {weights} B per GPU at TP {tp} split by tensor name{pad_text}{unknown}",
                    sh.total(),
                    sh.embed,
                    sh.lm_head,
                    sh.layer_sharded,
                    sh.layer_kv,
                    sh.layer_replicated,
                    sh.layer_expert,
                    sh.tower,
                ),
            }
        }
        Some(c) => Provenance {
            quantity: "weights",
            source: "index",
            detail: format!(
                "{} B total_size in model.safetensors.index.json, split 1/TP over TP {tp} (assumed: the index does not size each tensor){pad_text}",
                c.shards.total()
            ),
        },
        None => Provenance {
            quantity: "weights",
            source: "config",
            detail: format!(
                "counted from config.json's shapes in {} (bytes per parameter: dtype.rs; layout on {arch}: sizing/quant_layout.rs){pad_text}",
                s.format
            ),
        },
    }
}

/// The checkpoint's bytes from a report, for the format it is stored in; `None` when the
/// files' bytes are not what the engine holds: an fp32 checkpoint (loaded in 16 bits),
/// bitsandbytes (quantized at load), or a report without per-tensor classes.
#[must_use]
pub fn header_weights(
    r: &crate::safetensors::Report,
    format: WeightFormat,
) -> Option<crate::sizing::HeaderWeights> {
    let usable = !r.fp32_checkpoint
        && r.quantization != crate::safetensors::Quantization::BitsAndBytes
        && !r.shards.is_empty();
    usable.then(|| crate::sizing::HeaderWeights {
        format,
        shards: r.shards.clone(),
        source: crate::sizing::HeaderSource::Headers,
    })
}

/// Sizes a model the user brought (its `config.json`, and the safetensors headers if
/// given): the format comes from the headers, their warnings are added, and the catalog
/// entry with the same architecture (if any) is named for comparison.
#[must_use]
pub fn custom_plan(
    cat: &Catalog,
    arch: ModelArch,
    name: &str,
    report: Option<&crate::safetensors::Report>,
    gpu: &Gpu,
    inputs: &Inputs,
) -> Plan {
    // Without headers, the format the config's `quantization_config` names (16-bit when
    // it names none vramfit reads: `model/quant.rs`, with an assumption).
    let from_config = arch.config_quantization;
    // With headers, the tensors say the format: the config's unread method is no assumption.
    let mut arch = arch;
    if report.is_some() {
        arch.assumptions
            .retain(|a| a.field != "quantization_config");
    }
    let native = report.map_or_else(
        || from_config.map_or(WeightFormat::Bf16, |q| q.format),
        format_of_report,
    );
    let group = from_config
        .filter(|_| report.is_none())
        .map(|q| q.group_size);
    // The entry of the same shapes, and of the same context and towers where one is (a
    // base model's 131072 positions are not its Instruct entry's 32768); among entries that
    // agree on all of it, the first in the catalog (the Qwen2 entries are listed after the
    // Qwen2.5 ones of the same shapes, so these keep naming the newer release).
    let same: Vec<(&str, ModelArch)> = cat
        .models
        .iter()
        .filter_map(|m| {
            Some((
                m.id.as_str(),
                m.arch().ok().filter(|a| same_shape(a, &arch))?,
            ))
        })
        .collect();
    let twin = same
        .iter()
        .find(|(_, a)| {
            a.max_position_embeddings == arch.max_position_embeddings
                && a.vision.is_some() == arch.vision.is_some()
        })
        .or(same.first())
        .map(|(id, _)| (*id).to_string());
    let files = ModelFiles {
        checkpoint: report.and_then(|r| header_weights(r, native)),
        kept_16bit: crate::sizing::Kept16::default(),
        draft: draft_arch(cat, inputs),
    };
    let mut p = plan_arch_with(
        arch,
        format!("custom:{name}"),
        name.to_string(),
        (native, None, group),
        &files,
        gpu,
        inputs,
    );
    if let Some(r) = report {
        p.warnings.extend(r.warnings.iter().cloned());
        let computed = p.parameters;
        // An MTP module's parameters are in the files, not in the model vLLM loads.
        let held = r
            .logical_parameter_count
            .saturating_sub(r.shards.mtp_parameters);
        if held > 0 {
            let diff = (f(held) - f(computed)).abs() / f(computed.max(1));
            if diff > 0.02 {
                let besides = if r.shards.mtp_parameters > 0 {
                    " (besides an MTP module's)"
                } else {
                    ""
                };
                p.warnings.push(format!(
                    "the headers hold {held} parameters{besides} but config.json describes {computed}: the files may belong to different models"
                ));
            }
        }
    }
    if let Some(id) = twin {
        p.warnings.push(format!(
            "same architecture as the catalog's `{id}`: compare with it"
        ));
        p.catalog_twin = Some(id);
    }
    p
}

/// The model's numbers (config, class default, assumption), then the weights' (headers,
/// index or config shapes): the one list the UI and `--json` show.
pub(super) fn provenance(
    model: &[crate::model::Provenance],
    weights: &Provenance,
) -> Vec<crate::model::Provenance> {
    let mut v = model.to_vec();
    v.push(crate::model::Provenance {
        quantity: weights.quantity.to_string(),
        source: weights.source.to_string(),
        detail: weights.detail.clone(),
    });
    v
}

/// The weight format a checkpoint's headers imply (see [`crate::safetensors::Quantization`]).
#[must_use]
pub fn format_of_report(r: &crate::safetensors::Report) -> WeightFormat {
    use crate::safetensors::Quantization as Q;
    match r.quantization {
        Q::Gptq | Q::CompressedTensorsInt => WeightFormat::Int4Gptq,
        Q::Awq | Q::BitsAndBytes => WeightFormat::Int4Awq,
        Q::Fp8 { block_scaled: true } => WeightFormat::Fp8Block,
        Q::Fp8 {
            block_scaled: false,
        } => WeightFormat::Fp8,
        Q::Mxfp4 => WeightFormat::Mxfp4Experts,
        Q::Nvfp4 => WeightFormat::Nvfp4,
        Q::None => {
            if r.bytes_per_dtype.get("F16").copied().unwrap_or(0)
                > r.bytes_per_dtype.get("BF16").copied().unwrap_or(0)
            {
                WeightFormat::Fp16
            } else {
                WeightFormat::Bf16
            }
        }
    }
}
