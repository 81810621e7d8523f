//! The packages an agent installed itself that hold memrecall's hooks or MCP server: Claude
//! Code's plugins, Gemini CLI's and Qwen Code's extensions, whether the agent has each enabled
//! for a directory, and the hook commands and MCP server each carries.
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

use serde_json::Value;

use super::{McpEntry, agent_dir, json_file, json_mcp_command, text_file};
use crate::conventions::PackageStore;
use crate::settings::Document;
use crate::{Agent, Environment};

/// One package of the agent's that holds memrecall's hooks or MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// How the agent keeps it (and so what it calls it, and its commands).
    pub store: PackageStore,
    /// The name the agent's own commands take (`memrecall@memrecall`, `memrecall`).
    pub name: String,
    /// Where the agent keeps its copy.
    pub dir: PathBuf,
    /// Whether the agent runs it in the directory.
    pub enabled: bool,
    /// The memrecall hook commands it registers.
    pub hooks: Vec<String>,
    /// The events it leaves out, when it registers any hook.
    pub missing_events: Vec<&'static str>,
    /// The `memrecall` MCP server it registers.
    pub mcp: Option<McpEntry>,
}

/// The record of Claude Code's installed plugins in its configuration directory `config`.
pub(super) fn plugins_record(config: &Path) -> PathBuf {
    config.join("plugins").join("installed_plugins.json")
}

/// The packages of `agent` holding memrecall's hooks or MCP server, enabled or not, for `cwd`.
pub fn packages(agent: Agent, env: &Environment, cwd: &Path) -> Vec<Package> {
    let Some(dir) = agent_dir(agent, env) else {
        return Vec::new();
    };
    let found = match agent.conventions().packages {
        Some(PackageStore::Plugins) => plugins(agent, &dir, cwd),
        Some(store @ PackageStore::Extensions { .. }) => extensions(agent, store, &dir, cwd),
        None => Vec::new(),
    };
    found
        .into_iter()
        .filter(|package| !package.hooks.is_empty() || package.mcp.is_some())
        .collect()
}

/// The hooks of the package in `dir` (`hooks/hooks.json`), read as the agent's settings.
fn package_hooks(agent: Agent, dir: &Path) -> (Vec<String>, Vec<&'static str>) {
    let path = dir.join("hooks").join("hooks.json");
    let Some(text) = text_file(&path) else {
        return (Vec::new(), Vec::new());
    };
    let Ok(document) = Document::parse(&text, agent, &path) else {
        return (Vec::new(), Vec::new());
    };
    let hooks = document.memrecall_commands(agent, None);
    let missing = if hooks.is_empty() {
        Vec::new()
    } else {
        document.missing_events(agent, None)
    };
    (hooks, missing)
}

/// The MCP server named `memrecall` in the first of `manifests` (below `dir`) that has one.
fn package_mcp(dir: &Path, manifests: &[&str]) -> Option<McpEntry> {
    manifests.iter().find_map(|relative| {
        let file = dir.join(relative);
        let command = json_mcp_command(&json_file(&file)?)?;
        Some(McpEntry { file, command })
    })
}

/// The agent's installed plugins (in its configuration directory `config`), with their
/// enablement for `cwd`.
fn plugins(agent: Agent, config: &Path, cwd: &Path) -> Vec<Package> {
    let Some(installed) = json_file(&plugins_record(config)) else {
        return Vec::new();
    };
    let Some(plugins) = installed["plugins"].as_object() else {
        return Vec::new();
    };
    let dot_dir = agent.conventions().dot_dir;
    let enablement: Vec<Value> = [
        config.join(agent.conventions().settings_file),
        cwd.join(dot_dir).join("settings.json"),
        cwd.join(dot_dir).join("settings.local.json"),
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
            let (hooks, missing_events) = package_hooks(agent, &dir);
            let mcp = package_mcp(&dir, &[".claude-plugin/plugin.json", ".mcp.json"]);
            found.push(Package {
                store: PackageStore::Plugins,
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

/// The extensions below `<dir>/extensions` with the store's manifest, with their enablement for
/// `cwd`.
fn extensions(agent: Agent, store: PackageStore, dir: &Path, cwd: &Path) -> Vec<Package> {
    let PackageStore::Extensions {
        manifest,
        activation_store,
    } = store
    else {
        return Vec::new();
    };
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
    let activation = activation_store
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
            let enabled = activation
                .as_ref()
                .and_then(|activation| stored_activation(activation, &name, cwd))
                .unwrap_or_else(|| {
                    let overrides = rules.as_ref().map(|r| &r[&name]["overrides"]);
                    path_rules_enable(overrides.and_then(Value::as_array), cwd, true)
                });
            let (hooks, missing_events) = package_hooks(agent, &path);
            let mcp = package_mcp(&path, &[manifest]);
            Package {
                store,
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

/// The activation of the extension `name` in `cwd` from Qwen Code's extension store; `None` when
/// the store has no policy for it.
fn stored_activation(store: &Value, name: &str, cwd: &Path) -> Option<bool> {
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
            stored_activation(&store, "memrecall", Path::new("/p")),
            Some(false)
        );
        assert_eq!(
            stored_activation(&store, "memrecall", Path::new("/q")),
            Some(true)
        );
        assert_eq!(stored_activation(&store, "other", Path::new("/p")), None);
        let off = json!({"extensions": {"abc": {
            "name": "memrecall", "defaultActivation": "enabled", "workspaceOverrides": {},
            "legacyPathRules": ["!/home/ana/*"]
        }}});
        assert_eq!(
            stored_activation(&off, "memrecall", Path::new("/home/ana/shop")),
            Some(false)
        );
    }
}
