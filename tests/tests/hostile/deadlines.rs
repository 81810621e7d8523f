//! Every wait has a deadline: a listener at the server's socket that never accepts (its backlog
//! full) or never answers, a listener that claims to be stopping, a named pipe in place of a
//! file memrecall keeps for itself, and a server whose answer is over the agent's budget. Each
//! run is killed after `HANG`, which fails the test, so a regression fails instead of hanging.

#![cfg(target_os = "linux")]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::support::binary;

/// A run still going after this hangs: it is killed and the test fails.
const HANG: Duration = Duration::from_secs(10);
/// What a hook may take when no server can be reached: its connect budget is 100 ms and its
/// answer budget 250 ms; the rest is the recall in its own process on a slow machine.
const HOOK_BOUND: Duration = Duration::from_secs(3);
/// What `status`, `stop` and `doctor` may take against a server that does not answer: their
/// deadline is under 2 s.
const CONTROL_BOUND: Duration = Duration::from_secs(5);
/// What an agent accepts, in UTF-16 units (`agent_hooks::hook_io::MAX_CONTEXT_UTF16`).
const MAX_CONTEXT_UTF16: usize = 9_000;

/// `home/` as `HOME`, `mr/` as `MEMRECALL_HOME`, `xdg/` as `XDG_RUNTIME_DIR`, a git repository
/// `repo/` with one memory in Claude Code's memory directory for it.
struct World {
    _dir: TempDir,
    base: PathBuf,
}

