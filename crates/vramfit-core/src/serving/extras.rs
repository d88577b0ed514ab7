//! What speculative decoding and `--cpu-offload-gb` change in the serving model's step
//! ([`Extras`]; `serving.rs` `step_time` uses them).

use crate::units::real as f;
use serde::Serialize;

/// What speculative decoding and `--cpu-offload-gb` change in a step.
///
/// # Sources
/// - Speculative decoding: per step each decoding request verifies `k + 1` tokens (the
///   target's GEMMs see `k + 1` times the tokens, its KV is read once) and emits on average
///   `(1 − α^(k+1)) / (1 − α)` of them (Leviathan et al. 2023, arXiv 2211.17192, eq. 1;
///   vLLM's "mean acceptance length", `vllm/v1/spec_decode/metrics.py`); the drafter runs
///   `k` passes, the first over the `k + 1` verified positions (`vllm/v1/spec_decode/
///   eagle.py` `propose`), each a weight read or its FLOPs plus [`draft_pass_s`].
/// - CPU offload: the offloaded weights are read over the host link every forward through
///   unified virtual addressing (`vllm/model_executor/models/utils.py`
///   `maybe_offload_to_cpu`), not overlapped with the GPU's own reads.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct Extras {
    /// Tokens drafted per step, `k` (0: no speculative decoding).
    pub spec_tokens: f64,
    /// Tokens each request emits per step (1 without speculative decoding).
    pub tokens_per_step: f64,
    /// Draft weight bytes read per pass.
    pub draft_bytes: f64,
    /// Draft parameters a token goes through per pass.
    pub draft_params: f64,
    /// Weight bytes read over the host link per step and stage.
    pub host_bytes: f64,
    /// Host link, bytes/s per direction.
    pub host_link: f64,
    /// Fixed cost of one draft pass beyond its weight read, s ([`draft_pass_s`]).
    pub draft_pass_s: f64,
    /// LoRA: bytes of one adapter slot on this GPU (each step reads the slots its requests
    /// use, up to `max_loras`: the shrink and expand GEMMs of `vllm/lora/punica_wrapper`).
    pub lora_slot_bytes: f64,
    /// `--max-loras`.
    pub max_loras: f64,
    /// Multimodal encoder FLOPs per prompt token (the requests' items over their prompt),
    /// run at 16-bit GEMM speed before the prompt's prefill.
    pub encoder_flops_per_prompt_token: f64,
}

/// Fixed cost of one draft pass beyond its weight read (launches, the proposer's
/// bookkeeping), seconds, from the `fit` rows only (vllm#20780: vLLM V1 on H100 with Llama
/// 3.1 8B at batch 1). The step (TPOT × acceptance length) grows by 1.0 ms per drafted token
/// with the EAGLE-3 head and by 0.73 ms with the EAGLE-1 head over k = 2…7; reading the heads
/// takes 0.32 ms and 0.58 ms (EAGLE-1 reads the target's `lm_head`), leaving 0.68 ms and
/// 0.15 ms; one constant for every method, their mean, 0.42 ms. The held-out runs (vllm PR
/// #16937) are its check (`tests/it/features.rs`, docs/ACCURACY.md). n-gram drafts on the
/// CPU: 0.
#[must_use]
pub fn draft_pass_s(m: crate::inputs::SpecMethod) -> f64 {
    if m == crate::inputs::SpecMethod::Ngram {
        0.0
    } else {
        DRAFT_PASS_S
    }
}

/// See [`draft_pass_s`].
pub const DRAFT_PASS_S: f64 = 0.42e-3;

/// Default per-token acceptance rate α of each method (chat-like traffic), with its source:
/// EAGLE-3 0.75 and EAGLE 0.62 fit vLLM's measured acceptance lengths for Llama 3.1 8B on
/// MT-bench at k = 2…7 (vllm#20780, within ±3 %); MTP 0.81 (DeepSeek-R1 in vLLM, k = 1:
/// 81–82 % accepted, vllm PR #12755; the V3 report says 85–90 %); a draft model 0.7 and
/// n-gram 0.3 are estimates (n-gram reaches 0.7 on code editing, vllm PR #24344): not
/// validated.
#[must_use]
pub fn default_acceptance(m: crate::inputs::SpecMethod) -> f64 {
    use crate::inputs::SpecMethod;
    match m {
        SpecMethod::Eagle3 => 0.75,
        SpecMethod::Eagle => 0.62,
        SpecMethod::Mtp => 0.81,
        SpecMethod::DraftModel => 0.7,
        SpecMethod::Ngram => 0.3,
    }
}

