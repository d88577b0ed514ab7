//! The engines' flags, each mapped onto a row of the input table ([`crate::inputs::KEYS`]),
//! listed as having no effect on memory, or (everything else) listed as not modelled.

use super::{Command, CommandError, Flag, Unmodelled};
use crate::engine::Engine;
use crate::inputs::features::{apply_vllm_json, Compound};
use crate::inputs::{human_int, key, Field, Inputs};

/// What a flag does to the question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum To {
    /// Sets a row of the input table from its value.
    Row(Field),
    /// `--quantization`: a weight format when the value names one.
    Quantization,
    /// `--dtype`: the 16/32-bit format of an unquantized checkpoint.
    Dtype,
    /// The model (`--model`, `--model-path`).
    Model,
    /// A switch that turns expert parallelism on.
    ExpertParallel,
    /// SGLang `--ep-size N` / TRT-LLM `--ep_size N`: expert parallelism when N > 1.
    EpSize,
    /// TRT-LLM `--backend`: the PyTorch backend is what is modelled.
    TrtBackend,
    /// vLLM `--data-parallel-size N`, SGLang `--dp-size N`: data-parallel ranks
    /// ([`Command::data_parallel`]); what they do to memory is checked once the model is known.
    DataParallel,
    /// vLLM `--data-parallel-size-local N`: the ranks this node runs
    /// ([`Command::data_parallel_local`]).
    DataParallelLocal,
    /// vLLM `--data-parallel-rank N`: this command runs that one rank.
    DataParallelRank,
    /// A switch that turns a row on (`--enforce-eager`).
    On(Field),
    /// A switch that turns a row off (`--enable-prefix-caching` = not `--no-enable-…`).
    Off(Field),
    /// A JSON flag read onto several rows (`--limit-mm-per-prompt`, `--speculative-config`).
    Json(Compound),
    /// `--language-model-only` (vLLM ≥ 0.17): every modality's limit 0.
    LanguageModelOnly,
}

/// One engine's flags.
struct Table {
    /// Flags and what they set.
    rows: &'static [(&'static str, To)],
    /// Switches (take no value) among the modelled and no-memory flags.
    switches: &'static [&'static str],
    /// Known flags with no effect on memory (network, logging, API, tokenizer, templates).
    no_memory: &'static [&'static str],
    /// Known switches that are not modelled (take no value).
    unmodelled_switches: &'static [&'static str],
    /// Underscores in flag names are read as dashes (vLLM's `FlexibleArgumentParser`).
    underscores: bool,
}

