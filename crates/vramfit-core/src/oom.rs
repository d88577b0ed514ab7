//! Parse pasted out-of-memory (OOM) error text and classify its likely cause.
//!
//! Users paste whatever their framework printed; [`parse`] finds the one
//! recognisable message in it and turns it into an [`OomReport`] of byte
//! counts, and [`diagnose`] / [`diagnose_with`] turn the report into ranked
//! [`Finding`]s (cause, explanation, concrete fixes). Everything here is pure:
//! no I/O, no allocation proportional to anything but the (capped) input.
//!
//! # Recognised messages and where they come from
//!
//! | [`OomSource`] | text (abridged) | emitted by |
//! |---|---|---|
//! | `PyTorchCuda` (2.x) | `CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 3.06 MiB is free. Process 1234 has … memory in use. Including non-PyTorch memory, this process has … memory in use. Of the allocated memory … is allocated by PyTorch, [with … allocated in private pools (e.g., CUDA Graphs), ]and … is reserved by PyTorch but unallocated.` | `DeviceCachingAllocator::malloc` in PyTorch `c10/cuda/CUDACachingAllocator.cpp`; the `Process …` sentences come from its NVML helper (`nvmlDeviceGetComputeRunningProcesses`), one per process on the device. PyTorch 2.1 spelled it `total capacty`; newest builds say `Out of memory.` and `PYTORCH_ALLOC_CONF`. |
//! | `PyTorchCuda` (1.x) | `CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity; 12.34 GiB already allocated; 1.23 GiB free; [X allowed; ]13.00 GiB reserved in total by PyTorch)` | same file, before PyTorch 2.1. PyTorch ≤ 1.3 ended with `… free; 30.96 MiB cached)` where *cached* was reserved − allocated (`THCCachingAllocator`). |
//! | `PyTorchHip` | `HIP out of memory. Tried to allocate …` (same layout as CUDA 2.x) | the same allocator, hipified for ROCm builds. |
//! | `PyTorchMps` | `MPS backend out of memory (MPS allocated: 18.04 GB, other allocations: 384.00 KB, max allowed: 18.13 GB). Tried to allocate 20.00 MB on private pool.` | `aten/src/ATen/mps/MPSAllocator.mm`. |
//! | `CudaDriver` | `CUDA error: out of memory` (no numbers) | `C10_CUDA_CHECK` on any CUDA runtime call outside the caching allocator (context creation, kernels, NCCL …). |
//! | `Cublas` | `CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling cublasCreate(handle)` | cuBLAS could not allocate its handle/workspace. |
//! | `VllmNoCacheBlocks` | `No available memory for the cache blocks. Try increasing gpu_memory_utilization …` | vLLM `_check_enough_kv_cache_memory` (`vllm/v1/core/kv_cache_utils.py`; V0 `worker.py`). |
//! | `VllmMaxSeqLenTooLarge` | V0: `The model's max seq len (N) is larger than the maximum number of tokens that can be stored in KV cache (M).` V1: `To serve at least one request with the models's max seq len (N), (X GiB KV cache is needed, which is larger than the available KV cache memory (Y GiB). Based on the available memory, the estimated maximum model length is E.` | V0 `vllm/worker/worker.py`; V1 `vllm/v1/core/kv_cache_utils.py` (the "models's" typo is vLLM's own, the estimate sentence only appears when E > 0). |
//! | `VllmFreeMemoryAtStartup` | `Free memory on device [cuda:1 ](19.77/22.05 GiB) on startup is less than desired GPU memory utilization (0.9, 19.84 GiB).` | vLLM V1 `gpu_worker.py` `init_device`. |
//!
//! The input is capped at [`MAX_SCAN_BYTES`] (1 MiB, cut on a UTF-8 boundary),
//! lower-cased (ASCII only) and its whitespace runs collapsed to one space, so
//! messages that were line-wrapped or pasted with odd spacing still match. All
//! searching uses `str::find` / `str::rfind` (linear time) from strictly
//! increasing positions, so no input can make the parser loop or go quadratic.
//! When a log holds several allocator messages the *last* one is parsed (it
//! describes the latest state). Messages from other PyTorch device allocators
//! (XPU, MLU, …) are not recognised.
//!
//! # Units
//!
//! Every PyTorch formatter (`format_size` in `CUDACachingAllocator.cpp` and in
//! `MPSAllocator.h`) divides by powers of **1024** and prints two decimals.
//! The CUDA one labels them `KiB/MiB/GiB`, the (older) MPS one labels the same
//! 1024-based values `KB/MB/GB`; both are therefore read as binary units here.
//! Accepted unit words: `B`, `byte(s)`, `KiB`/`KB`, `MiB`/`MB`, `GiB`/`GB`,
//! `TiB`/`TB`. A printed value is converted exactly (decimal mantissa × unit,
//! in `u128`) and rounded to the nearest byte, halves up: `23.65 GiB` =
//! 23.65 × 2^30 = 25 393 994 137.6 → 25 393 994 138. Because the source only
//! printed two decimals, any value is ±0.005 units of the true byte count.
//! Values too large for `u64` saturate to `u64::MAX`; more than 18 fractional
//! digits are ignored.
//!
//! # Diagnosis and its thresholds
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
//! Findings are ordered by the share of the card each one explains (held,
//! unallocated, allocated + requested, each ÷ capacity), largest first; a
//! request larger than the card always ranks first. If no rule can be
//! evaluated (numbers missing) a generic `GenuinelyOutOfMemory` finding is
//! returned so the caller always gets advice.
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
//!
//! # Example
//!
//! ```
//! use vramfit_core::oom::{diagnose, parse, Cause, OomSource};
//!
//! // pytorch/pytorch#16417 (comment, 2024-03-13)
//! let text = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. \
//!     GPU 0 has a total capacity of 23.65 GiB of which 11.06 MiB is free. Including non-PyTorch \
//!     memory, this process has 23.60 GiB memory in use. Of the allocated memory 22.90 GiB is \
//!     allocated by PyTorch, and 194.87 MiB is reserved by PyTorch but unallocated.";
//! let report = parse(text).unwrap();
//! assert_eq!(report.source, OomSource::PyTorchCuda);
//! assert_eq!(report.gpu_index, Some(0));
//! assert_eq!(report.tried_to_allocate_bytes, Some(22 * 1024 * 1024));
//! assert_eq!(report.total_capacity_bytes, Some(25_393_994_138)); // 23.65 × 2^30
//! let findings = diagnose(&report);
//! assert_eq!(findings[0].cause, Cause::GenuinelyOutOfMemory);
//! assert!(parse("all good, no errors").is_err());
//! ```

use serde::{Deserialize, Serialize};
use std::fmt;

/// Longest prefix of the input that [`parse`] examines: 1 MiB. Longer input
/// is cut on the last UTF-8 character boundary at or below this length.
pub const MAX_SCAN_BYTES: usize = 1 << 20;

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const TIB: u64 = 1 << 40;

/// How far past the start of an allocator message its fields are looked for.
const MESSAGE_WINDOW: usize = 64 * 1024;
/// At most this many `Process N has …` entries are kept.
const MAX_PROCESSES: usize = 4096;
/// Fractional digits beyond this are ignored when converting a number.
const MAX_FRAC_DIGITS: u32 = 18;
/// Longest unit word accepted after a number (`bytes` is 5).
const MAX_UNIT_LEN: usize = 8;

/// Which message (and therefore which program) the report was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OomSource {
    /// PyTorch CUDA caching allocator (`CUDA out of memory. Tried to allocate …`), 1.x or 2.x layout.
    PyTorchCuda,
    /// PyTorch on ROCm (`HIP out of memory. Tried to allocate …`).
    PyTorchHip,
    /// PyTorch on Apple silicon (`MPS backend out of memory …`).
    PyTorchMps,
    /// A CUDA runtime/driver call failed (`CUDA error: out of memory`); no numbers.
    CudaDriver,
    /// cuBLAS could not allocate (`CUBLAS_STATUS_ALLOC_FAILED`); no numbers.
    Cublas,
    /// vLLM: `No available memory for the cache blocks.`
    VllmNoCacheBlocks,
    /// vLLM: the KV cache cannot hold one request of `max_model_len` tokens (V0 or V1 wording).
    VllmMaxSeqLenTooLarge,
    /// vLLM: `Free memory on device (…) on startup is less than desired GPU memory utilization (…)`.
    VllmFreeMemoryAtStartup,
}

impl OomSource {
    /// What the message is, in words (for display; the JSON keeps the variant name).
    #[must_use]
    pub const fn label(self) -> &'static str {
        match self {
            OomSource::PyTorchCuda => "PyTorch CUDA out of memory",
            OomSource::PyTorchHip => "PyTorch ROCm (HIP) out of memory",
            OomSource::PyTorchMps => "PyTorch MPS (Apple silicon) out of memory",
            OomSource::CudaDriver => "CUDA error: out of memory (no numbers)",
            OomSource::Cublas => "cuBLAS allocation failed (no numbers)",
            OomSource::VllmNoCacheBlocks => "vLLM: no memory left for KV cache blocks",
            OomSource::VllmMaxSeqLenTooLarge => {
                "vLLM: the KV cache cannot hold one max_model_len request"
            }
            OomSource::VllmFreeMemoryAtStartup => {
                "vLLM: less free memory at start-up than gpu_memory_utilization asks"
            }
        }
    }
}

