//! How trtllm-bench sizes the engine of a run that sets no `max_batch_size` or
//! `max_num_tokens`: the scheduler limits of every TensorRT-LLM row measured with it
//! (`tensorrt_llm/bench/build/tuning.py`, `bench/build/build.py`,
//! `bench/benchmark/utils/general.py`). The runs in the calibration set and the unseen GPUs'
//! file name none, so their limits are these, not the LLM API's defaults (2048 and 8192).

use crate::dtype::WeightFormat;

/// What [`settings`] reads of a run.
#[derive(Debug, Clone, Copy)]
pub struct BenchRun<'a> {
    /// The model's architecture (layers, KV heads, head size, parameters).
    pub arch: &'a crate::model::ModelArch,
    /// The checkpoint's weight format (its quantization algorithm).
    pub format: WeightFormat,
    /// Whether the KV cache is FP8 (one byte an element; else two).
    pub kv_fp8: bool,
    /// Tensor-parallel size (for attention data-parallel runs, the GPUs).
    pub tp: u64,
    /// Pipeline stages.
    pub pp: u64,
    /// The dataset's mean prompt tokens (the runs' fixed lengths).
    pub input: u64,
    /// The dataset's mean output tokens.
    pub output: u64,
    /// One GPU's memory, bytes.
    pub device_bytes: u64,
    /// PyTorch backend (1.x and `--backend pytorch`): no chunked prefill, so
    /// `max_num_tokens` holds the longest prompt plus the batch.
    pub pytorch: bool,
    /// A release before NVFP4 (v0.14, v0.15), whose `tuning.py` counted the weights in
    /// decimal GB at one byte for FP8 and two otherwise, and tuned FP8 and unquantized
    /// checkpoints only.
    pub before_nvfp4: bool,
}

