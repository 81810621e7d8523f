#![forbid(unsafe_code)]
//! The coding agents a memory hook serves, and what each one's hooks exchange: the JSON event an
//! agent writes to the hook's stdin, parsed into a delivery point ([`hook_io::parse`]), and the
//! stdout that adds context to the model's input ([`hook_io::render`]).
//!
//! It knows nothing of memory trees, recall or servers: it only translates one agent's hook
//! formats, so any tool that feeds an agent context from a hook can use it.
//!
//! # Example
//!
//! ```
//! use agent_hooks::Agent;
//! use agent_hooks::hook_io::{self, HookEvent};
//!
//! let stdin = r#"{"session_id":"s1","cwd":"/work/shop","hook_event_name":"UserPromptSubmit",
//!                 "prompt":"how do we roll back a release?"}"#;
//! let input = hook_io::parse(Agent::ClaudeCode, stdin)?;
//! assert!(matches!(input.event, HookEvent::Prompt { ref query, .. } if query.contains("roll back")));
//!
//! let stdout = hook_io::render(Agent::ClaudeCode, &input.event_name, "## Relevant memory\n…");
//! assert!(stdout.starts_with(r#"{"hookSpecificOutput":"#));
//! # Ok::<(), hook_io::HookInputError>(())
//! ```

pub mod hook_io;

use serde::{Deserialize, Serialize};

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

    /// The name used on the command line and in logs.
    pub const fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::QwenCode => "qwen-code",
            Agent::GeminiCli => "gemini-cli",
            Agent::Codex => "codex",
        }
    }
}
