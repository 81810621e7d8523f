//! A settings file as its concrete syntax tree (the `jsonc-parser` crate's CST): entries are
//! added and removed in place, and everything else, comments included, is written back as the
//! user wrote it.

use std::path::{Path, PathBuf};

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstArray, CstNode, CstObject, CstRootNode};

use super::{
    SettingsError, accepts_comments, event_timeout, hook_timeout, installed_events,
    is_memrecall_hook,
};
use crate::Agent;

mod edit;

/// One settings file's text, parsed for editing.
pub struct Document {
    root: CstRootNode,
    path: PathBuf,
}

/// What the agent's own parser accepts: JSON, and comments where the agent reads them.
fn parse_options(agent: Agent) -> ParseOptions {
    ParseOptions {
        allow_comments: accepts_comments(agent),
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_non_finite_numbers: false,
        allow_extended_string_escapes: false,
    }
}

fn shape(path: &Path, what: &str) -> SettingsError {
    SettingsError::Shape {
        path: path.to_path_buf(),
        what: what.to_owned(),
    }
}

/// The text of a string node.
fn string_of(node: &CstNode) -> Option<String> {
    node.as_string_lit()?.decoded_value().ok()
}

/// The hook entries (objects) of each group in `groups`, with the group they belong to.
fn entries(groups: &CstArray) -> Vec<(CstObject, CstArray, CstObject)> {
    let mut found = Vec::new();
    for group in groups.elements() {
        let Some(group) = group.as_object() else {
            continue;
        };
        let Some(list) = group.array_value("hooks") else {
            continue;
        };
        for entry in list.elements() {
            if let Some(entry) = entry.as_object() {
                found.push((group.clone(), list.clone(), entry));
            }
        }
    }
    found
}

fn command_of(entry: &CstObject) -> Option<String> {
    string_of(&entry.get("command")?.value()?)
}

impl Document {
    /// A new, empty settings file.
    pub fn empty(agent: Agent) -> Self {
        Self::parse("", agent, Path::new("settings.json")).unwrap_or_else(|_| unreachable!())
    }

    /// Parses `text` (blank: an empty object), read from `path`, as `agent` reads it.
    pub fn parse(text: &str, agent: Agent, path: &Path) -> Result<Self, SettingsError> {
        let unparsable = |reason: String| SettingsError::Unparsable {
            path: path.to_path_buf(),
            what: if accepts_comments(agent) {
                "JSON with comments"
            } else {
                "JSON"
            },
            reason,
        };
        // The syntax tree keeps comments whatever the options say, so a file the agent reads as
        // plain JSON is checked as such first.
        if !accepts_comments(agent) && !text.trim().is_empty() {
            serde_json::from_str::<serde::de::IgnoredAny>(text)
                .map_err(|error| unparsable(error.to_string()))?;
        }
        let root = CstRootNode::parse(text, &parse_options(agent))
            .map_err(|error| unparsable(error.to_string()))?;
        Ok(Self {
            root,
            path: path.to_path_buf(),
        })
    }

    /// The file's text as it stands.
    pub fn text(&self) -> String {
        let mut text = self.root.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text
    }

    /// Whether the file holds nothing but an empty object (whitespace aside).
    pub fn is_empty_object(&self) -> bool {
        let text = self.root.to_string();
        let bare: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        bare.is_empty() || bare == "{}"
    }

    /// The top-level object; `None` for an empty file.
    fn top(&self) -> Result<Option<CstObject>, SettingsError> {
        match self.root.value() {
            None => Ok(None),
            Some(node) => node
                .as_object()
                .map(Some)
                .ok_or_else(|| shape(&self.path, "the top level is not a JSON object")),
        }
    }

    /// The `hooks` object, `None` when there is none; an error when it is not an object, or one
    /// of `agent`'s events under it is not an array.
    fn hooks(&self, agent: Agent) -> Result<Option<CstObject>, SettingsError> {
        let Some(top) = self.top()? else {
            return Ok(None);
        };
        let Some(prop) = top.get("hooks") else {
            return Ok(None);
        };
        let hooks = prop
            .value()
            .and_then(|v| v.as_object())
            .ok_or_else(|| shape(&self.path, "`hooks` is not an object"))?;
        for event in installed_events(agent) {
            if let Some(prop) = hooks.get(event)
                && prop.value().and_then(|v| v.as_array()).is_none()
            {
                return Err(shape(
                    &self.path,
                    &format!("`hooks.{event}` is not an array"),
                ));
            }
        }
        Ok(Some(hooks))
    }

    /// The commands of `agent`'s memrecall hook entries, in file order.
    pub fn memrecall_commands(&self, agent: Agent, program: Option<&Path>) -> Vec<String> {
        let Ok(Some(hooks)) = self.hooks(agent) else {
            return Vec::new();
        };
        let mut commands = Vec::new();
        for event in installed_events(agent) {
            let Some(groups) = hooks.array_value(event) else {
                continue;
            };
            for (_, _, entry) in entries(&groups) {
                if let Some(command) = command_of(&entry)
                    && is_memrecall_hook(&command, agent, program)
                    && !commands.contains(&command)
                {
                    commands.push(command);
                }
            }
        }
        commands
    }

    /// `agent`'s events that hold no memrecall entry (all of them when the file has none).
    pub fn missing_events(&self, agent: Agent, program: Option<&Path>) -> Vec<&'static str> {
        let hooks = self.hooks(agent).ok().flatten();
        installed_events(agent)
            .into_iter()
            .filter(|event| {
                let Some(groups) = hooks.as_ref().and_then(|h| h.array_value(event)) else {
                    return true;
                };
                !entries(&groups).iter().any(|(_, _, entry)| {
                    command_of(entry).is_some_and(|c| is_memrecall_hook(&c, agent, program))
                })
            })
            .collect()
    }

    /// `agent`'s events whose memrecall entry has a timeout above what the agent allows there
    /// (Codex's session end), with that timeout as written.
    pub fn timeouts_over_limit(&self, agent: Agent) -> Vec<(&'static str, String)> {
        let Ok(Some(hooks)) = self.hooks(agent) else {
            return Vec::new();
        };
        let mut over = Vec::new();
        for event in installed_events(agent) {
            let limit = event_timeout(agent, event);
            // Only an event the agent limits: elsewhere a longer timeout is the user's choice.
            if limit == hook_timeout(agent) {
                continue;
            }
            let Some(groups) = hooks.array_value(event) else {
                continue;
            };
            for (_, _, entry) in entries(&groups) {
                let ours = command_of(&entry).is_some_and(|c| is_memrecall_hook(&c, agent, None));
                let written = entry
                    .get("timeout")
                    .and_then(|p| p.value())
                    .and_then(|v| v.as_number_lit())
                    .map(|n| n.to_string());
                if let Some(written) = written
                    && ours
                    && written
                        .parse::<f64>()
                        .is_ok_and(|t| t > limit.setting() as f64)
                    && !over.iter().any(|(e, _)| *e == event)
                {
                    over.push((event, written));
                }
            }
        }
        over
    }

    /// The file's value, comments left out.
    pub fn value(&self) -> Option<serde_json::Value> {
        self.root.to_serde_value()
    }
}

#[cfg(test)]
mod tests;