/// The `max_batch_size` and `max_num_tokens` trtllm-bench gives a run that sets neither
/// (`tensorrt_llm/bench/build/tuning.py` `calc_engine_setting` and `finetune_setting`,
/// through `bench/build/build.py` `get_benchmark_engine_settings`; the PyTorch backend's
/// `bench/benchmark/utils/general.py` `get_settings`):
/// - the requests the KV cache holds at the dataset's mean lengths, from its own estimate:
///   `f × (GPUs × device memory − parameters × bytes per element)` over
///   `2 × layers × max(TP, KV heads) × head size × KV bytes × (ISL + OSL)`, where the device
///   memory is NVML's total (nvidia-smi's, in GiB), `f` the run's
///   `--kv_cache_free_gpu_mem_fraction` (0.95 "in many cases" in the perf overviews, which
///   name no other), the parameter count the checkpoint's safetensors element count (NVFP4
///   packs two values a byte: about half the parameters, at half a byte each; scales and
///   unquantized tables, a few percent, are left out; TensorRT-LLM PR #13498, April 2026,
///   later counted real bytes, after every run here), and the head size `head_dim` or
///   `hidden / heads` (so MLA models count 128 heads of 56);
/// - `raw_bs = min(requests, 4096) / PP`, `raw_tokens = min(raw_bs × (1 + ISL/OSL), 32768)`,
///   each rounded up (batch: to 32 under 256, at least 64; to 128 under 1024; else to 256;
///   tokens: at least 2048, to 256 under 4096, to 512 under 8192, else to 1024);
/// - formats outside its tuned list (MXFP4, INT4) keep the defaults, 2048 and 8192;
/// - without chunked prefill the PyTorch backend raises `max_num_tokens` to the longest
///   prompt plus the batch; a TensorRT engine keeps the tuned value and chunks longer
///   prompts (the runs with prompts past it completed).
///
/// Under attention data parallelism the limit is each rank's, estimated as above for all the
/// GPUs (as the tool did before PR #13498). Releases before NVFP4 support (v0.14, v0.15:
/// NVFP4 came with v0.17's Blackwell support) ran the earlier `tuning.py`, which has no
/// NVFP4 entry: it counted the weights as `parameters / 1000³ × (1 for FP8, else 2)` GB,
/// subtracted from the GPUs' GiB (so 7 % heavier than the later code), and its
/// `build.py` tuned FP8 and unquantized checkpoints only. The store holds that revision in
/// a fork's copy, not under a release tag. With it the held-out errors fell, both fits
/// starting from the same constants: leave-one-GPU-out 10.66 → 10.23 %, p90 27.1 → 25.7 %,
/// speed-up ratios 10.05 → 8.77 % (measured when it was added).
#[must_use]
pub fn settings(b: &BenchRun) -> (u64, u64) {
    use crate::units::real as f;
    let (default_bs, default_tokens) = (
        crate::serving::TRTLLM_MAX_BATCH,
        crate::serving::TRTLLM_MAX_NUM_TOKENS,
    );
    let settle = |bs: u64, tokens: u64| {
        if b.pytorch {
            (bs, tokens.max(b.input + bs))
        } else {
            (bs, tokens)
        }
    };
    let (elem, count) = match b.format {
        WeightFormat::Nvfp4 if !b.before_nvfp4 => (0.5, 0.5),
        WeightFormat::Fp8 => (1.0, 1.0),
        WeightFormat::Fp8Block if !b.before_nvfp4 => (1.0, 1.0),
        WeightFormat::Bf16 | WeightFormat::Fp16 => (2.0, 1.0),
        _ => return settle(default_bs, default_tokens),
    };
    let a = b.arch;
    let gib = f64::from(1u32 << 30);
    // The earlier code: `param_count / 1000**3 × bytes`, GB taken from GiB.
    let unit = if b.before_nvfp4 { 1e9 } else { gib };
    let kv_elem = if b.kv_fp8 { 1.0 } else { 2.0 };
    let head = if a.mla.is_some() {
        f(a.hidden) / f(a.heads.max(1))
    } else {
        f(a.head_dim)
    };
    let per_token = 2.0 * f(a.layers) * f(b.tp.max(a.kv_heads)) * head * kv_elem / gib;
    let gpus = f(b.tp.max(1) * b.pp.max(1));
    let engine = f(a.params().total()) * count * elem / unit;
    let available = f(b.device_bytes) / gib * gpus - engine;
    let requests = 0.95 * available / (per_token * f(b.input + b.output)).max(1e-12);
    if requests.is_nan() || requests < 1.0 {
        return settle(default_bs, default_tokens);
    }
    let raw_bs = requests.min(4096.0) / f(b.pp.max(1));
    let raw_tokens = (raw_bs * (1.0 + f(b.input) / f(b.output.max(1)))).min(32768.0);
    // Rounded up to the step of the first band below whose bound `x` falls (the tool's
    // floors only ever apply in its first band).
    let ladder = |x: f64, bands: [(f64, f64); 3], floor: f64| {
        let step = bands
            .iter()
            .find(|(below, _)| x < *below)
            .map_or(1.0, |b| b.1);
        ((x / step).ceil() * step).max(floor)
    };
    let bs = ladder(
        raw_bs,
        [(256.0, 32.0), (1024.0, 128.0), (f64::INFINITY, 256.0)],
        64.0,
    );
    let tokens = ladder(
        raw_tokens,
        [(4096.0, 256.0), (8192.0, 512.0), (f64::INFINITY, 1024.0)],
        2048.0,
    );
    // OK because: both are rounded, positive and at most a few thousand.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    settle(bs as u64, tokens as u64)
}

