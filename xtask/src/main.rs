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
mod compare_scorers;
mod dist;
mod eval;
#[cfg(unix)]
mod faults;
mod fuzz;
mod hook_latency;
mod icu_data;
mod sandbox;
mod scan_latency;
#[cfg(unix)]
mod serve_latency;
mod unused_deps;

use std::ffi::OsString;
use std::process::Command;

use anyhow::{Context, Result, bail};
use clap::{CommandFactory as _, Parser, Subcommand};

/// Project automation that is easier to keep correct in Rust than in shell.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    task: Option<Task>,
}

/// One `cargo xtask` command. Each command's options are its module's (where a later value of
/// an option replaces an earlier one).
#[derive(Debug, Subcommand)]
enum Task {
    /// Runs the real agents headless against a loopback model with memrecall installed
    ///
    /// Installs the four agents from npm (pinned, cached in target/agents/), runs each headless
    /// against a loopback model with memrecall installed (hook install, then its plugin or
    /// extension through the agent's own command) and checks what reached the model. Prints that
    /// it was not run without npm.
    #[cfg(unix)]
    Agents(agents::AgentsArgs),
    /// Rewrites lexical-score's character class table from the Unicode tables
    ///
    /// Run it after a Unicode update; a unit test checks it is fresh.
    ClassTable,
    /// Ranks one query with the shipped and the frozen scorer, side by side
    ///
    /// Scans the memory directories given and prints both rankings of the query: the
    /// comparison `eval` makes over the corpus, on a tree of one's own.
    CompareScorers(compare_scorers::CompareScorersArgs),
    /// Runs the same checks as .ci/run (fmt, clippy, tests, eval, cargo-deny)
    Ci,
    /// Builds the release binary and packs it under target/dist/
    ///
    /// Builds the release binary for this machine and packs it under target/dist/:
    /// `memrecall-<version>-<target>.tar.gz` with its .sha256 (for cargo binstall), the npm
    /// package memrecall and this platform's package (packed with npm pack where npm exists).
    Dist(dist::DistArgs),
    /// Recall quality, delivery and scoring latency on corpus/recall-eval; gated
    ///
    /// Recall quality, delivery and scoring latency on corpus/recall-eval, plus a small
    /// scan-latency report; exits non-zero when a quality gate fails.
    Eval(eval::EvalArgs),
    /// Time from the recall call to the fast result on real temporary trees
    ///
    /// Times the recall call to the fast result on real temporary trees of reference topics, in
    /// this process (fresh cache per run) and in as many new processes; writes
    /// target/scan-latency.svg. Always measures a release build: run from a debug build, it
    /// rebuilds and runs itself with --release.
    ScanLatency(scan_latency::ScanLatencyArgs),
    /// Hostile neighbours of the release binary: changed catalogs, silent sockets, FIFOs, limits
    ///
    /// Runs memrecall's hooks and commands while its catalog is rewritten, truncated and copied
    /// over, against a stopped server and a listener that never accepts, with FIFOs in place of
    /// its files, under a 1 GiB address space with 64 projects, and over a deep and a huge tree;
    /// every run is under a time limit. Prints a table; exits non-zero when a case fails.
    #[cfg(unix)]
    Faults(faults::FaultsArgs),
    /// Runs the fuzz targets and the lifecycle's interleaving property test
    ///
    /// Runs each fuzz target under fuzz/ (nightly, cargo-fuzz) and the lifecycle's interleaving
    /// property test for N cases; reports executions per target. Needs the nightly toolchain and
    /// cargo-fuzz (cargo install cargo-fuzz).
    Fuzz(fuzz::FuzzArgs),
    /// Rewrites lexical-score's word segmentation data from the data ICU4X ships
    ///
    /// ICU4X baked data for Thai, Lao, Khmer and Myanmar; a unit test checks it is fresh.
    IcuData,
    /// Whole-process wall time of `memrecall hook` over a warm catalog
    ///
    /// Whole-process wall time of `memrecall hook` (a release build) over a warm catalog, median
    /// and worst.
    HookLatency(hook_latency::HookLatencyArgs),
    /// Fails on a declared dependency nothing uses
    ///
    /// Fails when a workspace crate declares a dependency its code never names,
    /// [workspace.dependencies] lists one no crate declares, or an allowance names a dependency
    /// its crate no longer declares.
    UnusedDeps,
    /// `memrecall serve` warm: hook wall time, the server's fast result, its peak memory
    ///
    /// `memrecall serve` warm: hook client wall time, the server's recall to fast result, and its
    /// peak memory.
    #[cfg(unix)]
    ServeLatency(serve_latency::ServeLatencyArgs),
    /// One recall in a new process, started by `scan-latency` itself; not for direct use
    #[command(hide = true)]
    ScanLatencyProcess(scan_latency::ProcessArgs),
}

