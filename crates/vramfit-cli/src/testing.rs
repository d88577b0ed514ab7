//! Helpers for the commands' unit tests: flags parsed by the real clap definitions, the
//! catalog, the core's scenario built by hand (not through `inputs_of`), scratch directories.

use crate::args::{Cli, Cmd, PlanArgs};
use crate::files::LocalModel;
use crate::out::Res;
use clap::Parser;
use std::path::{Path, PathBuf};
use vramfit_core::catalog::Catalog;
use vramfit_core::plan::Inputs;

pub fn cat() -> Catalog {
    Catalog::load().expect("catalog loads")
}

/// `vramfit ARGS…` as clap parses it.
pub fn parse(args: &[&str]) -> Cmd {
    let argv = std::iter::once("vramfit").chain(args.iter().copied());
    match Cli::try_parse_from(argv) {
        Ok(c) => c.cmd,
        Err(e) => panic!("{args:?}: {e}"),
    }
}

/// The plan flags of a `plan` or `check` command line.
pub fn plan_args(args: &[&str]) -> PlanArgs {
    match parse(args) {
        Cmd::Plan(a) | Cmd::Check(a) => a,
        _ => panic!("not plan/check: {args:?}"),
    }
}

/// The scenario the CLI's defaults describe (no `--max-model-len`: the model's own).
pub fn inputs(model: &str, gpu: &str) -> Inputs {
    let mut i = Inputs {
        model: model.into(),
        gpu: gpu.into(),
        ..Inputs::default()
    };
    i.flags.max_model_len = None;
    i
}

/// A loader for tests that name catalog models only.
pub fn no_files(p: &Path) -> Res<LocalModel> {
    panic!("unexpected read of {}", p.display())
}

/// A fresh, empty directory under the system temp dir, unique to this test.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("vramfit-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// A JSON number equals `want` to within parsing error (serde_json's default float parser
/// is not exactly round-trip, it can be off in the last digit).
#[track_caller]
pub fn assert_close(got: &serde_json::Value, want: f64) {
    let g = got
        .as_f64()
        .unwrap_or_else(|| panic!("{got} is not a number"));
    assert!(
        (g - want).abs() <= 1e-12 * want.abs().max(1.0),
        "{g} != {want}"
    );
}
