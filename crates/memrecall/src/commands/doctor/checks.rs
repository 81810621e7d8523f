//! What `doctor` looks at in each agent, one function each: its hook and MCP entries and, for an
//! agent that runs only the hooks the user trusts, that trust.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Problem;
use agent_hooks::agent_files::{self, McpEntry};
use agent_hooks::settings::{self, Document};
use agent_hooks::{Agent, Environment};

/// One hook entry and the binary it runs.
#[derive(Debug, Clone, Serialize)]
pub(super) struct HookReport {
    pub(super) command: String,
    pub(super) program: PathBuf,
    /// Where the program was found (itself when absolute, else on this `PATH`).
    pub(super) found: Option<PathBuf>,
}

/// One MCP registration and the binary it runs.
#[derive(Debug, Clone, Serialize)]
pub(super) struct McpReport {
    pub(super) file: PathBuf,
    pub(super) program: PathBuf,
    pub(super) found: Option<PathBuf>,
}

impl HookReport {
    /// The entry running `command`, and where its binary is.
    pub(super) fn new(command: String) -> Self {
        let program = PathBuf::from(settings::program_of(&command));
        let found = locate(&program);
        Self {
            command,
            program,
            found,
        }
    }
}

/// Where `program` is: itself when it is a path, else the first match on `PATH`.
pub(super) fn locate(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return program.is_file().then(|| program.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}

/// The agents `doctor` looks at: the one named, else each whose settings directory exists.
pub(super) fn agents_found(only: Option<Agent>, env: &Environment) -> Vec<Agent> {
    if let Some(agent) = only {
        return vec![agent];
    }
    Agent::ALL
        .into_iter()
        .filter(|&agent| {
            settings::settings_path(agent, None, env)
                .ok()
                .and_then(|p| p.parent().map(Path::is_dir))
                .unwrap_or(false)
        })
        .collect()
}

/// The hook's fix: install it again with this binary.
pub(super) fn install_again(binary: &str, agent: Agent) -> String {
    format!("{binary} hook install --agent {} --write", agent.as_str())
}

/// A memrecall entry whose timeout is above what the agent allows on its event (Codex's session
/// end): a problem, fixed by installing again.
pub(super) fn timeout_problems(
    agent: Agent,
    document: Option<&Document>,
    path: &Path,
    fix: &str,
    problems: &mut Vec<Problem>,
) {
    for (event, written) in document
        .map(|d| d.timeouts_over_limit(agent))
        .unwrap_or_default()
    {
        problems.push(Problem::new(
            format!(
                "{}: the {event} hook's timeout in {} is {written}, above the {} the agent allows there (it cuts it down and warns on every run)",
                agent.as_str(),
                path.display(),
                settings::event_timeout(agent, event).setting()
            ),
            fix.to_owned(),
        ));
    }
}

/// The problems of an agent's hook entries: none, events left out, a command without the guard
/// the agent needs (an older install's), a binary that is not there or is found on this `PATH`
/// only.
pub(super) fn hook_problems(
    agent: Agent,
    hooks: &[HookReport],
    missing_events: &[&str],
    fix: &str,
    problems: &mut Vec<Problem>,
) {
    if hooks.is_empty() {
        problems.push(Problem::new(
            format!("{}: the memrecall hook is not installed", agent.as_str()),
            fix.to_owned(),
        ));
    } else if !missing_events.is_empty() {
        problems.push(Problem::new(
            format!(
                "{}: the hook is not registered for {}",
                agent.as_str(),
                missing_events.join(", ")
            ),
            fix.to_owned(),
        ));
    }
    for hook in hooks {
        let guarded = settings::hook_command_in(
            agent,
            &hook.program,
            None,
            settings::CommandShell::of(agent),
        );
        if settings::is_guarded(&guarded) && !settings::is_guarded(&hook.command) {
            problems.push(Problem::new(
                format!(
                    "{}: the hook runs {} unguarded: the agent blocks every prompt if that binary goes away",
                    agent.as_str(),
                    hook.program.display()
                ),
                fix.to_owned(),
            ));
        }
        if hook.found.is_none() {
            problems.push(Problem::new(
                format!(
                    "{}: the hook runs {}, which does not exist",
                    agent.as_str(),
                    hook.program.display()
                ),
                fix.to_owned(),
            ));
        } else if !hook.program.is_absolute() {
            problems.push(Problem::new(
                format!(
                    "{}: the hook runs a bare `{}`, found on this PATH only; the agent's PATH may lack it",
                    agent.as_str(),
                    hook.program.display()
                ),
                fix.to_owned(),
            ));
        }
    }
}

impl McpReport {
    /// The registration `entry`, and where its binary is.
    pub(super) fn new(entry: McpEntry) -> Self {
        let program = PathBuf::from(entry.command);
        let found = locate(&program);
        Self {
            file: entry.file,
            program,
            found,
        }
    }
}

/// The MCP server the user registered with the agent's own command.
pub(super) fn mcp(agent: Agent, env: &Environment) -> Option<McpReport> {
    agent_files::mcp_registration(agent, env).map(McpReport::new)
}

/// The agent's trust in its hooks, for an agent that runs only those the user trusts; a problem
/// when it trusts none.
pub(super) fn hook_trust(
    agent: Agent,
    env: &Environment,
    problems: &mut Vec<Problem>,
) -> Option<String> {
    let trust = agent_files::trusted_hooks(agent, env)?;
    let command = agent.conventions().command;
    if trust.trusted == 0 {
        problems.push(Problem::new(
            format!(
                "{}: no hook is trusted yet (no `trusted_hash` under `hooks.state` in {}); `{command} exec` skips an untrusted hook without a word",
                agent.as_str(),
                trust.file.display()
            ),
            format!("run `{command}` in a terminal and trust the memrecall hook there"),
        ));
        return Some("not trusted".to_owned());
    }
    Some(format!(
        "{} hook(s) trusted under hooks.state in {}",
        trust.trusted,
        trust.file.display()
    ))
}