#[cfg(all(test, feature = "bundled"))]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    fn run(model: &str, gpu: &str, format: WeightFormat, tp: u64, io: (u64, u64)) -> (u64, u64) {
        let cat = Catalog::bundled();
        let arch = cat.model(model).unwrap().model.arch().unwrap();
        let g = cat.gpus.iter().find(|g| g.id == gpu).unwrap();
        settings(&BenchRun {
            arch: &arch,
            format,
            kv_fp8: true,
            tp,
            pp: 1,
            input: io.0,
            output: io.1,
            device_bytes: g.smi_total_bytes(),
            pytorch: true,
            before_nvfp4: false,
        })
    }

    #[test]
    fn settings_by_hand() {
        let h100 = Catalog::bundled()
            .gpu("h100-sxm")
            .unwrap()
            .smi_total_bytes();
        let gib = f64::from(1u32 << 30);
        // Llama 3.1 8B FP8 on one H100, 128/2048: 2 × 32 layers × 8 KV heads × 128 × 1 B =
        // 65,536 B per token; 0.95 × (H100 − 8.03e9 B) / (65,536 B × 2,176) requests.
        let req =
            0.95 * (crate::units::real(h100) - 8_030_261_248.0) / gib / (65_536.0 / gib * 2176.0);
        assert!((500.0..520.0).contains(&req), "{req}");
        // ≈ 513 → rounded up to 128s: 640; tokens 513 × (1 + 128/2048) ≈ 545 → at least
        // 2048 (and 128 + 640 = 768 is less).
        assert_eq!(
            run(
                "llama-3.1-8b",
                "h100-sxm",
                WeightFormat::Fp8,
                1,
                (128, 2048)
            ),
            (640, 2048)
        );
        // 128/128: the requests pass 4096, the cap; tokens 4096 × 2 = 8192.
        assert_eq!(
            run("llama-3.1-8b", "h100-sxm", WeightFormat::Fp8, 1, (128, 128)),
            (4096, 8192)
        );
        // A long prompt without chunked prefill: at least the prompt plus the batch.
        let (bs, tokens) = run(
            "llama-3.1-8b",
            "h100-sxm",
            WeightFormat::Fp8,
            1,
            (20000, 2000),
        );
        assert!(tokens >= 20000 + bs, "{bs} {tokens}");
        // DeepSeek R1 (MLA) at NVFP4 on 8 × B200, 1000/1000: its config's 128 KV heads of
        // 7168 / 128 = 56 count 2 × 61 × 128 × 56 B = 874,496 B per token, and the packed
        // checkpoint ~671e9 / 2 elements at half a byte: ~744 requests → 768.
        assert_eq!(
            run("deepseek-r1", "b200", WeightFormat::Nvfp4, 8, (1000, 1000)).0,
            768
        );
        // Before NVFP4 (v0.15): Llama 3.1 8B FP8's weights as 8.03 "GB" taken from the GiB,
        // not 7.48 GiB: 0.95 × (79.65 − 8.03) / (65,536 B × 2,176 in GiB) ≈ 512 requests
        // (516 with the later code), still 640.
        let cat = Catalog::bundled();
        let arch = cat.model("llama-3.1-8b").unwrap().model.arch().unwrap();
        let legacy = |input, output| {
            settings(&BenchRun {
                arch: &arch,
                format: WeightFormat::Fp8,
                kv_fp8: true,
                tp: 1,
                pp: 1,
                input,
                output,
                device_bytes: h100,
                pytorch: false,
                before_nvfp4: true,
            })
        };
        let old =
            0.95 * (crate::units::real(h100) / gib - 8.030_261_248) / (65_536.0 / gib * 2176.0);
        assert!((510.0..514.0).contains(&old), "{old}");
        assert_eq!(legacy(128, 2048), (640, 2048));
        // 20000/2000: ≈ 51 requests → 64; tokens 51 × 11 → 2,048, which a TensorRT engine
        // keeps, chunking the 20,000-token prompts (the PyTorch backend would take 20,064).
        assert_eq!(legacy(20000, 2000), (64, 2048));
        // MXFP4 is not among the tuned formats: the defaults (tokens raised to hold a prompt
        // and the batch).
        assert_eq!(
            run(
                "gpt-oss-120b",
                "h100-sxm",
                WeightFormat::Mxfp4Experts,
                1,
                (1000, 1000)
            ),
            (2048, 8192)
        );
    }
}