/// Everything [`parse`] could read from the message. Byte counts are exact
/// conversions of the printed (two-decimal, 1024-based) values; a field is
/// `None` when the message (or the pasted fragment of it) did not contain it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OomReport {
    /// The message that was recognised.
    pub source: OomSource,
    /// Device index: `GPU n` (PyTorch) or `cuda:n` (vLLM start-up message).
    pub gpu_index: Option<u32>,
    /// `Tried to allocate X`: the single allocation that failed.
    pub tried_to_allocate_bytes: Option<u64>,
    /// Total device memory (`total capacity`); for MPS the `max allowed` limit.
    /// For vLLM's start-up message, the total after the slash.
    pub total_capacity_bytes: Option<u64>,
    /// Free device memory as reported by the driver when the allocation failed
    /// (vLLM start-up: free memory before the first slash).
    pub free_bytes: Option<u64>,
    /// Memory in live tensors (`allocated by PyTorch` / `already allocated`;
    /// includes CUDA-graph private pools; for MPS `MPS allocated`).
    pub allocated_by_pytorch_bytes: Option<u64>,
    /// Memory held by PyTorch's caching allocator. 1.x prints it (`reserved in
    /// total by PyTorch`); for 2.x and ≤ 1.3 (`cached`) it is allocated +
    /// reserved-but-unallocated.
    pub reserved_by_pytorch_bytes: Option<u64>,
    /// Reserved but not allocated (2.x prints it; 1.x: reserved − allocated;
    /// ≤ 1.3: the `cached` value).
    pub reserved_unallocated_bytes: Option<u64>,
    /// `Including non-PyTorch memory, this process has X memory in use` (NVML);
    /// for MPS: `MPS allocated` + `other allocations` (this process's Metal
    /// allocations).
    pub this_process_in_use_bytes: Option<u64>,
    /// `Process <pid> has X memory in use` entries, in message order.
    pub other_processes: Vec<(u32, u64)>,
    /// vLLM: the model's max sequence length (`max seq len (N)`).
    pub max_model_len: Option<u64>,
    /// vLLM V0: tokens the KV cache can hold (`stored in KV cache (M)`).
    pub kv_cache_max_tokens: Option<u64>,
    /// vLLM V1: KV cache bytes needed for one max-length request.
    pub kv_needed_bytes: Option<u64>,
    /// vLLM V1: KV cache bytes available.
    pub kv_available_bytes: Option<u64>,
    /// vLLM V1: `the estimated maximum model length is E`.
    pub estimated_max_model_len: Option<u64>,
    /// vLLM: `gpu_memory_utilization`, from the start-up message or from a
    /// `gpu_memory_utilization=…` / `--gpu-memory-utilization …` elsewhere in
    /// the pasted log.
    pub gpu_memory_utilization: Option<f64>,
}

impl OomReport {
    fn empty(source: OomSource) -> Self {
        OomReport {
            source,
            gpu_index: None,
            tried_to_allocate_bytes: None,
            total_capacity_bytes: None,
            free_bytes: None,
            allocated_by_pytorch_bytes: None,
            reserved_by_pytorch_bytes: None,
            reserved_unallocated_bytes: None,
            this_process_in_use_bytes: None,
            other_processes: Vec::new(),
            max_model_len: None,
            kv_cache_max_tokens: None,
            kv_needed_bytes: None,
            kv_available_bytes: None,
            estimated_max_model_len: None,
            gpu_memory_utilization: None,
        }
    }
}

/// Why [`parse`] returned no report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OomParseError {
    /// None of the recognised out-of-memory messages occurs in the text.
    NotAnOomMessage,
}

impl fmt::Display for OomParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OomParseError::NotAnOomMessage => f.write_str(
                "no out-of-memory message found: paste the full error line, e.g. \
                 \"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate …\" \
                 (PyTorch CUDA/HIP/MPS), \"CUDA error: out of memory\", \
                 \"CUBLAS_STATUS_ALLOC_FAILED\", or vLLM's start-up error about the KV cache, \
                 the cache blocks or free memory on device",
            ),
        }
    }
}

impl std::error::Error for OomParseError {}

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
    /// The weights appear to be loaded in fp32 (needs [`Hints::model_parameters`]).
    Fp32Suspected,
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

/// Extra facts the caller may know and the message does not contain.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hints {
    /// Parameter count of the model being run (enables [`Cause::Fp32Suspected`]).
    pub model_parameters: Option<u64>,
}

// ---------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------

/// Finds the out-of-memory message in `text` and reads its numbers.
///
/// Accepts any text (a whole log is fine); only the first [`MAX_SCAN_BYTES`]
/// are examined. Never panics. See the [module docs](self) for the messages
/// recognised and the unit conventions.
///
/// # Errors
///
/// [`OomParseError::NotAnOomMessage`] when none of the recognised messages
/// occurs in the text.
pub fn parse(text: &str) -> Result<OomReport, OomParseError> {
    let normalized = normalize(text);
    let s = normalized.as_str();
    parse_vllm(s)
        .or_else(|| parse_allocator(s))
        .or_else(|| parse_mps(s))
        .or_else(|| parse_bare_allocator(s))
        .or_else(|| parse_cublas(s))
        .or_else(|| parse_driver(s))
        .ok_or(OomParseError::NotAnOomMessage)
}

/// Caps the input, lower-cases ASCII and collapses whitespace runs to one space.
fn normalize(text: &str) -> String {
    let capped = &text[..floor_boundary(text, MAX_SCAN_BYTES)];
    let mut out = String::with_capacity(capped.len());
    let mut in_space = false;
    for c in capped.chars() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
                in_space = true;
            }
        } else {
            out.push(c.to_ascii_lowercase());
            in_space = false;
        }
    }
    out
}

/// Largest char boundary of `s` at or below `i`.
fn floor_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i -= 1; // 0 is always a boundary, so this stops
    }
    i
}

fn find_from(s: &str, from: usize, pat: &str) -> Option<usize> {
    s.get(from..)?.find(pat).map(|i| i + from)
}

fn after(s: &str, from: usize, pat: &str) -> Option<usize> {
    find_from(s, from, pat).map(|i| i + pat.len())
}

fn skip_spaces(s: &str, mut i: usize) -> usize {
    while s.as_bytes().get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

fn byte_at(s: &str, i: usize) -> Option<u8> {
    s.as_bytes().get(i).copied()
}

/// A decimal number as printed: `mantissa / 10^frac_digits`.
#[derive(Debug, Clone, Copy)]
struct Decimal {
    mantissa: u128,
    frac_digits: u32,
    saturated: bool,
}

impl Decimal {
    /// Exact value × `unit`, rounded to nearest (halves up), saturating.
    fn times(self, unit: u64) -> u64 {
        if self.saturated {
            return u64::MAX;
        }
        let scale = 10u128.pow(self.frac_digits); // ≤ 10^18
        let Some(num) = self.mantissa.checked_mul(u128::from(unit)) else {
            return u64::MAX;
        };
        let Some(rounded) = num.checked_add(scale / 2).map(|n| n / scale) else {
            return u64::MAX;
        };
        u64::try_from(rounded).unwrap_or(u64::MAX)
    }
}

/// Appends decimal digit `d` (ASCII) to `mantissa`, flagging overflow.
fn push_digit(mantissa: &mut u128, saturated: &mut bool, d: u8) {
    match mantissa
        .checked_mul(10)
        .and_then(|m| m.checked_add(u128::from(d - b'0')))
    {
        Some(m) => *mantissa = m,
        None => *saturated = true,
    }
}

/// Reads `digits[.digits]` at `start` (no sign, no exponent).
fn parse_decimal(s: &str, start: usize) -> Option<(Decimal, usize)> {
    let mut i = start;
    let mut mantissa: u128 = 0;
    let mut saturated = false;
    let mut any = false;
    while let Some(c) = byte_at(s, i).filter(u8::is_ascii_digit) {
        any = true;
        if !saturated {
            push_digit(&mut mantissa, &mut saturated, c);
        }
        i += 1;
    }
    if !any {
        return None;
    }
    let mut frac_digits = 0;
    if byte_at(s, i) == Some(b'.') && byte_at(s, i + 1).is_some_and(|c| c.is_ascii_digit()) {
        i += 1;
        while let Some(c) = byte_at(s, i).filter(u8::is_ascii_digit) {
            if !saturated && frac_digits < MAX_FRAC_DIGITS {
                push_digit(&mut mantissa, &mut saturated, c);
                frac_digits += 1;
            }
            i += 1;
        }
    }
    Some((
        Decimal {
            mantissa,
            frac_digits,
            saturated,
        },
        i,
    ))
}

/// Reads an unsigned integer; `None` if absent or too large for `u64`.
fn parse_uint(s: &str, start: usize) -> Option<(u64, usize)> {
    let mut i = start;
    let mut v: u64 = 0;
    let mut overflow = false;
    while let Some(c) = byte_at(s, i).filter(u8::is_ascii_digit) {
        match v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(c - b'0')))
        {
            Some(n) => v = n,
            None => overflow = true,
        }
        i += 1;
    }
    (i > start && !overflow).then_some((v, i))
}

fn parse_u32(s: &str, start: usize) -> Option<u32> {
    parse_uint(s, start).and_then(|(v, _)| u32::try_from(v).ok())
}

/// Reads a float such as `0.9`; only finite values in `0..=1` are accepted.
fn parse_fraction(s: &str, start: usize) -> Option<f64> {
    let (_, end) = parse_decimal(s, start)?;
    let v = crate::decimal::parse_f64(s.get(start..end)?)?;
    (v.is_finite() && (0.0..=1.0).contains(&v)).then_some(v)
}

fn unit_multiplier(word: &str) -> Option<u64> {
    Some(match word {
        "b" | "byte" | "bytes" => 1,
        "kib" | "kb" => KIB,
        "mib" | "mb" => MIB,
        "gib" | "gb" => GIB,
        "tib" | "tb" => TIB,
        _ => return None,
    })
}

/// Reads a unit word (letters only, at most [`MAX_UNIT_LEN`]) at `start`.
fn parse_unit(s: &str, start: usize) -> Option<(u64, usize)> {
    let mut e = start;
    while byte_at(s, e).is_some_and(|c| c.is_ascii_alphabetic()) {
        e += 1;
        if e - start > MAX_UNIT_LEN {
            return None;
        }
    }
    Some((unit_multiplier(s.get(start..e)?)?, e))
}

/// Reads `<number> <unit>` (spaces allowed around) and returns bytes.
fn parse_size(s: &str, start: usize) -> Option<(u64, usize)> {
    let (d, e) = parse_decimal(s, skip_spaces(s, start))?;
    let (unit, e) = parse_unit(s, skip_spaces(s, e))?;
    Some((d.times(unit), e))
}

fn parse_size_after(s: &str, from: usize, pat: &str) -> Option<(u64, usize)> {
    parse_size(s, after(s, from, pat)?)
}

/// Window `[start, start + len)` of `s`, cut on char boundaries.
fn window(s: &str, start: usize, len: usize) -> &str {
    let end = floor_boundary(s, start.saturating_add(len));
    s.get(start..end).unwrap_or("")
}