const VLLM: Table = Table {
    rows: &[
        ("--model", To::Model),
        ("--tensor-parallel-size", To::Row(Field::TensorParallelSize)),
        ("-tp", To::Row(Field::TensorParallelSize)),
        (
            "--pipeline-parallel-size",
            To::Row(Field::PipelineParallelSize),
        ),
        ("-pp", To::Row(Field::PipelineParallelSize)),
        ("--max-model-len", To::Row(Field::MaxModelLen)),
        (
            "--gpu-memory-utilization",
            To::Row(Field::GpuMemoryUtilization),
        ),
        ("--kv-cache-dtype", To::Row(Field::KvDtype)),
        ("--max-num-seqs", To::Row(Field::MaxNumSeqs)),
        (
            "--max-num-batched-tokens",
            To::Row(Field::MaxNumBatchedTokens),
        ),
        ("--block-size", To::Row(Field::BlockSize)),
        ("--quantization", To::Quantization),
        ("-q", To::Quantization),
        ("--dtype", To::Dtype),
        ("--enable-expert-parallel", To::ExpertParallel),
        ("--data-parallel-size", To::DataParallel),
        ("-dp", To::DataParallel),
        ("--data-parallel-size-local", To::DataParallelLocal),
        ("-dpl", To::DataParallelLocal),
        ("--data-parallel-rank", To::DataParallelRank),
        ("-dpn", To::DataParallelRank),
        ("--enable-lora", To::On(Field::EnableLora)),
        ("--max-loras", To::Row(Field::MaxLoras)),
        ("--max-lora-rank", To::Row(Field::MaxLoraRank)),
        ("--max-cpu-loras", To::Row(Field::MaxCpuLoras)),
        ("--fully-sharded-loras", To::On(Field::FullyShardedLoras)),
        ("--enforce-eager", To::On(Field::EnforceEager)),
        ("--cpu-offload-gb", To::Row(Field::CpuOffloadGb)),
        ("--swap-space", To::Row(Field::SwapSpace)),
        ("--no-enable-prefix-caching", To::On(Field::NoPrefixCaching)),
        ("--enable-prefix-caching", To::Off(Field::NoPrefixCaching)),
        (
            "--kv-cache-memory-bytes",
            To::Row(Field::KvCacheMemoryBytes),
        ),
        ("--mm-encoder-tp-mode", To::Row(Field::MmEncoderTpMode)),
        ("--skip-mm-profiling", To::On(Field::SkipMmProfiling)),
        ("--lora-target-modules", To::Row(Field::LoraTargetModules)),
        ("--language-model-only", To::LanguageModelOnly),
        (
            "--limit-mm-per-prompt",
            To::Json(Compound::LimitMmPerPrompt),
        ),
        (
            "--mm-processor-kwargs",
            To::Json(Compound::MmProcessorKwargs),
        ),
        (
            "--speculative-config",
            To::Json(Compound::SpeculativeConfig),
        ),
    ],
    switches: &[
        "--enable-expert-parallel",
        "--enable-lora",
        "--fully-sharded-loras",
        "--enforce-eager",
        "--skip-mm-profiling",
        "--language-model-only",
        "--trust-remote-code",
        "--enable-prefix-caching",
        "--no-enable-prefix-caching",
        "--enable-chunked-prefill",
        "--no-enable-chunked-prefill",
        "--disable-log-requests",
        "--enable-log-requests",
        "--disable-log-stats",
        "--enable-auto-tool-choice",
        "--disable-fastapi-docs",
        "--enable-prompt-tokens-details",
        "--enable-server-load-tracking",
        "--enable-force-include-usage",
        "--disable-uvicorn-access-log",
        "--return-tokens-as-token-ids",
        "--enable-request-id-headers",
        "--allow-credentials",
        "--disable-frontend-multiprocessing",
        "--headless",
    ],
    no_memory: &[
        "--host",
        "--port",
        "--uvicorn-log-level",
        "--api-key",
        "--served-model-name",
        "--trust-remote-code",
        "--tokenizer",
        "--tokenizer-mode",
        "--revision",
        "--code-revision",
        "--tokenizer-revision",
        "--download-dir",
        "--load-format",
        "--chat-template",
        "--chat-template-content-format",
        "--response-role",
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "--tool-parser-plugin",
        "--reasoning-parser",
        "--disable-log-requests",
        "--enable-log-requests",
        "--disable-log-stats",
        "--disable-uvicorn-access-log",
        "--allowed-origins",
        "--allowed-methods",
        "--allowed-headers",
        "--allow-credentials",
        "--ssl-keyfile",
        "--ssl-certfile",
        "--ssl-ca-certs",
        "--root-path",
        "--middleware",
        "--seed",
        "--disable-fastapi-docs",
        "--enable-prompt-tokens-details",
        "--enable-server-load-tracking",
        "--enable-force-include-usage",
        "--return-tokens-as-token-ids",
        "--max-log-len",
        "--generation-config",
        "--override-generation-config",
        "--distributed-executor-backend",
        "--enable-chunked-prefill",
        "--no-enable-chunked-prefill",
        "--enable-request-id-headers",
        "--lora-modules",
        "--api-server-count",
        "--disable-frontend-multiprocessing",
        "--headless",
        "--data-parallel-address",
        "-dpa",
        "--data-parallel-rpc-port",
        "-dpp",
        "--data-parallel-start-rank",
        "-dpr",
        "--data-parallel-backend",
        "-dpb",
    ],
    unmodelled_switches: &[
        "--disable-custom-all-reduce",
        "--disable-sliding-window",
        "--enable-sleep-mode",
        "--async-scheduling",
        "--enable-eplb",
        "--enable-dbo",
        "--skip-tokenizer-init",
        "--calculate-kv-scales",
    ],
    underscores: true,
};

