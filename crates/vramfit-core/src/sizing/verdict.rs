//! The verdict of an estimate and its warnings: kept as the numbers they quote, written out
//! only when displayed (`Display`, `to_string()`), serialized as their texts.

use crate::units::{fmt_count, fmt_gib, fmt_gib_signed};
use serde::Serialize;
use std::fmt;

/// The memory verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fit {
    /// Starts and serves the workload.
    Fits,
    /// Starts, but the workload's concurrency exceeds what the KV pool holds at once
    /// (requests queue).
    FitsWithQueueing,
    /// One request of `max_model_len` does not fit in the KV pool.
    KvTooSmall,
    /// Weights and runtime alone exceed the budget.
    WeightsTooLarge,
    /// The engine refuses the configuration before it counts memory
    /// ([`Refusal`](super::Refusal): a layout, a length or a block size it does not take).
    Refused,
}

impl Fit {
    /// Whether the engine starts (the workload may queue): what `check` exits 0 on and what
    /// every "fits" flag, cost row and layout search means.
    #[must_use]
    pub fn starts(self) -> bool {
        matches!(self, Self::Fits | Self::FitsWithQueueing)
    }
}

/// The plain-words verdict of an [`Estimate`](super::Estimate) with the fix, kept as the
/// numbers it quotes and written out only when displayed (`Display`, `to_string()`;
/// serialized as its text).
#[derive(Clone, PartialEq)]
pub struct Verdict {
    pub(super) fit: Fit,
    /// KV pool before clamping.
    pub(super) pool: i64,
    /// KV bytes of one request of `max_model_len`.
    pub(super) per_request: u64,
    /// Requests of the workload's length that fit at once.
    pub(super) conc: f64,
    /// Memory fraction used.
    pub(super) util: f64,
    /// The scenario's `max_model_len`.
    pub(super) model_len: u64,
    /// Prompt + output tokens of one request, cut to the context length (every engine but llama.cpp, `sizing::estimate`).
    pub(super) workload_tokens: u64,
    /// Concurrent users.
    pub(super) users: u64,
    /// What the engine refuses ([`Fit::Refused`]).
    pub(super) refusal: Option<super::Refusal>,
    /// The engine, for "vLLM refuses it".
    pub(super) engine: super::Engine,
    /// With the KV pool set (`--kv-cache-memory-bytes`): what the GPU must hold, and its
    /// memory (the pool is no longer what is left of a fraction, so the fraction is not the
    /// limit).
    pub(super) set_pool: Option<(u64, u64)>,
    /// What the weights and the runtime need beyond the memory budget (0 when they fit).
    pub(super) short: u64,
}

impl Verdict {
    /// With `--kv-cache-memory-bytes` set (vLLM): the bytes the GPU must hold.
    #[must_use]
    pub fn set_pool_need(&self) -> Option<u64> {
        self.set_pool.map(|(need, _)| need)
    }

    /// The tokens of one request as the concurrency counts them (prompt, media and output),
    /// cut to the longest request the engine holds ([`super::Estimate::request_len`]).
    #[must_use]
    pub fn workload_tokens(&self) -> u64 {
        self.workload_tokens
    }

    /// The concurrent users the verdict counts: all of them, or the busiest replica's share
    /// when replicas share them ([`super::Estimate::share_users`]).
    #[must_use]
    pub fn users(&self) -> u64 {
        self.users
    }
}

