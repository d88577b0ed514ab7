//! The diagnosis: [`diagnose`] / [`diagnose_with`] read an [`OomReport`] as a
//! memory budget and turn it into ranked [`Finding`]s (cause, explanation,
//! concrete fixes).
//!
//! # Budget model and thresholds
//!
//! For allocator messages (CUDA/HIP) the report is read as a memory budget:
//!
//! * `own` = "this process has X in use" (NVML, includes the CUDA context and
//!   non-PyTorch allocations). When that sentence is missing but exactly one
//!   `Process N` entry lies between *reserved* and *reserved + max(2 GiB, 10 %
//!   of capacity)*, that entry is taken to be this process: inside containers
//!   NVML reports host PIDs, so PyTorch cannot recognise itself and prints it
//!   as `Process N` (seen in FoundationVision/GenerateU#10).
//! * `held` = memory held by others = the listed other processes + whatever
//!   the budget `capacity − free − own (or reserved) − listed` leaves
//!   unexplained, minus an allowance for driver/context slack: 256 MiB when
//!   `own` is known, 1 GiB when it is not (a CUDA context alone is typically
//!   0.3–1 GiB and is then hidden in the unexplained part).
//! * `deficit` = requested − free.
//!
//! | [`Cause`] | fires when | why |
//! |---|---|---|
//! | `OtherProcessHoldsMemory` | held ≥ 256 MiB and (held ≥ deficit or held ≥ 10 % of capacity) | freeing that memory alone would have let the allocation succeed, or it is a substantial share of the card. |
//! | `Fragmentation` | reserved-but-unallocated ≥ 256 MiB and (unallocated ≥ deficit > 0, or unallocated ≥ 10 % of capacity) | PyTorch has already returned every *whole* cached block to the driver before raising (see the comment above the message in `CUDACachingAllocator.cpp`), so what remains reserved-but-unallocated is split blocks, i.e. fragmentation. If it would have covered what free memory could not, `expandable_segments` can recover it. |
//! | `GenuinelyOutOfMemory` | requested > capacity, or allocated + requested ≥ 90 % of the usable memory (capacity − this process's non-PyTorch overhead − held) | the live tensors themselves fill the GPU: no allocator setting helps, the workload must shrink or spread. |
//! | `SingleGpuVisible` | the message is about GPU 0, which is genuinely full with live tensors taking ≥ 80 % of the usable memory, held by others < 10 % of capacity, no other process is listed on it (several processes on one GPU usually mean a multi-GPU job whose ranks all touched GPU 0), and the request is ≥ 256 MiB | a hint, ranked last: large models often land wholly on GPU 0 because only one GPU was visible or the model was not sharded. |
//! | `Fp32Suspected` | only via [`diagnose_with`] with [`Hints::model_parameters`]: allocated within 0.9–1.25 × (4 bytes × parameters) | fp32 weights take 4 bytes per parameter, bf16 2, int8 1, 4-bit ≈ 0.5–0.6; allocated ≈ 4 × params therefore points at fp32 weights (bf16 weights plus large activations can look the same, which the detail says). |
//!
//! | `WeightsDoNotFit`, `KvAndActivations`, and `Fp32Suspected` / `SingleGpuVisible` from the model | only with a known model (named in the message, or [`Hints::model`]): the model check of `oom/known.rs` | the catalog and the sizing core say what the weights take at the checkpoint's dtype (and as loaded) against the card's capacity, and plan each fix; see that module's docs. |
//!
//! Findings are ordered by the share of the card each one explains (held,
//! unallocated, allocated + requested, each ÷ capacity), largest first; a
//! request larger than the card always ranks first. If no rule can be
//! evaluated (numbers missing) a generic `GenuinelyOutOfMemory` finding is
//! returned so the caller always gets advice. The model check's findings then come first
//! and replace the generic one and any budget finding of the same cause
//! ([`with_model`](super::with_model)).
//!
//! vLLM messages map directly: `VllmMaxSeqLenTooLarge` → `KvPoolTooSmall`
//! (suggested `--max-model-len` = vLLM's own estimate, or the KV token count
//! (V0), or max len × available/needed (V1 without estimate, linear in the
//! length for full attention), rounded down to a multiple of 1024 when
//! ≥ 4096); `VllmNoCacheBlocks` → `NoMemoryLeftForKvCache`;
//! `VllmFreeMemoryAtStartup` → `StartupFreeMemoryTooLow` (suggested
//! utilisation = free/total − 0.01, rounded down to 0.01). MPS reports are
//! judged against `max allowed`; driver and cuBLAS errors carry no numbers and
//! get generic findings.

