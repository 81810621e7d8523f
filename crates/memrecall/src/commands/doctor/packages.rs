//! What an agent installed itself: Claude Code's plugins, Gemini CLI's and Qwen Code's
//! extensions that hold memrecall's hooks or MCP server, whether the agent has them enabled for
//! the directory, and the binary each runs (a bare `memrecall` is the one on this `PATH`).
//!
//! Where each agent keeps them (Claude Code 2.1.328, Gemini CLI 0.61.0, Qwen Code 0.24.4):
//!
//! | agent | installed | enabled |
//! |---|---|---|
//! | Claude Code | `<config>/plugins/installed_plugins.json`: `plugins.<name@marketplace>` (a list of installs, or one in the first version) with its `installPath` | `enabledPlugins.<name@marketplace>` in the user's `settings.json`, then the project's `.claude/settings.json` and `.claude/settings.local.json` (the last that says wins) |
//! | Gemini CLI | a directory below `~/.gemini/extensions/` with `gemini-extension.json` | `extensions/extension-enablement.json`: `<name>.overrides`, path rules (`/dir/*` for the directory and below, `!` to disable), the last matching one wins, enabled when none matches |
//! | Qwen Code | a directory below `$QWEN_HOME/extensions/` or `~/.qwen/extensions/` with `qwen-extension.json` | `extension-store/state.json`: the extension's `workspaceOverrides` for the directory, else its `legacyPathRules` (as Gemini CLI's) over its `defaultActivation`; without it, `extension-enablement.json` as Gemini CLI |
//!
//! Inside a package, the hooks are in `hooks/hooks.json` (the shape of the agent's settings
//! file) and the MCP server in its manifest's `mcpServers` (Claude Code:
//! `<package>/.claude-plugin/plugin.json` or `.mcp.json`).

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::checks::{HookReport, McpReport, json_mcp_command, locate};
use agent_hooks::settings::{self, Document};
use agent_hooks::{Agent, Environment};
use memory_scan::foreign::{self, ByteLimit, Links};

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
}

impl PackageReport {
    /// The command that takes it out, as the README gives it.
    pub(super) fn uninstall_command(&self, agent: Agent) -> String {
        match agent {
            Agent::ClaudeCode => format!("claude plugin uninstall {}", self.name),
            Agent::GeminiCli | Agent::QwenCode | Agent::Codex => format!(
                "{} extensions uninstall {}",
                agent.conventions().command,
                self.name
            ),
        }
    }

