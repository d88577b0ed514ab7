//! Replicas laid out another way than [`Replica::of`] builds them: attention data-parallel
//! over the experts (DEP), the same replica attending over the whole sequence, and over
//! another link; the layers of a stage by attention kind; and whether a layout spans nodes
//! ([`spans_nodes`]).

use super::{Precision, Replica};
use crate::units::real as f;

impl Replica {
    /// A DEP layout over `n` GPUs (attention data-parallel `n`, experts split over the `n`):
    /// built from the scenario at TP `n` with expert parallelism (`s`, `e`), each rank keeping
    /// the dense weights whole, its own requests and its own KV for every head. The KV pool
    /// is that estimate's, less the dense weights each rank now holds in full. With pipeline
    /// stages (`s` at PP `m`, "DEPn,PPm") every stage is such a group over its layers.
    #[must_use]
    pub fn data_parallel_attention(
        s: &crate::sizing::Scenario,
        gpu: &crate::catalog::Gpu,
        e: &crate::sizing::Estimate,
        n: u64,
    ) -> Self {
        let n = n.max(1);
        let split = Self::of(s, gpu, e);
        let mut whole = s.clone();
        whole.tensor_parallel_size = 1;
        let one = Self::of(&whole, gpu, e);
        // What each rank holds beyond the TP-`n` layout's weights (not what a step reads: an
        // untied input table is held whole on every rank though only looked up): all the
        // dense weights instead of `1/n` of them; the experts stay split.
        let held = |sc| f(crate::sizing::weights_per_gpu(sc));
        let extra_dense = (held(&whole) - one.expert_bytes) - (held(s) - split.expert_bytes);
        Self {
            dense_bytes: one.dense_bytes,
            dense_params: one.dense_params,
            expert_bytes: split.expert_bytes,
            expert_params: split.expert_params,
            kv_full_per_token: one.kv_full_per_token,
            kv_window_per_token: one.kv_window_per_token,
            attn_full_flops: one.attn_full_flops,
            attn_window_flops: one.attn_window_flops,
            attn_width: one.attn_width,
            kv_pool_bytes: (split.kv_pool_bytes - extra_dense).max(0.0),
            tp: 1.0,
            dp: f(n),
            gather_bytes: if s.flags.engine == crate::engine::Engine::TrtLlm {
                match split.precision {
                    Precision::Bits4 => 0.5625, // FP4 values and one FP8 scale per 16
                    Precision::Bits8 => 1.0,
                    Precision::Bits16 => 2.0,
                }
            } else {
                2.0
            },
            ..split
        }
    }

    /// The same replica attending over the whole sequence where one window covers every
    /// layer (Mistral 7B v0.1): TensorRT-LLM's TensorRT engines attend over the whole
    /// sequence unless built with `max_attention_window_size` (examples/llama/README.md:
    /// "Run Mistral 7B fp16 inference with sliding window/cache size 4096 …
    /// --max_attention_window_size=4096"), and trtllm-bench builds with none. Models whose
    /// windows differ by layer (Gemma 2/3, gpt-oss) keep them (variable-window KV pools).
    #[must_use]
    pub fn attending_whole_sequence(self) -> Self {
        if self.kv_full_per_token > 0.0 || self.kv_window_per_token <= 0.0 {
            return self;
        }
        Self {
            kv_full_per_token: self.kv_window_per_token,
            kv_window_per_token: 0.0,
            attn_full_flops: self.attn_full_flops + self.attn_window_flops,
            attn_window_flops: 0.0,
            window: 0.0,
            ..self
        }
    }

    /// The same replica over another link (PCIe instead of NVLink, or a network).
    #[must_use]
    pub fn over_link(self, link_bytes_per_s: f64, alpha_s: f64) -> Self {
        Self {
            link: link_bytes_per_s,
            alpha: alpha_s,
            stage_link: link_bytes_per_s,
            stage_alpha: alpha_s,
            ..self
        }
    }
}

/// Whether a replica of the scenario's layout is larger than one node of `gpu`, so that its
/// stages hand activations over the network between nodes. No fitted row measures such a
/// network (the published runs across nodes name none: `accuracy::speed::Unfitted`), so a
/// plan that spans nodes shows its speed as not validated.
#[must_use]
pub fn spans_nodes(s: &crate::sizing::Scenario, gpu: &crate::catalog::Gpu) -> bool {
    layout_gpus(s) > gpu.gpus_per_node()
}

/// GPUs of one replica of the scenario's layout (TP × PP).
#[must_use]
pub fn layout_gpus(s: &crate::sizing::Scenario) -> u64 {
    s.tensor_parallel_size
        .max(1)
        .saturating_mul(s.pipeline_parallel_size.max(1))
}

/// The MoE layers of a stage, counted over the same first stage as [`attention_layers`].
pub(super) fn moe_layers(m: &crate::model::ModelArch, pp: u64) -> u64 {
    crate::sizing::moe_layers_in(&m.layer_is_moe, 0, m.layers.div_ceil(pp))
}

/// The layers of the busiest (first) stage of `pp` by attention kind: (full-attention layers,
/// sliding-window layers, the widest window). Sliding and chunked layers read and hold at most
/// their window, whatever the engine's memory accounting (vLLM's hybrid allocator,
/// TensorRT-LLM's variable-window KV pools and its PyTorch backend's per-model windows,
/// `_torch/models/modeling_mistral.py` `attention_window_size`).
pub(super) fn attention_layers(m: &crate::model::ModelArch, pp: u64) -> (u64, u64, u64) {
    let k = crate::sizing::Kinds::of(m, 0, m.layers.div_ceil(pp));
    (k.full, k.window_layers(), k.widest_window())
}
