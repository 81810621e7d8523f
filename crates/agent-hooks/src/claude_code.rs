//! Claude Code: its project memory is `<config>/projects/<dir>/memory` (see [`crate::layout`]
//! for how `<dir>` is named and what overrides it); it keeps no user memory of its own. Its hook
//! settings are `$CLAUDE_CONFIG_DIR/settings.json` or `~/.claude/settings.json` (or the
//! project's `.claude/settings.json`), timeouts in seconds; its events are `UserPromptSubmit`
//! (`prompt`), `PostToolUse`, `Stop` and `SessionEnd`.

use crate::Layout;
use crate::conventions::{
    CannotRun, CommandShell, Conventions, HookEvents, HookTimeout, McpRegistrations, PackageStore,
};

/// Claude Code's conventions.
pub const CONVENTIONS: Conventions = Conventions {
    name: "claude-code",
    command: "claude",
    default_layout: Layout::ClaudeCode,
    dot_dir: ".claude",
    home_variable: Some("CLAUDE_CONFIG_DIR"),
    settings_file: "settings.json",
    settings_accept_comments: false,
    hook_entry_named: false,
    hook_timeout: HookTimeout::Seconds(10),
    session_end_timeout_limit: None,
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
    windows_shell: CommandShell::Posix,
    mcp_registrations: McpRegistrations::JsonFile(".claude.json"),
    packages: Some(PackageStore::Plugins),
    hook_trust: None,
    mcp_failure_cache: Some(MCP_FAILURE_CACHE),
};

/// The file in Claude Code's configuration directory where it notes a plugin's MCP server that
/// failed to start (2.1.328: a stdio server whose command is not found). It does not try that
/// server again while the entry is younger than its `ttlMs`, or [`MCP_FAILURE_KEPT`] without
/// one, whatever the server's command has become meanwhile; removing the entry (or the file)
/// makes the next start try it.
pub const MCP_FAILURE_CACHE: &str = "mcp-needs-auth-cache.json";

/// The key of memrecall's plugin server in [`MCP_FAILURE_CACHE`]: `plugin:<plugin>:<server>`.
pub const MEMRECALL_PLUGIN_SERVER: &str = "plugin:memrecall:memrecall";

/// How long an entry of [`MCP_FAILURE_CACHE`] without a `ttlMs` keeps a plugin's stdio server
/// from starting: measured with 2.1.328, an entry 14 minutes old kept it off and one 16 minutes
/// old was tried again (and removed once the server started).
pub const MCP_FAILURE_KEPT: std::time::Duration = std::time::Duration::from_mins(15);

/// Claude Code cuts a project directory name longer than this many UTF-16 units.
pub const MAX_DIR_NAME: usize = 200;
