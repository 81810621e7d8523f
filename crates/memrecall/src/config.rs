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

/// The file's name inside the memrecall home.
pub const CONFIG_FILE_NAME: &str = "config.toml";

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
    /// The default: half an hour.
    pub const DEFAULT: Self = Self(std::time::Duration::from_mins(30));

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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("config.toml"))
    }

    #[test]
    fn a_secret_under_an_unknown_key_is_never_echoed_and_the_key_and_line_are_named() {
        let error = parse("[selector]\nkind = \"http\"\napi_key = \"sk-live-123456\"\n")
            .unwrap_err()
            .to_string();
        assert!(!error.contains("sk-live"), "{error}");
        assert!(error.contains("line 3, key `api_key`"), "{error}");
        assert!(error.contains("unknown field"), "{error}");
        assert_eq!(error.lines().count(), 1, "{error}");
    }

    #[test]
    fn a_value_of_the_wrong_kind_is_reported_without_the_value() {
        let error = parse("[selector]\nkind = \"sk-secret-kind\"\n")
            .unwrap_err()
            .to_string();
        assert!(!error.contains("sk-secret"), "{error}");
        assert!(error.contains("line 2, key `kind`"), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn a_config_that_links_to_dev_zero_is_refused_without_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.path().join(CONFIG_FILE_NAME)).unwrap();
        let error = Config::load(dir.path()).unwrap_err().to_string();
        assert!(error.contains("a device"), "{error}");
    }

    #[test]
    fn an_http_selector_table_is_read() {
        let config = parse(
            "[selector]\nkind = \"http\"\nurl = \"http://127.0.0.1:9\"\nmodel = \"m\"\napi_key_env = \"KEY\"\n",
        )
        .unwrap();
        assert_eq!(config.selector.kind, ConfigSelectorKind::Http);
        assert_eq!(config.selector.api_key_env.as_deref(), Some("KEY"));
    }

    #[test]
    fn an_empty_file_means_no_selector() {
        assert_eq!(parse("").unwrap().selector.kind, ConfigSelectorKind::None);
    }

    #[test]
    fn an_unknown_key_is_an_error_naming_it() {
        let error = parse("[selector]\nkind = \"none\"\nmodle = \"m\"\n").unwrap_err();
        assert!(error.to_string().contains("modle"), "{error}");
    }

    #[test]
    fn an_unknown_kind_is_an_error_naming_the_key_and_what_is_expected() {
        let error = parse("[selector]\nkind = \"grpc\"\n").unwrap_err();
        assert!(
            error
                .to_string()
                .contains("line 2, key `kind`: unknown variant `…`, expected `none` or `http`"),
            "{error}"
        );
    }

    #[test]
    fn the_default_delivery_design_is_the_fast_path() {
        assert_eq!(
            parse("").unwrap().delivery.design,
            ConfigDeliveryDesign::FastPath
        );
    }

    #[test]
    fn a_gated_delivery_design_is_read() {
        let config = parse("[delivery]\ndesign = \"gated\"\n").unwrap();
        assert_eq!(config.delivery.design, ConfigDeliveryDesign::Gated);
    }

    #[test]
    fn an_unknown_delivery_design_is_an_error_naming_the_key_and_the_allowed_values() {
        let error = parse("[delivery]\ndesign = \"single-path\"\n").unwrap_err();
        let message = error.to_string();
        assert!(message.contains("delivery.design"), "{message}");
        assert!(message.contains("line 2, key `design`"), "{message}");
        assert!(message.contains("\"gated\""), "{message}");
        assert!(!message.contains("single-path"), "{message}");
    }

    #[test]
    fn an_unknown_delivery_key_is_an_error_naming_it() {
        let error = parse("[delivery]\ndesgin = \"gated\"\n").unwrap_err();
        assert!(error.to_string().contains("desgin"), "{error}");
    }

    #[test]
    fn the_default_trim_is_the_measured_rule() {
        assert_eq!(parse("").unwrap().delivery.trim, ConfigTrim::Measured);
    }

    #[test]
    fn trim_none_restores_the_untrimmed_delivery() {
        let config = parse("[delivery]\ntrim = \"none\"\n").unwrap();
        assert_eq!(
            recall_facade::DeliveryRule::from(config.delivery.trim),
            recall_facade::DeliveryRule::UNTRIMMED
        );
    }

    #[test]
    fn an_unknown_trim_is_an_error_naming_the_key_and_the_allowed_values() {
        let message = parse("[delivery]\ntrim = \"top-3\"\n")
            .unwrap_err()
            .to_string();
        assert!(message.contains("line 2, key `trim`"), "{message}");
        assert!(message.contains("\"measured\" or \"none\""), "{message}");
        assert!(
            !message.contains("top-3"),
            "the value is never echoed: {message}"
        );
    }

    #[test]
    fn a_serve_idle_exit_is_read_as_a_duration() {
        let config = parse("[serve]\nidle_exit = \"90s\"\n").unwrap();
        let idle = config.serve.idle_exit.map(IdleExit::duration);
        assert_eq!(idle, Some(std::time::Duration::from_secs(90)));
    }

    #[test]
    fn an_idle_exit_under_a_second_is_an_error_naming_the_key() {
        let error = parse("[serve]\nidle_exit = \"10ms\"\n").unwrap_err();
        assert!(error.to_string().contains("serve.idle_exit"), "{error}");
    }

    #[test]
    fn an_http_selector_without_url_is_an_error_naming_the_key() {
        let error = parse("[selector]\nkind = \"http\"\nmodel = \"m\"\n").unwrap_err();
        assert_eq!(
            error.to_string(),
            "config.toml: selector.url is required when selector.kind = \"http\""
        );
    }
}
