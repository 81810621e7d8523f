//! The four agents: their npm packages, where each keeps project memory and settings, how
//! memrecall's MCP server is registered with it (as the README says), and the headless command
//! and environment that point it at the loopback model.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, ensure};
use serde_json::json;

use super::requests::Api;

/// One agent under test.
#[derive(Debug, Clone, Copy)]
pub struct Agent {
    /// memrecall's name for it (`--agent`).
    pub name: &'static str,
    /// Its npm package.
    pub package: &'static str,
    /// The pinned version.
    pub version: &'static str,
    /// The command the package installs.
    pub bin: &'static str,
    /// The API it speaks to its model.
    pub api: Api,
}

/// The agents, in the order they are reported.
pub const AGENTS: [Agent; 4] = [
    Agent {
        name: "claude-code",
        package: "@anthropic-ai/claude-code",
        version: "2.1.328",
        bin: "claude",
        api: Api::Anthropic,
    },
    Agent {
        name: "qwen-code",
        package: "@qwen-code/qwen-code",
        version: "0.24.4",
        bin: "qwen",
        api: Api::ChatCompletions,
    },
    Agent {
        name: "gemini-cli",
        package: "@google/gemini-cli",
        version: "0.61.0",
        bin: "gemini",
        api: Api::Gemini,
    },
    Agent {
        name: "codex",
        package: "@openai/codex",
        version: "0.169.0",
        bin: "codex",
        api: Api::Responses,
    },
];

/// A temporary home, repository and `PATH` for one agent.
pub struct Sandbox {
    _dir: tempfile::TempDir,
    /// `HOME` (and `MEMRECALL_HOME`'s parent).
    pub home: PathBuf,
    /// The git repository the agent runs in.
    pub repo: PathBuf,
    /// Where the `memrecall` the agent finds on `PATH` lives: the timing script in front of the
    /// built binary.
    pub bin: PathBuf,
    /// `XDG_RUNTIME_DIR`, so the per-user server is this sandbox's own.
    pub runtime: PathBuf,
    /// One line per hook process: its start and end in nanoseconds, then its arguments.
    pub hook_times: PathBuf,
    /// Each hook process's standard input and output, as `hook-<start>.in` and `.out`.
    pub hook_outputs: PathBuf,
}

impl Sandbox {
    /// A fresh sandbox whose `memrecall` runs `binary`, timing each hook process.
    pub fn new(binary: &Path) -> Result<Self> {
        let dir = tempfile::Builder::new().prefix("agents-").tempdir()?;
        let base = dir.path().canonicalize()?;
        let (home, repo, bin, runtime) = (
            base.join("home"),
            base.join("repo"),
            base.join("bin"),
            base.join("run"),
        );
        let hook_outputs = base.join("hooks");
        for d in [&home, &repo, &bin, &runtime, &hook_outputs] {
            std::fs::create_dir_all(d)?;
        }
        std::fs::set_permissions(
            &runtime,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )?;
        let git = Command::new("git")
            .args(["init", "--quiet"])
            .current_dir(&repo)
            .status();
        if !git.is_ok_and(|s| s.success()) {
            std::fs::create_dir_all(repo.join(".git"))?;
        }
        let hook_times = base.join("hook-times.log");
        // A shell in front of the binary times each hook process and keeps its input and what
        // it printed; anything else runs the binary in the shell's place. `install` is given
        // this script with `--command`, and the packages find it on `PATH`, so the time measured
        // is the time the agent waits for the hook, this shell's few milliseconds included.
        let wrapper = format!(
            "#!/bin/sh\ncase \"$1\" in hook) ;; *) exec '{bin}' \"$@\" ;; esac\n\
             start=$(date +%s%N)\nkept='{outputs}'/hook-$start\ncat > \"$kept.in\"\n\
             '{bin}' \"$@\" < \"$kept.in\" > \"$kept.out\"\nstatus=$?\nend=$(date +%s%N)\n\
             cat \"$kept.out\"\necho \"$start $end $*\" >> '{log}'\nexit $status\n",
            bin = binary.display(),
            outputs = hook_outputs.display(),
            log = hook_times.display(),
        );
        let script = bin.join("memrecall");
        std::fs::write(&script, wrapper)?;
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
        Ok(Self {
            _dir: dir,
            home,
            repo,
            bin,
            runtime,
            hook_times,
            hook_outputs,
        })
    }

