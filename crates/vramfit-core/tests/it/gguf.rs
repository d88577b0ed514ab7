//! llama.cpp's GGUF weights (`sizing/gguf.rs`) against the sizes `llama-bench` prints for
//! published files (its `size` column: every tensor of the file, in GiB), and the split
//! between CPU and GPU that its load log prints.

use crate::support::arch;
use vramfit_core::catalog::Catalog;
use vramfit_core::dtype::WeightFormat;
use vramfit_core::plan::{plan, Inputs};
use vramfit_core::sizing::gguf::{file_bytes, gguf_bytes, Ftype};
use vramfit_core::sizing::{stage_weights, Engine, Scenario};

fn gib(b: u64) -> f64 {
    b as f64 / f64::from(1u32 << 30)
}

#[test]
fn llama_3_8b_q4_k_m_by_hand() {
    // Llama 3 8B (hidden 4096, 32 layers, 8 KV heads × 128, intermediate 14336, vocab
    // 128256, untied). Q4_K_M (`llama-quant.cpp`): token_embd Q4_K, output Q6_K; attn_v and
    // ffn_down at Q6_K in the 16 layers `use_more_bits(i, 32)` picks (0–3, 28–31, and 6, 9,
    // …, 27), Q4_K elsewhere; every other matrix Q4_K. Q4_K is 144 B and Q6_K 210 B per 256.
    // - token_embd: 128256 × 4096 × 144/256 = 295,501,824 B (281.81 MiB: the `CPU model
    //   buffer size` llama.cpp prints for this file);
    // - output: 128256 × 4096 × 210/256 = 430,940,160 B;
    // - per layer at Q4_K: q 16,777,216 + k 4,194,304 + o 16,777,216 + gate and up
    //   2 × 58,720,256 = 155,189,248 values → 87,293,952 B; v 4,194,304 values → 2,359,296 B
    //   (Q4_K) or 3,440,640 B (Q6_K); down 58,720,256 → 33,030,144 or 48,168,960 B; norms
    //   2 × 4096 × 4 = 32,768 B;
    // - 16 layers 87,293,952 + 2,359,296 + 33,030,144 + 32,768 = 122,716,160 B and 16 layers
    //   87,293,952 + 3,440,640 + 48,168,960 + 32,768 = 138,936,320 B: 4,186,439,680 B;
    // - output_norm 4096 × 4 = 16,384 B.
    // On the GPU (the input embedding stays on the CPU): 4,186,439,680 + 430,940,160 +
    // 16,384 = 4,617,396,224 B = 4403.49 MiB, the `CUDA0 model buffer size` of its load log;
    // the file: 4,912,898,048 B = 4.58 GiB, `llama-bench`'s size.
    let m = arch("llama-3.1-8b");
    let g = gguf_bytes(&m, Ftype::Q4KM);
    assert_eq!(g.token_embd, 295_501_824);
    assert_eq!(g.output, 430_940_160);
    assert_eq!(g.other, 16_384);
    assert_eq!(file_bytes(&m, Ftype::Q4KM), 4_912_898_048);
    // The plan's llama.cpp weights on the GPU are those bytes.
    let mut i = Inputs {
        model: "llama-3.1-8b".into(),
        gpu: "rtx-4090".into(),
        format: Some(WeightFormat::Int4Awq),
        ..Inputs::default()
    };
    i.flags.engine = Engine::LlamaCpp;
    let p = plan(&Catalog::bundled(), &i).unwrap();
    assert_eq!(p.estimate.weights_bytes, 4_617_396_224);
}

#[test]
fn gguf_files_weigh_as_llama_bench_prints() {
    // (catalog model, file type, llama-bench's size in GiB, printed to two decimals; the
    // rows of tests/data/llama_cpp_decode.csv name their sources: XiongjieDai's Llama 3
    // notebooks, kyuz0's Strix Halo logs, ggml-org PR tables, geerlingguy/ai-benchmarks#48).
    // Llama 3 8B and 70B have the shapes of the catalog's Llama 3.1 entries, and
    // Qwen3-Coder-30B-A3B those of Qwen3-30B-A3B.
    let rows = [
        ("llama-3.1-8b", Ftype::F16, 14.96),
        ("llama-3.1-8b", Ftype::Q4KM, 4.58),
        ("llama-3.1-70b", Ftype::Q4KM, 39.59),
        ("llama-3.1-70b", Ftype::F16, 131.42),
        ("llama-3.2-3b", Ftype::Q4KM, 1.87),
        ("qwen3-30b-a3b", Ftype::Q4KM, 17.35),
        ("qwen3-30b-a3b", Ftype::F16, 56.89),
        ("gemma-3-27b", Ftype::F16, 50.31),
        ("gpt-oss-20b", Ftype::Mxfp4Moe, 11.27),
        ("gpt-oss-120b", Ftype::Mxfp4Moe, 59.02),
    ];
    let mut report = String::new();
    let mut worst: f64 = 0.0;
    for (id, ftype, printed) in rows {
        let m = arch(id);
        let got = gib(file_bytes(&m, ftype));
        let err = got / printed - 1.0;
        worst = worst.max(err.abs());
        report += &format!(
            "{id} {ftype:?}: {got:.3} GiB vs {printed} ({:+.2} %)\n",
            err * 100.0
        );
    }
    println!("{report}");
    assert!(worst <= 0.005, "{report}");
}

#[test]
fn two_gpus_split_the_layers_as_llama_cpp_does() {
    // `load_tensors` counts the output as layer 32 of 33 and gives layer `il` to GPU
    // ⌊il × 2 / 33⌋: layers 0–16 on GPU 0, 17–31 and the output on GPU 1. Of the 16
    // `use_more_bits` layers (bytes in `llama_3_8b_q4_k_m_by_hand`), 0–3, 6, 9, 12 and 15
    // are on GPU 0: 8 × 138,936,320 + 9 × 122,716,160 = 2,215,936,000 B; GPU 1 holds 8 × 138,936,320
    // + 7 × 122,716,160 + the output 430,940,160 + output_norm 16,384 = 2,401,460,224 B.
    let mut s = Scenario::new(arch("llama-3.1-8b"));
    s.format = WeightFormat::Int4Awq;
    s.flags.engine = Engine::LlamaCpp;
    s.pipeline_parallel_size = 2;
    assert_eq!(stage_weights(&s), [2_215_936_000, 2_401_460_224]);
    // Three GPUs: ⌊il × 3 / 33⌋ gives 11, 11 and 10 layers (and the output).
    s.pipeline_parallel_size = 3;
    assert_eq!(stage_weights(&s).len(), 3);
}
