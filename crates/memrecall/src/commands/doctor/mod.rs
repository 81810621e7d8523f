//! `memrecall doctor`: one screen to paste into a bug report. The binary and its version; for
//! each agent found, its settings file, whether the hook and the MCP server are registered and
//! run a binary that exists, and (Codex) whether the hook is trusted; the memory roots the
//! installed hooks read for the directory and how many topics each holds, and notes in a root
//! none of them reads (`unread`); the server; the selector and one probe of it; the
//! last lines of the hook's log. Each problem comes with the one command (or edit) that fixes it.
//! Exit 0 when there is none, 1 otherwise.

mod agent;
mod agent_extra;
mod auth_cache;
mod checks;
mod installed;
mod packages;
mod selector;
mod setup;
mod unread;

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use super::{Failure, emit};
use agent_hooks::{Agent, Environment};

#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Look at this agent only [default: every agent whose settings directory exists].
    #[arg(long, value_enum)]
    agent: Option<Agent>,
    /// The directory whose memory roots to show [default: the current directory].
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
}

/// Something wrong, and what fixes it.
#[derive(Debug, Serialize)]
pub(crate) struct Problem {
    problem: String,
    fix: String,
}

impl Problem {
    fn new(problem: String, fix: String) -> Self {
        Self { problem, fix }
    }
}

/// The binary `doctor` runs as.
#[derive(Debug, Serialize)]
struct Binary {
    path: Option<PathBuf>,
    version: &'static str,
}

/// Everything `doctor` found.
#[derive(Debug, Serialize)]
struct Report {
    binary: Binary,
    agents: Vec<agent::AgentReport>,
    cwd: PathBuf,
    roots: Vec<setup::RootReport>,
    server: setup::ServerReport,
    selector: selector::SelectorReport,
    hook_log: Vec<String>,
    problems: Vec<Problem>,
}

/// How many lines of `hook.log` the report shows.
const LOG_LINES: usize = 10;

pub(crate) fn run(args: &DoctorArgs) -> Result<(), Failure> {
    let env = Environment::from_process();
    let mut problems = Vec::new();
    let path = super::install::running_binary().ok();
    let binary_text = path
        .as_ref()
        .map_or_else(|| "memrecall".to_owned(), |p| p.display().to_string());
    let agents_found = checks::agents_found(args.agent, &env);
    if agents_found.is_empty() {
        problems.push(Problem::new(
            "no agent's settings directory was found".to_owned(),
            format!("{binary_text} hook install --agent AGENT --write"),
        ));
    }
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => std::env::current_dir().unwrap_or_default(),
    };
    let cwd = std::path::absolute(&cwd).unwrap_or(cwd);
    let agents: Vec<_> = agents_found
        .iter()
        .filter_map(|&agent| agent::agent_report(agent, &env, &cwd, &binary_text, &mut problems))
        .collect();
    let layouts = unread::layouts(args.agent, &cwd, &env, &mut problems);
    let server = setup::server(&env, &mut problems);
    let (selector, chosen) = selector::selector(&env, &mut problems);
    let hook_log = setup::hook_log(&env, LOG_LINES, &mut problems);
    selector::recorded(&chosen, &server, &hook_log, &mut problems);
    let report = Report {
        binary: Binary {
            path,
            version: env!("CARGO_PKG_VERSION"),
        },
        agents,
        roots: setup::roots(&layouts, &cwd, &env, &mut problems),
        cwd,
        server,
        selector,
        hook_log,
        problems,
    };
    if args.json {
        let text = serde_json::to_string_pretty(&report).map_err(anyhow::Error::new)?;
        emit(&format!("{text}\n"))?;
    } else {
        emit(&render(&report))?;
    }
    if report.problems.is_empty() {
        Ok(())
    } else {
        Err(Failure {
            code: 1,
            message: format!(
                "{} problem(s) found, each with its fix above",
                report.problems.len()
            ),
        })
    }
}

/// Where a hook's or MCP server's program is: `present` when named by its path, the match on
/// this `PATH` for a bare name.
fn found(program: &std::path::Path, found: Option<&PathBuf>) -> String {
    match found {
        None if program.components().count() > 1 => "MISSING".to_owned(),
        None => "not on PATH".to_owned(),
        Some(_) if program.components().count() > 1 => "present".to_owned(),
        Some(path) => format!("on PATH: {}", path.display()),
    }
}