    /// The directory the agent's layout reads project memory from, for the repository: its
    /// hook's own resolution, under the sandbox's home.
    pub fn project_memory(&self, agent: &Agent) -> Result<PathBuf> {
        let hooks_agent = agent_hooks::Agent::ALL
            .into_iter()
            .find(|known| known.as_str() == agent.name)
            .with_context(|| format!("memrecall knows no agent {}", agent.name))?;
        crate::sandbox::project_memory(
            agent_hooks::default_layout(hooks_agent),
            &self.repo,
            &self.home,
        )
    }

    /// The settings file `hook install --write` changes.
    pub fn hook_settings(&self, agent: &Agent) -> PathBuf {
        match agent.name {
            "claude-code" => self.home.join(".claude/settings.json"),
            "qwen-code" => self.home.join(".qwen/settings.json"),
            "gemini-cli" => self.home.join(".gemini/settings.json"),
            _ => self.home.join(".codex/hooks.json"),
        }
    }

    /// A command with this sandbox's environment and nothing else from ours but `PATH`.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new(program);
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![self.bin.clone()];
        paths.extend(std::env::split_paths(&path));
        command
            .env_clear()
            .env("PATH", std::env::join_paths(paths).unwrap_or(path))
            .env("HOME", &self.home)
            .env("USER", "agents")
            .env("LANG", "C.UTF-8")
            .env("TERM", "dumb")
            .env("NO_COLOR", "1")
            .env("XDG_RUNTIME_DIR", &self.runtime)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_CACHE_HOME", self.home.join(".cache"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .current_dir(&self.repo);
        command
    }

    /// Runs `memrecall` (the one on the sandbox's `PATH`) and fails with its output when it
    /// fails.
    pub fn memrecall(&self, args: &[&str]) -> Result<String> {
        let output = self
            .command(self.bin.join("memrecall"))
            .args(args)
            .output()
            .with_context(|| format!("could not run memrecall {}", args.join(" ")))?;
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        ensure!(
            output.status.success(),
            "memrecall {} failed with {}: {}{}",
            args.join(" "),
            output.status,
            stdout,
            String::from_utf8_lossy(&output.stderr)
        );
        Ok(stdout)
    }
}

impl Drop for Sandbox {
    /// Stops the per-user server the hooks started, whatever happened to the runs.
    fn drop(&mut self) {
        let _ = self
            .command(self.bin.join("memrecall"))
            .arg("stop")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
    }
}