    /// The command that enables it, as the agent's own help gives it.
    pub(super) fn enable_command(&self, agent: Agent) -> String {
        match agent {
            Agent::ClaudeCode => format!("claude plugin enable {}", self.name),
            Agent::GeminiCli | Agent::QwenCode | Agent::Codex => format!(
                "{} extensions enable {}",
                agent.conventions().command,
                self.name
            ),
        }
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
    let Some(dir) = settings::settings_path(agent, None, env)
        .ok()
        .and_then(|path| path.parent().map(Path::to_path_buf))
    else {
        return Vec::new();
    };
    let found = match agent {
        Agent::ClaudeCode => claude_plugins(&dir, cwd),
        Agent::GeminiCli => extensions(agent, &dir, "gemini-extension.json", cwd),
        Agent::QwenCode => extensions(agent, &dir, "qwen-extension.json", cwd),
        // Codex has no package of memrecall's.
        Agent::Codex => Vec::new(),
    };
    found
        .into_iter()
        .filter(|package| !package.hooks.is_empty() || package.mcp.is_some())
        .collect()
}

/// A JSON file an agent owns, read without blocking and within the settings' bound.
fn json_file(path: &Path) -> Option<Value> {
    let text = foreign::read_to_string(path, ByteLimit::SETTINGS, Links::Follow).ok()?;
    serde_json::from_str(&text).ok()
}

/// The hooks of the package in `dir` (`hooks/hooks.json`), read as the agent's settings.
fn package_hooks(agent: Agent, dir: &Path) -> (Vec<HookReport>, Vec<&'static str>) {
    let path = dir.join("hooks").join("hooks.json");
    let Ok(text) = foreign::read_to_string(&path, ByteLimit::SETTINGS, Links::Follow) else {
        return (Vec::new(), Vec::new());
    };
    let Ok(document) = Document::parse(&text, agent, &path) else {
        return (Vec::new(), Vec::new());
    };
    let hooks: Vec<HookReport> = document
        .memrecall_commands(agent, None)
        .into_iter()
        .map(HookReport::new)
        .collect();
    let missing = if hooks.is_empty() {
        Vec::new()
    } else {
        document.missing_events(agent, None)
    };
    (hooks, missing)
}

/// The MCP server named `memrecall` in the first of `manifests` (below `dir`) that has one.
fn package_mcp(dir: &Path, manifests: &[&str]) -> Option<McpReport> {
    manifests.iter().find_map(|relative| {
        let file = dir.join(relative);
        let command = json_mcp_command(&json_file(&file)?)?;
        let program = PathBuf::from(command);
        let found = locate(&program);
        Some(McpReport {
            file,
            program,
            found,
        })
    })
}

/// Claude Code's installed plugins, with their enablement for `cwd`.
fn claude_plugins(config: &Path, cwd: &Path) -> Vec<PackageReport> {
    let Some(installed) = json_file(&config.join("plugins").join("installed_plugins.json")) else {
        return Vec::new();
    };
    let Some(plugins) = installed["plugins"].as_object() else {
        return Vec::new();
    };
    let enablement: Vec<Value> = [
        config.join("settings.json"),
        cwd.join(".claude").join("settings.json"),
        cwd.join(".claude").join("settings.local.json"),
    ]
    .iter()
    .filter_map(|path| json_file(path))
    .collect();
    let mut found = Vec::new();
    for (name, installs) in plugins {
        // The second version keeps a list of installs (one per scope), the first one object.
        let installs: Vec<&Value> = match installs {
            Value::Array(list) => list.iter().collect(),
            other => vec![other],
        };
        let enabled = enablement
            .iter()
            .filter_map(|settings| settings["enabledPlugins"][name].as_bool())
            .next_back()
            .unwrap_or(false);
        for install in installs {
            let Some(dir) = install["installPath"].as_str().map(PathBuf::from) else {
                continue;
            };
            let (hooks, missing_events) = package_hooks(Agent::ClaudeCode, &dir);
            let mcp = package_mcp(&dir, &[".claude-plugin/plugin.json", ".mcp.json"]);
            found.push(PackageReport {
                kind: "plugin",
                name: name.clone(),
                dir,
                enabled,
                hooks,
                missing_events,
                mcp,
            });
        }
    }
    found
}

/// The extensions below `<dir>/extensions` with `manifest`, with their enablement for `cwd`.
fn extensions(agent: Agent, dir: &Path, manifest: &str, cwd: &Path) -> Vec<PackageReport> {
    let root = dir.join("extensions");
    let Ok(entries) = std::fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.join(manifest).is_file())
        .collect();
    dirs.sort();
    let rules = json_file(&root.join("extension-enablement.json"));
    let store = (agent == Agent::QwenCode)
        .then(|| json_file(&dir.join("extension-store").join("state.json")))
        .flatten();
    dirs.into_iter()
        .map(|path| {
            let name = json_file(&path.join(manifest))
                .and_then(|m| m["name"].as_str().map(str::to_owned))
                .unwrap_or_else(|| {
                    path.file_name()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .into()
                });
            let enabled = store
                .as_ref()
                .and_then(|store| qwen_activation(store, &name, cwd))
                .unwrap_or_else(|| {
                    let overrides = rules.as_ref().map(|r| &r[&name]["overrides"]);
                    path_rules_enable(overrides.and_then(Value::as_array), cwd, true)
                });
            let (hooks, missing_events) = package_hooks(agent, &path);
            let mcp = package_mcp(&path, &[manifest]);
            PackageReport {
                kind: "extension",
                name,
                dir: path,
                enabled,
                hooks,
                missing_events,
                mcp,
            }
        })
        .collect()
}

