//! What a command hands back (the text for stdout and the exit status) or how it failed, and
//! the one place that prints either.

use std::process::ExitCode;

/// A usage error (exit 2) or a rejected input (exit 1).
#[derive(Debug)]
pub enum Failure {
    Usage(String),
    Rejected(String),
}

impl Failure {
    /// The message printed after `vramfit: ` on stderr.
    pub fn message(&self) -> &str {
        match self {
            Failure::Usage(m) | Failure::Rejected(m) => m,
        }
    }

    /// 2 for a usage error, 1 for a rejected input.
    pub fn code(&self) -> u8 {
        match self {
            Failure::Usage(_) => 2,
            Failure::Rejected(_) => 1,
        }
    }
}

pub type Res<T> = Result<T, Failure>;

pub fn usage<E: std::fmt::Display>(e: E) -> Failure {
    Failure::Usage(e.to_string())
}

/// A command's result: exactly the bytes it prints on stdout, notes for stderr (an ambiguous
/// `--gpu` read as its most common variant), and its exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub code: u8,
}

impl Output {
    /// Exit 0.
    pub fn ok(stdout: String) -> Self {
        Output {
            stdout,
            stderr: String::new(),
            code: 0,
        }
    }

    /// Exit 0 when `success`, else 1.
    pub fn status(stdout: String, success: bool) -> Self {
        Output {
            stdout,
            stderr: String::new(),
            code: u8::from(!success),
        }
    }

    /// The stdout of a `--json` command, parsed (for tests and callers that want the value).
    #[cfg(test)]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("{e}: not JSON: {}", self.stdout))
    }
}

/// `println!` of a pretty-printed value, as a string.
pub fn pretty_line<T: serde::Serialize + ?Sized>(v: &T) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
}

/// Prints a command's result (stdout, or `vramfit: message` on stderr) and gives its exit code.
/// The CLI's one place that prints (the workspace lints refuse printing elsewhere).
#[allow(clippy::print_stdout, clippy::print_stderr)]
pub fn emit(r: Res<Output>) -> ExitCode {
    match r {
        Ok(o) => {
            eprint!("{}", o.stderr);
            print!("{}", o.stdout);
            ExitCode::from(o.code)
        }
        Err(f) => {
            eprintln!("vramfit: {}", f.message());
            ExitCode::from(f.code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_map_to_their_exit_codes() {
        assert_eq!(usage("x").code(), 2);
        assert_eq!(usage("bad flag").message(), "bad flag");
        assert_eq!(Failure::Rejected("f: no".into()).code(), 1);
        assert_eq!(Output::status(String::new(), true).code, 0);
        assert_eq!(Output::status(String::new(), false).code, 1);
        assert_eq!(Output::ok("a".into()).code, 0);
    }

    #[test]
    fn pretty_line_is_println_of_to_string_pretty() {
        let v = serde_json::json!({ "a": [1, 2] });
        let s = pretty_line(&v);
        assert!(s.ends_with("}\n") && !s.ends_with("\n\n"), "{s:?}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&s).unwrap(), v);
    }
}
