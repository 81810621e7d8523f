//! The memrecall binary unable to run: off the agent's `PATH` (the packages' `memrecall`, and
//! for Codex the README's bare `memrecall`), deleted after `hook install`, or killed by a signal.
//! Each time the prompt must reach the model. For Claude Code, whose plugin server fails to
//! start without the binary, the server must come back once the binary is on `PATH` again,
//! through the fix `memrecall doctor` names.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use super::checks::{self, Outcome};
use super::context::{PROMPT_EN, RunContext};
use super::package;
use super::setup::{Sandbox, configure};
use super::{Check, Row, Verdict};

/// Words of the English prompt, which the first request carries when the prompt got through.
const PROMPT_WORDS: &str = "database migration scripts";

/// The rows of the three cases, and for Claude Code the MCP server's return.
pub fn rows(context: &RunContext<'_>, binary: &Path) -> Result<Vec<Row>> {
    let agent = context.agent;
    let mut rows = Vec::new();
    let mut row = |check, (verdict, detail): (Verdict, String), hook: &str| {
        rows.push(Row {
            agent: agent.name,
            version: agent.version,
            check,
            verdict,
            hook: hook.to_owned(),
            detail,
        });
    };
    let (missing, form, back) = missing_from_path(context, binary)?;
    row(Check::MissingFromPath, missing, form);
    let (deleted, form) = installed_then(context, binary, Fault::Deleted)?;
    row(Check::Deleted, deleted, form);
    let (killed, form) = installed_then(context, binary, Fault::Killed)?;
    row(Check::Killed, killed, form);
    if let Some(back) = back {
        row(Check::McpBack, back, "");
    }
    Ok(rows)
}

/// The form of the hook command in a settings file or package: guarded (`command -v … &&
/// exec …`) or plain, for the report's hook column.
fn form(settings: &Path) -> &'static str {
    match std::fs::read_to_string(settings) {
        Ok(text) if text.contains("command -v ") => "guarded command",
        Ok(_) => "plain command",
        Err(_) => "",
    }
}

/// A check's verdict and detail.
type Judged = (Verdict, String);

/// What happens to the binary `hook install` named.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// It is removed after the install.
    Deleted,
    /// It reads its input and kills itself with SIGKILL.
    Killed,
}

/// A headless run of the English prompt in `sandbox`, labelled `label`, and whether the prompt
/// reached the model.
fn prompt_run(
    context: &RunContext<'_>,
    sandbox: &Sandbox,
    label: &str,
) -> Result<(Outcome, (Verdict, String))> {
    let context = RunContext {
        sandbox,
        ..*context
    };
    let outcome = context.run(None, Duration::ZERO, PROMPT_EN, label)?;
    let log = context
        .logs
        .join(format!("{}-{label}.log", context.agent.name));
    let output = std::fs::read_to_string(log).unwrap_or_default();
    let verdict = checks::prompt_reached(&outcome, PROMPT_WORDS, &output);
    Ok((outcome, verdict))
}

/// `hook install --write` naming a binary in the sandbox that is then deleted, or that kills
/// itself; no MCP registration.
fn installed_then(
    context: &RunContext<'_>,
    binary: &Path,
    fault: Fault,
) -> Result<((Verdict, String), &'static str)> {
    let agent = context.agent;
    let sandbox = Sandbox::new(binary)?;
    configure(
        &sandbox,
        agent,
        context.agent_bin,
        &context.server.uri(),
        false,
    )?;
    let program = sandbox.home.join(".local/opt/memrecall");
    std::fs::create_dir_all(program.parent().unwrap_or(&sandbox.home))?;
    match fault {
        Fault::Deleted => std::os::unix::fs::symlink(binary, &program)?,
        Fault::Killed => {
            let script = format!(
                "#!/bin/sh\ncat > /dev/null\necho \"$*\" >> '{}'\nkill -KILL $$\n",
                killed_log(&sandbox).display()
            );
            std::fs::write(&program, script)?;
            std::fs::set_permissions(
                &program,
                std::os::unix::fs::PermissionsExt::from_mode(0o755),
            )?;
        }
    }
    let named = program.to_string_lossy();
    let install = [
        "hook",
        "install",
        "--agent",
        agent.name,
        "--write",
        "--command",
    ];
    sandbox.memrecall(&[&install[..], &[named.as_ref()]].concat())?;
    let form = form(&sandbox.hook_settings(agent));
    let label = match fault {
        Fault::Deleted => {
            std::fs::remove_file(&program)?;
            "deleted"
        }
        Fault::Killed => "killed",
    };
    let (verdict, detail) = prompt_run(context, &sandbox, label)?.1;
    if fault == Fault::Deleted {
        return Ok(((verdict, detail), form));
    }
    // The case is made only if the binary did run, and die.
    let ran = std::fs::read_to_string(killed_log(&sandbox)).map_or(0, |text| text.lines().count());
    let verdict = if ran == 0 { Verdict::Fail } else { verdict };
    Ok(((verdict, format!("{detail}; killed {ran} time(s)")), form))
}