#[cfg(feature = "oom")]
use super::{OomReport, OomSource, GIB, MIB};
use serde::{Deserialize, Serialize};

/// The likely cause a [`Finding`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Cause {
    /// Other processes (or something invisible to PyTorch) hold memory on the GPU.
    OtherProcessHoldsMemory,
    /// Memory is reserved by PyTorch's allocator but split into unusable pieces.
    Fragmentation,
    /// Live tensors fill the GPU: the model/batch/context is too large for it.
    GenuinelyOutOfMemory,
    /// Everything landed on GPU 0; other GPUs (if any) were not used.
    SingleGpuVisible,
    /// vLLM: the KV cache pool cannot hold one request of `max_model_len` tokens.
    KvPoolTooSmall,
    /// vLLM: nothing is left for the KV cache after weights and activations.
    NoMemoryLeftForKvCache,
    /// vLLM: less memory was free at start-up than `gpu_memory_utilization` asks for.
    StartupFreeMemoryTooLow,
    /// The weights appear to be loaded in fp32 (from [`Hints::model_parameters`] and the
    /// allocated bytes, or from the model check: Transformers without `torch_dtype`).
    Fp32Suspected,
    /// The model check: the weights alone, at the checkpoint's dtype, exceed the GPU.
    WeightsDoNotFit,
    /// The model check: the weights fit; the KV cache and activations at the length did not.
    KvAndActivations,
}

/// One diagnosed cause with its explanation and concrete fixes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The cause.
    pub cause: Cause,
    /// One line for a heading.
    pub headline: String,
    /// The numbers behind the conclusion.
    pub detail: String,
    /// Things to try, most effective first.
    pub fixes: Vec<String>,
}

/// Extra facts the caller may know and the message does not contain. Build it with
/// `..Hints::default()` for the fields you do not know; with a catalog, a model or a GPU
/// the model check of `oom/known.rs` runs ([`check_model`](super::check_model)).
#[derive(Debug, Clone, Copy, Default)]
pub struct Hints<'a> {
    /// Parameter count of the model being run (enables [`Cause::Fp32Suspected`] from the
    /// allocated bytes).
    pub model_parameters: Option<u64>,
    /// The catalog, to look up a model the message names.
    pub catalog: Option<&'a crate::catalog::Catalog>,
    /// The model chosen by the caller (`--model`, the app's model); a model the message
    /// names and the catalog knows takes precedence.
    pub model: Option<&'a crate::catalog::Model>,
    /// The chosen format of that model (a quantized repo's, the app's format).
    pub format: Option<crate::dtype::WeightFormat>,
    /// The chosen GPU (`--gpu`, the app's GPU); the message's capacity takes precedence
    /// over its memory.
    pub gpu: Option<&'a crate::catalog::Gpu>,
    /// How many GPUs the run was meant to use (`--gpus`, the app's TP × PP).
    pub gpu_count: Option<u64>,
    /// The chosen `--max-model-len` (else the message's, else the model's maximum).
    pub max_model_len: Option<u64>,
}

