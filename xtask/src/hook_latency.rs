//! `cargo xtask hook-latency`: the whole-process wall time of `memrecall hook`, as an agent pays
//! it before each prompt: process start, reading the event, asking the user's server (which the
//! first run starts, as a user's first prompt does) for one recall bounded by the first-prompt
//! ceiling, printing the delivery, and exit.
//!
//! Each size gets the scan-latency tree (N topics, the last holding a codeword) placed where
//! Claude Code keeps a project's memory, under a temporary `HOME`, for a temporary git
//! repository. Untimed runs first write the catalog and warm the page cache, and check that the
//! delivery names the codeword's topic; then each timed run starts the release binary, writes
//! the event to its stdin and waits for it to exit.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};

use crate::scan_latency::{CODEWORD, build_tree, codeword_topic, median};

const DEFAULT_RUNS: usize = 21;
const WARM_RUNS: usize = 3;
/// How long the catalog may take to appear after the warm-up runs.
const CATALOG_WAIT: Duration = Duration::from_mins(1);

/// The targets on a 2-core machine, by topic count.
fn target_ms(topics: usize) -> Option<f64> {
    match topics {
        1_000 => Some(15.0),
        10_000 => Some(40.0),
        _ => None,
    }
}

pub fn main(args: &HookLatencyArgs) -> Result<()> {
    let HookLatencyArgs { ref sizes, runs } = *args;
    let binary = build_release_binary()?;
    println!(
        "memrecall hook --agent claude-code, whole process, warm catalog ({runs} runs per size)"
    );
    println!(
        "{:>7} | {:>10} | {:>9} | target",
        "topics", "median ms", "worst ms"
    );
    for &topics in sizes {
        let (median_ms, worst_ms) = measure(&binary, topics, runs)?;
        let target = target_ms(topics).map_or_else(String::new, |t| {
            let verdict = if median_ms <= t { "met" } else { "missed" };
            format!("≤ {t:.0} ms ({verdict})")
        });
        println!("{topics:>7} | {median_ms:>10.1} | {worst_ms:>9.1} | {target}");
    }
    Ok(())
}

/// Builds `memrecall` with `--release` and returns its path.
pub(crate) fn build_release_binary() -> Result<PathBuf> {
    let root = crate::workspace_root()?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--locked",
            "--quiet",
            "--release",
            "--package",
            "memrecall",
        ])
        .current_dir(&root)
        .status()
        .context("could not start cargo to build memrecall with --release")?;
    ensure!(
        status.success(),
        "building memrecall with --release failed with {status}"
    );
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| root.join("target"), |d| root.join(d));
    let binary = target
        .join("release")
        .join(format!("memrecall{}", std::env::consts::EXE_SUFFIX));
    ensure!(binary.is_file(), "no binary at {}", binary.display());
    Ok(binary)
}

