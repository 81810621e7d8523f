//! `cargo xtask`: project automation that is easier to keep correct in Rust than in shell.

use std::process::Command;

use anyhow::{Context, Result, bail};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  ci      run the same checks as .ci/run (fmt, clippy, tests, cargo-deny)";

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("ci") => ci(),
        Some("-h" | "--help") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => bail!("unknown command {other:?}\n\n{USAGE}"),
    }
}

/// Runs the CI script so that `cargo xtask ci` and `.ci/run` can never drift apart.
fn ci() -> Result<()> {
    let root = workspace_root()?;
    let status = Command::new("bash")
        .arg(root.join(".ci/run"))
        .current_dir(&root)
        .status()
        .context("could not start bash to run .ci/run")?;
    if !status.success() {
        bail!(".ci/run failed with {status}");
    }
    Ok(())
}

fn workspace_root() -> Result<std::path::PathBuf> {
    let manifest_dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(std::path::Path::to_path_buf)
        .context("xtask must live one level below the workspace root")
}
