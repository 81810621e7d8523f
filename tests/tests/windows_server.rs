//! The per-user server on Windows, end to end through the Windows binary (run under Wine by
//! `.ci/run`): a hook starts the server over its named pipe, the session's next prompt is
//! served by it, a tool-result hook receives a loopback model's later pick, `status` shows the
//! session and its root watched (a note written meanwhile is found), and `stop` stops the
//! server. Each test has its own `HOME`, `USERPROFILE` and
//! `MEMRECALL_HOME`, so its pipe's name is its own.

#![cfg(windows)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::binary;

/// How long a test waits for something that should happen soon, on a machine that may stall.
const PATIENCE: Duration = Duration::from_mins(1);
/// How long the loopback model takes to answer.
const MODEL_DELAY: Duration = Duration::from_millis(500);
const QUERY: &str = "release checklist";

/// A temporary world: `home/` as the user's profile, `mr/` as `MEMRECALL_HOME` (its
/// `memories/` is Claude Code's user root) and a git repository `repo/` as the working
/// directory.
struct World {
    _dir: TempDir,
    base: PathBuf,
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().to_path_buf();
        for sub in ["home", "mr/memories", "repo/.git"] {
            std::fs::create_dir_all(base.join(sub)).unwrap();
        }
        std::fs::write(base.join("repo/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        let world = Self { _dir: dir, base };
        world.config("");
        world
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.base.join(relative)
    }

    /// Writes `config.toml`: `extra`, and an idle exit short enough that no server lingers.
    fn config(&self, extra: &str) {
        std::fs::write(
            self.path("mr/config.toml"),
            format!("{extra}\n[serve]\nidle_exit = \"120s\"\n"),
        )
        .unwrap();
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(binary());
        command
            .args(args)
            .current_dir(self.path("repo"))
            .env("HOME", self.path("home"))
            .env("USERPROFILE", self.path("home"))
            .env("MEMRECALL_HOME", self.path("mr"))
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("CLAUDE_CONFIG_DIR");
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        let output = self.command(args).output().unwrap();
        assert!(
            output.status.success(),
            "memrecall {args:?} failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// The server's status, `None` when none runs.
    fn status(&self) -> Option<Value> {
        let output = self.run(&["status", "--json"]);
        let value: Value = serde_json::from_slice(&output.stdout).unwrap();
        (!value.is_null()).then_some(value)
    }

    /// The server's status once one answers, within [`PATIENCE`].
    fn status_once_running(&self) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.status() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "no server answered; its log:\n{}\nthe hook's:\n{}",
                self.log("serve.log"),
                self.log("hook.log")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.path("mr/logs").join(name)).unwrap_or_default()
    }

    /// Runs Claude Code's hook with `event` on stdin; returns the delivered context (empty when
    /// nothing was printed).
    fn hook(&self, event: &Value) -> String {
        let mut child = self
            .command(&["hook", "--agent", "claude-code"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let _ = input.write_all(event.to_string().as_bytes());
        drop(input);
        let output = child.wait_with_output().unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let stdout = String::from_utf8(output.stdout).unwrap();
        if stdout.trim().is_empty() {
            return String::new();
        }
        let value: Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout:?}"));
        value["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    }

    fn prompt(&self, session: &str) -> String {
        self.hook(&json!({
            "session_id": session,
            "transcript_path": "C:\\transcript.jsonl",
            "cwd": self.path("repo"),
            "hook_event_name": "UserPromptSubmit",
            "prompt": QUERY,
        }))
    }

    /// Sends `PostToolUse` until something is delivered; returns it.
    fn first_tool_result_delivery(&self, session: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let context = self.hook(&json!({
                "session_id": session,
                "hook_event_name": "PostToolUse",
                "tool_name": "Bash",
            }));
            if !context.is_empty() {
                return context;
            }
            assert!(
                Instant::now() < deadline,
                "no tool-result delivery within {PATIENCE:?}; the server's log:\n{}",
                self.log("serve.log")
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = self.command(&["stop"]).output();
    }
}

fn topic(dir: &Path, file: &str, name: &str, description: &str) {
    std::fs::write(
        dir.join(file),
        format!("---\nname: {name}\ndescription: {description}\ntype: project\n---\n\nBody.\n"),
    )
    .unwrap();
}

/// The titles of the memories a context carries, in order.
fn titles(context: &str) -> Vec<String> {
    context
        .lines()
        .filter_map(|l| l.strip_prefix("### "))
        .map(|l| l.rsplit_once(" (").map_or(l, |(title, _)| title).to_owned())
        .collect()
}

/// A model that picks, after [`MODEL_DELAY`], the memory of the manifest whose path ends with
/// its file name: the path as the server wrote it, whatever form Windows gave it.
struct PicksByName(&'static str);

impl wiremock::Respond for PicksByName {
    fn respond(&self, request: &wiremock::Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).unwrap_or_default();
        let texts = body["messages"].as_array().cloned().unwrap_or_default();
        // Manifest lines: `- [type] <path> (<time>): <description>`.
        let picked: Vec<String> = texts
            .iter()
            .filter_map(|message| message["content"].as_str())
            .flat_map(str::lines)
            .filter_map(|line| line.strip_prefix("- [")?.split_once("] "))
            .filter_map(|(_, rest)| rest.split_once(" (").map(|(path, _)| path.to_owned()))
            .filter(|path| path.ends_with(self.0))
            .collect();
        let answer = json!({ "selected_memories": picked }).to_string();
        ResponseTemplate::new(200)
            .set_body_json(json!({
                "id": "chatcmpl-e2e",
                "object": "chat.completion",
                "created": 1_796_040_000,
                "model": "m",
                "choices": [{
                    "index": 0,
                    "message": { "role": "assistant", "content": answer },
                    "finish_reason": "stop"
                }]
            }))
            .set_delay(MODEL_DELAY)
    }
}

/// A loopback model that picks the memory named `file`, on a runtime of its own.
fn slow_model(file: &'static str) -> (tokio::runtime::Runtime, MockServer) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = runtime.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(PicksByName(file))
            .mount(&server)
            .await;
        server
    });
    (runtime, server)
}

#[test]
fn a_hook_starts_the_server_over_its_pipe_which_serves_the_session_until_stopped() {
    let world = World::new();
    let memories = world.path("mr/memories");
    topic(
        &memories,
        "deploy.md",
        "Deploy checklist",
        "Steps to ship a release",
    );
    topic(
        &memories,
        "rollback.md",
        "Rollback checklist",
        "Undo a bad release",
    );
    topic(
        &memories,
        "grafana.md",
        "Checkout dashboard",
        "Grafana board",
    );
    let (_runtime, model) = slow_model("grafana.md");
    world.config(&format!(
        "[selector]\nkind = \"http\"\nurl = \"{}\"\nmodel = \"m\"\napi_key_env = \"MEMRECALL_E2E_KEY_THAT_IS_NEVER_SET\"\n",
        model.uri()
    ));
    assert_eq!(world.status(), None, "a server ran before the first hook");

    // The first prompt starts the server (answered by it, or in the hook's own process while
    // it starts).
    let first = world.prompt("s0");
    assert!(
        titles(&first).contains(&"Deploy checklist".to_owned()),
        "{first:?}"
    );
    let started = world.status_once_running();
    let pid = started["pid"].as_u64().unwrap();

    // The next prompt, in its own session, is served by that server, and its later pick
    // reaches the tool-result point.
    let fast = world.prompt("s1");
    assert!(
        titles(&fast).contains(&"Deploy checklist".to_owned()),
        "{fast:?}"
    );
    assert!(!titles(&fast).contains(&"Checkout dashboard".to_owned()));
    let refined = world.first_tool_result_delivery("s1");
    assert_eq!(titles(&refined), ["Checkout dashboard"]);

    let status = world.status().expect("the server still runs");
    assert_eq!(status["pid"].as_u64(), Some(pid), "{status}");
    assert!(status["sessions"].as_u64().unwrap() >= 1, "{status}");
    assert!(status["recalls_served"].as_u64().unwrap() >= 1, "{status}");
    let watch = status["watch"].as_str().unwrap();
    assert!(
        watch.contains("memories: watched"),
        "the user root is not watched: {watch}"
    );

    // A note written while the root is watched is found by the next prompt.
    topic(
        &memories,
        "canary.md",
        "Canary checklist",
        "Release to a few first",
    );
    let after = world.prompt("s2");
    assert!(
        titles(&after).contains(&"Canary checklist".to_owned()),
        "{after:?}"
    );

    let stopped = world.run(&["stop"]);
    assert_eq!(
        String::from_utf8_lossy(&stopped.stdout).trim(),
        format!("stopped the server (pid {pid})")
    );
    assert_eq!(world.status(), None);
}
