//! `$MEMRECALL_HOME/config.toml`: settings a hook cannot take from a command line.
//!
//! ```toml
//! [selector]
//! kind = "http"                    # "none" (the default) or "http"
//! url = "http://127.0.0.1:8080"    # needed for kind = "http"
//! model = "qwen3-4b"               # needed for kind = "http"
//! api_key_env = "OPENAI_API_KEY"   # optional; the variable holding the key
//!
//! [delivery]
//! design = "gated"                 # "fast-path" (the default) or "gated"
//! trim = "none"                    # "measured" (the default) or "none": the lexical top five
//! turn_cap = 3                     # optional: most documents one turn delivers in all
//!
//! [telemetry]
//! record = false                   # true (the default) keeps $MEMRECALL_HOME/telemetry/
//!
//! [serve]
//! idle_exit = "30m"                # `memrecall serve` exits after this long without a request
//! ```
//!
//! `delivery.design = "gated"` ends the first prompt's wait early only on a confident fast result
//! (its lead memory shares a whole word with the query); a weak one is held for the selector
//! until the 100 ms ceiling. Worth turning on with a selector that answers well inside 100 ms.
//!
//! A missing file is the defaults. Unknown keys and wrong types are errors naming the key, so a
//! typo never silently turns the selector off. The command line's flags win over the file.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The file's name inside the memrecall home (the server and the hook watch it there).
pub const CONFIG_FILE_NAME: &str = recall_server::CONFIG_FILE_NAME;

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The `[selector]` table.
    #[serde(default)]
    pub selector: SelectorTable,
    /// The `[delivery]` table.
    #[serde(default)]
    pub delivery: DeliveryTable,
    /// The `[telemetry]` table.
    #[serde(default)]
    pub telemetry: TelemetryTable,
    /// The `[serve]` table.
    #[serde(default)]
    pub serve: ServeTable,
}

/// The `[telemetry]` table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TelemetryTable {
    /// `record`: whether recalls append their events under `$MEMRECALL_HOME/telemetry`.
    #[serde(default = "recorded")]
    pub record: bool,
}

impl Default for TelemetryTable {
    fn default() -> Self {
        Self { record: recorded() }
    }
}

fn recorded() -> bool {
    true
}

/// The `[serve]` table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeTable {
    /// `idle_exit`.
    #[serde(default)]
    pub idle_exit: Option<IdleExit>,
}

/// How long `memrecall serve` stays up without a request: a human duration (`90s`, `30m`) of
/// at least one second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct IdleExit(std::time::Duration);

impl IdleExit {
    /// The default: half an hour (the server's own).
    pub const DEFAULT: Self = Self(recall_server::server::DEFAULT_IDLE_EXIT);

    /// The duration.
    pub fn duration(self) -> std::time::Duration {
        self.0
    }
}

impl TryFrom<String> for IdleExit {
    type Error = String;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        match humantime::parse_duration(&value) {
            Ok(duration) if duration >= std::time::Duration::from_secs(1) => Ok(Self(duration)),
            _ => Err(format!(
                "serve.idle_exit must be a duration of at least 1s (like \"30m\"), not {value:?}"
            )),
        }
    }
}

/// The `[delivery]` table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeliveryTable {
    /// `design`.
    #[serde(default)]
    pub design: ConfigDeliveryDesign,
    /// `trim`.
    #[serde(default)]
    pub trim: ConfigTrim,
    /// `turn_cap`: most documents one turn delivers, fast and refined together.
    #[serde(default)]
    pub turn_cap: Option<std::num::NonZeroUsize>,
    /// `lines`: whether a weak lexical match is named in one line instead of shown whole
    /// (default on; `false` shows every delivered note whole).
    #[serde(default)]
    pub lines: Option<bool>,
}

/// What of the lexical ranking a hook delivers: the measured delivery rule, or the design's
/// whole top five.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum ConfigTrim {
    /// The measured rule ([`recall_facade::DeliveryRule::SHIPPED`]).
    #[default]
    Measured,
    /// No trim: the lexical top five.
    None,
}

impl TryFrom<String> for ConfigTrim {
    type Error = String;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        match value.as_str() {
            "measured" => Ok(Self::Measured),
            "none" => Ok(Self::None),
            _ => Err(format!(
                "delivery.trim must be \"measured\" or \"none\", not {value:?}"
            )),
        }
    }
}

impl From<ConfigTrim> for recall_facade::DeliveryRule {
    fn from(trim: ConfigTrim) -> Self {
        match trim {
            ConfigTrim::Measured => Self::SHIPPED,
            ConfigTrim::None => Self::UNTRIMMED,
        }
    }
}

