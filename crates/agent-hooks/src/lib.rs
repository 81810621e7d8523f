#![forbid(unsafe_code)]
//! The coding agents' conventions, for any tool that reads or feeds an agent's memory: where each
//! agent keeps its memory ([`layout::resolve`]: the project and user memory roots for a working
//! directory, and why), how a project's git root is found ([`git`]), where its hook settings
//! live and how memrecall's hook entry is installed in them and taken out again ([`settings`]),
//! what its hooks exchange (the JSON event an agent writes to the hook's stdin, parsed into a
//! delivery point by [`hook_io::parse`], and the stdout that adds context to the model's input,
//! [`hook_io::render`]), how much context it accepts ([`context::budget`]), which agents run
//! memrecall's hook and so which layouts hold the notes they get ([`installed`]), and what the
//! agents' own files say of memrecall: its MCP registrations, plugins and extensions, trusted
//! hooks ([`agent_files`]).
//!
//! It knows nothing of recall or servers: it translates an agent's world into memory roots and a
//! query, and a delivery back into the agent's output shape.
//!
//! # Example
//!
//! ```
//! use std::path::Path;
//!
//! use agent_hooks::hook_io::{self, HookEvent};
//! use agent_hooks::{Agent, Environment, settings};
//!
//! let stdin = r#"{"session_id":"s1","cwd":"/work/shop","hook_event_name":"UserPromptSubmit",
//!                 "prompt":"how do we roll back a release?"}"#;
//! let input = hook_io::parse(Agent::ClaudeCode, stdin)?;
//! assert!(matches!(input.event, HookEvent::Prompt { ref query, .. } if query.contains("roll back")));
//!
//! let stdout = hook_io::render(Agent::ClaudeCode, &input.event_name, "## Relevant memory\n…");
//! assert!(stdout.starts_with(r#"{"hookSpecificOutput":"#));
//!
//! // Each agent's conventions are one value, in the agent's own module.
//! let env = Environment::from_pairs([("HOME", "/home/ana")]);
//! let file = settings::settings_path(Agent::GeminiCli, None, &env)?;
//! assert_eq!(file, Path::new("/home/ana/.gemini/settings.json"));
//! assert_eq!(Agent::GeminiCli.conventions().events.prompt, "BeforeAgent");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod agent_files;
pub mod claude_code;
pub mod codex;
pub mod context;
pub mod conventions;
mod environment;
pub mod files;
pub mod gemini_cli;
pub mod git;
pub mod hook_io;
pub mod installed;
pub mod layout;
pub mod memory_uri;
pub mod paths;
pub mod qwen_code;
pub mod settings;
#[cfg(test)]
mod test_support;

use serde::{Deserialize, Serialize};

pub use conventions::{Conventions, HookTimeout};
pub use environment::{Environment, Platform};

/// A coding agent that can run a command before each prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    /// Claude Code.
    ClaudeCode,
    /// Qwen Code.
    QwenCode,
    /// Gemini CLI.
    GeminiCli,
    /// Codex CLI.
    Codex,
}

impl Agent {
    /// Every agent.
    pub const ALL: [Agent; 4] = [
        Agent::ClaudeCode,
        Agent::QwenCode,
        Agent::GeminiCli,
        Agent::Codex,
    ];

    /// The agent's conventions, each agent's in its own module: the one place an agent is
    /// matched to them, naming every agent (no catch-all arm), so that adding an agent asks for
    /// all of its conventions.
    pub const fn conventions(self) -> &'static Conventions {
        match self {
            Agent::ClaudeCode => &claude_code::CONVENTIONS,
            Agent::QwenCode => &qwen_code::CONVENTIONS,
            Agent::GeminiCli => &gemini_cli::CONVENTIONS,
            Agent::Codex => &codex::CONVENTIONS,
        }
    }

    /// The name used on the command line and in logs.
    pub const fn as_str(self) -> &'static str {
        self.conventions().name
    }
}

/// The layout a hook reads when none is given: the agent's own memory where it keeps memory,
/// memrecall's tree otherwise.
pub const fn default_layout(agent: Agent) -> Layout {
    agent.conventions().default_layout
}

/// Where memory trees live: an agent's own layout or memrecall's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// `~/.claude/projects/<dir>/memory/`, and memrecall's user root (the agent keeps no user
    /// memory of its own).
    ClaudeCode,
    /// `~/.qwen/projects/<dir>/memory/` and `~/.qwen/memories/`.
    QwenCode,
    /// `$MEMRECALL_HOME/projects/<dir>/memory/` and `$MEMRECALL_HOME/memories/`.
    Memrecall,
}

impl Layout {
    /// The name used on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            Layout::ClaudeCode => "claude-code",
            Layout::QwenCode => "qwen-code",
            Layout::Memrecall => "memrecall",
        }
    }
}
