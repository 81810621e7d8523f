//! Where each agent keeps its hook settings, the entry memrecall adds there, and merging it in
//! and out of a settings file without disturbing anything else in it.
//!
//! | agent | user file | project file (`--project DIR`) | timeout unit |
//! |---|---|---|---|
//! | Claude Code | `$CLAUDE_CONFIG_DIR/settings.json` or `~/.claude/settings.json` | `DIR/.claude/settings.json` | seconds |
//! | Qwen Code | `$QWEN_HOME/settings.json` or `~/.qwen/settings.json` | `DIR/.qwen/settings.json` | milliseconds |
//! | Gemini CLI | `~/.gemini/settings.json` | `DIR/.gemini/settings.json` | milliseconds |
//! | Codex | `$CODEX_HOME/hooks.json` or `~/.codex/hooks.json` | `DIR/.codex/hooks.json` | seconds |
//!
//! The entry is one group `{"hooks":[{"type":"command","command":"memrecall hook --agent A",
//! "timeout":…}]}` under each event the hook serves ([`installed_events`]): the prompt event, the
//! tool-result event (where it is a different one), the turn's end and the session's end, so
//! that the server's recall reaches the tool-result point and every turn ends (10 seconds: the
//! hook answers within the 100 ms ceiling plus process time, the margin is for a cold disk).
//! Keys keep their order, so a merged file differs from the original only by the entries.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use super::{Agent, Environment, hook_io};

/// A JSON value whose objects keep their keys in file order.
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, keys in order.
    Object(Vec<(String, Json)>),
}

