//! Hostile repositories and homes: what a cloned repository (or a broken home) puts where
//! memrecall looks, run through the built binary. Each run is bounded in time (`timeout`: a hang
//! fails the test) and in address space (`prlimit --as`: reading `/dev/zero` into memory fails
//! the run instead of the machine); the hook exits 0 and logs one line saying why; and nothing
//! is written outside memrecall's own directories and the memory roots (the tree is listed
//! before and after).

#![cfg(target_os = "linux")]

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tempfile::TempDir;

use crate::support::binary;

/// Far beyond any hook's normal time; reaching it means a hang.
const HANG: Duration = Duration::from_mins(1);
/// The address space a run may use: a whole recall fits easily, a read of `/dev/zero` does not.
const ADDRESS_SPACE_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// `home/` as `HOME`, `mr/` as `MEMRECALL_HOME`, `xdg/` as `XDG_RUNTIME_DIR`, a git
/// repository `repo/` and a directory `outside/` that nothing may touch.
struct World {
    _dir: TempDir,
    base: PathBuf,
}

struct Finished {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl World {
    fn new() -> Self {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        for sub in ["home", "mr", "xdg", "repo/.git", "repo/.claude", "outside"] {
            std::fs::create_dir_all(base.join(sub)).unwrap();
        }
        std::fs::set_permissions(base.join("xdg"), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(base.join("outside/victim.txt"), "keep\n").unwrap();
        Self { _dir: dir, base }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.base.join(relative)
    }

    /// Claude Code's memory directory for the repository, with one memory in it.
    fn claude_memory(&self) -> PathBuf {
        let dashed: String = self
            .path("repo")
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let memory = self
            .path("home/.claude/projects")
            .join(dashed)
            .join("memory");
        write_topic(&memory.join("deploy.md"), "Deploy checklist");
        memory
    }

    /// Runs the binary bounded in time and address space, from the repository.
    fn run(&self, args: &[&str], stdin: &str) -> Finished {
        let started = Instant::now();
        let mut child = Command::new("prlimit")
            .arg(format!("--as={ADDRESS_SPACE_BYTES}"))
            .arg("--")
            .arg("timeout")
            .arg("--kill-after=5")
            .arg(HANG.as_secs().to_string())
            .arg(binary())
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
            .expect("prlimit, timeout and memrecall can be started");
        let mut input = child.stdin.take().unwrap();
        let _ = input.write_all(stdin.as_bytes());
        drop(input);
        let output = child.wait_with_output().unwrap();
        assert_ne!(
            output.status.code(),
            Some(124),
            "{args:?} hung: killed after {:?}",
            started.elapsed()
        );
        Finished {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// A Claude Code prompt event through the hook; asserts exit 0.
    fn claude_hook(&self, prompt: &str) -> Finished {
        let event = json!({
            "session_id": "s1",
            "cwd": self.path("repo"),
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        });
        let run = self.run(&["hook", "--agent", "claude-code"], &event.to_string());
        assert_eq!(run.code, Some(0), "stderr: {}", run.stderr);
        run
    }

    fn hook_log(&self) -> String {
        std::fs::read_to_string(self.path("mr/logs/hook.log")).unwrap_or_default()
    }

    fn serve_log(&self) -> String {
        std::fs::read_to_string(self.path("mr/logs/serve.log")).unwrap_or_default()
    }

    /// Every path below the world outside memrecall's own directories (`mr/`, `xdg/`) and the
    /// memory roots given, with each regular file's length and contents' hash.
    fn listing(&self, roots: &[&Path]) -> BTreeMap<PathBuf, String> {
        let own = [self.path("mr"), self.path("xdg")];
        let mut listing = BTreeMap::new();
        let mut stack = vec![self.base.clone()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if own.contains(&path) || roots.contains(&path.as_path()) {
                    continue;
                }
                let metadata = std::fs::symlink_metadata(&path).unwrap();
                let what = if metadata.is_dir() {
                    stack.push(path.clone());
                    "dir".to_owned()
                } else if metadata.is_file() {
                    let bytes = std::fs::read(&path).unwrap();
                    format!("file {} {:?}", bytes.len(), &bytes[..bytes.len().min(64)])
                } else {
                    format!("{:?}", metadata.file_type())
                };
                listing.insert(path, what);
            }
        }
        listing
    }

    /// Stops this world's server, if one runs, so that it writes its catalogs and exits.
    fn stop_server(&self) {
        let _ = self.run(&["stop"], "");
    }
}

impl Drop for World {
    fn drop(&mut self) {
        self.stop_server();
    }
}

fn write_topic(path: &Path, title: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!("---\nname: {title}\ndescription: Steps to ship a release\ntype: project\n---\n\nRun the smoke tests.\n"),
    )
    .unwrap();
}

fn make_fifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn a_local_settings_file_linked_to_dev_zero_is_refused_and_the_hook_still_recalls() {
    let world = World::new();
    let memory = world.claude_memory();
    std::os::unix::fs::symlink("/dev/zero", world.path("repo/.claude/settings.local.json"))
        .unwrap();
    let before = world.listing(&[&memory]);

    world.claude_hook("deploy checklist");

    assert_eq!(world.listing(&[&memory]), before);
    let log = world.hook_log();
    assert!(
        log.lines()
            .any(|l| l.contains("settings.local.json is a device")),
        "{log}"
    );
}

#[test]
fn a_served_prompt_resolves_its_roots_once_in_the_server() {
    let world = World::new();
    world.claude_memory();
    std::os::unix::fs::symlink("/dev/zero", world.path("repo/.claude/settings.local.json"))
        .unwrap();
    let deadline = Instant::now() + HANG;
    // A prompt the server answered in time; one a busy machine left to the hook's own process
    // resolves there instead, and is run again.
    let log = loop {
        let _ = std::fs::remove_file(world.path("mr/logs/hook.log"));
        world.claude_hook("deploy checklist");
        let log = world.hook_log();
        if !log.contains("recalling in this process") {
            break log;
        }
        assert!(Instant::now() < deadline, "no prompt was served: {log}");
    };

    let ignored: Vec<_> = log
        .lines()
        .filter(|l| l.contains("settings.local.json is a device"))
        .collect();
    assert_eq!(ignored.len(), 1, "{log}");
    assert!(ignored[0].contains("server: ignored: "), "{log}");
}

#[test]
fn a_local_settings_file_that_is_a_fifo_does_not_hang_the_hook() {
    let world = World::new();
    let memory = world.claude_memory();
    make_fifo(&world.path("repo/.claude/settings.local.json"));
    let before = world.listing(&[&memory]);

    world.claude_hook("deploy checklist");

    assert_eq!(world.listing(&[&memory]), before);
    let log = world.hook_log();
    assert!(
        log.lines()
            .any(|l| l.contains("settings.local.json is a named pipe")),
        "{log}"
    );
}

#[test]
fn a_git_file_whose_commondir_is_a_fifo_does_not_hang_the_hook() {
    let world = World::new();
    // `repo` becomes a linked worktree of `main`, whose commondir is a FIFO.
    std::fs::remove_dir_all(world.path("repo/.git")).unwrap();
    let admin = world.path("main/.git/worktrees/repo");
    std::fs::create_dir_all(&admin).unwrap();
    make_fifo(&admin.join("commondir"));
    std::fs::write(
        world.path("repo/.git"),
        format!("gitdir: {}\n", admin.display()),
    )
    .unwrap();
    let memory = world.claude_memory();
    let before = world.listing(&[&memory]);

    let run = world.claude_hook("deploy checklist");

    assert_eq!(world.listing(&[&memory]), before);
    assert!(run.stdout.is_empty() || run.stdout.contains("Deploy checklist"));
}

#[test]
fn a_config_linked_to_dev_zero_is_refused_with_its_reason_and_recall_goes_on_without_a_selector() {
    let world = World::new();
    let memory = world.claude_memory();
    std::os::unix::fs::symlink("/dev/zero", world.path("mr/config.toml")).unwrap();
    let before = world.listing(&[&memory]);

    world.claude_hook("deploy checklist");
    world.stop_server();

    assert_eq!(world.listing(&[&memory]), before);
    let logs = format!("{}{}", world.hook_log(), world.serve_log());
    assert!(logs.contains("config.toml is a device"), "{logs}");
    let recall = world.run(
        &[
            "recall",
            "--project",
            memory.to_str().unwrap(),
            "deploy checklist",
        ],
        "",
    );
    assert_ne!(recall.code, Some(0));
    assert_eq!(recall.stderr.lines().count(), 1, "{}", recall.stderr);
    assert!(recall.stderr.contains("is a device"), "{}", recall.stderr);
}

#[test]
fn a_committed_auto_memory_directory_outside_the_project_is_read_but_never_written() {
    let world = World::new();
    let chosen = world.path("outside/memory");
    write_topic(&chosen.join("planted.md"), "Deploy checklist planted");
    std::fs::write(
        world.path("repo/.claude/settings.local.json"),
        json!({"autoMemoryDirectory": chosen}).to_string(),
    )
    .unwrap();
    let before = world.listing(&[]);

    // As Claude Code itself does, the setting is honoured for reading.
    let run = world.claude_hook("deploy checklist");
    world.stop_server();

    assert!(
        run.stdout.is_empty() || run.stdout.contains("planted"),
        "{}",
        run.stdout
    );
    assert_eq!(world.listing(&[]), before, "nothing written outside");
    assert!(!chosen.join(".memrecall").exists());
    let roots = world.run(&["roots", "--layout", "claude-code"], "");
    assert_eq!(roots.code, Some(0), "{}", roots.stderr);
}

#[test]
fn a_catalog_for_a_root_a_repository_chose_is_kept_under_the_memrecall_home() {
    let world = World::new();
    let chosen = world.path("outside/memory");
    write_topic(&chosen.join("planted.md"), "Deploy checklist planted");
    std::fs::write(
        world.path("repo/.claude/settings.local.json"),
        json!({"autoMemoryDirectory": chosen}).to_string(),
    )
    .unwrap();

    world.claude_hook("deploy checklist");
    world.stop_server();

    let store = world.path("mr/catalogs");
    let kept: Vec<_> = std::fs::read_dir(&store)
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].join("catalog").is_file(), "{kept:?}");
    assert!(!chosen.join(".memrecall").exists());
}

