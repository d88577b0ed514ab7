//! Throughput against published measurements: the rows of the calibration set that give
//! output tokens/s for a model, GPU, precision, layout, lengths and load, turned into
//! [`Case`]s the serving model ([`crate::serving`]) predicts.
//!
//! - [`cases`] reads the rows (TensorRT-LLM `trtllm-bench` max-load tables, vLLM and SGLang
//!   sweeps, AMD's MI300X tables); each case keeps its source. A `trtllm-bench` run that
//!   names no scheduler limits runs at the ones the tool derives from the model, GPU and
//!   lengths ([`super::trtllm_bench`]).
//! - [`fit`] fits [`Constants`] by coordinate descent on the mean |log error|, within each
//!   constant's physical bounds ([`Constants::BOUNDS`]).
//! - [`held_out`] refits without one group (a GPU, or a model) and predicts that group:
//!   leave-one-GPU-out and leave-one-model-out errors are those predictions' errors.
//!
//! Rows whose source leaves open the column's definition (`CAVEAT` in `notes`) or the network
//! of a TP group across nodes are reported but not fitted on ([`Unfitted`]); a column a later
//! revision of its source defines is read as defined there ([`per_gpu_as_revised`]); a
//! layout is read as the run's command set it, not only as its column is headed (the
//! 1.0-era MoE "TPn" columns ran attention DP, `dep_by_command`); rows without fixed lengths
//! are skipped with the reason.
#![cfg_attr(not(feature = "bundled"), allow(dead_code, unused_imports))]

use super::{parse_csv, Rec};
use crate::catalog::Catalog;
use crate::dtype::{KvDtype, WeightFormat};
use crate::engine::Engine;
use crate::serving::{serve, Constants, Load, Replica, Traffic};
use crate::sizing::{estimate_bytes, Scenario};

/// One published throughput measurement with what the model needs to predict it.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Source (document and revision).
    pub source: String,
    /// Catalog model id.
    pub model: String,
    /// Catalog GPU id.
    pub gpu: String,
    /// Engine.
    pub engine: Engine,
    /// Weight format id.
    pub precision: String,
    /// KV cache dtype used.
    pub kv_dtype: KvDtype,
    /// TP (for a DEP layout, its GPU count).
    pub tp: u64,
    /// Whether the layout is DEP (attention data-parallel × expert-parallel over `tp` GPUs).
    pub dep: bool,
    /// PP.
    pub pp: u64,
    /// Prompt tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Load.
    pub load: Load,
    /// Requests in the run (caps the concurrency of a max-load run).
    pub num_requests: Option<u64>,
    /// Measured output tokens/s of the whole layout.
    pub measured: f64,
    /// Measured mean TTFT, ms, where the source gives it.
    pub ttft_ms: Option<f64>,
    /// Measured mean inter-token latency, ms, where the source gives it.
    pub itl_ms: Option<f64>,
    /// Why the case is shown but not fitted on, if it is.
    pub unfitted: Option<Unfitted>,
    /// Run without CUDA graphs.
    pub eager: bool,
    /// The replica, built once.
    pub replica: Replica,
}

/// Why a case is shown but not fitted on: the source leaves open something its prediction
/// needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unfitted {
    /// The column's definition (`CAVEAT` in `notes`).
    ColumnOpen,
    /// The network of a TP group across nodes, or across Kubernetes pods of one node (Ray):
    /// the runs name no interface, its speed or its latency, only "network between GPUs",
    /// and the inter-token
    /// latency they report (44 ms at TP 2 for a 7B model, 87 ms at TP 4 for gpt-oss-120b, at
    /// one request) is several times the socket default's ([`NETWORK_ALPHA_S`]).
    NetworkUnstated,
}

impl Case {
    /// Whether the case is fitted on ([`Case::unfitted`]).
    #[must_use]
    pub fn fitted(&self) -> bool {
        self.unfitted.is_none()
    }

    /// GPUs of the layout.
    #[must_use]
    pub fn gpus(&self) -> u64 {
        self.tp * self.pp
    }

    /// Series key: the same measurement at other layouts.
    #[must_use]
    pub fn series(&self) -> String {
        format!(
            "{}|{}|{}|{}|{}|{}/{}|{:?}|{}",
            self.source,
            self.model,
            self.gpu,
            self.engine.id(),
            self.precision,
            self.input,
            self.output,
            self.load,
            self.dep
        )
    }

    /// The workload in words.
    #[must_use]
    pub fn workload(&self) -> String {
        match self.load {
            Load::MaxLoad => format!("max load {}/{}", self.input, self.output),
            Load::Concurrency(n) => format!("{n} in flight, {}/{}", self.input, self.output),
            Load::Rate(r) => format!("{r} req/s, {}/{}", self.input, self.output),
        }
    }
}

