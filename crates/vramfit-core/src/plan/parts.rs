//! The pieces of a plan's answer: speed and cost when it starts ([`Running`]), what to
//! launch ([`Launch`], [`Checkpoint`]), and the verdict and outcome texts that say which
//! layout was checked and what it would take.
//!
//! # Checkpoints ([`checkpoint`])
//! The launch commands load the checkpoint of the planned format: the model's own repo for
//! its native dtype (and the other 16-bit dtypes, which vLLM's `--dtype` casts to); else the
//! catalog's `quantized_repos` entry of that format (an FP8 variant for any FP8 format);
//! else, for FP8 on vLLM or SGLang, the 16-bit repo quantized while loading (vLLM
//! `--quantization fp8`: "dynamic" FP8, `vllm/model_executor/layers/quantization/fp8.py`
//! `Fp8Config` with `is_checkpoint_fp8_serialized` false; SGLang the same flag). AWQ, GPTQ,
//! INT8 W8A8, NVFP4 and MXFP4 need a pre-quantized checkpoint (vLLM reads
//! `quantization_config` from its `config.json`); when the catalog knows none, the repo is a
//! placeholder the page labels as such, never the 16-bit id.

use super::{limit_of, operating_point, speed_band, Band, Fix, Repair, Settled};
use super::{Inputs, TTFT_REL_ERR};
use crate::catalog::{Gpu, Model};
use crate::dtype::{KvDtype, WeightFormat};
use crate::engine::Engine;
use crate::serving::Serving;
use crate::sizing::{Fit, Refusal};
use crate::throughput::Speed;
use crate::units::real as f;
use serde::Serialize;

/// Speed and cost of a plan that starts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Running {
    /// Decode/prefill speed of one replica at its share of the workload (the serving
    /// model's operating point: [`operating_point`]).
    pub speed: Speed,
    /// The operating point of one replica at its share of the users or of the request rate.
    pub serving: Serving,
    /// What bounds the answer ([`limit_of`]): `"memory"`, `"bandwidth"`, `"compute"`,
    /// `"interconnect"`, `"scheduler"`, `"overhead"` or `"queue"`.
    pub limited_by: &'static str,
    /// Cost of `gpus_needed`.
    pub cost: Cost,
    /// Decode output tokens/s of all replicas.
    pub total_decode_tokens_per_s: f64,
    /// Decode tokens/s per user band.
    pub decode_band: Band,
    /// Time-to-first-token band, seconds.
    pub ttft_band: Band,
    /// With speculative decoding: the requests in flight per replica from which it no longer
    /// pays ([`crate::throughput::spec_break_even`]); `None` without it or when it always pays.
    pub spec_break_even_concurrency: Option<u64>,
}

/// Costs of a placement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cost {
    /// GPUs.
    pub gpus: u64,
    /// Purchase budget, USD.
    pub purchase_usd: Option<f64>,
    /// Cloud price per hour, USD.
    pub cloud_usd_per_hour: Option<f64>,
    /// USD per million output tokens at cloud prices.
    pub usd_per_million_tokens: Option<f64>,
    /// Board power of all GPUs, W.
    pub power_w: Option<f64>,
}

/// Costs of `gpus` GPUs producing `tokens_per_s` output tokens per second.
#[must_use]
pub fn cost(gpu: &Gpu, gpus: u64, tokens_per_s: f64) -> Cost {
    let hour = gpu.price.cloud_usd_per_hour.map(|p| p * f(gpus));
    Cost {
        gpus,
        purchase_usd: gpu.price.purchase_usd.map(|p| p * f(gpus)),
        cloud_usd_per_hour: hour,
        usd_per_million_tokens: hour
            .filter(|_| tokens_per_s > 0.0)
            .map(|h| h / (tokens_per_s * 3600.0) * 1e6),
        power_w: gpu.tdp_w.map(|w| w * f(gpus)),
    }
}

