//! `plan` (per-GPU breakdown) and `check` (the verdict, exit 1 when it does not fit).

use crate::args::PlanArgs;
use crate::files::LocalModel;
use crate::hub::HubModel;
use crate::inputs::inputs_of;
use crate::json::{command_json, fits, plan_json};
use crate::out::{usage, Output, Res};
use std::path::Path;
use vramfit_core::catalog::Catalog;
use vramfit_core::command::{self, Severity};
use vramfit_core::hub;
use vramfit_core::model::ModelArch;
use vramfit_core::plan::{self, Inputs, Plan};
use vramfit_core::safetensors::Report;
use vramfit_core::units::{fmt_bytes, fmt_count, fmt_num, fmt_params, fmt_usd, fmt_whole, Units};

/// Reads the models that are not in the catalog: a path ([`crate::files::read_local_model`])
/// or a Hub repo ([`crate::hub::import`]). The commands get it as a value, so their tests
/// pass a closure over paths (which has no Hub).
pub trait Load {
    /// A config.json or a model directory.
    fn local(&self, path: &Path) -> Res<LocalModel>;
    /// A Hub repo at a revision (`None`: `main`).
    fn hub(&self, repo: &str, revision: Option<&str>) -> Res<HubModel>;
}

impl<F: Fn(&Path) -> Res<LocalModel>> Load for F {
    fn local(&self, path: &Path) -> Res<LocalModel> {
        self(path)
    }
    fn hub(&self, repo: &str, _: Option<&str>) -> Res<HubModel> {
        Err(usage(format!("`{repo}`: no Hub access here")))
    }
}

/// The loader the commands take.
pub type Loader<'a> = &'a dyn Load;

/// Where a Hub model came from, for `--json` (`model_source: "hub"`, `hub: {…}`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct HubSource {
    pub repo: String,
    pub revision: String,
    pub endpoint: String,
    /// Σ (8 + header length) over the shards.
    pub header_bytes_read: u64,
    pub shards: usize,
}

/// The plan for a repo imported from the Hub: `custom_plan` with its config and the
/// headers' report (and the architecture, for `scale`).
pub fn hub_plan(
    cat: &Catalog,
    a: &PlanArgs,
    inputs: &Inputs,
    load: Loader,
) -> Res<(Plan, HubSource, ModelArch)> {
    let gpu = plan::resolve_gpu(cat, &a.gpu).map_err(usage)?;
    // A typo of a catalog id fails on the Hub too: say both.
    let m = load.hub(&a.model, a.revision.as_deref()).map_err(|f| {
        match (f, plan::resolve_model(cat, &a.model)) {
            (crate::out::Failure::Usage(m), Err(e)) => usage(format!("{m}\n{e}")),
            (f, _) => f,
        }
    })?;
    let f = &m.fetched;
    let arch = ModelArch::from_config_str(&f.config)
        .map_err(|e| usage(format!("`{}` from the Hugging Face Hub: {e}", a.model)))?;
    let report = Report::from_headers(&f.headers);
    let mut p = plan::custom_plan(cat, arch.clone(), &a.model, Some(&report), gpu, inputs);
    p.repo_ids = vec![f.repo.id.clone()];
    p.warnings.extend(m.warnings.iter().cloned());
    let source = HubSource {
        repo: f.repo.id.clone(),
        revision: f.repo.revision.clone(),
        endpoint: f.repo.endpoint.clone(),
        header_bytes_read: f.header_bytes,
        shards: f.headers.len(),
    };
    Ok((p, source, arch))
}

/// The plan for the flags: a catalog model; the model `load` reads from a path (when `model`
/// names an existing one); or a repo id the catalog lacks, imported from the Hub (its
/// source is the third value).
pub fn resolve(
    cat: &Catalog,
    a: &PlanArgs,
    load: Loader,
) -> Res<(Plan, Inputs, Option<HubSource>)> {
    let inputs = inputs_of(a)?;
    let path = Path::new(&a.model);
    if path.exists() {
        let gpu = plan::resolve_gpu(cat, &a.gpu).map_err(usage)?;
        let (arch, name, report) = load.local(path)?;
        // As the page sizes dropped files: the format and the weights from the headers
        // when the folder has them (`custom_plan`), the config's shapes otherwise.
        let mut p = plan::custom_plan(cat, arch, &name, report.as_ref(), gpu, &inputs);
        // `model` in the JSON stays the path's name, as before (a contract).
        p.model_id = name;
        return Ok((p, inputs, None));
    }
    if plan::resolve_model(cat, &a.model).is_err() && hub::is_repo_id(&a.model) {
        let (p, source, _) = hub_plan(cat, a, &inputs, load)?;
        return Ok((p, inputs, Some(source)));
    }
    let p = plan::plan(cat, &inputs).map_err(usage)?;
    Ok((p, inputs, None))
}

