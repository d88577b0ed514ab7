//! The scanner and the message parsers: [`parse`] finds the one recognisable
//! out-of-memory message in pasted text and reads its numbers into an
//! [`OomReport`].
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

#[cfg(feature = "oom")]
use super::{GIB, KIB, MIB, TIB};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Longest prefix of the input that [`parse`] examines: 1 MiB. Longer input
/// is cut on the last UTF-8 character boundary at or below this length.
pub const MAX_SCAN_BYTES: usize = 1 << 20;

/// How far past the start of an allocator message its fields are looked for.
#[cfg(feature = "oom")]
const MESSAGE_WINDOW: usize = 64 * 1024;
/// At most this many `Process N has …` entries are kept.
#[cfg(feature = "oom")]
pub(super) const MAX_PROCESSES: usize = 4096;
/// Fractional digits beyond this are ignored when converting a number.
#[cfg(feature = "oom")]
const MAX_FRAC_DIGITS: u32 = 18;
/// Longest unit word accepted after a number (`bytes` is 5).
#[cfg(feature = "oom")]
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

/// The program that loaded the model, as far as the pasted text shows (`oom/parse/mentions.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Loader {
    /// Hugging Face Transformers (`from_pretrained`, `modeling_utils.py`).
    Transformers,
    /// vLLM.
    Vllm,
    /// SGLang.
    Sglang,
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
    /// The model the text names (`Can't load the model for 'X'`, `from_pretrained('X')`,
    /// `vllm serve X`, `--model X`, a Hugging Face cache path or URL), as written.
    #[serde(default)]
    pub model: Option<String>,
    /// Every device index the text names (`GPU n`, `cuda:n`), in order of first appearance.
    #[serde(default)]
    pub gpu_indices: Vec<u32>,
    /// The loader the text shows, if any.
    #[serde(default)]
    pub loader: Option<Loader>,
    /// The value of a `device_map=` in the text (`auto`, `cuda:0`, …).
    #[serde(default)]
    pub device_map: Option<String>,
    /// The value of a `torch_dtype=` / `dtype=` / `--dtype` in the text.
    #[serde(default)]
    pub dtype: Option<String>,
}