/// Where the self-killing binary notes each of its runs.
fn killed_log(sandbox: &Sandbox) -> std::path::PathBuf {
    sandbox.home.join(".local/opt/killed.log")
}

/// Where `memrecall` would be found on the sandbox's `PATH` once its own is moved away, if
/// anywhere (then the case cannot be made here).
fn memrecall_elsewhere() -> Option<std::path::PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("memrecall"))
        .find(|candidate| candidate.is_file())
}

/// memrecall installed as the agent's package (Codex: the hook snippet and MCP registration
/// with a bare `memrecall`), and no `memrecall` on `PATH`: whether the prompt reached the
/// model, and for Claude Code whether the plugin's MCP server came back afterwards.
fn missing_from_path(
    context: &RunContext<'_>,
    binary: &Path,
) -> Result<(Judged, &'static str, Option<Judged>)> {
    let agent = context.agent;
    if let Some(other) = memrecall_elsewhere() {
        let why = format!("{} is on PATH: the case cannot be made", other.display());
        let back = (agent.name == "claude-code").then(|| (Verdict::NotRun, why.clone()));
        return Ok(((Verdict::NotRun, why), "", back));
    }
    let sandbox = Sandbox::new(binary)?;
    let uri = context.server.uri();
    let codex = agent.name == "codex";
    configure(&sandbox, agent, context.agent_bin, &uri, codex)?;
    let on_path = sandbox.bin.join("memrecall");
    let form = if codex {
        let named = on_path.to_string_lossy();
        let snippet =
            sandbox.memrecall(&["hook", "install", "--agent", "codex", "--command", &named])?;
        let hooks = sandbox.hook_settings(agent);
        std::fs::write(&hooks, snippet.replace(named.as_ref(), "memrecall"))?;
        form(&hooks)
    } else {
        match package::install(&sandbox, agent, context.agent_bin)? {
            package::Installed::Done(_) => {}
            package::Installed::NoPackage(why) => {
                return Ok(((Verdict::NotRun, why), "", None));
            }
            package::Installed::Failed(why) => return Ok(((Verdict::Fail, why), "", None)),
        }
        let root = crate::workspace_root()?;
        form(
            &root
                .join("plugins")
                .join(agent.name)
                .join("hooks/hooks.json"),
        )
    };
    let away = sandbox.bin.join("memrecall.away");
    std::fs::rename(&on_path, &away)?;
    let missing = prompt_run(context, &sandbox, "missing");
    std::fs::rename(&away, &on_path).context("could not put memrecall back on PATH")?;
    let missing = missing?.1;
    let back = if agent.name == "claude-code" {
        Some(claude_server_back(context, &sandbox)?)
    } else {
        None
    };
    Ok((missing, form, back))
}

/// With memrecall back on `PATH` after the plugin's server failed to start: whether Claude Code
/// noted the failure, whether it offered the tools again with the note in place, and whether
/// it did once the fix `memrecall doctor` names was applied.
fn claude_server_back(context: &RunContext<'_>, sandbox: &Sandbox) -> Result<(Verdict, String)> {
    let cache = sandbox.home.join(".claude/mcp-needs-auth-cache.json");
    let noted = std::fs::read_to_string(&cache)
        .is_ok_and(|text| text.contains("plugin:memrecall:memrecall"));
    let (kept, _) = prompt_run(context, sandbox, "back-noted")?;
    let (offered_with_note, _) = checks::mcp_listed(&kept);
    let doctor = sandbox
        .command(sandbox.bin.join("memrecall"))
        .args(["doctor", "--agent", "claude-code"])
        .output()
        .context("could not run memrecall doctor")?;
    let report = String::from_utf8_lossy(&doctor.stdout);
    let fix = report.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("fix: rm '")?;
        rest.strip_suffix('\'').map(str::to_owned)
    });
    let fixed = match &fix {
        Some(path) if Path::new(path) == cache => {
            std::fs::remove_file(path)?;
            format!("doctor's fix `rm {}` applied", cache.display())
        }
        Some(other) => format!("doctor named another file: {other}"),
        None => "doctor named no fix".to_owned(),
    };
    let (back, _) = prompt_run(context, sandbox, "back")?;
    let (offered, listed) = checks::mcp_listed(&back);
    let detail = format!(
        "failed start noted: {noted}; binary back, tools offered with the note: {}; {fixed}; then: {listed}",
        offered_with_note == Verdict::Pass
    );
    Ok((offered, detail))
}
