//! `vramfit`: pre-flight GPU memory checks for LLM serving, a thin shell over `vramfit-core`.
//!
//! Exit codes: 0 success (and "fits" for `check`), 1 does not fit / rejected input file,
//! 2 usage errors (unknown model or GPU, bad flags, a Hub import that failed: offline,
//! unauthorised, not found, a malformed answer).
//!
//! This file parses the flags, reads what a command needs from disk or stdin ([`files`]),
//! hands it to the command ([`cmd`], which returns the exact stdout and exit status) and
//! prints the result ([`out::emit`]).

mod args;
mod cmd;
mod files;
mod hub;
mod inputs;
mod json;
mod out;
#[cfg(test)]
mod testing;

use args::{Cli, Cmd};
use clap::Parser;
use out::{emit, Failure, Res};
use std::process::ExitCode;
use vramfit_core::catalog::Catalog;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let cat = match Catalog::load() {
        Ok(c) => c,
        Err(e) => return emit(Err(Failure::Usage(format!("catalog error: {e}")))),
    };
    emit(dispatch(&cat, cli.cmd))
}

/// The loader of models outside the catalog: files on disk and the Hub.
struct Sources(hub::HubEnv);

impl cmd::plan::Load for Sources {
    fn local(&self, path: &std::path::Path) -> Res<files::LocalModel> {
        files::read_local_model(path)
    }
    fn hub(&self, repo: &str, revision: Option<&str>) -> Res<hub::HubModel> {
        hub::import(repo, revision, &self.0)
    }
}

fn dispatch(cat: &Catalog, cmd: Cmd) -> Res<out::Output> {
    let sources = Sources(hub::HubEnv::from_process());
    let load = &sources;
    match cmd {
        Cmd::Plan(a) => cmd::plan::run(cat, &a, false, load),
        Cmd::Check(a) => cmd::plan::run(cat, &a, true, load),
        Cmd::Fit(a) => cmd::fit::run(cat, &a, load),
        Cmd::Scale(a) => cmd::scale::run(cat, &a, load),
        Cmd::Models(a) => cmd::catalog::models(cat, &a),
        Cmd::Gpus(a) => Ok(cmd::catalog::gpus(cat, &a)),
        Cmd::Inspect(a) => {
            let name = a.path.to_string_lossy();
            let input = if !a.path.exists() && vramfit_core::hub::is_repo_id(&name) {
                let m = hub::import(&name, Some(&a.revision), &sources.0)?;
                files::hub_inspect_input(m)
            } else {
                files::read_inspect_input(&a.path)?
            };
            cmd::inspect::run(&a, &input)
        }
        Cmd::Oom(a) => cmd::oom::run(cat, &a, &files::read_oom_text(a.file.as_deref())?),
        Cmd::Budget(a) => cmd::budget::run(cat, &a, cmd::budget::this_month()),
        Cmd::Accuracy(a) => {
            let against = match &a.check {
                Some(p) => Some(files::read_text(p)?),
                None => None,
            };
            Ok(cmd::accuracy::run(
                vramfit_core::accuracy::CALIBRATION_CSV,
                against.as_deref(),
            ))
        }
    }
}
