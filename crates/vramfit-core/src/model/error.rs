//! Why a `config.json` cannot be used, said naming the file it came from.

use std::fmt;

/// A `config.json` that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The text is not JSON.
    InvalidJson(String),
    /// The JSON is not an object.
    NotAnObject,
    /// A required field is absent.
    MissingField(&'static str),
    /// A field has the wrong type or an impossible value.
    BadField {
        /// Field name.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
}

impl ConfigError {
    /// The message naming the file the text came from (`Display` says `config.json`): a
    /// dropped `my-model.json` that does not read is "my-model.json is not valid JSON: …".
    pub fn in_file(&self, file: &str) -> String {
        Named(self, file).to_string()
    }
}

struct Named<'a>(&'a ConfigError, &'a str);

impl fmt::Display for Named<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = self.1;
        match self.0 {
            ConfigError::InvalidJson(e) => write!(f, "{file} is not valid JSON: {e}"),
            ConfigError::NotAnObject => write!(f, "{file} must be a JSON object"),
            ConfigError::MissingField(name) => {
                write!(f, "{file} is missing the required field `{name}`")
            }
            ConfigError::BadField { field, reason } => {
                write!(f, "{file} field `{field}` is unusable: {reason}")
            }
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Named(self, "config.json").fmt(f)
    }
}

impl std::error::Error for ConfigError {}