const SGLANG: Table = Table {
    rows: &[
        ("--model-path", To::Model),
        ("--model", To::Model),
        ("--tp-size", To::Row(Field::TensorParallelSize)),
        ("--tp", To::Row(Field::TensorParallelSize)),
        ("--tensor-parallel-size", To::Row(Field::TensorParallelSize)),
        ("--pp-size", To::Row(Field::PipelineParallelSize)),
        (
            "--pipeline-parallel-size",
            To::Row(Field::PipelineParallelSize),
        ),
        ("--context-length", To::Row(Field::MaxModelLen)),
        (
            "--mem-fraction-static",
            To::Row(Field::GpuMemoryUtilization),
        ),
        ("--kv-cache-dtype", To::Row(Field::KvDtype)),
        ("--max-running-requests", To::Row(Field::MaxNumSeqs)),
        (
            "--chunked-prefill-size",
            To::Row(Field::MaxNumBatchedTokens),
        ),
        ("--page-size", To::Row(Field::BlockSize)),
        ("--quantization", To::Quantization),
        ("--dtype", To::Dtype),
        ("--ep-size", To::EpSize),
        ("--ep", To::EpSize),
        ("--expert-parallel-size", To::EpSize),
        ("--dp-size", To::DataParallel),
        ("--dp", To::DataParallel),
        ("--data-parallel-size", To::DataParallel),
        ("--disable-radix-cache", To::On(Field::NoPrefixCaching)),
        ("--disable-cuda-graph", To::On(Field::EnforceEager)),
    ],
    switches: &[
        "--trust-remote-code",
        "--enable-metrics",
        "--log-requests",
        "--skip-server-warmup",
        "--disable-radix-cache",
        "--disable-cuda-graph",
    ],
    no_memory: &[
        "--host",
        "--port",
        "--served-model-name",
        "--api-key",
        "--trust-remote-code",
        "--tokenizer-path",
        "--tokenizer-mode",
        "--revision",
        "--download-dir",
        "--load-format",
        "--chat-template",
        "--reasoning-parser",
        "--tool-call-parser",
        "--log-level",
        "--log-requests",
        "--enable-metrics",
        "--skip-server-warmup",
        "--random-seed",
        "--schedule-policy",
        "--file-storage-path",
    ],
    unmodelled_switches: &[
        "--enable-dp-attention",
        "--enable-torch-compile",
        "--enable-lora",
        "--enable-mixed-chunk",
    ],
    underscores: false,
};

const TRTLLM: Table = Table {
    rows: &[
        ("--tp_size", To::Row(Field::TensorParallelSize)),
        ("--pp_size", To::Row(Field::PipelineParallelSize)),
        ("--max_seq_len", To::Row(Field::MaxModelLen)),
        ("--max_batch_size", To::Row(Field::MaxNumSeqs)),
        ("--max_num_tokens", To::Row(Field::MaxNumBatchedTokens)),
        (
            "--kv_cache_free_gpu_memory_fraction",
            To::Row(Field::GpuMemoryUtilization),
        ),
        ("--ep_size", To::EpSize),
        ("--backend", To::TrtBackend),
    ],
    switches: &["--trust_remote_code"],
    no_memory: &[
        "--host",
        "--port",
        "--tokenizer",
        "--log_level",
        "--trust_remote_code",
        "--served_model_name",
        "--reasoning_parser",
        "--tool_parser",
        "--num_postprocess_workers",
        "--metadata_server_config_file",
        "--server_role",
        "--gpus_per_node",
        "--cluster_size",
    ],
    unmodelled_switches: &[],
    underscores: false,
};

