//! memrecall's packages in each agent's own format (`plugins/`, and the Claude Code marketplace
//! in `.claude-plugin/`) hold the hooks `hook install` writes and the MCP registration the README
//! gives, so that the two ways of installing never drift apart.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{World, installed_binary};

/// The agents memrecall has a package for, with its directory below `plugins/`.
const PACKAGED: [&str; 3] = ["claude-code", "gemini-cli", "qwen-code"];

pub(super) fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn json_at(relative: &str) -> Value {
    let path = repository().join(relative);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// The package's manifest: where each agent reads its MCP servers and version from.
fn manifest(agent: &str) -> Value {
    json_at(&match agent {
        "claude-code" => "plugins/claude-code/.claude-plugin/plugin.json".to_owned(),
        _ => format!(
            "plugins/{agent}/{}-extension.json",
            &agent[..agent.find('-').unwrap()]
        ),
    })
}

/// Replaces the program of every `command` in `value` (each time it is named, guarded or not)
/// by `memrecall`, asserting it was this binary.
fn with_program_on_path(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                if key == "command"
                    && let Some(command) = item.as_str()
                {
                    let program = agent_hooks::settings::program_of(command);
                    assert_eq!(Path::new(&program), installed_binary(), "{command}");
                    *item = json!(command.replace(&program, "memrecall"));
                } else {
                    with_program_on_path(item);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(with_program_on_path),
        _ => {}
    }
}

#[test]
fn each_package_runs_the_hook_on_the_events_and_timeouts_hook_install_writes() {
    let world = World::new();
    for agent in PACKAGED {
        let run = world.run(&["hook", "install", "--agent", agent], "", &[]);
        assert_eq!(run.code, Some(0), "{agent}: {}", run.stderr);
        let mut installed: Value = serde_json::from_str(&run.stdout).unwrap();
        with_program_on_path(&mut installed);
        let packaged = json_at(&format!("plugins/{agent}/hooks/hooks.json"));
        assert_eq!(packaged, installed, "plugins/{agent}/hooks/hooks.json");
    }
}

#[test]
fn each_package_registers_the_mcp_server_as_the_readme_does() {
    let readme = std::fs::read_to_string(repository().join("README.md")).unwrap();
    for agent in PACKAGED {
        let servers = &manifest(agent)["mcpServers"];
        assert_eq!(servers.as_object().unwrap().len(), 1, "{agent}: {servers}");
        let server = &servers["memrecall"];
        assert_eq!(server["command"], "memrecall", "{agent}: {server}");
        let args: Vec<&str> = server["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let registration = if agent == "claude-code" {
            format!("claude mcp add memrecall -- memrecall {}", args.join(" "))
        } else {
            let quoted: Vec<String> = args.iter().map(|a| format!("\"{a}\"")).collect();
            format!(
                "\"command\": \"memrecall\", \"args\": [{}]",
                quoted.join(", ")
            )
        };
        assert!(
            readme.contains(&registration),
            "{agent}: the README does not register {registration}"
        );
    }
}

#[test]
fn the_claude_code_plugin_registers_the_mcp_server_read_only() {
    let args = &manifest("claude-code")["mcpServers"]["memrecall"]["args"];
    assert_eq!(
        args,
        &json!(["mcp", "--agent", "claude-code", "--read-only"])
    );
}

#[test]
fn the_marketplace_lists_the_claude_code_plugin_by_its_directory_and_name() {
    let marketplace = json_at(".claude-plugin/marketplace.json");
    let plugins = marketplace["plugins"].as_array().unwrap();
    assert_eq!(plugins.len(), 1, "{marketplace}");
    assert_eq!(plugins[0]["source"], "./plugins/claude-code");
    assert_eq!(plugins[0]["name"], manifest("claude-code")["name"]);
}

#[test]
fn each_package_carries_the_version_of_the_binary() {
    for agent in PACKAGED {
        let manifest = manifest(agent);
        assert_eq!(manifest["version"], env!("CARGO_PKG_VERSION"), "{agent}");
        assert_eq!(manifest["name"], "memrecall", "{agent}");
    }
}
