//! What `doctor` looks at, one function each: an agent's hook and MCP entries, Codex's trust in
//! the hook, the memory roots, the server and the selector.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::Problem;
use crate::agent::settings::{self, Document};
use crate::agent::{Agent, Environment, Layout, layout};
use crate::config::{CONFIG_FILE_NAME, Config, ConfigSelectorKind};

/// How long the selector probe and the server's status may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// One hook entry and the binary it runs.
#[derive(Debug, Serialize)]
pub(super) struct HookReport {
    pub(super) command: String,
    pub(super) program: PathBuf,
    /// Where the program was found (itself when absolute, else on this `PATH`).
    pub(super) found: Option<PathBuf>,
}

/// One MCP registration and the binary it runs.
#[derive(Debug, Serialize)]
pub(super) struct McpReport {
    pub(super) file: PathBuf,
    pub(super) program: PathBuf,
    pub(super) found: Option<PathBuf>,
}

/// One agent.
#[derive(Debug, Serialize)]
pub(super) struct AgentReport {
    pub(super) agent: Agent,
    /// What `<agent> --version` printed, or why nothing.
    pub(super) version: String,
    pub(super) settings: PathBuf,
    pub(super) settings_exist: bool,
    pub(super) hooks: Vec<HookReport>,
    pub(super) missing_events: Vec<&'static str>,
    pub(super) mcp: Option<McpReport>,
    /// The project's settings file for the directory, when it exists.
    pub(super) project: Option<super::agent_extra::ProjectSettings>,
    /// Codex only: whether its configuration holds a trusted hook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) codex_trust: Option<String>,
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
fn install_again(binary: &str, agent: Agent) -> String {
    format!("{binary} hook install --agent {} --write", agent.as_str())
}

pub(super) fn agent_report(
    agent: Agent,
    env: &Environment,
    cwd: &Path,
    binary: &str,
    problems: &mut Vec<Problem>,
) -> Option<AgentReport> {
    let path = settings::settings_path(agent, None, env).ok()?;
    let (text, exists) = match settings::read(&path) {
        Ok(read) => read,
        Err(error) => {
            problems.push(Problem::new(
                error.to_string(),
                format!("fix {}", path.display()),
            ));
            (String::new(), true)
        }
    };
    let document = match Document::parse(&text, agent, &path) {
        Ok(document) => Some(document),
        Err(error) => {
            problems.push(Problem::new(
                error.to_string(),
                format!("fix {}", path.display()),
            ));
            None
        }
    };
    let commands = document
        .as_ref()
        .map(|d| d.memrecall_commands(agent, None))
        .unwrap_or_default();
    let hooks: Vec<HookReport> = commands.into_iter().map(HookReport::new).collect();
    let missing_events = document
        .as_ref()
        .map(|d| d.missing_events(agent, None))
        .unwrap_or_default();
    hook_problems(
        agent,
        &hooks,
        &missing_events,
        &install_again(binary, agent),
        problems,
    );
    let mcp = mcp(agent, env, document.as_ref(), &path);
    if let Some(mcp) = &mcp
        && mcp.found.is_none()
    {
        problems.push(Problem::new(
            format!(
                "{}: the MCP server entry in {} runs {}, which does not exist",
                agent.as_str(),
                mcp.file.display(),
                mcp.program.display()
            ),
            mcp_fix(agent, binary, &mcp.file),
        ));
    }
    let codex_trust = (agent == Agent::Codex && !hooks.is_empty())
        .then(|| codex_trust(env, problems))
        .flatten();
    let project = super::agent_extra::project_settings(agent, cwd);
    if let Some(project) = &project {
        for hook in project.hooks.iter().filter(|h| h.found.is_none()) {
            problems.push(Problem::new(
                format!(
                    "{}: the hook in {} runs {}, which does not exist",
                    agent.as_str(),
                    project.path.display(),
                    hook.program.display()
                ),
                format!(
                    "{} --project {}",
                    install_again(binary, agent),
                    cwd.display()
                ),
            ));
        }
    }
    Some(AgentReport {
        agent,
        version: super::agent_extra::version(agent),
        settings: path,
        settings_exist: exists,
        hooks,
        missing_events,
        mcp,
        project,
        codex_trust,
    })
}

/// The problems of an agent's hook entries: none, events left out, a binary that is not there or
/// is found on this `PATH` only.
fn hook_problems(
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

fn mcp_fix(agent: Agent, binary: &str, file: &Path) -> String {
    match agent {
        Agent::ClaudeCode => format!(
            "claude mcp remove memrecall; claude mcp add memrecall -- {binary} mcp --agent claude-code"
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
fn json_mcp_command(value: &Value) -> Option<String> {
    let direct = value["mcpServers"]["memrecall"]["command"].as_str();
    direct.map(str::to_owned).or_else(|| {
        value["projects"].as_object()?.values().find_map(|project| {
            project["mcpServers"]["memrecall"]["command"]
                .as_str()
                .map(str::to_owned)
        })
    })
}

fn mcp(
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
fn codex_trust(env: &Environment, problems: &mut Vec<Problem>) -> Option<String> {
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

/// One memory root.
#[derive(Debug, Serialize)]
pub(super) struct RootReport {
    pub(super) layout: Layout,
    pub(super) scope: &'static str,
    pub(super) path: PathBuf,
    pub(super) exists: bool,
    pub(super) topics: Option<usize>,
}

/// The memory roots each layout gives `cwd`, with their topic counts.
pub(super) fn roots(layouts: &[Layout], cwd: &Path, env: &Environment) -> Vec<RootReport> {
    let mut reports: Vec<RootReport> = Vec::new();
    for &layout in layouts {
        let Ok(resolved) = layout::resolve(layout, cwd, env) else {
            continue;
        };
        for (scope, choice) in [("project", &resolved.project), ("user", &resolved.user)] {
            let Some(path) = choice.path.clone() else {
                continue;
            };
            if reports.iter().any(|r| r.path == path) {
                continue;
            }
            let exists = path.is_dir();
            let topics = exists.then(|| count_topics(&path)).flatten();
            reports.push(RootReport {
                layout,
                scope,
                path,
                exists,
                topics,
            });
        }
    }
    reports
}

fn count_topics(root: &Path) -> Option<usize> {
    let roots = memory_scan::MemoryRoots {
        project: Some(root.to_path_buf()),
        user: None,
    };
    let scan = memory_scan::DocumentCache::new().scan_recall(&roots).ok()?;
    Some(scan.documents.len())
}

/// The user's server.
#[derive(Debug, Default, Serialize)]
pub(super) struct ServerReport {
    pub(super) running: bool,
    pub(super) pid: Option<u32>,
    pub(super) version: Option<String>,
    pub(super) sessions: Option<usize>,
}

pub(super) fn server(env: &Environment, problems: &mut Vec<Problem>) -> ServerReport {
    use crate::serve::client::{self, Autostart, Budget, ClientError};
    use crate::serve::protocol::{Request, Response};
    let Some(paths) = crate::serve::ServerPaths::from_env(env) else {
        return ServerReport::default();
    };
    let budget = Budget {
        connect_by: std::time::Instant::now() + PROBE_TIMEOUT,
        answer_within: PROBE_TIMEOUT,
    };
    match client::exchange(&paths, Request::Status, Autostart::No, budget) {
        Ok(Response::Status(status)) => ServerReport {
            running: true,
            pid: Some(status.pid),
            version: Some(status.version),
            sessions: Some(status.sessions),
        },
        Ok(_) | Err(ClientError::NotRunning) => ServerReport::default(),
        Err(error) => {
            problems.push(Problem::new(
                format!("the server cannot be used: {error}"),
                format!(
                    "memrecall stop; rm -rf {} (the next hook starts a new server)",
                    paths.dir.display()
                ),
            ));
            ServerReport::default()
        }
    }
}

/// The selector `config.toml` chooses, and one probe of it.
#[derive(Debug, Serialize)]
pub(super) struct SelectorReport {
    pub(super) kind: &'static str,
    pub(super) url: Option<String>,
    pub(super) model: Option<String>,
    /// How the probe went: `reachable`, or why not.
    pub(super) probe: Option<String>,
}

pub(super) fn selector(env: &Environment, problems: &mut Vec<Problem>) -> SelectorReport {
    let none = SelectorReport {
        kind: "none",
        url: None,
        model: None,
        probe: None,
    };
    let Some(home) = env.memrecall_home() else {
        return none;
    };
    let config_path = home.join(CONFIG_FILE_NAME);
    let config = match Config::load(&home) {
        Ok(config) => config,
        Err(error) => {
            problems.push(Problem::new(
                crate::output::one_line(&error.to_string()),
                format!("edit {}", config_path.display()),
            ));
            return none;
        }
    };
    if config.selector.kind == ConfigSelectorKind::None {
        return none;
    }
    let url = config.selector.url.unwrap_or_default();
    let probe = match probe(&url) {
        Ok(()) => "reachable".to_owned(),
        Err(why) => {
            problems.push(Problem::new(
                format!("the selector at {url} is unreachable: {why}"),
                format!(
                    "start the model server at {url}, or set kind = \"none\" under [selector] in {}",
                    config_path.display()
                ),
            ));
            format!("unreachable: {why}")
        }
    };
    SelectorReport {
        kind: "http",
        url: Some(url),
        model: config.selector.model,
        probe: Some(probe),
    }
}

/// Connects to the host and port of `url` within [`PROBE_TIMEOUT`].
fn probe(url: &str) -> Result<(), String> {
    use std::net::ToSocketAddrs as _;
    let (scheme, rest) = url.split_once("://").ok_or("not an http(s) URL")?;
    let default_port = match scheme {
        "http" => 80,
        "https" => 443,
        _ => return Err(format!("not an http(s) URL ({scheme})")),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let with_port = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        authority.to_owned()
    } else {
        format!("{authority}:{default_port}")
    };
    let address = with_port
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("{authority} has no address"))?;
    std::net::TcpStream::connect_timeout(&address, PROBE_TIMEOUT)
        .map(drop)
        .map_err(|e| e.to_string())
}

/// The last `count` lines of the hook's log.
pub(super) fn hook_log(env: &Environment, count: usize) -> Vec<String> {
    let Some(home) = env.memrecall_home() else {
        return Vec::new();
    };
    let text = std::fs::read_to_string(home.join("logs").join("hook.log")).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(count)..]
        .iter()
        .map(|l| crate::output::one_line(l))
        .collect()
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

    #[test]
    fn a_closed_port_is_unreachable_and_a_non_http_url_is_refused() {
        assert!(probe("http://127.0.0.1:1/v1").is_err());
        assert!(probe("ftp://127.0.0.1").unwrap_err().contains("ftp"));
    }
}
