//! memrecall's packages in each agent's own extension format (`plugins/` and the Claude Code
//! marketplace in `.claude-plugin/`), installed through the agent's own command with the
//! network cut off where the system allows it.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use anyhow::{Context, Result};

use super::setup::{Agent, Sandbox};

/// How the package install went.
pub enum Installed {
    /// Installed; how, for the report.
    Done(String),
    /// The agent has no package of memrecall's; why.
    NoPackage(String),
    /// The agent's command failed; its output.
    Failed(String),
}

/// Installs memrecall's package for `agent` into the sandbox's `HOME` with the agent's own
/// commands, run from the repository.
pub fn install(sandbox: &Sandbox, agent: &Agent, agent_bin: &Path) -> Result<Installed> {
    let root = crate::workspace_root()?;
    let root = root.to_string_lossy();
    let steps: Vec<(Vec<String>, &str)> = match agent.name {
        "claude-code" => vec![
            (words(&["plugin", "marketplace", "add", &root]), ""),
            (words(&["plugin", "install", "memrecall@memrecall"]), ""),
        ],
        // The user answers the folder trust question with `y`; `--consent` answers the
        // extension's own.
        "gemini-cli" => vec![(
            words(&[
                "extensions",
                "install",
                &format!("{root}/plugins/gemini-cli"),
            ]),
            "y\n",
        )],
        "qwen-code" => vec![(
            words(&[
                "extensions",
                "install",
                &format!("{root}/plugins/qwen-code"),
            ]),
            "",
        )],
        _ => {
            return Ok(Installed::NoPackage(
                "memrecall has no Codex package: install with hook install".into(),
            ));
        }
    };
    let offline = offline_prefix();
    let mut shown = Vec::new();
    for (mut args, answer) in steps {
        if agent.name != "claude-code" {
            args.push("--consent".into());
        }
        let output = run(sandbox, agent_bin, offline.as_deref(), &args, answer)?;
        let command = format!("{} {}", agent.bin, args.join(" ")).replace(root.as_ref(), ".");
        if !output.status.success() {
            let said = String::from_utf8_lossy(&output.stderr).into_owned()
                + &String::from_utf8_lossy(&output.stdout);
            let said: String = said.split_whitespace().collect::<Vec<_>>().join(" ");
            let said: String = said.chars().take(200).collect();
            return Ok(Installed::Failed(format!(
                "`{command}` failed with {}: {said}",
                output.status
            )));
        }
        shown.push(format!("`{command}`"));
    }
    let network = if offline.is_some() {
        "with no network"
    } else {
        "with the network reachable (no network namespace here)"
    };
    Ok(Installed::Done(format!("{} {network}", shown.join(" + "))))
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| (*w).to_owned()).collect()
}

/// The `unshare` arguments that run a command in a network namespace of its own (loopback
/// only, and down), if this system lets us: as root, or through a user namespace.
fn offline_prefix() -> Option<Vec<&'static str>> {
    [&["--net"][..], &["--net", "--map-root-user"][..]]
        .into_iter()
        .find(|flags| {
            Command::new("unshare")
                .args(*flags)
                .arg("true")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .map(<[&str]>::to_vec)
}

/// Runs the agent with `args` in the sandbox (through `unshare` when `offline` is given),
/// writing `answer` to its standard input.
fn run(
    sandbox: &Sandbox,
    agent_bin: &Path,
    offline: Option<&[&str]>,
    args: &[String],
    answer: &str,
) -> Result<Output> {
    let mut command = match offline {
        Some(flags) => {
            let mut command = sandbox.command("unshare");
            command.args(flags).arg(agent_bin);
            command
        }
        None => sandbox.command(agent_bin),
    };
    command
        .args(args)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .with_context(|| format!("could not start {}", agent_bin.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        use std::io::Write as _;
        let _ = stdin.write_all(answer.as_bytes());
    }
    child
        .wait_with_output()
        .with_context(|| format!("{} {} did not finish", agent_bin.display(), args.join(" ")))
}
