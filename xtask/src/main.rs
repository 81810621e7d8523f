//! `cargo xtask`: project automation that is easier to keep correct in Rust than in shell.

#![forbid(unsafe_code)]

// ICU4X's `make_exportable_provider!` (in `icu_data`) names `alloc::collections`.
extern crate alloc;

// The same allocator as the `memrecall` binary, so latency reports measure what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

// The agents' runs and the server's latency need Unix (sockets, modes, shell scripts).
#[cfg(unix)]
mod agents;
mod class_table;
mod dist;
mod eval;
mod fuzz;
mod hook_latency;
mod icu_data;
mod scan_latency;
#[cfg(unix)]
mod serve_latency;
mod unused_deps;

use std::process::Command;

use anyhow::{Context, Result, bail};

const USAGE: &str = "usage: cargo xtask <command> [options]

commands:
  agents [--agents claude-code,qwen-code,gemini-cli,codex] [--timeout SECONDS] [--model-latency MS]
                  installs the four agents from npm (pinned, cached in target/agents/), runs
                  each headless against a loopback model with memrecall installed (hook install,
                  then its plugin or extension through the agent's own command) and checks what
                  reached the model; prints that it was not run without npm
  class-table     rewrites lexical-score's character class table from the Unicode tables
                  (after a Unicode update; a unit test checks it is fresh)
  ci              run the same checks as .ci/run (fmt, clippy, tests, eval, cargo-deny)
  dist [--check]  builds the release binary for this machine and packs it under target/dist/:
                  memrecall-<version>-<target>.tar.gz with its .sha256 (for cargo binstall),
                  the npm package memrecall and this platform's package (packed with npm pack
                  where npm exists); --check installs both npm tarballs offline into a
                  temporary prefix and runs the installed command (not run without npm)
  eval [--json]   recall quality, delivery and scoring latency on corpus/recall-eval, plus a
                  small scan-latency report; exits non-zero when a quality gate fails
  scan-latency [--sizes 200,1000,2000,5000,10000,50000] [--modes scan,catalog] [--runs N] [--json]
                  time from the recall call to the fast result on real temporary trees; writes
                  target/scan-latency.svg. Always measures a release build: run from a debug
                  build, it rebuilds and runs itself with --release
  fuzz [--seconds N] [--targets a,b] [--cases N]
                  runs each fuzz target under fuzz/ (nightly, cargo-fuzz) and the lifecycle's
                  interleaving property test for N cases; reports executions per target
  icu-data        rewrites lexical-score's word segmentation data (ICU4X baked data for Thai,
                  Lao, Khmer and Myanmar) from the data ICU4X ships (a unit test checks it is
                  fresh)
  hook-latency [--sizes 200,1000,10000] [--runs N]
                  whole-process wall time of `memrecall hook` (a release build) over a warm
                  catalog, median and worst
  unused-deps     fails when a workspace crate declares a dependency its code never names, or
                  [workspace.dependencies] lists one no crate declares
  serve-latency [--sizes 1000,10000,50000,100000] [--runs N]
                  `memrecall serve` warm: hook client wall time, the server's recall to fast
                  result, and its peak memory";

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let command = args.next();
    let rest: Vec<String> = args.collect();
    match command.as_deref() {
        #[cfg(unix)]
        Some("agents") => agents::main(&rest),
        Some("ci") => ci(),
        Some("class-table") => class_table::main(&rest),
        Some("dist") => dist::main(&rest),
        Some("eval") => eval::main(&rest),
        Some("fuzz") => fuzz::main(&rest),
        Some("scan-latency")
            if cfg!(debug_assertions) && std::env::var_os(RELEASED_GUARD).is_none() =>
        {
            run_released("scan-latency", &rest)
        }
        Some("scan-latency") => scan_latency::main(&rest),
        Some("hook-latency") => hook_latency::main(&rest),
        Some("icu-data") => icu_data::main(&rest),
        Some("unused-deps") => unused_deps::main(&rest),
        #[cfg(unix)]
        Some("serve-latency") => serve_latency::main(&rest),
        #[cfg(not(unix))]
        Some(command @ ("agents" | "serve-latency")) => bail!("{command} needs a Unix system"),
        // Started by `scan-latency` itself, once per new-process run; not for direct use.
        Some("scan-latency-process") => scan_latency::process_main(&rest),
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

/// Set on the release build `run_released` starts, so a release build that still has debug
/// assertions (a profile override) measures instead of starting itself again.
const RELEASED_GUARD: &str = "MEMRECALL_XTASK_RELEASED";

/// Runs `command` in a release build of xtask: timings of an unoptimised build say nothing about
/// what users run.
fn run_released(command: &str, rest: &[String]) -> Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "run",
            "--locked",
            "--quiet",
            "--release",
            "--package",
            "xtask",
            "--",
        ])
        .arg(command)
        .args(rest)
        .current_dir(workspace_root()?)
        .env(RELEASED_GUARD, "1")
        .status()
        .context("could not start cargo to build xtask with --release")?;
    if !status.success() {
        bail!("the release build of `xtask {command}` failed with {status}");
    }
    Ok(())
}

/// The workspace root (the parent of `xtask/`).
pub fn workspace_root() -> Result<std::path::PathBuf> {
    let manifest_dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(std::path::Path::to_path_buf)
        .context("xtask must live one level below the workspace root")
}