impl Json {
    fn object_entry<'a>(entries: &'a mut [(String, Json)], key: &str) -> Option<&'a mut Json> {
        entries.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct JsonVisitor;
        impl<'de> Visitor<'de> for JsonVisitor {
            type Value = Json;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<Json, E> {
                Ok(Json::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Json, E> {
                Ok(Json::Number(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Json, E> {
                Ok(Json::Number(v.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Json, E> {
                serde_json::Number::from_f64(v)
                    .map(Json::Number)
                    .ok_or_else(|| E::custom("a number JSON cannot hold"))
            }
            fn visit_str<E>(self, v: &str) -> Result<Json, E> {
                Ok(Json::String(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Json, E> {
                Ok(Json::String(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Json::Array(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut entries = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, Json>()? {
                    entries.push((key, value));
                }
                Ok(Json::Object(entries))
            }
        }
        deserializer.deserialize_any(JsonVisitor)
    }
}

impl Serialize for Json {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(n) => n.serialize(serializer),
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in entries {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
        }
    }
}

/// Why a settings file cannot be changed.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// No home directory to find the user settings in.
    #[error("cannot find the home directory: set HOME or pass --project")]
    NoHome,
    /// The file could not be read: not a regular file, too large, not UTF-8, or an I/O failure
    /// (the error names the path). It is left untouched.
    #[error(transparent)]
    Read(#[from] memory_scan::foreign::ForeignFileError),
    /// The file is not JSON; it is left untouched.
    #[error(
        "{path} is not valid JSON ({source}); it was left untouched: fix it or add the entry by hand"
    )]
    Unparsable {
        /// The file.
        path: PathBuf,
        /// The parse error.
        source: serde_json::Error,
    },
    /// The file's JSON does not have the shape hook settings need; it is left untouched.
    #[error("{path}: {what}; it was left untouched: fix it or add the entry by hand")]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// The file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

/// The settings file hooks of `agent` live in: the project's when `project` is given, else the
/// user's.
pub fn settings_path(
    agent: Agent,
    project: Option<&Path>,
    env: &Environment,
) -> Result<PathBuf, SettingsError> {
    let file = if agent == Agent::Codex {
        "hooks.json"
    } else {
        "settings.json"
    };
    let dot_dir = match agent {
        Agent::ClaudeCode => ".claude",
        Agent::QwenCode => ".qwen",
        Agent::GeminiCli => ".gemini",
        Agent::Codex => ".codex",
    };
    if let Some(project) = project {
        return Ok(project.join(dot_dir).join(file));
    }
    let moved = match agent {
        Agent::ClaudeCode => env.path("CLAUDE_CONFIG_DIR"),
        Agent::QwenCode => env.path("QWEN_HOME"),
        Agent::Codex => env.path("CODEX_HOME"),
        Agent::GeminiCli => None,
    };
    let dir = match moved {
        Some(dir) => dir,
        None => env.home().ok_or(SettingsError::NoHome)?.join(dot_dir),
    };
    Ok(dir.join(file))
}

/// The command an agent runs.
pub fn hook_command(agent: Agent) -> String {
    format!("memrecall hook --agent {}", agent.as_str())
}

/// The hook entry memrecall adds for `agent`.
fn hook_entry(agent: Agent) -> Json {
    let timeout: u64 = match agent {
        Agent::ClaudeCode | Agent::Codex => 10,
        Agent::QwenCode | Agent::GeminiCli => 10_000,
    };
    let mut entry = Vec::new();
    if agent == Agent::GeminiCli {
        entry.push(("name".to_owned(), Json::String("memrecall".to_owned())));
    }
    entry.push(("type".to_owned(), Json::String("command".to_owned())));
    entry.push(("command".to_owned(), Json::String(hook_command(agent))));
    entry.push(("timeout".to_owned(), Json::Number(timeout.into())));
    Json::Object(entry)
}

/// The events `install` registers the hook for: prompt, tool result (when it is another
/// event), turn end and session end (for the agents that have one).
pub fn installed_events(agent: Agent) -> Vec<&'static str> {
    let (prompt, tool_result) = hook_io::event_names(agent);
    let mut events = vec![prompt];
    if tool_result != prompt {
        events.push(tool_result);
    }
    events.push(hook_io::turn_end_event(agent));
    events.extend(hook_io::session_end_event(agent));
    events
}

/// The settings snippet `install` merges: `{"hooks":{"<event>":[{"hooks":[entry]}],…}}`.
pub fn snippet(agent: Agent) -> Json {
    let group = || {
        Json::Object(vec![(
            "hooks".to_owned(),
            Json::Array(vec![hook_entry(agent)]),
        )])
    };
    Json::Object(vec![(
        "hooks".to_owned(),
        Json::Object(
            installed_events(agent)
                .into_iter()
                .map(|event| (event.to_owned(), Json::Array(vec![group()])))
                .collect(),
        ),
    )])
}

fn is_ours(entry: &Json, command: &str) -> bool {
    matches!(entry.get("command"), Some(Json::String(c)) if c == command)
}

fn shape(path: &Path, what: &str) -> SettingsError {
    SettingsError::Shape {
        path: path.to_path_buf(),
        what: what.to_owned(),
    }
}

/// Adds the agent's entry under each of its [`installed_events`]; `false` when every one was
/// already there. Nothing is changed when the file's shape is wrong for any of them.
pub fn merge(settings: &mut Json, agent: Agent, path: &Path) -> Result<bool, SettingsError> {
    let mut changed = settings.clone();
    let mut added = false;
    for event in installed_events(agent) {
        added |= merge_event(&mut changed, agent, event, path)?;
    }
    *settings = changed;
    Ok(added)
}

fn merge_event(
    settings: &mut Json,
    agent: Agent,
    event: &str,
    path: &Path,
) -> Result<bool, SettingsError> {
    let command = hook_command(agent);
    let Json::Object(root) = settings else {
        return Err(shape(path, "the top level is not a JSON object"));
    };
    if Json::object_entry(root, "hooks").is_none() {
        root.push(("hooks".to_owned(), Json::Object(Vec::new())));
    }
    let Some(Json::Object(hooks)) = Json::object_entry(root, "hooks") else {
        return Err(shape(path, "`hooks` is not an object"));
    };
    if Json::object_entry(hooks, event).is_none() {
        hooks.push((event.to_owned(), Json::Array(Vec::new())));
    }
    let Some(Json::Array(groups)) = Json::object_entry(hooks, event) else {
        return Err(shape(path, &format!("`hooks.{event}` is not an array")));
    };
    let present = groups.iter().any(|group| {
        matches!(group.get("hooks"), Some(Json::Array(entries)) if entries.iter().any(|e| is_ours(e, &command)))
    });
    if present {
        return Ok(false);
    }
    groups.push(Json::Object(vec![(
        "hooks".to_owned(),
        Json::Array(vec![hook_entry(agent)]),
    )]));
    Ok(true)
}

/// Removes the agent's entry from `settings` under each of its [`installed_events`], and each
/// group, event list and `hooks` object that held only it; `false` when there was none.
pub fn remove(settings: &mut Json, agent: Agent) -> bool {
    let mut removed = false;
    for event in installed_events(agent) {
        removed |= remove_event(settings, agent, event);
    }
    removed
}

fn remove_event(settings: &mut Json, agent: Agent, event: &str) -> bool {
    let command = hook_command(agent);
    let Json::Object(root) = settings else {
        return false;
    };
    let Some(Json::Object(hooks)) = Json::object_entry(root, "hooks") else {
        return false;
    };
    let Some(Json::Array(groups)) = Json::object_entry(hooks, event) else {
        return false;
    };
    let mut removed = false;
    groups.retain_mut(|group| {
        let Json::Object(fields) = group else {
            return true;
        };
        let Some(Json::Array(entries)) = Json::object_entry(fields, "hooks") else {
            return true;
        };
        let before = entries.len();
        entries.retain(|e| !is_ours(e, &command));
        if entries.len() == before {
            return true;
        }
        removed = true;
        !entries.is_empty()
    });
    if !removed {
        return false;
    }
    if groups.is_empty() {
        hooks.retain(|(k, _)| k != event);
    }
    if hooks.is_empty() {
        root.retain(|(k, _)| k != "hooks");
    }
    true
}

/// Reads a settings file: a missing or blank file is an empty object; anything that is not JSON
/// is an error and the file is not touched.
pub fn read(path: &Path) -> Result<(Json, bool), SettingsError> {
    use memory_scan::foreign::{self, ByteLimit, Links};
    let text = match foreign::read_to_string(path, ByteLimit::SETTINGS, Links::Follow) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return Ok((Json::Object(Vec::new()), false)),
        Err(e) => return Err(SettingsError::Read(e)),
    };
    if text.trim().is_empty() {
        return Ok((Json::Object(Vec::new()), true));
    }
    let value = serde_json::from_str(&text).map_err(|source| SettingsError::Unparsable {
        path: path.to_path_buf(),
        source,
    })?;
    Ok((value, true))
}

/// The backup `write` keeps of the file it replaces.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".memrecall-backup");
    path.with_file_name(name)
}

/// Replaces `path` with `settings` atomically (a temporary file renamed over it), keeping the
/// original's permissions and a copy of it beside it ([`backup_path`]). When `path` is a symlink
/// (a dotfiles manager's), the file it leads to is replaced, in that file's directory, and the
/// link is kept.
pub fn write(path: &Path, settings: &Json, existed: bool) -> Result<(), SettingsError> {
    use std::io::Write as _;
    let link = path;
    let failed = |source| SettingsError::Write {
        path: link.to_path_buf(),
        source,
    };
    let target = link_target(link).map_err(failed)?;
    let path = target.as_path();
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(failed)?;
    let mut text =
        serde_json::to_string_pretty(settings).map_err(|e| failed(std::io::Error::other(e)))?;
    text.push('\n');
    let permissions = if existed {
        std::fs::copy(path, backup_path(link)).map_err(failed)?;
        Some(std::fs::metadata(path).map_err(failed)?.permissions())
    } else {
        None
    };
    let mut temp_name = path.file_name().unwrap_or_default().to_os_string();
    temp_name.push(format!(".memrecall-{}.tmp", std::process::id()));
    let temp = dir.join(temp_name);
    let written = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(text.as_bytes())?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map_err(failed)
}

/// The file `path` leads to: itself, or the end of its chain of symlinks (which need not exist
/// yet). A chain longer than the kernel's own limit is an error, as it is for an open.
fn link_target(path: &Path) -> std::io::Result<PathBuf> {
    /// Linux's limit on symlinks followed in one lookup.
    const MAX_HOPS: usize = 40;
    let mut current = path.to_path_buf();
    for _ in 0..MAX_HOPS {
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let next = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) => parent.join(next),
                    None => next,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(std::io::Error::other(format!(
        "{} is a chain of more than {MAX_HOPS} symbolic links",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn writing_a_symlinked_settings_file_replaces_its_target_and_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let dotfiles = dir.path().join("dotfiles");
        std::fs::create_dir_all(&dotfiles).unwrap();
        let real = dotfiles.join("settings.json");
        std::fs::write(&real, "{\"model\": \"x\"}").unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();

        let (mut settings, existed) = read(&link).unwrap();
        merge(&mut settings, Agent::ClaudeCode, &link).unwrap();
        write(&link, &settings, existed).unwrap();

        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::read_to_string(&real)
                .unwrap()
                .contains("memrecall hook")
        );
        assert_eq!(
            std::fs::read_to_string(backup_path(&link)).unwrap(),
            "{\"model\": \"x\"}"
        );
        let leftovers: Vec<_> = std::fs::read_dir(&dotfiles)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    }

    #[cfg(unix)]
    #[test]
    fn a_settings_file_that_is_a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        crate::test_support::make_fifo(&path);
        let error = read(&path).unwrap_err().to_string();
        assert!(error.contains("named pipe"), "{error}");
    }

    fn parsed(text: &str) -> Json {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn keys_keep_their_order_through_read_and_write() {
        let text = r#"{"zeta":1,"alpha":{"b":[true,null,"s"],"a":2.5}}"#;
        assert_eq!(serde_json::to_string(&parsed(text)).unwrap(), text);
    }

    #[test]
    fn merging_twice_adds_the_entry_once() {
        let mut settings = parsed(r#"{"model":"x"}"#);
        let path = Path::new("settings.json");
        assert!(merge(&mut settings, Agent::ClaudeCode, path).unwrap());
        assert!(!merge(&mut settings, Agent::ClaudeCode, path).unwrap());
        let group = serde_json::json!([{"hooks":[
            {"type":"command","command":"memrecall hook --agent claude-code","timeout":10}
        ]}]);
        assert_eq!(
            serde_json::to_value(&settings).unwrap(),
            serde_json::json!({"model":"x","hooks":{
                "UserPromptSubmit":group,"PostToolUse":group,"Stop":group,"SessionEnd":group
            }})
        );
    }

    #[test]
    fn each_agent_installs_its_prompt_tool_result_and_end_events() {
        assert_eq!(
            installed_events(Agent::ClaudeCode),
            ["UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"]
        );
        assert_eq!(
            installed_events(Agent::QwenCode),
            ["UserPromptSubmit", "Stop", "SessionEnd"]
        );
        assert_eq!(
            installed_events(Agent::GeminiCli),
            ["BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"]
        );
        assert_eq!(
            installed_events(Agent::Codex),
            ["UserPromptSubmit", "PostToolUse", "Stop"]
        );
    }

    #[test]
    fn a_file_whose_shape_is_wrong_for_one_event_is_not_changed_for_the_others() {
        let mut settings = parsed(r#"{"hooks":{"Stop":{}}}"#);
        let original = settings.clone();
        let error = merge(&mut settings, Agent::Codex, Path::new("hooks.json")).unwrap_err();
        assert!(error.to_string().contains("hooks.Stop"), "{error}");
        assert_eq!(settings, original);
    }

    #[test]
    fn removing_after_merging_gives_back_the_original() {
        let original = parsed(
            r#"{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"other"}]}],"SessionStart":[]},"x":1}"#,
        );
        let mut settings = original.clone();
        merge(&mut settings, Agent::Codex, Path::new("hooks.json")).unwrap();
        assert!(remove(&mut settings, Agent::Codex));
        assert_eq!(settings, original);
        assert!(!remove(&mut settings, Agent::Codex));
    }

    #[test]
    fn gemini_cli_uses_before_agent_and_milliseconds() {
        let value = serde_json::to_value(snippet(Agent::GeminiCli)).unwrap();
        let entry = &value["hooks"]["BeforeAgent"][0]["hooks"][0];
        assert_eq!(entry["timeout"], 10_000);
        assert_eq!(entry["command"], "memrecall hook --agent gemini-cli");
    }

    #[test]
    fn hooks_that_are_not_an_object_are_refused() {
        let mut settings = parsed(r#"{"hooks":[]}"#);
        let error = merge(&mut settings, Agent::QwenCode, Path::new("s.json")).unwrap_err();
        assert!(
            error.to_string().contains("`hooks` is not an object"),
            "{error}"
        );
    }

    #[test]
    fn project_settings_live_in_the_agents_dot_directory() {
        let env = Environment::default();
        let path = settings_path(Agent::ClaudeCode, Some(Path::new("/p")), &env).unwrap();
        assert_eq!(path, Path::new("/p/.claude/settings.json"));
        let path = settings_path(Agent::Codex, Some(Path::new("/p")), &env).unwrap();
        assert_eq!(path, Path::new("/p/.codex/hooks.json"));
    }
}
