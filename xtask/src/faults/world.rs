//! A temporary user for the fault cases: `HOME`, `MEMRECALL_HOME`, `XDG_RUNTIME_DIR` and git
//! repositories below one directory, and processes of the binary run under a time limit.

use std::io::{Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use recall_lifecycle::LINES_HEADER;

/// The longest any one process may run before it counts as hung and is killed.
pub(crate) const HUNG_AFTER: Duration = Duration::from_secs(20);

pub(crate) struct World {
    _dir: tempfile::TempDir,
    pub(crate) base: PathBuf,
    binary: PathBuf,
}

/// How one process ended.
#[derive(Debug)]
pub(crate) struct Ended {
    /// `None` when it was killed for running past [`HUNG_AFTER`].
    pub(crate) status: Option<ExitStatus>,
    pub(crate) stdout: String,
    /// From start to exit.
    pub(crate) elapsed: Duration,
    /// From start to its first byte on standard output, if it printed.
    pub(crate) first_output: Option<Duration>,
}

impl Ended {
    /// Exited 0, not by a signal, not hung.
    pub(crate) fn clean(&self) -> bool {
        self.status.is_some_and(|s| s.code() == Some(0))
    }

    pub(crate) fn signal(&self) -> Option<i32> {
        self.status.and_then(|s| s.signal())
    }

    pub(crate) fn hung(&self) -> bool {
        self.status.is_none()
    }

    pub(crate) fn millis(&self) -> f64 {
        self.elapsed.as_secs_f64() * 1000.0
    }
}

impl World {
    pub(crate) fn new(binary: &Path) -> Result<Self> {
        let dir = tempfile::tempdir()?;
        let base = dir.path().canonicalize()?;
        for sub in ["home", "mr", "xdg"] {
            std::fs::create_dir_all(base.join(sub))?;
        }
        std::fs::set_permissions(base.join("xdg"), std::fs::Permissions::from_mode(0o700))?;
        std::fs::write(
            base.join("mr/config.toml"),
            "[serve]\nidle_exit = \"120s\"\n",
        )?;
        let world = Self {
            _dir: dir,
            base,
            binary: binary.to_path_buf(),
        };
        world.repo("repo")?;
        Ok(world)
    }

    /// [`World::new`] with one note, a deploy runbook, in Claude Code's memory of its repository.
    pub(crate) fn with_deploy_runbook(binary: &Path) -> Result<Self> {
        let world = Self::new(binary)?;
        topic(
            &world.claude_memory(&world.path("repo"))?,
            "deploy.md",
            "Deploy runbook",
            "Run make deploy.",
        )?;
        Ok(world)
    }

    pub(crate) fn path(&self, relative: &str) -> PathBuf {
        self.base.join(relative)
    }

    /// A git repository at `relative`.
    pub(crate) fn repo(&self, relative: &str) -> Result<PathBuf> {
        let repo = self.path(relative);
        std::fs::create_dir_all(repo.join(".git"))?;
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n")?;
        Ok(repo)
    }

    /// Claude Code's project memory root for `repo`, created.
    pub(crate) fn claude_memory(&self, repo: &Path) -> Result<PathBuf> {
        let memory = crate::sandbox::claude_code_memory(repo, &self.path("home"))?;
        std::fs::create_dir_all(&memory)?;
        Ok(memory)
    }

    /// Makes every hook recall in its own process: the run directory is open to others, which
    /// the hook refuses.
    pub(crate) fn refuse_the_server(&self) -> Result<()> {
        let run = self.path("xdg/memrecall");
        std::fs::create_dir_all(&run)?;
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o777))?;
        Ok(())
    }

    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .args(args)
            .current_dir(self.path("repo"))
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.path("home"))
            .env("MEMRECALL_HOME", self.path("mr"))
            .env("XDG_RUNTIME_DIR", self.path("xdg"));
        command
    }

    /// Runs `memrecall args…` with `stdin`, under [`HUNG_AFTER`].
    pub(crate) fn run(&self, args: &[&str], stdin: &str) -> Result<Ended> {
        run_limited(self.command(args), stdin)
    }

    /// Runs Claude Code's hook on a prompt event for `cwd`.
    pub(crate) fn prompt(&self, session: &str, cwd: &Path, prompt: &str) -> Result<Ended> {
        let event = serde_json::json!({
            "session_id": session,
            "transcript_path": "/dev/null",
            "cwd": cwd,
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        });
        self.run(&["hook", "--agent", "claude-code"], &event.to_string())
    }

    /// Starts `memrecall serve` (through `wrap`, e.g. `prlimit`, when given) and waits until it
    /// answers `status`; returns the child and its pid.
    pub(crate) fn start_server(&self, wrap: &[&str]) -> Result<(Child, u32)> {
        let plain = self.command(&["serve"]);
        let mut command = match wrap.split_first() {
            Some((program, args)) => {
                let mut wrapped = Command::new(program);
                wrapped
                    .args(args)
                    .arg(plain.get_program())
                    .args(plain.get_args())
                    .current_dir(self.path("repo"))
                    .env_clear()
                    .envs(plain.get_envs().filter_map(|(k, v)| Some((k, v?))));
                wrapped
            }
            None => plain,
        };
        let log = std::fs::File::create(self.path("serve-out.log"))?;
        let child = command
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .context("starting memrecall serve")?;
        let deadline = Instant::now() + HUNG_AFTER;
        while Instant::now() < deadline {
            if let Some(pid) = self.server_pid()? {
                return Ok((child, pid));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        anyhow::bail!("the server did not answer status")
    }

    /// The pid `status` names, `None` when no server answers.
    pub(crate) fn server_pid(&self) -> Result<Option<u32>> {
        let ended = self.run(&["status", "--json"], "")?;
        let value: serde_json::Value =
            serde_json::from_str(&ended.stdout).unwrap_or(serde_json::Value::Null);
        Ok(value["pid"].as_u64().and_then(|p| u32::try_from(p).ok()))
    }

    /// The server's status as JSON (`Null` when none answers).
    pub(crate) fn status(&self) -> Result<serde_json::Value> {
        let ended = self.run(&["status", "--json"], "")?;
        Ok(serde_json::from_str(&ended.stdout).unwrap_or(serde_json::Value::Null))
    }
}

/// Runs `command` with `stdin`, killing it once it runs past [`HUNG_AFTER`].
pub(crate) fn run_limited(mut command: Command, stdin: &str) -> Result<Ended> {
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting memrecall")?;
    let mut input = child.stdin.take().context("stdin")?;
    let stdin = stdin.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(stdin.as_bytes());
    });
    let mut output = child.stdout.take().context("stdout")?;
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let mut first = None;
        let mut buffer = [0u8; 8192];
        loop {
            match output.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    first.get_or_insert_with(|| started.elapsed());
                    bytes.extend_from_slice(&buffer[..n]);
                }
            }
        }
        (bytes, first)
    });
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if started.elapsed() > HUNG_AFTER {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let elapsed = started.elapsed();
    let _ = writer.join();
    let (bytes, first_output) = reader.join().unwrap_or_default();
    Ok(Ended {
        status,
        stdout: String::from_utf8_lossy(&bytes).into_owned(),
        elapsed,
        first_output,
    })
}

