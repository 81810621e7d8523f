//! One agent's report: what `doctor` finds in its settings, its packages and the project's
//! settings, and (in `auth_cache`) the agent's note of a plugin server that failed.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::agent_extra::{self, ProjectSettings};
use super::checks::{HookReport, McpReport, hook_trust, install_again, mcp, timeout_problems};
use super::packages::{self, PackageReport};
use super::{Problem, auth_cache, installed};
use agent_hooks::agent_files;
use agent_hooks::settings::{self, Document};
use agent_hooks::{Agent, Environment};

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
    pub(super) project: Option<ProjectSettings>,
    /// The agent's own packages (plugins, extensions) holding memrecall's hooks or MCP server.
    pub(super) packages: Vec<PackageReport>,
    /// For an agent that runs only the hooks the user trusts: whether it trusts one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) hook_trust: Option<String>,
}

/// One agent's report: its settings, hooks, MCP server, packages and project settings, with a
/// problem for each thing found wrong.
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
    let packages = packages::packages(agent, env, cwd);
    let installed = installed::Installed {
        agent,
        settings: &path,
        hooks: &hooks,
        packages: &packages,
    };
    let missing_events = installed.missing_events(document.as_ref());
    let fix = install_again(binary, agent);
    installed.problems(&missing_events, cwd, binary, &fix, problems);
    timeout_problems(agent, document.as_ref(), &path, &fix, problems);
    let mut mcp = mcp(agent, env);
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
            agent_files::mcp_fix(agent, binary, &mcp.file),
        ));
    }
    packages::package_problems(agent, &packages, binary, problems);
    if mcp.is_none() {
        mcp = packages
            .iter()
            .filter(|p| p.enabled)
            .find_map(|p| p.mcp.clone());
    }
    auth_cache::check(agent, env, problems);
    let hook_trust = if hooks.is_empty() {
        None
    } else {
        hook_trust(agent, env, problems)
    };
    let project = agent_extra::project_settings(agent, cwd);
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
        version: agent_extra::version(agent),
        settings: path,
        settings_exist: exists,
        hooks,
        missing_events,
        mcp,
        project,
        packages,
        hook_trust,
    })
}
