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

/// The options of `cargo xtask fuzz`.
#[derive(Debug, clap::Parser)]
#[command(args_override_self = true)]
pub struct FuzzArgs {
    /// How long each target runs, in seconds (0 runs no target)
    #[arg(long, value_name = "N", default_value_t = 60)]
    seconds: u64,
    /// Which targets run (default all)
    #[arg(
        long,
        value_name = "TARGET,...",
        action = clap::ArgAction::Set,
        value_delimiter = ',',
        value_parser = clap::builder::PossibleValuesParser::new(TARGETS.map(|(name, _)| name))
    )]
    targets: Option<Vec<String>>,
    /// Interleaving property-test cases (0 skips it)
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    cases: u32,
    /// address or none: the workspace forbids unsafe code, so a long run may trade
    /// the address sanitizer's checks of dependencies for two to three times the speed
    #[arg(long, value_name = "S", default_value = "address")]
    sanitizer: String,
}

/// What one fuzz run reported.
struct Ran {
    target: &'static str,
    runs: u64,
    seconds: u64,
}

pub fn main(args: &FuzzArgs) -> Result<()> {
    let FuzzArgs {
        seconds,
        ref targets,
        cases,
        ref sanitizer,
    } = *args;
    let mut targets: Vec<(&str, bool)> = TARGETS
        .into_iter()
        .filter(|(name, _)| {
            targets
                .as_ref()
                .is_none_or(|wanted| wanted.iter().any(|w| w == name))
        })
        .collect();
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
            sanitizer,
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

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::FuzzArgs;

    fn parse(args: &[&str]) -> Result<FuzzArgs, clap::Error> {
        FuzzArgs::try_parse_from(std::iter::once("fuzz").chain(args.iter().copied()))
    }

    #[test]
    fn options_not_given_run_every_target_for_a_minute_with_the_address_sanitizer() {
        let options = parse(&[]).unwrap();
        assert_eq!(
            (options.seconds, options.targets, options.cases),
            (60, None, 10_000)
        );
        assert_eq!(options.sanitizer, "address");
    }

    #[test]
    fn the_ci_smoke_run_and_a_chosen_target_list_parse() {
        let smoke = parse(&["--seconds", "10", "--cases", "0"]).unwrap();
        let chosen = parse(&["--targets", "tokenizer,answer", "--sanitizer", "none"]).unwrap();

        assert_eq!((smoke.seconds, smoke.cases), (10, 0));
        assert_eq!(
            chosen.targets,
            Some(vec!["tokenizer".to_owned(), "answer".to_owned()])
        );
        assert_eq!(chosen.sanitizer, "none");
    }

    #[test]
    fn an_unknown_target_or_a_missing_value_is_refused() {
        for bad in [
            &["--targets", "tokenizer,regex"][..],
            &["--targets", ""],
            &["--seconds"],
            &["--seconds", "soon"],
            &["--fast"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
