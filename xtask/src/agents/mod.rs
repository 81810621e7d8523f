//! `cargo xtask agents`: the real agents, installed from npm at pinned versions, run headless
//! against a loopback model with memrecall installed as the README tells a user, and checked
//! from the requests the model received.
//!
//! Each agent gets a temporary `HOME` and git repository with memories carrying unique markers
//! where its layout keeps project memory, the hook from `memrecall hook install --write` and the
//! MCP server registered as the README shows. The checks: the marker reaches the model with the
//! first prompt (English, Chinese); memrecall's MCP tools are offered and a scripted
//! `recall_memories` call returns the memory; with a selector answering after 300 ms, its
//! remaining pick arrives after the tool call, from the tool-result hook, once, and no delivered
//! document is repeated; `hook uninstall` leaves the settings file as it was before `install`;
//! and, in a second sandbox, memrecall installed only as the agent's own plugin or extension
//! (`plugins/`, through the agent's own install command, offline) reaches the model with the
//! first prompt and offers its MCP tools; with the binary missing from `PATH`, deleted, or killed
//! by a signal, the prompt still reaches the model, and Claude Code's plugin server comes back
//! once the binary does. Hooks run through a timing script (`install
//! --command`, and `memrecall` on the sandbox's `PATH`), which gives their wall time. Requests,
//! hook inputs and outputs, and agent output are kept in `target/agents/logs/`.

mod checks;
mod context;
mod model;
mod npm;
mod package;
mod requests;
mod run;
mod setup;
mod unrunnable;

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

use setup::AGENTS;

/// The options of `cargo xtask agents`.
#[derive(Debug, clap::Parser)]
#[command(args_override_self = true)]
pub struct AgentsArgs {
    /// Which agents to run (default all four)
    #[arg(
        long,
        value_name = "AGENT,...",
        action = clap::ArgAction::Set,
        value_delimiter = ',',
        value_parser = clap::builder::PossibleValuesParser::new(AGENTS.map(|agent| agent.name))
    )]
    agents: Option<Vec<String>>,
    /// How long one headless run may take before it is killed, in seconds
    #[arg(long, value_name = "SECONDS", default_value_t = 240)]
    timeout: u64,
    /// How long the loopback model takes over each conversation request in the selector run, in
    /// milliseconds (the selector answers after 300 ms: 700 puts the first tool result after its
    /// answer, as in a real turn, and 0 puts it before)
    #[arg(long, value_name = "MS", default_value_t = 700)]
    model_latency: u64,
    /// Run only the checks of a binary that cannot run (missing from PATH, deleted, killed by
    /// a signal, and Claude Code's MCP server coming back)
    #[arg(long)]
    binary_faults_only: bool,
}

/// How the runs are made.
pub struct Options {
    /// How long one headless run may take before it is killed.
    timeout: Duration,
    /// How long the loopback model takes over each conversation request in the selector run.
    /// The selector answers after 300 ms; the default 700 ms puts the first tool result after
    /// its answer, as in a real turn, and 0 puts it before.
    model_latency: Duration,
    /// Whether to run only the checks of a binary that cannot run.
    binary_faults_only: bool,
}

/// One check of one agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// The memory's marker is in the first request of an English prompt.
    FirstPromptEn,
    /// The same for the Chinese prompt.
    FirstPromptZh,
    /// memrecall's MCP tools are offered to the model.
    McpListed,
    /// A scripted `recall_memories` call comes back with the memory.
    McpCall,
    /// With a slow selector, its remaining pick arrives after the tool call, once.
    Refined,
    /// A memory the model fetched with `recall_memories` is not delivered again by a hook.
    FetchedOnce,
    /// With the agent's own memory recall on (Qwen Code), the memory reaches the model once.
    OwnRecallOnce,
    /// The agent printed no warning about memrecall's hooks.
    NoHookWarning,
    /// `hook uninstall` restores the settings file's bytes.
    Uninstall,
    /// Installed only as the agent's own plugin or extension, memrecall reaches the model.
    Package,
    /// With the plugin or extension installed, `memrecall doctor` says healthy.
    DoctorHealthy,
    /// With no `memrecall` on `PATH` (the package's, or Codex's bare command), the prompt
    /// reaches the model.
    MissingFromPath,
    /// With the binary `hook install` named deleted, the prompt reaches the model.
    Deleted,
    /// With the binary killed by a signal, the prompt reaches the model.
    Killed,
    /// Claude Code's plugin MCP server, failed for want of the binary, is offered again once the
    /// binary is back (and the fix `doctor` names applied).
    McpBack,
}

impl Check {
    const ALL: [Self; 15] = [
        Self::FirstPromptEn,
        Self::FirstPromptZh,
        Self::McpListed,
        Self::McpCall,
        Self::Refined,
        Self::FetchedOnce,
        Self::OwnRecallOnce,
        Self::NoHookWarning,
        Self::Uninstall,
        Self::Package,
        Self::DoctorHealthy,
        Self::MissingFromPath,
        Self::Deleted,
        Self::Killed,
        Self::McpBack,
    ];

    fn label(self) -> &'static str {
        match self {
            Self::FirstPromptEn => "first prompt, English",
            Self::FirstPromptZh => "first prompt, Chinese",
            Self::McpListed => "MCP tools listed",
            Self::McpCall => "MCP recall_memories call",
            Self::Refined => "selector pick after a tool",
            Self::FetchedOnce => "recall_memories result not repeated",
            Self::OwnRecallOnce => "agent's own recall on: once",
            Self::Uninstall => "uninstall byte-identical",
            Self::Package => "plugin/extension install",
            Self::DoctorHealthy => "doctor healthy with the package",
            Self::NoHookWarning => "no agent warning about a hook",
            Self::MissingFromPath => "binary missing from PATH",
            Self::Deleted => "binary deleted",
            Self::Killed => "binary killed by a signal",
            Self::McpBack => "MCP server back with the binary",
        }
    }
}