fn render(report: &Report) -> String {
    let mut out = String::new();
    let binary = report
        .binary
        .path
        .as_ref()
        .map_or_else(|| "unknown".to_owned(), |p| p.display().to_string());
    let _ = writeln!(out, "binary: {binary} (version {})", report.binary.version);
    for agent in &report.agents {
        render_agent(&mut out, agent);
    }
    let _ = writeln!(out, "memory roots for {}:", report.cwd.display());
    for root in &report.roots {
        let state = match root.topics {
            Some(n) => format!("{n} topic(s)"),
            None if root.exists => "unreadable".to_owned(),
            None => "does not exist yet".to_owned(),
        };
        let _ = writeln!(
            out,
            "  {} {}: {} ({state})",
            root.layout.as_str(),
            root.scope,
            root.path.display()
        );
    }
    let server = &report.server;
    if server.running {
        let _ = writeln!(
            out,
            "server: running (pid {}, version {}, {} session(s))",
            server.pid.unwrap_or_default(),
            server.version.as_deref().unwrap_or("?"),
            server.sessions.unwrap_or_default()
        );
        if let Some(failure) = &server.last_selector_error {
            let _ = writeln!(
                out,
                "  last selector failure: {} ({}): {}",
                failure.at, failure.kind, failure.message
            );
        }
        if let Some(variable) = &server.selector_key_unset {
            let _ = writeln!(
                out,
                "  selector key: none ({variable} was not set for the server nor for any prompt's hook)"
            );
        }
    } else {
        let _ = writeln!(out, "server: not running (the next hook starts it)");
    }
    let selector = &report.selector;
    match &selector.url {
        Some(url) => {
            let _ = writeln!(
                out,
                "selector: http, model {} at {url}: {}",
                selector.model.as_deref().unwrap_or("?"),
                selector.probe.as_deref().unwrap_or("not probed")
            );
        }
        None => {
            let _ = writeln!(out, "selector: none (lexical recall only)");
        }
    }
    if report.hook_log.is_empty() {
        let _ = writeln!(out, "hook.log: empty");
    } else {
        let _ = writeln!(out, "hook.log (last {} lines):", report.hook_log.len());
        for line in &report.hook_log {
            let _ = writeln!(out, "  {line}");
        }
    }
    if report.problems.is_empty() {
        let _ = writeln!(out, "problems: none");
    } else {
        let _ = writeln!(out, "problems:");
        for problem in &report.problems {
            let _ = writeln!(out, "  - {}\n    fix: {}", problem.problem, problem.fix);
        }
    }
    out
}

fn render_agent(out: &mut String, agent: &agent::AgentReport) {
    let exists = if agent.settings_exist {
        ""
    } else {
        " (does not exist)"
    };
    let _ = writeln!(
        out,
        "agent {}: {}{exists}",
        agent.agent.as_str(),
        agent.settings.display()
    );
    let _ = writeln!(out, "  version: {}", agent.version);
    let packaged = agent
        .packages
        .iter()
        .any(packages::PackageReport::runs_hooks);
    if agent.hooks.is_empty() && !packaged {
        let _ = writeln!(out, "  hook: not installed");
    }
    for hook in &agent.hooks {
        hook_line(out, "  ", hook);
    }
    for package in &agent.packages {
        render_package(out, package);
    }
    if (!agent.hooks.is_empty() || packaged) && !agent.missing_events.is_empty() {
        let _ = writeln!(
            out,
            "  hook events missing: {}",
            agent.missing_events.join(", ")
        );
    }
    match &agent.mcp {
        Some(mcp) => {
            let _ = writeln!(
                out,
                "  mcp: runs {} ({}, in {})",
                mcp.program.display(),
                found(&mcp.program, mcp.found.as_ref()),
                mcp.file.display()
            );
        }
        None => {
            let _ = writeln!(out, "  mcp: not registered");
        }
    }
    if let Some(project) = &agent.project {
        let _ = writeln!(out, "  project settings: {}", project.path.display());
        for hook in &project.hooks {
            hook_line(out, "    ", hook);
        }
    }
    if let Some(trust) = &agent.hook_trust {
        let _ = writeln!(out, "  trust: {trust}");
    }
}

/// One hook entry and where its program is, indented by `indent`.
fn hook_line(out: &mut String, indent: &str, hook: &checks::HookReport) {
    let _ = writeln!(
        out,
        "{indent}hook: runs {} ({})",
        hook.program.display(),
        found(&hook.program, hook.found.as_ref())
    );
}

fn render_package(out: &mut String, package: &packages::PackageReport) {
    let state = if package.enabled {
        "enabled"
    } else {
        "not enabled here"
    };
    let _ = writeln!(
        out,
        "  {} {} ({state}): {}",
        package.kind,
        package.name,
        package.dir.display()
    );
    for hook in &package.hooks {
        hook_line(out, "    ", hook);
    }
    if let Some(mcp) = &package.mcp {
        let _ = writeln!(
            out,
            "    mcp: runs {} ({})",
            mcp.program.display(),
            found(&mcp.program, mcp.found.as_ref())
        );
    }
}
