//! The Windows binary as Windows programs see it: the paths it prints and installs carry no
//! verbatim prefix (`\\?\`), `roots` names the project folder Claude Code names, a note there
//! is delivered by the hook, and the command `hook install` writes runs in the shell the agent
//! hands it to, given the hook's JSON on stdin.
//!
//! Windows only; `.ci/run` runs these under Wine. Wine has `cmd.exe` but neither Git Bash nor
//! PowerShell: the tests that need those are ignored with that reason; the Windows jobs of the
//! GitHub workflows, whose runners have both, run them with `--include-ignored`.
#![cfg(windows)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The `memrecall` binary cargo built for these tests.
fn binary() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_memrecall"))
}

/// `path` as a program running in it sees it: `std::fs::canonicalize`'s answer, which on
/// Windows is verbatim, without the prefix (taken off here by hand, not by memrecall's code).
fn seen(path: &Path) -> PathBuf {
    let verbatim = std::fs::canonicalize(path).unwrap();
    let text = verbatim.to_str().unwrap();
    let plain = text
        .strip_prefix(r"\\?\")
        .expect("std::fs::canonicalize gives a verbatim path on Windows");
    PathBuf::from(plain)
}

/// A character rule the agents share for a folder name: each one that is not an ASCII letter or
/// digit becomes `-`.
fn dashed(path: &Path) -> String {
    path.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

const NOTE: &str = "---\nname: Rollback runbook\ndescription: How to roll back a bad release\ntype: project\n---\n\nRevert the tag and redeploy the previous release.\n";
const PROMPT: &str = "how do we roll back a bad release?";

/// Writes the rollback note in the memory folder `dir`.
fn note_at(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("rollback.md"), NOTE).unwrap();
}

/// A repository `shop` with a home, a memrecall home and a temporary directory of its own.
struct World {
    _dir: tempfile::TempDir,
    base: PathBuf,
}

/// The server a hook of the world started is stopped before its directories go: under Wine,
/// removing a directory the running server watches never finishes.
impl Drop for World {
    fn drop(&mut self) {
        let _ = self.memrecall(&["stop"], "");
    }
}

struct Finished {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = seen(dir.path());
        for sub in ["home", "mr", "tmp", "shop/.git"] {
            std::fs::create_dir_all(base.join(sub)).unwrap();
        }
        Self { _dir: dir, base }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.base.join(relative)
    }

    fn repo(&self) -> PathBuf {
        self.path("shop")
    }

    /// The folder Claude Code keeps the repository's memory in.
    fn claude_memory(&self) -> PathBuf {
        self.path("home")
            .join(".claude")
            .join("projects")
            .join(dashed(&self.repo()))
            .join("memory")
    }

    /// `command` run from the repository with this world's home, stdin written to it.
    fn finish(&self, mut command: Command, stdin: &str) -> Finished {
        for name in [
            "CLAUDE_CONFIG_DIR",
            "CLAUDE_CODE_PROJECT_DIR_NAME",
            "CLAUDE_CODE_DISABLE_AUTO_MEMORY",
            "QWEN_HOME",
            "QWEN_CODE_MEMORY_LOCAL",
            "CODEX_HOME",
            "MEMRECALL_LOG",
            "MEMRECALL_CONFIG",
        ] {
            command.env_remove(name);
        }
        let mut child = command
            .current_dir(self.repo())
            .env("USERPROFILE", self.path("home"))
            .env("HOME", self.path("home"))
            .env("MEMRECALL_HOME", self.path("mr"))
            .env("TMP", self.path("tmp"))
            .env("TEMP", self.path("tmp"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the command can be started");
        let mut input = child.stdin.take().unwrap();
        let _ = input.write_all(stdin.as_bytes());
        drop(input);
        let output = child.wait_with_output().unwrap();
        Finished {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    fn memrecall(&self, args: &[&str], stdin: &str) -> Finished {
        let mut command = Command::new(binary());
        command.args(args);
        self.finish(command, stdin)
    }

    /// The prompt event `event` an agent writes to its hook's stdin, from the repository, in a
    /// session of its own: the server delivers a note once per session, so a second prompt of
    /// one session would rightly get nothing.
    fn prompt_event(&self, event: &str) -> String {
        static SESSIONS: AtomicUsize = AtomicUsize::new(0);
        let session = SESSIONS.fetch_add(1, Ordering::Relaxed);
        json!({
            "session_id": format!("s{session}"),
            "cwd": self.repo(),
            "hook_event_name": event,
            "prompt": PROMPT,
        })
        .to_string()
    }

    /// Runs `run` until its stdout names the note, for up to a minute: the hook prints what the
    /// recall gives within its 100 ms of real time, which a stalled machine can miss.
    fn until_delivered(&self, mut run: impl FnMut() -> Finished) -> Finished {
        let deadline = Instant::now() + Duration::from_mins(1);
        loop {
            let finished = run();
            if finished.code != Some(0) || finished.stdout.contains("Rollback runbook") {
                return finished;
            }
            assert!(
                Instant::now() < deadline,
                "nothing delivered within a minute; the last run:\nstdout: {}\nstderr: {}",
                finished.stdout,
                finished.stderr
            );
            let _ = std::fs::remove_dir_all(self.path("mr/state"));
        }
    }

    /// The prompt event's command `hook install --write` put in `agent`'s settings `file`.
    fn installed_command(&self, agent: &str, file: &str) -> String {
        let install = self.memrecall(&["hook", "install", "--agent", agent, "--write"], "");
        assert_eq!(install.code, Some(0), "{}", install.stderr);
        let text = std::fs::read_to_string(self.path("home").join(file)).unwrap();
        let settings: Value = serde_json::from_str(&text).unwrap();
        let event = if agent == "gemini-cli" {
            "BeforeAgent"
        } else {
            "UserPromptSubmit"
        };
        settings["hooks"][event][0]["hooks"][0]["command"]
            .as_str()
            .unwrap()
            .to_owned()
    }
}

#[test]
fn roots_names_the_folder_claude_code_names_after_the_drive_path() {
    let world = World::new();
    let run = world.memrecall(&["roots", "--layout", "claude-code"], "");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let name = dashed(&world.repo());
    let drive = &name[..1];
    assert!(name.starts_with(&format!("{drive}--")), "{name}");
    assert!(
        run.stdout.contains(&format!(
            "project: {} (does not exist yet)",
            world.claude_memory().display()
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("cwd: {}\n", world.repo().display())),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains(r"\\?\"), "{}", run.stdout);
}

#[test]
fn roots_prints_the_binary_without_the_verbatim_prefix() {
    let world = World::new();
    let run = world.memrecall(&["roots"], "");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let expected = seen(binary());
    assert!(
        run.stdout
            .contains(&format!("binary: {}\n", expected.display())),
        "{}",
        run.stdout
    );
}

#[test]
fn a_note_in_the_folder_claude_code_names_is_delivered_by_the_hook() {
    let world = World::new();
    note_at(&world.claude_memory());
    let run = world.until_delivered(|| {
        world.memrecall(
            &["hook", "--agent", "claude-code"],
            &world.prompt_event("UserPromptSubmit"),
        )
    });
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.contains("additionalContext"), "{}", run.stdout);
    assert!(run.stdout.contains("Rollback runbook"), "{}", run.stdout);
}

/// `command` run as `cmd.exe` runs it for Codex (`%COMSPEC% /C`, the command one argument
/// quoted by Rust's standard library) or for Qwen Code (`cmd.exe /d /s /c`, quoted by Node.js
/// by the same C runtime rules).
fn under_cmd(command: &str, flags: &[&str]) -> Command {
    let mut cmd = Command::new("cmd.exe");
    cmd.args(flags).arg(command);
    cmd
}

#[test]
fn the_commands_hook_install_writes_for_cmd_run_there_with_the_hooks_json() {
    let world = World::new();
    // Qwen Code recalls its own folders itself unless told not to; then memrecall delivers them.
    std::fs::create_dir_all(world.path("home/.qwen")).unwrap();
    std::fs::write(
        world.path("home/.qwen/settings.json"),
        r#"{"memory":{"enableManagedAutoMemory":false}}"#,
    )
    .unwrap();
    note_at(&world.claude_memory());
    note_at(&world.path("home/.qwen/memories"));
    note_at(&world.path("mr/memories"));
    for (agent, file) in [
        ("claude-code", ".claude/settings.json"),
        ("qwen-code", ".qwen/settings.json"),
        ("codex", ".codex/hooks.json"),
    ] {
        let command = world.installed_command(agent, file);
        assert!(!command.contains(r"\\?\"), "{command}");
        for flags in [&["/C"][..], &["/d", "/s", "/c"][..]] {
            let run = world.until_delivered(|| {
                world.finish(
                    under_cmd(&command, flags),
                    &world.prompt_event("UserPromptSubmit"),
                )
            });
            assert_eq!(run.code, Some(0), "{agent} {flags:?}: {}", run.stderr);
            assert!(
                run.stdout.contains("Rollback runbook"),
                "{agent} {flags:?} ran {command}:\nstdout: {}\nstderr: {}",
                run.stdout,
                run.stderr
            );
        }
    }
}

#[test]
fn installing_for_cmd_a_program_whose_path_needs_quotes_warns_that_it_cannot_start() {
    let world = World::new();
    let program = world.path("my tools/memrecall.exe");
    std::fs::create_dir_all(program.parent().unwrap()).unwrap();
    std::fs::write(&program, "").unwrap();
    let program = program.to_string_lossy().into_owned();
    let install = world.memrecall(
        &["hook", "install", "--agent", "codex", "--command", &program],
        "",
    );
    assert_eq!(install.code, Some(0), "{}", install.stderr);
    assert!(
        install.stderr.contains("codex runs hooks with cmd.exe"),
        "{}",
        install.stderr
    );
    assert!(
        install.stdout.contains(&format!(
            r#"\"{}\" hook --agent codex"#,
            program.replace('\\', "/")
        )),
        "{}",
        install.stdout
    );
}

#[test]
#[ignore = "Wine has no Git Bash; run with --ignored on Windows with Git Bash's sh.exe on PATH"]
fn the_command_hook_install_writes_for_claude_code_runs_under_git_bash() {
    let world = World::new();
    note_at(&world.claude_memory());
    let command = world.installed_command("claude-code", ".claude/settings.json");
    let run = world.until_delivered(|| {
        let mut sh = Command::new("sh.exe");
        sh.arg("-c").arg(&command);
        world.finish(sh, &world.prompt_event("UserPromptSubmit"))
    });
    assert!(run.stdout.contains("Rollback runbook"), "{}", run.stderr);
}

#[test]
#[ignore = "Wine has no PowerShell; run with --ignored on Windows"]
fn the_command_hook_install_writes_for_gemini_cli_runs_under_powershell() {
    let world = World::new();
    note_at(&world.path("mr/memories"));
    let command = world.installed_command("gemini-cli", ".gemini/settings.json");
    let run = world.until_delivered(|| {
        let mut shell = Command::new("powershell.exe");
        shell.args(["-NoProfile", "-Command"]).arg(&command);
        world.finish(shell, &world.prompt_event("BeforeAgent"))
    });
    assert!(run.stdout.contains("Rollback runbook"), "{}", run.stderr);
}
