//! Active-tool noise: documents that only describe how to call a tool the agent is already using.

use crate::prepared::PreparedText;
use crate::text::{is_word_char, normalize};

/// Aliases of recently used tool names, derived once per recall (see
/// `docs/spec.md#active-tool-noise`).
///
/// A tool name yields its normalised, trimmed self, the part after its last `::`, and for
/// `mcp__server__tool` names the part after the server and the part after the last `__`. An
/// alias counts as mentioned only as a whole word (not inside a longer identifier), because short
/// aliases such as `b` from `a::b` would otherwise match almost any text.
#[derive(Debug, Clone, Default)]
pub struct ActiveToolAliases {
    aliases: Vec<String>,
}

impl ActiveToolAliases {
    /// Derives the aliases of every tool name; blank names contribute nothing.
    pub fn from_tool_names<S: AsRef<str>>(names: &[S]) -> Self {
        let mut aliases: Vec<String> = Vec::new();
        let mut add = |alias: &str| {
            let alias = alias.trim();
            if !alias.is_empty() && !aliases.iter().any(|a| a == alias) {
                aliases.push(alias.to_owned());
            }
        };
        for name in names {
            let name = normalize(name.as_ref().trim());
            add(&name);
            if let Some((_, last)) = name.rsplit_once("::") {
                add(last);
            }
            if let Some(rest) = name.strip_prefix("mcp__") {
                if let Some((_server, tool)) = rest.split_once("__") {
                    add(tool);
                }
                if let Some((_, last)) = rest.rsplit_once("__") {
                    add(last);
                }
            }
        }
        Self { aliases }
    }

    /// Whether no tool name was given (then nothing is ever noise).
    pub fn is_empty(&self) -> bool {
        self.aliases.is_empty()
    }

    /// The derived aliases, in derivation order without duplicates.
    pub fn aliases(&self) -> impl Iterator<Item = &str> {
        self.aliases.iter().map(String::as_str)
    }

    /// Whether a document is active-tool noise (alias mentioned + usage marker + no durable marker).
    pub fn is_noise(&self, text: &PreparedText) -> bool {
        if self.aliases.is_empty() {
            return false;
        }
        let markers = text.noise_markers();
        if !markers.usage || markers.durable {
            return false;
        }
        let fields = [text.title(), text.description(), text.body()];
        self.aliases
            .iter()
            .any(|alias| fields.iter().any(|field| mentions_word(field, alias)))
    }
}

/// Whether `needle` occurs in `haystack` with no word character directly before or after it.
fn mentions_word(haystack: &str, needle: &str) -> bool {
    haystack.match_indices(needle).any(|(at, found)| {
        let before = haystack.get(..at).and_then(|s| s.chars().next_back());
        let after = haystack
            .get(at + found.len()..)
            .and_then(|s| s.chars().next());
        !before.is_some_and(is_word_char) && !after.is_some_and(is_word_char)
    })
}