/// What the launch commands start ([`crate::commands`]): the plan, or the plan with its
/// first fix applied.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Launch {
    /// Whether a fix was applied (the values differ from the inputs).
    pub fixed: bool,
    /// The fix applied, if any.
    pub fix: Option<Fix>,
    /// Weight format.
    pub format: WeightFormat,
    /// KV-cache dtype.
    pub kv_dtype: KvDtype,
    /// Engine.
    pub engine: crate::engine::Engine,
    /// TP.
    pub tensor_parallel_size: u64,
    /// PP.
    pub pipeline_parallel_size: u64,
    /// Replicas.
    pub replicas: u64,
    /// `--max-model-len`.
    pub max_model_len: u64,
    /// `--gpu-memory-utilization` (the engine's fraction).
    pub gpu_memory_utilization: f64,
    /// `--max-num-seqs`.
    pub max_num_seqs: u64,
    /// `--max-num-batched-tokens`.
    pub max_num_batched_tokens: u64,
    /// Requests one replica holds at once.
    pub requests_per_replica: u64,
    /// llama.cpp's parallel slots (`-np`), each of `max_model_len` tokens allocated ahead:
    /// a llama.cpp plan's own slots, else the busiest replica's users (with a request rate,
    /// the requests a replica has in flight: [`super::plan`]), as many as the plan's KV pool
    /// holds whole (at least one).
    pub slots: u64,
    /// `--block-size`, when the user set one.
    pub block_size: Option<u64>,
    /// `--enable-expert-parallel`.
    pub expert_parallel: bool,
    /// `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1`.
    pub allow_long_max_model_len: bool,
    /// The checkpoint in `format` (a placeholder when the catalog knows none).
    pub checkpoint: Checkpoint,
    /// The deployment features (multimodal limits, LoRA, speculative decoding, the smaller
    /// flags), as the plan sized them.
    pub features: crate::inputs::Features,
    /// The speculative draft's repo (`--speculative-config`'s `"model"`), empty when none.
    pub draft_repo: String,
    /// Tokens drafted per step as sized (`sizing/spec.rs` `spec_tokens`).
    pub spec_tokens: u64,
}

/// The checkpoint a launch command loads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Checkpoint {
    /// Hugging Face repo id, or a placeholder (`known` false).
    pub repo: String,
    /// Whether the catalog knows this checkpoint (else `repo` is a placeholder to replace).
    pub known: bool,
    /// Whether the engine quantizes a 16-bit checkpoint while loading (vLLM and SGLang
    /// `--quantization fp8`), so no pre-quantized checkpoint is needed.
    pub online: bool,
    /// With `online`: a pre-quantized checkpoint of the same kind (an FP8 variant) for the
    /// engines that cannot quantize while loading (TensorRT-LLM, transformers).
    pub prequantized: Option<String>,
    /// GGUF repo and quant tag for llama.cpp, when the catalog knows one.
    pub gguf: Option<(String, String)>,
}

/// A [`Speed`] from an operating point (the plan's speed at the workload).
fn speed_of(sv: Serving) -> Speed {
    Speed {
        batch: crate::units::whole(sv.concurrency.round()).max(1),
        decode_tokens_per_s_per_user: sv.tokens_per_s_per_user,
        decode_tokens_per_s_total: sv.tokens_per_s_total,
        ttft_s: sv.ttft_ms.unwrap_or(0.0) / 1e3,
        serving: sv,
    }
}

/// What the plan says of a layout larger than one node: its speed is not validated.
pub(super) fn across_nodes(sc: &crate::sizing::Scenario, gpu: &Gpu) -> Option<String> {
    let per_node = gpu.gpus_per_node();
    crate::serving::spans_nodes(sc, gpu).then(|| format!(
        "the layout spans {} nodes of {per_node} GPUs: its pipeline stages hand activations over the network between them, which no measurement in the calibration set describes (the published runs across nodes name no network): speed not validated",
        crate::serving::layout_gpus(sc).div_ceil(per_node),
    ))
}

/// Speed and cost of a settled plan that starts.
pub(super) fn running(st: &Settled, gpu: &Gpu, engine: Engine) -> Running {
    let serving = operating_point(&st.scenario, gpu, st.replicas);
    let limited_by = limit_of(&st.scenario, &st.estimate, st.replicas, &serving);
    let sp = speed_of(serving);
    let total = sp.decode_tokens_per_s_total * f(st.replicas);
    let validated = crate::serving::validation_of(&st.scenario, gpu).is_some();
    // llama.cpp's rows measured decoding only, no prompt: its TTFT has no band.
    let ttft_rel = if validated && engine != Engine::LlamaCpp {
        TTFT_REL_ERR
    } else {
        0.0
    };
    Running {
        cost: cost(gpu, st.needed().gpus, total),
        total_decode_tokens_per_s: total,
        decode_band: if validated {
            speed_band(engine, sp.decode_tokens_per_s_per_user)
        } else {
            Band::rel(sp.decode_tokens_per_s_per_user, 0.0)
        },
        ttft_band: Band::rel(sp.ttft_s, ttft_rel),
        speed: sp,
        serving,
        limited_by,
        spec_break_even_concurrency: crate::throughput::spec_break_even(&st.scenario, gpu),
    }
}

