//! Tests of the OOM reader and its diagnosis, on real messages from GitHub issues.

use super::parse::MAX_PROCESSES;
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
    assert!(f[0].fixes[0].contains("nvidia-smi --query-compute-apps=pid,used_memory --format=csv"));
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
        ..Hints::default()
    };
    let f = diagnose_with(&r, &hints);
    assert_eq!(f[0].cause, Cause::GenuinelyOutOfMemory);
    assert_eq!(f[1].cause, Cause::Fp32Suspected);
    assert!(f[1].fixes[0].contains("torch_dtype=torch.bfloat16"));
    // a 12 B model in bf16 would be 24 GB: not fp32
    let hints = Hints {
        model_parameters: Some(12_000_000_000),
        ..Hints::default()
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
                            ..Hints::default()
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

// ---- The model check (oom/known.rs), on the seed's short messages (issue 15). ----
//
// Hand-worked from the catalog's Llama 3.1 70B (config.json of meta-llama/Llama-3.1-70B-Instruct:
// 80 layers, hidden 8192, 64 heads of 128, 8 KV heads, vocabulary 128,256, 131,072 positions)
// and its 70,553,706,496 parameters (HF API safetensors total):
// - bf16 weights = 70,553,706,496 × 2 B = 141,107,412,992 B (131.42 GiB), plus vLLM's rotary
//   `cos_sin_cache` of 131,072 positions × 128 × 2 B = 33,554,432 B the sizing core counts:
//   141,140,967,424 B = 131.45 GiB.
// - fp32 = 70,553,706,496 × 4 B + 33,554,432 B = 282,248,380,416 B = 262.86 GiB.
// - 79.15 GiB = 79.15 × 2^30 = 84,986,665,369.6 → 84,986,665,370 B < 141,140,967,424.
const SEED_SHORT: &str = "RuntimeError: CUDA out of memory. Tried to allocate 4.50 GiB (GPU 0; 79.15 GiB total capacity)";
const SEED_LOAD: &str =
    "OSError: Can't load the model for 'meta-llama/Llama-3.1-70B'. CUDA out of memory";
const W70_BF16: u64 = 70_553_706_496 * 2 + 131_072 * 128 * 2;
const W70_FP32: u64 = 70_553_706_496 * 4 + 131_072 * 128 * 2;
const CAP_7915: u64 = 84_986_665_370;

fn cat() -> crate::catalog::Catalog {
    crate::catalog::Catalog::bundled()
}

/// Each fix, planned again from its own fields on `gpu`, starts; a shortened one does not
/// start at the full length.
fn fixes_start(c: &ModelCheck, gpu: &crate::catalog::Gpu) {
    use crate::sizing::{estimate_bytes, Scenario};
    let m = cat().model(&c.model_id).unwrap().model.arch().unwrap();
    assert!(!c.fixes.is_empty());
    for f in &c.fixes {
        let mut s = Scenario::new(m.clone());
        s.format = f.format;
        s.tensor_parallel_size = f.tensor_parallel_size;
        s.pipeline_parallel_size = f.pipeline_parallel_size;
        s.flags.max_model_len = Some(f.max_model_len);
        let e = estimate_bytes(&s, gpu.usable_bytes());
        assert!(e.fit.starts(), "{}", f.text);
        assert_eq!(e.weights_bytes, f.weights_per_gpu_bytes, "{}", f.text);
        assert_eq!(f.gpus, f.tensor_parallel_size * f.pipeline_parallel_size);
        if f.shortened {
            assert!(f.max_model_len >= MIN_SHORT_LEN && f.max_model_len % 1024 == 0);
            s.flags.max_model_len = Some(c.max_model_len);
            assert!(
                !estimate_bytes(&s, gpu.usable_bytes()).fit.starts(),
                "{}",
                f.text
            );
        }
    }
}

#[test]
fn seed_short_message_with_the_model_says_the_weights_do_not_fit() {
    let cat = cat();
    let r = parse(SEED_SHORT).unwrap();
    assert_eq!(r.total_capacity_bytes, Some(CAP_7915));
    assert_eq!((r.gpu_index, r.gpu_indices.clone()), (Some(0), vec![0]));
    assert_eq!(r.tried_to_allocate_bytes, Some(4_831_838_208)); // 4.5 × 2^30
    let model = cat.model("meta-llama/Llama-3.1-70B").unwrap().model;
    assert_eq!(model.parameters_total, 70_553_706_496);
    let h = Hints {
        catalog: Some(&cat),
        model: Some(model),
        ..Hints::default()
    };
    let c = check_model(&r, &h).unwrap();
    assert_eq!(c.model_id, "llama-3.1-70b");
    assert_eq!(c.model_from, Origin::Chosen);
    assert_eq!(c.format, crate::dtype::WeightFormat::Bf16);
    assert_eq!((c.weights_bytes, c.loaded_bytes), (W70_BF16, W70_BF16));
    assert_eq!(W70_BF16, 141_140_967_424);
    assert_eq!(
        (c.capacity_bytes, c.capacity_from, c.weights_fit),
        (Some(CAP_7915), Some(Origin::Message), Some(false))
    );
    assert_eq!(c.max_model_len, 131_072);
    // The card: the catalog GPU nearest in memory, at the message's 79.15 GiB (81,049 MiB).
    let mut card = cat
        .gpus
        .iter()
        .min_by_key(|g| g.usable_bytes().abs_diff(CAP_7915))
        .unwrap()
        .clone();
    card.memory_cuda_total_mib = Some(81_049);
    card.unified_memory_gpu_fraction = None;
    fixes_start(&c, &card);
    // TP 2 holds the weights (half each, 65.7 GiB) but not 131,072 tokens; the fewest GPUs
    // for the full length come next; then the AWQ and FP8 checkpoints on one GPU.
    let f = &c.fixes;
    assert_eq!(
        (f[0].tensor_parallel_size, f[0].gpus, f[0].shortened),
        (2, 2, true)
    );
    assert!(f[0].weights_per_gpu_bytes >= W70_BF16 / 2);
    assert!(f[0].weights_per_gpu_bytes <= W70_BF16 / 2 + 64 * MIB);
    assert!(!f[1].shortened && f[1].gpus > 2 && f[1].repo.is_none());
    let awq = f
        .iter()
        .find(|x| x.format == crate::dtype::WeightFormat::Int4Awq)
        .unwrap();
    assert_eq!(
        awq.repo.as_deref(),
        Some("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4")
    );
    assert_eq!(awq.gpus, 1);
    assert!(f
        .iter()
        .any(|x| x.repo.as_deref() == Some("RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8")));

    let fs = diagnose_with(&r, &h);
    assert_eq!(fs[0].cause, Cause::WeightsDoNotFit);
    assert_eq!(
        fs[0].headline,
        "Llama 3.1 70B needs 131.45 GiB in bf16: the weights alone do not fit in 79.15 GiB"
    );
    assert!(fs[0].fixes[0].starts_with(&format!(
        "`--tensor-parallel-size 2 --max-model-len {}` (vLLM, bf16) on 2 GPUs of 79.15 GiB",
        f[0].max_model_len
    )));
    assert!(fs[0]
        .fixes
        .iter()
        .any(|x| x.contains("The AWQ checkpoint `hugging-quants/")));
    // The generic "not enough numbers" answer is gone.
    assert!(fs.iter().all(|x| !x.detail.contains("enough numbers")));
}

#[test]
fn seed_short_message_without_a_model_keeps_the_generic_answer() {
    let cat = cat();
    let r = parse(SEED_SHORT).unwrap();
    let h = Hints {
        catalog: Some(&cat),
        ..Hints::default()
    };
    assert!(check_model(&r, &h).is_none());
    let fs = diagnose_with(&r, &h);
    assert_eq!(fs, diagnose(&r));
    assert_eq!(fs[0].headline, "The GPU ran out of memory");
    assert!(fs[0].detail.contains("`--model`"));
}

#[test]
fn seed_load_message_names_its_model_and_its_fp32_load() {
    let cat = cat();
    let r = parse(SEED_LOAD).unwrap();
    assert_eq!(r.source, OomSource::PyTorchCuda);
    assert_eq!(r.model.as_deref(), Some("meta-llama/Llama-3.1-70B"));
    assert_eq!(r.loader, Some(Loader::Transformers));
    assert_eq!((r.total_capacity_bytes, r.dtype.as_deref()), (None, None));
    // Without a catalog nothing is known: the generic answer.
    assert_eq!(diagnose_with(&r, &Hints::default()), diagnose(&r));
    let h = Hints {
        catalog: Some(&cat),
        ..Hints::default()
    };
    let c = check_model(&r, &h).unwrap();
    assert_eq!(
        (c.model_id.as_str(), c.model_from),
        ("llama-3.1-70b", Origin::Message)
    );
    assert_eq!(c.loaded_format, crate::dtype::WeightFormat::Fp32);
    assert_eq!((c.weights_bytes, c.loaded_bytes), (W70_BF16, W70_FP32));
    assert_eq!(W70_FP32, 282_248_380_416);
    assert_eq!((c.capacity_bytes, c.weights_fit), (None, None));
    assert!(c.fixes.is_empty());
    let fs = diagnose_with(&r, &h);
    assert_eq!(fs[0].cause, Cause::Fp32Suspected);
    assert_eq!(
        fs[0].headline,
        "Loaded in fp32, Llama 3.1 70B needs 262.86 GiB: twice its 131.45 GiB in bf16"
    );
    assert!(fs[0].fixes[0].contains("`torch_dtype=torch.bfloat16`"));
    assert_eq!(
        fs[1].headline,
        "Llama 3.1 70B needs 131.45 GiB of weights in bf16"
    );
    assert!(fs[1].fixes[0].contains("`--gpu`"));

    // With the GPU chosen (A100 80GB SXM: 81,920 MiB less the 450 MiB driver reserve =
    // 81,470 MiB = 85,427,486,720 B = 79.56 GiB).
    let a100 = cat.gpu("a100-80gb-sxm").unwrap();
    assert_eq!(a100.usable_bytes(), 85_427_486_720);
    let h = Hints {
        gpu: Some(a100),
        ..h
    };
    let c = check_model(&r, &h).unwrap();
    assert_eq!(
        (
            c.capacity_bytes,
            c.capacity_from,
            c.weights_fit,
            c.loaded_fit
        ),
        (
            Some(85_427_486_720),
            Some(Origin::Chosen),
            Some(false),
            Some(false)
        )
    );
    fixes_start(&c, a100);
    let fs = diagnose_with(&r, &h);
    assert_eq!(
        fs.iter().map(|f| f.cause).collect::<Vec<_>>()[..2],
        [Cause::WeightsDoNotFit, Cause::Fp32Suspected]
    );
    assert!(fs[0].headline.ends_with("do not fit in 79.56 GiB"));
    assert!(fs[0].fixes[0].contains("on 2 × NVIDIA A100"));
    assert!(fs[1].fixes.iter().any(|x| x.contains("not enough")));
}

#[test]
fn fp32_load_of_a_model_whose_bf16_weights_fit() {
    // Llama 3.1 8B (8,030,261,248 parameters, 131,072 positions, head dim 128):
    // bf16 8,030,261,248 × 2 + 33,554,432 = 16,094,076,928 B (14.99 GiB) fits in 23.65 GiB
    // (25,393,994,138 B); fp32 8,030,261,248 × 4 + 33,554,432 = 32,154,599,424 B (29.95 GiB)
    // does not.
    let text = "  File \"run.py\", line 4, in <module>\n    model = AutoModelForCausalLM.from_pretrained(\"meta-llama/Llama-3.1-8B\").to(\"cuda\")\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1002.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 601.06 MiB is free. Including non-PyTorch memory, this process has 23.05 GiB memory in use. Of the allocated memory 22.60 GiB is allocated by PyTorch, and 150.00 MiB is reserved by PyTorch but unallocated.";
    let cat = cat();
    let r = parse(text).unwrap();
    assert_eq!(r.model.as_deref(), Some("meta-llama/Llama-3.1-8B"));
    let h = Hints {
        catalog: Some(&cat),
        ..Hints::default()
    };
    let c = check_model(&r, &h).unwrap();
    assert_eq!(
        (c.weights_bytes, c.loaded_bytes),
        (16_094_076_928, 32_154_599_424)
    );
    assert_eq!((c.weights_fit, c.loaded_fit), (Some(true), Some(false)));
    let fs = diagnose_with(&r, &h);
    assert_eq!(fs[0].cause, Cause::Fp32Suspected);
    assert_eq!(
        fs.iter()
            .filter(|f| f.cause == Cause::Fp32Suspected)
            .count(),
        1
    );
    assert!(fs[0]
        .detail
        .contains("holds the 14.99 GiB of bf16 but not the 29.95 GiB of fp32"));
    assert!(fs[0].fixes[0].contains("14.99 GiB of weights instead of 29.95 GiB"));
    // The budget rules still speak after it.
    assert!(fs.iter().any(|f| f.cause == Cause::GenuinelyOutOfMemory));
    // With the dtype given, no fp32 suspicion: the bf16 weights fit, the rest is the workload.
    let text = text.replace("B\")", "B\", torch_dtype=torch.bfloat16)");
    let r = parse(&text).unwrap();
    assert_eq!(r.dtype.as_deref(), Some("torch.bfloat16"));
    let c = check_model(&r, &h).unwrap();
    assert_eq!(c.loaded_bytes, 16_094_076_928);
    assert!(diagnose_with(&r, &h)
        .iter()
        .all(|f| f.cause != Cause::Fp32Suspected));
}

#[test]
fn everything_on_gpu0_of_several_chosen() {
    let text = "model = AutoModelForCausalLM.from_pretrained(\"meta-llama/Llama-3.1-70B\", torch_dtype=torch.bfloat16)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 448.00 MiB. GPU 0 has a total capacity of 79.15 GiB of which 301.00 MiB is free. Including non-PyTorch memory, this process has 78.85 GiB memory in use. Of the allocated memory 78.10 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.";
    let cat = cat();
    let r = parse(text).unwrap();
    assert_eq!(r.gpu_indices, vec![0]);
    let h = Hints {
        catalog: Some(&cat),
        gpu_count: Some(4),
        ..Hints::default()
    };
    let c = check_model(&r, &h).unwrap();
    assert!(c.only_gpu0);
    assert_eq!((c.loaded_bytes, c.loaded_fit), (W70_BF16, Some(false)));
    let fs = diagnose_with(&r, &h);
    assert_eq!(fs[0].cause, Cause::SingleGpuVisible);
    assert_eq!(
        fs[0].headline,
        "Everything landed on GPU 0 of the four chosen"
    );
    assert!(fs[0]
        .detail
        .contains("131.45 GiB of weights, more than one GPU's 79.15 GiB"));
    // Only fixes within the four GPUs; the TP 2 one first.
    assert!(fs[0].fixes[0].starts_with("`--tensor-parallel-size 2 "));
    assert_eq!(fs[1].cause, Cause::WeightsDoNotFit);
    assert_eq!(
        fs.iter()
            .filter(|f| f.cause == Cause::SingleGpuVisible)
            .count(),
        1
    );
    // One GPU chosen: no GPU-0 finding from the model check.
    let one = Hints {
        gpu_count: Some(1),
        ..h
    };
    assert!(diagnose_with(&r, &one)
        .iter()
        .all(|f| !f.headline.contains("chosen")));
    // device_map="auto" spreads it: not "everything on GPU 0".
    let spread = text.replace("bfloat16)", "bfloat16, device_map=\"auto\")");
    let r = parse(&spread).unwrap();
    assert_eq!(r.device_map.as_deref(), Some("auto"));
    assert!(!check_model(&r, &h).unwrap().only_gpu0);
    assert!(diagnose_with(&r, &h)
        .iter()
        .all(|f| !f.headline.contains("chosen")));
}

#[test]
fn weights_that_fit_point_at_kv_and_activations() {
    let cat = cat();
    let r = parse(SEED_SHORT).unwrap();
    let h = Hints {
        catalog: Some(&cat),
        model: cat.model("llama-3.1-8b").map(|m| m.model),
        ..Hints::default()
    };
    let fs = diagnose_with(&r, &h);
    assert_eq!(fs[0].cause, Cause::KvAndActivations);
    assert_eq!(
        fs[0].headline,
        "The weights fit (14.99 GiB of 79.15 GiB); the KV cache and activations did not"
    );
    assert!(fs[0]
        .detail
        .contains("The failed request of 4.50 GiB came on top."));
}

#[test]
fn vllm_messages_are_left_to_their_own_rules() {
    let cat = cat();
    let h = Hints {
        catalog: Some(&cat),
        model: cat.model("llama-3.1-70b").map(|m| m.model),
        ..Hints::default()
    };
    for t in [VLLM_V0_2418, VLLM_V1_TPU_223, VLLM_NOBLOCKS_10439] {
        let r = parse(t).unwrap();
        assert_eq!(diagnose_with(&r, &h), diagnose(&r), "{t}");
    }
}

#[test]
fn model_names_devices_and_settings_in_the_text() {
    let model = |t: &str| parse(t).unwrap().model;
    let oom = "torch.OutOfMemoryError: CUDA out of memory.";
    for (t, want) in [
        ("$ vllm serve Qwen/Qwen3-8B --tensor-parallel-size 2\nCUDA out of memory", "Qwen/Qwen3-8B"),
        ("python -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-3.1-8B-Instruct\nCUDA out of memory", "meta-llama/Llama-3.1-8B-Instruct"),
        ("INFO Initializing a V1 LLM engine (v0.10.1) with config: model='mistralai/Mistral-7B-v0.1', speculative_config=None\nCUDA error: out of memory", "mistralai/Mistral-7B-v0.1"),
        ("File \"/root/.cache/huggingface/hub/models--google--gemma-2-9b/snapshots/abc/x.py\"\nCUDA out of memory", "google/gemma-2-9b"),
        ("see https://huggingface.co/models and https://huggingface.co/Qwen/Qwen2.5-7B.\nCUDA out of memory", "Qwen/Qwen2.5-7B"),
        ("tok = AutoTokenizer.from_pretrained('microsoft/phi-4')\nCUDA out of memory", "microsoft/phi-4"),
    ] {
        assert_eq!(model(t).as_deref(), Some(want), "{t}");
    }
    assert_eq!(model(oom), None);
    assert_eq!(
        model("see https://huggingface.co/docs/transformers\nCUDA out of memory"),
        None
    );
    let r = parse("[rank1]: RuntimeError on cuda:1 ... GPU 1; cuda:0 CUDA out of memory").unwrap();
    assert_eq!(r.gpu_indices, vec![1, 0]);
    assert_eq!(r.gpu_index, None);
    let r = parse(
        "from_pretrained('x/y', device_map='cuda:0', dtype=torch.float32) CUDA out of memory",
    )
    .unwrap();
    assert_eq!(
        (r.device_map.as_deref(), r.dtype.as_deref()),
        (Some("cuda:0"), Some("torch.float32"))
    );
    assert_eq!(r.loader, Some(Loader::Transformers));
    // Short forms: a bare capacity is read, a bare error name is accepted.
    let r = parse("torch.OutOfMemoryError: CUDA out of memory (GPU 0; 23.65 GiB total capacity)")
        .unwrap();
    assert_eq!(r.total_capacity_bytes, Some(25_393_994_138));
    let r = parse("torch.OutOfMemoryError").unwrap();
    assert_eq!(r.source, OomSource::PyTorchCuda);
    // Hub names resolve against the catalog through their last owner/name or segment.
    let cat = cat();
    let h = Hints {
        catalog: Some(&cat),
        ..Hints::default()
    };
    let r = parse("from_pretrained('/models/Llama-3.1-70B') CUDA out of memory").unwrap();
    assert_eq!(check_model(&r, &h).unwrap().model_id, "llama-3.1-70b");
    let r = parse("vllm serve hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4\nCUDA out of memory (GPU 0; 79.15 GiB total capacity)").unwrap();
    let c = check_model(&r, &h).unwrap();
    assert_eq!(c.format, crate::dtype::WeightFormat::Int4Awq);
    assert_eq!(c.weights_fit, Some(true));
}

#[test]
fn hints_compare_and_serialize() {
    let cat = cat();
    let a = Hints {
        catalog: Some(&cat),
        model_parameters: Some(1),
        ..Hints::default()
    };
    assert_eq!(a, a);
    assert_ne!(a, Hints::default());
    let r = parse(SEED_SHORT).unwrap();
    let c = check_model(
        &r,
        &Hints {
            model: cat.model("llama-3.1-70b").map(|m| m.model),
            ..a
        },
    )
    .unwrap();
    let j = serde_json::to_value(&c).unwrap();
    assert_eq!(j["weights_bytes"], W70_BF16);
    assert_eq!(j["weights_fit"], false);
    assert_eq!(j["model_from"], "chosen");
    assert_eq!(j["capacity_from"], "message");
    assert_eq!(
        j["format"],
        serde_json::to_value(crate::dtype::WeightFormat::Bf16).unwrap()
    );
    // A report written before these fields existed still reads.
    let mut old = serde_json::to_value(&r).unwrap();
    for k in ["model", "gpu_indices", "loader", "device_map", "dtype"] {
        old.as_object_mut().unwrap().remove(k);
    }
    let back: OomReport = serde_json::from_value(old).unwrap();
    assert_eq!(back.gpu_indices, Vec::<u32>::new());
}
