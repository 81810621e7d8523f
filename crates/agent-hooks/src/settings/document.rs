//! A settings file as its concrete syntax tree (the `jsonc-parser` crate's CST): entries are
//! added and removed in place, and everything else, comments included, is written back as the
//! user wrote it.

use std::path::{Path, PathBuf};

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstArray, CstInputValue, CstNode, CstObject, CstRootNode};

use super::{
    SettingsError, accepts_comments, event_timeout, hook_timeout, installed_events,
    is_memrecall_hook, program_of,
};
use crate::{Agent, HookTimeout};

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

    /// Adds `agent`'s entry running `command` under each of its events, or brings an entry that
    /// is there (an earlier install's) up to `command` and the current timeout; `false` when
    /// every one was already as it should be. Nothing is changed when the file's shape is wrong.
    pub fn merge(&mut self, agent: Agent, command: &str) -> Result<bool, SettingsError> {
        let hooks = match self.hooks(agent)? {
            Some(hooks) => hooks,
            None => self.root.object_value_or_set().object_value_or_set("hooks"),
        };
        let program = program_of(command);
        let program = Path::new(&program);
        let mut changed = false;
        for event in installed_events(agent) {
            let Some(groups) = hooks.array_value_or_create(event) else {
                continue;
            };
            let mut present = false;
            for (_, _, entry) in entries(&groups) {
                let Some(current) = command_of(&entry) else {
                    continue;
                };
                if current != command && !is_memrecall_hook(&current, agent, Some(program)) {
                    continue;
                }
                present = true;
                if current != command
                    && let Some(prop) = entry.get("command")
                {
                    prop.set_value(CstInputValue::String(command.to_owned()));
                    changed = true;
                }
                let timeout = event_timeout(agent, event).setting().to_string();
                let current_timeout = entry
                    .get("timeout")
                    .and_then(|p| p.value())
                    .and_then(|v| v.as_number_lit())
                    .map(|n| n.to_string());
                if current_timeout.as_deref() != Some(timeout.as_str()) {
                    match entry.get("timeout") {
                        Some(prop) => prop.set_value(CstInputValue::Number(timeout)),
                        None => {
                            entry.append("timeout", CstInputValue::Number(timeout));
                        }
                    }
                    changed = true;
                }
            }
            if !present {
                groups.append(group(agent, command, event_timeout(agent, event)));
                changed = true;
            }
        }
        Ok(changed)
    }

    /// Removes `agent`'s memrecall entries (those [`is_memrecall_hook`] recognises, `program`
    /// among them), and each group, event list and `hooks` object that held only them; `false`
    /// when there was none.
    pub fn remove(&mut self, agent: Agent, program: Option<&Path>) -> bool {
        let Ok(Some(hooks)) = self.hooks(agent) else {
            return false;
        };
        let mut removed = false;
        for event in installed_events(agent) {
            let Some(groups) = hooks.array_value(event) else {
                continue;
            };
            let mut removed_here = false;
            for (group, list, entry) in entries(&groups) {
                let ours = command_of(&entry)
                    .is_some_and(|command| is_memrecall_hook(&command, agent, program));
                if !ours {
                    continue;
                }
                entry.remove();
                removed_here = true;
                if list.elements().is_empty() {
                    group.remove();
                }
            }
            if removed_here
                && groups.elements().is_empty()
                && let Some(prop) = hooks.get(event)
            {
                prop.remove();
            }
            removed |= removed_here;
        }
        if removed
            && hooks.properties().is_empty()
            && let Ok(Some(top)) = self.top()
            && let Some(prop) = top.get("hooks")
        {
            prop.remove();
        }
        removed
    }
}

