//! The agents' own files that say how memrecall is set up there, beyond the hook settings: the
//! MCP server a user registered with the agent's `mcp add` ([`mcp_registration`]), the plugins
//! and extensions the agent installed itself ([`packages`]), the hooks the user trusts
//! ([`trusted_hooks`]) and a plugin's MCP server the agent keeps off after it failed to start
//! ([`failed_mcp_server`]). Which files these are is each agent's
//! [`Conventions`](crate::Conventions) (`mcp_registrations`, `packages`, `hook_trust`,
//! `mcp_failure_cache`); every one is read through [`memory_scan::foreign`], within the
//! settings' bound and without waiting, and one that cannot be read or parsed holds nothing.

mod failure_cache;
mod packages;
mod trust;

use std::path::{Path, PathBuf};

use memory_scan::foreign::{self, ByteLimit, Links};
use serde_json::Value;

use crate::conventions::{McpRegistrations, PackageStore};
use crate::settings::{self, Document};
use crate::{Agent, Environment};

pub use failure_cache::{FailedServer, failed_mcp_server};
pub use packages::{Package, packages};
pub use trust::{TrustedHooks, trusted_hooks};

/// The name memrecall registers its MCP server, plugin and extension under.
const MEMRECALL: &str = "memrecall";

/// The agent's own directory for the user (`~/.claude`, `$CODEX_HOME`, …): the folder of its
/// user settings file.
pub fn agent_dir(agent: Agent, env: &Environment) -> Option<PathBuf> {
    settings::settings_path(agent, None, env)
        .ok()
        .and_then(|path| path.parent().map(Path::to_path_buf))
}

/// An agent's file, as text, read without waiting and within the settings' bound.
fn text_file(path: &Path) -> Option<String> {
    foreign::read_to_string(path, ByteLimit::SETTINGS, Links::Follow).ok()
}

/// An agent's JSON file, read as [`text_file`] reads.
fn json_file(path: &Path) -> Option<Value> {
    serde_json::from_str(&text_file(path)?).ok()
}

/// An agent's TOML file, read as [`text_file`] reads.
fn toml_file(path: &Path) -> Option<toml::Value> {
    toml::from_str(&text_file(path)?).ok()
}

/// A `memrecall` MCP server registered in an agent's file, and the program it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpEntry {
    /// The file that holds it.
    pub file: PathBuf,
    /// Its `command`.
    pub command: String,
}

/// The `command` of a `memrecall` MCP server in a JSON `mcpServers` object, or in any project's
/// (Claude Code keeps local registrations under `projects`).
fn json_mcp_command(value: &Value) -> Option<String> {
    let direct = value["mcpServers"][MEMRECALL]["command"].as_str();
    direct.map(str::to_owned).or_else(|| {
        value["projects"].as_object()?.values().find_map(|project| {
            project["mcpServers"][MEMRECALL]["command"]
                .as_str()
                .map(str::to_owned)
        })
    })
}

/// Whether a JSON value holds `mcpServers.memrecall` at any depth.
fn has_json_mcp_entry(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.iter().any(|(key, value)| {
            (key == "mcpServers" && value.get(MEMRECALL).is_some()) || has_json_mcp_entry(value)
        }),
        Value::Array(items) => items.iter().any(has_json_mcp_entry),
        _ => false,
    }
}

/// The files that may hold the agent's MCP registrations, the first that holds one winning.
fn registration_files(agent: Agent, env: &Environment) -> Vec<PathBuf> {
    let dir = agent_dir(agent, env);
    let mut files = match agent.conventions().mcp_registrations {
        McpRegistrations::JsonFile(name) => vec![
            dir.map(|dir| dir.join(name)),
            env.home().map(|home| home.join(name)),
        ],
        McpRegistrations::SettingsFile => vec![settings::settings_path(agent, None, env).ok()],
        McpRegistrations::TomlFile(name) => vec![dir.map(|dir| dir.join(name))],
    }
    .into_iter()
    .flatten()
    .collect::<Vec<_>>();
    files.dedup();
    files
}

