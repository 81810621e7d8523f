//! One agent's conventions as one value: an agent is added by writing its module's
//! `CONVENTIONS` (every field must be given) and its arm of
//! [`Agent::conventions`](crate::Agent::conventions), whose `match` names every agent, so an
//! agent cannot be half-added.

use std::time::Duration;

use crate::Layout;

/// What one agent does that a tool reading or feeding its memory must follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conventions {
    /// The name used on the command line and in logs (`claude-code`).
    pub name: &'static str,
    /// The command the agent is started with (`claude`).
    pub command: &'static str,
    /// The layout a hook reads when none is given: the agent's own where it keeps memory,
    /// memrecall's otherwise.
    pub default_layout: Layout,
    /// The agent's directory, in the user's home and in a project (`.claude`).
    pub dot_dir: &'static str,
    /// The variable that moves the agent's user directory away from `~/<dot_dir>`, if any.
    pub home_variable: Option<&'static str>,
    /// The file in that directory that holds the hook settings.
    pub settings_file: &'static str,
    /// Whether the agent reads its settings file as JSON with comments.
    pub settings_accept_comments: bool,
    /// Whether a hook entry carries a `name` (shown by the agent in its hook list).
    pub hook_entry_named: bool,
    /// The hook's timeout, in the unit the agent's current version reads.
    pub hook_timeout: HookTimeout,
    /// The most the agent allows for the session-end hook's timeout, when it allows less there
    /// than [`hook_timeout`](Self::hook_timeout): install writes this much on that event, and
    /// `doctor` names an entry above it.
    pub session_end_timeout_limit: Option<HookTimeout>,
    /// The hook events, by delivery point.
    pub events: HookEvents,
    /// The stdin fields of the prompt event that hold the query, the first present one wins.
    pub prompt_fields: &'static [&'static str],
    /// Whether the prompt event is fired again before each tool-result continuation: then an
    /// empty prompt is the tool-result point and a repeated query may be a continuation.
    pub prompt_event_continues: bool,
    /// What stdout carries when there is nothing to add.
    pub nothing: &'static str,
    /// What the agent does with the prompt when its hook command cannot start (the shell's
    /// "command not found", status 127, or "permission denied", 126).
    pub command_cannot_run: CannotRun,
    /// The shell the agent hands a hook command to on Windows (on Linux and macOS every agent
    /// runs it with `bash -c` or `sh -c`).
    pub windows_shell: CommandShell,
    /// Where the agent keeps the MCP servers a user registered with its own `mcp add`.
    pub mcp_registrations: McpRegistrations,
    /// The packages the agent installs itself (plugins, extensions), when it has any.
    pub packages: Option<PackageStore>,
    /// Where the agent records the hooks the user trusts, for an agent that runs no other.
    pub hook_trust: Option<HookTrust>,
    /// The file in the agent's directory where it notes a plugin's MCP server that failed to
    /// start, and keeps that server off for a while, when it keeps one.
    pub mcp_failure_cache: Option<&'static str>,
}

/// Where an agent keeps the MCP servers a user registered with its own `mcp add` command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpRegistrations {
    /// `mcpServers.<name>`, or a project's under `projects.<dir>`, in a JSON file of this name
    /// in the agent's directory or the home directory (Claude Code's `.claude.json`).
    JsonFile(&'static str),
    /// `mcpServers.<name>` in the agent's settings file (Qwen Code, Gemini CLI).
    SettingsFile,
    /// `mcp_servers.<name>` in a TOML file of this name in the agent's directory (Codex's
    /// `config.toml`).
    TomlFile(&'static str),
}

/// How an agent keeps the packages it installs itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PackageStore {
    /// Plugins: listed in `<dir>/plugins/installed_plugins.json` (`<dir>` the agent's own),
    /// each with its `installPath`, and enabled under `enabledPlugins` in the user's and the
    /// project's settings (Claude Code).
    Plugins,
    /// Extensions: the directories below `extensions/` in the agent's directory that hold the
    /// manifest `manifest`, enabled by the path rules of `extensions/extension-enablement.json`
    /// (Gemini CLI), or first by `extension-store/state.json` when `activation_store` (Qwen
    /// Code).
    Extensions {
        /// The manifest file an extension's directory holds.
        manifest: &'static str,
        /// Whether the agent's extension store decides first.
        activation_store: bool,
    },
}

