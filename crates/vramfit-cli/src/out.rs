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

/// A command's result: exactly the bytes it prints on stdout, and its exit status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub stdout: String,
    pub code: u8,
}

impl Output {
    /// Exit 0.
    pub fn ok(stdout: String) -> Self {
        Output { stdout, code: 0 }
    }

    /// Exit 0 when `success`, else 1.
    pub fn status(stdout: String, success: bool) -> Self {
        Output {
            stdout,
            code: u8::from(!success),
        }
    }
}

/// `println!` of a pretty-printed value, as a string.
pub fn pretty_line<T: serde::Serialize + ?Sized>(v: &T) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
}

/// Prints a command's result (stdout, or `vramfit: message` on stderr) and gives its exit code.
pub fn emit(r: Res<Output>) -> ExitCode {
    match r {
        Ok(o) => {
            print!("{}", o.stdout);
            ExitCode::from(o.code)
        }
        Err(f) => {
            eprintln!("vramfit: {}", f.message());
            ExitCode::from(f.code())
        }
    }
}