/// The delivery designs a configuration may choose (the single-path design is for measurement
/// only and cannot be chosen). Read from a string so that a wrong value gets an error naming
/// the key, which the TOML parser's own message leaves out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub enum ConfigDeliveryDesign {
    /// The fast-path design (`docs/design.md#one-recall-one-scan-a-fast-result-in-front`).
    #[default]
    FastPath,
    /// The confidence-gated fast path.
    Gated,
}

impl TryFrom<String> for ConfigDeliveryDesign {
    type Error = String;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        match value.as_str() {
            "fast-path" => Ok(Self::FastPath),
            "gated" => Ok(Self::Gated),
            _ => Err(format!(
                "delivery.design must be \"fast-path\" or \"gated\", not {value:?}"
            )),
        }
    }
}

impl From<ConfigDeliveryDesign> for recall_facade::DeliveryDesign {
    fn from(design: ConfigDeliveryDesign) -> Self {
        match design {
            ConfigDeliveryDesign::FastPath => Self::FastPath,
            ConfigDeliveryDesign::Gated => Self::Gated,
        }
    }
}

/// Which selector hooks (and recalls without `--selector`) use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConfigSelectorKind {
    /// No model.
    #[default]
    None,
    /// An OpenAI-compatible chat-completions server.
    Http,
}

/// The `[selector]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectorTable {
    /// `kind`.
    #[serde(default)]
    pub kind: ConfigSelectorKind,
    /// `url`.
    pub url: Option<String>,
    /// `model`.
    pub model: Option<String>,
    /// `api_key_env`.
    pub api_key_env: Option<String>,
}

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but cannot be read: not a regular file, too large, not UTF-8, or an I/O
    /// failure (the error names the path).
    #[error(transparent)]
    Read(#[from] memory_scan::foreign::ForeignFileError),
    /// The file is not valid TOML of the expected shape.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The parser's message with every value it quoted hidden, the key and its line
        /// named (see [`describe_toml_error`]).
        message: String,
    },
    /// A key that the chosen selector needs is missing.
    #[error("{path}: selector.{key} is required when selector.kind = \"http\"")]
    Missing {
        /// The file.
        path: PathBuf,
        /// The missing key.
        key: &'static str,
    },
}

impl Config {
    /// Reads `home/config.toml`; a missing file gives the defaults.
    pub fn load(home: &Path) -> Result<Self, ConfigError> {
        use memory_scan::foreign::{self, ByteLimit, Links};
        let path = home.join(CONFIG_FILE_NAME);
        let text = match foreign::read_to_string(&path, ByteLimit::SETTINGS, Links::Follow) {
            Ok(text) => text,
            Err(e) if e.is_not_found() => return Ok(Self::default()),
            Err(e) => return Err(ConfigError::Read(e)),
        };
        Self::parse(&text, &path)
    }

    /// Parses and validates the file's text.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let config: Self = toml::from_str(text).map_err(|e| ConfigError::Invalid {
            path: path.to_path_buf(),
            message: describe_toml_error(text, &e),
        })?;
        if config.selector.kind == ConfigSelectorKind::Http {
            for (key, value) in [
                ("url", &config.selector.url),
                ("model", &config.selector.model),
            ] {
                if value.as_deref().is_none_or(|v| v.trim().is_empty()) {
                    return Err(ConfigError::Missing {
                        path: path.to_path_buf(),
                        key,
                    });
                }
            }
        }
        Ok(config)
    }
}

/// One line for a TOML error: the line and key it is at, and what was wrong, with the value
/// written on that line hidden wherever the parser's message repeats it, so a secret written
/// under a misspelt key or in a field of another type never reaches a log or a terminal.
fn describe_toml_error(text: &str, error: &toml::de::Error) -> String {
    let what = error.message().trim().replace(['\n', '\r'], " ");
    let Some(span) = error.span() else {
        return what;
    };
    let start = span.start.min(text.len());
    let line_number = text.get(..start).unwrap_or(text).matches('\n').count() + 1;
    let line = text.lines().nth(line_number - 1).unwrap_or_default().trim();
    // The key is what stands before `=`; a table header names its table.
    let (key, value) = match line.split_once('=') {
        Some((key, value)) => (key.trim(), value.trim()),
        None if line.starts_with('[') => (line, ""),
        None => ("", ""),
    };
    let value = value.trim_matches(|c| c == '"' || c == '\'');
    let what = if value.is_empty() {
        what
    } else {
        what.replace(value, "…")
    };
    let key: String = key.chars().filter(|c| !c.is_control()).take(64).collect();
    if key.is_empty() {
        format!("line {line_number}: {what}")
    } else {
        format!("line {line_number}, key `{key}`: {what}")
    }
}

mod options;

pub(crate) use options::recall_options;

#[cfg(test)]
mod tests;