impl PackageStore {
    /// What the agent calls one package: `plugin` or `extension`.
    pub const fn kind(self) -> &'static str {
        match self {
            Self::Plugins => "plugin",
            Self::Extensions { .. } => "extension",
        }
    }

    /// The agent's own command (started with `command`) that takes the package `name` out.
    pub fn uninstall_command(self, command: &str, name: &str) -> String {
        format!("{command} {} uninstall {name}", self.subcommand())
    }

    /// The agent's own command (started with `command`) that enables the package `name`.
    pub fn enable_command(self, command: &str, name: &str) -> String {
        format!("{command} {} enable {name}", self.subcommand())
    }

    const fn subcommand(self) -> &'static str {
        match self {
            Self::Plugins => "plugin",
            Self::Extensions { .. } => "extensions",
        }
    }
}

/// Where an agent that runs only the hooks the user trusts records that trust.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookTrust {
    /// The TOML file in the agent's directory whose `hooks.state` holds a `trusted_hash` for
    /// each trusted hook.
    pub file: &'static str,
    /// What the user does before the agent runs the hook, said after every install.
    pub note: &'static str,
}

/// A hook's timeout in the unit the agent reads it in, so that the number written into its
/// settings is never read in another unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookTimeout {
    /// Whole seconds (Claude Code, Qwen Code from 0.24.4, Codex).
    Seconds(u16),
    /// Milliseconds (Gemini CLI).
    Milliseconds(u32),
}

impl HookTimeout {
    /// How long the agent waits for the hook.
    pub const fn duration(self) -> Duration {
        match self {
            Self::Seconds(seconds) => Duration::from_secs(seconds as u64),
            Self::Milliseconds(milliseconds) => Duration::from_millis(milliseconds as u64),
        }
    }

    /// The number the agent's settings hold for it: seconds or milliseconds, as the agent reads.
    pub const fn setting(self) -> u64 {
        match self {
            Self::Seconds(seconds) => seconds as u64,
            Self::Milliseconds(milliseconds) => milliseconds as u64,
        }
    }

    /// The shorter of two timeouts (`self` when they are as long).
    #[must_use]
    pub fn shorter(self, other: Self) -> Self {
        if other.duration() < self.duration() {
            other
        } else {
            self
        }
    }
}

/// The shell a hook command is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandShell {
    /// `sh` or `bash`: every agent's on Linux and macOS; on Windows Claude Code's, which runs
    /// hooks with Git Bash.
    Posix,
    /// `cmd.exe`: on Windows Codex's (`%COMSPEC% /C`) and Qwen Code's (`cmd.exe /d /s /c`, or
    /// Git Bash's `bash -c` when it was started from Git Bash), so the command is written in a
    /// form both read alike.
    Cmd,
    /// PowerShell: on Windows Gemini CLI's (`powershell.exe -NoProfile -Command`).
    PowerShell,
}

/// What an agent does with the prompt when its hook command cannot start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CannotRun {
    /// It reports the failed hook and sends the prompt on.
    GoesOn,
    /// It stops the prompt: the installed command is guarded, so that a missing binary is
    /// skipped instead ([`settings::hook_command`](crate::settings::hook_command)).
    BlocksPrompt,
}

/// An agent's hook event names, by delivery point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HookEvents {
    /// The initial point: the prompt event.
    pub prompt: &'static str,
    /// The tool-result point.
    pub tool_result: &'static str,
    /// The turn's end.
    pub turn_end: &'static str,
    /// The session's end, for an agent that has one.
    pub session_end: Option<&'static str>,
}
