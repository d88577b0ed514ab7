//! `fit`: the inverse questions (fewest GPUs, longest context, most users, cheapest GPU).

use crate::args::{Find, FitArgs};
use crate::cmd::plan::{resolve, with_source, HubSource, Loader};
use crate::json::FitJson;
use crate::out::{pretty_line, Output, Res};
use std::fmt::Write as _;
use vramfit_core::catalog::Catalog;
use vramfit_core::inputs::short;
use vramfit_core::plan::{Inputs, Plan};
use vramfit_core::units::{fmt_count, fmt_usd};

/// `fit`: exit 1 when the answer is "none fits".
pub fn run(cat: &Catalog, a: &FitArgs, load: Loader) -> Res<Output> {
    let (p, inputs, source) = resolve(cat, &a.plan, load)?;
    if let (Some(s), Find::Cheapest) = (&source, a.find) {
        // `budget::cheapest` plans catalog models (it would list nothing for this one).
        return Err(crate::out::usage(format!(
            "`--find cheapest` ranks GPUs for catalog models only; plan `{}` on each GPU with `plan --gpu …`",
            s.repo
        )));
    }
    let o = render(cat, &p, &inputs, a, source.as_ref());
    // `--find cheapest` ranks every catalog GPU: `--gpu` names none of its answer.
    let gpu = (!matches!(a.find, Find::Cheapest)).then_some(a.plan.gpu.as_str());
    Ok(crate::cmd::plan::with_gpu_note(o, cat, gpu))
}

/// What `fit` prints for a resolved plan.
pub fn render(
    cat: &Catalog,
    p: &Plan,
    inputs: &Inputs,
    a: &FitArgs,
    source: Option<&HubSource>,
) -> Output {
    let e = &p.estimate;
    // What bounds the answer: the running plan's limit; the memory (or the engine's
    // refusal) when the layout as given does not start.
    let limited_by = p.run.as_ref().map_or("memory", |r| r.limited_by);
    let (tp, pp, replicas) = (p.tensor_parallel_size, p.pipeline_parallel_size, p.replicas);
    // The layout as given does not start: the fewest that does, when there is one.
    let instead = match (&p.run, p.needed) {
        (None, Some(n)) => format!(" does not start; the fewest GPUs that start it: {n}"),
        _ => String::new(),
    };
    let (name, answer, detail) = match a.find {
        Find::Gpus => (
            "gpus",
            p.run.as_ref().map(|_| p.gpus_needed),
            format!(
                "TP {tp} × PP {pp} × {replicas} replica(s){instead} for {}; limited by {limited_by}",
                inputs.workload.request_rate.map_or_else(
                    || format!("{} users", inputs.workload.users),
                    |r| format!("{} requests/s", short(r))
                ),
            ),
        ),
        Find::Context => {
            let n = inputs.workload.users.max(1);
            // At most the longest length the engine takes: `max_model_len_fit` stops at the
            // model's `max_position_embeddings` (vLLM refuses a longer `--max-model-len`
            // unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1).
            let vllm = matches!(inputs.flags.engine, vramfit_core::engine::Engine::Vllm { .. });
            let most = if vllm && inputs.flags.allow_long_max_model_len {
                u64::MAX
            } else {
                p.estimate.max_model_len_fit
            };
            let ans = p.estimate.longest_len_for_users(n).min(most);
            (
                "context",
                // No length fits: "none fits", exit 1 (not "context: 0").
                (ans > 0).then_some(ans),
                format!(
                    "longest context each of {n} concurrent users can have at TP {} × PP {}",
                    p.tensor_parallel_size, p.pipeline_parallel_size
                ),
            )
        }
        Find::Concurrency => {
            // OK because: finite, non-negative.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let n = e.max_concurrency_workload.floor().max(0.0) as u64;
            (
                "concurrency",
                Some(n),
                format!(
                    "requests of {} tokens (prompt, media and output) at once per replica of TP {} × PP {}",
                    fmt_count(p.counted_tokens()),
                    p.tensor_parallel_size,
                    p.pipeline_parallel_size
                ),
            )
        }
        Find::Cheapest => return Output::ok(cheapest(cat, inputs, a.plan.json)),
    };
    let stdout = if a.plan.json {
        let v = FitJson {
            find: name,
            answer,
            tensor_parallel_size: tp,
            pipeline_parallel_size: pp,
            detail,
            limited_by,
            warnings: &p.warnings,
            gpu_notice: crate::cmd::plan::gpu_notice(cat, &a.plan.gpu),
        };
        match source {
            None => pretty_line(&v),
            Some(_) => format!("{}\n", with_source(&v, source)),
        }
    } else {
        match answer {
            Some(x) => format!("{name}: {} ({detail})\n", fmt_count(x)),
            None => format!("{name}: none fits ({detail})\n"),
        }
    };
    // The plan's warnings beside a plain answer, on stderr (stdout stays the answer line).
    let mut o = Output::status(stdout, answer.is_some());
    if !a.plan.json {
        for w in &p.warnings {
            o.stderr.push_str(&format!("vramfit: warning: {w}\n"));
        }
    }
    o
}