/// Writes the agent's own settings it needs to run headless against `base_url`, and, when
/// `register_mcp`, registers memrecall's MCP server the way the README says. `agent_bin` is the
/// installed agent command.
pub fn configure(
    sandbox: &Sandbox,
    agent: &Agent,
    agent_bin: &Path,
    base_url: &str,
    register_mcp: bool,
) -> Result<()> {
    let mcp = |name: &str| {
        if register_mcp {
            json!({"memrecall": {"command": "memrecall", "args": ["mcp", "--agent", name]}})
        } else {
            json!({})
        }
    };
    match agent.name {
        "claude-code" if !register_mcp => {}
        "claude-code" => {
            let output = sandbox
                .command(agent_bin)
                .args([
                    "mcp",
                    "add",
                    "memrecall",
                    "--",
                    "memrecall",
                    "mcp",
                    "--agent",
                ])
                .args([agent.name, "--read-only"])
                .output()
                .context("could not run `claude mcp add`")?;
            ensure!(
                output.status.success(),
                "`claude mcp add` failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        "qwen-code" => write_json(
            &sandbox.home.join(".qwen/settings.json"),
            // The settings version Qwen Code writes, so that it leaves the file alone.
            &json!({
                "$version": 4,
                "mcpServers": mcp(agent.name),
                "security": {"auth": {"selectedType": "openai"}},
                "tools": {"toolSearch": {"enabled": false}},
                // Qwen Code's own recall of the same roots off, so that memrecall delivers them
                // (with it on, memrecall leaves them to it: a run of its own checks that).
                "memory": {"enableManagedAutoMemory": false},
            }),
        )?,
        "gemini-cli" => write_json(
            &sandbox.home.join(".gemini/settings.json"),
            &json!({
                "mcpServers": mcp(agent.name),
                "security": {"auth": {"selectedType": "gemini-api-key"}},
            }),
        )?,
        _ => {
            let mut config = String::new();
            if register_mcp {
                config.push_str(
                    "mcp_servers.memrecall = { command = \"memrecall\", args = [\"mcp\", \"--agent\", \"codex\"] }\n",
                );
            }
            config.push_str("model = \"loopback\"\nmodel_provider = \"loopback\"\n\n");
            config.push_str("[model_providers.loopback]\nname = \"loopback\"\n");
            let _ = writeln!(config, "base_url = \"{base_url}/v1\"");
            config.push_str("wire_api = \"responses\"\nenv_key = \"LOOPBACK_API_KEY\"\n\n");
            let _ = writeln!(
                config,
                "[projects.\"{}\"]\ntrust_level = \"trusted\"",
                sandbox.repo.display()
            );
            let path = sandbox.home.join(".codex/config.toml");
            std::fs::create_dir_all(sandbox.home.join(".codex"))?;
            std::fs::write(path, config)?;
        }
    }
    Ok(())
}

/// Writes settings as a person editing them might: four-space indents, keys in their order.
fn write_json(path: &Path, value: &serde_json::Value) -> Result<()> {
    use serde::Serialize as _;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut bytes = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    value.serialize(&mut serde_json::Serializer::with_formatter(
        &mut bytes, formatter,
    ))?;
    bytes.push(b'\n');
    std::fs::write(path, bytes)?;
    Ok(())
}

/// The headless command for `prompt`, pointed at `base_url`.
pub fn headless(
    sandbox: &Sandbox,
    agent: &Agent,
    agent_bin: &Path,
    base_url: &str,
    prompt: &str,
) -> Command {
    let mut command = sandbox.command(agent_bin);
    match agent.name {
        "claude-code" => {
            command
                .args([
                    "-p",
                    prompt,
                    "--allowedTools=mcp__memrecall__recall_memories,mcp__memrecall__list_memories",
                ])
                .env("ANTHROPIC_BASE_URL", base_url)
                .env("ANTHROPIC_API_KEY", "loopback")
                .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                .env("DISABLE_TELEMETRY", "1")
                .env("DISABLE_AUTOUPDATER", "1")
                .env("ENABLE_TOOL_SEARCH", "false");
        }
        "qwen-code" => {
            command
                .args(["-p", prompt, "--approval-mode", "yolo"])
                .env("OPENAI_BASE_URL", format!("{base_url}/v1"))
                .env("OPENAI_API_KEY", "loopback")
                .env("OPENAI_MODEL", "loopback");
        }
        "gemini-cli" => {
            command
                .args(["-p", prompt, "--approval-mode", "yolo"])
                .env("GOOGLE_GEMINI_BASE_URL", base_url)
                .env("GEMINI_API_KEY", "loopback")
                .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
        }
        _ => {
            command
                .args([
                    "exec",
                    "--dangerously-bypass-hook-trust",
                    "--dangerously-bypass-approvals-and-sandbox",
                    prompt,
                ])
                .env("LOOPBACK_API_KEY", "loopback");
        }
    }
    command
}
