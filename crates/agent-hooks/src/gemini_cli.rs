//! Gemini CLI: keeps no memory folders of its own, so a hook reads memrecall's layout; its hook
//! settings are `~/.gemini/settings.json` (or the project's `.gemini/settings.json`), JSON with
//! comments, timeouts in milliseconds, each entry named; its events are `BeforeAgent`,
//! `AfterTool`, `AfterAgent` and `SessionEnd`, and it takes JSON only on stdout (`{}` when there
//! is nothing to add). Gemini CLI 0.61.0 stops the prompt when a `BeforeAgent` command exits
//! with a status other than 0 or 1 and prints anything: the shell's "command not found" (127) or
//! "permission denied" (126) for a missing or deleted binary is taken as the reason to block.
//! A binary killed by a signal, or by Gemini CLI at the timeout, lets the prompt go on. It runs
//! hooks with `bash -c`, and on Windows with PowerShell.

use crate::Layout;
use crate::conventions::{
    CannotRun, CommandShell, Conventions, HookEvents, HookTimeout, McpRegistrations, PackageStore,
};

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
    hook_timeout: HookTimeout::Milliseconds(10_000),
    session_end_timeout_limit: None,
    events: HookEvents {
        prompt: "BeforeAgent",
        tool_result: "AfterTool",
        turn_end: "AfterAgent",
        session_end: Some("SessionEnd"),
    },
    prompt_fields: &["prompt"],
    prompt_event_continues: false,
    nothing: "{}\n",
    command_cannot_run: CannotRun::BlocksPrompt,
    windows_shell: CommandShell::PowerShell,
    mcp_registrations: McpRegistrations::SettingsFile,
    packages: Some(PackageStore::Extensions {
        manifest: "gemini-extension.json",
        activation_store: false,
    }),
    hook_trust: None,
    mcp_failure_cache: None,
};