impl PartialEq for Hints<'_> {
    /// Equal when they hold the same values (the catalog compares by identity).
    fn eq(&self, o: &Self) -> bool {
        let same_catalog = match (self.catalog, o.catalog) {
            (Some(a), Some(b)) => std::ptr::eq(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        same_catalog
            && self.model_parameters == o.model_parameters
            && self.model == o.model
            && self.format == o.format
            && self.gpu == o.gpu
            && self.gpu_count == o.gpu_count
            && self.max_model_len == o.max_model_len
    }
}

/// Ranked likely causes for a parsed report (most likely first). Never empty.
///
/// Equivalent to [`diagnose_with`] with no hints. The thresholds and their
/// reasoning are described in this module's docs (`oom/diagnose.rs`).
#[cfg(feature = "oom")]
pub fn diagnose(report: &OomReport) -> Vec<Finding> {
    diagnose_with(report, &Hints::default())
}

/// Like [`diagnose`], using facts the caller knows (e.g. the parameter count
/// of the model, which enables [`Cause::Fp32Suspected`]), then the model check
/// ([`with_model`](super::with_model)) when the hints hold a catalog.
#[cfg(feature = "oom")]
pub fn diagnose_with(report: &OomReport, hints: &Hints) -> Vec<Finding> {
    super::known::with_model(report, hints, diagnose_message(report, hints))
}

/// [`diagnose_with`] without the model check: what the message alone says. The import
/// worker runs this (it carries no catalog or sizing code: its size budget); the page adds
/// [`with_model`](super::with_model) with the model and GPU it has chosen.
#[cfg(feature = "oom")]
pub fn diagnose_message(report: &OomReport, hints: &Hints) -> Vec<Finding> {
    let mut ranked: Vec<(f64, Finding)> = Vec::new();
    match report.source {
        OomSource::PyTorchCuda | OomSource::PyTorchHip => diagnose_allocator(report, &mut ranked),
        OomSource::PyTorchMps => diagnose_mps(report, &mut ranked),
        OomSource::CudaDriver | OomSource::Cublas => diagnose_without_numbers(report, &mut ranked),
        OomSource::VllmNoCacheBlocks => ranked.push((1.0, no_cache_blocks_finding(report))),
        OomSource::VllmMaxSeqLenTooLarge => ranked.push((1.0, kv_pool_finding(report))),
        OomSource::VllmFreeMemoryAtStartup => ranked.push((1.0, startup_finding(report))),
    }
    crate::order::sort_by(&mut ranked, |a, b| b.0.total_cmp(&a.0));
    let mut findings: Vec<Finding> = ranked.into_iter().map(|(_, f)| f).collect();
    if let Some(f) = fp32_finding(report, hints) {
        let at = findings
            .iter()
            .position(|f| f.cause == Cause::GenuinelyOutOfMemory)
            .map_or(findings.len(), |i| i + 1);
        findings.insert(at, f);
    }
    findings
}

#[cfg(feature = "oom")]
use crate::units::fmt_bytes_torch as fmt_bytes;

#[cfg(feature = "oom")]
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        crate::units::real(a) / crate::units::real(b)
    }
}

#[cfg(feature = "oom")]
fn nvidia_smi_fix(gpu: Option<u32>) -> String {
    let on = gpu.map_or_else(String::new, |g| format!(" (GPU {g})"));
    format!(
        "See who holds memory{on}: `nvidia-smi --query-compute-apps=pid,used_memory --format=csv` \
         (on ROCm: `rocm-smi --showpids`)."
    )
}

#[cfg(feature = "oom")]
fn alloc_conf_var(source: OomSource) -> &'static str {
    if source == OomSource::PyTorchHip {
        "PYTORCH_HIP_ALLOC_CONF"
    } else {
        "PYTORCH_CUDA_ALLOC_CONF"
    }
}

/// Memory budget of an allocator report, see the module docs.
#[cfg(feature = "oom")]
struct Budget {
    own_inferred_pid: Option<u32>,
    others: Vec<(u32, u64)>,
    held: u64,
    overhead: u64,
}

#[cfg(feature = "oom")]
fn budget(r: &OomReport, cap: u64, free: u64) -> Budget {
    let reserved = r.reserved_by_pytorch_bytes;
    let mut own = r.this_process_in_use_bytes;
    let mut own_inferred_pid = None;
    let mut others = r.other_processes.clone();
    if own.is_none() {
        if let Some(res) = reserved {
            let slack = (2 * GIB).max(cap / 10);
            let candidates: Vec<usize> = others
                .iter()
                .enumerate()
                .filter(|(_, &(_, b))| b >= res && b - res <= slack)
                .map(|(i, _)| i)
                .collect();
            if let [i] = candidates[..] {
                let (pid, b) = others.remove(i);
                own = Some(b);
                own_inferred_pid = Some(pid);
            }
        }
    }
    let listed = others
        .iter()
        .fold(0u64, |acc, &(_, b)| acc.saturating_add(b));
    let accounted = own
        .or(reserved)
        .unwrap_or(0)
        .saturating_add(listed)
        .saturating_add(free);
    let unaccounted = cap.saturating_sub(accounted);
    let allowance = if own.is_some() { 256 * MIB } else { GIB };
    let held = listed.saturating_add(unaccounted.saturating_sub(allowance));
    let overhead = match (own, reserved) {
        (Some(o), Some(res)) => o.saturating_sub(res),
        _ => unaccounted.min(allowance),
    };
    Budget {
        own_inferred_pid,
        others,
        held,
        overhead,
    }
}