#[derive(Debug)]
struct Finished {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl World {
    fn new() -> Self {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        for sub in ["home", "mr", "xdg", "repo/.git"] {
            std::fs::create_dir_all(base.join(sub)).unwrap();
        }
        std::fs::set_permissions(base.join("xdg"), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(base.join("repo/.git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(
            base.join("mr/config.toml"),
            "[serve]\nidle_exit = \"60s\"\n",
        )
        .unwrap();
        let world = Self { _dir: dir, base };
        let dashed: String = world
            .path("repo")
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let memory = world
            .path("home/.claude/projects")
            .join(dashed)
            .join("memory");
        std::fs::create_dir_all(&memory).unwrap();
        std::fs::write(
            memory.join("deploy.md"),
            "---\nname: Deploy checklist\ndescription: Steps to ship a release\ntype: project\n---\n\nRun the smoke tests.\n",
        )
        .unwrap();
        world
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.base.join(relative)
    }

    /// The server's run directory, made private.
    fn run_dir(&self) -> PathBuf {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = self.path("xdg/memrecall");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        dir
    }

    fn socket(&self) -> PathBuf {
        self.run_dir().join("serve.sock")
    }

    /// Runs the binary with `stdin`, killing it (and failing) once it runs past [`HANG`].
    fn try_run(&self, args: &[&str], stdin: &str) -> Result<Finished, String> {
        let started = Instant::now();
        let mut child = Command::new(binary())
            .args(args)
            .current_dir(self.path("repo"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .env("MEMRECALL_HOME", self.path("mr"))
            .env("XDG_RUNTIME_DIR", self.path("xdg"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        let _ = input.write_all(stdin.as_bytes());
        drop(input);
        let read = |mut pipe: Box<dyn std::io::Read + Send>| {
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = pipe.read_to_string(&mut text);
                text
            })
        };
        let stdout = read(Box::new(child.stdout.take().unwrap()));
        let stderr = read(Box::new(child.stderr.take().unwrap()));
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                let took = started.elapsed();
                return Ok(Finished {
                    code: status.code(),
                    stdout: stdout.join().unwrap(),
                    stderr: stderr.join().unwrap(),
                    took,
                });
            }
            if started.elapsed() > HANG {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{args:?} hung: killed after {HANG:?}"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn run(&self, args: &[&str]) -> Finished {
        self.try_run(args, "")
            .unwrap_or_else(|hang| panic!("{hang}"))
    }

    /// A Claude Code prompt event through the hook; asserts exit 0 within [`HOOK_BOUND`].
    fn hook(&self) -> Finished {
        let event = json!({
            "session_id": "s1",
            "cwd": self.path("repo"),
            "hook_event_name": "UserPromptSubmit",
            "prompt": "deploy checklist",
        });
        let run = self
            .try_run(&["hook", "--agent", "claude-code"], &event.to_string())
            .unwrap_or_else(|hang| panic!("{hang}"));
        assert_eq!(run.code, Some(0), "{run:?}");
        assert!(run.took < HOOK_BOUND, "the hook took {:?}", run.took);
        run
    }

    /// `status`, `stop` and `doctor`, each asserted to return within [`CONTROL_BOUND`].
    fn controls(&self) -> Vec<Finished> {
        ["status", "stop", "doctor"]
            .iter()
            .map(|command| {
                let run = self.run(&[command]);
                assert!(run.took < CONTROL_BOUND, "{command} took {:?}", run.took);
                run
            })
            .collect()
    }

    /// The hook's log; empty when it is not a regular file (reading a named pipe would wait).
    fn hook_log(&self) -> String {
        let path = self.path("mr/logs/hook.log");
        if !std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_file()) {
            return String::new();
        }
        std::fs::read_to_string(path).unwrap_or_default()
    }
}

impl Drop for World {
    /// Stops a server a hook started, if one runs; a run that hangs is left to its kill.
    fn drop(&mut self) {
        let _ = self.try_run(&["stop"], "");
    }
}

/// A listener at `path` that never accepts, with its backlog full: connecting to it in the
/// ordinary, blocking way waits forever. The connections queued are returned with it.
fn full_listener(path: &Path) -> (OwnedFd, Vec<OwnedFd>) {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
    let address = SocketAddrUnix::new(path).unwrap();
    let listener = rustix::net::socket(AddressFamily::UNIX, SocketType::STREAM, None).unwrap();
    rustix::net::bind(&listener, &address).unwrap();
    rustix::net::listen(&listener, 0).unwrap();
    let mut queued = Vec::new();
    loop {
        assert!(queued.len() < 1000, "the backlog never filled");
        let client = rustix::net::socket_with(
            AddressFamily::UNIX,
            SocketType::STREAM,
            SocketFlags::NONBLOCK,
            None,
        )
        .unwrap();
        match rustix::net::connect(&client, &address) {
            Ok(()) => queued.push(client),
            Err(rustix::io::Errno::AGAIN) => return (listener, queued),
            Err(e) => panic!("connecting to fill the backlog: {e}"),
        }
    }
}

/// A listener at `path` that answers each connection's request with `answer` (one line).
fn answering(path: &Path, answer: Value) -> std::thread::JoinHandle<()> {
    let listener = UnixListener::bind(path).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut request = String::new();
            let _ = BufReader::new(&stream).read_line(&mut request);
            let _ = stream.write_all(format!("{answer}\n").as_bytes());
        }
    })
}

fn make_fifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn a_hook_exits_0_within_its_budget_when_the_servers_backlog_is_full() {
    let world = World::new();
    let _listener = full_listener(&world.socket());

    let run = world.hook();

    assert!(run.stdout.contains("Deploy checklist"), "{run:?}");
    assert!(
        world
            .hook_log()
            .contains("no server answered within the budget"),
        "{}",
        world.hook_log()
    );
}

#[test]
fn a_hook_exits_0_within_its_budget_when_the_listener_never_answers() {
    let world = World::new();
    let _listener = UnixListener::bind(world.socket()).unwrap();

    let run = world.hook();

    assert!(run.stdout.contains("Deploy checklist"), "{run:?}");
}

#[test]
fn status_stop_and_doctor_return_within_2_s_when_the_servers_backlog_is_full() {
    let world = World::new();
    let _listener = full_listener(&world.socket());

    for run in world.controls() {
        assert_ne!(run.code, Some(0), "{run:?}");
        assert!(
            format!("{}{}", run.stdout, run.stderr).contains("no server answered"),
            "{run:?}"
        );
    }
}

#[test]
fn status_stop_and_doctor_return_within_2_s_when_the_listener_never_answers() {
    let world = World::new();
    let _listener = UnixListener::bind(world.socket()).unwrap();

    for run in world.controls() {
        assert_ne!(run.code, Some(0), "{run:?}");
        assert!(
            format!("{}{}", run.stdout, run.stderr).contains("no server answered"),
            "{run:?}"
        );
    }
}

/// A real server, stopped with `SIGSTOP` (and resumed and stopped when dropped).
struct StoppedServer<'w> {
    world: &'w World,
    child: std::process::Child,
}

