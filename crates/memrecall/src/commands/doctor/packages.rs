//! The packages an agent installed itself ([`agent_files::packages`]: Claude Code's plugins,
//! Gemini CLI's and Qwen Code's extensions) that hold memrecall's hooks or MCP server, whether
//! the agent has them enabled for the directory, and the binary each runs (a bare `memrecall` is
//! the one on this `PATH`).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::checks::{HookReport, McpReport};
use agent_hooks::agent_files::{self, Package};
use agent_hooks::conventions::PackageStore;
use agent_hooks::{Agent, Environment};

/// One package of the agent's that holds memrecall's hooks or MCP server.
#[derive(Debug, Serialize)]
pub(crate) struct PackageReport {
    /// `plugin` (Claude Code) or `extension`.
    pub(super) kind: &'static str,
    /// The name the agent's own commands take (`memrecall@memrecall`, `memrecall`).
    pub(super) name: String,
    /// Where the agent keeps its copy.
    pub(super) dir: PathBuf,
    /// Whether the agent runs it in the directory.
    pub(super) enabled: bool,
    pub(super) hooks: Vec<HookReport>,
    pub(super) missing_events: Vec<&'static str>,
    pub(super) mcp: Option<McpReport>,
    /// How the agent keeps it, for its commands.
    #[serde(skip)]
    store: PackageStore,
}

impl PackageReport {
    fn new(package: Package) -> Self {
        Self {
            kind: package.store.kind(),
            name: package.name,
            dir: package.dir,
            enabled: package.enabled,
            hooks: package.hooks.into_iter().map(HookReport::new).collect(),
            missing_events: package.missing_events,
            mcp: package.mcp.map(McpReport::new),
            store: package.store,
        }
    }

    /// The command that takes it out, as the README gives it.
    pub(super) fn uninstall_command(&self, agent: Agent) -> String {
        self.store
            .uninstall_command(agent.conventions().command, &self.name)
    }

    /// The command that enables it, as the agent's own help gives it.
    pub(super) fn enable_command(&self, agent: Agent) -> String {
        self.store
            .enable_command(agent.conventions().command, &self.name)
    }

    /// Whether its hooks run in the directory.
    pub(super) fn runs_hooks(&self) -> bool {
        self.enabled && !self.hooks.is_empty()
    }
}

/// The problems of the packages the agent runs: a binary that is not there (a bare `memrecall`
/// not on this `PATH`), with the two ways out the README gives: `memrecall` on the agent's
/// `PATH`, or the package replaced by `hook install`, which names the binary by its path.
pub(super) fn package_problems(
    agent: Agent,
    packages: &[PackageReport],
    binary: &str,
    problems: &mut Vec<super::Problem>,
) {
    for package in packages.iter().filter(|p| p.enabled) {
        let programs = package
            .hooks
            .iter()
            .filter(|hook| hook.found.is_none())
            .map(|hook| &hook.program)
            .chain(
                package
                    .mcp
                    .iter()
                    .filter(|mcp| mcp.found.is_none())
                    .map(|mcp| &mcp.program),
            );
        let mut missing: Vec<String> = programs.map(|p| p.display().to_string()).collect();
        missing.dedup();
        if missing.is_empty() {
            continue;
        }
        let bare = missing
            .iter()
            .all(|p| Path::new(p).components().count() == 1);
        let what = if bare {
            format!("`{}`, which is not on PATH", missing.join("`, `"))
        } else {
            format!("{}, which does not exist", missing.join(", "))
        };
        let on_path = Path::new(binary)
            .parent()
            .filter(|dir| !dir.as_os_str().is_empty())
            .map(|dir| {
                format!(
                    "add {} to the PATH the agent starts with, or ",
                    dir.display()
                )
            })
            .unwrap_or_default();
        problems.push(super::Problem::new(
            format!(
                "{}: the {} {} runs {what}, so its hooks and MCP server do not start",
                agent.as_str(),
                package.kind,
                package.name
            ),
            format!(
                "{on_path}{} and {binary} hook install --agent {} --write",
                package.uninstall_command(agent),
                agent.as_str()
            ),
        ));
    }
}

/// The packages of `agent` holding memrecall's hooks or MCP server, enabled or not, for `cwd`.
pub(super) fn packages(agent: Agent, env: &Environment, cwd: &Path) -> Vec<PackageReport> {
    agent_files::packages(agent, env, cwd)
        .into_iter()
        .map(PackageReport::new)
        .collect()
}