#[cfg(feature = "oom")]
fn diagnose_allocator(r: &OomReport, out: &mut Vec<(f64, Finding)>) {
    let gpu = r.gpu_index;
    let req = r.tried_to_allocate_bytes;
    let (Some(cap), Some(free)) = (r.total_capacity_bytes, r.free_bytes) else {
        out.push((0.0, generic_oom_finding(r)));
        return;
    };
    let b = budget(r, cap, free);
    let req_v = req.unwrap_or(0);
    let deficit = req_v.saturating_sub(free);
    let alloc = r.allocated_by_pytorch_bytes;
    let unalloc = r.reserved_unallocated_bytes;
    let var = alloc_conf_var(r.source);

    // Other processes / invisible usage.
    if b.held >= 256 * MIB && (b.held >= deficit || b.held >= cap / 10) {
        let mut detail = format!(
            "Of the GPU's {}, {} is held outside this process's PyTorch tensors",
            fmt_bytes(cap),
            fmt_bytes(b.held)
        );
        if b.others.is_empty() {
            detail.push_str(
                " (capacity − free − this process's memory; the message lists no other process, \
                 which is normal inside containers or when NVML is unavailable)",
            );
        } else {
            let list: Vec<String> = b
                .others
                .iter()
                .take(8)
                .map(|&(pid, bytes)| format!("PID {pid}: {}", fmt_bytes(bytes)))
                .collect();
            detail.push_str(&format!(
                "; other processes on the device: {}{}",
                list.join(", "),
                if b.others.len() > 8 { ", …" } else { "" }
            ));
        }
        detail.push_str(&format!(
            ". Only {} was free for a request of {}.",
            fmt_bytes(free),
            fmt_bytes(req_v)
        ));
        if req_v > 0 && free >= req_v {
            detail.push_str(
                " The driver even reported more free memory than requested: a per-process limit \
                 was hit (`torch.cuda.set_per_process_memory_fraction`, printed as \"X allowed\"), \
                 or the free memory was taken concurrently or is not usable as one block (common \
                 on Windows/WDDM).",
            );
        }
        let mut fixes = vec![
            nvidia_smi_fix(gpu),
            "Stop the other process (a leftover notebook kernel, a second run, an orphaned \
             server/EngineCore) or run the jobs on different GPUs with \
             `CUDA_VISIBLE_DEVICES=<index>`."
                .to_string(),
        ];
        if b.others.len() >= 2 && b.others.iter().all(|&(_, x)| x < GIB) {
            fixes.push(
                "Several small processes on one GPU are usually other ranks of a distributed run \
                 creating a CUDA context on GPU 0: call `torch.cuda.set_device(local_rank)` \
                 before any CUDA work in every rank."
                    .to_string(),
            );
        }
        out.push((
            ratio(b.held, cap),
            Finding {
                cause: Cause::OtherProcessHoldsMemory,
                headline: format!(
                    "{} of GPU memory is held by other processes",
                    fmt_bytes(b.held)
                ),
                detail,
                fixes,
            },
        ));
    }

    // Fragmentation.
    if let Some(u) = unalloc {
        // The fragments would have covered what free memory could not.
        let covers = deficit > 0 && u >= deficit;
        if u >= 256 * MIB && (covers || u >= cap / 10) {
            let detail = format!(
                "PyTorch holds {} reserved but unallocated (split cache blocks it could not \
                 return to the driver){}, next to {} free, for a request of {}.",
                fmt_bytes(u),
                alloc.map_or_else(String::new, |a| format!(
                    " besides {} in live tensors",
                    fmt_bytes(a)
                )),
                fmt_bytes(free),
                fmt_bytes(req_v)
            );
            out.push((
                ratio(u, cap),
                Finding {
                    cause: Cause::Fragmentation,
                    headline: format!("{} is lost to allocator fragmentation", fmt_bytes(u)),
                    detail,
                    fixes: vec![
                        format!(
                            "Start the process with `{var}=expandable_segments:True` \
                             (PyTorch ≥ 2.1; newest releases also read `PYTORCH_ALLOC_CONF`)."
                        ),
                        format!(
                            "On older PyTorch use `{var}=max_split_size_mb:128` to stop large \
                             blocks from being split."
                        ),
                        "Free references to large intermediate tensors early; \
                         `torch.cuda.empty_cache()` only returns whole unused blocks, it does not \
                         defragment."
                            .to_string(),
                    ],
                },
            ));
        }
    }

    // Genuinely out of memory.
    let usable = cap.saturating_sub(b.overhead).saturating_sub(b.held);
    let too_big = req_v > cap;
    let full = alloc.is_some_and(|a| {
        let need = a.saturating_add(req_v);
        // need ≥ 90 % of usable, in integers
        u128::from(need) * 10 >= u128::from(usable) * 9
    });
    if too_big || full {
        let need = alloc.unwrap_or(0).saturating_add(req_v);
        let mut detail = if too_big {
            format!(
                "A single allocation of {} was requested on a GPU with {} in total: it cannot fit \
                 whatever else is freed.",
                fmt_bytes(req_v),
                fmt_bytes(cap)
            )
        } else {
            format!(
                "Live tensors take {} and the failed request adds {}: {} of the roughly {} this \
                 process can use on the {} GPU.",
                fmt_bytes(alloc.unwrap_or(0)),
                fmt_bytes(req_v),
                fmt_bytes(need),
                fmt_bytes(usable),
                fmt_bytes(cap)
            )
        };
        if let Some(pid) = b.own_inferred_pid {
            detail.push_str(&format!(
                " (Process {pid} in the message is taken to be this process: inside containers \
                 NVML reports host PIDs.)"
            ));
        }
        let mut fixes = Vec::new();
        if too_big {
            fixes.push(
                "Shrink the operation that makes this tensor (batch, resolution, sequence length, \
                 chunk the computation): no memory setting can make it fit."
                    .to_string(),
            );
        }
        fixes.extend(genuine_fixes());
        out.push((
            if too_big { 10.0 } else { ratio(need, cap) },
            Finding {
                cause: Cause::GenuinelyOutOfMemory,
                headline: if too_big {
                    "The requested tensor is larger than the whole GPU".to_string()
                } else {
                    "The workload needs more memory than the GPU has".to_string()
                },
                detail,
                fixes,
            },
        ));
        // Only GPU 0 named and no other process on it (several processes on one GPU usually
        // mean a multi-GPU job whose ranks all touched GPU 0).
        let tensors_fill = alloc.is_some_and(|a| u128::from(a) * 10 >= u128::from(usable) * 8);
        if full
            && !too_big
            && tensors_fill
            && gpu == Some(0)
            && b.others.is_empty()
            && b.held < cap / 10
            && req_v >= 256 * MIB
        {
            out.push((
                -1.0,
                Finding {
                    cause: Cause::SingleGpuVisible,
                    headline: "Everything ran on GPU 0".to_string(),
                    detail: format!(
                        "The message names only GPU 0, which is full ({} in live tensors). If the \
                         machine has more GPUs, they were not used.",
                        fmt_bytes(alloc.unwrap_or(0))
                    ),
                    fixes: vec![
                        "Check that `CUDA_VISIBLE_DEVICES` lists all GPUs (`nvidia-smi -L`)."
                            .to_string(),
                        "Transformers/Accelerate: load with `device_map=\"auto\"` (optionally \
                         `max_memory=`) to spread the layers over the GPUs."
                            .to_string(),
                        "vLLM: pass `--tensor-parallel-size <number of GPUs>`.".to_string(),
                    ],
                },
            ));
        }
    }

    if out.is_empty() {
        out.push((0.0, generic_oom_finding(r)));
    }
}

