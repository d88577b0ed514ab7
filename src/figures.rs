//! The eight headline figures of "Size it", and the verdict's classes above them ([`fit_class`]), as one table: the live page's `Figure`s
//! (src/components/size_view.rs) and a shared link's first result (src/first.rs) both write
//! their texts from it, so the two cannot differ, and the main chunk, which holds the first
//! result, holds their formatting once for both.

use vramfit_core::plan::Plan;
use vramfit_core::sizing::Fit;
use vramfit_core::units::{fmt_bytes, fmt_bytes_band, fmt_count, fmt_ms, fmt_num, fmt_usd, Units};

/// The verdict's classes above the figures: its colour says whether the plan starts.
pub fn fit_class(f: Fit) -> &'static str {
    match f {
        Fit::Fits => "vf-verdict vf-ok",
        Fit::FitsWithQueueing => "vf-verdict vf-warn",
        Fit::KvTooSmall | Fit::WeightsTooLarge | Fit::Refused => "vf-verdict vf-bad",
    }
}

/// One headline figure: its label, test id, tooltip, and how its value and detail line read
/// a plan.
pub struct FigureSpec {
    /// Label.
    pub label: &'static str,
    /// `data-testid` of the value.
    pub testid: &'static str,
    /// Explanation shown as a tooltip.
    pub help: &'static str,
    /// The value text.
    pub value: fn(&Plan, Units) -> String,
    /// The uncertainty or detail line.
    pub detail: fn(&Plan, Units) -> String,
}

/// The figures, in the page's order.
pub const FIGURES: [FigureSpec; 8] = [
    FigureSpec {
        label: "Weights per GPU",
        testid: "weights-per-gpu",
        help: "Weights on one GPU at this layout",
        value: |p, u| fmt_bytes(p.estimate.weights_bytes, u),
        detail: |p, u| format!("{} · {} params · from the {}", fmt_bytes_band(p.weights_band.value, p.weights_band.low, p.weights_band.high, u), vramfit_core::units::fmt_params(p.parameters), p.weights_source.source),
    },
    FigureSpec {
        label: "KV cache pool per GPU",
        testid: "kv-pool-per-gpu",
        help: "Memory left for the paged KV cache",
        value: |p, u| fmt_bytes(p.estimate.kv_pool_bytes, u),
        detail: |p, u| format!("{} · {} B/token", fmt_bytes_band(p.kv_pool_band.value, p.kv_pool_band.low, p.kv_pool_band.high, u), fmt_count(p.estimate.kv_bytes_per_token)),
    },
    FigureSpec {
        label: "Total per GPU (nvidia-smi)",
        testid: "total-per-gpu",
        help: "What nvidia-smi will show once serving: budget + CUDA graphs + context",
        value: |p, u| fmt_bytes(p.estimate.nvidia_smi_bytes, u),
        detail: |p, u| format!("of {} usable", fmt_bytes(p.estimate.gpu_total_bytes, u)),
    },
    FigureSpec {
        label: "GPUs needed",
        testid: "gpus-needed",
        help: "The fewest GPUs (tensor × pipeline parallel × replicas) that start the plan and hold the workload",
        value: |p, _| p.needed.map_or_else(|| "none fits".to_string(), |n| n.to_string()),
        detail: |p, _| match (&p.run, p.needed) {
                        (Some(_), _) => format!("TP {} × PP {} × {} replica(s) ({})", p.tensor_parallel_size, p.pipeline_parallel_size, p.replicas, if p.layout_auto { "chosen: fewest GPUs" } else { "as given" }),
                        (None, Some(_)) => format!("TP {} × PP {} ({}) does not start", p.tensor_parallel_size, p.pipeline_parallel_size, if p.layout_auto { "chosen" } else { "as given" }),
                        (None, None) => format!("no layout starts it as asked · {}", p.outcome()),
                    },
    },
    FigureSpec {
        label: "Longest context",
        testid: "max-context",
        help: "Longest single request the KV pool holds (capped at the model's max_position_embeddings)",
        value: |p, _| match (&p.run, p.context_fix()) {
                        (Some(_), _) => format!("{} tokens", fmt_count(p.estimate.max_model_len_fit)),
                        (None, Some(l)) => format!("fits at ≤ {} tokens", fmt_count(l)),
                        (None, None) => p.outcome(),
                    },
        detail: |p, _| if p.run.is_some() { format!("range {}–{} tokens", fmt_num(p.max_context_band.low, 0), fmt_num(p.max_context_band.high, 0)) } else { format!("does not start at {} tokens", fmt_count(p.estimate.max_model_len)) },
    },
    FigureSpec {
        label: "Max concurrency",
        testid: "max-concurrency",
        help: "Requests of max_model_len tokens that fit at once (vLLM's 'Maximum concurrency')",
        value: |p, _| match (&p.run, p.context_fix()) {
                        (Some(_), _) => fmt_num(p.estimate.max_concurrency, 2),
                        (None, Some(l)) => format!("fits at ≤ {} tokens", fmt_count(l)),
                        (None, None) => p.outcome(),
                    },
        detail: |p, _| if p.run.is_some() { format!("range {}–{} · {} requests of {} tokens (prompt, media and output)", fmt_num(p.max_concurrency_band.low, 1), fmt_num(p.max_concurrency_band.high, 1), fmt_num(p.estimate.max_concurrency_workload, 1), fmt_count(p.counted_tokens())) } else { "none: the server does not start".to_string() },
    },
    FigureSpec {
        label: "Decode tokens/s per user",
        testid: "decode-tokens-per-s",
        help: "Decode speed each user sees (1 / inter-token latency) from the serving model of continuous batching at the workload's concurrency or request rate",
        value: |p, _| p.run.as_ref().map_or_else(|| "–".to_string(), |r| fmt_num(r.speed.decode_tokens_per_s_per_user, 1)),
        detail: |p, _| match &p.run {
                        None => "no speed: the server does not start".to_string(),
                        Some(r) if p.speed_validated => format!("{} tok/s total, prompt time included · TTFT {} ms ({}–{}) · held-out range {}–{} · limited by {}", fmt_num(r.total_decode_tokens_per_s, 0), fmt_ms(r.speed.ttft_s), fmt_ms(r.ttft_band.low), fmt_ms(r.ttft_band.high), fmt_num(r.decode_band.low, 1), fmt_num(r.decode_band.high, 1), r.limited_by),
                        Some(r) => format!("{} tok/s total, prompt time included · TTFT {} ms · not validated for {} (no published measurement) · limited by {}", fmt_num(r.total_decode_tokens_per_s, 0), fmt_ms(r.speed.ttft_s), p.engine, r.limited_by),
                    },
    },
    FigureSpec {
        label: "Cost",
        testid: "cost",
        help: "Purchase price and cloud on-demand price of the GPUs",
        value: |p, _| p.run.as_ref().and_then(|r| r.cost.purchase_usd).map_or("–".into(), fmt_usd),
        detail: |p, _| match &p.run {
                        Some(r) => format!("{}/h · {} per M tokens", r.cost.cloud_usd_per_hour.map_or("–".into(), fmt_usd), r.cost.usd_per_million_tokens.map_or("–".into(), fmt_usd)),
                        None => "no cost: the server does not start".to_string(),
                    },
    },
];
