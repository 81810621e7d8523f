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
//! `uninstall` gives back the original bytes.

mod document;
pub(crate) mod file;
pub mod record;

use std::path::{Path, PathBuf};

pub use document::Document;
pub use file::{backup_path, read, remove_created, write};

use super::conventions::{CannotRun, HookTimeout};
use super::{Agent, Environment, Layout, hook_io, paths};

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

impl CommandShell {
    /// The shell `agent` runs hook commands with on the platform this binary is built for: its
    /// [`Conventions::windows_shell`](crate::Conventions::windows_shell) on Windows, a POSIX
    /// shell elsewhere.
    pub const fn of(agent: Agent) -> Self {
        if cfg!(windows) {
            agent.conventions().windows_shell
        } else {
            Self::Posix
        }
    }
}

/// The command an agent runs: `program` (written for the shell the agent runs it with,
/// [`CommandShell::of`]) with the hook's arguments, and `--layout` when one is chosen; for an
/// agent that stops the prompt when the command cannot start, guarded (see
/// [`hook_command_in`]).
pub fn hook_command(agent: Agent, program: &Path, layout: Option<Layout>) -> String {
    hook_command_in(agent, program, layout, CommandShell::of(agent))
}

/// [`hook_command`] for `shell`. The program is named as [`paths::command_path`] writes it (on
/// Windows with `/` for `\`), as it is when every character is one no shell treats specially
/// (then cmd, Git Bash and PowerShell all read it alike), else quoted for `shell`: in single
/// quotes for a POSIX shell, in double quotes for `cmd.exe` (a Windows name holds no `"`), and
/// called with `&` on a single-quoted string in PowerShell.
///
/// For an agent that blocks the prompt when its hook cannot run (Gemini CLI), a POSIX shell gets
/// `command -v P >/dev/null 2>&1 && exec P hook … || true`: a binary that is not there (not on
/// `PATH`, deleted; in bash, which Gemini CLI runs hooks with, also one that is not executable)
/// is skipped with status 0 and nothing printed, and one that is there replaces the shell
/// (`exec`), so that a signal or the agent's timeout reaches the binary itself and no shell is
/// left holding the output.
pub fn hook_command_in(
    agent: Agent,
    program: &Path,
    layout: Option<Layout>,
    shell: CommandShell,
) -> String {
    let word = shell_word(program, shell);
    let mut command = format!("{word} {}", hook_arguments(agent));
    if let Some(layout) = layout {
        command.push_str(" --layout ");
        command.push_str(layout.as_str());
    }
    if shell == CommandShell::Posix
        && agent.conventions().command_cannot_run == CannotRun::BlocksPrompt
    {
        format!("command -v {word}{GUARD_TEST} {command}{GUARD_END}")
    } else {
        command
    }
}

/// Why the command [`hook_command`] writes for `agent` may not start, when there is a reason
/// to say: `cmd.exe` is handed the command as one argument quoted by the C runtime's rules
/// (Codex through Rust's standard library, Qwen Code through Node.js), which turns each `"`
/// into `\"`, so a program whose path needs quotes there is not found.
pub fn command_caveat(agent: Agent, program: &Path) -> Option<String> {
    let shell = CommandShell::of(agent);
    (shell == CommandShell::Cmd && !is_plain(&paths::command_path(program))).then(|| {
        format!(
            "warning: {} runs hooks with cmd.exe, which cannot start a program whose path needs quotes ({}); name a copy of memrecall in a folder whose path has only letters, digits and . _ - + : with --command",
            agent.as_str(),
            program.display()
        )
    })
}

/// What stands between the guard's program and the hook command it runs.
const GUARD_TEST: &str = " >/dev/null 2>&1 && exec";
/// What ends a guarded command.
const GUARD_END: &str = " || true";

/// The hook command inside a guarded one ([`hook_command_in`]), or `command` itself.
fn unguarded(command: &str) -> &str {
    let inner = command
        .strip_prefix("command -v ")
        .and_then(|rest| rest.strip_suffix(GUARD_END))
        .and_then(|rest| rest.split_once(&format!("{GUARD_TEST} ")))
        .filter(|(word, inner)| {
            inner
                .strip_prefix(word)
                .is_some_and(|after| after.starts_with(' '))
        });
    inner.map_or(command, |(_, inner)| inner)
}

/// Whether `command` carries the guard that skips a binary that cannot run.
pub fn is_guarded(command: &str) -> bool {
    unguarded(command) != command
}