fn sixteen_bit(f: WeightFormat) -> bool {
    matches!(
        f,
        WeightFormat::Bf16 | WeightFormat::Fp16 | WeightFormat::Fp32
    )
}

fn fp8(f: WeightFormat) -> bool {
    matches!(
        f,
        WeightFormat::Fp8 | WeightFormat::Fp8Block | WeightFormat::Fp8Ffn
    )
}

/// A placeholder repo id for a checkpoint the catalog does not know, named after `repo`
/// with a `kind` suffix (`FP8`, `GGUF`, `MODELOPT`; never the 16-bit id itself).
#[must_use]
pub fn placeholder_repo(repo: &str, kind: &str) -> String {
    let base = repo.rsplit('/').next().unwrap_or(repo);
    format!("YOUR-ORG/{base}-{kind}")
}

fn placeholder(name: &str, format: WeightFormat) -> String {
    placeholder_repo(name, &format.id().to_ascii_uppercase())
}

/// The checkpoint to launch `model` in `format` on `engine` ([module docs](self)).
#[must_use]
pub fn checkpoint(model: &Model, format: WeightFormat, engine: Engine) -> Checkpoint {
    let native = model.native_format();
    let own = model
        .hf_repo_ids
        .first()
        .cloned()
        .unwrap_or_else(|| model.id.clone());
    let quantized = |want: &dyn Fn(WeightFormat) -> bool| {
        model
            .quantized_repos
            .iter()
            .find(|q| WeightFormat::parse(&q.format).is_some_and(want))
            .map(|q| q.repo.clone())
    };
    // gpt-oss ships MXFP4 GGUFs (ggml-org); other formats take their closest tag.
    let mx = matches!(format, WeightFormat::Mxfp4 | WeightFormat::Mxfp4Experts);
    let tags = if mx {
        vec!["MXFP4", format.gguf_quant()]
    } else {
        vec![format.gguf_quant()]
    };
    let gguf = tags
        .into_iter()
        .find_map(|q| model.gguf_repo(q).map(|r| (r.to_string(), q.to_string())));
    let known = |repo: String| Checkpoint {
        repo,
        known: true,
        online: false,
        prequantized: None,
        gguf: gguf.clone(),
    };
    if format == native || (sixteen_bit(format) && sixteen_bit(native)) {
        return known(own);
    }
    if let Some(r) = quantized(&|f| f == format) {
        return known(r);
    }
    let family = quantized(&|f| fp8(f) && fp8(format));
    // vLLM's and SGLang's online FP8 is per-channel FP8 (the `fp8` format) exactly.
    if format == WeightFormat::Fp8
        && sixteen_bit(native)
        && matches!(engine, Engine::Vllm { .. } | Engine::Sglang)
    {
        return Checkpoint {
            online: true,
            prequantized: family,
            ..known(own)
        };
    }
    if let Some(r) = family.or_else(|| quantized(&|f| sixteen_bit(f) && sixteen_bit(format))) {
        return known(r);
    }
    Checkpoint {
        repo: placeholder(&own, format),
        known: false,
        online: false,
        prequantized: None,
        gguf,
    }
}

