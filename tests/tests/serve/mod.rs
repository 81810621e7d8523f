//! `memrecall serve` end to end: the real binary as server and as the agents' hook, a loopback
//! model that answers after 500 ms, and each test in its own `HOME`, `MEMRECALL_HOME` and
//! `XDG_RUNTIME_DIR`. Every test stops its server; servers also exit on idle and when their
//! socket disappears with the temporary directory, so none outlives the run.

#![cfg(unix)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::binary;

mod hostile_clients;
mod late_key;
mod limits;
mod problems;

/// How long a test waits for something that should happen soon, on a machine that may stall.
const PATIENCE: Duration = Duration::from_secs(30);
/// How long the loopback model takes to answer.
const MODEL_DELAY: Duration = Duration::from_millis(500);

/// A temporary world: `home/` as `HOME`, `mr/` as `MEMRECALL_HOME`, `xdg/` as
/// `XDG_RUNTIME_DIR`, and git repositories below it.
struct World {
    _dir: TempDir,
    base: PathBuf,
    /// A server this test started itself, to reap.
    started: Option<Child>,
}

impl World {
    fn new() -> Self {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        for sub in ["home", "mr", "xdg"] {
            std::fs::create_dir_all(base.join(sub)).unwrap();
        }
        std::fs::set_permissions(base.join("xdg"), std::fs::Permissions::from_mode(0o700)).unwrap();
        let world = Self {
            _dir: dir,
            base,
            started: None,
        };
        world.repo("repo");
        world.config("");
        world
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.base.join(relative)
    }

    /// Creates a git repository at `relative` and returns its path.
    fn repo(&self, relative: &str) -> PathBuf {
        let repo = self.path(relative);
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        repo
    }

    /// Writes `config.toml`: `extra`, and an idle exit short enough that no server lingers.
    fn config(&self, extra: &str) {
        std::fs::write(
            self.path("mr/config.toml"),
            format!("{extra}\n[serve]\nidle_exit = \"60s\"\n"),
        )
        .unwrap();
    }

    /// Points the selector at a loopback model.
    fn selector(&self, url: &str) {
        self.config(&format!(
            "[selector]\nkind = \"http\"\nurl = \"{url}\"\nmodel = \"m\"\napi_key_env = \"MEMRECALL_E2E_KEY_THAT_IS_NEVER_SET\"\n"
        ));
    }

    /// Claude Code's memory directory for a project.
    fn claude_memory(&self, project: &Path) -> PathBuf {
        let dashed: String = project
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.path("home/.claude/projects")
            .join(dashed)
            .join("memory")
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(binary());
        command
            .args(args)
            .current_dir(self.path("repo"))
            .env_clear()
            .env("HOME", self.path("home"))
            .env("MEMRECALL_HOME", self.path("mr"))
            .env("XDG_RUNTIME_DIR", self.path("xdg"));
        command
    }

    /// Starts `memrecall serve` and waits until it answers `status`.
    fn start_server(&mut self) -> u64 {
        self.spawn_server(self.command(&["serve"]))
    }

    /// Starts the server `command` runs and waits until it answers `status`; returns its pid.
    fn spawn_server(&mut self, mut command: Command) -> u64 {
        let log = std::fs::File::create(self.path("serve-test.log")).unwrap();
        let child = command
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("memrecall serve can be started");
        self.started = Some(child);
        self.wait_for_server()
    }

