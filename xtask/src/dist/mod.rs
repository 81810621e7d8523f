//! `cargo xtask dist [--check]`: the release binary of the host target, packed the ways users
//! fetch it, under `target/dist/`:
//!
//! - `memrecall-<version>-<target>.tar.gz` (a folder of that name holding the binary and the
//!   README) and `memrecall-<version>-<target>.tar.gz.sha256`, as `cargo binstall` finds them
//!   through `[package.metadata.binstall]` in `crates/memrecall/Cargo.toml`;
//! - `npm/memrecall/`, the npm package users install: a launcher (`bin/memrecall.js`) and one
//!   optional dependency per platform, of which npm installs only the one whose `os` and `cpu`
//!   match; `npm/memrecall-<platform>-<arch>/`, the host's platform package holding the binary;
//!   and, where npm exists, both packed by `npm pack` (`memrecall-<version>.tgz`,
//!   `memrecall-<platform>-<arch>-<version>.tgz`).
//!
//! `--check` then installs the two npm tarballs into a temporary prefix, offline, and runs the
//! installed command (see [`check`]).

mod archive;
mod check;
mod npm;

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The options of `cargo xtask dist`.
#[derive(Debug, clap::Parser)]
#[command(args_override_self = true)]
pub struct DistArgs {
    /// Then install both npm tarballs offline into a temporary prefix and run the installed
    /// command (not run without npm)
    #[arg(long)]
    check: bool,
}

/// The version every crate of the workspace (and so the binary) carries.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What `dist` wrote.
struct Dist {
    /// The npm tarballs, platform package first; `None` without npm.
    npm_tarballs: Option<[PathBuf; 2]>,
}

pub fn main(args: &DistArgs) -> Result<()> {
    let root = crate::workspace_root()?;
    let out = target_dir(&root).join("dist");
    let dist = build(&out)?;
    if !args.check {
        return Ok(());
    }
    if let Some(tarballs) = dist.npm_tarballs {
        check::installed_package(&tarballs)
    } else {
        println!("npm was not found: the npm package install check was not run");
        Ok(())
    }
}

/// Builds the binary and writes everything under `out`, emptied first.
fn build(out: &Path) -> Result<Dist> {
    let target = host_target()?;
    let binary = crate::hook_latency::build_release_binary()?;
    if out.exists() {
        std::fs::remove_dir_all(out).with_context(|| format!("cannot empty {}", out.display()))?;
    }
    std::fs::create_dir_all(out)?;
    let readme = crate::workspace_root()?.join("README.md");

    let archive = archive::write(out, &target, &binary, &readme)?;
    let checksum = archive::write_checksum(&archive)?;
    println!("{}", archive.display());
    println!("{}", checksum.display());

    let packages = npm::write_packages(&out.join("npm"), &target, &binary)?;
    let npm_tarballs = if npm::available() {
        let Some(platform) = packages.platform else {
            bail!("{target} has no npm platform package: the npm package cannot be checked here");
        };
        let tarballs = [npm::pack(&platform, out)?, npm::pack(&packages.main, out)?];
        for tarball in &tarballs {
            println!("{}", tarball.display());
        }
        Some(tarballs)
    } else {
        println!(
            "{} (npm was not found: the packages were not packed)",
            packages.main.display()
        );
        None
    };
    Ok(Dist { npm_tarballs })
}

/// The target triple `rustc` builds for by default.
fn host_target() -> Result<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc)
        .arg("-vV")
        .output()
        .context("could not start rustc")?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .context("`rustc -vV` names no host target")
}

/// The build's target directory, as cargo resolves it from `CARGO_TARGET_DIR`.
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| root.join("target"), |d| root.join(d))
}

/// The executable's file name on `target`.
fn executable(target: &str) -> &'static str {
    if target.contains("windows") {
        "memrecall.exe"
    } else {
        "memrecall"
    }
}
