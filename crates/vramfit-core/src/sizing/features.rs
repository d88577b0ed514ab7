//! The memory each deployment feature of issue 18 adds or moves, per GPU: the breakdown
//! [`FeatureBytes`] (`plan --json`'s `mm_reserved_bytes`, `encoder_cache_bytes`,
//! `lora_bytes`, `draft_weights_bytes`, `draft_kv_bytes`, `cpu_offload_bytes`, each 0 when
//! the feature is off) and the host memory they take.
//!
//! Where each lands in vLLM's own accounting (so the parts still match its start-up log):
//! - LoRA slots (`sizing/lora.rs`) and the draft model (`sizing/spec.rs`) are created when
//!   the model loads: they are in "Model loading took …", hence in the weights part;
//! - the multimodal reservation (`sizing/mm.rs`) is the rise of the profiling run's peak
//!   over the text-only peak: it is in the activation part;
//! - the draft's attention layers take their share of every KV block: `draft_kv_bytes` is
//!   that share of the pool;
//! - `--cpu-offload-gb` moves weights to host memory (vLLM `vllm/model_executor/models/
//!   utils.py`, `maybe_offload_to_cpu`: whole parameters, in module order, until the GiB
//!   are reached; read through unified virtual addressing every step): the weights part
//!   shrinks by it, and the speed model reads it over the host link;
//! - `--swap-space` takes nothing: V1 never allocates swap blocks (preempted requests are
//!   recomputed) and v0.18 removed the flag (`vllm/config/cache.py` history);
//! - `--kv-cache-memory-bytes` sets the pool itself (`vllm/v1/worker/gpu_worker.py`,
//!   `determine_available_memory`: the profiled figure is replaced, the memory fraction does
//!   not size the pool).

use serde::Serialize;

/// What the features add or move per GPU, bytes; all 0 when they are off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct FeatureBytes {
    /// Rise of the profiling peak for the largest multimodal input the limits allow (in the
    /// activation part).
    pub mm_reserved_bytes: u64,
    /// Encoder outputs held in the encoder cache during that profiling (part of
    /// `mm_reserved_bytes`).
    pub encoder_cache_bytes: u64,
    /// Multimodal encoder weights on this GPU (in the weights part; 0 when every modality is
    /// off and the engine skips the encoder).
    pub encoder_weights_bytes: u64,
    /// LoRA adapter slots and Punica buffers (in the weights part).
    pub lora_bytes: u64,
    /// Draft model / EAGLE head / MTP layers (in the weights part).
    pub draft_weights_bytes: u64,
    /// The draft layers' share of the KV pool.
    pub draft_kv_bytes: u64,
    /// Weights kept in host memory by `--cpu-offload-gb` (not in the weights part).
    pub cpu_offload_bytes: u64,
    /// Host memory per GPU: offloaded weights and the CPU LoRA cache (pinned).
    pub host_bytes: u64,
}

/// One line of the features' breakdown, as every presentation lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FeatureRow {
    /// The `plan --json` field.
    pub id: &'static str,
    /// Label.
    pub label: &'static str,
    /// Bytes per GPU (host bytes for `host_bytes`).
    pub bytes: u64,
    /// Where vLLM counts it, and what it costs the KV pool.
    pub note: String,
}

impl FeatureBytes {
    /// The features that take memory, in the order shown; empty when none is on.
    /// `kv_bytes_per_token` turns what the pool loses into tokens.
    #[must_use]
    pub fn rows(&self, kv_bytes_per_token: u64) -> Vec<FeatureRow> {
        let tokens = |b: u64| {
            b.checked_div(kv_bytes_per_token)
                .map_or_else(String::new, |t| {
                    format!(" — {} fewer KV tokens", crate::units::fmt_count(t))
                })
        };
        let mut out = Vec::new();
        let mut row = |id, label, bytes: u64, note: String| {
            if bytes > 0 {
                out.push(FeatureRow {
                    id,
                    label,
                    bytes,
                    note,
                });
            }
        };
        row(
            "mm_reserved_bytes",
            "Multimodal profiling reservation",
            self.mm_reserved_bytes,
            format!("in the activation peak{}", tokens(self.mm_reserved_bytes)),
        );
        row(
            "encoder_cache_bytes",
            "of which encoder outputs (encoder cache)",
            self.encoder_cache_bytes,
            "held while the decoder's dummy run profiles".into(),
        );
        row(
            "encoder_weights_bytes",
            "Multimodal encoder weights",
            self.encoder_weights_bytes,
            "in the weights; 0 with every modality off".into(),
        );
        row(
            "lora_bytes",
            "LoRA adapter slots",
            self.lora_bytes,
            format!(
                "in the weights (\"Model loading took\"){}",
                tokens(self.lora_bytes)
            ),
        );
        row(
            "draft_weights_bytes",
            "Speculative draft weights",
            self.draft_weights_bytes,
            format!("in the weights{}", tokens(self.draft_weights_bytes)),
        );
        row(
            "draft_kv_bytes",
            "Draft layers' share of the KV pool",
            self.draft_kv_bytes,
            "the draft's KV lives in the same blocks".into(),
        );
        row(
            "cpu_offload_bytes",
            "Weights offloaded to host memory",
            self.cpu_offload_bytes,
            "read over the host link every step".into(),
        );
        row(
            "host_bytes",
            "Host memory (pinned)",
            self.host_bytes,
            "offloaded weights and the CPU LoRA cache; not GPU memory".into(),
        );
        out
    }
}