    /// Waits until a server answers `status`; returns its pid.
    fn wait_for_server(&self) -> u64 {
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.status() {
                return status["pid"].as_u64().unwrap();
            }
            assert!(
                Instant::now() < deadline,
                "no server answered; its log:\n{}",
                std::fs::read_to_string(self.path("serve-test.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server's status, `None` when none runs.
    fn status(&self) -> Option<Value> {
        let output = self.command(&["status", "--json"]).output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let value: Value = serde_json::from_slice(&output.stdout).unwrap();
        (!value.is_null()).then_some(value)
    }

    /// The server's status once `ready` holds for it, within [`PATIENCE`]; `waiting_for` names
    /// what is waited for when it never does.
    fn status_once(&self, ready: impl Fn(&Value) -> bool, waiting_for: &str) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let status = self.status().expect("the server answers status");
            if ready(&status) {
                return status;
            }
            assert!(Instant::now() < deadline, "{waiting_for}: {status}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Claude Code's memory for `repo` holding [`deploy_memories`], the selector a loopback model
    /// that picks `picks` (file names there) after [`MODEL_DELAY`], and a server started; the
    /// model, to keep alive.
    fn serving_deploy_memories_with_a_slow_model(
        &mut self,
        picks: &[&str],
    ) -> (tokio::runtime::Runtime, MockServer) {
        let memory = self.claude_memory(&self.path("repo"));
        deploy_memories(&memory);
        let picks: Vec<PathBuf> = picks.iter().map(|name| memory.join(name)).collect();
        let (runtime, model) = slow_model(&picks);
        self.selector(&model.uri());
        self.start_server();
        (runtime, model)
    }

    /// Claude Code's memory for `repo` holding [`deploy_memories`], a server started, and one
    /// prompt (session `a`, [`QUERY`]) sent through the hook; returns the memory root.
    fn serving_one_prompt(&mut self) -> PathBuf {
        let memory = self.claude_memory(&self.path("repo"));
        deploy_memories(&memory);
        self.start_server();
        self.hook("claude-code", &prompt_event("a", &self.path("repo"), QUERY));
        memory
    }

    /// Runs the hook for `agent` with `event` on stdin; returns the delivered context (empty when
    /// nothing was printed).
    fn hook(&self, agent: &str, event: &Value) -> String {
        self.hook_with(agent, event, &[])
    }

    /// [`World::hook`] with `env` set for the hook besides the world's variables.
    fn hook_with(&self, agent: &str, event: &Value, env: &[(&str, &str)]) -> String {
        let mut child = self
            .command(&["hook", "--agent", agent])
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let _ = input.write_all(event.to_string().as_bytes());
        drop(input);
        let output = child.wait_with_output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        let stdout = String::from_utf8(output.stdout).unwrap();
        if stdout.is_empty() {
            return String::new();
        }
        let value: Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {stdout:?}"));
        assert_eq!(
            value["hookSpecificOutput"]["hookEventName"], event["hook_event_name"],
            "{value}"
        );
        value["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
            .to_owned()
    }

    /// Sends `PostToolUse` until something is delivered; returns it. Before the model answers
    /// the recall is pending and nothing is delivered (nor consumed).
    fn first_tool_result_delivery(&self, session: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let context = self.hook("claude-code", &tool_event(session));
            if !context.is_empty() {
                return context;
            }
            assert!(
                Instant::now() < deadline,
                "no tool-result delivery within {PATIENCE:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Turns Qwen Code's own memory recall off in its user settings, so that memrecall's hook
    /// delivers the notes of Qwen Code's memory roots.
    fn qwen_own_recall_off(&self) {
        std::fs::create_dir_all(self.path("home/.qwen")).unwrap();
        std::fs::write(
            self.path("home/.qwen/settings.json"),
            r#"{"memory":{"enableManagedAutoMemory":false}}"#,
        )
        .unwrap();
    }

    fn hook_log(&self) -> String {
        std::fs::read_to_string(self.path("mr/logs/hook.log")).unwrap_or_default()
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = self.command(&["stop"]).output();
        if let Some(mut child) = self.started.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn prompt_event(session: &str, cwd: &Path, prompt: &str) -> Value {
    json!({
        "session_id": session,
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": cwd,
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    })
}

fn tool_event(session: &str) -> Value {
    json!({"session_id": session, "hook_event_name": "PostToolUse", "tool_name": "Bash"})
}

fn stop_event(session: &str) -> Value {
    json!({"session_id": session, "hook_event_name": "Stop"})
}

/// The titles of the memories a context carries, in order.
fn titles(context: &str) -> Vec<String> {
    context
        .lines()
        .filter_map(|l| l.strip_prefix("### "))
        .map(|l| l.rsplit_once(" (").map_or(l, |(title, _)| title).to_owned())
        .collect()
}

fn topic(dir: &Path, file: &str, name: &str, description: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join(file),
        format!("---\nname: {name}\ndescription: {description}\ntype: project\n---\n\nBody.\n"),
    )
    .unwrap();
}

/// Three memories: the query finds the first two lexically, the model adds the third.
fn deploy_memories(dir: &Path) {
    topic(
        dir,
        "deploy.md",
        "Deploy checklist",
        "Steps to ship a release",
    );
    topic(
        dir,
        "rollback.md",
        "Rollback checklist",
        "Undo a bad release",
    );
    topic(dir, "grafana.md", "Checkout dashboard", "Grafana board");
}

const QUERY: &str = "release checklist";

/// A chat completion carrying `content`.
fn completion(content: &str) -> Value {
    json!({
        "id": "chatcmpl-e2e",
        "object": "chat.completion",
        "created": 1_796_040_000,
        "model": "m",
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": content },
            "finish_reason": "stop"
        }]
    })
}

/// A loopback model that picks `picks` after [`MODEL_DELAY`], on a runtime of its own.
fn slow_model(picks: &[PathBuf]) -> (tokio::runtime::Runtime, MockServer) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let answer = json!({ "selected_memories": picks }).to_string();
    let server = runtime.block_on(async {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(
                ResponseTemplate::new(200)
                    .set_body_json(completion(&answer))
                    .set_delay(MODEL_DELAY),
            )
            .mount(&server)
            .await;
        server
    });
    (runtime, server)
}

#[test]
fn the_prompt_gets_the_fast_result_and_the_next_tool_result_only_the_models_remaining_pick_once() {
    let mut world = World::new();
    let _model = world.serving_deploy_memories_with_a_slow_model(&["deploy.md", "grafana.md"]);

    let fast = world.hook(
        "claude-code",
        &prompt_event("s1", &world.path("repo"), QUERY),
    );
    let fast = titles(&fast);
    assert!(fast.contains(&"Deploy checklist".to_owned()), "{fast:?}");
    assert!(!fast.contains(&"Checkout dashboard".to_owned()), "{fast:?}");

    let refined = world.first_tool_result_delivery("s1");
    assert_eq!(titles(&refined), ["Checkout dashboard"]);
    assert_eq!(world.hook("claude-code", &tool_event("s1")), "");
}

#[test]
fn a_note_the_model_fetched_with_the_recall_tool_is_not_delivered_again_after_it() {
    let mut world = World::new();
    let _model = world.serving_deploy_memories_with_a_slow_model(&["deploy.md", "grafana.md"]);
    world.hook(
        "claude-code",
        &prompt_event("s1", &world.path("repo"), QUERY),
    );

    // The MCP tool's result, as Claude Code hands it to PostToolUse: content blocks.
    let fetched = json!({
        "session_id": "s1", "hook_event_name": "PostToolUse",
        "tool_name": "mcp__memrecall__recall_memories",
        "tool_input": {"query": "checkout dashboard"},
        "tool_response": [{"type": "text", "text": "1 memory recalled for \"checkout dashboard\" (lexical):\n1. Checkout dashboard (project, project scope, memory://project/grafana.md, saved today)\n"}],
    });
    let after_fetch = world.hook("claude-code", &fetched);

    // Until the recall has settled and been consumed, every later tool result asks again: the
    // model's remaining pick was fetched already, so none delivers anything.
    let deadline = Instant::now() + PATIENCE;
    let mut later = Vec::new();
    while world.status().unwrap()["pending_recalls"] != json!(0) {
        assert!(Instant::now() < deadline, "the recall never ended");
        later.push(world.hook("claude-code", &tool_event("s1")));
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(after_fetch, "");
    assert!(later.iter().all(String::is_empty), "{later:?}");
}

#[test]
fn the_stop_event_ends_the_turn_and_its_pending_recall_gets_its_terminal_event() {
    let mut world = World::new();
    let memory = world.claude_memory(&world.path("repo"));
    deploy_memories(&memory);
    let (_runtime, model) = slow_model(&[memory.join("grafana.md")]);
    world.selector(&model.uri());
    world.start_server();
    world.hook(
        "claude-code",
        &prompt_event("s1", &world.path("repo"), QUERY),
    );
    let before = world.status().unwrap();

    world.hook("claude-code", &stop_event("s1"));

    let after = world.status().unwrap();
    assert_eq!(
        (&before["pending_recalls"], &before["recalls_ended"]),
        (&json!(1), &json!(0)),
        "{before}"
    );
    assert_eq!(
        (&after["pending_recalls"], &after["recalls_ended"]),
        (&json!(0), &json!(1)),
        "{after}"
    );
    assert_eq!(world.hook("claude-code", &tool_event("s1")), "");
}

#[test]
fn a_second_session_in_parallel_never_sees_the_first_sessions_documents() {
    let mut world = World::new();
    let first = world.claude_memory(&world.path("repo"));
    deploy_memories(&first);
    let other_repo = world.repo("other");
    let second = world.claude_memory(&other_repo);
    topic(
        &second,
        "mobile.md",
        "Mobile release checklist",
        "Store review steps",
    );
    topic(
        &second,
        "beta.md",
        "Beta checklist",
        "Testers and release notes",
    );
    let (_runtime, model) = slow_model(&[first.join("deploy.md"), first.join("grafana.md")]);
    world.selector(&model.uri());
    world.start_server();

    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(|| {
            let fast = world.hook(
                "claude-code",
                &prompt_event("a", &world.path("repo"), QUERY),
            );
            (fast, world.first_tool_result_delivery("a"))
        });
        let b = scope.spawn(|| {
            let fast = world.hook("claude-code", &prompt_event("b", &other_repo, QUERY));
            // The model's picks are not the second session's candidates: its recall settles with
            // the lexical result, of which the fast phase already sent everything.
            let deadline = Instant::now() + PATIENCE;
            while world.status().unwrap()["pending_recalls"] != json!(0) {
                assert!(Instant::now() < deadline, "the recalls never settled");
                world.hook("claude-code", &tool_event("b"));
                std::thread::sleep(Duration::from_millis(50));
            }
            (fast, world.hook("claude-code", &tool_event("b")))
        });
        (a.join().unwrap(), b.join().unwrap())
    });

    let first_titles = [
        "Deploy checklist",
        "Rollback checklist",
        "Checkout dashboard",
    ];
    for context in [&b.0, &b.1] {
        for title in titles(context) {
            assert!(!first_titles.contains(&title.as_str()), "{title} in {b:?}");
        }
    }
    assert!(titles(&b.0).contains(&"Beta checklist".to_owned()), "{b:?}");
    assert_eq!(titles(&a.1), ["Checkout dashboard"]);
}

#[test]
fn a_second_session_on_the_same_project_is_given_what_the_first_was_given() {
    let mut world = World::new();
    deploy_memories(&world.claude_memory(&world.path("repo")));
    world.start_server();

    let first = world.hook(
        "claude-code",
        &prompt_event("a", &world.path("repo"), QUERY),
    );
    let again = world.hook(
        "claude-code",
        &prompt_event("a", &world.path("repo"), QUERY),
    );
    let second = world.hook(
        "claude-code",
        &prompt_event("b", &world.path("repo"), QUERY),
    );

    assert!(!first.is_empty());
    assert_eq!(again, "", "a session is not given a document twice");
    assert_eq!(titles(&second), titles(&first));
}

#[test]
fn a_session_end_starts_a_new_session_that_is_given_the_memory_again() {
    let mut world = World::new();
    deploy_memories(&world.claude_memory(&world.path("repo")));
    world.start_server();
    let prompt = prompt_event("a", &world.path("repo"), QUERY);

    let first = world.hook("claude-code", &prompt);
    let again = world.hook("claude-code", &prompt);
    world.hook(
        "claude-code",
        &json!({"session_id": "a", "hook_event_name": "SessionEnd"}),
    );
    let after_end = world.hook("claude-code", &prompt);

    assert!(!first.is_empty());
    assert_eq!(again, "", "a session is not given a document twice");
    assert_eq!(titles(&after_end), titles(&first));
}

#[test]
fn hooks_racing_with_no_server_running_start_one() {
    let world = World::new();
    deploy_memories(&world.claude_memory(&world.path("repo")));

    let contexts: Vec<String> = std::thread::scope(|scope| {
        let hooks: Vec<_> = (0..4)
            .map(|i| {
                let world = &world;
                scope.spawn(move || {
                    let event = prompt_event(&format!("s{i}"), &world.path("repo"), QUERY);
                    world.hook("claude-code", &event)
                })
            })
            .collect();
        hooks.into_iter().map(|h| h.join().unwrap()).collect()
    });

    for context in &contexts {
        assert!(
            titles(context).contains(&"Deploy checklist".to_owned()),
            "{context:?}"
        );
    }
    world.wait_for_server();
    let log = std::fs::read_to_string(world.path("mr/logs/serve.log")).unwrap();
    assert_eq!(log.matches("serving on").count(), 1, "{log}");
}

#[test]
fn a_killed_server_is_restarted_by_the_next_hook_and_the_prompt_still_gets_its_fast_result() {
    let mut world = World::new();
    deploy_memories(&world.claude_memory(&world.path("repo")));
    let killed = world.start_server();
    let mut child = world.started.take().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();

    let context = world.hook(
        "claude-code",
        &prompt_event("s1", &world.path("repo"), QUERY),
    );

    assert!(
        titles(&context).contains(&"Deploy checklist".to_owned()),
        "{context:?}"
    );
    let restarted = world.wait_for_server();
    assert_ne!(restarted, killed);
}

#[test]
fn a_socket_owned_by_another_uid_is_refused_and_the_prompt_is_recalled_in_the_hook() {
    use std::os::unix::fs::MetadataExt as _;
    let world = World::new();
    if std::fs::metadata(world.path("xdg")).unwrap().uid() != 0 {
        println!("not run: giving a socket to another user needs root");
        return;
    }
    deploy_memories(&world.claude_memory(&world.path("repo")));
    let run = world.path("xdg/memrecall");
    std::fs::create_dir(&run).unwrap();
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let socket = run.join("serve.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    std::os::unix::fs::lchown(&socket, Some(65534), Some(65534)).unwrap();

    let context = world.hook(
        "claude-code",
        &prompt_event("s1", &world.path("repo"), QUERY),
    );

    assert!(
        titles(&context).contains(&"Deploy checklist".to_owned()),
        "{context:?}"
    );
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the hook connected to a socket of another user"
    );
    assert!(
        world.hook_log().contains("belongs to uid 65534"),
        "{}",
        world.hook_log()
    );
}

#[test]
fn the_server_refuses_a_peer_of_another_uid() {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let mut world = World::new();
    if std::fs::metadata(world.path("xdg")).unwrap().uid() != 0 {
        println!("not run: connecting as another user needs root");
        return;
    }
    let Some(python) = ["/usr/bin/python3", "/bin/python3"]
        .into_iter()
        .find(|p| Path::new(p).is_file())
    else {
        println!("not run: no system python3 to connect as another user");
        return;
    };
    world.start_server();
    // Open the way for the other user, so that only the server's own check stands.
    for (path, mode) in [
        (world.base.clone(), 0o755),
        (world.path("xdg"), 0o755),
        (world.path("xdg/memrecall"), 0o755),
        (world.path("xdg/memrecall/serve.sock"), 0o777),
    ] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    // A connection closed or reset by the server prints nothing; a failure to connect fails.
    let script = "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\ntry:\n s.sendall(b'{\"v\":1,\"kind\":\"status\"}\\n')\n sys.stdout.write(s.makefile().readline())\nexcept ConnectionError:\n pass\n";
    let output = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            python,
            "-c",
            script,
        ])
        .arg(world.path("xdg/memrecall/serve.sock"))
        .output();
    let output = match output {
        Ok(output) => output,
        Err(e) => {
            println!("not run: setpriv cannot be started ({e})");
            return;
        }
    };
    if !output.status.success() {
        println!(
            "not run: the other user could not connect: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        return;
    }

    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "",
        "answered a foreign peer"
    );
    let log = std::fs::read_to_string(world.path("mr/logs/serve.log")).unwrap();
    assert!(log.contains("refused a peer of uid 65534"), "{log}");
}

#[test]
fn the_server_watches_the_memory_it_recalls_from_and_the_next_prompt_sees_a_new_memory() {
    let mut world = World::new();
    let memory = world.claude_memory(&world.path("repo"));
    deploy_memories(&memory);
    world.start_server();

    let first = world.hook(
        "claude-code",
        &prompt_event("a", &world.path("repo"), QUERY),
    );
    let status = world.status().expect("the server answers status");
    topic(
        &memory,
        "canary.md",
        "Canary rollout",
        "Ship to one region first",
    );
    let second = world.hook(
        "claude-code",
        &prompt_event("b", &world.path("repo"), "canary rollout"),
    );

    assert!(!first.is_empty());
    let watch = status["watch"].as_str().unwrap();
    assert!(
        watch.contains(&format!("{}: watched", memory.display())),
        "{watch}"
    );
    assert_eq!(titles(&second), ["Canary rollout"]);
}

#[test]
fn status_says_a_memory_root_that_is_not_there_does_not_exist_yet() {
    let mut world = World::new();
    let memory = world.serving_one_prompt();
    let root = memory.display().to_string();
    world.status_once(
        |status| status["watch"].as_str().unwrap().contains(&root),
        "the root was never scanned",
    );

    std::fs::remove_dir_all(&memory).unwrap();
    let output = world.command(&["status"]).output().unwrap();

    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.contains(&format!("{}: does not exist yet", memory.display())),
        "{text}"
    );
    assert!(!text.contains("cannot be watched"), "{text}");
}

#[test]
fn status_reports_the_topics_its_caches_hold_and_their_bytes() {
    let mut world = World::new();
    world.serving_one_prompt();
    let status = world.status_once(
        |status| status["footprint"]["topics"] == json!(3),
        "the three topics were never cached",
    );
    let footprint = &status["footprint"];

    assert!(
        footprint["document_text"].as_u64().unwrap() > 0,
        "{footprint}"
    );
    let output = world.command(&["status"]).output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("cached: 3 topics in "), "{text}");
}

/// Qwen Code's prompt event of `session`; after a tool result it sends it again with an empty
/// prompt.
fn qwen_prompt(session: &str, cwd: &Path, prompt: &str) -> Value {
    json!({
        "session_id": session, "prompt_id": format!("{session}########1"), "cwd": cwd,
        "hook_event_name": "UserPromptSubmit", "prompt": prompt
    })
}

/// Sends Qwen Code's empty-prompt continuation until something is delivered; `None` when the
/// session's recall settled without delivering anything to it (an answer that came too late
/// for the hook on a stalled machine).
fn qwen_continuation_delivery(world: &World, session: &str, repo: &Path) -> Option<String> {
    loop {
        let context = world.hook("qwen-code", &qwen_prompt(session, repo, ""));
        if !context.is_empty() {
            return Some(context);
        }
        if world.status().unwrap()["pending_recalls"] == json!(0) {
            let context = world.hook("qwen-code", &qwen_prompt(session, repo, ""));
            return (!context.is_empty()).then_some(context);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn with_qwen_codes_own_recall_on_its_notes_are_left_to_it_and_the_server_log_says_why() {
    let mut world = World::new();
    let repo = world.path("repo");
    let memory = world.path("home/.qwen/memories");
    deploy_memories(&memory);
    world.start_server();

    let context = world.hook("qwen-code", &qwen_prompt("q1", &repo, QUERY));

    assert_eq!(context, "");
    let log = std::fs::read_to_string(world.path("mr/logs/serve.log")).unwrap();
    assert!(
        log.contains("Qwen Code recalls the notes there itself (memory.enableManagedAutoMemory is on by default)"),
        "{log}"
    );
}

#[test]
fn qwen_codes_empty_prompt_continuation_gets_the_models_remaining_pick_once() {
    let mut world = World::new();
    let repo = world.path("repo");
    let dashed: String = repo
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let memory = world
        .path("home/.qwen/projects")
        .join(dashed)
        .join("memory");
    deploy_memories(&memory);
    world.qwen_own_recall_off();
    let (_runtime, model) = slow_model(&[memory.join("deploy.md"), memory.join("grafana.md")]);
    world.selector(&model.uri());
    world.start_server();

    // Each attempt its own session; one that a stalled machine made miss the 100 ms initial
    // point, or whose refined answer came too late for the hook, is ended and made again.
    let deadline = Instant::now() + PATIENCE;
    let mut attempt = 0;
    let (session, refined) = loop {
        assert!(
            Instant::now() < deadline,
            "no attempt got fast and refined deliveries"
        );
        attempt += 1;
        let session = format!("q{attempt}");
        let fast = titles(&world.hook("qwen-code", &qwen_prompt(&session, &repo, QUERY)));
        if fast.contains(&"Deploy checklist".to_owned())
            && let Some(refined) = qwen_continuation_delivery(&world, &session, &repo)
        {
            break (session, refined);
        }
        world.hook(
            "qwen-code",
            &json!({"session_id": session, "hook_event_name": "Stop"}),
        );
    };

    assert_eq!(titles(&refined), ["Checkout dashboard"]);
    assert_eq!(
        world.hook("qwen-code", &qwen_prompt(&session, &repo, "")),
        ""
    );
    assert_eq!(
        world.hook("qwen-code", &qwen_prompt(&session, &repo, QUERY)),
        ""
    );
}

/// Huge pages left most of each 2 MiB the allocator touched unused (see `small_pages` in the
/// binary's `main.rs`).
#[cfg(target_os = "linux")]
#[test]
fn the_server_runs_without_transparent_huge_pages() {
    let mut world = World::new();
    let pid = world.start_server();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let thp = status
        .lines()
        .find_map(|line| line.strip_prefix("THP_enabled:"))
        .expect("this kernel says whether a process may use transparent huge pages");
    assert_eq!(thp.trim(), "0", "{status}");
}