/// A check's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Fail,
    NotRun,
}

/// One line of the report.
pub struct Row {
    agent: &'static str,
    version: &'static str,
    check: Check,
    verdict: Verdict,
    hook: String,
    detail: String,
}

pub fn main(args: &AgentsArgs) -> Result<()> {
    let options = Options {
        timeout: Duration::from_secs(args.timeout),
        model_latency: Duration::from_millis(args.model_latency),
        binary_faults_only: args.binary_faults_only,
    };
    if !npm::available() {
        println!("npm was not found: the agents check was not run");
        return Ok(());
    }
    let root = crate::workspace_root()?;
    let cache = root.join("target/agents");
    let logs = cache.join("logs");
    std::fs::create_dir_all(&logs)?;
    let binary = build_binary(&root)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;

    let mut rows = Vec::new();
    let mut timings = Vec::new();
    for agent in AGENTS.iter().filter(|a| {
        args.agents
            .as_ref()
            .is_none_or(|names| names.iter().any(|n| n == a.name))
    }) {
        let started = Instant::now();
        println!("{} {}: installing and running…", agent.name, agent.version);
        let result = npm::install(&cache, agent).and_then(|agent_bin| {
            run::check_agent(&runtime, agent, &agent_bin, &binary, &options, &logs)
        });
        match result {
            Ok(agent_rows) => rows.extend(agent_rows),
            Err(error) => rows.extend(Check::ALL.map(|check| Row {
                agent: agent.name,
                version: agent.version,
                check,
                verdict: Verdict::NotRun,
                hook: String::new(),
                detail: format!("{error:#}").replace('\n', " "),
            })),
        }
        timings.push((agent.name, started.elapsed()));
    }
    print!("{}", table(&rows));
    for (name, elapsed) in &timings {
        println!("{name}: {:.1} s in all", elapsed.as_secs_f64());
    }
    println!("requests and agent output: {}", logs.display());
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Fail)
        .map(|r| format!("{} / {}", r.agent, r.check.label()))
        .collect();
    let not_run = rows.iter().filter(|r| r.verdict == Verdict::NotRun).count();
    if !failed.is_empty() {
        bail!(
            "{} check(s) failed ({not_run} not run): {}",
            failed.len(),
            failed.join("; ")
        );
    }
    println!("every check that ran passed ({not_run} not run)");
    Ok(())
}

/// Builds the debug `memrecall` and returns its absolute path.
fn build_binary(root: &std::path::Path) -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--locked", "--quiet", "--package", "memrecall"])
        .current_dir(root)
        .status()
        .context("could not start cargo to build memrecall")?;
    ensure!(status.success(), "building memrecall failed with {status}");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| root.join("target"), |d| root.join(d));
    let binary = target
        .join("debug")
        .join(format!("memrecall{}", std::env::consts::EXE_SUFFIX));
    ensure!(binary.is_file(), "no binary at {}", binary.display());
    Ok(binary)
}

fn table(rows: &[Row]) -> String {
    let headers = [
        "agent",
        "version",
        "check",
        "result",
        "hook wall time",
        "detail",
    ];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            let verdict = match r.verdict {
                Verdict::Pass => "pass",
                Verdict::Fail => "FAIL",
                Verdict::NotRun => "not run",
            };
            [
                r.agent.to_owned(),
                r.version.to_owned(),
                r.check.label().to_owned(),
                verdict.to_owned(),
                r.hook.clone(),
                r.detail.clone(),
            ]
        })
        .collect();
    let mut widths = headers.map(|h| h.chars().count());
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: &[&str]| {
        let padded: Vec<String> = cells
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        let _ = writeln!(out, "{}", padded.join(" | ").trim_end());
    };
    line(&mut out, &headers);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    let _ = writeln!(out, "{}", rule.join("-|-"));
    for row in &cells {
        line(&mut out, &row.each_ref().map(String::as_str));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_columns_and_marks_failures() {
        let row = |verdict| Row {
            agent: "codex",
            version: "0.169.0",
            check: Check::Uninstall,
            verdict,
            hook: String::new(),
            detail: "d".into(),
        };
        let text = table(&[row(Verdict::Pass), row(Verdict::Fail)]);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("agent | version | check"));
        assert!(lines[3].contains("| FAIL"));
        assert_eq!(lines[2].find("| pass"), lines[3].find("| FAIL"));
    }

    fn parse(args: &[&str]) -> Result<AgentsArgs, clap::Error> {
        use clap::Parser as _;
        AgentsArgs::try_parse_from(std::iter::once("agents").chain(args.iter().copied()))
    }

    #[test]
    fn options_not_given_run_every_agent_with_four_minutes_and_a_700_ms_model() {
        let options = parse(&[]).unwrap();
        assert_eq!(
            (options.agents, options.timeout, options.model_latency),
            (None, 240, 700)
        );
    }

    #[test]
    fn agents_timeout_and_model_latency_take_what_is_given() {
        let options = parse(&[
            "--agents",
            "codex,qwen-code",
            "--timeout",
            "60",
            "--model-latency",
            "0",
        ])
        .unwrap();
        assert_eq!(
            options.agents,
            Some(vec!["codex".to_owned(), "qwen-code".to_owned()])
        );
        assert_eq!((options.timeout, options.model_latency), (60, 0));
    }

    #[test]
    fn an_unknown_agent_or_a_bad_number_is_refused() {
        for bad in [
            &["--agents", "cursor"][..],
            &["--timeout", "4m"],
            &["--model-latency"],
            &["--verbose"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