fn table(e: Engine) -> &'static Table {
    match e {
        Engine::Sglang => &SGLANG,
        Engine::TrtLlm => &TRTLLM,
        _ => &VLLM,
    }
}

/// Whether `flag`, as written, sets the data-parallel size in `engine`'s table
/// ([`Command::data_parallel`]).
pub(super) fn sets_data_parallel(engine: Engine, flag: &str) -> bool {
    let t = table(engine);
    row_of(t, &canonical(t, flag)) == Some(To::DataParallel)
}

/// The flag as its table spells it (`--max_model_len` → `--max-model-len` for vLLM).
fn canonical(t: &Table, flag: &str) -> String {
    if t.underscores && flag.starts_with("--") {
        format!("--{}", flag[2..].replace('_', "-"))
    } else {
        flag.to_string()
    }
}

/// The model words and flags of the engine's command line (after its program words).
pub(super) fn read(engine: Engine, args: &[String]) -> Result<Command, CommandError> {
    let t = table(engine);
    let mut c = Command {
        engine,
        model: String::new(),
        inputs: Inputs::default(),
        flags: Vec::new(),
        unmodelled: Vec::new(),
        env: Vec::new(),
        quantization: None,
        dtype: None,
        docker_gpus: None,
        data_parallel: 1,
        data_parallel_local: None,
        image: None,
    };
    // What the engine does without the flag: TP 1, PP 1, the model's own maximum length.
    c.inputs.tensor_parallel_size = Some(1);
    c.inputs.pipeline_parallel_size = Some(1);
    c.inputs.flags.max_model_len = None;
    c.inputs.flags.engine = engine;
    let mut positional: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if let Some(meant) = dash_typo(a) {
            return Err(CommandError::DashTypo {
                written: a.clone(),
                meant,
            });
        }
        if !a.starts_with('-') || a == "-" || a == "--" {
            if positional.is_none() {
                positional = Some(a.clone());
            } else {
                c.unmodelled.push(Unmodelled {
                    flag: a.clone(),
                    value: None,
                    affects_memory: true,
                });
            }
            continue;
        }
        let (written, inline) = match a.split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (a.clone(), None),
        };
        let flag = canonical(t, &written);
        let row = t.rows.iter().find(|(f, _)| *f == flag).map(|(_, to)| *to);
        let switch =
            t.switches.contains(&flag.as_str()) || t.unmodelled_switches.contains(&flag.as_str());
        let value = if switch || inline.is_some() {
            inline
        } else if let Some(n) = args.get(i).filter(|n| !looks_like_flag(n)) {
            i += 1;
            Some(n.clone())
        } else {
            None
        };
        match row {
            Some(to) => apply(&mut c, to, &written, value.as_deref())?,
            // A known flag that takes a value, with none (the command's end, or a dash word
            // next): argparse stops ("expected one argument"), as for the modelled rows.
            None if value.is_none() && !switch && t.no_memory.contains(&flag.as_str()) => {
                return Err(CommandError::MissingValue { flag: written });
            }
            None => c.unmodelled.push(Unmodelled {
                flag: written.clone(),
                value: value.clone(),
                affects_memory: !t.no_memory.contains(&flag.as_str()),
            }),
        }
        c.flags.push(Flag {
            flag: written,
            value,
        });
    }
    // The positional model, else the last `--model` (argparse: the last one wins).
    let flagged = c.flags.iter().rev().find_map(|f| {
        (row_of(t, &canonical(t, &f.flag)) == Some(To::Model))
            .then(|| f.value.clone())
            .flatten()
    });
    c.model = positional.or(flagged).unwrap_or_default();
    if c.model.is_empty() {
        return Err(CommandError::NoModel {
            engine: engine.family(),
        });
    }
    let model = c.model.clone();
    c.inputs
        .set(Field::Model, &model)
        .map_err(|message| CommandError::BadValue {
            flag: "model".into(),
            message,
        })?;
    Ok(c)
}

