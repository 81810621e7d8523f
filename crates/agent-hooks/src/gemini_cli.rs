//! Gemini CLI: keeps no memory folders of its own, so a hook reads memrecall's layout; its hook
//! settings are `~/.gemini/settings.json` (or the project's `.gemini/settings.json`), JSON with
//! comments, timeouts in milliseconds, each entry named; its events are `BeforeAgent`,
//! `AfterTool`, `AfterAgent` and `SessionEnd`, and it takes JSON only on stdout (`{}` when there
//! is nothing to add).

use crate::Layout;
use crate::conventions::{Conventions, HookEvents};

/// Gemini CLI's conventions.
pub const CONVENTIONS: Conventions = Conventions {
    name: "gemini-cli",
    command: "gemini",
    default_layout: Layout::Memrecall,
    dot_dir: ".gemini",
    home_variable: None,
    settings_file: "settings.json",
    settings_accept_comments: true,
    hook_entry_named: true,
    hook_timeout: 10_000,
    events: HookEvents {
        prompt: "BeforeAgent",
        tool_result: "AfterTool",
        turn_end: "AfterAgent",
        session_end: Some("SessionEnd"),
    },
    prompt_fields: &["prompt"],
    prompt_event_continues: false,
    nothing: "{}\n",
};
