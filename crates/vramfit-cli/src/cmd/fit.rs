//! `fit`: the inverse questions (fewest GPUs, longest context, most users, cheapest GPU).

use crate::args::{Find, FitArgs};
use crate::cmd::plan::{resolve, Loader};
use crate::json::{fits, FitJson};
use crate::out::{pretty_line, Output, Res};
use std::fmt::Write as _;
use vramfit_core::catalog::Catalog;
use vramfit_core::plan::{Inputs, Plan};
use vramfit_core::units::{fmt_count, fmt_usd};

/// `fit`: exit 1 when the answer is "none fits".
pub fn run(cat: &Catalog, a: &FitArgs, load: Loader) -> Res<Output> {
    let (p, inputs) = resolve(cat, &a.plan, load)?;
    Ok(render(cat, &p, &inputs, a))
}

/// What `fit` prints for a resolved plan.
pub fn render(cat: &Catalog, p: &Plan, inputs: &Inputs, a: &FitArgs) -> Output {
    let e = &p.estimate;
    let (name, answer, detail) = match a.find {
        Find::Gpus => (
            "gpus",
            (p.gpus_needed > 0 && fits(e.fit)).then_some(p.gpus_needed),
            format!(
                "TP {} × PP {} × {} replica(s) for {} users",
                p.tensor_parallel_size, p.pipeline_parallel_size, p.replicas, inputs.users
            ),
        ),
        Find::Context => {
            let n = inputs.users.max(1);
            let ans = p.estimate.longest_len_for_users(n);
            (
                "context",
                Some(ans),
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
                    "requests of {} tokens (prompt + output) at once per replica",
                    p.workload_tokens
                ),
            )
        }
        Find::Cheapest => return Output::ok(cheapest(cat, inputs, a.plan.json)),
    };
    let stdout = if a.plan.json {
        pretty_line(&FitJson {
            find: name,
            answer,
            tensor_parallel_size: p.tensor_parallel_size,
            pipeline_parallel_size: p.pipeline_parallel_size,
            detail,
        })
    } else {
        match answer {
            Some(x) => format!("{name}: {} ({detail})\n", fmt_count(x)),
            None => format!("{name}: none fits ({detail})\n"),
        }
    };
    Output::status(stdout, answer.is_some())
}

/// `--find cheapest`: the core's rows (all of them as JSON, the first 20 as a table).
pub fn cheapest(cat: &Catalog, inputs: &Inputs, json: bool) -> String {
    let rows = vramfit_core::layout::cheapest(cat, inputs);
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
