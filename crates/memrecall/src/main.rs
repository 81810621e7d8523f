//! `memrecall`: see what a memory tree would deliver for a query, and why.
//!
//! Exit codes: 0 success; 1 unexpected failure; 2 bad command line; 3 a memory root given on the
//! command line is missing or unreadable; 4 the selector is misconfigured (for example
//! `--selector http` without `--selector-url`). A selector that is configured but unreachable
//! is not an error: recall falls back to the lexical result and the output says so.

#![forbid(unsafe_code)]
// Doc comments on the argument types are `--help` text, read in a terminal, not Markdown.
#![allow(clippy::doc_markdown)]
#![allow(rustdoc::invalid_html_tags, rustdoc::bare_urls)]

// Recall allocates many small strings on tokio and rayon threads at once; glibc's allocator
// spent about a fifth of a 10,000-topic recall in malloc and free, mimalloc halves the recall.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod commands;
mod config;
mod logging;
mod output;
mod stats;
#[cfg(test)]
mod test_support;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::commands::doctor::DoctorArgs;
use crate::commands::hook::HookArgs;
use crate::commands::rank::RankArgs;
use crate::commands::recall::RecallArgs;
use crate::commands::roots::RootsArgs;
use crate::commands::scan::ScanArgs;
use crate::commands::server::{ServeArgs, StatusArgs};

/// See what your memory tree would deliver to a coding agent for a query, and why.
///
/// A memory tree is a directory of Markdown topic files with a small frontmatter (name,
/// description, type: user | feedback | project | reference). Recall reads the project root and
/// the user root, ranks topics lexically (any language) and, when a model selector is
/// configured, lets the model refine the choice.
#[derive(Debug, Parser)]
#[command(name = "memrecall", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one real turn for a query and show what is delivered at the initial point and at the
    /// tool-result point, with strategy, phase and timings.
    Recall(RecallArgs),
    /// Show the deterministic ranking with each field's score contribution.
    Rank(RankArgs),
    /// List the documents found and the files skipped (with reasons), and the scan time.
    Scan(ScanArgs),
    /// Show where a layout's project and user memory roots are for a directory, and why.
    Roots(RootsArgs),
    /// Run as an agent's hook (event JSON on stdin, context on stdout), or install it.
    Hook(HookArgs),
    /// Serve recall, listing, ranking explanations and saving as a Model Context Protocol
    /// server on stdin and stdout, for agents that look memory up themselves.
    Mcp(commands::mcp::McpArgs),
    /// Summarise the recorded telemetry: delivery rate by phase, strategy and delivery point,
    /// discard reasons, and latency percentiles against the 100 ms budget.
    Stats(stats::StatsArgs),
    /// Keep each agent session's recall alive between its prompt and tool events: the per-user
    /// server `memrecall hook` talks to (started by the hook when needed).
    Serve(ServeArgs),
    /// Stop the user's server.
    Stop,
    /// Show the user's server: sessions, roots, uptime, memory, recalls served.
    Status(StatusArgs),
    /// Check the setup in one screen for a bug report: the binary, each agent's hook and MCP
    /// entries, Codex's trust, memory roots, the server, the selector and the hook's log; each
    /// problem with the command that fixes it (exit 1 when there is one).
    Doctor(DoctorArgs),
    /// Remove everything memrecall set up: every hook entry it wrote (each settings file given
    /// back as it was), the server, its directories and the catalogs of this directory's roots;
    /// name the agents' own registrations with the command that removes them. Your notes go
    /// only when you say so.
    Uninstall(commands::uninstall::UninstallArgs),
}

fn main() -> ExitCode {
    small_pages();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) if commands::hook::is_hook_run() && error.use_stderr() => {
            // A hook entry with a bad command line must not exit 2 (that blocks the prompt).
            recall_server::hook::log_bad_command_line(&error.to_string());
            return ExitCode::SUCCESS;
        }
        Err(error) => error.exit(),
    };
    // The hook and the server log to their own files once they know where these are.
    let logs_to_file = matches!(
        cli.command,
        Command::Serve(_) | Command::Hook(HookArgs { action: None, .. })
    );
    if !logs_to_file {
        logging::to_stderr();
    }
    let result = match cli.command {
        Command::Recall(args) => commands::recall::run(&args),
        Command::Rank(args) => commands::rank::run(&args),
        Command::Scan(args) => commands::scan::run(&args),
        Command::Roots(args) => commands::roots::run(&args),
        Command::Mcp(args) => commands::mcp::run(&args),
        Command::Stats(args) => stats::run(&args),
        Command::Serve(args) => commands::server::run_serve(&args),
        Command::Stop => commands::server::run_stop(),
        Command::Status(args) => commands::server::run_status(&args),
        Command::Doctor(args) => commands::doctor::run(&args),
        Command::Uninstall(args) => commands::uninstall::run(&args),
        Command::Hook(HookArgs {
            action: Some(action),
            ..
        }) => commands::hook::run_settings(&action),
        Command::Hook(HookArgs {
            action: None,
            agent,
            layout,
        }) => {
            if let Some(agent) = agent {
                recall_server::hook::run(agent, layout, &commands::PROGRAM);
            }
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("memrecall: {}", output::one_line(&failure.message));
            ExitCode::from(failure.code)
        }
    }
}

/// Turns transparent huge pages off for this process and those it starts (the server).
///
/// The allocator asks for huge pages where the kernel offers them, so the first touch of any
/// part of a heap faults in and zeroes 2 MiB. A recall's heaps are many and small (one per tokio
/// and rayon thread), and most of each huge page stayed unused: the server held 56.5 MiB at
/// 1,000 topics with huge pages and 16.7 MiB without, a 10,000-topic recall in a new process
/// 60 and 38 MiB.
fn small_pages() {
    #[cfg(target_os = "linux")]
    {
        // Best effort: a kernel without the setting keeps its default.
        let _ = rustix::thread::disable_transparent_huge_pages(true);
    }
}