impl Verdict {
    /// How the text starts: `"will not start: "`, `"starts, but "` or `"fits: "`.
    #[must_use]
    pub fn lead(&self) -> &'static str {
        match self.fit {
            Fit::Refused | Fit::WeightsTooLarge | Fit::KvTooSmall => "will not start: ",
            Fit::FitsWithQueueing => "starts, but ",
            Fit::Fits => "fits: ",
        }
    }

    /// The problem (or what fits) in numbers, after [`Verdict::lead`]; never a fix (fixes
    /// are checked by planning again with them: `crate::plan::repair`).
    #[must_use]
    pub fn detail(&self) -> String {
        let conc = self.conc;
        match (self.fit, self.refusal) {
            (Fit::Refused, Some(r @ super::Refusal::TpAcrossNodes { .. })) => format!(
                "not planned: {r} (tensor parallelism across nodes needs a Ray cluster and runs over the network; pipeline parallelism crosses nodes instead)"
            ),
            (Fit::Refused, Some(r)) => format!("{} refuses it: {r}", self.engine.name()),
            (Fit::Refused, None) => "the engine refuses it".to_string(),
            (Fit::WeightsTooLarge, _) if self.set_pool.is_some() => {
                let (need, total) = self.set_pool.unwrap_or_default();
                format!(
                    "weights, runtime and the KV cache set by `--kv-cache-memory-bytes` ({}) need {}, more than the GPU's {}",
                    fmt_gib_signed(self.pool),
                    fmt_gib(need),
                    fmt_gib(total)
                )
            }
            (Fit::WeightsTooLarge, _) => format!(
                "weights and runtime need more than the {:.2} × memory budget ({} short, before any KV cache)",
                self.util,
                fmt_gib(self.short)
            ),
            (Fit::KvTooSmall, _) => format!(
                "one request of {} tokens needs {} of KV cache, the pool is {}",
                fmt_count(self.model_len),
                fmt_gib(self.per_request),
                fmt_gib_signed(self.pool)
            ),
            (Fit::FitsWithQueueing, _) => format!(
                "only {conc:.1} requests of {} tokens fit in the KV cache at once; {} users will queue",
                fmt_count(self.workload_tokens),
                fmt_count(self.users)
            ),
            (Fit::Fits, _) => format!(
                "KV pool {} holds {conc:.1} concurrent requests of {} tokens",
                fmt_gib_signed(self.pool),
                fmt_count(self.workload_tokens)
            ),
        }
    }
}

impl fmt::Display for Verdict {
    /// [`Verdict::lead`] then [`Verdict::detail`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.lead())?;
        f.write_str(&self.detail())
    }
}

impl fmt::Debug for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string(), f)
    }
}

impl Serialize for Verdict {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_str(self)
    }
}

/// One assumption or warning of an [`Estimate`](super::Estimate); its text via `Display`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Warning {
    /// `max_model_len` exceeds the model's `max_position_embeddings`, allowed by
    /// `VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` (refused without it: [`super::Refusal`]).
    LongerThanModel {
        /// The `max_model_len` used.
        max_model_len: u64,
        /// The model's `max_position_embeddings`.
        max_position_embeddings: u64,
    },
    /// An fp32 checkpoint loaded at fp32 by transformers.
    Fp32Checkpoint,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::LongerThanModel {
                max_model_len,
                max_position_embeddings,
            } => write!(
                f,
                "max_model_len {max_model_len} exceeds the model's max_position_embeddings {max_position_embeddings}: taken because VLLM_ALLOW_LONG_MAX_MODEL_LEN=1, but the model was not trained on such lengths and may produce garbage past them"
            ),
            Self::Fp32Checkpoint => f.write_str("this is an fp32 checkpoint: 4 bytes per parameter; load it with torch_dtype=torch.bfloat16 to halve it"),
        }
    }
}

impl fmt::Debug for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_string(), f)
    }
}

impl Serialize for Warning {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_str(self)
    }
}

/// The warnings of an [`Estimate`](super::Estimate), in order (at most one of each
/// [`Warning`] kind); serialized as a list of texts.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Warnings([Option<Warning>; 2]);

impl Warnings {
    pub(super) fn push(&mut self, w: Warning) {
        if let Some(slot) = self.0.iter_mut().find(|x| x.is_none()) {
            *slot = Some(w);
        }
    }

    /// The warnings, in order.
    pub fn iter(&self) -> impl Iterator<Item = Warning> + '_ {
        self.0.iter().flatten().copied()
    }

    /// How many.
    #[must_use]
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0[0].is_none()
    }

    /// Their texts, in order.
    #[must_use]
    pub fn to_strings(&self) -> Vec<String> {
        self.iter().map(|w| w.to_string()).collect()
    }
}

impl fmt::Debug for Warnings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for Warnings {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        ser.collect_seq(self.iter())
    }
}
