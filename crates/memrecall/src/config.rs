//! `$MEMRECALL_HOME/config.toml`: settings a hook cannot take from a command line.
//!
//! ```toml
//! [selector]
//! kind = "http"                    # "none" (the default) or "http"
//! url = "http://127.0.0.1:8080"    # needed for kind = "http"
//! model = "qwen3-4b"               # needed for kind = "http"
//! api_key_env = "OPENAI_API_KEY"   # optional; the variable holding the key
//! ```
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
    /// The file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The file is not valid TOML of the expected shape.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The parser's message, which names the key and its line.
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
        let path = home.join(CONFIG_FILE_NAME);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        Self::parse(&text, &path)
    }

    /// Parses and validates the file's text.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ConfigError> {
        let config: Self = toml::from_str(text).map_err(|e| ConfigError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().replace('\n', " "),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("config.toml"))
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
    fn an_unknown_kind_is_an_error_naming_the_value() {
        let error = parse("[selector]\nkind = \"grpc\"\n").unwrap_err();
        assert!(error.to_string().contains("grpc"), "{error}");
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