/// Median and worst wall time in milliseconds of `runs` hook processes over `topics` topics.
fn measure(binary: &Path, topics: usize, runs: usize) -> Result<(f64, f64)> {
    let dir = tempfile::tempdir()?;
    let base = dir.path().canonicalize()?;
    let home = base.join("home");
    let repo = base.join("repo");
    std::fs::create_dir_all(repo.join(".git"))?;
    let memory = crate::sandbox::claude_code_memory(&repo, &home)?;
    std::fs::create_dir_all(&memory)?;
    build_tree(&memory, topics)?;
    // A session of its own per run: a session delivers a memory once, and each run is a first
    // prompt.
    let event = |run: usize| {
        serde_json::json!({
            "session_id": format!("bench-{run}"),
            "transcript_path": "/dev/null",
            "cwd": repo,
            "hook_event_name": "UserPromptSubmit",
            "prompt": format!("what is the {CODEWORD} about?"),
        })
        .to_string()
    };
    let expected = format!("Topic {:05}", codeword_topic(topics));
    // The first run has no catalog yet and may miss the ceiling on a large tree (then it
    // delivers nothing); it writes the catalog the later ones start from.
    let mut stdout = String::new();
    for run in 0..WARM_RUNS {
        stdout = run_hook(binary, &base, &event(run))?;
    }
    ensure!(
        stdout.contains(&expected),
        "the hook over {topics} topics did not deliver {expected:?}: {stdout:?}"
    );
    // The server the first hook started writes the catalog once its recall has settled, in
    // the background: on a large tree, after the last warm-up hook may have returned.
    // Where memrecall keeps the root's catalog: under its home's `catalogs/`
    // (agent_hooks::layout::CATALOG_STORE_DIR).
    let catalog =
        memory_scan::CatalogStore::Under(base.join("mr").join("catalogs")).catalog_path(&memory);
    let waiting = Instant::now();
    while !catalog.is_file() {
        ensure!(
            waiting.elapsed() < CATALOG_WAIT,
            "no catalog within {CATALOG_WAIT:?} of the warm-up runs"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut times = Vec::with_capacity(runs);
    for run in WARM_RUNS..WARM_RUNS + runs {
        let started = Instant::now();
        let stdout = run_hook(binary, &base, &event(run))?;
        times.push(started.elapsed().as_secs_f64() * 1_000.0);
        ensure!(
            stdout.contains(&expected),
            "a timed run delivered {stdout:?}"
        );
    }
    // The first hook started the user's server in this temporary home; it goes with the home.
    memrecall(binary, &base, &["stop"]).output()?;
    let worst = times.iter().copied().fold(0.0, f64::max);
    Ok((median(&times).unwrap_or_default(), worst))
}

/// `memrecall args` in the temporary home under `base`.
fn memrecall(binary: &Path, base: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(binary);
    command
        .args(args)
        .current_dir(base.join("repo"))
        .env_clear()
        .env("HOME", base.join("home"))
        .env("MEMRECALL_HOME", base.join("mr"));
    command
}

/// One hook process: the event on stdin, its stdout back.
fn run_hook(binary: &Path, base: &Path, event: &str) -> Result<String> {
    let mut child = memrecall(binary, base, &["hook", "--agent", "claude-code"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    child
        .stdin
        .take()
        .context("no stdin")?
        .write_all(event.as_bytes())?;
    let output = child.wait_with_output()?;
    ensure!(
        output.status.success(),
        "the hook exited with {}",
        output.status
    );
    Ok(String::from_utf8(output.stdout)?)
}

/// The options of `cargo xtask hook-latency`.
#[derive(Debug, clap::Parser)]
#[command(args_override_self = true)]
pub struct HookLatencyArgs {
    /// Tree sizes to measure, in topics
    #[arg(
        long,
        value_name = "N,N,...",
        action = clap::ArgAction::Set,
        value_delimiter = ',',
        value_parser = crate::positive,
        default_value = "200,1000,10000"
    )]
    sizes: Vec<usize>,
    /// Timed runs per size
    #[arg(long, value_name = "N", value_parser = crate::positive, default_value_t = DEFAULT_RUNS)]
    runs: usize,
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;
    use clap::error::ErrorKind;

    use super::HookLatencyArgs;

    fn parse(args: &[&str]) -> Result<HookLatencyArgs, clap::Error> {
        HookLatencyArgs::try_parse_from(std::iter::once("hook-latency").chain(args.iter().copied()))
    }

    #[test]
    fn sizes_and_runs_default_when_not_given_and_take_what_is_given() {
        let defaults = parse(&[]).unwrap();
        let given = parse(&["--sizes", "1000, 50000", "--runs", "3"]).unwrap();
        let repeated = parse(&[
            "--sizes", "1,2", "--runs", "3", "--sizes", "5", "--runs", "4",
        ])
        .unwrap();

        assert_eq!(
            (defaults.sizes, defaults.runs),
            (vec![200, 1_000, 10_000], 21)
        );
        assert_eq!((given.sizes, given.runs), (vec![1000, 50_000], 3));
        assert_eq!((repeated.sizes, repeated.runs), (vec![5], 4));
    }

    #[test]
    fn help_asks_for_no_run_and_bad_values_are_errors() {
        assert_eq!(
            parse(&["--help"]).unwrap_err().kind(),
            ErrorKind::DisplayHelp
        );
        for bad in [
            &["--sizes", "0"][..],
            &["--sizes", "ten"],
            &["--runs", "0"],
            &["--runs"],
            &["--fast"],
        ] {
            let error = parse(bad).unwrap_err();
            assert_ne!(error.kind(), ErrorKind::DisplayHelp, "{bad:?}");
        }
    }
}
