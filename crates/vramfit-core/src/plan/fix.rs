//! What it would take: the fixes of a plan that does not start, each checked by planning
//! again with it, and the fewest GPUs that start it.
//!
//! # Which changes are tried (in this order, the user's hardware kept first)
//! 1. **What the engine refuses is corrected first**
//!    ([`crate::sizing::Refusal`]): a length above the model's maximum becomes the maximum
//!    (vLLM `_get_and_verify_max_len`); a block size no CUDA attention backend takes
//!    becomes 16 (vLLM's default, `vllm/config/cache.py`); a layout vLLM refuses becomes the
//!    largest valid one on no more GPUs (`verify_with_parallel_config`); a weight format
//!    whose kernels the GPU lacks becomes the 16-bit checkpoint (`sizing/refusal.rs`,
//!    `min_capability`). Every fix below carries these corrections.
//! 2. **Memory**, on the corrected inputs: with `--kv-cache-memory-bytes` set above what the
//!    GPU holds beside the weights and the runtime, the largest whole GiB that fits (vLLM
//!    takes the pool as given, `CacheConfig.kv_cache_memory_bytes`); the longest
//!    `--max-model-len` whose one request
//!    fits the KV pool ([`Estimate::max_model_len_fit`]); `--kv-cache-dtype fp8` (half the
//!    KV bytes, vLLM `CacheConfig.cache_dtype`); the fewest-GPU layout
//!    ([`crate::layout::fewest_gpus`]); a smaller weight format (fp8, then int4 AWQ); then
//!    pairs of these (the fewest-GPU layout at the longest length that fits there, a smaller
//!    format at the longest length that fits).
//!
//! A change is offered only when [`settle`] (the same placement and verdict [`super::plan`]
//! uses) says the plan then starts: nothing here is a hint that was not planned.

use super::{place, scenario, Inputs, ModelFiles};
use crate::catalog::Gpu;
use crate::dtype::{KvDtype, WeightFormat};
use crate::engine::Engine;
use crate::model::ModelArch;
use crate::sizing::{layout_refusal, Estimate, Fit, Refusal, Scenario};
use serde::Serialize;
use std::fmt;

/// Changed flags that make a plan start, under the names of `plan --json`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Fix {
    /// `--max-model-len`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_model_len: Option<u64>,
    /// `--tensor-parallel-size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tensor_parallel_size: Option<u64>,
    /// `--pipeline-parallel-size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipeline_parallel_size: Option<u64>,
    /// `--kv-cache-dtype`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_cache_dtype: Option<KvDtype>,
    /// Weight format (its checkpoint).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<WeightFormat>,
    /// `--block-size`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_size: Option<u64>,
    /// `--kv-cache-memory-bytes` (vLLM), offered when the set size is more than the GPU holds
    /// beside the weights and the runtime.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kv_cache_memory_bytes: Option<u64>,
}

impl Fix {
    /// Whether it changes nothing.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The inputs with the fix applied.
    #[must_use]
    pub fn apply(&self, i: &Inputs) -> Inputs {
        let mut o = i.clone();
        if let Some(v) = self.max_model_len {
            o.flags.max_model_len = Some(v);
        }
        if let Some(v) = self.tensor_parallel_size {
            o.tensor_parallel_size = Some(v);
        }
        if let Some(v) = self.pipeline_parallel_size {
            o.pipeline_parallel_size = Some(v);
        }
        if let Some(v) = self.kv_cache_dtype {
            o.flags.kv_dtype = v;
        }
        if let Some(v) = self.format {
            o.format = Some(v);
        }
        if let Some(v) = self.block_size {
            o.flags.block_size = Some(v);
        }
        if let Some(v) = self.kv_cache_memory_bytes {
            o.flags.features.kv_cache_memory_bytes = Some(v);
        }
        o
    }