/// The word (ASCII letters) right before `pos`, skipping one space.
fn preceding_word(s: &str, pos: usize) -> &str {
    let head = &s[..pos];
    let head = head.strip_suffix(' ').unwrap_or(head);
    let start = head
        .bytes()
        .rev()
        .take(16)
        .take_while(u8::is_ascii_alphabetic)
        .count();
    &head[head.len() - start..]
}

fn parse_allocator(s: &str) -> Option<OomReport> {
    const ANCHOR: &str = "out of memory. tried to allocate";
    let p = s.rfind(ANCHOR)?;
    // The word before the anchor names the backend. Pasted text is often glued
    // to it ("whyCUDA out of memory", JDAI-CV/centerX#51), hence `ends_with`.
    const OTHER_BACKENDS: [&str; 7] = ["xpu", "mlu", "gcu", "npu", "mps", "musa", "cpu"];
    let word = preceding_word(s, p);
    let source = if word.ends_with("hip") {
        OomSource::PyTorchHip
    } else if OTHER_BACKENDS.iter().any(|b| word.ends_with(b)) {
        return None; // other PyTorch device allocators are not handled
    } else {
        OomSource::PyTorchCuda // "cuda", or the device-generic "Out of memory."
    };
    let mut r = OomReport::empty(source);
    let w = window(s, p, MESSAGE_WINDOW);
    let Some((tried, e)) = parse_size(w, ANCHOR.len()) else {
        return Some(r);
    };
    r.tried_to_allocate_bytes = Some(tried);
    if byte_at(w, skip_spaces(w, e)) == Some(b'(') {
        read_v1_details(w, skip_spaces(w, e), &mut r);
    } else {
        read_v2_details(w, e, &mut r);
    }
    if r.reserved_by_pytorch_bytes.is_none() {
        if let (Some(a), Some(u)) = (r.allocated_by_pytorch_bytes, r.reserved_unallocated_bytes) {
            r.reserved_by_pytorch_bytes = Some(a.saturating_add(u));
        }
    }
    if r.reserved_unallocated_bytes.is_none() {
        if let (Some(a), Some(t)) = (r.allocated_by_pytorch_bytes, r.reserved_by_pytorch_bytes) {
            r.reserved_unallocated_bytes = Some(t.saturating_sub(a));
        }
    }
    Some(r)
}

/// PyTorch 1.x: `(GPU 0; X total capacity; X already allocated; X free; [X allowed; ]X reserved in total by PyTorch)`.
fn read_v1_details(w: &str, open: usize, r: &mut OomReport) {
    let close = find_from(w, open, ")").unwrap_or_else(|| floor_boundary(w, open + 1024));
    let Some(content) = w.get(open + 1..close) else {
        return;
    };
    for seg in content.split(';') {
        let seg = seg.trim();
        if let Some(rest) = seg.strip_prefix("gpu ") {
            r.gpu_index = parse_u32(rest, 0);
        } else if let Some((b, e)) = parse_size(seg, 0) {
            let rest = seg[e..].trim_start();
            if rest.starts_with("total capacity") {
                r.total_capacity_bytes = Some(b);
            } else if rest.starts_with("already allocated") {
                r.allocated_by_pytorch_bytes = Some(b);
            } else if rest.starts_with("free") {
                r.free_bytes = Some(b);
            } else if rest.starts_with("reserved in total") {
                r.reserved_by_pytorch_bytes = Some(b);
            } else if rest.starts_with("cached") {
                // PyTorch <= 1.3 printed reserved - allocated as "cached".
                r.reserved_unallocated_bytes = Some(b);
            }
        }
    }
}

/// PyTorch 2.x: `. GPU 0 has a total capacity of X of which X is free. [Process …] Of the allocated memory X is allocated by PyTorch, [with …, ]and X is reserved by PyTorch but unallocated.`
fn read_v2_details(w: &str, e: usize, r: &mut OomReport) {
    const CAPACITY: &str = " has a total capac"; // "capacity" and 2.1's "capacty"
    let mut cursor = e;
    if let Some(i) = find_from(w, e, CAPACITY) {
        if let Some(g) = w[e..i].rfind("gpu ") {
            r.gpu_index = parse_u32(w, e + g + 4);
        }
        let after_cap = i + CAPACITY.len();
        cursor = after_cap;
        if let Some(j) = after(w, after_cap, "of ").filter(|&j| j - after_cap <= 16) {
            if let Some((b, end)) = parse_size(w, j) {
                r.total_capacity_bytes = Some(b);
                cursor = end;
            }
        }
        if let Some(j) = after(w, cursor, "of which ").filter(|&j| j - cursor <= 16) {
            if let Some((b, end)) = parse_size(w, j) {
                r.free_bytes = Some(b);
                cursor = end;
            }
        }
    }
    let region_end = find_from(w, cursor, "of the allocated memory").unwrap_or(w.len());
    let region = &w[..region_end];
    let mut q = cursor;
    while let Some(i) = find_from(region, q, "process ") {
        q = i + "process ".len();
        if region[..i].ends_with("this ") {
            if region[q..].starts_with("has ") {
                if let Some((b, end)) = parse_size(region, q + 4) {
                    r.this_process_in_use_bytes = Some(b);
                    q = end;
                }
            }
        } else if let Some((pid, end)) = parse_uint(region, q) {
            if region[end..].starts_with(" has ") {
                if let Some((b, end)) = parse_size(region, end + 5) {
                    if let Ok(pid) = u32::try_from(pid) {
                        if r.other_processes.len() < MAX_PROCESSES {
                            r.other_processes.push((pid, b));
                        }
                    }
                    q = end;
                }
            }
        }
    }
    if let Some((b, end)) = parse_size_after(w, cursor, "of the allocated memory ") {
        r.allocated_by_pytorch_bytes = Some(b);
        if let Some(u) = find_from(w, end, "is reserved by pytorch but unallocated") {
            if let Some(k) = w[end..u].rfind("and ") {
                if let Some((b, _)) = parse_size(w, end + k + 4) {
                    r.reserved_unallocated_bytes = Some(b);
                }
            }
        }
    }
}

fn parse_mps(s: &str) -> Option<OomReport> {
    let p = s.rfind("mps backend out of memory")?;
    let w = window(s, p, 4096);
    let mut r = OomReport::empty(OomSource::PyTorchMps);
    let alloc = parse_size_after(w, 0, "mps allocated:").map(|x| x.0);
    let other = parse_size_after(w, 0, "other allocations:").map(|x| x.0);
    r.allocated_by_pytorch_bytes = alloc;
    r.total_capacity_bytes = parse_size_after(w, 0, "max allowed:").map(|x| x.0);
    r.tried_to_allocate_bytes = parse_size_after(w, 0, "tried to allocate").map(|x| x.0);
    if let (Some(a), Some(o)) = (alloc, other) {
        r.this_process_in_use_bytes = Some(a.saturating_add(o));
    }
    Some(r)
}

fn parse_bare_allocator(s: &str) -> Option<OomReport> {
    let cuda = s.rfind("cuda out of memory");
    let hip = s.rfind("hip out of memory");
    let source = match (cuda, hip) {
        (Some(c), Some(h)) if h > c => OomSource::PyTorchHip,
        (Some(_), _) => OomSource::PyTorchCuda,
        (None, Some(_)) => OomSource::PyTorchHip,
        (None, None) => return None,
    };
    Some(OomReport::empty(source))
}

fn parse_cublas(s: &str) -> Option<OomReport> {
    s.contains("cublas_status_alloc_failed")
        .then(|| OomReport::empty(OomSource::Cublas))
}

fn parse_driver(s: &str) -> Option<OomReport> {
    const PATTERNS: [&str; 4] = [
        "cuda error: out of memory",
        "cuda runtime error (2) : out of memory",
        "cudaerrormemoryallocation",
        "cuda_error_out_of_memory",
    ];
    PATTERNS
        .iter()
        .any(|p| s.contains(p))
        .then(|| OomReport::empty(OomSource::CudaDriver))
}

fn parse_vllm(s: &str) -> Option<OomReport> {
    let mut r = parse_vllm_free_memory(s)
        .or_else(|| parse_vllm_kv_v1(s))
        .or_else(|| parse_vllm_kv_v0(s))
        .or_else(|| {
            s.contains("no available memory for the cache blocks")
                .then(|| OomReport::empty(OomSource::VllmNoCacheBlocks))
        })?;
    if r.gpu_memory_utilization.is_none() {
        r.gpu_memory_utilization = find_utilization_setting(s);
    }
    Some(r)
}

/// `free memory on device[ cuda:N] (A/B GiB) on startup is less than desired gpu memory utilization (U, C GiB)`
fn parse_vllm_free_memory(s: &str) -> Option<OomReport> {
    const ANCHOR: &str = "free memory on device";
    let p = s.rfind(ANCHOR)?;
    let w = window(s, p, 1024);
    if !w.contains("less than desired") && !w.contains("decrease gpu memory utilization") {
        return None; // an INFO line, not the error
    }
    let mut r = OomReport::empty(OomSource::VllmFreeMemoryAtStartup);
    let open = find_from(w, ANCHOR.len(), "(").filter(|&o| o - ANCHOR.len() <= 32);
    if let Some(open) = open {
        if let Some(c) = w[ANCHOR.len()..open].find(':') {
            r.gpu_index = parse_u32(w, ANCHOR.len() + c + 1);
        }
        if let Some((free, e)) = parse_decimal(w, open + 1) {
            if byte_at(w, e) == Some(b'/') {
                if let Some((total, e)) = parse_decimal(w, e + 1) {
                    if let Some((unit, _)) = parse_unit(w, skip_spaces(w, e)) {
                        r.free_bytes = Some(free.times(unit));
                        r.total_capacity_bytes = Some(total.times(unit));
                    }
                }
            }
        }
    }
    if let Some(u) = after(w, 0, "utilization") {
        if let Some(o) = find_from(w, u, "(").filter(|&o| o - u <= 8) {
            r.gpu_memory_utilization = parse_fraction(w, o + 1);
        }
    }
    Some(r)
}