/// What to launch for a settled plan (with the fix that made it start, if any). The
/// checkpoint is the model's own name in its native format, else a placeholder; [`super::plan`]
/// resolves it against the catalog ([`checkpoint`]).
pub(super) fn launch_of(
    st: &Settled,
    fix: Option<Fix>,
    name: &str,
    native: WeightFormat,
) -> Launch {
    let s = &st.scenario;
    let e = &st.estimate;
    let own = s.format == native || (sixteen_bit(s.format) && sixteen_bit(native));
    Launch {
        fixed: fix.is_some(),
        fix,
        format: s.format,
        kv_dtype: s.flags.kv_dtype,
        engine: s.flags.engine,
        tensor_parallel_size: s.tensor_parallel_size,
        pipeline_parallel_size: s.pipeline_parallel_size,
        replicas: st.replicas,
        max_model_len: e.max_model_len,
        gpu_memory_utilization: f(e.budget_bytes) / f(e.gpu_total_bytes.max(1)),
        max_num_seqs: e.max_num_seqs,
        max_num_batched_tokens: e.max_num_batched_tokens,
        requests_per_replica: e.requests_per_replica(),
        slots: if s.flags.engine == crate::engine::Engine::LlamaCpp {
            e.requests_per_replica()
        } else {
            // Whole requests of `max_model_len` the pool holds (every KV group counted).
            let whole = crate::units::whole(e.max_concurrency.floor());
            s.workload
                .users
                .div_ceil(st.replicas.max(1))
                .min(whole)
                .max(1)
        },
        block_size: s.flags.block_size,
        expert_parallel: s.flags.expert_parallel,
        allow_long_max_model_len: s.flags.allow_long_max_model_len,
        checkpoint: Checkpoint {
            repo: if own {
                name.to_string()
            } else {
                placeholder(name, s.format)
            },
            known: own,
            online: false,
            prequantized: None,
            gguf: None,
        },
        features: s.flags.features,
        draft_repo: s.draft_repo.clone(),
        spec_tokens: crate::sizing::spec::spec_tokens(s),
    }
}

impl Launch {
    /// With a request rate, llama.cpp's slots are the requests a replica has in flight (the
    /// operating point's), as many as the KV pool holds whole.
    #[must_use]
    pub(super) fn in_flight(
        mut self,
        run: Option<&Running>,
        inputs: &Inputs,
        e: &crate::sizing::Estimate,
    ) -> Self {
        if let (Some(r), true) = (run, inputs.workload.request_rate.is_some()) {
            let busy = crate::units::whole(r.serving.concurrency.ceil()).max(1);
            self.slots = busy.min(crate::units::whole(e.max_concurrency.floor()).max(1));
        }
        self
    }
}

/// "TP 2 × PP 1", with the replicas when more than one.
fn layout_words(st: &Settled) -> String {
    let s = &st.scenario;
    let mut w = format!(
        "TP {} × PP {}",
        s.tensor_parallel_size, s.pipeline_parallel_size
    );
    if st.replicas > 1 {
        w.push_str(&format!(" × {} replicas", st.replicas));
    }
    w
}

/// The plan's verdict: what was checked, how the layout was chosen, the engine's verdict,
/// and the checked fixes when it does not start.
pub(super) fn verdict_text(
    st: &Settled,
    inputs: &Inputs,
    rep: &Repair,
    gpus_per_node: u64,
) -> String {
    let e = &st.estimate;
    let w = &inputs.workload;
    let bound =
        w.target_tokens_per_s.is_some() || w.max_ttft_ms.is_some() || w.request_rate.is_some();
    let how = match (st.auto, bound) {
        (false, _) => "as given",
        (true, false) => "chosen: fewest GPUs",
        (true, true) => "chosen: fewest GPUs that serve the workload",
    };
    let at = layout_words(st);
    let detail = e.verdict.detail();
    let mut t = match e.fit {
        Fit::Fits => format!("fits at {at} ({how}): {detail}"),
        Fit::FitsWithQueueing => format!("starts at {at} ({how}), but {detail}"),
        // A flag or format the engine refuses whatever the layout: no layout is to blame.
        _ if st.auto && e.refusal.is_none_or(Refusal::is_layout) => format!(
            "will not start on any layout vramfit tries (TP ≤ {} × PP ≤ 16 GPUs); at {at}: {detail}",
            crate::layout::TP_CANDIDATES
                .iter()
                .copied()
                .filter(|&tp| tp <= gpus_per_node)
                .max()
                .unwrap_or(1)
        ),
        _ => format!("will not start at {at} ({how}): {detail}"),
    };
    if !e.fit.starts() {
        if rep.fixes.is_empty() {
            t.push_str(" — no change vramfit tried starts it");
        } else {
            let fixes: Vec<String> = rep.fixes.iter().map(ToString::to_string).collect();
            t.push_str(" — fix: ");
            t.push_str(&fixes.join("; or "));
        }
    }
    t
}

/// A format row's (or a plan's) outcome in words: "fits", "fits at ≤ 7,488 tokens",
/// "needs TP 2", "refused: …", "does not fit".
pub(super) fn outcome(fix: Option<Fix>, st: &Settled) -> String {
    if st.starts() {
        return "fits".to_string();
    }
    match (fix, st.estimate.refusal) {
        (Some(x), _) => x.outcome(),
        (None, Some(r)) => format!("refused: {r}"),
        (None, None) => "does not fit".to_string(),
    }
}
