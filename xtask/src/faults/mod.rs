//! `cargo xtask faults`: what a hostile or careless neighbour does to memrecall's files, sockets
//! and limits, through the release binary, each case under a time limit; gated.
//!
//! Every hook run must exit 0, never by a signal, within its bound, and print only memories of
//! the tree it recalls from. The cases:
//!
//! - `catalog-churn`: hooks recalling in their own process while another process rewrites the
//!   catalog in place, truncates it, and copies a saved one over it (as `cp` does);
//! - `stopped-server`: a server stopped by `SIGSTOP` with its listen backlog full;
//! - `silent-listener`: a listener with a backlog of one that never accepts;
//! - `fifos`: a FIFO in the place of each file memrecall opens of its own;
//! - `many-projects`: one server under a 1 GiB address space serving 64 projects;
//! - `deep-tree`, `huge-tree`: a root of 3,000 nested directories, one of 200,000 files.

mod catalog;
mod files;
mod server;
mod trees;
mod world;

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::Args;

/// The cases, in the order they run.
const CASES: [&str; 7] = [
    "catalog-churn",
    "stopped-server",
    "silent-listener",
    "fifos",
    "many-projects",
    "deep-tree",
    "huge-tree",
];

/// Options of `cargo xtask faults`.
#[derive(Debug, Args)]
pub struct FaultsArgs {
    /// The memrecall binary to run (default: the release build, built first)
    #[arg(long)]
    binary: Option<PathBuf>,
    /// Hooks run while the catalog is churned
    #[arg(long, default_value_t = 1000, value_parser = crate::positive)]
    hooks: usize,
    /// Cases to run, comma-separated (default: all)
    #[arg(long, value_delimiter = ',')]
    cases: Vec<String>,
}

/// One case's outcome: a line of the table, and whether it passed.
pub(crate) struct Outcome {
    case: &'static str,
    runs: usize,
    observed: String,
    passed: bool,
}

impl Outcome {
    pub(crate) fn new(case: &'static str, runs: usize, observed: String, passed: bool) -> Self {
        Self {
            case,
            runs,
            observed,
            passed,
        }
    }
}

pub fn main(args: &FaultsArgs) -> Result<()> {
    for case in &args.cases {
        if !CASES.contains(&case.as_str()) {
            bail!("no case {case:?}; the cases are {}", CASES.join(", "));
        }
    }
    let binary = match &args.binary {
        Some(binary) => std::path::absolute(binary)?,
        None => crate::hook_latency::build_release_binary()?,
    };
    let chosen = |case: &str| args.cases.is_empty() || args.cases.iter().any(|c| c == case);
    let mut outcomes = Vec::new();
    for case in CASES.into_iter().filter(|case| chosen(case)) {
        eprintln!("faults: {case} …");
        let ran = match case {
            "catalog-churn" => catalog::churn(&binary, args.hooks),
            "stopped-server" => server::stopped(&binary),
            "silent-listener" => server::silent_listener(&binary),
            "fifos" => files::fifos(&binary),
            "many-projects" => server::many_projects(&binary),
            "deep-tree" => trees::deep(&binary),
            "huge-tree" => trees::huge(&binary),
            _ => unreachable!("checked above"),
        };
        match ran {
            Ok(outcome) => outcomes.extend(outcome),
            Err(error) => outcomes.push(Outcome::new(
                case,
                0,
                format!("could not be run: {error:#}"),
                false,
            )),
        }
    }
    print!("{}", table(&outcomes));
    let mut failed: Vec<&str> = outcomes
        .iter()
        .filter(|o| !o.passed)
        .map(|o| o.case)
        .collect();
    failed.dedup();
    if !failed.is_empty() {
        bail!("fault cases failed: {}", failed.join(", "));
    }
    Ok(())
}

fn table(outcomes: &[Outcome]) -> String {
    let mut out = String::from("\n| case | runs | observed | verdict |\n|---|---|---|---|\n");
    for o in outcomes {
        let verdict = if o.passed { "pass" } else { "FAIL" };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {verdict} |",
            o.case, o.runs, o.observed
        );
    }
    out
}
