//! `cargo xtask dist --check`: the npm package installs from its packed tarballs and its command
//! works.
//!
//! The platform tarball and the main one are installed together with `npm install -g --prefix`
//! into a temporary prefix, offline (`--offline`, an empty cache of its own and a registry
//! address nothing answers at, so that a lookup fails rather than reaches a registry: the other
//! platforms' optional dependencies are skipped, as npm skips any optional dependency it cannot
//! fetch). Then, through the installed `memrecall` command (the Node launcher):
//! `memrecall --version` prints the version; `memrecall hook --agent claude-code` reads Claude
//! Code's `UserPromptSubmit` JSON on stdin and answers with the matching memory of a temporary
//! memory tree; and a bad command line exits with the binary's own status, 2.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};

/// The memory the hook must recall, and a word of the prompt only it holds.
const TITLE: &str = "Release freeze";
const PROMPT: &str = "can I ship the quasar migration on Friday?";

/// Installs `tarballs` and checks the installed command; prints one line per check passed.
pub fn installed_package(tarballs: &[PathBuf; 2]) -> Result<()> {
    let started = Instant::now();
    let temp = tempfile::tempdir()?;
    let base = temp.path().canonicalize()?;
    let prefix = base.join("prefix");
    install(&base, &prefix, tarballs)?;
    let command = if cfg!(windows) {
        prefix.join("memrecall.cmd")
    } else {
        prefix.join("bin/memrecall")
    };
    ensure!(
        command.exists(),
        "npm installed no command at {}",
        command.display()
    );
    println!(
        "npm install -g --prefix <temp> --offline {}: installed {}",
        tarballs
            .iter()
            .filter_map(|t| t.file_name())
            .map(|n| n.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" "),
        command.display()
    );

    let world = World::new(&base)?;
    let version = world.run(&command, &["--version"], "")?;
    let expected = format!("memrecall {}\n", super::VERSION);
    ensure!(
        version.status.success() && String::from_utf8_lossy(&version.stdout) == expected,
        "`memrecall --version` through the launcher gave {}: stdout {:?}, stderr {:?}",
        version.status,
        String::from_utf8_lossy(&version.stdout),
        String::from_utf8_lossy(&version.stderr)
    );
    println!("memrecall --version: {}", expected.trim_end());

    let context = world.hook_delivering(&command)?;
    ensure!(
        context.contains(&format!("### {TITLE}")),
        "the hook delivered a context without the memory {TITLE:?}: {context}"
    );
    println!("memrecall hook --agent claude-code: delivered {TITLE:?}");

    let bad = world.run(&command, &["--no-such-flag"], "")?;
    ensure!(
        bad.status.code() == Some(2),
        "a bad command line through the launcher exited with {} (the binary's is 2)",
        bad.status
    );
    println!("memrecall --no-such-flag: exit status 2 passed on");
    println!(
        "dist --check: the npm package works ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `npm install -g --prefix prefix` of both tarballs, without reaching any registry.
fn install(base: &Path, prefix: &Path, tarballs: &[PathBuf; 2]) -> Result<()> {
    let output = Command::new(super::npm::npm())
        .args([
            "install",
            "--global",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(prefix)
        .args(tarballs)
        .env("npm_config_cache", base.join("npm-cache"))
        // Discard address: should npm look anything up despite --offline, it fails at once.
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .env("npm_config_update_notifier", "false")
        .output()
        .context("could not start npm")?;
    ensure!(
        output.status.success(),
        "npm install failed with {}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(())
}

/// A temporary `HOME` with Claude Code's memory of a temporary git repository.
struct World {
    home: PathBuf,
    memrecall_home: PathBuf,
    tmp: PathBuf,
    repo: PathBuf,
}

impl World {
    fn new(base: &Path) -> Result<Self> {
        let world = Self {
            home: base.join("home"),
            memrecall_home: base.join("mr"),
            tmp: base.join("tmp"),
            repo: base.join("repo"),
        };
        for dir in [&world.home, &world.memrecall_home, &world.tmp] {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::create_dir_all(world.repo.join(".git"))?;
        std::fs::write(world.repo.join(".git/HEAD"), "ref: refs/heads/main\n")?;
        let memory = crate::sandbox::claude_code_memory(&world.repo, &world.home)?;
        std::fs::create_dir_all(&memory)?;
        std::fs::write(
            memory.join("release-freeze.md"),
            format!(
                "---\nname: {TITLE}\ndescription: No release of the quasar migration on a Friday\n\
                 type: project\n---\n\nThe quasar migration ships Monday to Thursday only.\n"
            ),
        )?;
        std::fs::write(
            memory.join("style.md"),
            "---\nname: Answer style\ndescription: Short answers, code first\ntype: feedback\n\
             ---\n\nKeep answers short.\n",
        )?;
        Ok(world)
    }

    /// Runs `command args` from the repository with `stdin`, only the world's variables and
    /// `PATH` (the launcher's `#!/usr/bin/env node` needs it) set.
    fn run(&self, command: &Path, args: &[&str], stdin: &str) -> Result<Output> {
        let mut process = Command::new(command);
        process
            .args(args)
            .current_dir(&self.repo)
            .env_clear()
            .env("HOME", &self.home)
            .env("MEMRECALL_HOME", &self.memrecall_home)
            .env("TMPDIR", &self.tmp)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for kept in ["PATH", "SYSTEMROOT", "USERPROFILE"] {
            if let Some(value) = std::env::var_os(kept) {
                process.env(kept, value);
            }
        }
        let mut child = process
            .spawn()
            .with_context(|| format!("could not start {}", command.display()))?;
        let mut input = child.stdin.take().context("no stdin")?;
        // A command that does not read stdin may close it first; that is its business.
        let _ = input.write_all(stdin.as_bytes());
        drop(input);
        Ok(child.wait_with_output()?)
    }

    /// The context the hook delivers for [`PROMPT`], running it again while it delivers
    /// nothing, for up to a minute: the hook answers with what recall gives within its 100 ms
    /// budget, which a stalled machine can miss (and then, rightly, prints nothing).
    fn hook_delivering(&self, command: &Path) -> Result<String> {
        let event = json!({
            "session_id": "dist-check",
            "transcript_path": self.tmp.join("transcript.jsonl"),
            "cwd": self.repo,
            "permission_mode": "default",
            "hook_event_name": "UserPromptSubmit",
            "prompt": PROMPT,
        })
        .to_string();
        let deadline = Instant::now() + Duration::from_mins(1);
        loop {
            let run = self.run(command, &["hook", "--agent", "claude-code"], &event)?;
            let stdout = String::from_utf8_lossy(&run.stdout);
            ensure!(
                run.status.success(),
                "the hook through the launcher failed with {}: {}",
                run.status,
                String::from_utf8_lossy(&run.stderr)
            );
            if !stdout.trim().is_empty() {
                let value: Value = serde_json::from_str(&stdout).with_context(|| {
                    format!("the hook printed something other than JSON: {stdout}")
                })?;
                let output = &value["hookSpecificOutput"];
                ensure!(
                    output["hookEventName"] == "UserPromptSubmit",
                    "the hook answered another event: {value}"
                );
                return output["additionalContext"]
                    .as_str()
                    .map(str::to_owned)
                    .with_context(|| format!("no additionalContext in {value}"));
            }
            if Instant::now() >= deadline {
                bail!(
                    "no hook run delivered within a minute; the last printed nothing, stderr: {}",
                    String::from_utf8_lossy(&run.stderr)
                );
            }
            // The next run must not be taken for a continuation of the prompt just missed.
            let _ = std::fs::remove_dir_all(self.memrecall_home.join("state"));
        }
    }
}