/// V1: `to serve at least one request with the models's max seq len (N), (X gib kv cache is needed, … available kv cache memory (Y gib). based on the available memory, the estimated maximum model length is E.`
fn parse_vllm_kv_v1(s: &str) -> Option<OomReport> {
    const ANCHOR: &str = "to serve at least one request with the model";
    let p = s.rfind(ANCHOR)?;
    let w = window(s, p, 2048);
    let mut r = OomReport::empty(OomSource::VllmMaxSeqLenTooLarge);
    if let Some(i) = after(w, 0, "max seq len (") {
        if let Some((n, e)) = parse_uint(w, i) {
            r.max_model_len = Some(n);
            if let Some(o) = find_from(w, e, "(").filter(|&o| o - e <= 4) {
                if let Some((b, end)) = parse_size(w, o + 1) {
                    if w[end..].starts_with(" kv cache") {
                        r.kv_needed_bytes = Some(b);
                    }
                }
            }
        }
    }
    r.kv_available_bytes = parse_size_after(w, 0, "available kv cache memory (").map(|x| x.0);
    r.estimated_max_model_len = after(w, 0, "estimated maximum model length is ")
        .and_then(|i| parse_uint(w, i))
        .map(|x| x.0);
    Some(r)
}

/// V0: `the model's max seq len (N) is larger than the maximum number of tokens that can be stored in kv cache (M).`
fn parse_vllm_kv_v0(s: &str) -> Option<OomReport> {
    const ANCHOR: &str =
        "larger than the maximum number of tokens that can be stored in kv cache (";
    let p = s.rfind(ANCHOR)?;
    let mut r = OomReport::empty(OomSource::VllmMaxSeqLenTooLarge);
    r.kv_cache_max_tokens = parse_uint(s, p + ANCHOR.len()).map(|x| x.0);
    let head = &s[floor_boundary(s, p.saturating_sub(256))..p];
    if let Some(i) = head.rfind("max seq len (") {
        r.max_model_len = parse_uint(head, i + "max seq len (".len()).map(|x| x.0);
    }
    Some(r)
}

/// The last `gpu_memory_utilization` setting written anywhere in a pasted log.
fn find_utilization_setting(s: &str) -> Option<f64> {
    const KEYS: [&str; 7] = [
        "gpu_memory_utilization=",
        "gpu-memory-utilization=",
        "gpu-memory-utilization ",
        "gpu_memory_utilization': ",
        "gpu_memory_utilization\": ",
        "gpu_memory_utilization: ",
        "gpu_memory_utilization ",
    ];
    KEYS.iter()
        .filter_map(|k| s.rfind(k).map(|i| (i, i + k.len())))
        .filter_map(|(i, v)| parse_fraction(s, v).map(|f| (i, f)))
        .max_by_key(|&(i, _)| i)
        .map(|(_, f)| f)
}

// ---------------------------------------------------------------------------
// Diagnosis
// ---------------------------------------------------------------------------

/// Ranked likely causes for a parsed report (most likely first). Never empty.
///
/// Equivalent to [`diagnose_with`] with no hints. The thresholds and their
/// reasoning are in the [module docs](self).
pub fn diagnose(report: &OomReport) -> Vec<Finding> {
    diagnose_with(report, &Hints::default())
}

/// Like [`diagnose`], using facts the caller knows (e.g. the parameter count
/// of the model, which enables [`Cause::Fp32Suspected`]).
pub fn diagnose_with(report: &OomReport, hints: &Hints) -> Vec<Finding> {
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

/// Formats bytes the way PyTorch does (1024-based, two decimals).
fn fmt_bytes(b: u64) -> String {
    // Display only: f64 rounding is irrelevant at two decimals.
    #[allow(clippy::cast_precision_loss)]
    let f = b as f64;
    if b < KIB {
        format!("{b} bytes")
    } else if b < MIB {
        format!("{:.2} KiB", f / KIB as f64)
    } else if b < GIB {
        format!("{:.2} MiB", f / MIB as f64)
    } else {
        format!("{:.2} GiB", f / GIB as f64)
    }
}

#[allow(clippy::cast_precision_loss)]
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

fn nvidia_smi_fix(gpu: Option<u32>) -> String {
    let on = gpu.map_or_else(String::new, |g| format!(" (GPU {g})"));
    format!(
        "See who holds memory{on}: `nvidia-smi --query-compute-apps=pid,used_memory --format=csv` \
         (on ROCm: `rocm-smi --showpids`)."
    )
}

fn alloc_conf_var(source: OomSource) -> &'static str {
    if source == OomSource::PyTorchHip {
        "PYTORCH_HIP_ALLOC_CONF"
    } else {
        "PYTORCH_CUDA_ALLOC_CONF"
    }
}

/// Memory budget of an allocator report, see the module docs.
struct Budget {
    own_inferred_pid: Option<u32>,
    others: Vec<(u32, u64)>,
    held: u64,
    overhead: u64,
}

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

fn generic_oom_finding(r: &OomReport) -> Finding {
    let mut fixes = vec![nvidia_smi_fix(r.gpu_index)];
    fixes.extend(genuine_fixes());
    Finding {
        cause: Cause::GenuinelyOutOfMemory,
        headline: "The GPU ran out of memory".to_string(),
        detail: "The pasted message does not contain enough numbers to tell whether other \
                 processes, fragmentation or the workload itself used the memory; paste the whole \
                 message to get a sharper diagnosis."
            .to_string(),
        fixes,
    }
}

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
fn round_len(n: u64) -> u64 {
    if n >= 4096 {
        n / 1024 * 1024
    } else if n >= 512 {
        n / 256 * 256
    } else {
        n
    }
}

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