/// A word that is a flag, not a value: `--x`, `-tp`; not `-1` or `-0.5`.
fn looks_like_flag(w: &str) -> bool {
    w.starts_with("--")
        || (w.len() > 1
            && w.starts_with('-')
            && w[1..].starts_with(|c: char| c.is_ascii_alphabetic()))
}

fn row_of(t: &Table, flag: &str) -> Option<To> {
    t.rows.iter().find(|(f, _)| *f == flag).map(|(_, to)| *to)
}

/// Applies one modelled flag.
fn apply(c: &mut Command, to: To, written: &str, value: Option<&str>) -> Result<(), CommandError> {
    let need = || CommandError::MissingValue {
        flag: written.to_string(),
    };
    let bad = |message: String| CommandError::BadValue {
        flag: written.to_string(),
        message,
    };
    match to {
        To::Model => {}
        To::ExpertParallel => c.inputs.flags.expert_parallel = true,
        To::On(field) | To::Off(field) => {
            // A switch may be written `--enforce-eager=true` / `=false`.
            let on = match value.map(str::to_ascii_lowercase).as_deref() {
                None | Some("1" | "true") => true,
                Some("0" | "false") => false,
                Some(v) => return Err(bad(format!("`{v}` is not true or false"))),
            };
            let on = if matches!(to, To::Off(_)) { !on } else { on };
            c.inputs
                .set(field, if on { "1" } else { "0" })
                .map_err(bad)?;
        }
        To::LanguageModelOnly => {
            for f in [Field::MmImages, Field::MmVideos, Field::MmAudios] {
                c.inputs.set(f, "0").map_err(bad)?;
            }
        }
        To::Json(compound) => {
            let v = value.ok_or_else(need)?;
            let applied = apply_vllm_json(compound, v).map_err(bad)?;
            for (field, value) in applied.rows {
                c.inputs.set(field, &value).map_err(bad)?;
            }
            for k in applied.ignored {
                c.unmodelled.push(Unmodelled {
                    flag: format!("{written} {k}"),
                    value: None,
                    affects_memory: true,
                });
            }
        }
        To::DataParallel => {
            let v = value.ok_or_else(need)?;
            let n: u64 = v
                .parse()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| bad(format!("`{v}` is not a whole number of at least 1")))?;
            c.data_parallel = n;
            // Listed until the check knows the model: replicas of a dense model change no
            // GPU's memory, an MoE model's shared experts do (`checks::data_parallel`).
            c.unmodelled.push(Unmodelled {
                flag: written.to_string(),
                value: Some(v.to_string()),
                affects_memory: true,
            });
        }
        To::DataParallelLocal | To::DataParallelRank => {
            let v = value.ok_or_else(need)?;
            let n: u64 = v
                .parse()
                .map_err(|_| bad(format!("`{v}` is not a whole number")))?;
            // The ranks this node runs: as many as given, or the one rank named (unless the
            // local count is given too, in either order).
            match to {
                To::DataParallelLocal => c.data_parallel_local = Some(n),
                _ => {
                    c.data_parallel_local.get_or_insert(1);
                }
            }
            c.unmodelled.push(Unmodelled {
                flag: written.to_string(),
                value: Some(v.to_string()),
                affects_memory: false,
            });
        }
        To::EpSize => {
            let v = value.ok_or_else(need)?;
            let n: u64 = v
                .parse()
                .map_err(|_| bad(format!("`{v}` is not a whole number")))?;
            c.inputs.flags.expert_parallel = n > 1;
        }
        To::TrtBackend => {
            let v = value.ok_or_else(need)?;
            if v != "pytorch" {
                c.unmodelled.push(Unmodelled {
                    flag: written.to_string(),
                    value: Some(v.to_string()),
                    affects_memory: true,
                });
            }
        }
        To::Quantization => {
            let v = value.ok_or_else(need)?;
            c.quantization = Some(v.to_ascii_lowercase());
            // vLLM's `None` (or an empty value) is no quantization (`optional_type`): the
            // checkpoint's format, nothing to list.
            let none = matches!(c.engine, Engine::Vllm { .. }) && matches!(v, "None" | "");
            // A method that names no weight format of the table (`compressed-tensors`,
            // `bitsandbytes`, `gguf`) leaves the format to the checkpoint, and is listed.
            if !none && c.inputs.set(Field::Format, v).is_err() {
                c.unmodelled.push(Unmodelled {
                    flag: written.to_string(),
                    value: Some(v.to_string()),
                    affects_memory: true,
                });
            }
        }
        To::Dtype => {
            let v = value.ok_or_else(need)?;
            c.dtype = Some(v.to_ascii_lowercase());
            match v.to_ascii_lowercase().as_str() {
                "float16" | "half" | "fp16" if c.quantization.is_none() => {
                    c.inputs.format = Some(crate::dtype::WeightFormat::Fp16);
                }
                "float32" | "float" | "fp32" if c.quantization.is_none() => {
                    c.inputs.format = Some(crate::dtype::WeightFormat::Fp32);
                }
                "auto" | "bfloat16" | "bf16" | "float16" | "half" | "fp16" | "float32"
                | "float" | "fp32" => {}
                _ => {
                    return Err(bad(format!(
                        "unknown dtype `{v}` (auto, bfloat16, float16, float32)"
                    )))
                }
            }
        }
        To::Row(field) => {
            let v = value.ok_or_else(need)?;
            if v.starts_with('$') {
                return Err(bad(format!(
                    "`{v}` is a shell variable; vramfit cannot see its value: write the number"
                )));
            }
            let v = match field {
                // vLLM then picks the longest length that fits (`Estimate::
                // vllm_auto_max_model_len`); SGLang's `--context-length` has no such value.
                Field::MaxModelLen
                    if matches!(v, "auto" | "-1") && matches!(c.engine, Engine::Vllm { .. }) =>
                {
                    "-1".to_string()
                }
                Field::MaxModelLen | Field::MaxNumBatchedTokens => {
                    human_int(v).map_or_else(|| v.to_string(), |n| n.to_string())
                }
                _ => v.to_string(),
            };
            c.inputs.set(field, &v).map_err(|e| {
                let row = key(field).flag;
                if written == row || e.contains(written) {
                    bad(e)
                } else {
                    bad(format!("{e} (`{written}` is {row})"))
                }
            })?;
        }
    }
    Ok(())
}