/// Qwen Code's activation of the extension `name` in `cwd` from its extension store; `None` when
/// the store has no policy for it.
fn qwen_activation(store: &Value, name: &str, cwd: &Path) -> Option<bool> {
    let policy = store["extensions"]
        .as_object()?
        .values()
        .find(|policy| policy["name"] == name)?;
    let default = policy["defaultActivation"] != "disabled";
    let workspace = policy["workspaceOverrides"][cwd.to_string_lossy().as_ref()].as_str();
    Some(match workspace {
        Some("enabled") => true,
        Some("disabled") => false,
        _ => path_rules_enable(policy["legacyPathRules"].as_array(), cwd, default),
    })
}

/// Gemini CLI's path rules (`/dir/*`: the directory and below; `/dir/`: it alone; `!` in front:
/// disabled) applied to `cwd`: the last matching rule wins, `default` when none matches.
fn path_rules_enable(rules: Option<&Vec<Value>>, cwd: &Path, default: bool) -> bool {
    let here = with_slashes(&cwd.to_string_lossy());
    let mut enabled = default;
    for rule in rules.into_iter().flatten().filter_map(Value::as_str) {
        let (disable, rule) = match rule.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, rule),
        };
        let (below, base) = match rule.strip_suffix('*') {
            Some(base) => (true, base),
            None => (false, rule),
        };
        let base = with_slashes(base);
        let matches = if below {
            here.starts_with(&base)
        } else {
            here == base
        };
        if matches {
            enabled = !disable;
        }
    }
    enabled
}

/// `path` with forward slashes, one in front and one at the end, as Gemini CLI compares paths.
fn with_slashes(path: &str) -> String {
    let mut text = path.replace('\\', "/");
    if !text.starts_with('/') {
        text.insert(0, '/');
    }
    if !text.ends_with('/') {
        text.push('/');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(list: &[&str]) -> Vec<Value> {
        list.iter().map(|r| json!(r)).collect()
    }

    #[test]
    fn a_home_rule_covers_the_home_and_below_and_the_last_matching_rule_wins() {
        let home = rules(&["/home/ana/*"]);
        assert!(path_rules_enable(
            Some(&home),
            Path::new("/home/ana/shop"),
            false
        ));
        assert!(path_rules_enable(
            Some(&home),
            Path::new("/home/ana"),
            false
        ));
        assert!(!path_rules_enable(
            Some(&home),
            Path::new("/home/bob"),
            false
        ));
        let off_here = rules(&["/home/ana/*", "!/home/ana/shop/"]);
        assert!(!path_rules_enable(
            Some(&off_here),
            Path::new("/home/ana/shop"),
            true
        ));
        assert!(path_rules_enable(
            Some(&off_here),
            Path::new("/home/ana/shop/sub"),
            true
        ));
    }

    #[test]
    fn no_rule_leaves_the_default() {
        assert!(path_rules_enable(None, Path::new("/p"), true));
        assert!(!path_rules_enable(
            Some(&rules(&[])),
            Path::new("/p"),
            false
        ));
    }

    #[test]
    fn qwen_codes_workspace_override_beats_its_rules_and_default() {
        let store = json!({"extensions": {"abc": {
            "name": "memrecall",
            "defaultActivation": "enabled",
            "workspaceOverrides": {"/p": "disabled"},
            "legacyPathRules": ["/p/*"]
        }}});
        assert_eq!(
            qwen_activation(&store, "memrecall", Path::new("/p")),
            Some(false)
        );
        assert_eq!(
            qwen_activation(&store, "memrecall", Path::new("/q")),
            Some(true)
        );
        assert_eq!(qwen_activation(&store, "other", Path::new("/p")), None);
        let off = json!({"extensions": {"abc": {
            "name": "memrecall", "defaultActivation": "enabled", "workspaceOverrides": {},
            "legacyPathRules": ["!/home/ana/*"]
        }}});
        assert_eq!(
            qwen_activation(&off, "memrecall", Path::new("/home/ana/shop")),
            Some(false)
        );
    }
}
