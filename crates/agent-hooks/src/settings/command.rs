//! The hook's command line: written for the shell the agent runs it with, guarded where the
//! agent stops the prompt when it cannot start, and recognised again in a settings file.

use std::path::Path;

use super::CommandShell;
use crate::conventions::CannotRun;
use crate::{Agent, Layout, paths};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