/// `command` without a trailing `--layout NAME` naming a known layout.
fn without_layout(command: &str) -> &str {
    [Layout::ClaudeCode, Layout::QwenCode, Layout::Memrecall]
        .iter()
        .find_map(|layout| command.strip_suffix(&format!(" --layout {}", layout.as_str())))
        .unwrap_or(command)
}

/// The layout memrecall's hook `command` for `agent` reads: the `--layout` it names, else the
/// hook's default for the agent ([`crate::default_layout`]).
pub fn layout_of(command: &str, agent: Agent) -> Layout {
    let command = unguarded(command);
    [Layout::ClaudeCode, Layout::QwenCode, Layout::Memrecall]
        .into_iter()
        .find(|layout| command.ends_with(&format!(" --layout {}", layout.as_str())))
        .unwrap_or(crate::default_layout(agent))
}

fn hook_arguments(agent: Agent) -> String {
    format!("hook --agent {}", agent.as_str())
}

/// Whether `text` holds only characters no shell (POSIX, `cmd.exe`, PowerShell) treats
/// specially, so that it is one word as it is in each.
fn is_plain(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:".contains(c))
}

/// `program` as one word of `shell` (see [`hook_command_in`]).
fn shell_word(program: &Path, shell: CommandShell) -> String {
    let text = paths::command_path(program);
    match shell {
        CommandShell::Posix => posix_word(&text),
        _ if is_plain(&text) => text,
        CommandShell::Cmd => format!("\"{text}\""),
        CommandShell::PowerShell => format!("& '{}'", text.replace('\'', "''")),
    }
}

/// `path` as one POSIX shell word: as it is when it holds only characters a POSIX shell reads
/// as themselves, else in single quotes.
pub fn shell_quoted(path: &Path) -> String {
    posix_word(&path.to_string_lossy())
}

