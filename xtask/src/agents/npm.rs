//! Installing each agent's pinned npm package into `target/agents/<name>-<version>/`, once.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, ensure};

use super::setup::Agent;

/// Whether an `npm` command can be started.
pub fn available() -> bool {
    Command::new("npm")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// The agent's command, installing its package first unless an earlier run did.
///
/// The package is installed into a `.partial` directory renamed into place when npm succeeds,
/// so an interrupted install is never taken for a finished one.
pub fn install(cache: &Path, agent: &Agent) -> Result<PathBuf> {
    let dir = cache.join(format!("{}-{}", agent.name, agent.version));
    let bin = dir.join("node_modules/.bin").join(agent.bin);
    if bin.exists() {
        return Ok(bin);
    }
    let partial = cache.join(format!("{}-{}.partial", agent.name, agent.version));
    if partial.exists() {
        std::fs::remove_dir_all(&partial)?;
    }
    std::fs::create_dir_all(&partial)?;
    let output = Command::new("npm")
        .args([
            "install",
            "--no-save",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            // Codex's native binary is an optional dependency.
            "--include=optional",
            "--prefix",
        ])
        .arg(&partial)
        .arg(format!("{}@{}", agent.package, agent.version))
        .output()
        .context("could not start npm")?;
    ensure!(
        output.status.success(),
        "npm install {}@{} failed with {}: {}",
        agent.package,
        agent.version,
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    ensure!(
        partial.join("node_modules/.bin").join(agent.bin).exists(),
        "npm installed {}@{} but no `{}` command",
        agent.package,
        agent.version,
        agent.bin
    );
    std::fs::rename(&partial, &dir)?;
    Ok(bin)
}