/// One group holding memrecall's entry.
fn group(agent: Agent, command: &str, timeout: HookTimeout) -> CstInputValue {
    let mut entry = Vec::new();
    if agent.conventions().hook_entry_named {
        entry.push(("name".to_owned(), CstInputValue::from("memrecall")));
    }
    entry.push(("type".to_owned(), CstInputValue::from("command")));
    entry.push(("command".to_owned(), CstInputValue::from(command)));
    entry.push((
        "timeout".to_owned(),
        CstInputValue::Number(timeout.setting().to_string()),
    ));
    CstInputValue::Object(vec![(
        "hooks".to_owned(),
        CstInputValue::Array(vec![CstInputValue::Object(entry)]),
    )])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    const COMMAND: &str = "/usr/local/bin/memrecall hook --agent claude-code";

    fn parsed(text: &str, agent: Agent) -> Document {
        Document::parse(text, agent, Path::new("settings.json")).unwrap()
    }

    fn value(document: &Document) -> Value {
        serde_json::from_str(&document.text()).unwrap()
    }

    #[test]
    fn merging_twice_adds_the_entry_once() {
        let mut document = parsed(r#"{"model":"x"}"#, Agent::ClaudeCode);
        assert!(document.merge(Agent::ClaudeCode, COMMAND).unwrap());
        assert!(!document.merge(Agent::ClaudeCode, COMMAND).unwrap());
        let group = json!([{"hooks":[{"type":"command","command":COMMAND,"timeout":10}]}]);
        assert_eq!(
            value(&document),
            json!({"model":"x","hooks":{
                "UserPromptSubmit":group,"PostToolUse":group,"Stop":group,"SessionEnd":group
            }})
        );
    }

    #[test]
    fn an_earlier_entry_is_brought_up_to_the_new_command_and_timeout() {
        let old = r#"{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"memrecall hook --agent qwen-code","timeout":10000}]}]}}"#;
        let mut document = parsed(old, Agent::QwenCode);
        let command = "/opt/memrecall hook --agent qwen-code";
        assert!(document.merge(Agent::QwenCode, command).unwrap());
        let entry = &value(&document)["hooks"]["UserPromptSubmit"];
        assert_eq!(
            entry,
            &json!([{"hooks":[{"type":"command","command":command,"timeout":10}]}])
        );
    }

    #[test]
    fn codex_gets_a_session_end_timeout_within_its_limit_and_an_earlier_one_is_lowered() {
        let command = "/bin/memrecall hook --agent codex";
        let mut fresh = Document::empty(Agent::Codex);
        fresh.merge(Agent::Codex, command).unwrap();
        let hooks = &value(&fresh)["hooks"];
        assert_eq!(hooks["SessionEnd"][0]["hooks"][0]["timeout"], 3);
        assert_eq!(hooks["UserPromptSubmit"][0]["hooks"][0]["timeout"], 10);
        assert!(fresh.timeouts_over_limit(Agent::Codex).is_empty());

        let old = r#"{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"/bin/memrecall hook --agent codex","timeout":10}]}]}}"#;
        let mut earlier = parsed(old, Agent::Codex);
        assert_eq!(
            earlier.timeouts_over_limit(Agent::Codex),
            [("SessionEnd", "10".to_owned())]
        );
        assert!(earlier.merge(Agent::Codex, command).unwrap());
        assert_eq!(
            value(&earlier)["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"],
            3
        );
    }

    #[test]
    fn a_longer_timeout_where_the_agent_sets_no_limit_is_the_users_choice() {
        let text = r#"{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"memrecall hook --agent claude-code","timeout":60}]}]}}"#;
        assert!(
            parsed(text, Agent::ClaudeCode)
                .timeouts_over_limit(Agent::ClaudeCode)
                .is_empty()
        );
    }

    #[test]
    fn a_file_whose_shape_is_wrong_for_one_event_is_not_changed_for_the_others() {
        let text = r#"{"hooks":{"Stop":{}}}"#;
        let mut document = parsed(text, Agent::Codex);
        let error = document.merge(Agent::Codex, COMMAND).unwrap_err();
        assert!(error.to_string().contains("hooks.Stop"), "{error}");
        assert_eq!(document.text(), format!("{text}\n"));
    }

    #[test]
    fn removing_after_merging_gives_back_the_original_text() {
        let original = "{\n  \"hooks\": {\n    \"UserPromptSubmit\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"other\"\n          }\n        ]\n      }\n    ],\n    \"SessionStart\": []\n  },\n  \"x\": 1\n}\n";
        let command = "/bin/memrecall hook --agent codex";
        let mut document = parsed(original, Agent::Codex);
        document.merge(Agent::Codex, command).unwrap();
        assert!(document.remove(Agent::Codex, None));
        assert_eq!(document.text(), original);
        assert!(!document.remove(Agent::Codex, None));
    }

    #[test]
    fn gemini_cli_comments_are_kept_through_merge_and_remove() {
        let original = "{\n  // the theme I like\n  \"theme\": \"dark\" /* for now */\n}\n";
        let mut document = parsed(original, Agent::GeminiCli);
        document
            .merge(Agent::GeminiCli, "/bin/memrecall hook --agent gemini-cli")
            .unwrap();
        let merged = document.text();
        assert!(merged.contains("// the theme I like"), "{merged}");
        assert!(merged.contains("/* for now */"), "{merged}");
        assert!(merged.contains("\"AfterTool\""), "{merged}");
        assert!(document.remove(Agent::GeminiCli, None));
        assert_eq!(document.text(), original);
    }

    #[test]
    fn comments_are_refused_for_an_agent_that_reads_plain_json() {
        let error = Document::parse("{ // no\n}", Agent::ClaudeCode, Path::new("settings.json"))
            .err()
            .unwrap();
        assert!(error.to_string().contains("is not valid JSON ("), "{error}");
    }

    #[test]
    fn hooks_that_are_not_an_object_are_refused() {
        let mut document = parsed(r#"{"hooks":[]}"#, Agent::QwenCode);
        let error = document.merge(Agent::QwenCode, COMMAND).unwrap_err();
        assert!(
            error.to_string().contains("`hooks` is not an object"),
            "{error}"
        );
    }

    #[test]
    fn installing_the_guarded_command_replaces_an_earlier_plain_one() {
        let plain = "/bin/memrecall hook --agent gemini-cli";
        let guarded = "command -v /bin/memrecall >/dev/null 2>&1 && exec /bin/memrecall hook --agent gemini-cli || true";
        let mut document = Document::empty(Agent::GeminiCli);
        document.merge(Agent::GeminiCli, plain).unwrap();
        assert!(document.merge(Agent::GeminiCli, guarded).unwrap());
        assert_eq!(
            document.memrecall_commands(Agent::GeminiCli, None),
            [guarded]
        );
        assert!(document.missing_events(Agent::GeminiCli, None).is_empty());
    }

    #[test]
    fn uninstall_removes_plain_and_guarded_entries_alike() {
        let original = "{\n  \"theme\": \"dark\"\n}\n";
        let mut document = parsed(original, Agent::GeminiCli);
        document
            .merge(Agent::GeminiCli, "/old/memrecall hook --agent gemini-cli")
            .unwrap();
        let hooks = document
            .root
            .object_value_or_set()
            .object_value_or_set("hooks");
        let groups = hooks.array_value_or_create("BeforeAgent").unwrap();
        groups.append(group(
            Agent::GeminiCli,
            "command -v /new/memrecall >/dev/null 2>&1 && exec /new/memrecall hook --agent gemini-cli || true",
            HookTimeout::Milliseconds(10_000),
        ));
        assert_eq!(document.memrecall_commands(Agent::GeminiCli, None).len(), 2);
        assert!(document.remove(Agent::GeminiCli, None));
        assert_eq!(document.text(), original);
    }

    #[test]
    fn gemini_cli_uses_before_agent_and_milliseconds() {
        let command = "/bin/memrecall hook --agent gemini-cli";
        let mut document = Document::empty(Agent::GeminiCli);
        document.merge(Agent::GeminiCli, command).unwrap();
        let entry = &value(&document)["hooks"]["BeforeAgent"][0]["hooks"][0];
        assert_eq!(entry["timeout"], 10_000);
        assert_eq!(entry["name"], "memrecall");
        assert_eq!(entry["command"], command);
    }
}
