//! What hostile or broken clients of the server's socket get: a flood of connections under a
//! small descriptor limit, a client that never sends, one that sends without end, many large
//! requests at once. The server drops each, logs it once per burst (never once per client), keeps
//! its log bounded, and answers the next hook.

use std::io::{Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{PATIENCE, QUERY, World, deploy_memories, prompt_event, titles};

/// The server log's bound (the hook log's), plus the longest line that may end past it.
const LOG_BOUND: u64 = 512 * 1024 + 4096;
/// Connections a flood opens.
const FLOOD: usize = 1_200;
/// The descriptor limit the server runs under in the flood tests.
const FILES: u32 = 256;
/// More log lines than this for one flood is a line per connection, not per burst: a line per
/// connection is about `FLOOD` lines, while a stalled machine may split one flood into a few
/// dozen bursts (held connections reach their deadline and free a slot for the next).
const FEW_LINES: usize = FLOOD / 10;

impl World {
    fn socket(&self) -> PathBuf {
        self.path("xdg/memrecall/serve.sock")
    }

    fn server_log(&self) -> String {
        std::fs::read_to_string(self.path("mr/logs/serve.log")).unwrap_or_default()
    }

    /// The server's log once it holds `line` (the server may write it just after it closed the
    /// connection the line is about), or as it is after [`PATIENCE`].
    fn server_log_with(&self, line: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let log = self.server_log();
            if log.contains(line) || Instant::now() > deadline {
                return log;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts `memrecall serve` with `args` allowed at most `files` open descriptors; `false`
    /// when there is no `prlimit` to set the limit with.
    fn start_limited_server(&mut self, files: u32, args: &[&str]) -> bool {
        let Some(prlimit) = ["/usr/bin/prlimit", "/bin/prlimit"]
            .into_iter()
            .find(|p| Path::new(p).is_file())
        else {
            return false;
        };
        let mut serve = vec!["serve"];
        serve.extend_from_slice(args);
        let plain = self.command(&serve);
        let mut limited = Command::new(prlimit);
        limited
            .arg(format!("--nofile={files}"))
            .arg("--")
            .arg(plain.get_program())
            .args(plain.get_args())
            .env_clear()
            .envs(plain.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .current_dir(self.path("repo"));
        self.spawn_server(limited);
        true
    }

    /// The server's status, asked again while it is refused (a connection over the bound is
    /// closed unanswered while the flood's connections are still being closed).
    fn status_after_flood(&self) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let output = self.command(&["status", "--json"]).output().unwrap();
            if output.status.success()
                && let Ok(status) = serde_json::from_slice::<Value>(&output.stdout)
                && !status.is_null()
            {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the server did not answer status within {PATIENCE:?}: {}\nits log:\n{}",
                String::from_utf8_lossy(&output.stderr),
                self.server_log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Prompt recalls the server has begun.
    fn recalls_served(&self) -> u64 {
        self.status_after_flood()["recalls_served"]
            .as_u64()
            .unwrap()
    }

    /// Asserts a prompt hook reaches the server and gets the memory it asks for: the hook is
    /// run again (it may recall in its own process when the server is slow to answer) until
    /// the server counts one more recall.
    fn assert_a_hook_is_served(&self) {
        let before = self.recalls_served();
        let deadline = Instant::now() + PATIENCE;
        loop {
            let context = self.hook(
                "claude-code",
                &prompt_event("after", &self.path("repo"), QUERY),
            );
            assert!(
                titles(&context).contains(&"Deploy checklist".to_owned()),
                "{context:?}"
            );
            if self.recalls_served() > before {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "no hook reached the server within {PATIENCE:?}; its log:\n{}",
                self.server_log()
            );
        }
    }

    fn assert_log_bounded(&self) {
        for name in ["serve.log", "serve.log.1"] {
            let size = std::fs::metadata(self.path("mr/logs").join(name)).map_or(0, |m| m.len());
            assert!(size <= LOG_BOUND, "{name} has {size} bytes");
        }
    }
}

/// Opens [`FLOOD`] connections that never send; `None` when this process may not hold that
/// many.
fn flood(socket: &Path) -> Option<Vec<UnixStream>> {
    let mut held = Vec::with_capacity(FLOOD);
    for i in 0..FLOOD {
        match UnixStream::connect(socket) {
            Ok(stream) => held.push(stream),
            Err(e) if e.raw_os_error() == Some(24) => {
                println!("not run: this process may open only about {i} files ({e})");
                return None;
            }
            Err(e) => panic!("connection {i} failed: {e}"),
        }
    }
    Some(held)
}

/// Waits until the server closes `stream` (end of file, or a reset when it left bytes unread),
/// reading any answer it sends first; fails when the connection is still open after
/// [`PATIENCE`].
fn wait_until_closed(stream: &mut UnixStream) {
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut answer = [0; 4096];
    loop {
        match stream.read(&mut answer) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return,
            Err(e) => panic!("the connection is still open after {PATIENCE:?} ({e})"),
        }
    }
}

#[test]
fn a_client_that_never_sends_is_dropped_after_the_request_deadline_and_the_server_goes_on() {
    let mut world = World::new();
    let serve = world.command(&["serve", "--request-deadline", "300ms"]);
    world.spawn_server(serve);

    let connected = Instant::now();
    let mut silent = UnixStream::connect(world.socket()).unwrap();
    wait_until_closed(&mut silent);

    assert!(connected.elapsed() >= Duration::from_millis(300));
    let dropped = "dropped a client: no complete request within 300ms";
    let log = world.server_log_with(dropped);
    assert!(log.contains(dropped), "{log}");
    assert!(world.status().is_some());
}

#[test]
fn a_client_that_sends_ten_megabytes_without_a_newline_is_dropped_and_the_server_goes_on() {
    let mut world = World::new();
    world.start_server();

    let mut stream = UnixStream::connect(world.socket()).unwrap();
    let mut writer = stream.try_clone().unwrap();
    writer.set_write_timeout(Some(PATIENCE)).unwrap();
    let sender = std::thread::spawn(move || {
        let chunk = vec![b'x'; 1024 * 1024];
        // The server stops reading past its bound; the write then fails.
        for _ in 0..10 {
            if writer.write_all(&chunk).is_err() {
                return;
            }
        }
    });
    wait_until_closed(&mut stream);
    sender.join().unwrap();

    let dropped = "dropped a client: the line is over 8388608 bytes";
    let log = world.server_log_with(dropped);
    assert!(log.contains(dropped), "{log}");
    assert!(world.status().is_some());
}

#[test]
fn twelve_hundred_connections_under_a_limit_of_256_descriptors_leave_the_server_answering_hooks_with_a_bounded_log()
 {
    let mut world = World::new();
    deploy_memories(&world.claude_memory(&world.path("repo")));
    if !world.start_limited_server(FILES, &[]) {
        println!("not run: no prlimit to limit the server's descriptors");
        return;
    }

    let Some(held) = flood(&world.socket()) else {
        return;
    };
    drop(held);

    world.assert_a_hook_is_served();
    world.assert_log_bounded();
    let log = world.server_log();
    assert!(log.contains("connections open: closing new ones"), "{log}");
    assert!(log.lines().count() < FEW_LINES, "{log}");
}

#[test]
fn accept_failing_for_want_of_descriptors_backs_off_logs_once_per_burst_and_recovers() {
    let mut world = World::new();
    deploy_memories(&world.claude_memory(&world.path("repo")));
    // A connection bound over the descriptor limit, so that accepting runs out of descriptors.
    let args = ["--max-connections", "5000", "--request-deadline", "1s"];
    if !world.start_limited_server(FILES, &args) {
        println!("not run: no prlimit to limit the server's descriptors");
        return;
    }

    let Some(held) = flood(&world.socket()) else {
        return;
    };
    drop(held);

    world.assert_a_hook_is_served();
    world.assert_log_bounded();
    let log = world.server_log();
    let failures = log.matches("accept failed: Too many open files").count();
    assert!(
        failures >= 1,
        "the descriptor limit was never reached:\n{log}"
    );
    assert!(failures < FEW_LINES, "{failures} lines:\n{log}");
    assert!(log.contains("accepting again after"), "{log}");
}

#[test]
fn a_server_log_over_its_bound_is_moved_aside_when_the_server_next_logs() {
    let mut world = World::new();
    let old = "old line\n".repeat(70_000);
    std::fs::create_dir_all(world.path("mr/logs")).unwrap();
    std::fs::write(world.path("mr/logs/serve.log"), &old).unwrap();

    world.start_server();

    assert_eq!(
        std::fs::read_to_string(world.path("mr/logs/serve.log.1")).unwrap(),
        old
    );
    let log = world.server_log();
    assert!(log.contains("serving on"), "{log}");
    assert!(!log.contains("old line"), "{log}");
}

#[test]
fn twenty_clients_each_sending_seven_megabytes_without_a_newline_add_little_to_the_servers_peak_memory()
 {
    const CLIENTS: usize = 20;
    const BYTES: usize = 7 * 1024 * 1024;
    /// A server holding every byte it is sent would grow by 150 MB in this flood.
    const MAX_GROWTH_KIB: u64 = 64 * 1024;
    let mut world = World::new();
    let serve = world.command(&["serve", "--request-deadline", "2s"]);
    world.spawn_server(serve);
    let peak =
        |world: &World| world.status().expect("the server answers status")["peak_rss_kib"].as_u64();
    let Some(before) = peak(&world) else {
        println!("not run: the server cannot read its peak memory here");
        return;
    };

    std::thread::scope(|scope| {
        for _ in 0..CLIENTS {
            let socket = world.socket();
            scope.spawn(move || {
                let mut stream = UnixStream::connect(socket).unwrap();
                let mut writer = stream.try_clone().unwrap();
                writer.set_write_timeout(Some(PATIENCE)).unwrap();
                let sender = std::thread::spawn(move || {
                    let _ = writer.write_all(&vec![b'x'; BYTES]);
                });
                wait_until_closed(&mut stream);
                sender.join().unwrap();
            });
        }
    });

    let after = peak(&world).unwrap();
    assert!(
        after.saturating_sub(before) < MAX_GROWTH_KIB,
        "peak memory grew from {before} KiB to {after} KiB"
    );
}