/// `--find cheapest`: the core's rows (all of them as JSON, the first 20 as a table).
pub fn cheapest(cat: &Catalog, inputs: &Inputs, json: bool) -> String {
    let rows = vramfit_core::budget::cheapest(cat, inputs);
    if json {
        return pretty_line(&rows);
    }
    let mut s = format!(
        "{:<32} {:>5} {:>8} {:>14} {:>10} {:>12}\n",
        "GPU", "GPUs", "layout", "purchase", "$/hour", "$/M tokens"
    );
    for r in rows.iter().take(20) {
        let _ = writeln!(
            s,
            "{:<32} {:>5} {:>8} {:>14} {:>10} {:>12}",
            r.gpu_id,
            r.total_gpus,
            format!("TP{}PP{}", r.tensor_parallel_size, r.pipeline_parallel_size),
            r.purchase_usd.map_or("–".into(), fmt_usd),
            r.cloud_usd_per_hour.map_or("–".into(), fmt_usd),
            r.usd_per_million_tokens.map_or("–".into(), fmt_usd)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::Cmd;
    use crate::testing::{cat, inputs, no_files, parse};
    use vramfit_core::plan;

    fn fit_args(args: &[&str]) -> FitArgs {
        let mut argv = vec!["fit"];
        argv.extend(args);
        match parse(&argv) {
            Cmd::Fit(a) => a,
            _ => unreachable!(),
        }
    }

    fn core(i: &Inputs) -> Plan {
        plan::plan(&cat(), i).unwrap()
    }

    #[test]
    fn fit_gpus_json_is_the_cores_layout() {
        let a = fit_args(&[
            "llama-3.1-70b",
            "--gpu",
            "h100-sxm",
            "--find",
            "gpus",
            "--max-model-len",
            "8192",
            "--gpu-memory-utilization",
            "0.95",
            "--json",
        ]);
        let o = run(&cat(), &a, &no_files).unwrap();
        let mut i = inputs("llama-3.1-70b", "h100-sxm");
        i.flags.max_model_len = Some(8192);
        i.flags.gpu_memory_utilization = Some(0.95);
        let p = core(&i);
        assert!(p.estimate.fit.starts());
        assert_eq!(o.code, 0);
        let j = o.json();
        assert_eq!(j["find"], "gpus");
        assert_eq!(j["answer"].as_u64(), Some(p.gpus_needed));
        assert_eq!(j["tensor_parallel_size"], p.tensor_parallel_size);
        assert_eq!(j["pipeline_parallel_size"], p.pipeline_parallel_size);
        assert!(j["detail"].as_str().unwrap().contains("for 1 users"));
    }

    #[test]
    fn fit_gpus_for_users_and_targets_names_its_limit() {
        let argv = [
            "llama-3.1-8b",
            "--gpu",
            "h100-sxm",
            "--find",
            "gpus",
            "--max-model-len",
            "8192",
            "--users",
            "2000",
            "--target-tokens-per-s",
            "40",
            "--max-ttft-ms",
            "2000",
        ];
        let mut i = inputs("llama-3.1-8b", "h100-sxm");
        i.flags.max_model_len = Some(8192);
        i.workload.users = 2000;
        i.workload.target_tokens_per_s = Some(40.0);
        i.workload.max_ttft_ms = Some(2000.0);
        let p = core(&i);
        let mut json = argv.to_vec();
        json.push("--json");
        let o = run(&cat(), &fit_args(&json), &no_files).unwrap();
        assert_eq!(o.code, 0);
        let j = o.json();
        assert_eq!(j["answer"].as_u64(), Some(p.gpus_needed));
        let r = p.run.as_ref().expect("starts");
        assert_eq!(j["limited_by"], r.limited_by);
        assert!(r.serving.tokens_per_s_per_user >= 40.0);
        assert!(r.serving.ttft_ms.unwrap() <= 2000.0);
        assert!(p.gpus_needed >= 2, "{}", p.gpus_needed);
        let t = run(&cat(), &fit_args(&argv), &no_files).unwrap();
        assert!(
            t.stdout
                .ends_with(&format!("for 2000 users; limited by {})\n", r.limited_by)),
            "{}",
            t.stdout
        );
        // The same at a request rate.
        let mut rate = json.clone();
        rate.extend(["--request-rate", "50"]);
        let j = run(&cat(), &fit_args(&rate), &no_files).unwrap().json();
        i.workload.request_rate = Some(50.0);
        let p = core(&i);
        assert_eq!(j["answer"].as_u64(), Some(p.gpus_needed));
        assert_eq!(j["limited_by"], p.run.as_ref().expect("starts").limited_by);
        assert!(j["detail"].as_str().unwrap().contains("50 requests/s"));
    }

    #[test]
    fn fit_none_fits_exits_1_with_a_null_answer() {
        let argv = [
            "llama-3.1-70b",
            "--gpu",
            "rtx-4090",
            "--tp",
            "1",
            "--find",
            "gpus",
        ];
        let p = core(&Inputs {
            tensor_parallel_size: Some(1),
            ..inputs("llama-3.1-70b", "rtx-4090")
        });
        assert!(!p.estimate.fit.starts());
        let o = run(&cat(), &fit_args(&argv), &no_files).unwrap();
        assert_eq!(o.code, 1);
        assert!(o.stdout.starts_with("gpus: none fits ("), "{}", o.stdout);
        let mut j = argv.to_vec();
        j.push("--json");
        let o = run(&cat(), &fit_args(&j), &no_files).unwrap();
        assert_eq!(o.code, 1);
        assert!(o.json()["answer"].is_null());
    }

    #[test]
    fn fit_context_text_is_the_cores_longest_length_for_the_users() {
        let a = fit_args(&[
            "llama-3.1-8b",
            "--gpu",
            "l4",
            "--find",
            "context",
            "--users",
            "4",
        ]);
        let o = run(&cat(), &a, &no_files).unwrap();
        let mut i = inputs("llama-3.1-8b", "l4");
        i.workload.users = 4;
        let p = core(&i);
        let n = p.estimate.longest_len_for_users(4);
        assert!(n > 1000);
        assert_eq!(o.code, 0);
        assert_eq!(
            o.stdout,
            format!(
                "context: {} (longest context each of 4 concurrent users can have at TP {} × PP {})\n",
                fmt_count(n),
                p.tensor_parallel_size,
                p.pipeline_parallel_size
            )
        );
    }

    #[test]
    fn fit_concurrency_json_is_the_floor_of_the_cores_workload_concurrency() {
        let a = fit_args(&[
            "llama-3.1-8b",
            "--gpu",
            "h100-sxm",
            "--find",
            "concurrency",
            "--json",
        ]);
        let j = run(&cat(), &a, &no_files).unwrap().json();
        let c = core(&inputs("llama-3.1-8b", "h100-sxm"))
            .estimate
            .max_concurrency_workload;
        assert_eq!(j["find"], "concurrency");
        assert_eq!(j["answer"].as_u64(), Some(c.floor() as u64));
        assert!(c > 10.0);
        // The text answer names the layout it counts (Llama 3.1 70B at its whole context
        // takes more than one H100).
        let a = fit_args(&[
            "llama-3.1-70b",
            "--gpu",
            "h100-sxm",
            "--find",
            "concurrency",
        ]);
        let o = run(&cat(), &a, &no_files).unwrap();
        let p = core(&inputs("llama-3.1-70b", "h100-sxm"));
        assert!(p.tensor_parallel_size * p.pipeline_parallel_size > 1);
        let tail = format!(
            "at once per replica of TP {} × PP {})\n",
            p.tensor_parallel_size, p.pipeline_parallel_size
        );
        assert!(o.stdout.ends_with(&tail), "{}", o.stdout);
    }

    #[test]
    fn fit_cheapest_lists_the_cores_rows() {
        let i = inputs("llama-3.1-8b", "h100-sxm");
        let rows = vramfit_core::budget::cheapest(&cat(), &i);
        assert!(rows.len() > 10);
        let base = ["llama-3.1-8b", "--gpu", "h100-sxm", "--find", "cheapest"];
        let mut argv = base.to_vec();
        argv.push("--json");
        let o = run(&cat(), &fit_args(&argv), &no_files).unwrap();
        assert_eq!(o.code, 0);
        let j = o.json();
        let got = j.as_array().unwrap();
        assert_eq!(got.len(), rows.len());
        for (g, r) in got.iter().zip(&rows) {
            assert_eq!(g["gpu_id"], r.gpu_id);
            assert_eq!(g["total_gpus"], r.total_gpus);
        }
        let t = run(&cat(), &fit_args(&base), &no_files).unwrap();
        let lines: Vec<&str> = t.stdout.lines().collect();
        assert_eq!(lines.len(), 1 + rows.len().min(20));
        assert!(lines[0].starts_with("GPU "));
        for (l, r) in lines[1..].iter().zip(&rows) {
            assert!(l.starts_with(&r.gpu_id), "{l}");
            assert!(
                l.contains(&format!(
                    "TP{}PP{}",
                    r.tensor_parallel_size, r.pipeline_parallel_size
                )),
                "{l}"
            );
        }
    }
}
