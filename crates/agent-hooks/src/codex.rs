//! Codex: keeps no memory folders of its own, so a hook reads memrecall's layout; its hooks are
//! in `$CODEX_HOME/hooks.json` or `~/.codex/hooks.json` (or the project's `.codex/hooks.json`),
//! timeouts in seconds; its events are Claude Code's: `UserPromptSubmit` (`prompt`),
//! `PostToolUse`, `Stop` and `SessionEnd`. Codex 0.169.0 and 0.171.0 clamp a `SessionEnd` timeout
//! above 3 seconds to 3 and warn about it on every run, so that entry gets 3. It runs only the
//! hooks the user trusted, keeping a `trusted_hash` for each under `hooks.state` in its
//! `config.toml` ([`TRUST_NOTE`]), where it also keeps its MCP servers (`mcp_servers.<name>`).

use crate::Layout;
use crate::conventions::{
    CannotRun, CommandShell, Conventions, HookEvents, HookTimeout, HookTrust, McpRegistrations,
};

/// What Codex needs before it runs a hook, said after every Codex install.
pub const TRUST_NOTE: &str = "Codex runs a hook only once you have trusted it: run `codex` in a terminal and trust the memrecall hook there (Codex then keeps a `trusted_hash` for it under `hooks.state`). Until then `codex exec` skips the hook without a word.";

/// Codex's conventions.
pub const CONVENTIONS: Conventions = Conventions {
    name: "codex",
    command: "codex",
    default_layout: Layout::Memrecall,
    dot_dir: ".codex",
    home_variable: Some("CODEX_HOME"),
    settings_file: "hooks.json",
    settings_accept_comments: false,
    hook_entry_named: false,
    hook_timeout: HookTimeout::Seconds(10),
    session_end_timeout_limit: Some(HookTimeout::Seconds(3)),
    events: HookEvents {
        prompt: "UserPromptSubmit",
        tool_result: "PostToolUse",
        turn_end: "Stop",
        session_end: Some("SessionEnd"),
    },
    prompt_fields: &["prompt"],
    prompt_event_continues: false,
    nothing: "",
    command_cannot_run: CannotRun::GoesOn,
    windows_shell: CommandShell::Cmd,
    mcp_registrations: McpRegistrations::TomlFile("config.toml"),
    packages: None,
    hook_trust: Some(HookTrust {
        file: "config.toml",
        note: TRUST_NOTE,
    }),
    mcp_failure_cache: None,
};