#[cfg(feature = "oom")]
fn genuine_fixes() -> Vec<String> {
    vec![
        "Load the weights in bf16/fp16 rather than fp32, or quantized (8-bit / 4-bit: \
         bitsandbytes, GPTQ, AWQ, FP8)."
            .to_string(),
        "Reduce batch size, context length or resolution; for training enable gradient \
         checkpointing and gradient accumulation."
            .to_string(),
        "Spread the model over more GPUs (`device_map=\"auto\"`, `--tensor-parallel-size`) or use \
         a GPU with more memory."
            .to_string(),
    ]
}

/// The headline of the finding given when the message holds too few numbers (the model
/// check replaces it when it knows more).
pub(super) const GENERIC_HEADLINE: &str = "The GPU ran out of memory";

#[cfg(feature = "oom")]
fn generic_oom_finding(r: &OomReport) -> Finding {
    let mut fixes = vec![nvidia_smi_fix(r.gpu_index)];
    fixes.extend(genuine_fixes());
    Finding {
        cause: Cause::GenuinelyOutOfMemory,
        headline: GENERIC_HEADLINE.to_string(),
        detail: "The pasted message does not contain enough numbers to tell whether other \
                 processes, fragmentation or the workload itself used the memory; paste the whole \
                 message, or name the model (`--model`, or the app's model) and the GPU \
                 (`--gpu`) to size its weights against the card."
            .to_string(),
        fixes,
    }
}