    /// What the fix makes of the plan, in words: "fits at ≤ 7,488 tokens", "fits with an
    /// fp8 KV cache", "needs TP 2 × PP 2", "needs int4-awq weights".
    #[must_use]
    pub fn outcome(&self) -> String {
        let len = self
            .max_model_len
            .map(|l| format!(" at ≤ {} tokens", crate::units::fmt_count(l)));
        let kv = (self.kv_cache_dtype == Some(KvDtype::Fp8)).then_some(" with an fp8 KV cache");
        let only = |f: Self| f == *self;
        let len_only = only(Self {
            max_model_len: self.max_model_len,
            ..Self::default()
        });
        let kv_only = only(Self {
            kv_cache_dtype: self.kv_cache_dtype,
            ..Self::default()
        });
        let pool_only = only(Self {
            kv_cache_memory_bytes: self.kv_cache_memory_bytes,
            ..Self::default()
        });
        match (self.tensor_parallel_size, self.format) {
            _ if self.is_empty() => "fits".to_string(),
            (None, None) if pool_only => format!(
                "fits with a {} KV cache",
                crate::units::fmt_gib(self.kv_cache_memory_bytes.unwrap_or(0))
            ),
            (None, None) if len_only => format!("fits{}", len.unwrap_or_default()),
            (None, None) if kv_only => format!("fits{}", kv.unwrap_or_default()),
            (Some(tp), None)
                if self.block_size.is_none() && self.kv_cache_memory_bytes.is_none() =>
            {
                let mut t = format!("needs TP {tp}");
                if let Some(pp) = self.pipeline_parallel_size {
                    t.push_str(&format!(" × PP {pp}"));
                }
                t.push_str(&len.unwrap_or_default());
                t.push_str(kv.unwrap_or_default());
                t
            }
            _ => format!("needs {self}"),
        }
    }

    /// `self` with `other`'s changes on top.
    #[must_use]
    pub fn and(self, other: Self) -> Self {
        Self {
            max_model_len: other.max_model_len.or(self.max_model_len),
            tensor_parallel_size: other.tensor_parallel_size.or(self.tensor_parallel_size),
            pipeline_parallel_size: other.pipeline_parallel_size.or(self.pipeline_parallel_size),
            kv_cache_dtype: other.kv_cache_dtype.or(self.kv_cache_dtype),
            format: other.format.or(self.format),
            block_size: other.block_size.or(self.block_size),
            kv_cache_memory_bytes: other.kv_cache_memory_bytes.or(self.kv_cache_memory_bytes),
        }
    }
}

impl fmt::Display for Fix {
    /// The flags, as `vllm serve` spells them, each in backticks.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        if let Some(v) = self.format {
            parts.push(format!("{v} weights"));
        }
        if let Some(v) = self.tensor_parallel_size {
            parts.push(format!("`--tensor-parallel-size {v}`"));
        }
        if let Some(v) = self.pipeline_parallel_size {
            parts.push(format!("`--pipeline-parallel-size {v}`"));
        }
        if let Some(v) = self.max_model_len {
            parts.push(format!("`--max-model-len {v}`"));
        }
        if let Some(v) = self.kv_cache_dtype {
            parts.push(format!("`--kv-cache-dtype {}`", v.id()));
        }
        if let Some(v) = self.block_size {
            parts.push(format!("`--block-size {v}`"));
        }
        if let Some(v) = self.kv_cache_memory_bytes {
            parts.push(format!("`--kv-cache-memory-bytes {v}`"));
        }
        f.write_str(&parts.join(" + "))
    }
}

/// A layout with its replicas: the fewest GPUs that start a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Needed {
    /// TP.
    pub tensor_parallel_size: u64,
    /// PP.
    pub pipeline_parallel_size: u64,
    /// Replicas for the workload.
    pub replicas: u64,
    /// All GPUs.
    pub gpus: u64,
}

impl fmt::Display for Needed {
    /// "2 (TP 2)", "8 (TP 4 × PP 2)", "6 (TP 2 × 3 replicas)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (TP {}", self.gpus, self.tensor_parallel_size)?;
        if self.pipeline_parallel_size > 1 {
            write!(f, " × PP {}", self.pipeline_parallel_size)?;
        }
        if self.replicas > 1 {
            write!(f, " × {} replicas", self.replicas)?;
        }
        f.write_str(")")
    }
}

/// A placement with its verdict: the layout, its estimate (refused when the engine refuses
/// the layout), the replicas and whether the layout was chosen automatically.
#[derive(Debug, Clone)]
pub struct Settled {
    /// The scenario at the layout.
    pub scenario: Scenario,
    /// Its estimate and verdict.
    pub estimate: Estimate,
    /// Replicas for the workload.
    pub replicas: u64,
    /// Whether the layout was chosen automatically.
    pub auto: bool,
}