/// A whole number above zero, spaces around it allowed (`--sizes "1000, 50000"`).
pub(crate) fn positive(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("must be positive".to_owned()),
        Ok(n) => Ok(n),
        Err(error) => Err(error.to_string()),
    }
}

fn main() -> Result<()> {
    // As the `memrecall` binary does (see its `small_pages`), so latency and memory reports
    // measure what it runs.
    #[cfg(target_os = "linux")]
    let _ = rustix::thread::disable_transparent_huge_pages(true);
    let Some(task) = Cli::parse().task else {
        Cli::command().print_help()?;
        return Ok(());
    };
    match task {
        #[cfg(unix)]
        Task::Agents(args) => agents::main(&args),
        Task::Ci => ci(),
        Task::ClassTable => class_table::main(),
        Task::CompareScorers(args) => compare_scorers::main(&args),
        Task::Dist(args) => dist::main(&args),
        Task::Eval(args) => eval::main(&args),
        #[cfg(unix)]
        Task::Faults(args) => faults::main(&args),
        Task::Fuzz(args) => fuzz::main(&args),
        Task::ScanLatency(_)
            if cfg!(debug_assertions) && std::env::var_os(RELEASED_GUARD).is_none() =>
        {
            run_released(std::env::args_os().skip(1))
        }
        Task::ScanLatency(args) => scan_latency::main(&args),
        Task::HookLatency(args) => hook_latency::main(&args),
        Task::IcuData => icu_data::main(),
        Task::UnusedDeps => unused_deps::main(),
        #[cfg(unix)]
        Task::ServeLatency(args) => serve_latency::main(&args),
        Task::ScanLatencyProcess(args) => scan_latency::process_main(&args),
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

/// Runs xtask again in a release build, with the same arguments: timings of an unoptimised
/// build say nothing about what users run.
fn run_released(args: impl Iterator<Item = OsString>) -> Result<()> {
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
        .args(args)
        .current_dir(workspace_root()?)
        .env(RELEASED_GUARD, "1")
        .status()
        .context("could not start cargo to build xtask with --release")?;
    if !status.success() {
        bail!("the release build of xtask failed with {status}");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// Every `cargo xtask` invocation `.ci/run`, the README and `docs/` show.
    #[test]
    fn the_invocations_the_repository_shows_parse() {
        for line in [
            "unused-deps",
            "eval",
            "eval --json",
            "fuzz --seconds 10 --cases 0",
            "faults",
            "agents",
            "agents --agents claude-code,qwen-code,gemini-cli,codex --timeout 240 --model-latency 0",
            "dist",
            "dist --check",
            "class-table",
            "compare-scorers deploys --project /tmp/memory --user /tmp/user --limit 0",
            "icu-data",
            "ci",
            "scan-latency",
            "scan-latency --json",
            "scan-latency --sizes 200,1000,2000,5000,10000,50000 --modes scan,catalog --runs 3",
            "hook-latency",
            "hook-latency --sizes 200,1000,10000 --runs 5",
            "serve-latency",
            "serve-latency --sizes 1000,10000,50000,100000 --runs 5",
            "fuzz --seconds 60 --targets tokenizer,answer --cases 100 --sanitizer none",
            "scan-latency-process /tmp/tree catalog",
        ] {
            if cfg!(not(unix)) && (line.starts_with("agents") || line.starts_with("serve-latency"))
            {
                continue;
            }
            let args = std::iter::once("cargo xtask").chain(line.split(' '));
            let cli = Cli::try_parse_from(args).unwrap_or_else(|e| panic!("{line}: {e}"));
            assert!(cli.task.is_some(), "{line}");
        }
    }

    #[test]
    fn a_later_value_of_an_option_replaces_an_earlier_one() {
        let cli = Cli::try_parse_from(["cargo xtask", "eval", "--json", "--json"]);
        assert!(matches!(cli.unwrap().task, Some(Task::Eval(_))));
        let cli = Cli::try_parse_from(["cargo xtask", "fuzz", "--seconds", "1", "--seconds", "2"]);
        assert!(matches!(cli.unwrap().task, Some(Task::Fuzz(_))));
    }

    #[test]
    fn no_command_asks_for_the_help_and_an_unknown_one_is_refused() {
        assert!(Cli::try_parse_from(["cargo xtask"]).unwrap().task.is_none());
        for bad in [
            &["cargo xtask", "deploy"][..],
            &["cargo xtask", "class-table", "extra"],
            &["cargo xtask", "unused-deps", "--fix"],
            &["cargo xtask", "dist", "--check", "now"],
        ] {
            assert!(Cli::try_parse_from(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn positive_numbers_may_have_spaces_and_zero_or_words_are_refused() {
        assert_eq!(positive(" 50000"), Ok(50_000));
        assert!(positive("0").is_err());
        assert!(positive("ten").is_err());
        assert!(positive("-1").is_err());
    }
}