#[cfg(feature = "oom")]
fn diagnose_without_numbers(r: &OomReport, out: &mut Vec<(f64, Finding)>) {
    let (headline, detail) = if r.source == OomSource::Cublas {
        (
            "cuBLAS could not allocate its workspace",
            "CUBLAS_STATUS_ALLOC_FAILED is raised when the first matrix multiply on a device \
             cannot get memory for the cuBLAS handle, usually because the GPU is already full \
             (PyTorch's cache, another process). It can also come from a wrong device index or a \
             PyTorch/CUDA build mismatch when memory is plentiful.",
        )
    } else {
        (
            "A CUDA call outside PyTorch's allocator ran out of memory",
            "`CUDA error: out of memory` comes from the CUDA runtime itself (context creation, a \
             kernel's workspace, NCCL, a custom extension), so PyTorch could not report numbers. \
             Usually the GPU is already full, often because of another process.",
        )
    };
    out.push((
        0.6,
        Finding {
            cause: Cause::OtherProcessHoldsMemory,
            headline: headline.to_string(),
            detail: detail.to_string(),
            fixes: vec![
                nvidia_smi_fix(r.gpu_index),
                "Stop other processes on the GPU or select a free one with \
                 `CUDA_VISIBLE_DEVICES=<index>`."
                    .to_string(),
                "Rerun with `CUDA_LAUNCH_BLOCKING=1` to see which call failed.".to_string(),
            ],
        },
    ));
    out.push((0.5, generic_oom_finding(r)));
}

#[cfg(feature = "oom")]
fn diagnose_mps(r: &OomReport, out: &mut Vec<(f64, Finding)>) {
    let in_use = r.this_process_in_use_bytes.or(r.allocated_by_pytorch_bytes);
    let detail = match (in_use, r.total_capacity_bytes, r.tried_to_allocate_bytes) {
        (Some(u), Some(max), Some(q)) => format!(
            "This process has {} allocated on the GPU ({} by PyTorch's MPS allocator); adding {} \
             exceeds the {} limit (PYTORCH_MPS_HIGH_WATERMARK_RATIO × the recommended working set).",
            fmt_bytes(u),
            fmt_bytes(r.allocated_by_pytorch_bytes.unwrap_or(0)),
            fmt_bytes(q),
            fmt_bytes(max)
        ),
        _ => "The MPS allocator reached its limit (PYTORCH_MPS_HIGH_WATERMARK_RATIO × the \
              recommended working set of the unified memory)."
            .to_string(),
    };
    let mut fixes = genuine_fixes();
    fixes.push(
        "Close other memory-hungry applications: on Apple silicon the GPU shares system memory."
            .to_string(),
    );
    fixes.push(
        "As a last resort `PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0` removes the limit (the system may \
         swap or become unresponsive)."
            .to_string(),
    );
    out.push((
        1.0,
        Finding {
            cause: Cause::GenuinelyOutOfMemory,
            headline: "The workload needs more memory than MPS allows".to_string(),
            detail,
            fixes,
        },
    ));
}