/// A `--json` value with `model_source: "hub"` and `hub: {…}` added (when from the Hub).
pub fn with_source<T: serde::Serialize>(v: &T, source: Option<&HubSource>) -> String {
    match source {
        None => serde_json::to_string_pretty(v),
        Some(s) => serde_json::to_value(v).and_then(|mut j| {
            if let serde_json::Value::Object(m) = &mut j {
                m.insert("model_source".into(), "hub".into());
                m.insert("hub".into(), serde_json::to_value(s)?);
            }
            serde_json::to_string_pretty(&j)
        }),
    }
    .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

pub fn plan_text(p: &Plan, u: Units) -> String {
    let e = &p.estimate;
    let mut s = String::new();
    s.push_str(&format!(
        "{} on {} — {} weights, {} ({} params)\n",
        p.model_id,
        p.gpu_name,
        p.format,
        p.engine,
        fmt_params(p.parameters)
    ));
    let how = if p.layout_auto {
        "chosen: fewest GPUs"
    } else {
        "as given"
    };
    if p.run.is_some() {
        s.push_str(&format!(
            "layout: TP {} × PP {} × {} replica(s) = {} GPU(s) ({how})\n\n",
            p.tensor_parallel_size, p.pipeline_parallel_size, p.replicas, p.gpus_needed,
        ));
    } else {
        s.push_str(&format!(
            "layout checked: TP {} × PP {} ({how}): does not start\nGPUs needed: {}\n\n",
            p.tensor_parallel_size,
            p.pipeline_parallel_size,
            p.needed.map_or_else(
                || format!("none starts it as asked ({})", p.outcome()),
                |n| n.to_string()
            ),
        ));
    }
    s.push_str("per GPU:\n");
    let parts = e.parts().map(|x| (x.label, x.bytes));
    let head = [
        ("memory (CUDA total)", e.gpu_total_bytes),
        ("engine budget", e.budget_bytes),
    ];
    let tail = [("nvidia-smi will show", e.nvidia_smi_bytes)];
    for (k, v) in head.into_iter().chain(parts).chain(tail) {
        s.push_str(&format!("  {k:<30} {:>12}\n", fmt_bytes(v, u)));
    }
    s.push_str(&format!(
        "  {:<30} {:>12}\n  {:<30} {:>12}\n  {:<30} {:>12}\n  {:<30} {:>12}\n  {:<30} {:>12}\n\n",
        "KV bytes per token",
        fmt_count(e.kv_bytes_per_token),
        "KV blocks",
        fmt_count(e.kv_blocks),
        "KV tokens",
        fmt_count(e.kv_tokens),
        format!("max concurrency @ {}", e.max_model_len),
        fmt_num(e.max_concurrency, 2),
        "longest context (1 request)",
        fmt_count(e.max_model_len_fit),
    ));
    let features = e.features.rows(e.kv_bytes_per_token);
    if !features.is_empty() {
        s.push_str("deployment features (per GPU):\n");
        for f in &features {
            s.push_str(&format!(
                "  {:<40} {:>12}  {}\n",
                f.label,
                fmt_bytes(f.bytes, u),
                f.note
            ));
        }
        s.push('\n');
    }
    if let Some(n) = e.vllm_auto_max_model_len {
        s.push_str(&format!(
            "--max-model-len -1: vLLM picks {} tokens (the longest one request fits, up to the model's maximum); {} users fit at {} tokens each\n\n",
            fmt_count(n),
            p.estimate.verdict.users(),
            fmt_count(e.longest_len_for_users(p.estimate.verdict.users()))
        ));
    }
    if let Some(n) = p.run.as_ref().and_then(|r| r.spec_break_even_concurrency) {
        s.push_str(&format!(
            "speculative decoding stops paying off at {n} requests in flight per replica\n"
        ));
    }
    if let Some(r) = &p.run {
        s.push_str(&format!(
            "decode: {} tok/s per user, {} tok/s total (prompt time included); TTFT {} ms\n",
            fmt_num(r.speed.decode_tokens_per_s_per_user, 1),
            fmt_whole(r.total_decode_tokens_per_s),
            fmt_whole(r.speed.ttft_s * 1000.0)
        ));
        if let Some(c) = r.cost.purchase_usd {
            s.push_str(&format!("cost: {} to buy", fmt_usd(c)));
            if let Some(h) = r.cost.cloud_usd_per_hour {
                s.push_str(&format!(", {}/h in the cloud", fmt_usd(h)));
            }
            if let Some(m) = r.cost.usd_per_million_tokens {
                s.push_str(&format!(", {} per million output tokens", fmt_usd(m)));
            }
            s.push('\n');
        }
    } else {
        s.push_str("decode, cost: none (the server does not start)\n");
    }
    s.push_str(&format!("\nverdict: {}\n", p.verdict));
    for (i, f) in p.fixes.iter().enumerate() {
        s.push_str(&format!("fix {}: {f}\n", i + 1));
    }
    for w in &p.warnings {
        s.push_str(&format!("warning: {w}\n"));
    }
    s
}

pub fn units(a: &PlanArgs) -> Units {
    if a.decimal {
        Units::Decimal
    } else {
        Units::Binary
    }
}

/// The notice for an ambiguous `--gpu` (`H100`: read as the SXM5, also the PCIe and NVL).
pub fn gpu_notice(cat: &Catalog, gpu: &str) -> Option<String> {
    cat.resolve_gpu(gpu).ok().and_then(|m| m.notice)
}

/// `o` with the `--gpu` notice on stderr (the commands whose JSON has no `gpu_notice`
/// field: `fit`, `scale`, `oom`).
pub fn with_gpu_note(o: Output, cat: &Catalog, gpu: Option<&str>) -> Output {
    match gpu.and_then(|g| gpu_notice(cat, g)) {
        Some(n) => Output {
            stderr: format!("vramfit: note: {n}\n{}", o.stderr),
            ..o
        },
        None => o,
    }
}

/// What `plan` (`check` = false) or `check` prints for a plan, and its exit status; the
/// `--gpu` notice goes into `gpu_notice` in the JSON, a note on stderr otherwise.
pub fn render(
    p: &Plan,
    a: &PlanArgs,
    check: bool,
    notice: Option<String>,
    source: Option<&HubSource>,
) -> Output {
    let stdout = if a.json {
        let mut j = plan_json(p);
        j.gpu_notice.clone_from(&notice);
        format!("{}\n", with_source(&j, source))
    } else if let Some(id) = &a.print_command {
        match vramfit_core::commands::by_id(p, id) {
            Some(c) => format!("{c}\n"),
            None => String::new(),
        }
    } else if check {
        format!("{}\n", p.verdict)
    } else {
        plan_text(p, units(a))
    };
    let mut o = Output::status(stdout, !check || fits(p.estimate.fit));
    if let (false, Some(n)) = (a.json, notice) {
        o.stderr = format!("vramfit: note: {n}\n");
    }
    o
}

/// `plan` / `check`.
pub fn run(cat: &Catalog, a: &PlanArgs, check: bool, load: Loader) -> Res<Output> {
    if let (true, Some(text)) = (check, a.command.as_deref()) {
        return run_command(cat, a, text);
    }
    let (p, _, source) = resolve(cat, a, load)?;
    if a.print_command.is_some() && p.launch.is_none() {
        return Err(crate::out::Failure::Rejected(format!(
            "no command to print: {}",
            p.verdict
        )));
    }
    Ok(render(
        &p,
        a,
        check,
        gpu_notice(cat, &a.gpu),
        source.as_ref(),
    ))
}

/// `check --command`: the pasted command planned on `--gpu` for the workload flags; exit 1
/// when it will not start (a contradiction the engine refuses, or a plan that does not fit).
pub fn run_command(cat: &Catalog, a: &PlanArgs, text: &str) -> Res<Output> {
    // The workload flags go through the input table as for `plan`; the model and the
    // engine's flags are the command's.
    let mut w = a.clone();
    w.command = None;
    w.model = "command".into();
    let base = inputs_of(&w)?;
    let c = command::check(cat, &base, text).map_err(usage)?;
    let stdout = if a.json {
        format!(
            "{}\n",
            serde_json::to_string_pretty(&command_json(&c))
                .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
        )
    } else {
        command_text(&c)
    };
    let mut o = Output::status(stdout, c.starts());
    if let (false, Some(n)) = (a.json, gpu_notice(cat, &a.gpu)) {
        o.stderr = format!("vramfit: note: {n}\n");
    }
    Ok(o)
}

/// The text of `check --command`: what was read, the verdict, each check, the flags not
/// modelled.
pub fn command_text(c: &command::CommandCheck) -> String {
    let p = &c.plan;
    let e = &p.estimate;
    let mut s = format!(
        "{} command: {} ({}) on {}\nlayout: TP {} × PP {}, {} weights, KV cache {}, max-model-len {}\nverdict: {}\n",
        p.engine,
        c.command.model,
        p.model_id,
        p.gpu_name,
        p.tensor_parallel_size,
        p.pipeline_parallel_size,
        p.format,
        p.kv_dtype.id(),
        e.max_model_len,
        c.verdict
    );
    for k in &c.checks {
        let level = match k.severity {
            Severity::WillNotStart => "will not start",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        s.push_str(&format!("{level} [{}]: {}\n", k.id, k.message));
    }
    let list = |memory: bool| {
        c.command
            .unmodelled
            .iter()
            .filter(|u| u.affects_memory == memory)
            .map(|u| u.flag.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let quiet = list(false);
    if !quiet.is_empty() {
        s.push_str(&format!("not modelled (no effect on memory): {quiet}\n"));
    }
    s.push_str(if c.starts() {
        "the command starts\n"
    } else {
        "the command will not start\n"
    });
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::out::Failure;
    use crate::testing::{assert_close, cat, inputs, no_files, plan_args, scratch};
    use vramfit_core::dtype::WeightFormat;
    use vramfit_core::model::ModelArch;
    use vramfit_core::plan::plan_arch;
    use vramfit_core::sizing::Fit;

    fn core_plan(i: &Inputs) -> Plan {
        plan::plan(&cat(), i).expect("core plans it")
    }

    fn fits(f: Fit) -> bool {
        f.starts()
    }

    #[test]
    fn plan_json_per_gpu_is_the_cores_estimate() {
        let a = plan_args(&[
            "plan",
            "llama-3.1-8b",
            "--gpu",
            "h100-sxm",
            "--max-model-len",
            "8192",
            "--json",
        ]);
        let o = run(&cat(), &a, false, &no_files).unwrap_or_else(|e| panic!("{e:?}"));
        assert_eq!(o.code, 0);
        let j = o.json();
        let mut i = inputs("llama-3.1-8b", "h100-sxm");
        i.flags.max_model_len = Some(8192);
        let p = core_plan(&i);
        let e = &p.estimate;
        let g = &j["per_gpu"];
        for (k, v) in [
            ("gpu_total_bytes", e.gpu_total_bytes),
            ("budget_bytes", e.budget_bytes),
            ("weights_bytes", e.weights_bytes),
            ("activation_bytes", e.activation_bytes),
            ("non_torch_bytes", e.non_torch_bytes),
            ("cuda_graph_bytes", e.cuda_graph_bytes),
            ("cuda_context_bytes", e.cuda_context_bytes),
            ("kv_pool_bytes", e.kv_pool_bytes),
            ("kv_bytes_per_token", e.kv_bytes_per_token),
            ("block_size", e.block_size),
            ("kv_blocks", e.kv_blocks),
            ("kv_tokens", e.kv_tokens),
            ("max_model_len", e.max_model_len),
            ("max_model_len_fit", e.max_model_len_fit),
            ("nvidia_smi_bytes", e.nvidia_smi_bytes),
        ] {
            assert_eq!(g[k].as_u64(), Some(v), "per_gpu.{k}");
        }
        assert_close(&g["max_concurrency"], e.max_concurrency);
        assert_eq!(e.max_model_len, 8192);
        assert_eq!(j["fits"], fits(e.fit));
        assert_eq!(j["verdict"], e.verdict.to_string());
        assert_eq!(j["plan_verdict"], p.verdict);
        assert!(p.verdict.contains(&e.verdict.detail()));
        assert_eq!(j["model"], p.model_id);
        assert_eq!(j["gpu"], p.gpu_id);
        assert_eq!(j["format"], p.format.id());
        assert_eq!(j["tensor_parallel_size"], p.tensor_parallel_size);
        assert_eq!(j["pipeline_parallel_size"], p.pipeline_parallel_size);
        assert_eq!(j["gpus_needed"], p.gpus_needed);
        assert_eq!(j["parameters"], p.parameters);
        assert_close(
            &j["decode_tokens_per_s_per_user"],
            p.run
                .as_ref()
                .expect("starts")
                .speed
                .decode_tokens_per_s_per_user,
        );
        assert_eq!(j["formats"].as_array().map(Vec::len), Some(p.formats.len()));
        for k in [
            "weights_bytes_low",
            "weights_bytes_high",
            "kv_pool_bytes_low",
            "kv_pool_bytes_high",
            "decode_tokens_per_s_low",
            "decode_tokens_per_s_high",
        ] {
            assert!(j["uncertainty"][k].is_number(), "uncertainty.{k}");
        }
        let lo = j["uncertainty"]["weights_bytes_low"].as_u64().unwrap();
        let hi = j["uncertainty"]["weights_bytes_high"].as_u64().unwrap();
        assert!(lo <= e.weights_bytes && e.weights_bytes <= hi, "{lo} {hi}");
        for k in ["cost", "warnings", "fit", "engine", "replicas", "ttft_s"] {
            assert!(j.get(k).is_some(), "{k}");
        }
    }

    #[test]
    fn plan_json_has_the_cores_operating_point() {
        let argv = [
            "plan",
            "llama-3.1-8b",
            "--gpu",
            "h100-sxm",
            "--request-rate",
            "4",
            "--prefix-cache-hit-rate",
            "0.5",
            "--json",
        ];
        let j = run(&cat(), &plan_args(&argv), false, &no_files)
            .unwrap()
            .json();
        let mut i = inputs("llama-3.1-8b", "h100-sxm");
        i.workload.request_rate = Some(4.0);
        i.workload.prefix_cache_hit_rate = Some(0.5);
        let p = core_plan(&i);
        let r = p.run.as_ref().expect("starts");
        assert_eq!(j["limited_by"], r.limited_by);
        assert_ne!(r.limited_by, "queue");
        assert_close(&j["itl_ms"], r.serving.itl_ms);
        assert_close(&j["ttft_ms"], r.serving.ttft_ms.unwrap());
        assert_close(&j["e2e_ms"], r.serving.e2e_ms.unwrap());
        // One replica keeps up with 4 req/s.
        assert_eq!(p.replicas, 1);
        assert_close(&j["requests_per_s"], r.serving.requests_per_s);
        assert_close(&j["ttft_s"], r.speed.ttft_s);
        // The prefix cache shortens the prefill.
        i.workload.prefix_cache_hit_rate = None;
        let cold = core_plan(&i);
        let c = cold.run.as_ref().expect("starts");
        assert!(c.serving.ttft_ms.unwrap() > r.serving.ttft_ms.unwrap());
    }

    #[test]
    fn speed_bands_are_the_engines_held_out_band_or_not_validated() {
        let run_json = |engine: &str| {
            let argv = [
                "plan",
                "llama-3.1-8b",
                "--gpu",
                "h100-sxm",
                "--engine",
                engine,
                "--json",
            ];
            run(&cat(), &plan_args(&argv), false, &no_files)
                .unwrap()
                .json()
        };
        // vLLM: measured on MI300X and A100; the band is the leave-one-GPU-out p10–p90.
        let j = run_json("vllm");
        let u = &j["uncertainty"];
        assert_eq!(u["speed_validated"], true);
        let v = vramfit_core::serving::VALIDATION[1];
        assert_eq!(v.engine, "vllm");
        let value = j["decode_tokens_per_s_per_user"].as_f64().unwrap();
        assert_close(&u["decode_tokens_per_s_low"], value / (1.0 + v.p90));
        assert_close(&u["decode_tokens_per_s_high"], value / (1.0 + v.p10));
        // SGLang: no usable published row, so no band.
        let j = run_json("sglang");
        let u = &j["uncertainty"];
        assert_eq!(u["speed_validated"], false);
        assert_eq!(u["decode_tokens_per_s_low"], u["decode_tokens_per_s_high"]);
    }

    #[test]
    fn plan_text_shows_the_cores_numbers_in_the_chosen_units() {
        let p = core_plan(&inputs("qwen2.5-7b", "l4"));
        for (flag, u) in [(None, Units::Binary), (Some("--decimal"), Units::Decimal)] {
            let mut argv = vec!["plan", "qwen2.5-7b", "--gpu", "l4"];
            argv.extend(flag);
            let o = run(&cat(), &plan_args(&argv), false, &no_files).unwrap();
            assert_eq!(o.code, 0, "plan exits 0 whatever the verdict");
            let first = o.stdout.lines().next().unwrap();
            assert!(
                first.starts_with(&format!("{} on {} — ", p.model_id, p.gpu_name)),
                "{first}"
            );
            // Every line of the core's breakdown, under its one label.
            let parts = p.estimate.parts().map(|x| (x.label, x.bytes));
            assert_eq!(parts[0], ("Weights", p.estimate.weights_bytes));
            assert_eq!(parts[3], ("KV cache pool", p.estimate.kv_pool_bytes));
            for (label, v) in parts
                .into_iter()
                .chain([("nvidia-smi will show", p.estimate.nvidia_smi_bytes)])
            {
                let line = o
                    .stdout
                    .lines()
                    .find(|l| l.trim_start().starts_with(label))
                    .unwrap_or_else(|| panic!("{label} missing:\n{}", o.stdout));
                assert!(line.ends_with(&fmt_bytes(v, u)), "{line}");
            }
            assert!(o.stdout.contains(&format!("\nverdict: {}\n", p.verdict)));
        }
    }

    #[test]
    fn check_exit_status_follows_the_cores_verdict() {
        for (model, gpu, tp) in [
            ("llama-3.1-8b", "h100-sxm", None),
            ("llama-3.1-70b", "rtx-4090", Some("1")),
        ] {
            let mut argv = vec!["check", model, "--gpu", gpu];
            if let Some(t) = tp {
                argv.extend(["--tp", t]);
            }
            let a = plan_args(&argv);
            let p = core_plan(&Inputs {
                tensor_parallel_size: tp.map(|t| t.parse().unwrap()),
                ..inputs(model, gpu)
            });
            let o = run(&cat(), &a, true, &no_files).unwrap();
            assert_eq!(o.code, u8::from(!fits(p.estimate.fit)), "{model} on {gpu}");
            assert_eq!(o.stdout, format!("{}\n", p.verdict));
            // `plan` on the same flags exits 0 either way.
            assert_eq!(run(&cat(), &a, false, &no_files).unwrap().code, 0);
        }
        // One of each, so both branches above were exercised.
        assert!(fits(
            core_plan(&inputs("llama-3.1-8b", "h100-sxm")).estimate.fit
        ));
        assert!(!fits(
            core_plan(&Inputs {
                tensor_parallel_size: Some(1),
                ..inputs("llama-3.1-70b", "rtx-4090")
            })
            .estimate
            .fit
        ));
    }

    #[test]
    fn check_json_says_does_not_fit_and_exits_1() {
        let a = plan_args(&[
            "check",
            "llama-3.1-70b",
            "--gpu",
            "rtx-4090",
            "-t",
            "1",
            "--json",
        ]);
        let o = run(&cat(), &a, true, &no_files).unwrap();
        assert_eq!(o.code, 1);
        let j = o.json();
        assert_eq!(j["fits"], false);
        assert_eq!(j["tensor_parallel_size"], 1);
        // No speed and no cost for a server that does not start: the fields are left out.
        for k in [
            "decode_tokens_per_s_per_user",
            "decode_tokens_per_s_total",
            "ttft_s",
            "ttft_ms",
            "itl_ms",
            "e2e_ms",
            "requests_per_s",
            "limited_by",
            "cost",
        ] {
            assert!(j.get(k).is_none(), "{k} present: {}", j[k]);
        }
        assert!(j["uncertainty"].get("decode_tokens_per_s_low").is_none());
        for r in j["formats"].as_array().unwrap() {
            assert_eq!(
                r.get("decode_tokens_per_s").is_some(),
                r["total_gpus"] != 0,
                "{r}"
            );
        }
        // The fix, under the JSON's own field names, is the core's first checked fix, and
        // the commands apply it.
        let p = core_plan(&Inputs {
            tensor_parallel_size: Some(1),
            ..inputs("llama-3.1-70b", "rtx-4090")
        });
        assert_eq!(j["fix"], serde_json::to_value(p.fixes[0]).unwrap());
        assert_eq!(j["fixes"].as_array().map(Vec::len), Some(p.fixes.len()));
        assert_eq!(j["gpus_needed"], p.needed.unwrap().gpus);
        let tp = j["fix"]["tensor_parallel_size"].as_u64();
        let vllm = j["commands"]["vllm"].as_str().unwrap();
        match tp {
            Some(t) if t > 1 => assert!(
                vllm.contains(&format!("--tensor-parallel-size {t}")),
                "{vllm}"
            ),
            _ => {}
        }
        for id in vramfit_core::commands::IDS {
            assert!(j["commands"][id].is_string(), "{id}");
        }
    }

    #[test]
    fn check_without_a_layout_says_which_it_chose() {
        let o = run(
            &cat(),
            &plan_args(&[
                "check",
                "llama-3.1-70b",
                "--gpu",
                "h100-sxm",
                "--max-model-len",
                "8192",
            ]),
            true,
            &no_files,
        )
        .unwrap();
        assert_eq!(o.code, 0);
        assert!(
            o.stdout
                .starts_with("fits at TP 2 × PP 1 (chosen: fewest GPUs): "),
            "{}",
            o.stdout
        );
        let o = run(
            &cat(),
            &plan_args(&[
                "check",
                "llama-3.1-70b",
                "--gpu",
                "h100-sxm",
                "--max-model-len",
                "8192",
                "--tp",
                "1",
            ]),
            true,
            &no_files,
        )
        .unwrap();
        assert_eq!(o.code, 1);
        assert!(
            o.stdout
                .starts_with("will not start at TP 1 × PP 1 (as given): "),
            "{}",
            o.stdout
        );
    }

    #[test]
    fn print_command_prints_the_plans_command_ready_to_paste() {
        let argv = [
            "plan",
            "llama-3.1-70b",
            "--gpu",
            "l40s",
            "--quantization",
            "awq",
            "--tp",
            "1",
            "--max-model-len",
            "8192",
            "--print-command",
            "vllm",
        ];
        let o = run(&cat(), &plan_args(&argv), false, &no_files).unwrap();
        let mut i = inputs("llama-3.1-70b", "l40s");
        i.format = Some(WeightFormat::Int4Awq);
        i.tensor_parallel_size = Some(1);
        i.flags.max_model_len = Some(8192);
        let p = core_plan(&i);
        assert_eq!(
            o.stdout,
            format!("{}\n", vramfit_core::commands::by_id(&p, "vllm").unwrap())
        );
        assert!(
            o.stdout
                .starts_with("vllm serve hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4 "),
            "{}",
            o.stdout
        );
        // Nothing starts: no command, a clear refusal.
        let argv = [
            "plan",
            "kimi-k2",
            "--gpu",
            "rtx-4080-super",
            "--gpu-memory-utilization",
            "0.05",
            "--print-command",
            "sglang",
        ];
        match run(&cat(), &plan_args(&argv), false, &no_files) {
            Err(Failure::Rejected(m)) => {
                assert!(m.starts_with("no command to print: will not start"), "{m}")
            }
            Err(Failure::Usage(m)) => panic!("usage error {m}"),
            Ok(o) => panic!("printed {}", o.stdout),
        }
    }

    #[test]
    fn bad_flags_and_names_are_usage_errors() {
        for argv in [
            &["plan", "llama-3.1-8b", "--gpu", "h10"][..],
            &["plan", "lama-3.1-8b", "--gpu", "h100-sxm"],
            &[
                "plan",
                "llama-3.1-8b",
                "--gpu",
                "h100-sxm",
                "--max-model-len",
                "0",
            ],
            &[
                "plan",
                "llama-3.1-8b",
                "--gpu",
                "h100-sxm",
                "--engine",
                "nope",
            ],
            &[
                "plan",
                "llama-3.1-8b",
                "--gpu",
                "h100-sxm",
                "--gpu-memory-utilization",
                "1.5",
            ],
        ] {
            match run(&cat(), &plan_args(argv), false, &no_files) {
                Err(f @ Failure::Usage(_)) => assert_eq!(f.code(), 2),
                Err(f) => panic!("{argv:?}: {f:?}"),
                Ok(o) => panic!("{argv:?}: {}", o.stdout),
            }
        }
        let Err(f) = run(
            &cat(),
            &plan_args(&["check", "llama-3.1-8b", "--gpu", "h10"]),
            true,
            &no_files,
        ) else {
            panic!("h10 accepted")
        };
        assert!(f.message().contains("unknown GPU `h10`"), "{}", f.message());
        // An engine version that is not modelled is a usage error naming the modelled ones.
        let Err(f) = run(
            &cat(),
            &plan_args(&[
                "plan",
                "llama-3.1-8b",
                "--gpu",
                "h100-sxm",
                "--engine",
                "vllm-0.6",
            ]),
            false,
            &no_files,
        ) else {
            panic!("vllm-0.6 accepted")
        };
        assert_eq!(f.code(), 2);
        assert!(
            f.message().contains(
                "vLLM 0.6 is not modelled: the modelled versions are vllm-0.11 to vllm-0.19"
            ),
            "{}",
            f.message()
        );
    }

    #[test]
    fn a_config_json_path_is_planned_like_the_core_plans_its_arch() {
        let c = cat();
        let m = c.models.iter().find(|m| m.id == "qwen2.5-7b").unwrap();
        let text = serde_json::to_string(&m.config).unwrap();
        let dir = scratch("plan-config");
        let cfg = dir.join("config.json");
        std::fs::write(&cfg, &text).unwrap();
        let path = cfg.to_str().unwrap();
        let a = plan_args(&["plan", path, "--gpu", "l4", "--json"]);
        let o = run(&c, &a, false, &crate::files::read_local_model).unwrap();
        let arch = ModelArch::from_config_str(&text).unwrap();
        let gpu = plan::resolve_gpu(&c, "l4").unwrap();
        let i = Inputs {
            model: path.into(),
            ..inputs("", "l4")
        };
        let want = plan_arch(
            arch,
            "config.json".into(),
            "config.json".into(),
            WeightFormat::Bf16,
            None,
            None,
            gpu,
            &i,
        );
        let j = o.json();
        assert_eq!(
            j["per_gpu"]["weights_bytes"].as_u64(),
            Some(want.estimate.weights_bytes)
        );
        assert_eq!(
            j["per_gpu"]["kv_pool_bytes"].as_u64(),
            Some(want.estimate.kv_pool_bytes)
        );
        assert_eq!(j["model"], "config.json");
        // A missing file under an existing directory is a rejected input (exit 1).
        let missing = dir.join("none");
        std::fs::create_dir_all(&missing).unwrap();
        let a = plan_args(&["plan", missing.to_str().unwrap(), "--gpu", "l4"]);
        match run(&c, &a, false, &crate::files::read_local_model) {
            Err(f @ Failure::Rejected(_)) => assert_eq!(f.code(), 1),
            other => panic!("{:?}", other.map(|o| o.stdout)),
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn check_command_exits_1_when_the_command_will_not_start() {
        let issue = "vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --quantization awq --port 8000";
        let a = plan_args(&["check", "--command", issue, "--gpu", "h100-sxm"]);
        let o = run(&cat(), &a, true, &no_files).unwrap();
        assert_eq!(o.code, 1);
        assert!(
            o.stdout.starts_with(
                "vllm-0.19 command: meta-llama/Llama-3.1-70B-Instruct (llama-3.1-70b) on "
            ),
            "{}",
            o.stdout
        );
        assert!(
            o.stdout
                .contains("\nwill not start [quantization_mismatch]: "),
            "{}",
            o.stdout
        );
        assert!(o
            .stdout
            .contains("hugging-quants/Meta-Llama-3.1-70B-Instruct-AWQ-INT4"));
        assert!(o
            .stdout
            .contains("\nnot modelled (no effect on memory): --port\n"));
        assert!(o.stdout.ends_with("the command will not start\n"));
        // --json: the plan's fields, plus the command's.
        let a = plan_args(&[
            "check",
            "--command",
            issue,
            "--gpu",
            "h100-sxm",
            "--json",
            "--users",
            "8",
        ]);
        let o = run(&cat(), &a, true, &no_files).unwrap();
        assert_eq!(o.code, 1);
        let j = o.json();
        assert_eq!(j["model"], "llama-3.1-70b");
        assert_eq!(j["repo"], "meta-llama/Llama-3.1-70B-Instruct");
        assert_eq!(j["engine"], "vllm-0.19");
        assert_eq!(j["tensor_parallel_size"], 4);
        assert_eq!(j["format"], "int4-awq");
        assert_eq!(j["starts"], false);
        // One answer: the command does not start, whatever the memory says.
        assert_eq!(j["fits"], false);
        assert_eq!(j["fit"], "fits");
        let checks = j["command_checks"].as_array().unwrap();
        assert_eq!(checks.len(), 1);
        assert_eq!(checks[0]["id"], "quantization_mismatch");
        assert_eq!(checks[0]["flags"][0], "--quantization awq");
        assert_eq!(checks[0]["severity"], "will_not_start");
        assert!(checks[0]["message"]
            .as_str()
            .unwrap()
            .contains("bf16 checkpoint"));
        assert_eq!(j["unmodelled_flags"][0]["flag"], "--port");
        assert_eq!(j["unmodelled_flags"][0]["value"], "8000");
        assert_eq!(j["unmodelled_flags"][0]["affects_memory"], false);
        assert_eq!(j["data_parallel"], 1);
        // The workload flags apply: the plan's concurrency is for 8 users.
        let want = core_plan(&Inputs {
            tensor_parallel_size: Some(4),
            pipeline_parallel_size: Some(1),
            format: Some(WeightFormat::Int4Awq),
            workload: vramfit_core::inputs::Workload {
                users: 8,
                ..Inputs::default().workload
            },
            ..inputs("meta-llama/Llama-3.1-70B-Instruct", "h100-sxm")
        });
        assert_eq!(j["fits"], false);
        assert!(j["verdict"].as_str().unwrap().starts_with("the command will not start: `meta-llama/Llama-3.1-70B-Instruct` is the bf16 checkpoint"), "{}", j["verdict"]);
        // Its memory at TP 4 is the core's plan of the same inputs; no speed, no cost.
        assert_eq!(j["per_gpu"]["kv_pool_bytes"], want.estimate.kv_pool_bytes);
        assert!(j.get("decode_tokens_per_s_per_user").is_none() && j.get("cost").is_none());
        // Data-parallel ranks: their count, and the note that they are replicas.
        let dp = "vllm serve meta-llama/Llama-3.1-8B-Instruct --data-parallel-size 2";
        let a = plan_args(&["check", "--command", dp, "--gpu", "h100-sxm", "--json"]);
        let j = run(&cat(), &a, true, &no_files).unwrap().json();
        assert_eq!(j["data_parallel"], 2);
        assert_eq!(j["command_checks"][0]["id"], "data_parallel_replicas");
        assert_eq!(j["unmodelled_flags"][0]["affects_memory"], false);
    }

    #[test]
    fn check_command_exits_0_when_it_starts_and_2_on_bad_text() {
        let ok = "docker run --gpus all vllm/vllm-openai:v0.16.0 --model meta-llama/Llama-3.1-8B-Instruct --max-model-len 32768";
        let o = run(
            &cat(),
            &plan_args(&["check", "--command", ok, "--gpu", "h100-sxm"]),
            true,
            &no_files,
        )
        .unwrap();
        assert_eq!(o.code, 0, "{}", o.stdout);
        assert!(o.stdout.starts_with("vllm-0.16 command: "), "{}", o.stdout);
        assert!(o.stdout.ends_with("the command starts\n"));
        for (text, want) in [
            ("vllm serve no-such/model", "unknown model `no-such/model`"),
            ("vllm serve m --tp 'x", "a ' quote is never closed"),
            (
                "vllm serve meta-llama/Llama-3.1-8B-Instruct --block-size 0",
                "`--block-size` must be between 1 and 1024; got 0",
            ),
        ] {
            let a = plan_args(&["check", "--command", text, "--gpu", "h100-sxm"]);
            match run(&cat(), &a, true, &no_files) {
                Err(Failure::Usage(m)) => assert!(m.contains(want), "{m}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        // `plan` does not read a command.
        let a = plan_args(&["plan", "--command", ok, "--gpu", "h100-sxm"]);
        assert!(matches!(
            run(&cat(), &a, false, &no_files),
            Err(Failure::Usage(_))
        ));
    }
}