/// The flag a word was meant to be when it starts with a typographic dash (en dash, em dash,
/// minus sign, and their kin) followed by a flag's name: `—tensor-parallel-size` →
/// `--tensor-parallel-size`, `–tp` → `--tp`, `—q` → `-q`, `—O3` → `-O3`. `None` for any
/// other word.
fn dash_typo(w: &str) -> Option<String> {
    const DASHES: [char; 9] = [
        '\u{2010}', '\u{2011}', '\u{2012}', '\u{2013}', '\u{2014}', '\u{2015}', '\u{2212}',
        '\u{FE63}', '\u{FF0D}',
    ];
    let name = w.trim_start_matches(|c| DASHES.contains(&c) || c == '-');
    let starts = w.starts_with(DASHES);
    let (name, _) = name.split_once('=').unwrap_or((name, ""));
    // One letter, or one letter and digits (`-q`, vLLM's `-O3`), take one dash.
    let short = name.bytes().skip(1).all(|b| b.is_ascii_digit());
    (starts && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())).then(|| {
        if short {
            format!("-{name}")
        } else {
            format!("--{name}")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_readable_ints_read_as_vllm_reads_them() {
        for (s, want) in [
            ("32k", Some("32000")),
            ("25.6k", Some("25600")),
            ("32K", Some("32768")),
            ("1M", Some("1048576")),
            ("1.5K", None),
            ("k", None),
            ("8192", None),
            ("99999999999999999999k", None),
        ] {
            assert_eq!(human_int(s).map(|n| n.to_string()).as_deref(), want, "{s}");
        }
    }
}
