//! The environment variables the layouts and the settings read, and the platform whose rules
//! apply to them.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// The environment variables layouts and settings read, captured once so that resolution is a
/// pure function of them (and testable without touching the process environment), with the
/// platform whose rules apply to them.
#[derive(Debug, Clone, Default)]
pub struct Environment {
    vars: BTreeMap<&'static str, OsString>,
    platform: Platform,
}

/// Whose rules the agents' layouts follow: where the home is, and how a project's folder is
/// named. The agents are Node programs, so they take these from Node: on Windows the home is
/// `%USERPROFILE%` (then `HOME`), and Qwen Code lowercases a project's folder name there, as
/// Windows paths differ only in case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// Linux, macOS and the other Unix systems.
    Unix,
    /// Windows.
    Windows,
}

impl Platform {
    /// The platform this binary runs on.
    pub const CURRENT: Self = if cfg!(windows) {
        Self::Windows
    } else {
        Self::Unix
    };
}

impl Default for Platform {
    fn default() -> Self {
        Self::CURRENT
    }
}

/// Every variable [`Environment`] captures.
const VARIABLES: [&str; 10] = [
    "CODEX_HOME",
    "HOME",
    "USERPROFILE",
    "MEMRECALL_HOME",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_PROJECT_DIR_NAME",
    "CLAUDE_CODE_DISABLE_AUTO_MEMORY",
    "QWEN_HOME",
    "QWEN_CODE_MEMORY_LOCAL",
    "XDG_RUNTIME_DIR",
];

impl Environment {
    /// The process environment.
    pub fn from_process() -> Self {
        Self::from_pairs(
            VARIABLES
                .iter()
                .filter_map(|&name| std::env::var_os(name).map(|value| (name, value))),
        )
    }

    /// An environment holding exactly `pairs` (of the captured names; others are dropped).
    pub fn from_pairs<V: Into<OsString>>(
        pairs: impl IntoIterator<Item = (&'static str, V)>,
    ) -> Self {
        Self {
            vars: pairs
                .into_iter()
                .filter(|(name, _)| VARIABLES.contains(name))
                .map(|(name, value)| (name, value.into()))
                .collect(),
            platform: Platform::CURRENT,
        }
    }

    /// The same variables under `platform`'s rules.
    #[cfg(test)]
    #[must_use]
    pub fn on(self, platform: Platform) -> Self {
        Self { platform, ..self }
    }

    /// The platform whose rules apply.
    pub fn platform(&self) -> Platform {
        self.platform
    }

    /// An environment holding the captured variables among `pairs`, named at run time (as a
    /// client sends them to the server); other names are dropped.
    pub fn from_named(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        Self::from_pairs(pairs.into_iter().filter_map(|(name, value)| {
            VARIABLES
                .iter()
                .find(|&&known| known == name)
                .map(|&known| (known, OsString::from(value)))
        }))
    }

    /// The captured variables whose values are UTF-8, by name (what a client sends the server).
    pub fn to_named(&self) -> BTreeMap<String, String> {
        self.vars
            .iter()
            .filter_map(|(name, value)| Some(((*name).to_owned(), value.to_str()?.to_owned())))
            .collect()
    }

    /// A variable's value; an empty value counts as unset.
    pub fn var(&self, name: &str) -> Option<&OsStr> {
        self.vars
            .get(name)
            .map(OsString::as_os_str)
            .filter(|v| !v.is_empty())
    }

    /// A variable as a path; an empty value counts as unset.
    pub fn path(&self, name: &str) -> Option<PathBuf> {
        self.var(name).map(PathBuf::from)
    }

    /// Whether a variable is set to a true value (`1`, `true`, `yes`, `on`, any case).
    pub fn is_truthy(&self, name: &str) -> bool {
        self.var(name).and_then(OsStr::to_str).is_some_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        })
    }

    /// The user's home directory: `HOME`; on Windows `USERPROFILE`, else `HOME`.
    pub fn home(&self) -> Option<PathBuf> {
        match self.platform {
            Platform::Unix => self.path("HOME"),
            Platform::Windows => self.path("USERPROFILE").or_else(|| self.path("HOME")),
        }
    }

    /// memrecall's home: `$MEMRECALL_HOME`, else `~/.memrecall`.
    pub fn memrecall_home(&self) -> Option<PathBuf> {
        self.path("MEMRECALL_HOME")
            .or_else(|| self.home().map(|home| home.join(".memrecall")))
    }
}
