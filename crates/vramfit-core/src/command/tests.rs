//! Hand-worked cases from real commands, and the round trip through the command generator.

use super::*;
use crate::dtype::KvDtype;
use crate::sizing::Fit;
use std::sync::LazyLock;

static CAT: LazyLock<Catalog> = LazyLock::new(Catalog::bundled);

fn on(gpu: &str, text: &str) -> CommandCheck {
    check_command(&CAT, gpu, text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn ids(c: &CommandCheck) -> Vec<&'static str> {
    c.checks.iter().map(|c| c.id).collect()
}

#[test]
fn the_issue_example_is_the_bf16_repo_with_an_awq_flag() {
    let c = on(
        "h100-sxm",
        "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --quantization awq",
    );
    assert_eq!(c.command.engine, Engine::DEFAULT);
    assert_eq!(c.command.inputs.tensor_parallel_size, Some(4));
    assert_eq!(c.command.inputs.format, Some(WeightFormat::Int4Awq));
    assert_eq!(ids(&c), ["quantization_mismatch"]);
    let q = &c.checks[0];
    assert_eq!(q.flags, ["--quantization awq"]);
    assert_eq!(q.severity, Severity::WillNotStart);
    assert!(
        q.message.contains("bf16 checkpoint of Llama 3.1 70B"),
        "{}",
        q.message
    );
    // The catalog's AWQ checkpoint is named, the GPTQ ones are not.
    assert!(q
        .message
        .contains("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4"));
    assert!(!q.message.contains("GPTQ-INT4"));
    assert!(!c.starts());
    // The same flag on the AWQ checkpoint is what vLLM infers anyway: no contradiction.
    let ok = on(
        "h100-sxm",
        "vllm serve hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4 --tensor-parallel-size 4 --quantization awq",
    );
    assert!(ok.checks.is_empty(), "{:?}", ok.checks);
    assert_eq!(ok.plan.format, WeightFormat::Int4Awq);
    assert!(ok.starts());
    // fp8 on the bf16 checkpoint quantizes while loading: vLLM starts.
    let fp8 = on(
        "h100-sxm",
        "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 4 -q fp8",
    );
    assert!(fp8.checks.is_empty(), "{:?}", fp8.checks);
    assert_eq!(fp8.plan.format, WeightFormat::Fp8);
    // A quantized checkpoint with another method's flag: vLLM's "does not match".
    let gptq = on(
        "h100-sxm",
        "vllm serve hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4 -tp 4 --quantization gptq",
    );
    assert_eq!(ids(&gptq), ["quantization_mismatch"]);
    assert!(
        gptq.checks[0].message.starts_with(
            "`hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4` is quantized with AWQ"
        ),
        "{}",
        gptq.checks[0].message
    );
}

#[test]
fn a_docker_wrapped_vllm_reads_the_env_and_the_image_tag() {
    let t = r#"docker run --runtime nvidia --gpus '"device=0,1"' \
    -v ~/.cache/huggingface:/root/.cache/huggingface \
    --env "HUGGING_FACE_HUB_TOKEN=$HF_TOKEN" \
    -p 8000:8000 --ipc=host \
    vllm/vllm-openai:v0.16.0 \
    --model meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 4 --max-model-len 200000"#;
    let c = on("h100-sxm", t);
    assert_eq!(c.command.engine, Engine::Vllm { minor: 16 });
    assert_eq!(c.plan.engine, "vllm-0.16");
    assert_eq!(c.command.model, "meta-llama/Llama-3.1-8B-Instruct");
    assert_eq!(c.command.image.as_deref(), Some("vllm/vllm-openai:v0.16.0"));
    // Two GPUs visible for TP 4, and 200 000 tokens above 131 072 without the variable.
    assert_eq!(ids(&c), ["max_model_len_above_model", "too_few_gpus"]);
    let len = &c.checks[0];
    assert_eq!(len.flags, ["--max-model-len 200000"]);
    assert!(
        len.message.contains("131072") && len.message.contains("VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"),
        "{}",
        len.message
    );
    assert_eq!(
        c.checks[1].flags,
        ["--gpus \"device=0,1\"", "--tensor-parallel-size 4"]
    );
    assert!(
        c.checks[1].message.contains("needs 4 GPUs")
            && c.checks[1].message.contains("makes 2 visible")
    );
    // With the variable the length is allowed, with a warning.
    let t = t
        .replace(
            "-p 8000:8000",
            "-e VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 -p 8000:8000",
        )
        .replace("--gpus '\"device=0,1\"'", "--gpus all");
    let c = on("h100-sxm", &t);
    assert_eq!(ids(&c), ["max_model_len_above_model"]);
    assert_eq!(c.checks[0].severity, Severity::Warning);
    assert_eq!(c.checks[0].flags[1], "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1");
}

#[test]
fn a_kubernetes_args_list() {
    let y = r#"
      containers:
        - name: vllm
          image: vllm/vllm-openai:latest
          args:
            - "Qwen/Qwen2.5-7B-Instruct"
            - "--tensor-parallel-size"
            - "8"
            - "--gpu-memory-utilization=0.85"
            - --enable-lora
            - --port
            - "8000"
          env:
            - name: CUDA_VISIBLE_DEVICES
              value: "0,1,2,3,4,5,6,7"
"#;
    let c = on("h100-sxm", y);
    assert_eq!(c.command.model, "Qwen/Qwen2.5-7B-Instruct");
    assert_eq!(c.command.inputs.tensor_parallel_size, Some(8));
    assert_eq!(c.command.inputs.flags.gpu_memory_utilization, Some(0.85));
    // Qwen2.5-7B has 28 attention heads: TP 8 does not divide them. `--enable-lora` is
    // modelled (its slots are in the weights).
    assert_eq!(ids(&c), ["tp_does_not_divide_heads"]);
    assert!(c.command.inputs.flags.features.lora.enabled);
    assert_eq!(c.checks[0].flags, ["--tensor-parallel-size 8"]);
    assert!(
        c.checks[0].message.contains("28 attention heads")
            && c.checks[0].message.contains("1, 2, 4"),
        "{}",
        c.checks[0].message
    );
    // `--port` is listed, as having no effect on memory.
    let port = c
        .command
        .unmodelled
        .iter()
        .find(|u| u.flag == "--port")
        .unwrap();
    assert!(!port.affects_memory);
    assert_eq!(port.value.as_deref(), Some("8000"));
    // Flow style, with the command given.
    let c = on(
        "h100-sxm",
        "command: [\"vllm\", \"serve\", \"meta-llama/Llama-3.1-8B-Instruct\"]\nargs: [\"--tensor-parallel-size\", \"3\"]",
    );
    assert_eq!(ids(&c), ["tp_does_not_divide_heads"]);
}

#[test]
fn sglang_spellings_map_onto_the_table() {
    let c = on(
        "h100-sxm",
        "python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --tp 2 \\\n --context-length 32768 --mem-fraction-static 0.8 --kv-cache-dtype fp8_e4m3 \\\n --max-running-requests 64 --chunked-prefill-size 4096 --page-size 16 --host 0.0.0.0",
    );
    let i = &c.command.inputs;
    assert_eq!(c.command.engine, Engine::Sglang);
    assert_eq!(c.plan.engine, "sglang");
    assert_eq!(i.tensor_parallel_size, Some(2));
    assert_eq!(i.flags.max_model_len, Some(32768));
    assert_eq!(i.flags.gpu_memory_utilization, Some(0.8));
    assert_eq!(i.flags.kv_dtype, KvDtype::Fp8);
    assert_eq!(i.flags.max_num_seqs, Some(64));
    assert_eq!(i.flags.max_num_batched_tokens, Some(4096));
    assert_eq!(i.flags.block_size, Some(16));
    assert!(c.checks.is_empty(), "{:?}", c.checks);
    assert!(c.starts());
    // SGLang's own variable for a long context.
    let c = on("h100-sxm", "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --context-length 262144");
    assert!(c.checks[0]
        .message
        .contains("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1"));
    // The SGLang image runs the command given.
    let c = parse("docker run --gpus all lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path m --tp-size 4").unwrap();
    assert_eq!(
        (c.engine, c.inputs.tensor_parallel_size),
        (Engine::Sglang, Some(4))
    );
}

#[test]
fn trtllm_serve_spellings_map_onto_the_table() {
    let c = on(
        "h100-sxm",
        "trtllm-serve meta-llama/Llama-3.1-70B-Instruct --backend pytorch --tp_size 4 --pp_size 1 --max_seq_len 16384 --max_batch_size 32 --max_num_tokens 8192 --kv_cache_free_gpu_memory_fraction 0.85 --host 0.0.0.0 --port 8000",
    );
    let i = &c.command.inputs;
    assert_eq!(c.command.engine, Engine::TrtLlm);
    assert_eq!(c.plan.engine, "trtllm");
    assert_eq!(
        (i.tensor_parallel_size, i.pipeline_parallel_size),
        (Some(4), Some(1))
    );
    assert_eq!(i.flags.max_model_len, Some(16384));
    assert_eq!(i.flags.max_num_seqs, Some(32));
    assert_eq!(i.flags.max_num_batched_tokens, Some(8192));
    assert_eq!(i.flags.gpu_memory_utilization, Some(0.85));
    assert!(c.checks.is_empty(), "{:?}", c.checks);
    assert!(c.command.unmodelled.iter().all(|u| !u.affects_memory));
    // Another backend is listed as not modelled.
    let c = parse("trtllm-serve serve m --backend tensorrt").unwrap();
    assert_eq!(c.unmodelled[0].flag, "--backend");
    assert!(c.unmodelled[0].affects_memory);
}

#[test]
fn flag_value_forms_quoting_and_comments() {
    let c = parse(
        "# serve it\nCUDA_VISIBLE_DEVICES=0,1 VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 vllm serve \"meta-llama/Llama-3.1-8B-Instruct\" \\\n  --tensor-parallel-size=2 --max_model_len 32K \\\n  --served-model-name 'my model' # the name clients use\n  --gpu-memory-utilization=.9",
    )
    .unwrap();
    assert_eq!(c.model, "meta-llama/Llama-3.1-8B-Instruct");
    assert_eq!(c.inputs.tensor_parallel_size, Some(2));
    assert_eq!(c.inputs.flags.max_model_len, Some(32 * 1024));
    // After the comment the line ends: the last flag is a separate (ignored) command.
    assert_eq!(c.inputs.flags.gpu_memory_utilization, None);
    assert_eq!(c.env_value("CUDA_VISIBLE_DEVICES"), Some("0,1"));
    assert_eq!(c.env_value("VLLM_ALLOW_LONG_MAX_MODEL_LEN"), Some("1"));
    let name = c
        .unmodelled
        .iter()
        .find(|u| u.flag == "--served-model-name")
        .unwrap();
    assert_eq!(name.value.as_deref(), Some("my model"));
    // The OpenAI entrypoint module takes `--model`.
    let c = parse("python -m vllm.entrypoints.openai.api_server --model Qwen/Qwen2.5-7B-Instruct --dtype half").unwrap();
    assert_eq!(c.model, "Qwen/Qwen2.5-7B-Instruct");
    assert_eq!(c.inputs.format, Some(WeightFormat::Fp16));
    // Without flags the engine's defaults: TP 1, PP 1, the model's maximum.
    let c = parse("vllm serve m").unwrap();
    assert_eq!(
        (
            c.inputs.tensor_parallel_size,
            c.inputs.pipeline_parallel_size
        ),
        (Some(1), Some(1))
    );
    assert_eq!(c.inputs.flags.max_model_len, None);
}

#[test]
fn bad_input_names_the_problem() {
    let msg = |t: &str| parse(t).unwrap_err().to_string();
    assert_eq!(
        msg("  "),
        "paste a `vllm serve`, `python -m sglang.launch_server` or `trtllm-serve` command"
    );
    assert_eq!(msg("vllm serve m --tp 'x"), "a ' quote is never closed");
    assert!(msg("llama-server -m x.gguf").ends_with("(the command runs `llama-server`)"));
    assert!(
        msg("vllm serve --tensor-parallel-size 2").starts_with("the vllm command names no model")
    );
    assert_eq!(
        msg("vllm serve m --max-model-len"),
        "`--max-model-len` needs a value"
    );
    // A known flag that takes a value, followed by another flag: argparse's "expected one
    // argument" (before, `--served-model-name` was listed as not modelled and the command
    // "started"). A switch before a flag is fine.
    assert_eq!(
        msg("vllm serve m --served-model-name --enforce-eager"),
        "`--served-model-name` needs a value"
    );
    assert_eq!(
        msg("python -m sglang.launch_server --model-path m --port"),
        "`--port` needs a value"
    );
    assert!(parse("vllm serve m --trust-remote-code --enforce-eager").is_ok());
    // Out of range: the input table's own message.
    assert_eq!(
        msg("vllm serve m --gpu-memory-utilization 1.5"),
        "`--gpu-memory-utilization`: `--gpu-memory-utilization` must be between 0.05 and 1; got 1.5"
    );
    assert_eq!(
        msg("python -m sglang.launch_server --model-path m --tp 0"),
        "`--tp`: `--tensor-parallel-size` must be between 1 and 128; got 0 (`--tp` is --tensor-parallel-size)"
    );
    assert!(msg("vllm serve m -tp $TP").contains("shell variable"));
    assert!(msg("vllm serve m --kv-cache-dtype fp4").contains("unknown KV dtype"));
    // An unknown model is an error with the closest ids, not a panic.
    let e = check_command(
        &CAT,
        "h100-sxm",
        "vllm serve meta-llama/Llama-3.1-8B-Instrukt",
    )
    .unwrap_err();
    let CommandError::UnknownModel { closest, .. } = &e else {
        panic!("{e:?}");
    };
    assert_eq!(closest[0], "meta-llama/Llama-3.1-8B-Instruct");
    assert!(check_command(&CAT, "h100-sxm", "vllm serve /models/llama")
        .unwrap_err()
        .to_string()
        .contains("a local path"));
    assert!(check_command(
        &CAT,
        "no-such-gpu",
        "vllm serve meta-llama/Llama-3.1-8B-Instruct"
    )
    .unwrap_err()
    .to_string()
    .contains("unknown GPU"));
}

#[test]
fn a_utilization_that_leaves_no_kv_pool() {
    // 70B bf16 (~131 GiB) over two H100s is ~66 GiB of weights each; at 0.5 the budget is
    // ~40 GiB.
    let c = on(
        "h100-sxm",
        "vllm serve meta-llama/Llama-3.1-70B-Instruct -tp 2 --gpu-memory-utilization 0.5",
    );
    assert_eq!(c.plan.estimate.fit, Fit::WeightsTooLarge);
    assert_eq!(ids(&c), ["no_kv_pool"]);
    assert_eq!(c.checks[0].flags, ["--gpu-memory-utilization 0.5", "-tp 2"]);
    assert!(
        c.checks[0].message.contains("KV pool of -"),
        "{}",
        c.checks[0].message
    );
    // The whole 128K context of one request is more than the pool of one L4.
    let c = on("l4", "vllm serve meta-llama/Llama-3.1-8B-Instruct");
    assert_eq!(c.plan.estimate.fit, Fit::KvTooSmall);
    assert_eq!(ids(&c), ["kv_pool_too_small"]);
    assert!(
        c.checks[0]
            .message
            .contains("one request of 131,072 tokens"),
        "{}",
        c.checks[0].message
    );
}

#[test]
fn the_workload_and_engine_version_come_from_the_base() {
    let mut base = Inputs {
        gpu: "a100-80gb-sxm".into(),
        ..Inputs::default()
    };
    base.workload.users = 12;
    base.flags.engine = Engine::Vllm { minor: 16 };
    base.tensor_parallel_size = Some(8);
    let c = check(
        &CAT,
        &base,
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192",
    )
    .unwrap();
    assert_eq!(c.plan.gpu_id, "a100-80gb-sxm");
    assert_eq!(c.command.inputs.workload.users, 12);
    assert_eq!(c.plan.engine, "vllm-0.16");
    // The page's TP is not the command's: the command runs at TP 1.
    assert_eq!(c.plan.tensor_parallel_size, 1);
}

/// Every command `crate::commands` generates (vLLM, SGLang, TensorRT-LLM), over the catalog
/// on three GPUs in three formats (the plan's own, or the plan with its first fix), reads
/// back through the checker to the same launch: the same checkpoint format, layout, length,
/// KV dtype and (vLLM, SGLang) memory fraction, and a plan that starts.
#[test]
fn generated_commands_read_back_to_the_same_plan() {
    let mut n = 0;
    for m in &CAT.models {
        for gpu in ["h100-sxm", "l40s", "a100-80gb-sxm"] {
            for format in [None, Some(WeightFormat::Fp8), Some(WeightFormat::Int4Awq)] {
                for (kv, ep) in [
                    (KvDtype::Auto, false),
                    (KvDtype::Fp8, false),
                    (KvDtype::Auto, true),
                ] {
                    // Expert parallelism only where it changes the launch: an MoE model.
                    if ep && m.arch().map_or(true, |a| a.moe.is_none()) {
                        continue;
                    }
                    let mut i = Inputs {
                        model: m.id.clone(),
                        gpu: gpu.into(),
                        format,
                        ..Inputs::default()
                    };
                    i.flags.kv_dtype = kv;
                    i.flags.expert_parallel = ep;
                    let want = plan::plan(&CAT, &i).unwrap();
                    let Some(l) = want.launch.as_ref().filter(|l| l.checkpoint.known) else {
                        continue;
                    };
                    let base = Inputs {
                        gpu: gpu.into(),
                        ..Inputs::default()
                    };
                    for c in crate::commands::all(&want) {
                        // A placeholder checkpoint (TensorRT-LLM cannot quantize while loading)
                        // names no model to read back.
                        if !matches!(c.id, "vllm" | "sglang" | "trtllm")
                            || c.text.contains("YOUR-ORG/")
                        {
                            continue;
                        }
                        let text = &c.text;
                        let at = format!("{} {gpu} {format:?} {kv:?} via {}:\n{text}", m.id, c.id);
                        let got = check(&CAT, &base, text).unwrap_or_else(|e| panic!("{at}: {e}"));
                        let p = &got.plan;
                        assert_eq!(p.tensor_parallel_size, l.tensor_parallel_size, "{at}");
                        assert_eq!(p.pipeline_parallel_size, l.pipeline_parallel_size, "{at}");
                        // Expert parallelism reads back: vLLM's switch as it was set, SGLang's
                        // and TensorRT-LLM's EP size where it splits anything (TP > 1).
                        assert_eq!(
                            p.launch.as_ref().is_some_and(|b| b.expert_parallel),
                            l.expert_parallel && (c.id == "vllm" || l.tensor_parallel_size > 1),
                            "{at}"
                        );
                        assert_eq!(p.estimate.max_model_len, l.max_model_len, "{at}");
                        // TensorRT-LLM takes the KV dtype from the YAML file the command writes
                        // (`--extra_llm_api_options`), which the reader does not open.
                        if c.id != "trtllm" || l.kv_dtype == KvDtype::Auto {
                            assert_eq!(p.kv_dtype, l.kv_dtype, "{at}");
                        }
                        if c.id == "trtllm" && l.checkpoint.online {
                            // The FP8 checkpoint stands in for vLLM's online FP8 (notes say so).
                            assert_eq!(super::checks::family(p.format), Some("FP8"), "{at}");
                        } else {
                            assert_eq!(p.format, l.format, "{at}");
                        }
                        if c.id != "trtllm" {
                            let u = crate::units::real(p.estimate.budget_bytes)
                                / crate::units::real(p.estimate.gpu_total_bytes);
                            assert!((u - l.gpu_memory_utilization).abs() <= 0.005, "{at}: {u}");
                        }
                        // vLLM removed Llama 3.2 Vision after v0.10.2: the checker says so.
                        let removed = got.checks.iter().any(|c| c.id == "architecture_removed");
                        if c.id == "vllm" {
                            assert!(p.run.is_some(), "{at}: {}", p.verdict);
                            assert!(got.starts() || removed, "{at}: {:?}", got.checks);
                        }
                        n += 1;
                    }
                }
            }
        }
    }
    assert!(n > 500, "{n} commands read back");
}

#[test]
fn an_image_of_a_version_not_modelled_is_planned_at_the_default_and_said() {
    let c = check_command(
        &CAT,
        "h100-sxm",
        "docker run --gpus all vllm/vllm-openai:v0.6.3 --model meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192",
    )
    .unwrap();
    assert_eq!(c.plan.engine, "vllm-0.19");
    let k = c
        .checks
        .iter()
        .find(|k| k.id == "engine_version_not_modelled")
        .expect("a warning");
    assert_eq!(k.severity, Severity::Warning);
    assert!(
        k.message
            .starts_with("vLLM 0.6 is not modelled (vllm-0.11 to vllm-0.19 are)"),
        "{}",
        k.message
    );
    assert!(c.starts());
    // A modelled tag plans at its version, without the warning.
    let c = check_command(
        &CAT,
        "h100-sxm",
        "docker run --gpus all vllm/vllm-openai:v0.16.0 --model meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192",
    )
    .unwrap();
    assert_eq!(c.plan.engine, "vllm-0.16");
    assert!(c
        .checks
        .iter()
        .all(|k| k.id != "engine_version_not_modelled"));
}

/// Pieces real commands are made of, and the characters that break naive readers.
const PIECES: [&str; 32] = [
    "vllm serve ",
    "python -m sglang.launch_server ",
    "trtllm-serve ",
    "docker run ",
    "vllm/vllm-openai:v0.9 ",
    "meta-llama/Llama-3.1-8B-Instruct ",
    "--model ",
    "--model-path ",
    "--tensor-parallel-size ",
    "--tp=",
    "-tp ",
    "--max-model-len ",
    "32k ",
    "-1 ",
    "0.9 ",
    "--quantization awq ",
    "--gpu-memory-utilization=",
    "\\\n",
    "'",
    "\"",
    "#",
    "&& ",
    "; ",
    "command: [",
    "args:\n  - ",
    "- |\n    ",
    "env:\n  - name: ",
    "value: ",
    "CUDA_VISIBLE_DEVICES=",
    "sh -c ",
    "=",
    "é\u{0}",
];

proptest::proptest! {
    #[test]
    fn no_text_makes_the_reader_or_the_check_panic(
        picks in proptest::collection::vec(0..PIECES.len(), 0..24),
        noise in "[ -~\n\t]{0,40}",
    ) {
        let mut text: String = picks.iter().map(|&i| PIECES[i]).collect();
        text.push_str(&noise);
        if parse(&text).is_ok() {
            let _ = check_command(&CAT, "h100-sxm", &text);
        }
    }
}

#[test]
fn a_flag_whose_dashes_became_a_typographic_dash_is_named_not_ignored() {
    // Pasted from a document that turned `--` into an em dash: argparse (prefix_chars "-")
    // reads `—tensor-parallel-size` as a stray argument and `vllm serve` stops with
    // "unrecognized arguments"; the check said "starts" and listed it as not modelled.
    let e = check_command(
        &CAT,
        "h100-sxm",
        "vllm serve meta-llama/Llama-3.1-8B-Instruct \u{2014}tensor-parallel-size 2",
    )
    .unwrap_err();
    assert_eq!(
        e,
        CommandError::DashTypo {
            written: "\u{2014}tensor-parallel-size".into(),
            meant: "--tensor-parallel-size".into(),
        }
    );
    assert_eq!(
        e.to_string(),
        "`\u{2014}tensor-parallel-size` starts with a typographic dash, not `-`: the engine's argument parser does not read it as a flag and stops (\"unrecognized arguments\"); write `--tensor-parallel-size`"
    );
    // An en dash, an inline value, a one-letter flag, SGLang's spelling.
    for (text, written, meant) in [
        (
            "vllm serve m \u{2013}max-model-len=4096",
            "\u{2013}max-model-len=4096",
            "--max-model-len",
        ),
        ("vllm serve m \u{2212}q awq", "\u{2212}q", "-q"),
        ("vllm serve m \u{2014}O3", "\u{2014}O3", "-O3"),
        (
            "python -m sglang.launch_server --model-path m \u{2014}\u{2014}tp 2",
            "\u{2014}\u{2014}tp",
            "--tp",
        ),
    ] {
        assert_eq!(
            check_command(&CAT, "h100-sxm", text).unwrap_err(),
            CommandError::DashTypo {
                written: written.into(),
                meant: meant.into(),
            },
            "{text}"
        );
    }
    // A dash inside a word (here the model itself) is not a flag's: the model is unknown.
    assert!(matches!(
        check_command(
            &CAT,
            "h100-sxm",
            "vllm serve llama\u{2014}8b --tensor-parallel-size 1"
        ),
        Err(CommandError::UnknownModel { .. })
    ));
}

#[test]
fn a_quantization_method_the_engine_lacks_does_not_start() {
    // vLLM: "Unknown quantization method: bogus. Must be one of […]" (`vllm/config/model.py`
    // `_verify_quantization`); before, the command "started", the word listed as not
    // modelled.
    let c = on(
        "h100-sxm",
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization bogus",
    );
    assert_eq!(ids(&c), ["unknown_quantization_method"]);
    assert_eq!(c.checks[0].flags, ["--quantization bogus"]);
    assert!(!c.starts());
    assert!(
        c.checks[0]
            .message
            .starts_with("vLLM has no quantization method `bogus`"),
        "{}",
        c.checks[0].message
    );
    // A spelling vramfit reads as a format but vLLM does not take (`int4`): refused too,
    // with the methods nearest to it.
    // `None` is vLLM's no quantization: nothing to check, nothing listed as not modelled.
    let none = on(
        "h100-sxm",
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization None",
    );
    assert!(none.checks.is_empty(), "{:?}", none.checks);
    let c = on(
        "h100-sxm",
        "vllm serve meta-llama/Llama-3.1-8B-Instruct -q awq-int4",
    );
    assert_eq!(ids(&c), ["unknown_quantization_method"]);
    assert!(
        c.checks[0].message.contains("Closest methods: awq"),
        "{}",
        c.checks[0].message
    );
    // SGLang's argparse `choices`: `experts_int8` is vLLM's, not SGLang's.
    let c = on(
        "h100-sxm",
        "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --quantization experts_int8",
    );
    assert_eq!(ids(&c), ["unknown_quantization_method"]);
    assert!(
        c.checks[0].message.contains("invalid choice"),
        "{}",
        c.checks[0].message
    );
    // The engines compare the value as written: `FP8` and `none` are no vLLM method.
    for (text, named) in [
        (
            "vllm serve meta-llama/Llama-3.1-8B-Instruct -q FP8",
            "`FP8`",
        ),
        (
            "vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization none",
            "`none`",
        ),
    ] {
        let c = on("h100-sxm", text);
        assert_eq!(ids(&c), ["unknown_quantization_method"], "{text}");
        assert!(
            c.checks[0].message.contains(named),
            "{}",
            c.checks[0].message
        );
    }
    // Every method either engine lists is known to it: no such check (bitsandbytes on a
    // bf16 checkpoint quantizes at load; `w8a8_int8` is SGLang's).
    for text in [
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization bitsandbytes",
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization=fp8",
        // vLLM reads `None` and an empty value as no quantization (`optional_type`).
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization None",
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization=",
        // In a release between the stored snapshots' lists.
        "vllm serve meta-llama/Llama-3.1-8B-Instruct --quantization rtn",
        "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --quantization w8a8_int8",
    ] {
        let c = on("h100-sxm", text);
        assert!(!ids(&c).contains(&"unknown_quantization_method"), "{text}: {:?}", c.checks);
    }
}

/// `--data-parallel-size`: replicas of a dense model count their GPUs and change no GPU's
/// memory; an MoE model's ranks share its experts (vLLM's expert layers over DP × TP GPUs),
/// which the plan at TP does not model; SGLang's `--dp-size` is replicas unless
/// `--enable-dp-attention` splits the TP group.
#[test]
fn data_parallel_ranks_are_replicas_or_shared_experts() {
    let dense = "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192";
    let one = on("h100-sxm", dense);
    let c = on("h100-sxm", &format!("{dense} --data-parallel-size 4"));
    assert_eq!(c.command.data_parallel, 4);
    assert_eq!(ids(&c), ["data_parallel_replicas"]);
    assert_eq!(c.checks[0].flags, ["--data-parallel-size 4"]);
    assert!(
        c.checks[0].message.contains("4 GPUs in all"),
        "{}",
        c.checks[0].message
    );
    assert!(c.command.unmodelled.iter().all(|u| !u.affects_memory));
    // Each GPU holds what one rank's plan sizes.
    assert_eq!(
        c.plan.estimate.kv_pool_bytes,
        one.plan.estimate.kv_pool_bytes
    );
    // Two GPUs visible for 4 ranks of TP 1: it stops while starting.
    let c = on(
        "h100-sxm",
        &format!("CUDA_VISIBLE_DEVICES=0,1 {dense} -dp 4"),
    );
    assert_eq!(ids(&c), ["too_few_gpus", "data_parallel_replicas"]);
    assert_eq!(c.checks[0].flags, ["CUDA_VISIBLE_DEVICES=0,1", "-dp 4"]);
    assert!(
        c.checks[0]
            .message
            .contains("TP 1 × PP 1 × DP 4 needs 4 GPUs"),
        "{}",
        c.checks[0].message
    );
    // DeepSeek-R1 at TP 8 × DP 2 with expert parallelism: 256 experts over 16 GPUs.
    let c = on(
        "h200-sxm",
        "vllm serve deepseek-ai/DeepSeek-R1 -tp 8 --data-parallel-size 2 --enable-expert-parallel --max-model-len 8192",
    );
    assert_eq!(ids(&c), ["data_parallel_not_modelled"]);
    assert!(
        c.checks[0]
            .message
            .contains("DP × TP = 16 GPUs, split by expert")
            && c.checks[0]
                .message
                .contains("1/16 of the experts, not the 1/8"),
        "{}",
        c.checks[0].message
    );
    assert!(c.command.unmodelled.iter().all(|u| u.affects_memory));
    // SGLang: `--dp-size` alone is replicas, with `--enable-dp-attention` the ranks split TP.
    let sg = "python -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B --tp 2";
    let c = on("h100-sxm", &format!("{sg} --dp-size 2"));
    assert_eq!(ids(&c), ["data_parallel_replicas"]);
    assert!(c.checks[0].message.contains("(4 GPUs in all)"));
    let c = on(
        "h100-sxm",
        &format!("CUDA_VISIBLE_DEVICES=0,1 {sg} --dp 2 --enable-dp-attention"),
    );
    // Two GPUs are enough: the ranks split the TP group.
    assert_eq!(
        ids(&c),
        ["data_parallel_not_modelled", "flags_not_modelled"]
    );
    assert!(c.checks[0].message.contains("attention weights of TP 1"));
    // Multi-node DP (vLLM's "Data Parallel Deployment" examples): a command that runs one
    // rank, or some ranks, of the deployment needs only their GPUs on its node.
    let c = on(
        "h100-sxm",
        &format!("CUDA_VISIBLE_DEVICES=0 {dense} --data-parallel-size 2 --data-parallel-rank 0"),
    );
    assert_eq!(ids(&c), ["data_parallel_replicas"]);
    assert_eq!(c.command.data_parallel_local, Some(1));
    let c = on(
        "h100-sxm",
        &format!("CUDA_VISIBLE_DEVICES=0,1 {dense} --data-parallel-size 4 --data-parallel-size-local 2 --data-parallel-address 10.0.0.1 --data-parallel-rpc-port 13345"),
    );
    assert_eq!(ids(&c), ["data_parallel_replicas"]);
    assert!(
        c.checks[0]
            .message
            .contains("2 of them on this node, 2 GPUs"),
        "{}",
        c.checks[0].message
    );
    assert!(c.command.unmodelled.iter().all(|u| !u.affects_memory));
    let c = on(
        "h100-sxm",
        &format!("CUDA_VISIBLE_DEVICES=0 {dense} -dp 4 -dpl 2"),
    );
    assert_eq!(ids(&c), ["too_few_gpus", "data_parallel_replicas"]);
    // A rank count below 1 names the flag.
    let e = parse(&format!("{dense} --data-parallel-size 0")).unwrap_err();
    assert!(e.to_string().contains("--data-parallel-size"), "{e}");
}