/// Predicted output tokens/s of a case's whole layout.
#[must_use]
pub fn predict(c: &Case, k: &Constants) -> f64 {
    let load = match (c.load, c.num_requests) {
        (Load::MaxLoad, Some(n)) => {
            let t = Traffic {
                input: c.input,
                output: c.output,
                load: Load::MaxLoad,
                prefix_hit: 0.0,
            };
            let (cap, _) = crate::serving::capacity(&c.replica, &t);
            if crate::units::real(n) < cap {
                Load::Concurrency(n)
            } else {
                Load::MaxLoad
            }
        }
        (l, _) => l,
    };
    serve(
        &c.replica,
        k,
        &Traffic {
            input: c.input,
            output: c.output,
            load,
            prefix_hit: 0.0,
        },
    )
    .tokens_per_s_total
}

/// The number right after the first `key` that has one ("TP4" after "whole TP group",
/// "DEP8" after "DEPLOYED").
fn num_after(notes: &str, key: &str) -> Option<u64> {
    notes.match_indices(key).find_map(|(i, _)| {
        notes[i + key.len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .ok()
    })
}

/// Signed errors `(predicted − measured) / measured` of the fitted-on cases
/// ([`Case::fitted`]) that `keep` selects, `pred` holding a prediction per case.
#[must_use]
pub fn signed_errors(cases: &[Case], pred: &[f64], keep: impl Fn(&Case) -> bool) -> Vec<f64> {
    cases
        .iter()
        .zip(pred)
        .filter(|(c, _)| c.fitted() && keep(c))
        .map(|(c, p)| super::rel(c.measured, *p))
        .collect()
}

/// GPUs with fitted-on cases, in catalog-id order.
#[must_use]
pub fn fitted_gpus(cases: &[Case]) -> Vec<String> {
    let mut g: Vec<String> = cases
        .iter()
        .filter(|c| c.fitted())
        .map(|c| c.gpu.clone())
        .collect();
    g.sort_unstable();
    g.dedup();
    g
}

/// Skipped rows by reason, "N × reason" in first-seen order (the model before ": " dropped).
#[must_use]
pub fn skip_reasons(skipped: &[String]) -> String {
    let mut reasons: Vec<(&str, usize)> = Vec::new();
    for sk in skipped {
        let why = sk.rsplit(": ").next().unwrap_or(sk);
        match reasons.iter_mut().find(|(w, _)| *w == why) {
            Some(e) => e.1 += 1,
            None => reasons.push((why, 1)),
        }
    }
    let parts: Vec<String> = reasons.iter().map(|(w, n)| format!("{n} × {w}")).collect();
    parts.join("; ")
}

/// Where a later revision of a source defines a column its cited revision left open, the
/// factor from the printed value to the layout's output tokens/s.
///
/// TensorRT-LLM's `docs/source/performance.md` at 138f96d4 heads its A100 and L40S tables
/// "Throughput (out tok/s)" beside the H100 table's "(out tok/s/GPU)"; the next revision (the
/// `trtllm-build` commands, the same v0.6.1 and v0.5 figures) heads all three "Throughput (out
/// tok/s/GPU)". The rows keep the value as printed, so a TP > 1 row is multiplied by its GPUs,
/// as the H100 rows already are. (The figures agree: LLaMA 70B on 4 × A100 at batch 1280,
/// 128/128 tokens, prints 670; 4 × 670 tokens/s is what 4 × 312 dense TFLOP/s at ~60 % give for
/// 140 GFLOP per token over the run's prefill and decode.)
fn per_gpu_as_revised(source: &str, notes: &str, gpus: u64) -> f64 {
    if source.contains("TensorRT-LLM docs/source/performance.md @138f96d4")
        && notes.contains("value as printed ('Throughput (out tok/s)'")
    {
        crate::units::real(gpus)
    } else {
        1.0
    }
}

/// Whether the run's document sets an FP8 KV cache (`KV cache dtype per doc llm_options:`
/// TensorRT-LLM's perf-overview gives `kv_cache_config: dtype: fp8` in its options files,
/// for gpt-oss on Blackwell only: "fp8 on Blackwell, auto on Hopper").
fn doc_kv_fp8(notes: &str, blackwell: bool) -> bool {
    const KEY: &str = "KV cache dtype per doc llm_options: fp8";
    notes.contains(KEY) && (blackwell || !notes.contains("fp8 on Blackwell"))
}

/// Whether a run across nodes names its network (an interface, or a link speed).
fn names_network(notes: &str) -> bool {
    notes
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '/'))
        .any(|w| ["InfiniBand", "RoCE", "GbE", "Gb/s", "EFA"].contains(&w) || w.ends_with("GbE"))
}

/// The number written just before `key` ("500 requests;"); none where it is part of a
/// grouped or decimal figure ("1,000 requests").
fn count_before(notes: &str, key: &str) -> Option<u64> {
    let head = &notes[..notes.find(key)?];
    let rest = head.trim_end_matches(|c: char| c.is_ascii_digit());
    if rest.ends_with([',', '.']) {
        return None;
    }
    head[rest.len()..].parse().ok().filter(|n| *n > 0)
}