/// Sends one raw request line to this world's server (started by a hook first) and returns the
/// answer line.
fn ask_server(world: &World, request: &serde_json::Value) -> String {
    let socket = world.path("xdg/memrecall/serve.sock");
    let deadline = Instant::now() + HANG;
    let stream = loop {
        match UnixStream::connect(&socket) {
            Ok(stream) => break stream,
            Err(error) => {
                assert!(Instant::now() < deadline, "no server socket: {error}");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    };
    stream.set_read_timeout(Some(HANG)).unwrap();
    (&stream)
        .write_all(format!("{request}\n").as_bytes())
        .unwrap();
    let mut line = String::new();
    BufReader::new(&stream).read_line(&mut line).unwrap();
    line
}

#[test]
fn the_server_refuses_a_relative_cwd_and_a_foreign_directory_and_writes_nothing_there() {
    let world = World::new();
    let memory = world.claude_memory();
    world.claude_hook("deploy checklist");
    let foreign = world.path("outside");
    let before = world.listing(&[&memory]);

    let relative = ask_server(
        &world,
        &json!({"v": 3, "kind": "event", "agent": "claude-code", "session": "x",
                "point": "initial", "query": "deploy", "cwd": "../../",
                "project_root": "../../"}),
    );
    let absolute = ask_server(
        &world,
        &json!({"v": 3, "kind": "event", "agent": "codex", "session": "y",
                "point": "initial", "query": "deploy", "cwd": foreign,
                "layout": "memrecall", "env": {"MEMRECALL_HOME": foreign},
                "project_root": foreign}),
    );
    world.stop_server();

    for answer in [&relative, &absolute] {
        assert!(answer.contains(r#""context":"""#), "{answer}");
    }
    assert_eq!(world.listing(&[&memory]), before);
    let log = world.serve_log();
    assert_eq!(
        log.matches("its cwd ../../ is not absolute").count(),
        1,
        "{log}"
    );
    assert!(log.contains("it is not an existing directory"), "{log}");
}

#[test]
fn symlinked_telemetry_and_log_files_are_never_written_through() {
    let world = World::new();
    let memory = world.claude_memory();
    let day = humantime::format_rfc3339(std::time::SystemTime::now()).to_string()[..10].to_owned();
    for dir in ["mr/telemetry", "mr/logs"] {
        std::fs::create_dir_all(world.path(dir)).unwrap();
        std::fs::set_permissions(
            world.path(dir),
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
    }
    let victim = world.path("outside/victim.txt");
    std::os::unix::fs::symlink(
        &victim,
        world.path(&format!("mr/telemetry/{day}.0000.jsonl")),
    )
    .unwrap();
    std::os::unix::fs::symlink(&victim, world.path("mr/logs/hook.log")).unwrap();
    std::os::unix::fs::symlink(&victim, world.path("mr/logs/serve.log")).unwrap();
    // A bad hook command line makes the hook log a line.
    let bad = world.run(&["hook", "--agent", "nobody"], "{}");
    assert_eq!(bad.code, Some(0), "{}", bad.stderr);

    world.claude_hook("deploy checklist");
    world.stop_server();

    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep\n");
    let _ = memory;
}

#[test]
fn hook_install_on_a_symlinked_settings_file_updates_its_target_and_keeps_the_link() {
    let world = World::new();
    let real = world.path("outside/dotfiles/settings.json");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, "{\"model\": \"x\"}\n").unwrap();
    std::fs::create_dir_all(world.path("home/.claude")).unwrap();
    let link = world.path("home/.claude/settings.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();

    let run = world.run(
        &["hook", "install", "--agent", "claude-code", "--write"],
        "",
    );

    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("memrecall hook")
    );
    assert_eq!(
        std::fs::read_to_string(world.path("home/.claude/settings.json.memrecall-backup")).unwrap(),
        "{\"model\": \"x\"}\n"
    );
}

#[test]
fn the_hook_exits_zero_on_an_argument_that_is_not_utf8_and_logs_it() {
    use std::os::unix::ffi::OsStrExt as _;
    let world = World::new();
    let output = Command::new(binary())
        .arg("hook")
        .arg(std::ffi::OsStr::from_bytes(b"\xff"))
        .env_clear()
        .env("HOME", world.path("home"))
        .env("MEMRECALL_HOME", world.path("mr"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        world.hook_log().contains("hook: bad command line"),
        "{}",
        world.hook_log()
    );
}