/// Rounds a context length down to a "round" value vLLM users would type.
#[cfg(feature = "oom")]
fn round_len(n: u64) -> u64 {
    if n >= 4096 {
        n / 1024 * 1024
    } else if n >= 512 {
        n / 256 * 256
    } else {
        n
    }
}

#[cfg(feature = "oom")]
fn utilization_fix(r: &OomReport) -> String {
    match r.gpu_memory_utilization {
        Some(u) if u < 0.95 => format!(
            "Raise `--gpu-memory-utilization` (now {u}) towards 0.95 if nothing else uses the GPU."
        ),
        Some(u) => format!(
            "`--gpu-memory-utilization` is already {u}: the memory has to come from elsewhere."
        ),
        None => "Raise `--gpu-memory-utilization` (default 0.9; up to ~0.95 if nothing else uses \
                 the GPU)."
            .to_string(),
    }
}

#[cfg(feature = "oom")]
fn kv_pool_finding(r: &OomReport) -> Finding {
    let n = r.max_model_len;
    let fits: Option<(u64, &str)> = if let Some(e) = r.estimated_max_model_len {
        Some((e, "vLLM's own estimate"))
    } else if let Some(m) = r.kv_cache_max_tokens {
        Some((m, "the KV cache's token capacity"))
    } else if let (Some(n), Some(need), Some(avail)) = (n, r.kv_needed_bytes, r.kv_available_bytes)
    {
        (need > 0).then(|| {
            let est = u128::from(n) * u128::from(avail) / u128::from(need);
            (
                u64::try_from(est).unwrap_or(u64::MAX),
                "max length × available ÷ needed",
            )
        })
    } else {
        None
    };
    let mut detail = match (r.kv_needed_bytes, r.kv_available_bytes) {
        (Some(need), Some(avail)) => format!(
            "One request of {} tokens needs {} of KV cache, but only {} is left after weights and \
             activations (short by {}).",
            n.map_or_else(|| "max_model_len".to_string(), |n| n.to_string()),
            fmt_bytes(need),
            fmt_bytes(avail),
            fmt_bytes(need.saturating_sub(avail))
        ),
        _ => format!(
            "The KV cache holds {} tokens, fewer than the {} of one max-length request.",
            r.kv_cache_max_tokens
                .map_or_else(|| "too few".to_string(), |m| m.to_string()),
            n.map_or_else(|| "max_model_len".to_string(), |n| n.to_string())
        ),
    };
    let mut fixes = Vec::new();
    if let Some((len, how)) = fits.filter(|&(len, _)| len > 0) {
        let pick = round_len(len);
        detail.push_str(&format!(" At most {len} tokens fit ({how})."));
        fixes.push(format!(
            "Serve a shorter context: `--max-model-len {pick}` (fits the current KV pool)."
        ));
        fixes.push(format!(
            "`--kv-cache-dtype fp8` halves KV memory versus bf16/fp16: about {} tokens would fit.",
            round_len(len.saturating_mul(2))
        ));
    } else {
        fixes.push("Lower `--max-model-len` to what the workload really needs.".to_string());
        fixes.push("`--kv-cache-dtype fp8` halves KV memory versus bf16/fp16.".to_string());
    }
    fixes.push(utilization_fix(r));
    fixes.push(
        "Use more GPUs (`--tensor-parallel-size 2` or more): weights and KV cache are split across \
         them, leaving more room for KV on each."
            .to_string(),
    );
    fixes.push("Quantized weights (AWQ/GPTQ/FP8) leave more memory for the KV cache.".to_string());
    Finding {
        cause: Cause::KvPoolTooSmall,
        headline: "The KV cache cannot hold one request of the full context length".to_string(),
        detail,
        fixes,
    }
}