/// AMD's MI300X latency tables whose command sets no `--kv-cache-dtype`, so vLLM keeps the
/// KV cache in the model's dtype although the checkpoint is an `-FP8-KV` one: ROCm/vllm
/// `docs/dev-docker/README.md` at 040de12d ("Latency Benchmark": `benchmark_latency.py
/// --dtype float16 …` without it; its throughput command passes `--kv-cache-dtype fp8`) and
/// AMD's quickstart that summarises that revision. The 20250124 revision's latency command
/// passes it.
fn latency_without_fp8_kv(source: &str, notes: &str) -> bool {
    notes.contains("benchmark_latency")
        && (source.contains("@040de12d") || source.contains("quickstart"))
}

fn ms_after(notes: &str, key: &str) -> Option<f64> {
    let i = notes.find(key)?;
    let num: String = notes[i + key.len()..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    crate::decimal::parse_f64(&num).filter(|x| x.is_finite() && *x > 0.0)
}

/// The network a run across nodes is predicted over when its source names none (the app's
/// default: 100 Gb/s Ethernet, NCCL over TCP sockets); such runs are not fitted on.
use crate::serving::{
    ALPHA_SOCKET_S as NETWORK_ALPHA_S, SOCKET_NETWORK_BYTES_PER_S as NETWORK_LINK_BYTES_PER_S,
};

fn norm(name: &str) -> String {
    let mut s = name.trim().to_ascii_lowercase();
    if let Some(i) = s.rfind('/') {
        s = s[i + 1..].to_string();
    }
    s = s.trim_start_matches("meta-").to_string();
    for suffix in [
        "-nvfp4-v2",
        "-fp8-kv",
        "-nvfp4",
        "-fp8",
        "-fp4",
        "-0528",
        "-instruct",
        "-chat",
        "-hf",
        "-v0.1",
        "-v0.3",
        "-base",
    ] {
        if let Some(t) = s.strip_suffix(suffix) {
            s = t.to_string();
        }
        s = s.replace(&format!("{suffix}-"), "-");
    }
    s
}

/// Catalog model id for a row's model column (`nvidia/Llama-3.3-70B-Instruct-FP4 | … (…)`).
fn model_for(cat: &Catalog, raw: &str) -> Option<String> {
    let head = raw.split(" (").next().unwrap_or(raw);
    for part in head.split('|') {
        let part = part.trim();
        if let Some(m) = cat.model(part) {
            return Some(m.model.id.clone());
        }
        let n = norm(part);
        for m in &cat.models {
            if norm(&m.id) == n || m.hf_repo_ids.iter().any(|h| norm(h) == n) {
                return Some(m.id.clone());
            }
        }
    }
    None
}

fn gpu_for(cat: &Catalog, raw: &str) -> Option<String> {
    let l = raw.to_ascii_lowercase();
    // The Grace Hopper superchip before H200 (its name holds "h200"); "GH200 480GB" is the
    // 96 GB HBM3 module with 480 GB of LPDDR5X (the v0.21 perf-overview's heading).
    let id = if l.contains("gh200") {
        if l.contains("144gb") || l.contains("hbm3e") {
            "gh200-144gb"
        } else {
            "gh200-96gb"
        }
    } else if l.contains("gb200") {
        "gb200"
    } else if l.contains("b200") {
        "b200"
    } else if l.contains("mi300x") {
        "mi300x"
    } else if l.contains("l40s") {
        "l40s"
    } else if l.contains("h200") && l.contains("nvl") {
        "h200-nvl"
    } else if l.contains("h200") {
        "h200-sxm"
    } else if l.contains("rtx") && l.contains("6000") && l.contains("pro") {
        if l.contains("server") {
            "rtx-pro-6000-blackwell-server"
        } else {
            "rtx-pro-6000-blackwell-ws"
        }
    } else if l.contains("h100") {
        "h100-sxm"
    } else if l.contains("a100") && l.contains("pcie") {
        if l.contains("40gb") {
            "a100-40gb-pcie"
        } else {
            "a100-80gb-pcie"
        }
    } else if l.contains("a100") && l.contains("40gb") {
        "a100-40gb-sxm"
    } else if l.contains("a100") {
        "a100-80gb-sxm"
    } else {
        return cat
            .gpu(raw.split(" (").next().unwrap_or(raw))
            .map(|g| g.id.clone());
    };
    Some(id.to_string())
}

/// Whether the row's document is of a TensorRT-LLM release before NVFP4 (v0.14, v0.15), whose
/// trtllm-bench sized engines with the earlier tuning code ([`super::trtllm_bench`]).
fn before_nvfp4(source: &str) -> bool {
    source.contains("generated using version 0.15.0") || source.contains("TensorRT-LLM v0.14.0")
}

/// Whether a TensorRT-LLM row ran its PyTorch backend (v0.19 on), not a TensorRT engine.
fn pytorch_backend(notes: &str) -> bool {
    notes.contains("PyTorch") || notes.contains("pytorch")
}

/// Attention data-parallel over a "TPn" column's GPUs: TensorRT-LLM's 1.0-era performance
/// overview (`docs/source/developer-guide/perf-overview.md`, the revision that adds the RTX
/// PRO 6000 tables, and `performance/perf-overview.md` @00f37686, whose B200/GB200/H100 cells
/// it shares) runs MoE models with `trtllm-bench --tp $tp_size --pp $pp_size --ep $ep_size`
/// and `llm_options.yml` holding `enable_attention_dp: true` ("For MoE models"), while its
/// tables head those columns "TPn"; the 1.1 and 1.2 revisions label the same kind of runs
/// "DEPn" (H100 Qwen3-235B: 1.0 "TP8" 1000/1000 at 1,862 tokens/s per GPU, 1.1 "DEP8" 1,932).
/// `ep_size` per row is not stated: taken as the GPU count, as in "DEPn". The earlier PyTorch
/// backend revisions (v0.19-v0.21) give one `llm_options.yml` for every model, without
/// attention DP, and their "TPn" stays tensor parallelism.
fn dep_by_command(notes: &str, moe: bool, tp: u64) -> Option<u64> {
    (moe && tp > 1 && notes.starts_with("TensorRT-LLM 1.0-era")).then_some(tp)
}

fn layout(notes: &str, tp_col: Option<f64>) -> Option<(u64, u64)> {
    if let Some(tp) = num_after(notes, "TP") {
        let pp = notes
            .find(&format!("TP{tp},PP"))
            .and_then(|i| num_after(&notes[i..], "PP"))
            .unwrap_or(1);
        return Some((tp.max(1), pp.max(1)));
    }
    // OK because: TP is a small positive integer in the data.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    tp_col.map(|t| (t.max(1.0) as u64, 1))
}

fn format_for(quant: &str, dtype: &str, native: WeightFormat, gpu_has_fp4: bool) -> WeightFormat {
    let q = quant.to_ascii_lowercase();
    if q.contains("mxfp4") {
        native
    } else if q.contains("nvfp4") || q.starts_with("fp4") {
        if gpu_has_fp4 {
            WeightFormat::Nvfp4
        } else {
            WeightFormat::Fp8
        }
    } else if q.contains("fp8") {
        WeightFormat::Fp8
    } else if dtype.starts_with("fp16") {
        WeightFormat::Fp16
    } else if dtype.starts_with("bf16") {
        WeightFormat::Bf16
    } else if native.is_quantized() {
        native
    } else {
        WeightFormat::Bf16
    }
}

#[cfg(feature = "bundled")] // reads the embedded catalog
/// Cases from the calibration CSV, and the rows skipped with why.
#[must_use]
#[allow(clippy::too_many_lines)] // one row's fields, one after another
pub fn cases(csv: &str) -> (Vec<Case>, Vec<String>) {
    let cat = Catalog::bundled();
    let rows = parse_csv(csv);
    let Some((head, body)) = rows.split_first() else {
        return (Vec::new(), Vec::new());
    };
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for row in body {
        let r = Rec { head, row };
        let Some(measured) = r.num("throughput_tok_s").filter(|x| *x > 0.0) else {
            continue;
        };
        let notes = r.get("notes");
        let raw_model = r.get("model");
        let why = |w: &str| format!("{}: {w}", raw_model.split(" (").next().unwrap_or(raw_model));
        let dep = num_after(notes, "DEP");
        let (Some(input), Some(output)) = (num_after(notes, "ISL="), num_after(notes, "OSL="))
        else {
            skipped.push(why("no fixed input/output lengths"));
            continue;
        };
        // Attention data-parallel in each of `PPm` pipeline stages ("DEP2,PP2 (4 GPUs)", the
        // 1.1-era RTX PRO 6000 tables).
        let dep_stages = dep.and_then(|n| {
            notes
                .find(&format!("DEP{n},PP"))
                .and_then(|i| num_after(&notes[i + 3..], "PP"))
        });
        let Some(model_id) = model_for(&cat, raw_model) else {
            skipped.push(why("not in catalog"));
            continue;
        };
        let Some(gpu_id) = gpu_for(&cat, r.get("gpu")) else {
            skipped.push(why("GPU not in catalog"));
            continue;
        };
        let (Some(m), Some(gpu)) = (
            cat.model(&model_id),
            cat.gpus.iter().find(|g| g.id == gpu_id),
        ) else {
            continue;
        };
        let Ok(arch) = m.model.arch() else { continue };
        let Some((tp, pp)) = dep
            .map(|n| (n, dep_stages.unwrap_or(1).max(1)))
            .or_else(|| layout(notes, r.num("tp")))
        else {
            continue;
        };
        // The 1.0-era revisions ran every MoE model with the doc's MoE command: `--ep
        // $ep_size` and `enable_attention_dp: true`, whatever the column's "TPn"; the later
        // revisions label the same configurations "DEPn" (`dep_by_command`).
        let dep = dep.or_else(|| dep_by_command(notes, arch.moe.is_some(), tp));
        let engine = if notes.starts_with("TensorRT-LLM") || notes.contains("trtllm-bench") {
            Engine::TrtLlm
        } else if notes.contains("SGLang") {
            Engine::Sglang
        } else {
            Engine::Vllm {
                minor: super::vllm_minor(notes).unwrap_or(10).max(11),
            }
        };
        let has_fp4 = gpu.dense_tflops.fp4.is_some_and(|x| x > 0.0);
        let format = format_for(
            r.get("quant"),
            r.get("dtype"),
            m.model.native_format(),
            has_fp4,
        );
        let kv_col = r.get("kv_cache_dtype").to_ascii_lowercase();
        let kv_dtype = if kv_col.starts_with("fp8")
            || (raw_model.contains("FP8-KV") && !latency_without_fp8_kv(r.get("source"), notes))
            || notes.contains("--kv-cache-dtype fp8")
            || doc_kv_fp8(notes, has_fp4)
            || (engine == Engine::TrtLlm
                && matches!(format, WeightFormat::Fp8 | WeightFormat::Nvfp4))
        {
            KvDtype::Fp8
        } else {
            KvDtype::Auto
        };
        let rate = notes
            .find("QPS=")
            .and_then(|i| ms_after(&notes[i..], "QPS="));
        let load = match r.num("max_concurrency") {
            _ if rate.is_some() => Load::Rate(rate.unwrap_or(1.0)),
            // OK because: concurrency is a positive integer in the data.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            Some(n) if n >= 1.0 => Load::Concurrency(n as u64),
            _ => Load::MaxLoad,
        };
        let mut s = Scenario::new(arch);
        s.format = format;
        s.group_size = m.group_size.unwrap_or(128);
        s.tensor_parallel_size = tp;
        s.pipeline_parallel_size = pp;
        s.flags.expert_parallel = dep.is_some();
        s.flags.engine = engine;
        s.flags.kv_dtype = kv_dtype;
        s.flags.max_model_len = Some(input + output);
        // The run's own KV pool where its log gives it (vLLM's "Available KV cache memory",
        // per GPU): what it held, whatever `--gpu-memory-utilization` it was started with
        // (0.25, 0.5 or 0.8 in dennislee22/vLLM-benchmarking's runs; Qwen2-72B at TP 2, whose
        // weights do not fit the default 0.9, states none), as `--kv-cache-memory-bytes`
        // sets it.
        if engine.family() == "vllm" {
            s.flags.features.kv_cache_memory_bytes = r
                .num("kv_cache_gib")
                .filter(|g| *g > 0.0)
                // OK because: a GiB figure from the data (tens of GiB) times 2^30 fits in u64.
                .map(|g| {
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    let b = (g * f64::from(1u32 << 30)) as u64;
                    b
                });
        }
        s.flags.max_num_seqs = num_after(notes, "max_num_seqs=");
        s.flags.max_num_batched_tokens = num_after(notes, "max_num_batched_tokens=");
        if engine == Engine::TrtLlm
            && notes.contains("trtllm-bench")
            && s.flags.max_num_seqs.is_none()
        {
            let (bs, tokens) = super::trtllm_bench::settings(&super::trtllm_bench::BenchRun {
                arch: &s.model,
                format,
                kv_fp8: kv_dtype == KvDtype::Fp8,
                tp,
                pp,
                input,
                output,
                device_bytes: gpu.smi_total_bytes(),
                pytorch: pytorch_backend(notes),
                before_nvfp4: before_nvfp4(r.get("source")),
            });
            // Per micro-batch: `pp` of them in flight.
            s.flags.max_num_seqs = Some(bs * pp);
            s.flags.max_num_batched_tokens = Some(tokens * pp);
        } else if engine == Engine::TrtLlm {
            // The older benchmarks (gptSessionBenchmark's static batches) run whole prompts:
            // a token budget that holds one.
            s.flags.max_num_batched_tokens =
                Some(crate::serving::TRTLLM_MAX_NUM_TOKENS.max(input.next_power_of_two()));
        }
        s.workload.prompt_tokens = input;
        s.workload.output_tokens = output;
        // The GPU's kernels lay out quantized weights as the plan's do (`plan::place`).
        s.gpu_arch = crate::sizing::GpuArch::from_catalog(gpu.architecture.as_deref(), &gpu.name);
        // CUDA graphs off (the doc's word, or the run's `--enforce-eager` /
        // `--disable-cuda-graph`): the input table's row, so the memory estimate drops the
        // graphs' pool and the replica launches every kernel (`Replica::of`).
        let eager = notes.contains("CUDA graphs unintentionally OFF")
            || notes.contains("--disable-cuda-graph")
            || notes.contains("--enforce-eager");
        s.flags.features.enforce_eager = eager;
        let e = estimate_bytes(&s, gpu.usable_bytes());
        let mut replica = match dep {
            Some(n) => Replica::data_parallel_attention(&s, gpu, &e, n),
            None => Replica::of(&s, gpu, &e),
        };
        // A TensorRT engine (before the PyTorch backend) built without
        // `max_attention_window_size` attends over the whole sequence.
        if engine == Engine::TrtLlm && !pytorch_backend(notes) {
            replica = replica.attending_whole_sequence();
        }
        // Ray across nodes, or across pods of one node: containers whose GPUs NCCL reaches
        // over the pods' network, not NVLink (dennislee22/vLLM-benchmarking's runs).
        let across_nodes = (notes.contains("different nodes")
            || notes.contains("pods on the same node"))
            && tp * pp > 1;
        if across_nodes {
            replica = replica.over_link(NETWORK_LINK_BYTES_PER_S, NETWORK_ALPHA_S);
        }
        out.push(Case {
            source: r.get("source").to_string(),
            model: model_id,
            gpu: gpu_id,
            engine,
            precision: format.id().to_string(),
            kv_dtype,
            tp,
            pp,
            dep: dep.is_some(),
            input,
            output,
            load,
            num_requests: num_after(notes, "num_requests=")
                .or(num_after(notes, "num_prompts="))
                .or(count_before(notes, " requests;")),
            measured: measured * per_gpu_as_revised(r.get("source"), notes, tp * pp),
            ttft_ms: ms_after(notes, "Mean TTFT="),
            itl_ms: ms_after(notes, "Mean ITL="),
            unfitted: if notes.contains("CAVEAT") {
                Some(Unfitted::ColumnOpen)
            } else if across_nodes && !names_network(notes) {
                Some(Unfitted::NetworkUnstated)
            } else {
                None
            },
            eager,
            replica,
        });
    }
    (out, skipped)
}

/// Mean |log(predicted / measured)| over cases (each capped at 3), what [`fit`] minimizes.
#[must_use]
pub fn loss(cs: &[&Case], k: &Constants) -> f64 {
    let mut sum = 0.0;
    let mut n = 0.0;
    for c in cs {
        let p = predict(c, k);
        let e = if p > 0.0 {
            (p / c.measured).ln().abs()
        } else {
            3.0
        };
        sum += e.min(3.0);
        n += 1.0;
    }
    if n > 0.0 {
        sum / n
    } else {
        0.0
    }
}

/// Fits the constants to the cases (those [`Case::fitted`]), starting from `start`.
#[must_use]
pub fn fit(cs: &[&Case], start: Constants) -> Constants {
    let cs: Vec<&Case> = cs.iter().copied().filter(|c| c.fitted()).collect();
    let mut x = start.to_array();
    let mut best = loss(&cs, &Constants::from_array(x));
    let mut step = [0.4_f64; Constants::LEN];
    for _ in 0..60 {
        let mut moved = false;
        for i in 0..Constants::LEN {
            let (lo, hi) = Constants::BOUNDS[i];
            for dir in [1.0, -1.0] {
                let mut y = x;
                y[i] = if y[i] <= 0.0 {
                    if dir > 0.0 {
                        hi * 0.05
                    } else {
                        0.0
                    }
                } else {
                    (y[i] * (dir * step[i]).exp()).clamp(lo, hi)
                };
                if (y[i] - x[i]).abs() < f64::EPSILON {
                    continue;
                }
                let l = loss(&cs, &Constants::from_array(y));
                if l < best - 1e-9 {
                    best = l;
                    x = y;
                    moved = true;
                    step[i] *= 1.5;
                    break;
                }
            }
            step[i] = (step[i] * 0.7).max(0.01);
        }
        if !moved && step.iter().all(|s| *s <= 0.011) {
            break;
        }
    }
    Constants::from_array(x)
}

/// Held-out predictions: for each group (by `key`), fit on the other cases and predict it.
/// Returns the predictions in the order of `cs`.
#[must_use]
pub fn held_out(cs: &[Case], start: Constants, key: fn(&Case) -> &str) -> Vec<f64> {
    let mut groups: Vec<&str> = cs.iter().map(key).collect();
    groups.sort_unstable();
    groups.dedup();
    let mut pred = vec![0.0; cs.len()];
    for g in groups {
        let train: Vec<&Case> = cs.iter().filter(|c| key(c) != g).collect();
        let k = fit(&train, start);
        for (i, c) in cs.iter().enumerate() {
            if key(c) == g {
                pred[i] = predict(c, &k);
            }
        }
    }
    pred
}

/// Speed-up ratios within each series: (measured, predicted) of `tokens/s at more GPUs`
/// over `tokens/s at the fewest GPUs of the series`, from per-case predictions.
#[must_use]
pub fn speedups(cs: &[Case], pred: &[f64]) -> Vec<(usize, usize, f64, f64)> {
    // Each case's series once, and the case with the fewest GPUs per series.
    let keys: Vec<String> = cs.iter().map(Case::series).collect();
    let mut fewest: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for (i, k) in keys.iter().enumerate() {
        let e = fewest.entry(k.as_str()).or_insert(i);
        if cs[i].gpus() < cs[*e].gpus() {
            *e = i;
        }
    }
    let mut out = Vec::new();
    for (i, a) in cs.iter().enumerate() {
        let j = fewest[keys[i].as_str()];
        let base = &cs[j];
        if j == i || base.gpus() == a.gpus() || pred[j] <= 0.0 || pred[i] <= 0.0 {
            continue;
        }
        out.push((j, i, a.measured / base.measured, pred[i] / pred[j]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{before_nvfp4, count_before, layout, names_network, pytorch_backend};

    #[test]
    fn the_tuning_code_follows_the_release() {
        // The calibration set's sources, as written there: v0.14 and v0.15 sized engines with
        // the tuning code from before NVFP4; v0.17 and later with the later code.
        assert!(before_nvfp4("github:NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md (v0.15.0 revision: 'All data in the table below was generated using version 0.15.0'; store file id 5939417815)"));
        assert!(before_nvfp4("github:arthurrasmusson/TensorRT-LLM docs/source/performance/perf-overview.md @e00d4e65 (copy of NVIDIA/TensorRT-LLM perf overview; data generated with TensorRT-LLM v0.14.0)"));
        assert!(!before_nvfp4("github:NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md @258c7540 ('All data in the table below was generated using version 0.17')"));
        assert!(!before_nvfp4("github:NVIDIA/TensorRT-LLM docs/source/developer-guide/perf-overview.md @03e27c7d (1.1-era revision, per-GPU units)"));
        // The PyTorch backend: v0.19 on ("--backend pytorch"), and the 1.x "(PyTorch backend)".
        assert!(pytorch_backend(
            "TensorRT-LLM 1.1-era (PyTorch backend) trtllm-bench throughput"
        ));
        assert!(pytorch_backend("trtllm-bench throughput --backend pytorch"));
        assert!(!pytorch_backend(
            "TensorRT-LLM v0.15.0; trtllm-bench build --quantization FP8"
        ));
    }

    #[test]
    fn a_layout_is_the_first_tp_with_a_number() {
        // "whole TP group" comes first in the perf-overview rows' notes; the layout after it.
        assert_eq!(
            layout(
                "output tokens/s for the whole TP group; TP4,PP2 (8 GPUs)",
                Some(1.0)
            ),
            Some((4, 2))
        );
        assert_eq!(layout("TP2,PP1 (2 GPUs)", None), Some((2, 1)));
        assert_eq!(layout("whole TP group, no layout", Some(8.0)), Some((8, 1)));
        assert_eq!(layout("no layout", None), None);
    }

    #[cfg(feature = "bundled")] // reads the embedded catalog
    #[test]
    fn a_dep_layout_is_the_first_dep_with_a_number() {
        let head = "source,kind,model,gpu,gpu_mem_gib,tp,dtype,quant,kv_cache_dtype,max_model_len,gpu_mem_util,block_size,weights_gib,kv_cache_gib,gpu_blocks,kv_tokens,max_concurrency,throughput_tok_s,notes\n";
        let row = |notes: &str| {
            format!("{head}doc,throughput,openai/gpt-oss-120b,B200 180GB (DGX B200),,4,,FP4 (table label; MXFP4 MoE ckpt),fp8,,,,,,,,,10000,\"{notes}\"\n")
        };
        // A word that begins with "DEP" before the layout does not hide it.
        let (c, _) = super::cases(&row(
            "TensorRT-LLM 1.1; DEPLOYED per the doc; DEP4 (4 GPUs); ISL=1000 OSL=1000",
        ));
        assert_eq!((c.len(), c[0].dep, c[0].tp), (1, true, 4));
        // Attention data-parallel in each of two pipeline stages: 4 GPUs, not one DEP2 group.
        let (c, _) = super::cases(&row(
            "TensorRT-LLM 1.1; DEP2,PP2 (4 GPUs); ISL=1000 OSL=1000",
        ));
        assert_eq!((c.len(), c[0].dep, c[0].tp, c[0].pp), (1, true, 2, 2));
    }

    #[cfg(feature = "bundled")] // reads the embedded catalog
    #[test]
    fn eager_runs_are_the_ones_their_notes_name() {
        // The calibration set's eager cases are TensorRT-LLM runs whose doc says CUDA graphs
        // were off; `--disable-cuda-graph` / `--enforce-eager` in a row's notes (the vLLM
        // and SGLang runs of other sources) adds none of its rows.
        let (c, _) = super::cases(super::super::CALIBRATION_CSV);
        assert_eq!(c.iter().filter(|c| c.eager).count(), 119);
        let flags = ["--disable-cuda-graph", "--enforce-eager"];
        let csv = super::super::CALIBRATION_CSV;
        // The one calibration row naming `--enforce-eager` is a start-up log, not a run.
        assert_eq!(
            csv.lines()
                .filter(|l| flags.iter().any(|f| l.contains(f)))
                .count(),
            1
        );
    }

    #[cfg(feature = "bundled")] // reads the embedded catalog
    #[test]
    fn a_1_0_era_moe_column_ran_the_docs_moe_command() {
        let head = "source,kind,model,gpu,gpu_mem_gib,tp,dtype,quant,kv_cache_dtype,max_model_len,gpu_mem_util,block_size,weights_gib,kv_cache_gib,gpu_blocks,kv_tokens,max_concurrency,throughput_tok_s,notes\n";
        let row = |model: &str, notes: &str| {
            format!("{head}doc,throughput,{model},B200 180GB (DGX B200),,8,,nvfp4 (ModelOpt FP4),,,,,,,,,,10000,\"{notes}\"\n")
        };
        let one = |model: &str, notes: &str| {
            let (c, skipped) = super::cases(&row(model, notes));
            (c.first().map(|c| (c.dep, c.tp, c.pp)), skipped)
        };
        let era = "TensorRT-LLM 1.0-era (PyTorch backend) trtllm-bench throughput";
        let qwen = "nvidia/Qwen3-235B-A22B-FP4 (Qwen3-235B-A22B)";
        // The 1.0-era "TP8" of an MoE model is attention DP over 8 GPUs with the experts
        // split over them (the doc's MoE command), as the later revisions' "DEP8".
        let tp8 = format!("{era}; ISL=1000 OSL=1000; TP8,PP1 (8 GPUs)");
        assert_eq!(one(qwen, &tp8).0, Some((true, 8, 1)));
        // A dense model's "TP8" stays tensor parallelism.
        let llama = "nvidia/Llama-3.3-70B-Instruct-FP4 (Llama 3.3 70B)";
        assert_eq!(one(llama, &tp8).0, Some((false, 8, 1)));
        // v0.21's one command for every model has no attention DP.
        let v21 = "TensorRT-LLM v0.21 (PyTorch backend) trtllm-bench throughput; ISL=1000 OSL=1000; TP8,PP1 (8 GPUs)";
        assert_eq!(one(qwen, v21).0, Some((false, 8, 1)));
        // One GPU: nothing to split.
        let tp1 = format!("{era}; ISL=1000 OSL=1000; TP1,PP1 (1 GPUs)");
        assert_eq!(one(qwen, &tp1).0, Some((false, 1, 1)));
        // With pipeline stages: attention DP over 2 GPUs in each of 4 stages.
        let tp2pp4 = format!("{era}; ISL=1000 OSL=1000; TP2,PP4 (8 GPUs)");
        assert_eq!(one(qwen, &tp2pp4).0, Some((true, 2, 4)));
    }

    #[cfg(feature = "bundled")] // reads the embedded catalog
    #[test]
    fn a_heading_names_the_gpu_it_was_measured_on() {
        let cat = crate::catalog::Catalog::bundled();
        let gpu = |h: &str| super::gpu_for(&cat, h);
        // "GH200 480GB" (perf-overview v0.17) is the 96 GB HBM3 module with 480 GB of
        // LPDDR5X (v0.21's heading), not an H200, whose name its own holds.
        assert_eq!(gpu("GH200 480GB").as_deref(), Some("gh200-96gb"));
        assert_eq!(gpu("GH200 96GB HBM3 CG1").as_deref(), Some("gh200-96gb"));
        assert_eq!(gpu("H200 141GB HBM3").as_deref(), Some("h200-sxm"));
        assert_eq!(
            gpu("H200 SXM 141GB (DGX H200)").as_deref(),
            Some("h200-sxm")
        );
        // A100 PCIe (300 W, 1,935 GB/s) is not the SXM board.
        assert_eq!(gpu("A100-PCIE-80GB").as_deref(), Some("a100-80gb-pcie"));
        assert_eq!(gpu("A100-SXM4-80GB").as_deref(), Some("a100-80gb-sxm"));
        assert_eq!(
            gpu("RTX 6000 Pro Blackwell Server Edition").as_deref(),
            Some("rtx-pro-6000-blackwell-server")
        );
        assert_eq!(gpu("GB200 192GB (GB200 NVL72)").as_deref(), Some("gb200"));
        assert_eq!(gpu("B300 288GB (DGX B300) (beta)").as_deref(), Some("b300"));
    }

    #[test]
    fn a_count_before_a_word_is_a_whole_number() {
        assert_eq!(
            count_before("ISL=467 OSL=256; 500 requests; QPS=4", " requests;"),
            Some(500)
        );
        assert_eq!(count_before("1,000 requests;", " requests;"), None);
        assert_eq!(count_before("2.5 requests;", " requests;"), None);
        assert_eq!(count_before("no requests;", " requests;"), None);
        assert_eq!(count_before("0 requests;", " requests;"), None);
        assert_eq!(
            count_before("99999999999999999999999 requests;", " requests;"),
            None
        );
        assert_eq!(count_before("nothing here", " requests;"), None);
    }

    #[test]
    fn a_network_is_named_by_a_whole_word() {
        assert!(names_network("2 nodes over 400 Gb/s InfiniBand"));
        assert!(names_network("nodes linked by 100GbE"));
        assert!(names_network("AWS EFA between nodes"));
        assert!(!names_network(
            "Ray, network between GPUs; DEFAULT settings"
        ));
        assert!(!names_network("4 pods on different nodes"));
    }
}
