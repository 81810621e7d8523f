//! `cargo xtask fuzz`: runs each coverage-guided fuzz target under `fuzz/` (cargo-fuzz on the
//! nightly toolchain, outside the stable workspace) for a while, then the lifecycle's
//! interleaving property test for many cases, and reports what ran.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// The fuzz targets, and whether each is built without comparison tracing (a target whose time
/// goes to tracing the comparisons of large Unicode tables runs several times faster without).
const TARGETS: [(&str, bool); 6] = [
    ("frontmatter", false),
    ("tokenizer", true),
    ("answer", false),
    ("catalog", false),
    ("hook_event", false),
    ("request_frame", false),
];

/// The longest input given to a target, where the default (4,096 bytes) wastes its time: the
/// tokenizer normalises and scans its input three times, and its scanners work on 64-byte
/// blocks, so 256 bytes cover every block boundary case at several times the speed.
fn max_len(target: &str) -> Option<u32> {
    (target == "tokenizer").then_some(256)
}

/// No single allocation of a decoder may exceed this (libFuzzer fails the run when one does).
const MALLOC_LIMIT_MB: u32 = 256;

const USAGE: &str = "usage: cargo xtask fuzz [--seconds N] [--targets a,b] [--cases N]
  --seconds N   how long each target runs (default 60; 0 runs no target)
  --targets     which of frontmatter, tokenizer, answer, catalog, hook_event,
                request_frame (default all)
  --cases N     interleaving property-test cases (default 10000; 0 skips it)
  --sanitizer S address (default) or none: the workspace forbids unsafe code, so a long run may
                trade AddressSanitizer's checks of dependencies for two to three times the speed
Needs the nightly toolchain and cargo-fuzz (cargo install cargo-fuzz).";

/// What one fuzz run reported.
struct Ran {
    target: &'static str,
    runs: u64,
    seconds: u64,
}

pub fn main(args: &[String]) -> Result<()> {
    let mut seconds = 60_u64;
    let mut targets: Vec<(&str, bool)> = TARGETS.to_vec();
    let mut cases = 10_000_u32;
    let mut sanitizer = "address".to_owned();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .with_context(|| format!("{arg} needs a value\n{USAGE}"))
        };
        match arg.as_str() {
            "--seconds" => seconds = value()?.parse().context("--seconds")?,
            "--cases" => cases = value()?.parse().context("--cases")?,
            "--sanitizer" => sanitizer.clone_from(value()?),
            "--targets" => {
                let wanted: Vec<String> = value()?.split(',').map(str::to_owned).collect();
                targets.retain(|(name, _)| wanted.iter().any(|w| w == name));
                if targets.len() != wanted.len() {
                    bail!("unknown target in {wanted:?}\n{USAGE}");
                }
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => bail!("unknown option {other:?}\n{USAGE}"),
        }
    }
    let root = crate::workspace_root()?;
    let fuzz = root.join("fuzz");
    let mut ran = Vec::new();
    // libFuzzer reads a total time of 0 as "no limit".
    if seconds == 0 {
        targets.clear();
    }
    for (target, no_trace_compares) in targets {
        ran.push(run_target(
            &fuzz,
            target,
            no_trace_compares,
            &sanitizer,
            seconds,
        )?);
    }
    println!("\n| target | executions | seconds | executions/s | crashes |");
    println!("|---|---|---|---|---|");
    for r in &ran {
        println!(
            "| {} | {} | {} | {} | 0 |",
            r.target,
            r.runs,
            r.seconds,
            r.runs / r.seconds.max(1)
        );
    }
    if cases > 0 {
        run_interleavings(&root, cases)?;
    }
    Ok(())
}

fn run_target(
    fuzz: &Path,
    target: &'static str,
    no_trace_compares: bool,
    sanitizer: &str,
    seconds: u64,
) -> Result<Ran> {
    println!("== fuzz {target} for {seconds} s");
    let mut command = Command::new("cargo");
    command
        .current_dir(fuzz)
        // The nightly toolchain is chosen here, not by the workspace's rust-toolchain.toml.
        .env_remove("RUSTUP_TOOLCHAIN")
        .args(["+nightly", "fuzz", "run", "--sanitizer", sanitizer]);
    if no_trace_compares {
        command.arg("--no-trace-compares");
    }
    let output = command
        .arg(target)
        .arg("--")
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-malloc_limit_mb={MALLOC_LIMIT_MB}"))
        .arg("-rss_limit_mb=2048")
        .arg("-print_final_stats=1")
        .args(max_len(target).map(|len| format!("-max_len={len}")))
        .output()
        .context(
            "could not start cargo +nightly fuzz (install it with `cargo install cargo-fuzz`)",
        )?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        let tail: Vec<&str> = stderr.lines().rev().take(40).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        bail!(
            "fuzz target {target} failed ({}):\n{}",
            output.status,
            tail.join("\n")
        );
    }
    // libFuzzer's last words: "Done 1395479 runs in 16 second(s)".
    let done = stderr
        .lines()
        .rev()
        .find_map(|line| {
            let rest = line.strip_prefix("Done ")?;
            let (runs, rest) = rest.split_once(" runs in ")?;
            let (seconds, _) = rest.split_once(' ')?;
            Some((runs.parse().ok()?, seconds.parse().ok()?))
        })
        .with_context(|| format!("fuzz target {target} did not report its runs:\n{stderr}"))?;
    println!("   {} executions in {} s", done.0, done.1);
    Ok(Ran {
        target,
        runs: done.0,
        seconds: done.1,
    })
}

/// The lifecycle's interleaving property test with `cases` cases.
fn run_interleavings(root: &Path, cases: u32) -> Result<()> {
    println!("\n== interleavings: {cases} cases");
    let started = Instant::now();
    let status = Command::new("cargo")
        .current_dir(root)
        .env("PROPTEST_CASES", cases.to_string())
        .args([
            "test",
            "--locked",
            "--release",
            "-p",
            "recall-lifecycle",
            "--test",
            "lifecycle",
            "--",
            "--exact",
            "interleavings::session_guarantees_hold_under_any_interleaving",
        ])
        .status()
        .context("could not start cargo test")?;
    if !status.success() {
        bail!("the interleaving property test failed");
    }
    println!(
        "   {cases} cases passed in {:.1} s (exactly-once terminal telemetry, no duplicate delivery, nothing across a query)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