/// Sends `signal` (a `kill` name: STOP, CONT, KILL) to `pid`.
pub(crate) fn signal(pid: u32, signal: &str) -> Result<()> {
    Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .context("running kill")?;
    Ok(())
}

/// The titles of the memories a Claude Code hook's output carries: delivered whole (`### `) or
/// named in a line (`- `, a weak match the model reads if it needs it).
pub(crate) fn delivered_titles(stdout: &str) -> Option<Vec<String>> {
    if stdout.is_empty() {
        return Some(Vec::new());
    }
    let value: serde_json::Value = serde_json::from_str(stdout).ok()?;
    let context = value["hookSpecificOutput"]["additionalContext"].as_str()?;
    let mut named = false;
    Some(
        context
            .lines()
            .filter_map(|l| {
                named |= LINES_HEADER
                    .lines()
                    .next()
                    .is_some_and(|header| l == header);
                l.strip_prefix("### ")
                    .or_else(|| l.strip_prefix("- ").filter(|_| named))
            })
            .map(|l| l.rsplit_once(" (").map_or(l, |(title, _)| title).to_owned())
            .collect(),
    )
}

/// A topic file.
pub(crate) fn topic(dir: &Path, file: &str, title: &str, body: &str) -> Result<()> {
    std::fs::write(
        dir.join(file),
        format!("---\nname: {title}\ndescription: {title}\ntype: project\n---\n\n{body}\n"),
    )?;
    Ok(())
}

/// The median of `values` (0 when empty).
pub(crate) fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The largest of `values` (0 when empty).
pub(crate) fn max(values: &[f64]) -> f64 {
    values.iter().copied().fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::delivered_titles;

    fn hook_output(context: &str) -> String {
        serde_json::json!({"hookSpecificOutput": {"additionalContext": context}}).to_string()
    }

    #[test]
    fn a_note_named_in_a_line_counts_and_a_list_item_of_a_body_does_not() {
        let context = "## Relevant memory\n\nUse...\n\n### Deploy runbook (deploy.md)\nSaved today.\n\n- tag the release\n\n## Possibly relevant memory\n\nNot shown here.\n\n- Payments rollback runbook (/m/payments.md)\n";
        assert_eq!(
            delivered_titles(&hook_output(context)).unwrap(),
            ["Deploy runbook", "Payments rollback runbook"]
        );
    }
}