#[cfg(feature = "oom")]
fn no_cache_blocks_finding(r: &OomReport) -> Finding {
    let budget = r.gpu_memory_utilization.map_or_else(
        || "the `gpu_memory_utilization` share of the GPU".to_string(),
        |u| format!("{u} of the GPU (`gpu_memory_utilization`)"),
    );
    Finding {
        cause: Cause::NoMemoryLeftForKvCache,
        headline: "No memory is left for the KV cache".to_string(),
        detail: format!(
            "vLLM gives itself {budget}; the weights plus the activation peak of its profiling run \
             already use all of it, leaving zero bytes for KV cache blocks."
        ),
        fixes: vec![
            utilization_fix(r),
            nvidia_smi_fix(r.gpu_index),
            "Lower `--max-num-batched-tokens` / `--max-num-seqs` to shrink the profiling \
             activation peak, or `--enforce-eager` to skip CUDA-graph memory."
                .to_string(),
            "Shard or shrink the weights: `--tensor-parallel-size 2`, or an AWQ/GPTQ/FP8 \
             quantized checkpoint."
                .to_string(),
        ],
    }
}

#[cfg(feature = "oom")]
fn startup_finding(r: &OomReport) -> Finding {
    let mut fixes = Vec::new();
    let detail = match (r.free_bytes, r.total_capacity_bytes) {
        (Some(free), Some(total)) if total > 0 => {
            let want = r.gpu_memory_utilization.map_or_else(String::new, |u| {
                format!(" but `gpu_memory_utilization` {u} asks for")
            });
            let asked = r.gpu_memory_utilization.map_or_else(String::new, |u| {
                let b = crate::units::whole(u * crate::units::real(total)); // display only
                format!(" {}", fmt_bytes(b))
            });
            let share = ratio(free, total);
            let suggest = ((share - 0.01) * 100.0).floor() / 100.0;
            if suggest >= 0.05 {
                fixes.push(format!(
                    "Ask for what is free: `--gpu-memory-utilization {suggest:.2}` (free {:.0} % \
                     minus a 1 % margin).",
                    share * 100.0
                ));
            }
            format!(
                "Only {} of {} was free when vLLM started{want}{asked}; {} is held by other \
                 processes.",
                fmt_bytes(free),
                fmt_bytes(total),
                fmt_bytes(total.saturating_sub(free))
            )
        }
        _ => "Less memory was free at start-up than `gpu_memory_utilization` asks for; other \
              processes hold the rest."
            .to_string(),
    };
    fixes.push(nvidia_smi_fix(r.gpu_index));
    fixes.push(
        "Stop the other process (often a previous vLLM server or an orphaned `VLLM::EngineCore` \
         still holding the GPU) or pick a free GPU with `CUDA_VISIBLE_DEVICES=<index>`."
            .to_string(),
    );
    Finding {
        cause: Cause::StartupFreeMemoryTooLow,
        headline: "Another process holds GPU memory vLLM expected to be free".to_string(),
        detail,
        fixes,
    }
}

#[cfg(feature = "oom")]
fn fp32_finding(r: &OomReport, hints: &Hints) -> Option<Finding> {
    if !matches!(
        r.source,
        OomSource::PyTorchCuda | OomSource::PyTorchHip | OomSource::PyTorchMps
    ) {
        return None;
    }
    let params = hints.model_parameters.filter(|&p| p > 0)?;
    let alloc = r.allocated_by_pytorch_bytes?;
    let fp32 = u128::from(params) * 4;
    let a = u128::from(alloc);
    // 0.9 × fp32 ≤ allocated ≤ 1.25 × fp32
    if a * 10 < fp32 * 9 || a * 4 > fp32 * 5 {
        return None;
    }
    Some(Finding {
        cause: Cause::Fp32Suspected,
        headline: "The weights look like they are loaded in fp32".to_string(),
        detail: format!(
            "{} is allocated for a model of {params} parameters: about 4 bytes per parameter, the \
             size of fp32 weights (bf16 would take {}). Large activations on top of bf16 weights \
             can look the same.",
            fmt_bytes(alloc),
            fmt_bytes(params.saturating_mul(2))
        ),
        fixes: vec![
            "Load with `torch_dtype=torch.bfloat16` (`dtype=` in recent Transformers; `--dtype \
             bfloat16` in vLLM)."
                .to_string(),
        ],
    })
}