impl Settled {
    /// Whether the engine starts.
    #[must_use]
    pub fn starts(&self) -> bool {
        self.estimate.fit.starts()
    }

    /// Its layout and replicas.
    #[must_use]
    pub fn needed(&self) -> Needed {
        let (tp, pp) = (
            self.scenario.tensor_parallel_size,
            self.scenario.pipeline_parallel_size,
        );
        Needed {
            tensor_parallel_size: tp,
            pipeline_parallel_size: pp,
            replicas: self.replicas,
            gpus: tp * pp * self.replicas,
        }
    }
}

/// [`place`] with the node rule of the layout applied to the verdict: what
/// [`super::plan`] answers for a scenario.
#[must_use]
pub fn settle(base: &Scenario, gpu: &Gpu, inputs: &Inputs) -> Settled {
    let (scenario, mut estimate, replicas, auto) = place(base, gpu, inputs);
    estimate.share_users(replicas);
    if scenario.flags.engine != Engine::Transformers {
        if let Some(r) = layout_refusal(
            &scenario.model,
            scenario.tensor_parallel_size,
            scenario.pipeline_parallel_size,
            Some(gpu.gpus_per_node()),
        ) {
            estimate.refuse(r);
        }
    }
    Settled {
        scenario,
        estimate,
        replicas,
        auto,
    }
}

/// The fixes of a plan and the fewest GPUs that start it.
#[derive(Debug, Clone, Default)]
pub struct Repair {
    /// Checked fixes, the user's hardware kept first (empty when nothing tried starts).
    pub fixes: Vec<Fix>,
    /// The fewest-GPU layout that starts the inputs as asked (with what the engine refuses
    /// corrected), if any.
    pub needed: Option<Needed>,
}

/// The most fixes offered.
pub const MAX_FIXES: usize = 4;

/// One question planned with changes: the architecture and what the inputs leave open.
struct Asker<'a> {
    arch: &'a ModelArch,
    gpu: &'a Gpu,
    inputs: &'a Inputs,
    format: WeightFormat,
    group: u64,
    /// What the model's files say, and the checkpoint's native format.
    files: (&'a ModelFiles, WeightFormat),
    /// Whether another weight format may be offered.
    other_formats: bool,
}

impl Asker<'_> {
    /// The scenario of `i` in `format`, with what the files say about it.
    fn scenario(&self, i: &Inputs, format: WeightFormat) -> Scenario {
        let mut s = scenario(self.arch.clone(), i, format, self.group);
        self.files.0.apply(&mut s, self.files.1);
        s
    }

    fn settle(&self, fix: &Fix) -> Settled {
        let i = fix.apply(self.inputs);
        let format = fix.format.unwrap_or(self.format);
        settle(&self.scenario(&i, format), self.gpu, &i)
    }

    /// With the layout left to the search (the fix's own layout fields cleared).
    fn settle_auto(&self, fix: &Fix) -> Settled {
        let mut i = fix.apply(self.inputs);
        i.tensor_parallel_size = None;
        i.pipeline_parallel_size = None;
        let format = fix.format.unwrap_or(self.format);
        settle(&self.scenario(&i, format), self.gpu, &i)
    }

    fn user_layout(&self) -> bool {
        self.inputs.tensor_parallel_size.is_some() || self.inputs.pipeline_parallel_size.is_some()
    }

    /// The change that corrects one refusal.
    fn correct(&self, r: Refusal, s: &Settled) -> Option<Fix> {
        match r {
            Refusal::LongerThanModel {
                max_position_embeddings,
                ..
            } => Some(Fix {
                max_model_len: Some(max_position_embeddings),
                ..Fix::default()
            }),
            Refusal::BlockSize { .. } => Some(Fix {
                block_size: Some(16),
                ..Fix::default()
            }),
            // A format whose kernels this GPU lacks: the 16-bit checkpoint, which loads on any
            // (in fp16 below compute capability 8.0, where vLLM casts bf16).
            Refusal::FormatCapability { has, .. } => self.other_formats.then_some(Fix {
                format: Some(if has < 80 {
                    WeightFormat::Fp16
                } else {
                    WeightFormat::Bf16
                }),
                ..Fix::default()
            }),
            _ if r.is_layout() => {
                let want = s.scenario.tensor_parallel_size * s.scenario.pipeline_parallel_size;
                let m = &s.scenario.model;
                crate::layout::valid_layouts(m, self.gpu.gpus_per_node())
                    .into_iter()
                    .filter(|&(tp, pp)| {
                        tp * pp <= want
                            && crate::sizing::engine_tp_refusal(s.scenario.flags.engine, tp)
                                .is_none()
                            && crate::sizing::experts_refusal(
                                m,
                                tp,
                                s.scenario.flags.expert_parallel,
                            )
                            .is_none()
                    })
                    // Tensor parallelism as close to the asked one as there is, then GPUs.
                    .max_by_key(|&(tp, pp)| (tp, tp * pp))
                    .map(|(tp, pp)| Fix {
                        tensor_parallel_size: Some(tp),
                        pipeline_parallel_size: Some(pp),
                        ..Fix::default()
                    })
            }
            _ => None,
        }
    }
}