#[cfg(feature = "oom")]
impl OomReport {
    pub(super) fn empty(source: OomSource) -> Self {
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
            model: None,
            gpu_indices: Vec::new(),
            loader: None,
            device_map: None,
            dtype: None,
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

/// Finds the out-of-memory message in `text` and reads its numbers.
///
/// Accepts any text (a whole log is fine); only the first [`MAX_SCAN_BYTES`]
/// are examined. Never panics. The messages recognised and the unit
/// conventions are described in this module's docs (`oom/parse.rs`).
///
/// # Errors
///
/// [`OomParseError::NotAnOomMessage`] when none of the recognised messages
/// occurs in the text.
#[cfg(feature = "oom")]
pub fn parse(text: &str) -> Result<OomReport, OomParseError> {
    let normalized = normalize(text);
    let s = normalized.as_str();
    let mut r = parse_vllm(s)
        .or_else(|| parse_allocator(s))
        .or_else(|| parse_mps(s))
        .or_else(|| parse_bare_allocator(s))
        .or_else(|| parse_cublas(s))
        .or_else(|| parse_driver(s))
        .ok_or(OomParseError::NotAnOomMessage)?;
    if r.total_capacity_bytes.is_none() && r.source != OomSource::PyTorchMps {
        read_loose_capacity(s, &mut r);
    }
    mentions::read(text, &mut r);
    if r.gpu_index.is_none() {
        if let [only] = r.gpu_indices[..] {
            r.gpu_index = Some(only);
        }
    }
    Ok(r)
}

/// A capacity written outside an allocator message's own layout (a short or cut message):
/// `[GPU n; ]X total capacity` or `total capacity of X`, the last one in the text.
#[cfg(feature = "oom")]
fn read_loose_capacity(s: &str, r: &mut OomReport) {
    let before = s.rfind(" total capacity").and_then(|i| {
        // the number and unit right before: "79.15 gib total capacity"
        let head = &s[floor_boundary(s, i.saturating_sub(32))..i];
        let start = head.rfind([';', '(']).map_or(0, |k| k + 1);
        let seg = head[start..].trim();
        parse_size(seg, 0)
            .filter(|&(_, e)| e == seg.len())
            .map(|(b, _)| (i, b))
    });
    let after = s
        .rfind("total capacity of ")
        .and_then(|i| parse_size(s, i + "total capacity of ".len()).map(|(b, _)| (i, b)));
    let best = match (before, after) {
        (Some(a), Some(b)) => Some(if a.0 > b.0 { a } else { b }),
        (a, b) => a.or(b),
    };
    r.total_capacity_bytes = best.map(|(_, b)| b);
}

/// Caps the input, lower-cases ASCII and collapses whitespace runs to one space.
#[cfg(feature = "oom")]
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
#[cfg(feature = "oom")]
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

#[cfg(feature = "oom")]
fn find_from(s: &str, from: usize, pat: &str) -> Option<usize> {
    s.get(from..)?.find(pat).map(|i| i + from)
}

#[cfg(feature = "oom")]
fn after(s: &str, from: usize, pat: &str) -> Option<usize> {
    find_from(s, from, pat).map(|i| i + pat.len())
}

#[cfg(feature = "oom")]
fn skip_spaces(s: &str, mut i: usize) -> usize {
    while s.as_bytes().get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

#[cfg(feature = "oom")]
fn byte_at(s: &str, i: usize) -> Option<u8> {
    s.as_bytes().get(i).copied()
}

/// A decimal number as printed: `mantissa / 10^frac_digits`.
#[cfg(feature = "oom")]
#[derive(Debug, Clone, Copy)]
struct Decimal {
    mantissa: u128,
    frac_digits: u32,
    saturated: bool,
}

#[cfg(feature = "oom")]
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
#[cfg(feature = "oom")]
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
#[cfg(feature = "oom")]
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
#[cfg(feature = "oom")]
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

#[cfg(feature = "oom")]
fn parse_u32(s: &str, start: usize) -> Option<u32> {
    parse_uint(s, start).and_then(|(v, _)| u32::try_from(v).ok())
}

/// Reads a float such as `0.9`; only finite values in `0..=1` are accepted.
#[cfg(feature = "oom")]
fn parse_fraction(s: &str, start: usize) -> Option<f64> {
    let (_, end) = parse_decimal(s, start)?;
    let v = crate::decimal::parse_f64(s.get(start..end)?)?;
    (v.is_finite() && (0.0..=1.0).contains(&v)).then_some(v)
}

#[cfg(feature = "oom")]
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
#[cfg(feature = "oom")]
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
#[cfg(feature = "oom")]
fn parse_size(s: &str, start: usize) -> Option<(u64, usize)> {
    let (d, e) = parse_decimal(s, skip_spaces(s, start))?;
    let (unit, e) = parse_unit(s, skip_spaces(s, e))?;
    Some((d.times(unit), e))
}

#[cfg(feature = "oom")]
fn parse_size_after(s: &str, from: usize, pat: &str) -> Option<(u64, usize)> {
    parse_size(s, after(s, from, pat)?)
}

/// Window `[start, start + len)` of `s`, cut on char boundaries.
#[cfg(feature = "oom")]
fn window(s: &str, start: usize, len: usize) -> &str {
    let end = floor_boundary(s, start.saturating_add(len));
    s.get(start..end).unwrap_or("")
}

/// The word (ASCII letters) right before `pos`, skipping one space.
#[cfg(feature = "oom")]
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

#[cfg(feature = "oom")]
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
#[cfg(feature = "oom")]
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
#[cfg(feature = "oom")]
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

#[cfg(feature = "oom")]
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

#[cfg(feature = "oom")]
fn parse_bare_allocator(s: &str) -> Option<OomReport> {
    let cuda = s
        .rfind("cuda out of memory")
        .or_else(|| s.rfind("torch.outofmemoryerror"))
        .or_else(|| s.rfind("torch.cuda.outofmemoryerror"));
    let hip = s.rfind("hip out of memory");
    let source = match (cuda, hip) {
        (Some(c), Some(h)) if h > c => OomSource::PyTorchHip,
        (Some(_), _) => OomSource::PyTorchCuda,
        (None, Some(_)) => OomSource::PyTorchHip,
        (None, None) => return None,
    };
    Some(OomReport::empty(source))
}

#[cfg(feature = "oom")]
fn parse_cublas(s: &str) -> Option<OomReport> {
    s.contains("cublas_status_alloc_failed")
        .then(|| OomReport::empty(OomSource::Cublas))
}

#[cfg(feature = "oom")]
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

#[cfg(feature = "oom")]
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
#[cfg(feature = "oom")]
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
#[cfg(feature = "oom")]
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
#[cfg(feature = "oom")]
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
#[cfg(feature = "oom")]
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

#[cfg(feature = "oom")]
mod mentions;

#[cfg(all(test, feature = "oom"))]
mod tests;