fn posix_word(text: &str) -> String {
    // A POSIX shell also reads `@ % , =` as themselves.
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The program a hook command runs: its first shell word (inside the guard, when guarded),
/// unquoted, in any of the forms [`hook_command_in`] writes.
pub fn program_of(command: &str) -> String {
    let command = unguarded(command);
    if let Some(rest) = command.strip_prefix("& '") {
        return single_quoted(rest, "'");
    }
    if let Some(rest) = command.strip_prefix('\'') {
        return single_quoted(rest, r"\''");
    }
    if let Some(rest) = command.strip_prefix('"') {
        return rest
            .split_once('"')
            .map_or(rest, |(program, _)| program)
            .to_owned();
    }
    command
        .split_once(' ')
        .map_or(command, |(program, _)| program)
        .to_owned()
}

/// The text of a single-quoted word up to its closing quote, where a quote followed by `escape`
/// stands for a `'` in the word (`\''` in a POSIX shell, `'` in PowerShell).
fn single_quoted(mut rest: &str, escape: &str) -> String {
    let mut program = String::new();
    while let Some((quoted, after)) = rest.split_once('\'') {
        program.push_str(quoted);
        match after.strip_prefix(escape) {
            Some(more) => {
                program.push('\'');
                rest = more;
            }
            None => return program,
        }
    }
    program.push_str(rest);
    program
}

/// Whether `command` is memrecall's hook for `agent` (with or without `--layout`, guarded or
/// not): the hook's arguments after a program named `memrecall` (any directory, or none), or
/// after `program` when one is named.
pub fn is_memrecall_hook(command: &str, agent: Agent, program: Option<&Path>) -> bool {
    let command = unguarded(command);
    let Some(head) = without_layout(command).strip_suffix(&hook_arguments(agent)) else {
        return false;
    };
    if !head.ends_with(' ') {
        return false;
    }
    let named = program_of(command);
    if program.is_some_and(|p| Path::new(&named) == p) {
        return true;
    }
    Path::new(&named)
        .file_stem()
        .is_some_and(|stem| stem == "memrecall")
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
    fn a_program_path_with_a_space_or_a_quote_is_quoted_and_still_recognised() {
        let program = Path::new("/opt/my tools/it's/memrecall");
        let command = hook_command_in(Agent::Codex, program, None, CommandShell::Posix);
        assert_eq!(
            command,
            r"'/opt/my tools/it'\''s/memrecall' hook --agent codex"
        );
        assert_eq!(program_of(&command), program.to_string_lossy());
        assert!(is_memrecall_hook(&command, Agent::Codex, None));
    }

    #[test]
    fn a_hook_command_with_a_layout_names_it_and_is_still_recognised() {
        let command = hook_command(
            Agent::ClaudeCode,
            Path::new("/bin/memrecall"),
            Some(Layout::Memrecall),
        );
        assert_eq!(
            command,
            "/bin/memrecall hook --agent claude-code --layout memrecall"
        );
        assert!(is_memrecall_hook(&command, Agent::ClaudeCode, None));
    }

    #[test]
    fn a_hook_reads_the_layout_its_command_names_else_the_agents_default() {
        let program = Path::new("/bin/memrecall");
        let named = hook_command(Agent::GeminiCli, program, Some(Layout::QwenCode));
        assert_eq!(layout_of(&named, Agent::GeminiCli), Layout::QwenCode);
        let plain = hook_command(Agent::ClaudeCode, program, None);
        assert_eq!(layout_of(&plain, Agent::ClaudeCode), Layout::ClaudeCode);
        assert_eq!(
            layout_of("memrecall hook --agent codex", Agent::Codex),
            Layout::Memrecall
        );
    }

    #[test]
    fn memrecall_hooks_are_recognised_by_program_name_or_the_named_program() {
        let bare = "memrecall hook --agent qwen-code";
        assert!(is_memrecall_hook(bare, Agent::QwenCode, None));
        assert!(!is_memrecall_hook(bare, Agent::Codex, None));
        let other = "/opt/bin/mr hook --agent qwen-code";
        assert!(!is_memrecall_hook(other, Agent::QwenCode, None));
        assert!(is_memrecall_hook(
            other,
            Agent::QwenCode,
            Some(Path::new("/opt/bin/mr"))
        ));
        assert!(!is_memrecall_hook(
            "notify-memrecall hook --agent qwen-code",
            Agent::QwenCode,
            None
        ));
    }

    #[test]
    fn gemini_cli_commands_are_guarded_in_a_posix_shell_and_plain_in_powershell() {
        let program = Path::new("/opt/bin/memrecall");
        let posix = hook_command_in(Agent::GeminiCli, program, None, CommandShell::Posix);
        assert_eq!(
            posix,
            "command -v /opt/bin/memrecall >/dev/null 2>&1 && exec /opt/bin/memrecall hook --agent gemini-cli || true"
        );
        let windows = hook_command_in(Agent::GeminiCli, program, None, CommandShell::PowerShell);
        assert_eq!(windows, "/opt/bin/memrecall hook --agent gemini-cli");
    }

    #[test]
    fn a_plain_program_path_is_the_same_word_in_every_shell() {
        let program = Path::new("C:/Users/ana/.memrecall/bin/memrecall.exe");
        for shell in [
            CommandShell::Posix,
            CommandShell::Cmd,
            CommandShell::PowerShell,
        ] {
            assert_eq!(
                hook_command_in(Agent::Codex, program, None, shell),
                "C:/Users/ana/.memrecall/bin/memrecall.exe hook --agent codex",
                "{shell:?}"
            );
        }
    }

    #[test]
    fn cmd_gets_a_path_with_a_space_in_double_quotes_still_recognised() {
        let program = Path::new("C:/Users/Ana Bo/memrecall.exe");
        let command = hook_command_in(Agent::Codex, program, None, CommandShell::Cmd);
        assert_eq!(
            command,
            r#""C:/Users/Ana Bo/memrecall.exe" hook --agent codex"#
        );
        assert_eq!(program_of(&command), "C:/Users/Ana Bo/memrecall.exe");
        assert!(is_memrecall_hook(&command, Agent::Codex, None));
        assert!(is_memrecall_hook(&command, Agent::Codex, Some(program)));
    }

    #[test]
    fn powershell_calls_a_single_quoted_path_with_its_quotes_doubled_still_recognised() {
        let program = Path::new("C:/Users/O'Neil Bo/memrecall.exe");
        let command = hook_command_in(
            Agent::GeminiCli,
            program,
            Some(Layout::Memrecall),
            CommandShell::PowerShell,
        );
        assert_eq!(
            command,
            "& 'C:/Users/O''Neil Bo/memrecall.exe' hook --agent gemini-cli --layout memrecall"
        );
        assert!(!is_guarded(&command));
        assert_eq!(program_of(&command), "C:/Users/O'Neil Bo/memrecall.exe");
        assert!(is_memrecall_hook(&command, Agent::GeminiCli, Some(program)));
    }

    #[test]
    fn on_windows_claude_code_runs_hooks_in_git_bash_gemini_cli_in_powershell_and_the_others_in_cmd()
     {
        let shell = |agent: Agent| agent.conventions().windows_shell;
        assert_eq!(shell(Agent::ClaudeCode), CommandShell::Posix);
        assert_eq!(shell(Agent::GeminiCli), CommandShell::PowerShell);
        assert_eq!(shell(Agent::QwenCode), CommandShell::Cmd);
        assert_eq!(shell(Agent::Codex), CommandShell::Cmd);
    }

    #[cfg(not(windows))]
    #[test]
    fn on_linux_and_macos_every_agent_gets_a_posix_command_and_no_caveat() {
        for agent in Agent::ALL {
            assert_eq!(CommandShell::of(agent), CommandShell::Posix);
            assert_eq!(
                command_caveat(agent, Path::new("/opt/my tools/memrecall")),
                None
            );
        }
    }

    #[cfg(windows)]
    #[test]
    fn on_windows_each_agent_gets_a_windows_path_in_its_shells_form() {
        let plain = Path::new(r"C:\Users\ana\.memrecall\bin\memrecall.exe");
        for agent in Agent::ALL {
            let command = hook_command(agent, plain, None);
            assert_eq!(
                command,
                format!(
                    "C:/Users/ana/.memrecall/bin/memrecall.exe hook --agent {}",
                    agent.as_str()
                )
            );
            assert!(is_memrecall_hook(&command, agent, Some(plain)), "{command}");
        }
        let spaced = Path::new(r"C:\Users\Ana Bo\memrecall.exe");
        assert_eq!(
            hook_command(Agent::ClaudeCode, spaced, None),
            "'C:/Users/Ana Bo/memrecall.exe' hook --agent claude-code"
        );
        assert_eq!(
            hook_command(Agent::Codex, spaced, None),
            r#""C:/Users/Ana Bo/memrecall.exe" hook --agent codex"#
        );
        assert_eq!(
            hook_command(Agent::GeminiCli, spaced, None),
            "& 'C:/Users/Ana Bo/memrecall.exe' hook --agent gemini-cli"
        );
        for agent in Agent::ALL {
            let command = hook_command(agent, spaced, None);
            assert!(
                is_memrecall_hook(&command, agent, Some(spaced)),
                "{command}"
            );
        }
    }

    #[cfg(windows)]
    #[test]
    fn on_windows_a_path_cmd_needs_quoted_is_a_caveat_for_the_agents_that_run_cmd() {
        let spaced = Path::new(r"C:\Users\Ana Bo\memrecall.exe");
        assert!(command_caveat(Agent::Codex, spaced).is_some());
        assert!(command_caveat(Agent::QwenCode, spaced).is_some());
        assert_eq!(command_caveat(Agent::ClaudeCode, spaced), None);
        assert_eq!(command_caveat(Agent::GeminiCli, spaced), None);
        let plain = Path::new(r"C:\Users\ana\memrecall.exe");
        assert_eq!(command_caveat(Agent::Codex, plain), None);
    }

    #[test]
    fn agents_that_go_on_when_the_command_cannot_run_get_the_plain_command() {
        for agent in [Agent::ClaudeCode, Agent::QwenCode, Agent::Codex] {
            let command =
                hook_command_in(agent, Path::new("/b/memrecall"), None, CommandShell::Posix);
            assert_eq!(
                command,
                format!("/b/memrecall hook --agent {}", agent.as_str())
            );
            assert!(!is_guarded(&command));
        }
    }

    #[test]
    fn a_guarded_command_is_recognised_and_names_its_program() {
        let program = Path::new("/opt/my tools/memrecall");
        let command = hook_command_in(
            Agent::GeminiCli,
            program,
            Some(Layout::Memrecall),
            CommandShell::Posix,
        );
        assert!(is_guarded(&command), "{command}");
        assert_eq!(program_of(&command), program.to_string_lossy());
        assert!(is_memrecall_hook(&command, Agent::GeminiCli, None));
        assert!(is_memrecall_hook(&command, Agent::GeminiCli, Some(program)));
        assert!(!is_memrecall_hook(&command, Agent::Codex, None));
    }

    #[test]
    fn a_guard_around_another_program_is_not_memrecalls() {
        let command = "command -v /b/memrecall >/dev/null 2>&1 && exec /b/other hook --agent gemini-cli || true";
        assert!(!is_guarded(command));
        assert!(!is_memrecall_hook(command, Agent::GeminiCli, None));
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
