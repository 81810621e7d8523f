//! The server's socket when nobody serves it: a server stopped by `SIGSTOP` with its backlog
//! full, a listener that never accepts; and one server under an address-space limit serving many
//! projects.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context as _, Result, ensure};

use super::Outcome;
use super::world::{Ended, World, delivered_titles, max, signal, topic};

/// The most a hook may take when no server answers: its connect budget, then a recall in its
/// own process, with margin for a busy machine.
const HOOK_BOUND: Duration = Duration::from_secs(2);
/// The most `status`, `stop` and `doctor` may take against a silent server.
const COMMAND_BOUND: Duration = Duration::from_secs(2);
/// The hooks run against one silent socket.
const HOOKS: usize = 3;

/// A Python program that connects to the socket at `sys.argv[1]` until the backlog is full (a
/// non-blocking connect that would block), prints `full`, and holds the connections until
/// killed; with `sys.argv[2]` = `listen`, it first listens there itself with a backlog of one and
/// never accepts.
const PYTHON: &str = r"
import os, socket, sys, time
path = sys.argv[1]
held = []
if len(sys.argv) > 2:
    try: os.unlink(path)
    except FileNotFoundError: pass
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(1)
    held.append(listener)
for _ in range(100000):
    s = socket.socket(socket.AF_UNIX)
    s.setblocking(False)
    try:
        s.connect(path)
        held.append(s)
    except (BlockingIOError, InterruptedError):
        break
print('full', len(held), flush=True)
time.sleep(3600)
";

/// Fills the backlog of the socket at `socket` (listening there first when `listen`); the
/// returned child holds it full until killed.
fn fill_backlog(socket: &Path, listen: bool) -> Result<Child> {
    let mut command = Command::new("python3");
    command.arg("-c").arg(PYTHON).arg(socket);
    if listen {
        command.arg("listen");
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting python3 to fill a listen backlog")?;
    let mut line = String::new();
    let stdout = child.stdout.take().context("python's stdout")?;
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line)?;
    ensure!(line.starts_with("full"), "python did not fill the backlog");
    Ok(child)
}

/// Hooks, then `status`, `stop` and `doctor`, against a socket nobody serves.
fn against_silence(world: &World, case: &'static str) -> Result<Vec<Outcome>> {
    let repo = world.path("repo");
    let mut hooks: Vec<Ended> = Vec::new();
    for run in 0..HOOKS {
        hooks.push(world.prompt(&format!("s{run}"), &repo, "how do we deploy?")?);
    }
    let times: Vec<f64> = hooks.iter().map(Ended::millis).collect();
    let hooks_ok = hooks
        .iter()
        .all(|h| h.clean() && h.elapsed <= HOOK_BOUND && delivered_titles(&h.stdout).is_some());
    let mut outcomes = vec![Outcome::new(
        case,
        HOOKS,
        format!(
            "hooks: exits {:?}, worst {:.0} ms (bound {} ms)",
            hooks
                .iter()
                .map(|h| h.status.and_then(|s| s.code()))
                .collect::<Vec<_>>(),
            max(&times),
            HOOK_BOUND.as_millis()
        ),
        hooks_ok,
    )];
    for command in ["status", "doctor", "stop"] {
        let ended = world.run(&[command], "")?;
        outcomes.push(Outcome::new(
            case,
            1,
            format!(
                "`{command}`: exit {:?} in {:.0} ms (bound {} ms)",
                ended.status.and_then(|s| s.code()),
                ended.millis(),
                COMMAND_BOUND.as_millis()
            ),
            !ended.hung() && ended.signal().is_none() && ended.elapsed <= COMMAND_BOUND,
        ));
    }
    Ok(outcomes)
}

pub(crate) fn stopped(binary: &Path) -> Result<Vec<Outcome>> {
    let world = World::with_deploy_runbook(binary)?;
    let (mut server, pid) = world.start_server(&[])?;
    signal(pid, "STOP")?;
    let filler = fill_backlog(&world.path("xdg/memrecall/serve.sock"), false);
    let outcomes = filler.and_then(|mut filler| {
        let outcomes = against_silence(&world, "stopped-server");
        let _ = filler.kill();
        let _ = filler.wait();
        outcomes
    });
    signal(pid, "CONT")?;
    signal(pid, "KILL")?;
    let _ = server.kill();
    let _ = server.wait();
    outcomes
}

pub(crate) fn silent_listener(binary: &Path) -> Result<Vec<Outcome>> {
    let world = World::new(binary)?;
    let run = world.path("xdg/memrecall");
    std::fs::create_dir_all(&run)?;
    std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    let mut filler = fill_backlog(&run.join("serve.sock"), true)?;
    let outcomes = against_silence(&world, "silent-listener");
    let _ = filler.kill();
    let _ = filler.wait();
    outcomes
}

/// The address space the server is given.
const ADDRESS_SPACE: &str = "--as=1073741824";
/// The projects it serves.
const PROJECTS: usize = 64;

pub(crate) fn many_projects(binary: &Path) -> Result<Vec<Outcome>> {
    let world = World::new(binary)?;
    let mut repos = Vec::new();
    for i in 0..PROJECTS {
        let repo = world.repo(&format!("projects/p{i}"))?;
        topic(
            &world.claude_memory(&repo)?,
            "deploy.md",
            &format!("Deploy runbook {i}"),
            "How this project ships.",
        )?;
        repos.push(repo);
    }
    let (mut server, pid) = world.start_server(&["prlimit", ADDRESS_SPACE])?;
    let mut delivered = 0;
    for (i, repo) in repos.iter().enumerate() {
        let ended = world.prompt(&format!("s{i}"), repo, "how does this project deploy?")?;
        let wanted = format!("Deploy runbook {i}");
        if ended.clean()
            && delivered_titles(&ended.stdout).is_some_and(|titles| titles == [wanted.clone()])
        {
            delivered += 1;
        }
    }
    let status = world.status()?;
    let same_server = status["pid"].as_u64() == Some(u64::from(pid));
    let sessions = status["sessions"].as_u64().unwrap_or(0);
    let _ = world.run(&["stop"], "");
    let _ = server.kill();
    let _ = server.wait();
    let log = std::fs::read_to_string(world.path("serve-out.log")).unwrap_or_default();
    let aborted = log.contains("aborting") || log.contains("panicked");
    Ok(vec![Outcome::new(
        "many-projects",
        PROJECTS,
        format!(
            "prlimit {ADDRESS_SPACE}: delivered {delivered}/{PROJECTS}, the first server still serving: {same_server}, its sessions {sessions}, a panic or abort in its output: {aborted}"
        ),
        delivered == PROJECTS && same_server && sessions == PROJECTS as u64 && !aborted,
    )])
}
