//! What `doctor` looks at in each agent, one function each: its hook and MCP entries and Codex's
//! trust in the hook.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::Problem;
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

pub(super) fn mcp_fix(agent: Agent, binary: &str, file: &Path) -> String {
    match agent {
        Agent::ClaudeCode => format!(
            "claude mcp remove memrecall; claude mcp add memrecall -- {binary} mcp --agent claude-code --read-only"
        ),
        Agent::Codex => format!(
            "set mcp_servers.memrecall.command = \"{binary}\" in {}",
            file.display()
        ),
        Agent::QwenCode | Agent::GeminiCli => format!(
            "set mcpServers.memrecall.command to \"{binary}\" in {}",
            file.display()
        ),
    }
}

fn codex_home(env: &Environment) -> Option<PathBuf> {
    env.path("CODEX_HOME")
        .or_else(|| env.home().map(|h| h.join(".codex")))
}

/// The `command` of a `memrecall` MCP server in a JSON `mcpServers` object, or in any project's
/// (Claude Code keeps local registrations under `projects`).
pub(super) fn json_mcp_command(value: &Value) -> Option<String> {
    let direct = value["mcpServers"]["memrecall"]["command"].as_str();
    direct.map(str::to_owned).or_else(|| {
        value["projects"].as_object()?.values().find_map(|project| {
            project["mcpServers"]["memrecall"]["command"]
                .as_str()
                .map(str::to_owned)
        })
    })
}

pub(super) fn mcp(
    agent: Agent,
    env: &Environment,
    document: Option<&Document>,
    settings: &Path,
) -> Option<McpReport> {
    let (file, command) = match agent {
        Agent::ClaudeCode => {
            let file = env.home()?.join(".claude.json");
            let text = std::fs::read_to_string(&file).ok()?;
            let value: Value = serde_json::from_str(&text).ok()?;
            (file, json_mcp_command(&value)?)
        }
        Agent::QwenCode | Agent::GeminiCli => {
            let value = document?.value()?;
            (settings.to_path_buf(), json_mcp_command(&value)?)
        }
        Agent::Codex => {
            let file = codex_home(env)?.join("config.toml");
            let value: toml::Value = toml::from_str(&std::fs::read_to_string(&file).ok()?).ok()?;
            let command = value
                .get("mcp_servers")?
                .get("memrecall")?
                .get("command")?
                .as_str()?
                .to_owned();
            (file, command)
        }
    };
    let program = PathBuf::from(command);
    let found = locate(&program);
    Some(McpReport {
        file,
        program,
        found,
    })
}

/// How many entries under `hooks.state` carry a `trusted_hash`.
fn trusted_entries(value: &toml::Value) -> usize {
    match value {
        toml::Value::Table(table) => {
            usize::from(table.contains_key("trusted_hash"))
                + table.values().map(trusted_entries).sum::<usize>()
        }
        toml::Value::Array(items) => items.iter().map(trusted_entries).sum(),
        _ => 0,
    }
}

/// Codex's trust in its hooks, from `hooks.state` in its `config.toml`.
pub(super) fn codex_trust(env: &Environment, problems: &mut Vec<Problem>) -> Option<String> {
    let file = codex_home(env)?.join("config.toml");
    let trusted = std::fs::read_to_string(&file)
        .ok()
        .and_then(|text| toml::from_str::<toml::Value>(&text).ok())
        .and_then(|value| value.get("hooks")?.get("state").map(trusted_entries))
        .unwrap_or(0);
    if trusted == 0 {
        problems.push(Problem::new(
            format!(
                "codex: no hook is trusted yet (no `trusted_hash` under `hooks.state` in {}); `codex exec` skips an untrusted hook without a word",
                file.display()
            ),
            "run `codex` in a terminal and trust the memrecall hook there".to_owned(),
        ));
        return Some("not trusted".to_owned());
    }
    Some(format!(
        "{trusted} hook(s) trusted under hooks.state in {}",
        file.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trusted_hashes_are_counted_at_any_depth() {
        let value: toml::Value = toml::from_str(
            "[a.\"x\"]\ntrusted_hash = \"1\"\n[b]\nother = 2\n[[c]]\ntrusted_hash = \"2\"\n",
        )
        .unwrap();
        assert_eq!(trusted_entries(&value), 2);
    }
}