/// Expected tokens per step of chain drafting `k` tokens at acceptance α.
#[must_use]
pub fn accepted_per_step(alpha: f64, k: f64) -> f64 {
    let a = alpha.clamp(0.0, 0.999);
    if k <= 0.0 {
        return 1.0;
    }
    (1.0 - a.powf(k + 1.0)) / (1.0 - a)
}

/// The host link of a GPU: PCIe ×16 at its generation (16 GT/s per lane for Gen 4, 128b/130b
/// coding: 31.5 GB/s per direction), of which pinned copies reach about 80 %
/// (an assumption, not validated here); Gen 4 when the catalog does not say.
#[must_use]
pub fn host_link_bytes_per_s(gpu: &crate::catalog::Gpu) -> f64 {
    let gen = gpu.pcie_generation.unwrap_or(4).clamp(3, 6);
    let per_dir = 15.75e9 * 2f64.powi(i32::try_from(gen - 3).unwrap_or(1));
    0.8 * per_dir
}

/// The [`Extras`] of a scenario: its draft (`sizing/spec.rs`) at the acceptance the user set
/// or the method's default, and the offloaded weights.
pub(super) fn extras_of(
    s: &crate::sizing::Scenario,
    gpu: &crate::catalog::Gpu,
    e: &crate::sizing::Estimate,
    spec: Option<crate::sizing::spec::Draft>,
) -> Extras {
    let vllm = matches!(s.flags.engine, crate::engine::Engine::Vllm { .. });
    let (spec_tokens, tokens_per_step, draft_bytes, draft_params, draft_pass) =
        spec.map_or((0.0, 1.0, 0.0, 0.0, 0.0), |d| {
            let alpha = s
                .flags
                .features
                .spec
                .acceptance
                .unwrap_or_else(|| default_acceptance(d.method));
            let k = f(d.tokens);
            (
                k,
                accepted_per_step(alpha, k),
                f(d.read_bytes_per_pass),
                f(d.active_params),
                draft_pass_s(d.method),
            )
        });
    Extras {
        spec_tokens,
        tokens_per_step,
        draft_bytes,
        draft_params,
        host_bytes: f(e.features.cpu_offload_bytes),
        host_link: host_link_bytes_per_s(gpu),
        draft_pass_s: draft_pass,
        lora_slot_bytes: if vllm && s.flags.features.lora.enabled {
            f(e.features.lora_bytes) / f(s.flags.features.lora.max_loras.max(1))
        } else {
            0.0
        },
        max_loras: f(s.flags.features.lora.max_loras.max(1)),
        encoder_flops_per_prompt_token: {
            let (tokens, flops) = crate::sizing::mm::per_request(s);
            let prompt = s.workload.prompt_tokens.saturating_add(tokens).max(1);
            if vllm {
                flops / f(prompt)
            } else {
                0.0
            }
        },
    }
}

/// The time the features add to a step with `d` requests decoding and `p` prompt tokens
/// prefilled: the drafter's `k` passes (the first over the `k + 1` verified positions of
/// each request, the rest over one token each, each a weight read or its FLOPs plus
/// [`draft_pass_s`]), each stage's offloaded weights read over the host link, the LoRA
/// slots in use, and the multimodal encoder over the prefilled prompts' items. LoRA and the
/// encoder are first-order (bytes and FLOPs), not validated.
pub(super) fn step_extra(
    r: &super::Replica,
    k: &super::Constants,
    d: f64,
    p: f64,
    eta: f64,
) -> f64 {
    let x = &r.extras;
    let occupancy = |n: f64| k.occupancy(n);
    let draft = if x.spec_tokens > 0.0 && d > 0.0 {
        let pass = |n: f64| {
            (x.draft_bytes / (r.bandwidth * k.eta_bw))
                .max(2.0 * x.draft_params * n / (r.flops * eta * occupancy(n)))
                + x.draft_pass_s
        };
        pass(d * (1.0 + x.spec_tokens)) + (x.spec_tokens - 1.0).max(0.0) * pass(d)
    } else {
        0.0
    };
    let host = if x.host_bytes > 0.0 && x.host_link > 0.0 {
        r.pp.max(1.0) * x.host_bytes / x.host_link
    } else {
        0.0
    };
    // LoRA: the adapter slots the step's requests use (at most `max_loras` distinct).
    let lora = if x.lora_slot_bytes > 0.0 && d + p > 0.0 {
        x.max_loras.min(d.max(1.0)) * x.lora_slot_bytes / (r.bandwidth * k.eta_bw)
    } else {
        0.0
    };
    // The encoder runs over the items of the prompts this step prefills.
    let encoder = p * x.encoder_flops_per_prompt_token / (r.flops16 * k.eta_gemm16);
    draft + host + lora + encoder
}