impl<'w> StoppedServer<'w> {
    fn start(world: &'w World) -> Self {
        let child = Command::new(binary())
            .arg("serve")
            .current_dir(world.path("repo"))
            .env_clear()
            .env("HOME", world.path("home"))
            .env("MEMRECALL_HOME", world.path("mr"))
            .env("XDG_RUNTIME_DIR", world.path("xdg"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // `status` exits 0 when no server runs too: wait until it names the server's pid.
        let started = Instant::now();
        let serving = || {
            serde_json::from_str::<serde_json::Value>(&world.run(&["status", "--json"]).stdout)
                .is_ok_and(|status| status["pid"].as_u64() == Some(u64::from(child.id())))
        };
        while !serving() {
            assert!(started.elapsed() < HANG, "the server never answered");
            std::thread::sleep(Duration::from_millis(20));
        }
        signal(child.id(), "-STOP");
        Self { world, child }
    }
}

impl Drop for StoppedServer<'_> {
    fn drop(&mut self) {
        signal(self.child.id(), "-CONT");
        let _ = self.world.try_run(&["stop"], "");
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .arg(signal)
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn a_hook_status_stop_and_doctor_return_in_bound_when_the_server_is_stopped() {
    let world = World::new();
    let _server = StoppedServer::start(&world);

    world.hook();
    for run in world.controls() {
        assert_ne!(run.code, Some(0), "{run:?}");
    }
}

#[test]
fn stop_does_not_claim_to_have_stopped_a_listener_that_answers_stopping_for_pid_1() {
    let world = World::new();
    let _listener = answering(
        &world.socket(),
        json!({"v": recall_server::protocol::VERSION, "kind": "stopping", "pid": 1}),
    );

    let run = world.run(&["stop"]);

    assert_ne!(run.code, Some(0), "{run:?}");
    assert!(!run.stdout.contains("stopped"), "{run:?}");
    assert!(run.stderr.contains("did not confirm"), "{run:?}");
}

#[test]
fn a_context_over_the_agents_budget_from_the_server_is_cut_to_it() {
    let world = World::new();
    let context = format!("# Memory from elsewhere\n\n{}", "x".repeat(100_000));
    let _listener = answering(
        &world.socket(),
        json!({"v": recall_server::protocol::VERSION, "kind": "delivery", "context": context}),
    );

    let run = world.hook();

    let printed: Value = serde_json::from_str(&run.stdout).unwrap();
    let added = printed["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("{run:?}"));
    assert!(added.starts_with("# Memory from elsewhere"), "{added:.80}");
    assert!(
        added.encode_utf16().count() <= MAX_CONTEXT_UTF16,
        "{} UTF-16 units printed",
        added.encode_utf16().count()
    );
}

/// Runs the hook, `status`, `stats` and `doctor` with a named pipe at `relative` (under the
/// world); each returns within its bound, the hook with exit 0. Returns the hook log and the
/// runs of `stats` and `doctor`.
fn with_a_fifo_at(world: &World, fifo: &Path) -> (String, Finished, Finished) {
    make_fifo(fifo);
    world.hook();
    let status = world.run(&["status"]);
    assert!(status.took < CONTROL_BOUND, "status took {:?}", status.took);
    let stats = world.run(&["stats"]);
    assert!(stats.took < CONTROL_BOUND, "stats took {:?}", stats.took);
    let doctor = world.run(&["doctor"]);
    assert!(doctor.took < CONTROL_BOUND, "doctor took {:?}", doctor.took);
    (world.hook_log(), stats, doctor)
}

#[test]
fn a_fifo_at_the_server_lock_is_said_and_waits_on_nothing() {
    let world = World::new();
    let fifo = world.run_dir().join("serve.lock");

    let (log, _, _) = with_a_fifo_at(&world, &fifo);

    assert!(log.contains("serve.lock is a named pipe"), "{log}");
}

#[test]
fn a_fifo_at_the_server_log_is_said_and_waits_on_nothing() {
    let world = World::new();
    let fifo = world.path("mr/logs/serve.log");

    let (log, _, _) = with_a_fifo_at(&world, &fifo);

    assert!(log.contains("serve.log is a named pipe"), "{log}");
}

#[test]
fn a_fifo_at_the_hook_log_is_said_by_doctor_and_waits_on_nothing() {
    let world = World::new();
    let fifo = world.path("mr/logs/hook.log");

    let (_, _, doctor) = with_a_fifo_at(&world, &fifo);

    assert!(
        doctor.stdout.contains("hook.log is a named pipe"),
        "{doctor:?}"
    );
}

#[test]
fn a_fifo_at_the_configuration_file_is_said_and_waits_on_nothing() {
    let world = World::new();
    let fifo = world.path("mr/config.toml");
    std::fs::remove_file(&fifo).unwrap();

    let (log, _, doctor) = with_a_fifo_at(&world, &fifo);

    assert!(log.contains("config.toml is a named pipe"), "{log}");
    assert!(
        doctor.stdout.contains("config.toml is a named pipe"),
        "{doctor:?}"
    );
}

#[test]
fn a_fifo_at_a_telemetry_file_is_said_and_waits_on_nothing() {
    let world = World::new();
    let today = &humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()[..10];
    let fifo = world.path(&format!("mr/telemetry/{today}.0000.jsonl"));

    let (_, stats, _) = with_a_fifo_at(&world, &fifo);

    assert!(
        format!("{}{}", stats.stdout, stats.stderr).contains("named pipe"),
        "{stats:?}"
    );
}
