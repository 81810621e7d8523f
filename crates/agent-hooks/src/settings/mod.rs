//! Where each agent keeps its hook settings, the entry memrecall adds there, and merging it in
//! and out of a settings file without disturbing anything else in it.
//!
//! | agent | user file | project file (`--project DIR`) | timeout unit | comments |
//! |---|---|---|---|---|
//! | Claude Code | `$CLAUDE_CONFIG_DIR/settings.json` or `~/.claude/settings.json` | `DIR/.claude/settings.json` | seconds | no |
//! | Qwen Code | `$QWEN_HOME/settings.json` or `~/.qwen/settings.json` | `DIR/.qwen/settings.json` | seconds (0.24.4; values of 1000 or more are read as legacy milliseconds, with a warning) | no |
//! | Gemini CLI | `~/.gemini/settings.json` | `DIR/.gemini/settings.json` | milliseconds | yes |
//! | Codex | `$CODEX_HOME/hooks.json` or `~/.codex/hooks.json` | `DIR/.codex/hooks.json` | seconds | no |
//!
//! The entry is one group `{"hooks":[{"type":"command","command":"/abs/memrecall hook --agent
//! A","timeout":…}]}` under each event the hook serves ([`installed_events`]): the prompt event,
//! the tool-result event, the turn's end and the session's end, so that the server's recall
//! reaches the tool-result point and every turn ends (10 seconds: the hook answers within the
//! 100 ms ceiling plus process time, the margin is for a cold disk; 3 on Codex's session end,
//! the most it allows there, [`event_timeout`]). The command names the
//! binary by its absolute path ([`hook_command`]): an agent whose `PATH` lacks memrecall would
//! otherwise never run it, and say so nowhere. For Gemini CLI, which stops the prompt when the
//! command cannot start, the command is guarded on Linux and macOS (`command -v P >/dev/null
//! 2>&1 && exec P hook … || true`, [`hook_command_in`]): a binary deleted or moved since install
//! costs the prompt nothing. Both forms are recognised as memrecall's ([`is_memrecall_hook`]).
//!
//! A file is edited in place ([`Document`]): the user's comments (where the agent accepts them),
//! key order, indentation and blank lines stay as they were, so a merged file differs from the
//! original only by the entries. What `install` replaced is kept ([`record`]) so that
//! `uninstall` gives back the original bytes ([`Install`], [`uninstall`]).

mod command;
mod document;
pub(crate) mod file;
pub mod record;
mod transaction;

use std::path::{Path, PathBuf};

pub use command::{
    command_caveat, hook_command, hook_command_in, is_guarded, is_memrecall_hook, layout_of,
    program_of, shell_quoted,
};
pub use document::Document;
pub use file::{backup_path, read, remove_created, write};
pub use transaction::{Install, Installed, Uninstalled, agent_of, installed_files, uninstall};

use super::conventions::HookTimeout;
use super::{Agent, Environment, hook_io};

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
    /// The file is not JSON (or, for an agent that accepts them, JSON with comments); it is left
    /// untouched.
    #[error(
        "{path} is not valid {what} ({reason}); it was left untouched: fix it or add the entry by hand"
    )]
    Unparsable {
        /// The file.
        path: PathBuf,
        /// What the agent reads: JSON, or JSON with comments.
        what: &'static str,
        /// The parse error, with its line and column.
        reason: String,
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
    let conventions = agent.conventions();
    let (file, dot_dir) = (conventions.settings_file, conventions.dot_dir);
    if let Some(project) = project {
        return Ok(project.join(dot_dir).join(file));
    }
    let moved = conventions.home_variable.and_then(|name| env.path(name));
    let dir = match moved {
        Some(dir) => dir,
        None => env.home().ok_or(SettingsError::NoHome)?.join(dot_dir),
    };
    Ok(dir.join(file))
}

/// Whether the agent reads its settings file as JSON with comments.
pub const fn accepts_comments(agent: Agent) -> bool {
    agent.conventions().settings_accept_comments
}

/// The hook's timeout, in the unit the agent's current version reads: seconds for Claude Code,
/// Qwen Code (0.24.4 reads seconds) and Codex, milliseconds for Gemini CLI.
pub const fn hook_timeout(agent: Agent) -> HookTimeout {
    agent.conventions().hook_timeout
}

pub use super::conventions::CommandShell;

/// The timeout install writes on `event`: [`hook_timeout`], or less on the session's end where
/// the agent allows less there (Codex: 3 seconds).
pub fn event_timeout(agent: Agent, event: &str) -> HookTimeout {
    let conventions = agent.conventions();
    match conventions.session_end_timeout_limit {
        Some(limit) if conventions.events.session_end == Some(event) => {
            limit.shorter(conventions.hook_timeout)
        }
        _ => conventions.hook_timeout,
    }
}

/// The events `install` registers the hook for: prompt, tool result (when it is another
/// event), turn end and session end.
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

/// The settings snippet `install` merges, as the text of a new settings file.
pub fn snippet(agent: Agent, command: &str) -> String {
    let mut document = Document::empty(agent);
    // A new document has the right shape for every event.
    let _ = document.merge(agent, command);
    document.text()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_agent_installs_its_prompt_tool_result_and_end_events() {
        let full = ["UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"];
        assert_eq!(installed_events(Agent::ClaudeCode), full);
        assert_eq!(installed_events(Agent::QwenCode), full);
        assert_eq!(
            installed_events(Agent::GeminiCli),
            ["BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"]
        );
        assert_eq!(installed_events(Agent::Codex), full);
    }

    #[test]
    fn timeouts_are_seconds_except_for_gemini_cli() {
        assert_eq!(hook_timeout(Agent::ClaudeCode), HookTimeout::Seconds(10));
        assert_eq!(hook_timeout(Agent::QwenCode), HookTimeout::Seconds(10));
        assert_eq!(hook_timeout(Agent::Codex), HookTimeout::Seconds(10));
        assert_eq!(
            hook_timeout(Agent::GeminiCli),
            HookTimeout::Milliseconds(10_000)
        );
    }

    #[test]
    fn codex_gets_its_three_second_limit_on_the_session_end_only() {
        assert_eq!(
            event_timeout(Agent::Codex, "SessionEnd"),
            HookTimeout::Seconds(3)
        );
        assert_eq!(
            event_timeout(Agent::Codex, "UserPromptSubmit"),
            HookTimeout::Seconds(10)
        );
        assert_eq!(
            event_timeout(Agent::ClaudeCode, "SessionEnd"),
            HookTimeout::Seconds(10)
        );
        assert_eq!(
            event_timeout(Agent::GeminiCli, "SessionEnd"),
            HookTimeout::Milliseconds(10_000)
        );
    }

    #[test]
    fn every_agents_settings_get_ten_seconds_in_that_agents_unit() {
        let written = |agent: Agent| {
            let mut document = Document::empty(agent);
            document.merge(agent, "memrecall hook").unwrap();
            let value: serde_json::Value = serde_json::from_str(&document.text()).unwrap();
            let prompt = agent.conventions().events.prompt;
            value["hooks"][prompt][0]["hooks"][0]["timeout"].clone()
        };
        assert_eq!(written(Agent::ClaudeCode), 10);
        assert_eq!(written(Agent::QwenCode), 10);
        assert_eq!(written(Agent::Codex), 10);
        assert_eq!(written(Agent::GeminiCli), 10_000);
        for agent in Agent::ALL {
            assert_eq!(
                hook_timeout(agent).duration(),
                std::time::Duration::from_secs(10)
            );
        }
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
