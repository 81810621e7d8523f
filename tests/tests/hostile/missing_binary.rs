//! A memrecall binary that cannot run costs the agent's prompt nothing: the hook command `hook
//! install` writes (and the one the packages carry), run by `sh -c` as the agents run it, with
//! the binary deleted, off `PATH`, or killed by a signal, ends the way the agent takes as "carry
//! on"; `install --command` refuses a path that is not an executable file; and `doctor` names
//! Claude Code's note of memrecall's plugin server that failed to start once memrecall is there.
//!
//! What each agent takes as "carry on" was measured with the agents themselves (`cargo xtask
//! agents`): Gemini CLI 0.61.0 blocks the prompt when its hook exits with 126 or 127 and the
//! shell said why, and goes on after status 0 or a death by signal; Claude Code, Qwen Code and
//! Codex go on whatever the status but 2.

use std::io::Write as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::binary;

/// A temporary `HOME`, `MEMRECALL_HOME` and repository, and a `bin/` directory for the binary
/// the hook runs.
struct Sandbox {
    _dir: TempDir,
    base: PathBuf,
}

/// What a finished command left.
struct Ended {
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
}

/// A `PATH` without memrecall on it.
const SYSTEM_PATH: &str = "/usr/bin:/bin";

impl Sandbox {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        for sub in ["home", "mr", "tmp", "bin", "repo/.git"] {
            std::fs::create_dir_all(base.join(sub)).unwrap();
        }
        Self { _dir: dir, base }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.base.join(relative)
    }

    /// `bin/memrecall` as a link to the binary under test: removing it is deleting the binary
    /// the hook names.
    fn linked_binary(&self) -> PathBuf {
        let link = self.path("bin/memrecall");
        std::os::unix::fs::symlink(binary(), &link).unwrap();
        link
    }

    /// `bin/memrecall` as a script that kills itself with SIGKILL.
    fn self_killing_binary(&self) -> PathBuf {
        let path = self.path("bin/memrecall");
        std::fs::write(&path, "#!/bin/sh\ncat > /dev/null\nkill -KILL $$\n").unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        path
    }

    fn command(&self, program: &Path, path: &str) -> Command {
        let mut command = Command::new(program);
        command
            .current_dir(self.path("repo"))
            .env_clear()
            .env("HOME", self.path("home"))
            .env("MEMRECALL_HOME", self.path("mr"))
            .env("TMPDIR", self.path("tmp"))
            .env("PATH", path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn finish(mut command: Command, stdin: &str) -> Ended {
        let mut child = command.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        // A command that ends without reading its input closes the pipe first.
        let _ = input.write_all(stdin.as_bytes());
        drop(input);
        let output = child.wait_with_output().unwrap();
        Ended {
            status: output.status,
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Runs the binary under test with `args`.
    fn memrecall(&self, args: &[&str]) -> Ended {
        self.memrecall_with_path(args, SYSTEM_PATH)
    }

    fn memrecall_with_path(&self, args: &[&str], path: &str) -> Ended {
        let mut command = self.command(binary(), path);
        command.args(args);
        Self::finish(command, "")
    }

    /// Claude Code's note that memrecall's plugin server failed to start, made now.
    fn failed_plugin_server(&self) -> PathBuf {
        let file = self.path("home/.claude/mcp-needs-auth-cache.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis();
        let entry =
            json!({"plugin:memrecall:memrecall": {"timestamp": now, "id": "b659a5ff6af3dddd"}});
        std::fs::write(&file, entry.to_string()).unwrap();
        file
    }

    fn doctor(&self, path: &str) -> Ended {
        let repo = self.path("repo");
        let args = [
            "doctor",
            "--agent",
            "claude-code",
            "--cwd",
            repo.to_str().unwrap(),
        ];
        self.memrecall_with_path(&args, path)
    }

    /// `hook install --write` for `agent` naming `program`; the prompt event's command.
    fn install(&self, agent: &str, program: &Path) -> String {
        let program = program.to_str().unwrap();
        let args = ["hook", "install", "--agent", agent, "--write", "--command"];
        let run = self.memrecall(&[&args[..], &[program]].concat());
        assert_eq!(run.status.code(), Some(0), "{}", run.stderr);
        let file = match agent {
            "claude-code" => ".claude/settings.json",
            "qwen-code" => ".qwen/settings.json",
            "gemini-cli" => ".gemini/settings.json",
            _ => ".codex/hooks.json",
        };
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

    /// Runs a hook command as the agents do on Linux and macOS (`sh -c`), with the prompt
    /// event's input on stdin.
    fn run_hook(&self, command: &str, path: &str) -> Ended {
        let mut shell = self.command(Path::new("/bin/sh"), path);
        shell.arg("-c").arg(command);
        let input = json!({
            "hook_event_name": "BeforeAgent",
            "session_id": "s",
            "cwd": self.path("repo"),
            "prompt": "how are releases tagged?",
        });
        Self::finish(shell, &input.to_string())
    }
}

/// The command the Gemini CLI extension carries for the prompt event.
fn packaged_gemini_command() -> String {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins/gemini-cli/hooks/hooks.json");
    let hooks: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    hooks["hooks"]["BeforeAgent"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// The hook command exited 0 and printed nothing, on either stream.
fn assert_silent_success(run: &Ended, command: &str) {
    assert_eq!(run.status.code(), Some(0), "{command}: {}", run.stderr);
    assert_eq!(run.stdout, "", "{command}");
    assert_eq!(run.stderr, "", "{command}");
}

#[test]
fn the_gemini_cli_hook_exits_0_silently_when_its_binary_was_deleted() {
    let sandbox = Sandbox::new();
    let program = sandbox.linked_binary();
    let command = sandbox.install("gemini-cli", &program);
    std::fs::remove_file(&program).unwrap();

    let run = sandbox.run_hook(&command, SYSTEM_PATH);

    assert_silent_success(&run, &command);
}

#[test]
fn the_gemini_cli_extension_hook_exits_0_silently_when_memrecall_is_not_on_path() {
    let sandbox = Sandbox::new();
    let command = packaged_gemini_command();

    let run = sandbox.run_hook(&command, SYSTEM_PATH);

    assert_silent_success(&run, &command);
}

#[test]
fn the_gemini_cli_hook_killed_by_a_signal_dies_of_it_itself_with_nothing_printed() {
    let sandbox = Sandbox::new();
    let program = sandbox.self_killing_binary();
    let command = sandbox.install("gemini-cli", &program);

    let run = sandbox.run_hook(&command, SYSTEM_PATH);

    // The shell gave its place to the binary (`exec`): Gemini CLI sees the signal, which it
    // takes as a status of 0, and no shell is left to print "Killed" or to outlive a timeout.
    assert_eq!(run.status.signal(), Some(9), "{command}: {:?}", run.status);
    assert_eq!(run.stdout, "", "{command}");
    assert_eq!(run.stderr, "", "{command}");
}

#[test]
fn the_guarded_gemini_cli_hook_runs_the_binary_when_it_is_there() {
    let sandbox = Sandbox::new();
    let program = sandbox.linked_binary();
    let command = sandbox.install("gemini-cli", &program);

    let run = sandbox.run_hook(&command, SYSTEM_PATH);

    assert_eq!(run.status.code(), Some(0), "{command}: {}", run.stderr);
    assert_eq!(run.stdout.trim(), "{}", "{command}");
}

#[test]
fn the_gemini_cli_extension_hook_runs_memrecall_found_on_path() {
    let sandbox = Sandbox::new();
    sandbox.linked_binary();
    let path = format!("{}:{SYSTEM_PATH}", sandbox.path("bin").display());

    let run = sandbox.run_hook(&packaged_gemini_command(), &path);

    assert_eq!(run.status.code(), Some(0), "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "{}");
}

#[test]
fn the_other_agents_hooks_never_exit_2_when_their_binary_was_deleted() {
    for agent in ["claude-code", "qwen-code", "codex"] {
        let sandbox = Sandbox::new();
        let program = sandbox.linked_binary();
        let command = sandbox.install(agent, &program);
        std::fs::remove_file(&program).unwrap();

        let run = sandbox.run_hook(&command, SYSTEM_PATH);

        // 127, which these agents report as a failed hook and go on.
        assert_eq!(run.status.code(), Some(127), "{agent}: {command}");
        assert_eq!(run.stdout, "", "{agent}: {command}");
    }
}

#[test]
fn install_refuses_a_command_that_does_not_exist() {
    let sandbox = Sandbox::new();
    let missing = sandbox.path("bin/memrecall");

    let run = sandbox.memrecall(&[
        "hook",
        "install",
        "--agent",
        "gemini-cli",
        "--write",
        "--command",
        missing.to_str().unwrap(),
    ]);

    assert_ne!(run.status.code(), Some(0));
    assert!(
        run.stderr.contains(&format!(
            "refusing --command {}: there is no such file",
            missing.display()
        )),
        "{}",
        run.stderr
    );
    assert!(!sandbox.path("home/.gemini/settings.json").exists());
}

#[test]
fn install_refuses_a_command_that_is_not_executable() {
    let sandbox = Sandbox::new();
    let plain = sandbox.path("bin/memrecall");
    std::fs::write(&plain, "not a program\n").unwrap();

    let run = sandbox.memrecall(&[
        "hook",
        "install",
        "--agent",
        "codex",
        "--command",
        plain.to_str().unwrap(),
    ]);

    assert_ne!(run.status.code(), Some(0));
    assert!(
        run.stderr.contains("it is not executable"),
        "{}",
        run.stderr
    );
}

#[test]
fn doctor_names_claude_codes_note_of_the_failed_plugin_server_once_memrecall_is_on_path() {
    let sandbox = Sandbox::new();
    let cache = sandbox.failed_plugin_server();
    sandbox.linked_binary();
    let path = format!("{}:{SYSTEM_PATH}", sandbox.path("bin").display());

    let run = sandbox.doctor(&path);

    assert_eq!(run.status.code(), Some(1), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(
            "(entry \"plugin:memrecall:memrecall\" in {}), although memrecall is now on PATH",
            cache.display()
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("fix: rm '{}'", cache.display())),
        "{}",
        run.stdout
    );
}

#[test]
fn doctor_leaves_the_note_alone_while_memrecall_is_still_not_on_path() {
    let sandbox = Sandbox::new();
    sandbox.failed_plugin_server();

    let run = sandbox.doctor(SYSTEM_PATH);

    assert!(run.stdout.contains("agent claude-code: "), "{}", run.stdout);
    assert!(
        !run.stdout.contains("mcp-needs-auth-cache.json"),
        "{}",
        run.stdout
    );
}

#[test]
fn doctor_names_an_unguarded_gemini_cli_hook_from_an_older_install() {
    let sandbox = Sandbox::new();
    let program = sandbox.linked_binary();
    let plain = format!("{} hook --agent gemini-cli", program.display());
    let entry = json!([{"hooks": [{"type": "command", "command": plain, "timeout": 10000}]}]);
    let events = ["BeforeAgent", "AfterTool", "AfterAgent", "SessionEnd"];
    let hooks: serde_json::Map<String, Value> = events
        .iter()
        .map(|event| ((*event).to_owned(), entry.clone()))
        .collect();
    let settings = sandbox.path("home/.gemini/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, json!({"hooks": hooks}).to_string()).unwrap();
    let repo = sandbox.path("repo");

    let run = sandbox.memrecall(&[
        "doctor",
        "--agent",
        "gemini-cli",
        "--cwd",
        repo.to_str().unwrap(),
    ]);

    assert!(
        run.stdout.contains(&format!(
            "gemini-cli: the hook runs {} unguarded: the agent blocks every prompt if that binary goes away",
            program.display()
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("hook install --agent gemini-cli --write"),
        "{}",
        run.stdout
    );
}

#[test]
fn doctor_takes_a_guarded_gemini_cli_hook_as_installed() {
    let sandbox = Sandbox::new();
    let program = sandbox.linked_binary();
    sandbox.install("gemini-cli", &program);
    let repo = sandbox.path("repo");

    let run = sandbox.memrecall(&[
        "doctor",
        "--agent",
        "gemini-cli",
        "--cwd",
        repo.to_str().unwrap(),
    ]);

    assert!(
        run.stdout
            .contains(&format!("hook: runs {} (present)", program.display())),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("unguarded"), "{}", run.stdout);
    assert!(!run.stdout.contains("not installed"), "{}", run.stdout);
}