/// A `memrecall` MCP server registered in an agent's file, with or without a command.
struct Registered {
    command: Option<String>,
}

/// The `memrecall` MCP server the agent's registration file `file` holds.
fn registration_in(agent: Agent, file: &Path) -> Option<Registered> {
    match agent.conventions().mcp_registrations {
        McpRegistrations::JsonFile(_) => {
            let value = json_file(file)?;
            has_json_mcp_entry(&value).then(|| Registered {
                command: json_mcp_command(&value),
            })
        }
        McpRegistrations::SettingsFile => {
            let value = Document::parse(&text_file(file)?, agent, file)
                .ok()?
                .value()?;
            let entry = value["mcpServers"].get(MEMRECALL)?;
            Some(Registered {
                command: entry["command"].as_str().map(str::to_owned),
            })
        }
        McpRegistrations::TomlFile(_) => {
            let value = toml_file(file)?;
            let entry = value.get("mcp_servers")?.get(MEMRECALL)?;
            Some(Registered {
                command: entry
                    .get("command")
                    .and_then(toml::Value::as_str)
                    .map(str::to_owned),
            })
        }
    }
}

/// The `memrecall` MCP server the user registered with the agent's own `mcp add`, and the
/// program it runs: the first of the agent's registration files that holds one with a command.
pub fn mcp_registration(agent: Agent, env: &Environment) -> Option<McpEntry> {
    registration_files(agent, env).into_iter().find_map(|file| {
        let command = registration_in(agent, &file)?.command?;
        Some(McpEntry { file, command })
    })
}

/// The edit or the agent's command that makes the MCP registration in `file` run `binary`.
pub fn mcp_fix(agent: Agent, binary: &str, file: &Path) -> String {
    let conventions = agent.conventions();
    match conventions.mcp_registrations {
        McpRegistrations::JsonFile(_) => format!(
            "{command} mcp remove {MEMRECALL}; {command} mcp add {MEMRECALL} -- {binary} mcp --agent {} --read-only",
            conventions.name,
            command = conventions.command,
        ),
        McpRegistrations::TomlFile(_) => format!(
            "set mcp_servers.{MEMRECALL}.command = \"{binary}\" in {}",
            file.display()
        ),
        McpRegistrations::SettingsFile => format!(
            "set mcpServers.{MEMRECALL}.command to \"{binary}\" in {}",
            file.display()
        ),
    }
}

/// Where memrecall's own package (the plugin `memrecall@…`, or the extension `memrecall`) is
/// recorded as installed by the agent, when it is.
pub fn memrecall_package(agent: Agent, env: &Environment) -> Option<PathBuf> {
    let dir = agent_dir(agent, env)?;
    match agent.conventions().packages? {
        PackageStore::Plugins => {
            let record = packages::plugins_record(&dir);
            json_file(&record)?
                .get("plugins")?
                .as_object()?
                .keys()
                .any(|name| name.starts_with(&format!("{MEMRECALL}@")))
                .then_some(record)
        }
        PackageStore::Extensions { .. } => {
            let extension = dir.join("extensions").join(MEMRECALL);
            extension.is_dir().then_some(extension)
        }
    }
}

/// The agent's own commands that take out what the agent registered of memrecall itself (its
/// plugin or extension, its MCP server): what memrecall did not write and leaves to the agent.
pub fn own_registrations(agent: Agent, env: &Environment) -> Vec<String> {
    let conventions = agent.conventions();
    let mut commands = Vec::new();
    if let Some(store) = conventions.packages
        && memrecall_package(agent, env).is_some()
    {
        let name = match store {
            PackageStore::Plugins => format!("{MEMRECALL}@{MEMRECALL}"),
            PackageStore::Extensions { .. } => MEMRECALL.to_owned(),
        };
        commands.push(store.uninstall_command(conventions.command, &name));
    }
    let registered = registration_files(agent, env)
        .iter()
        .any(|file| registration_in(agent, file).is_some());
    if registered {
        commands.push(format!("{} mcp remove {MEMRECALL}", conventions.command));
    }
    commands
}

#[cfg(test)]
mod tests;