/// The fixes of a plan that does not start (`current` is its settled answer), each checked,
/// and the fewest GPUs that start it ([module docs](self)). `other_formats`: whether a
/// smaller weight format may be offered (not for a row of the formats table, whose format
/// is the question).
#[must_use]
pub fn repair(
    arch: &ModelArch,
    gpu: &Gpu,
    inputs: &Inputs,
    (format, group): (WeightFormat, u64),
    current: &Settled,
    other_formats: bool,
    files: (&ModelFiles, WeightFormat),
) -> Repair {
    let a = Asker {
        arch,
        gpu,
        inputs,
        format,
        group,
        files,
        other_formats,
    };
    // 1. What the engine refuses.
    let mut corr = Fix::default();
    let mut s = current.clone();
    for _ in 0..4 {
        let Some(r) = s.estimate.refusal else { break };
        let Some(c) = a.correct(r, &s) else { break };
        let next = corr.and(c);
        if next == corr {
            break;
        }
        corr = next;
        s = a.settle(&corr);
    }
    let refused = s.estimate.fit == Fit::Refused;
    // The fewest GPUs that start the inputs as asked: only when what was corrected is the
    // layout (a length or block size the engine refuses is not the user's question; its fix
    // says so instead).
    let layout_only = Fix {
        tensor_parallel_size: corr.tensor_parallel_size,
        pipeline_parallel_size: corr.pipeline_parallel_size,
        ..Fix::default()
    } == corr;
    let auto_settled = if s.auto {
        s.clone()
    } else {
        a.settle_auto(&corr)
    };
    let needed = (layout_only && auto_settled.starts()).then(|| auto_settled.needed());
    let mut out: Vec<Fix> = Vec::new();
    // PP is named only where it differs from the user's (a fix applied to a command keeps
    // its other flags).
    let user_pp = inputs.pipeline_parallel_size.unwrap_or(1);
    let offer = |f: Fix, out: &mut Vec<Fix>| {
        let f = Fix {
            pipeline_parallel_size: f.pipeline_parallel_size.filter(|&p| p != user_pp),
            ..f
        };
        if !f.is_empty() && !out.contains(&f) && out.len() < MAX_FIXES && a.settle(&f).starts() {
            out.push(f);
        }
    };
    let layout_at = |st: &Settled| Fix {
        tensor_parallel_size: Some(st.scenario.tensor_parallel_size),
        pipeline_parallel_size: Some(st.scenario.pipeline_parallel_size),
        ..Fix::default()
    };
    if s.starts() {
        offer(corr, &mut out);
        if let Some(n) = needed.filter(|_| corr.tensor_parallel_size.is_some()) {
            offer(
                corr.and(Fix {
                    tensor_parallel_size: Some(n.tensor_parallel_size),
                    pipeline_parallel_size: Some(n.pipeline_parallel_size),
                    ..Fix::default()
                }),
                &mut out,
            );
        }
        return Repair { fixes: out, needed };
    }
    if refused {
        // The corrections alone still refuse: with the fewest-GPU layout on top, if it starts.
        if auto_settled.starts() {
            offer(corr.and(layout_at(&auto_settled)), &mut out);
        }
        return Repair { fixes: out, needed };
    }
    // 2. Memory, on the corrected inputs.
    // A KV size set above what the GPU holds beside the weights and the runtime: the largest
    // whole GiB (MiB below 1 GiB) that does.
    if let Some(kv) = set_pool_room(&s.estimate) {
        offer(
            corr.and(Fix {
                kv_cache_memory_bytes: Some(kv),
                ..Fix::default()
            }),
            &mut out,
        );
    }
    // The longest length that fits, if it still holds one request of the workload (a
    // shorter `--max-model-len` starts, but vLLM rejects every request).
    let workload_len = s.scenario.request_tokens().max(1);
    let longest = |st: &Settled| {
        let e = &st.estimate;
        (e.fit == Fit::KvTooSmall && e.max_model_len_fit >= workload_len)
            .then_some(e.max_model_len_fit)
    };
    if let Some(l) = longest(&s) {
        offer(
            corr.and(Fix {
                max_model_len: Some(l),
                ..Fix::default()
            }),
            &mut out,
        );
    }
    let kv = inputs.flags.kv_dtype;
    if kv != KvDtype::Fp8 && inputs.flags.engine != Engine::Transformers {
        offer(
            corr.and(Fix {
                kv_cache_dtype: Some(KvDtype::Fp8),
                ..Fix::default()
            }),
            &mut out,
        );
    }
    if let Some(n) = needed.filter(|_| a.user_layout() || !s.auto) {
        offer(
            corr.and(Fix {
                tensor_parallel_size: Some(n.tensor_parallel_size),
                pipeline_parallel_size: Some(n.pipeline_parallel_size),
                ..Fix::default()
            }),
            &mut out,
        );
    }
    let own = crate::sizing::weights_per_gpu(&whole(&s.scenario, format));
    let smaller: &[WeightFormat] = if other_formats {
        &[WeightFormat::Fp8, WeightFormat::Int4Awq]
    } else {
        &[]
    };
    for &fm in smaller {
        if crate::sizing::weights_per_gpu(&whole(&s.scenario, fm)) >= own {
            continue;
        }
        let f = corr.and(Fix {
            format: Some(fm),
            ..Fix::default()
        });
        let st = a.settle(&f);
        if st.starts() {
            offer(f, &mut out);
        } else if let Some(l) = longest(&st) {
            offer(
                f.and(Fix {
                    max_model_len: Some(l),
                    ..Fix::default()
                }),
                &mut out,
            );
        }
    }
    if out.is_empty() {
        // The fewest-GPU layout that holds the workload's own length, at the longest
        // length that fits there.
        let short = Fix {
            max_model_len: Some(s.scenario.request_tokens().clamp(1, s.scenario.model_len())),
            ..Fix::default()
        };
        let st = a.settle_auto(&corr.and(short));
        if st.starts() {
            let l = st.estimate.max_model_len_fit.min(s.scenario.model_len());
            offer(
                corr.and(layout_at(&st)).and(Fix {
                    max_model_len: Some(l),
                    ..Fix::default()
                }),
                &mut out,
            );
        }
    }
    Repair { fixes: out, needed }
}

/// With `--kv-cache-memory-bytes` set and too large: the largest pool that fits beside the
/// rest (`sizing::estimate`: weights, activations, non-torch, CUDA graphs and context
/// against the whole GPU), rounded down to whole GiB, or whole MiB below 1 GiB; `None`
/// when the size is not set, fits, or nothing is left.
fn set_pool_room(e: &Estimate) -> Option<u64> {
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;
    let need = e.verdict.set_pool_need()?;
    if e.fit != Fit::WeightsTooLarge {
        return None;
    }
    // What the GPU holds beside the pool (the pool is the set size, `sizing::estimate`).
    let room = e.gpu_total_bytes.checked_sub(need - e.kv_pool_bytes)?;
    let unit = if room >= GIB { GIB } else { MIB };
    let kv = room / unit * unit;
    (kv >= MIB).then_some(kv)
}

/// The scenario with the whole model on one GPU, in `format` (its weights are the model's).
fn whole(s: &Scenario, format: WeightFormat) -> Scenario {
    let mut w = s.clone();
    w.format = format;
    w.tensor_parallel_size = 1;
    w.pipeline_parallel_size = 1;
    w
}