fn startup_finding(r: &OomReport) -> Finding {
    let mut fixes = Vec::new();
    let detail = match (r.free_bytes, r.total_capacity_bytes) {
        (Some(free), Some(total)) if total > 0 => {
            let want = r.gpu_memory_utilization.map_or_else(String::new, |u| {
                format!(" but `gpu_memory_utilization` {u} asks for")
            });
            let asked = r.gpu_memory_utilization.map_or_else(String::new, |u| {
                let b = (u * total as f64) as u64; // display only
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

#[cfg(test)]
mod tests {
    use super::*;

    // Real messages, copied from GitHub issues (source in the comment above each).
    // Byte values in the tests are worked out by hand: value × 2^10/2^20/2^30,
    // rounded to the nearest byte (halves up).

    // pytorch/pytorch#16417 (comment by WangFengtu1996, 2024-03-13) — PyTorch 2.x
    const PT2_16417: &str = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 11.06 MiB is free. Including non-PyTorch memory, this process has 23.60 GiB memory in use. Of the allocated memory 22.90 GiB is allocated by PyTorch, and 194.87 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";

    // kerrj/lerf#73 — PyTorch 2.1 ("capacty" typo)
    const LERF_73: &str = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacty of 23.65 GiB of which 1.66 GiB is free. Including non-PyTorch memory, this process has 20.81 GiB memory in use. Of the allocated memory 12.09 GiB is allocated by PyTorch, and 4.84 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF";

    // FoundationVision/GenerateU#10 — own process listed as "Process N" (container)
    const GENERATEU_10: &str = "    return F.linear(input, self.weight, self.bias)\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 496.00 MiB. GPU 0 has a total capacty of 14.75 GiB of which 235.06 MiB is free. Process 20398 has 14.52 GiB memory in use. Of the allocated memory 14.06 GiB is allocated by PyTorch, and 330.42 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF";

    // awslabs/keys_values#92 — several processes, distributed rank prefix, PYTORCH_ALLOC_CONF
    const KEYS_VALUES_92: &str = "[rank0]:            ^^^^^^^^^^^\n[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 572.00 MiB. GPU 0 has a total capacity of 39.49 GiB of which 321.31 MiB is free. Process 3721648 has 414.00 MiB memory in use. Including non-PyTorch memory, this process has 37.46 GiB memory in use. Process 1374765 has 414.00 MiB memory in use. Process 1374763 has 414.00 MiB memory in use. Process 1374764 has 414.00 MiB memory in use. Of the allocated memory 36.04 GiB is allocated by PyTorch, and 321.37 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";

    // murong-xu/CADS#4
    const CADS_4: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 22.78 GiB. GPU 0 has a total capacity of 31.47 GiB of which 12.73 GiB is free. Including non-PyTorch memory, this process has 18.73 GiB memory in use. Of the allocated memory 9.08 GiB is allocated by PyTorch, and 9.35 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n\nDuring handling of the above exception, another exception occurred:";

    // lianqi1008/Control-GIC#6 — request larger than an 80 GB A100
    const CONTROL_GIC_6: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 112.89 GiB. GPU 0 has a total capacity of 79.14 GiB of which 58.59 GiB is free. Process 4078482 has 11.29 GiB memory in use. Including non-PyTorch memory, this process has 9.25 GiB memory in use. Of the allocated memory 8.27 GiB is allocated by PyTorch, and 500.38 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";

    // carolchenyx/MGFN.#35 — "0 bytes is free"
    const MGFN_35: &str = "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.70 GiB. GPU 0 has a total capacty of 6.00 GiB of which 0 bytes is free. Of the allocated memory 2.93 GiB is allocated by PyTorch, and 2.30 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF";

    // pytorch/pytorch#59778 — PyTorch 1.x layout
    const PT1_59778: &str = "`CUDA out of memory. Tried to allocate 2.26 GiB (GPU 0; 6.00 GiB total capacity; 781.59 MiB already allocated; 3.03 GiB free; 1.24 GiB reserved in total by PyTorch) `";

    // CompVis/stable-diffusion#702 — 1.x layout, "0 bytes free"
    const SD_702: &str = "OutOfMemoryError: CUDA out of memory. Tried to allocate 192.00 MiB (GPU 0; 4.00 GiB total capacity; 3.08 GiB already allocated; 0 bytes free; 3.47 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation. See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\nTime taken: 2m 24.41sTorch active/reserved: 3457/3576 MiB, Sys VRAM: 4096/4096 MiB (100.0%)";

    // shllln/GenerativeGraph#5 — PyTorch <= 1.3 ("cached"), KiB
    const GENGRAPH_5: &str = "RuntimeError: CUDA out of memory. Tried to allocate 1024.00 KiB (GPU 0; 11.17 GiB total capacity; 10.90 GiB already allocated; 576.00 KiB free; 30.96 MiB cached)";

    // JDAI-CV/centerX#51 (issue title, glued "whyCUDA") — GPU 1
    const CENTERX_51: &str = "whyCUDA out of memory. Tried to allocate 130.00 MiB (GPU 1; 7.80 GiB total capacity; 5.91 GiB already allocated; 33.56 MiB free; 6.09 GiB reserved in total by PyTorch)";

    // kyuz0/amd-strix-halo-image-video-toolboxes#3 — ROCm, unified-memory APU
    const HIP_STRIX_3: &str = "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 3.31 GiB. GPU 0 has a total capacity of 128.00 GiB of which 780.24 MiB is free. Of the allocated memory 57.70 GiB is allocated by PyTorch, and 75.82 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";

    // ROCm/TheRock#1054 — request larger than the device
    const HIP_THEROCK_1054: &str = "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 16.00 GiB. GPU 0 has a total capacity of 15.24 GiB of which 15.09 GiB is free. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";

    // ROCm/TheRock#2118 — "X allowed;" and private pools
    const HIP_THEROCK_2118: &str = "2025-11-14T08:52:38.3746210Z FAILED [0.0004s] external-builds/pytorch/pytorch/test/test_autograd.py::TestAutogradDeviceTypeCUDA::test_set_requires_grad_only_for_floats_cuda_int32 - torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 287.98 GiB of which 275.86 GiB is free. 1.05 GiB allowed; Of the allocated memory 1017.01 MiB is allocated by PyTorch, with 17.00 MiB allocated in private pools (e.g., HIP Graphs), and 54.99 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";

    // gensyn-ai/rl-swarm#355 — MPS, "GB" (1024-based)
    const MPS_RLSWARM_355: &str = "RuntimeError: MPS backend out of memory (MPS allocated: 12.74 GB, other allocations: 4.39 GB, max allowed: 18.13 GB). Tried to allocate 1.02 GB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).";

    // Comfy-Org/ComfyUI#8984 — MPS with newer "GiB/MiB" units
    const MPS_COMFY_8984: &str = "MPS backend out of memory (MPS allocated: 15.72 GiB, other allocations: 2.41 MiB, max allowed: 18.13 GiB). Tried to allocate 5.81 GiB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).";

    // lllyasviel/Fooocus#1139 — MPS "MB"
    const MPS_FOOOCUS_1139: &str = "RuntimeError: MPS backend out of memory (MPS allocated: 8.89 GB, other allocations: 172.98 MB, max allowed: 9.07 GB). Tried to allocate 6.25 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).\nTotal time: 129.38 seconds";

    // QwenLM/Qwen3#873
    const CUBLAS_QWEN_873: &str = "File \"lib/python3.9/site-packages/torch/nn/modules/linear.py\", line 116, in forward\n    return F.linear(input, self.weight, self.bias)\nRuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`";

    // kijai/ComfyUI-WanVideoWrapper#565
    const DRIVER_WAN_565: &str = "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.";

    // vllm-project/vllm#10439
    const VLLM_NOBLOCKS_10439: &str = "vllm-1  | ERROR 11-18 18:07:28 engine.py:366]     raise ValueError(\"No available memory for the cache blocks. \"\nvllm-1  | ERROR 11-18 18:07:28 engine.py:366] ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.";

    // vllm-project/vllm#2418 — V0 wording
    const VLLM_V0_2418: &str = "ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV cache (3664). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";

    // vllm-project/vllm#10517 (comment by kaspersiminski) — V0 with its profiling log
    const VLLM_V0_10517: &str = "Loading model weights took 14.9888 GB\nMemory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90\n# GPU blocks: 1478, # CPU blocks: 2048\nMaximum concurrency for 29000 tokens per request: 0.82x\nThe model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache (23648). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";

    // vllm-project/tpu-inference#223 — V1 wording with estimate
    const VLLM_V1_TPU_223: &str = "    raise ValueError(\nValueError: To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (0.71 GiB). Based on the available memory, the estimated maximum model length is 5632. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";

    // vllm-project/vllm#16118 — V1 wording before the estimate was added
    const VLLM_V1_16118: &str = "ERROR 04-05 01:12:55 [core.py:390] ValueError: To serve at least one request with the models's max seq len (1048576), (24.00 GiB KV cache is needed, which is larger than the available KV cache memory (9.97 GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";

    // pytorch/pytorch#175666 — vLLM start-up check with device name
    const VLLM_FREE_175666: &str = "[2026-02-24T20:21:58Z] (EngineCore_DP0 pid=6940) ValueError: Free memory on device cuda:1 (19.77/22.05 GiB) on startup is less than desired GPU memory utilization (0.9, 19.84 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.";

    // vllm-project/vllm#20305
    const VLLM_FREE_20305: &str = "[multiproc_executor.py:492] ValueError: Free memory on device (31.44/47.38 GiB) on startup is less than desired GPU memory utilization (0.95, 45.01 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.";

    // vllm-project/vllm#23192
    const VLLM_FREE_23192: &str = "(EngineCore_0 pid=1810465) ERROR 09-03 11:03:37 [core.py:712] ValueError: Free memory on device (7.34/139.72 GiB) on startup is less than desired GPU memory utilization (0.9, 125.75 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.";

    const ALL: [&str; 27] = [
        PT2_16417,
        LERF_73,
        GENERATEU_10,
        KEYS_VALUES_92,
        CADS_4,
        CONTROL_GIC_6,
        MGFN_35,
        PT1_59778,
        SD_702,
        GENGRAPH_5,
        CENTERX_51,
        HIP_STRIX_3,
        HIP_THEROCK_1054,
        HIP_THEROCK_2118,
        MPS_RLSWARM_355,
        MPS_COMFY_8984,
        MPS_FOOOCUS_1139,
        CUBLAS_QWEN_873,
        DRIVER_WAN_565,
        VLLM_NOBLOCKS_10439,
        VLLM_V0_2418,
        VLLM_V0_10517,
        VLLM_V1_TPU_223,
        VLLM_V1_16118,
        VLLM_FREE_175666,
        VLLM_FREE_20305,
        VLLM_FREE_23192,
    ];

    fn causes(r: &OomReport) -> Vec<Cause> {
        diagnose(r).iter().map(|f| f.cause).collect()
    }

    #[test]
    fn pt2_16417() {
        let r = parse(PT2_16417).unwrap();
        assert_eq!(r.source, OomSource::PyTorchCuda);
        assert_eq!(r.gpu_index, Some(0));
        assert_eq!(r.tried_to_allocate_bytes, Some(23_068_672)); // 22 × 2^20
        assert_eq!(r.total_capacity_bytes, Some(25_393_994_138)); // 23.65 × 2^30 = 25393994137.6
        assert_eq!(r.free_bytes, Some(11_597_251)); // 11.06 × 2^20 = 11597250.56
        assert_eq!(r.this_process_in_use_bytes, Some(25_340_307_046)); // 23.60 × 2^30 = 25340307046.4
        assert_eq!(r.allocated_by_pytorch_bytes, Some(24_588_687_770)); // 22.90 × 2^30 = 24588687769.6
        assert_eq!(r.reserved_unallocated_bytes, Some(204_336_005)); // 194.87 × 2^20 = 204336005.12
        assert_eq!(
            r.reserved_by_pytorch_bytes,
            Some(24_588_687_770 + 204_336_005)
        );
        assert!(r.other_processes.is_empty());
        // 22.90 GiB live of ~23.65: genuinely full; 195 MiB of fragments is below 256 MiB.
        assert_eq!(causes(&r), vec![Cause::GenuinelyOutOfMemory]);
    }

    #[test]
    fn lerf_73_fragmentation() {
        let r = parse(LERF_73).unwrap();
        assert_eq!(r.tried_to_allocate_bytes, Some(3_221_225_472)); // 3 × 2^30
        assert_eq!(r.total_capacity_bytes, Some(25_393_994_138)); // "capacty" typo still read
        assert_eq!(r.free_bytes, Some(1_782_411_428)); // 1.66 × 2^30 = 1782411427.84
        assert_eq!(r.this_process_in_use_bytes, Some(22_344_567_357)); // 20.81 × 2^30 = 22344567357.44
        assert_eq!(r.allocated_by_pytorch_bytes, Some(12_981_538_652)); // 12.09 × 2^30 = 12981538652.16
        assert_eq!(r.reserved_unallocated_bytes, Some(5_196_910_428)); // 4.84 × 2^30 = 5196910428.16
                                                                       // 4.84 GiB of fragments + 1.66 GiB free would cover the 3 GiB request.
        let f = diagnose(&r);
        assert_eq!(f[0].cause, Cause::Fragmentation);
        assert_eq!(f.len(), 1);
        assert!(f[0].fixes[0].contains("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
    }

    #[test]
    fn generateu_10_container_process_is_own() {
        let r = parse(GENERATEU_10).unwrap();
        assert_eq!(r.tried_to_allocate_bytes, Some(520_093_696)); // 496 × 2^20
        assert_eq!(r.total_capacity_bytes, Some(15_837_691_904)); // 14.75 × 2^30
        assert_eq!(r.free_bytes, Some(246_478_275)); // 235.06 × 2^20 = 246478274.56
        assert_eq!(r.other_processes, vec![(20398, 15_590_731_284)]); // 14.52 × 2^30 = 15590731284.48
        assert_eq!(r.this_process_in_use_bytes, None);
        assert_eq!(r.allocated_by_pytorch_bytes, Some(15_096_810_045)); // 14.06 × 2^30 = 15096810045.44
        assert_eq!(r.reserved_unallocated_bytes, Some(346_470_482)); // 330.42 × 2^20 = 346470481.92
                                                                     // Process 20398 (14.52 GiB) ≈ reserved (14.38 GiB): it is this process, not another one.
        let f = diagnose(&r);
        assert_eq!(f[0].cause, Cause::GenuinelyOutOfMemory);
        assert!(f[0].detail.contains("Process 20398"));
        assert!(!f.iter().any(|f| f.cause == Cause::OtherProcessHoldsMemory));
        // 496 MiB request on a full GPU 0, no other process: hint about other GPUs.
        assert_eq!(f.last().unwrap().cause, Cause::SingleGpuVisible);
    }

    #[test]
    fn keys_values_92_several_processes() {
        let r = parse(KEYS_VALUES_92).unwrap();
        assert_eq!(r.tried_to_allocate_bytes, Some(599_785_472)); // 572 × 2^20
        assert_eq!(r.total_capacity_bytes, Some(42_402_064_630)); // 39.49 × 2^30 = 42402064629.76
        assert_eq!(r.free_bytes, Some(336_917_955)); // 321.31 × 2^20 = 336917954.56
        assert_eq!(r.this_process_in_use_bytes, Some(40_222_368_727)); // 37.46 × 2^30 = 40222368727.04
        let p = 434_110_464; // 414 × 2^20
        assert_eq!(
            r.other_processes,
            vec![
                (3_721_648, p),
                (1_374_765, p),
                (1_374_763, p),
                (1_374_764, p)
            ]
        );
        assert_eq!(r.allocated_by_pytorch_bytes, Some(38_697_655_337)); // 36.04 × 2^30 = 38697655336.96
        assert_eq!(r.reserved_unallocated_bytes, Some(336_980_869)); // 321.37 × 2^20 = 336980869.12
        let f = diagnose(&r);
        assert_eq!(f[0].cause, Cause::GenuinelyOutOfMemory);
        // 4 × 414 MiB held by other processes > the 251 MiB shortfall.
        let other = f
            .iter()
            .find(|f| f.cause == Cause::OtherProcessHoldsMemory)
            .unwrap();
        assert!(other.detail.contains("PID 3721648"));
        assert!(other
            .fixes
            .iter()
            .any(|x| x.contains("set_device(local_rank)")));
        assert!(!f.iter().any(|f| f.cause == Cause::SingleGpuVisible));
    }

    #[test]
    fn cads_4_fragmented_and_too_big() {
        let r = parse(CADS_4).unwrap();
        assert_eq!(r.tried_to_allocate_bytes, Some(24_459_838_751)); // 22.78 × 2^30 = 24459838750.72
        assert_eq!(r.total_capacity_bytes, Some(33_790_655_201)); // 31.47 × 2^30 = 33790655201.28
        assert_eq!(r.free_bytes, Some(13_668_733_420)); // 12.73 × 2^30 = 13668733419.52
        assert_eq!(r.this_process_in_use_bytes, Some(20_111_184_364)); // 18.73 × 2^30 = 20111184363.52
        assert_eq!(r.allocated_by_pytorch_bytes, Some(9_749_575_762)); // 9.08 × 2^30 = 9749575761.92
        assert_eq!(r.reserved_unallocated_bytes, Some(10_039_486_054)); // 9.35 × 2^30 = 10039486054.4
                                                                        // 9.08 + 22.78 = 31.86 GiB > 31.47 GiB; 9.35 GiB of fragments is 30 % of the card.
        assert_eq!(
            causes(&r),
            vec![Cause::GenuinelyOutOfMemory, Cause::Fragmentation]
        );
    }

    #[test]
    fn control_gic_6_request_larger_than_gpu() {
        let r = parse(CONTROL_GIC_6).unwrap();
        assert_eq!(r.tried_to_allocate_bytes, Some(121_214_714_511)); // 112.89 × 2^30 = 121214714511.36
        assert_eq!(r.total_capacity_bytes, Some(84_975_927_951)); // 79.14 × 2^30 = 84975927951.36
        assert_eq!(r.free_bytes, Some(62_910_533_468)); // 58.59 × 2^30 = 62910533468.16
        assert_eq!(r.other_processes, vec![(4_078_482, 12_122_545_193)]); // 11.29 × 2^30 = 12122545192.96
        assert_eq!(r.this_process_in_use_bytes, Some(9_932_111_872)); // 9.25 × 2^30
        assert_eq!(r.allocated_by_pytorch_bytes, Some(8_879_844_884)); // 8.27 × 2^30 = 8879844884.48
        assert_eq!(r.reserved_unallocated_bytes, Some(524_686_459)); // 500.38 × 2^20 = 524686458.88
        let f = diagnose(&r);
        assert_eq!(f[0].cause, Cause::GenuinelyOutOfMemory);
        assert!(f[0].headline.contains("larger than the whole GPU"));
        // 11.29 GiB held by PID 4078482 is > 10 % of the card: reported second.
        assert_eq!(f[1].cause, Cause::OtherProcessHoldsMemory);
        assert_eq!(f.len(), 2);
    }

    #[test]
    fn mgfn_35_zero_bytes_free() {
        let r = parse(MGFN_35).unwrap();
        assert_eq!(r.tried_to_allocate_bytes, Some(1_825_361_101)); // 1.70 × 2^30 = 1825361100.8
        assert_eq!(r.total_capacity_bytes, Some(6_442_450_944)); // 6 × 2^30
        assert_eq!(r.free_bytes, Some(0)); // "0 bytes"
        assert_eq!(r.allocated_by_pytorch_bytes, Some(3_146_063_544)); // 2.93 × 2^30 = 3146063544.32
        assert_eq!(r.reserved_unallocated_bytes, Some(2_469_606_195)); // 2.30 × 2^30 = 2469606195.2
        assert_eq!(
            r.reserved_by_pytorch_bytes,
            Some(3_146_063_544 + 2_469_606_195)
        );
        // 2.30 GiB of fragments would cover the 1.70 GiB request.
        assert_eq!(causes(&r), vec![Cause::Fragmentation]);
    }

    #[test]
    fn pt1_59778() {
        let r = parse(PT1_59778).unwrap();
        assert_eq!(r.source, OomSource::PyTorchCuda);
        assert_eq!(r.gpu_index, Some(0));
        assert_eq!(r.tried_to_allocate_bytes, Some(2_426_656_522)); // 2.26 × 2^30 = 2426656522.24
        assert_eq!(r.total_capacity_bytes, Some(6_442_450_944)); // 6 × 2^30
        assert_eq!(r.allocated_by_pytorch_bytes, Some(819_556_516)); // 781.59 × 2^20 = 819556515.84
        assert_eq!(r.free_bytes, Some(3_253_437_727)); // 3.03 × 2^30 = 3253437726.72
        assert_eq!(r.reserved_by_pytorch_bytes, Some(1_331_439_862)); // 1.24 × 2^30 = 1331439861.76
        assert_eq!(
            r.reserved_unallocated_bytes,
            Some(1_331_439_862 - 819_556_516)
        );
        assert_eq!(r.this_process_in_use_bytes, None);
        // 6.00 − 3.03 − 1.24 = 1.73 GiB not explained by this process.
        assert_eq!(causes(&r), vec![Cause::OtherProcessHoldsMemory]);
        assert!(diagnose(&r)[0]
            .detail
            .contains("more free memory than requested"));
    }

    #[test]
    fn sd_702_zero_bytes_free_1x() {
        let r = parse(SD_702).unwrap();
        assert_eq!(r.tried_to_allocate_bytes, Some(201_326_592)); // 192 × 2^20
        assert_eq!(r.total_capacity_bytes, Some(4_294_967_296)); // 4 × 2^30
        assert_eq!(r.allocated_by_pytorch_bytes, Some(3_307_124_818)); // 3.08 × 2^30 = 3307124817.92
        assert_eq!(r.free_bytes, Some(0));
        assert_eq!(r.reserved_by_pytorch_bytes, Some(3_725_884_129)); // 3.47 × 2^30 = 3725884129.28
                                                                      // 3.08 + 0.19 GiB of the ~3.47 GiB usable (4 GiB minus ~0.5 GiB context), and
                                                                      // 0.39 GiB of fragments ≥ the 192 MiB request.
        assert_eq!(
            causes(&r),
            vec![Cause::GenuinelyOutOfMemory, Cause::Fragmentation]
        );
    }

    #[test]
    fn gengraph_5_cached_and_kib() {
        let r = parse(GENGRAPH_5).unwrap();
        assert_eq!(r.tried_to_allocate_bytes, Some(1_048_576)); // 1024.00 KiB = 1024 × 2^10
        assert_eq!(r.total_capacity_bytes, Some(11_993_696_174)); // 11.17 × 2^30 = 11993696174.08
        assert_eq!(r.allocated_by_pytorch_bytes, Some(11_703_785_882)); // 10.90 × 2^30 = 11703785881.6
        assert_eq!(r.free_bytes, Some(589_824)); // 576 × 2^10
        assert_eq!(r.reserved_unallocated_bytes, Some(32_463_913)); // 30.96 × 2^20 = 32463912.96
        assert_eq!(
            r.reserved_by_pytorch_bytes,
            Some(11_703_785_882 + 32_463_913)
        );
        assert_eq!(causes(&r), vec![Cause::GenuinelyOutOfMemory]);
    }

    #[test]
    fn centerx_51_gpu1_glued_prefix() {
        let r = parse(CENTERX_51).unwrap();
        assert_eq!(r.source, OomSource::PyTorchCuda);
        assert_eq!(r.gpu_index, Some(1));
        assert_eq!(r.tried_to_allocate_bytes, Some(136_314_880)); // 130 × 2^20
        assert_eq!(r.total_capacity_bytes, Some(8_375_186_227)); // 7.80 × 2^30 = 8375186227.2
        assert_eq!(r.allocated_by_pytorch_bytes, Some(6_345_814_180)); // 5.91 × 2^30 = 6345814179.84
        assert_eq!(r.free_bytes, Some(35_190_211)); // 33.56 × 2^20 = 35190210.56
        assert_eq!(r.reserved_by_pytorch_bytes, Some(6_539_087_708)); // 6.09 × 2^30 = 6539087708.16
                                                                      // 7.80 − 6.09 − 0.03 = 1.68 GiB unexplained: another process (beyond a 1 GiB context allowance)
        let c = causes(&r);
        assert!(c.contains(&Cause::OtherProcessHoldsMemory));
        assert!(c.contains(&Cause::GenuinelyOutOfMemory));
        assert!(!c.contains(&Cause::SingleGpuVisible)); // it is GPU 1
    }

    #[test]
    fn hip_strix_3() {
        let r = parse(HIP_STRIX_3).unwrap();
        assert_eq!(r.source, OomSource::PyTorchHip);
        assert_eq!(r.tried_to_allocate_bytes, Some(3_554_085_437)); // 3.31 × 2^30 = 3554085437.44
        assert_eq!(r.total_capacity_bytes, Some(137_438_953_472)); // 128 × 2^30
        assert_eq!(r.free_bytes, Some(818_140_938)); // 780.24 × 2^20 = 818140938.24
        assert_eq!(r.allocated_by_pytorch_bytes, Some(61_954_903_245)); // 57.70 × 2^30 = 61954903244.8
        assert_eq!(r.reserved_unallocated_bytes, Some(79_503_032)); // 75.82 × 2^20 = 79503032.32
                                                                    // ~69 GiB of the 128 GiB unified memory is used by something else.
        let f = diagnose(&r);
        assert_eq!(f[0].cause, Cause::OtherProcessHoldsMemory);
        assert!(f.iter().any(|f| f.cause == Cause::GenuinelyOutOfMemory));
        assert!(!f.iter().any(|f| f.cause == Cause::Fragmentation));
        assert!(!f.iter().any(|f| f.cause == Cause::SingleGpuVisible));
    }

    #[test]
    fn hip_therock_1054_request_above_capacity() {
        let r = parse(HIP_THEROCK_1054).unwrap();
        assert_eq!(r.source, OomSource::PyTorchHip);
        assert_eq!(r.tried_to_allocate_bytes, Some(17_179_869_184)); // 16 × 2^30
        assert_eq!(r.total_capacity_bytes, Some(16_363_825_398)); // 15.24 × 2^30 = 16363825397.76
        assert_eq!(r.free_bytes, Some(16_202_764_124)); // 15.09 × 2^30 = 16202764124.16
        assert_eq!(r.allocated_by_pytorch_bytes, Some(0));
        assert_eq!(r.reserved_unallocated_bytes, Some(0));
        let f = diagnose(&r);
        assert_eq!(causes(&r), vec![Cause::GenuinelyOutOfMemory]);
        assert!(f[0].fixes.iter().any(|x| x.contains("no memory setting")));
    }

    #[test]
    fn hip_therock_2118_allowed_and_private_pools() {
        let r = parse(HIP_THEROCK_2118).unwrap();
        assert_eq!(r.source, OomSource::PyTorchHip);
        assert_eq!(r.tried_to_allocate_bytes, Some(2_097_152)); // 2 × 2^20
        assert_eq!(r.total_capacity_bytes, Some(309_216_170_476)); // 287.98 × 2^30 = 309216170475.52
        assert_eq!(r.free_bytes, Some(296_202_419_569)); // 275.86 × 2^30 = 296202419568.64
                                                         // private pools are already included in "allocated by PyTorch"
        assert_eq!(r.allocated_by_pytorch_bytes, Some(1_066_412_278)); // 1017.01 × 2^20 = 1066412277.76
        assert_eq!(r.reserved_unallocated_bytes, Some(57_661_194)); // 54.99 × 2^20 = 57661194.24
                                                                    // Free memory exceeds the request: the detail points at the per-process limit.
        let f = diagnose(&r);
        assert_eq!(f[0].cause, Cause::OtherProcessHoldsMemory);
        assert!(f[0].detail.contains("set_per_process_memory_fraction"));
    }

    #[test]
    fn mps_gb_is_binary() {
        let r = parse(MPS_RLSWARM_355).unwrap();
        assert_eq!(r.source, OomSource::PyTorchMps);
        assert_eq!(r.allocated_by_pytorch_bytes, Some(13_679_470_838)); // 12.74 × 2^30 = 13679470837.76
        assert_eq!(
            r.this_process_in_use_bytes,
            Some(13_679_470_838 + 4_713_726_607)
        ); // + 4.39 × 2^30 = 4713726607.36
        assert_eq!(r.total_capacity_bytes, Some(19_466_939_269)); // 18.13 × 2^30 = 19466939269.12
        assert_eq!(r.tried_to_allocate_bytes, Some(1_095_216_660)); // 1.02 × 2^30 = 1095216660.48
        assert_eq!(r.gpu_index, None);
        let f = diagnose(&r);
        assert_eq!(f[0].cause, Cause::GenuinelyOutOfMemory);
        assert!(f[0]
            .fixes
            .iter()
            .any(|x| x.contains("PYTORCH_MPS_HIGH_WATERMARK_RATIO")));
    }

    #[test]
    fn mps_gib_and_mb_variants() {
        let r = parse(MPS_COMFY_8984).unwrap();
        assert_eq!(r.allocated_by_pytorch_bytes, Some(16_879_221_473)); // 15.72 × 2^30 = 16879221473.28
        assert_eq!(
            r.this_process_in_use_bytes,
            Some(16_879_221_473 + 2_527_068)
        ); // + 2.41 × 2^20 = 2527068.16
        assert_eq!(r.total_capacity_bytes, Some(19_466_939_269)); // 18.13 × 2^30
        assert_eq!(r.tried_to_allocate_bytes, Some(6_238_439_997)); // 5.81 × 2^30 = 6238439997.44

        let r = parse(MPS_FOOOCUS_1139).unwrap();
        assert_eq!(r.allocated_by_pytorch_bytes, Some(9_545_564_815)); // 8.89 × 2^30 = 9545564815.36
        assert_eq!(
            r.this_process_in_use_bytes,
            Some(9_545_564_815 + 181_382_676)
        ); // + 172.98 × 2^20 = 181382676.48
        assert_eq!(r.total_capacity_bytes, Some(9_738_838_344)); // 9.07 × 2^30 = 9738838343.68
        assert_eq!(r.tried_to_allocate_bytes, Some(6_553_600)); // 6.25 × 2^20
        assert_eq!(causes(&r), vec![Cause::GenuinelyOutOfMemory]);
    }

    #[test]
    fn cublas_and_driver() {
        let r = parse(CUBLAS_QWEN_873).unwrap();
        assert_eq!(r.source, OomSource::Cublas);
        assert_eq!(r, OomReport::empty(OomSource::Cublas));
        assert_eq!(
            causes(&r),
            vec![Cause::OtherProcessHoldsMemory, Cause::GenuinelyOutOfMemory]
        );

        let r = parse(DRIVER_WAN_565).unwrap();
        assert_eq!(r.source, OomSource::CudaDriver);
        assert_eq!(r.tried_to_allocate_bytes, None);
        let f = diagnose(&r);
        assert!(
            f[0].fixes[0].contains("nvidia-smi --query-compute-apps=pid,used_memory --format=csv")
        );
    }

    #[test]
    fn vllm_no_cache_blocks() {
        let r = parse(VLLM_NOBLOCKS_10439).unwrap();
        assert_eq!(r.source, OomSource::VllmNoCacheBlocks);
        assert_eq!(r.gpu_memory_utilization, None);
        assert_eq!(causes(&r), vec![Cause::NoMemoryLeftForKvCache]);
    }

    #[test]
    fn vllm_v0_max_seq_len() {
        let r = parse(VLLM_V0_2418).unwrap();
        assert_eq!(r.source, OomSource::VllmMaxSeqLenTooLarge);
        assert_eq!(r.max_model_len, Some(4096));
        assert_eq!(r.kv_cache_max_tokens, Some(3664));
        let f = diagnose(&r);
        assert_eq!(f[0].cause, Cause::KvPoolTooSmall);
        // 3664 rounded down to a multiple of 256
        assert!(
            f[0].fixes[0].contains("--max-model-len 3584"),
            "{:?}",
            f[0].fixes
        );
        assert!(f[0].fixes[1].contains("--kv-cache-dtype fp8"));

        let r = parse(VLLM_V0_10517).unwrap();
        assert_eq!(r.max_model_len, Some(29000));
        assert_eq!(r.kv_cache_max_tokens, Some(23648));
        assert_eq!(r.gpu_memory_utilization, Some(0.90)); // from the profiling line
        let f = diagnose(&r);
        assert!(f[0].fixes[0].contains("--max-model-len 23552")); // 23 × 1024
        assert!(f[0].fixes.iter().any(|x| x.contains("(now 0.9)")));
    }

    #[test]
    fn vllm_v1_kv_cache() {
        let r = parse(VLLM_V1_TPU_223).unwrap();
        assert_eq!(r.source, OomSource::VllmMaxSeqLenTooLarge);
        assert_eq!(r.max_model_len, Some(131_072));
        assert_eq!(r.kv_needed_bytes, Some(17_179_869_184)); // 16 × 2^30
        assert_eq!(r.kv_available_bytes, Some(762_356_695)); // 0.71 × 2^30 = 762356695.04
        assert_eq!(r.estimated_max_model_len, Some(5632));
        let f = diagnose(&r);
        assert_eq!(f[0].cause, Cause::KvPoolTooSmall);
        assert!(f[0].fixes[0].contains("--max-model-len 5120")); // 5632 → 5 × 1024
        assert!(f[0].fixes[1].contains("about 11264 tokens")); // 2 × 5632 = 11264 = 11 × 1024

        let r = parse(VLLM_V1_16118).unwrap();
        assert_eq!(r.max_model_len, Some(1_048_576));
        assert_eq!(r.kv_needed_bytes, Some(25_769_803_776)); // 24 × 2^30
        assert_eq!(r.kv_available_bytes, Some(10_705_205_985)); // 9.97 × 2^30 = 10705205985.28
        assert_eq!(r.estimated_max_model_len, None);
        // 1048576 × 10705205985 / 25769803776 = 435595.9 → 435595 → 435200 (425 × 1024)
        let f = diagnose(&r);
        assert!(
            f[0].fixes[0].contains("--max-model-len 435200"),
            "{:?}",
            f[0].fixes
        );
    }

    #[test]
    fn vllm_free_memory_at_startup() {
        let r = parse(VLLM_FREE_175666).unwrap();
        assert_eq!(r.source, OomSource::VllmFreeMemoryAtStartup);
        assert_eq!(r.gpu_index, Some(1));
        assert_eq!(r.free_bytes, Some(21_227_875_860)); // 19.77 × 2^30 = 21227875860.48
        assert_eq!(r.total_capacity_bytes, Some(23_676_007_219)); // 22.05 × 2^30 = 23676007219.2
        assert_eq!(r.gpu_memory_utilization, Some(0.9));
        let f = diagnose(&r);
        assert_eq!(f[0].cause, Cause::StartupFreeMemoryTooLow);
        // 19.77 / 22.05 = 0.8966 − 0.01 → 0.88
        assert!(
            f[0].fixes[0].contains("--gpu-memory-utilization 0.88"),
            "{:?}",
            f[0].fixes
        );

        let r = parse(VLLM_FREE_20305).unwrap();
        assert_eq!(r.gpu_index, None);
        assert_eq!(r.free_bytes, Some(33_758_442_947)); // 31.44 × 2^30 = 33758442946.56
        assert_eq!(r.total_capacity_bytes, Some(50_873_887_621)); // 47.38 × 2^30 = 50873887621.12
        assert_eq!(r.gpu_memory_utilization, Some(0.95));
        // 31.44 / 47.38 = 0.6636 − 0.01 → 0.65
        assert!(diagnose(&r)[0].fixes[0].contains("--gpu-memory-utilization 0.65"));

        let r = parse(VLLM_FREE_23192).unwrap();
        assert_eq!(r.free_bytes, Some(7_881_264_988)); // 7.34 × 2^30 = 7881264988.16
        assert_eq!(r.total_capacity_bytes, Some(150_023_207_649)); // 139.72 × 2^30 = 150023207649.28
                                                                   // only 5 % free: no utilisation is suggested, the GPU has to be freed
        let f = diagnose(&r);
        assert!(!f[0]
            .fixes
            .iter()
            .any(|x| x.contains("Ask for what is free")));
        assert!(f[0].fixes[0].contains("nvidia-smi"));
    }

    #[test]
    fn fp32_hint() {
        // PT2_16417: 22.90 GiB allocated; a 6.1 B-parameter model in fp32 is 24.4 GB ≈ that.
        let r = parse(PT2_16417).unwrap();
        let hints = Hints {
            model_parameters: Some(6_100_000_000),
        };
        let f = diagnose_with(&r, &hints);
        assert_eq!(f[0].cause, Cause::GenuinelyOutOfMemory);
        assert_eq!(f[1].cause, Cause::Fp32Suspected);
        assert!(f[1].fixes[0].contains("torch_dtype=torch.bfloat16"));
        // a 12 B model in bf16 would be 24 GB: not fp32
        let hints = Hints {
            model_parameters: Some(12_000_000_000),
        };
        assert!(!diagnose_with(&r, &hints)
            .iter()
            .any(|f| f.cause == Cause::Fp32Suspected));
        // no allocated bytes in vLLM messages: never suggested
        let r = parse(VLLM_V0_2418).unwrap();
        assert!(!diagnose_with(&r, &hints)
            .iter()
            .any(|f| f.cause == Cause::Fp32Suspected));
    }

    #[test]
    fn brief_examples() {
        let text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 3.06 MiB is free. Process 1234 has 23.64 GiB memory in use. Including non-PyTorch memory, this process has 23.63 GiB memory in use. Of the allocated memory 22.97 GiB is allocated by PyTorch, and 265.82 MiB is reserved by PyTorch but unallocated.";
        let r = parse(text).unwrap();
        assert_eq!(r.other_processes, vec![(1234, 25_383_256_719)]); // 23.64 × 2^30 = 25383256719.36
        assert_eq!(r.this_process_in_use_bytes, Some(25_372_519_301)); // 23.63 × 2^30 = 25372519301.12
        assert_eq!(r.free_bytes, Some(3_208_643)); // 3.06 × 2^20 = 3208642.56

        let text = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.15 GiB total capacity; 12.34 GiB already allocated; 0 bytes free; 1.05 GiB allowed; 13.00 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb";
        let r = parse(text).unwrap();
        assert_eq!(r.total_capacity_bytes, Some(84_986_665_370)); // 79.15 × 2^30 = 84986665369.6
        assert_eq!(r.free_bytes, Some(0));
        assert_eq!(r.reserved_by_pytorch_bytes, Some(13 * GIB));

        let text = "ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (45000). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
        let r = parse(text).unwrap();
        assert_eq!(
            (r.max_model_len, r.kv_cache_max_tokens),
            (Some(131_072), Some(45_000))
        );
    }

    #[test]
    fn units_and_rounding() {
        let size = |t: &str| parse_size(t, 0).map(|x| x.0);
        assert_eq!(size("0 bytes"), Some(0));
        assert_eq!(size("1024 bytes"), Some(1024));
        assert_eq!(size("1 b"), Some(1));
        assert_eq!(size("1.5 kib"), Some(1536));
        assert_eq!(size("0.005 kib"), Some(5)); // 5.12 → 5
        assert_eq!(size("0.0005 kib"), Some(1)); // 0.512 → 1 (nearest)
        assert_eq!(size("2 tib"), Some(2 * TIB));
        assert_eq!(size("1.00 gb"), Some(GIB));
        assert_eq!(size("12 parsecs"), None);
        assert_eq!(size("12"), None);
        assert_eq!(size("abc gib"), None);
        // saturation instead of overflow
        assert_eq!(
            size("99999999999999999999999999999999999999999999 gib"),
            Some(u64::MAX)
        );
        assert_eq!(size("18446744073709551616 bytes"), Some(u64::MAX));
        assert_eq!(size("17179869184.00 gib"), Some(u64::MAX)); // exactly 2^64
                                                                // 2^64 − 0.01 × 2^30 = 18446744073698814197.76, still representable
        assert_eq!(size("17179869183.99 gib"), Some(18_446_744_073_698_814_198));
        // 1.123456789012345678 (18 digits kept) × 2^30 = 1206302541.819… → 1206302542
        assert_eq!(
            size("1.123456789012345678901234567890 gib"),
            Some(1_206_302_542)
        );
        assert_eq!(parse_uint("99999999999999999999", 0), None);
        assert_eq!(parse_fraction("1.5", 0), None);
        assert_eq!(parse_fraction("0.92", 0), Some(0.92));
    }

    #[test]
    fn not_oom_messages() {
        for t in [
            "",
            " ",
            "\n\n\t",
            "all good",
            "Tried to allocate 20.00 MiB",
            "memory",
            "XPU out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 3.00 GiB",
            "INFO Free memory on device (110.37/121.69 GiB) on startup. Desired GPU memory utilization is (0.87, 105.87 GiB).",
            "ｃｕｄａ ｏｕｔ ｏｆ ｍｅｍｏｒｙ",
        ] {
            assert_eq!(parse(t), Err(OomParseError::NotAnOomMessage), "{t:?}");
        }
        let e = OomParseError::NotAnOomMessage.to_string();
        assert!(e.contains("CUDA out of memory"));
    }

    #[test]
    fn case_and_whitespace_tolerant() {
        let wrapped = PT1_59778.replace("; ", ";\n   ").to_uppercase();
        let r = parse(&wrapped).unwrap();
        assert_eq!(r.reserved_by_pytorch_bytes, Some(1_331_439_862));
        // a log with two messages: the last one wins
        let two = format!("{LERF_73}\n{PT2_16417}");
        assert_eq!(parse(&two).unwrap(), parse(PT2_16417).unwrap());
    }

    #[test]
    fn truncations_never_panic() {
        for m in ALL {
            assert!(parse(m).is_ok(), "{m}");
            for (i, _) in m.char_indices() {
                for t in [&m[..i], &m[i..]] {
                    if let Ok(r) = parse(t) {
                        let f = diagnose_with(
                            &r,
                            &Hints {
                                model_parameters: Some(1),
                            },
                        );
                        assert!(!f.is_empty());
                    }
                }
            }
        }
    }

    #[test]
    fn mutations_never_panic() {
        let junk = [
            "é",
            "😀",
            "\u{0}",
            "9999999999999999999999999",
            ".",
            "(",
            ")",
            ";",
            " ",
            "gib",
        ];
        for m in ALL {
            let chars: Vec<(usize, char)> = m.char_indices().collect();
            for (k, &(i, _)) in chars.iter().enumerate().step_by(3) {
                let j = junk[k % junk.len()];
                let inserted = format!("{}{}{}", &m[..i], j, &m[i..]);
                let replaced_digits = m.replace(|c: char| c.is_ascii_digit(), j);
                for t in [inserted, replaced_digits] {
                    if let Ok(r) = parse(&t) {
                        let _ = diagnose(&r);
                    }
                }
            }
        }
    }

    #[test]
    fn huge_and_hostile_inputs() {
        // Far beyond the cap; the message past 1 MiB is not seen.
        let big = format!("{}{}", "x".repeat(MAX_SCAN_BYTES), PT2_16417);
        assert_eq!(parse(&big), Err(OomParseError::NotAnOomMessage));
        // The cap falls inside a multi-byte character.
        let mut odd = "é".repeat(MAX_SCAN_BYTES / 2 + 7);
        odd.insert_str(0, PT2_16417);
        assert!(parse(&odd).is_ok());
        // Thousands of process entries and anchors.
        let procs = "Process 1 has 1.00 GiB memory in use. ".repeat(20_000);
        let text = format!("CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 8.00 GiB of which 0 bytes is free. {procs}Of the allocated memory 1.00 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.");
        let r = parse(&text).unwrap();
        assert!(r.other_processes.len() <= MAX_PROCESSES);
        assert!(!diagnose(&r).is_empty());
        let anchors = "out of memory. tried to allocate ".repeat(40_000);
        assert!(parse(&anchors).is_ok());
        let digits = format!(
            "CUDA out of memory. Tried to allocate {} GiB. GPU {} has a total capacity of {} GiB",
            "9".repeat(10_000),
            "7".repeat(50),
            "1".repeat(30)
        );
        let r = parse(&digits).unwrap();
        assert_eq!(r.tried_to_allocate_bytes, Some(u64::MAX));
        assert_eq!(r.gpu_index, None);
        assert_eq!(r.total_capacity_bytes, Some(u64::MAX));
        let _ = diagnose(&r);
        let ws = " \t\n".repeat(300_000);
        assert!(parse(&ws).is_err());
        let uni = "ü😀\u{200b}\u{feff}".repeat(100_000);
        assert!(parse(&uni).is_err());
    }

    #[test]
    fn serializes() {
        let r = parse(KEYS_VALUES_92).unwrap();
        let json = serde_json::to_string(&r).unwrap();
        assert!(json.contains("\"source\":\"PyTorchCuda\""));
        assert!(json.contains("[3721648,434110464]"));
        let f = serde_json::to_string(&diagnose(&r)).unwrap();
        assert!(f.contains("GenuinelyOutOfMemory"));
    }

    #[test]
    fn reads_back_what_it_writes() {
        // The web app's import worker sends reports and findings to the page as JSON.
        let torch = parse(KEYS_VALUES_92).unwrap();
        let vllm = parse(VLLM_V0_10517).unwrap();
        assert!(torch.other_processes.len() == 4 && vllm.gpu_memory_utilization == Some(0.9));
        for r in [torch, vllm] {
            let json = serde_json::to_string(&r).unwrap();
            let back: OomReport = serde_json::from_str(&json).unwrap();
            assert_eq!(back, r);
            let f = diagnose(&r);
            assert!(!f.is_empty());
            let json = serde_json::to_string(&f).unwrap();
            let back: Vec<Finding> = serde_json::from_str(&json).unwrap();
            assert_eq!(back, f);
        }
    }
}
