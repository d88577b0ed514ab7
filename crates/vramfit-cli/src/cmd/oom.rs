//! `oom`: explain an out-of-memory message (the text is read in [`crate::files`]).

use crate::args::OomArgs;
use crate::json::oom_json;
use crate::out::{pretty_line, usage, Failure, Output, Res};
use std::fmt::Write as _;
use vramfit_core::catalog::Catalog;
use vramfit_core::plan;

/// `oom` on the pasted `text`.
pub fn run(cat: &Catalog, a: &OomArgs, text: &str) -> Res<Output> {
    let params = match &a.model {
        Some(m) => Some(
            plan::resolve_model(cat, m)
                .map_err(usage)?
                .0
                .parameters_total,
        ),
        None => None,
    };
    let report = vramfit_core::oom::parse(text).map_err(|e| Failure::Rejected(e.to_string()))?;
    let findings = vramfit_core::oom::diagnose_with(
        &report,
        &vramfit_core::oom::Hints {
            model_parameters: params,
        },
    );
    if a.json {
        return Ok(Output::ok(pretty_line(&oom_json(&report, &findings))));
    }
    let mut s = String::new();
    for f in &findings {
        let _ = writeln!(s, "{}\n  {}", f.headline, f.detail);
        for x in &f.fixes {
            let _ = writeln!(s, "  - {x}");
        }
    }
    Ok(Output::ok(s))
}
