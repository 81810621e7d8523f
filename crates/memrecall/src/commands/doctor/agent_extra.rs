//! What `doctor` adds about an agent beyond its user settings: the agent's version, asked of
//! its own command, and the project's settings file for the directory.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::checks::{HookReport, locate};
use agent_hooks::settings::{self, Document};
use agent_hooks::{Agent, Environment};

/// How long an agent may take to print its version.
const VERSION_TIMEOUT: Duration = Duration::from_secs(3);

/// The command each agent is started with.
const fn agent_command(agent: Agent) -> &'static str {
    agent.conventions().command
}

/// The first line `<agent> --version` prints, when the agent's command is on `PATH` and answers
/// within [`VERSION_TIMEOUT`]; why not otherwise.
pub(super) fn version(agent: Agent) -> String {
    let name = agent_command(agent);
    let Some(program) = locate(Path::new(name)) else {
        return format!("`{name}` is not on this PATH");
    };
    let child = Command::new(&program)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => return format!("`{name} --version` cannot be run: {e}"),
    };
    let deadline = Instant::now() + VERSION_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return format!("`{name} --version` did not answer");
            }
        }
    }
    let mut out = String::new();
    if let Some(stdout) = child.stdout.take() {
        let _ = stdout.take(4096).read_to_string(&mut out);
    }
    out.lines().next().unwrap_or_default().trim().to_owned()
}

/// The project's settings file for `cwd`, when it exists.
#[derive(Debug, Serialize)]
pub(crate) struct ProjectSettings {
    pub(super) path: PathBuf,
    pub(super) hooks: Vec<HookReport>,
}

/// The project settings file of `agent` in `cwd` and the memrecall hooks it holds, when it
/// exists.
pub(super) fn project_settings(agent: Agent, cwd: &Path) -> Option<ProjectSettings> {
    let path = settings::settings_path(agent, Some(cwd), &Environment::default()).ok()?;
    let (text, true) = settings::read(&path).ok()? else {
        return None;
    };
    let hooks = Document::parse(&text, agent, &path)
        .map(|document| document.memrecall_commands(agent, None))
        .unwrap_or_default()
        .into_iter()
        .map(HookReport::new)
        .collect();
    Some(ProjectSettings { path, hooks })
}
