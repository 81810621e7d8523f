//! One agent's runs: memories and settings in a sandbox, memrecall installed as the README says,
//! headless runs against the loopback model, then the verdicts of `checks`.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use serde_json::json;
use tokio::runtime::Runtime;
use wiremock::MockServer;

use super::checks::{self, Markers};
use super::context::{PROMPT_EN, RunContext};
use super::model::RECALL_TOOL;
use super::package;
use super::setup::{Agent, Sandbox, configure};
use super::{Check, Options, Row, Verdict};

/// The Chinese prompt.
const PROMPT_ZH: &str = "数据库迁移脚本应该怎么写？";

/// Runs every check for one agent; `agent_bin` is its installed command.
pub fn check_agent(
    runtime: &Runtime,
    agent: &Agent,
    agent_bin: &Path,
    binary: &Path,
    options: &Options,
    logs: &Path,
) -> Result<Vec<Row>> {
    let sandbox = Sandbox::new(binary)?;
    let markers = Markers::new();
    let memory = sandbox.project_memory(agent)?;
    write_memories(&memory, &markers)?;
    let server = runtime.block_on(MockServer::start());
    let context = RunContext {
        runtime,
        server: &server,
        sandbox: &sandbox,
        agent,
        agent_bin,
        options,
        logs,
    };
    if options.binary_faults_only {
        return super::unrunnable::rows(&context, binary);
    }
    configure(&sandbox, agent, agent_bin, &server.uri(), true)?;
    let settings = sandbox.hook_settings(agent);
    let snapshot = |stage: &str| {
        let bytes = std::fs::read(&settings).ok();
        let kept = logs.join(format!("{}-settings.{stage}", agent.name));
        match &bytes {
            Some(bytes) => std::fs::write(kept, bytes),
            None => std::fs::write(kept, "(no file)\n"),
        }
        .map(|()| bytes)
    };
    let before = snapshot("before")?;
    // The entry names the timing script, so that each hook's wall time is measured; without
    // `--command` it would name the built binary itself.
    let wrapper = sandbox.bin.join("memrecall");
    let wrapper = wrapper.to_string_lossy();
    let install = ["hook", "install", "--agent", agent.name, "--write"];
    sandbox.memrecall(&[&install[..], &["--command", &wrapper]].concat())?;
    let installed = snapshot("installed")?;
    ensure!(
        installed
            .as_deref()
            .is_some_and(|bytes| String::from_utf8_lossy(bytes).contains(wrapper.as_ref())),
        "hook install did not name {wrapper} in {}",
        settings.display()
    );

    let mut rows = Vec::new();
    let mut row = |check: Check, (verdict, detail), hook: &str| {
        rows.push(Row {
            agent: agent.name,
            version: agent.version,
            check,
            verdict,
            hook: hook.to_owned(),
            detail,
        });
    };

    // English prompt; the model calls the recall tool once.
    let query = json!({ "query": "database migration scripts" });
    let en = context.run(Some((RECALL_TOOL, query)), Duration::ZERO, PROMPT_EN, "en")?;
    let hook = en.hook_summary();
    row(
        Check::FirstPromptEn,
        checks::first_prompt(&en, &markers.en),
        &hook,
    );
    row(Check::McpListed, checks::mcp_listed(&en), "");
    row(Check::McpCall, checks::mcp_call(&en, &markers.en), "");
    let output = std::fs::read_to_string(logs.join(format!("{}-en.log", agent.name)))?;
    row(Check::NoHookWarning, checks::no_hook_warning(&output), "");

    // Chinese prompt, answered with text.
    let zh = context.run(None, Duration::ZERO, PROMPT_ZH, "zh")?;
    let hook = zh.hook_summary();
    row(
        Check::FirstPromptZh,
        checks::first_prompt(&zh, &markers.zh),
        &hook,
    );

    let (verdict, hook) = context.selector_run(&memory, &markers)?;
    row(Check::Refined, verdict, &hook);
    let (verdict, hook) = context.fetched_run(&memory, &markers)?;
    row(Check::FetchedOnce, verdict, &hook);
    if agent.name == "qwen-code" {
        let (verdict, hook) = context.own_recall_run(&markers)?;
        row(Check::OwnRecallOnce, verdict, &hook);
    }

    let _ = sandbox.memrecall(&["stop"]);
    keep_telemetry(
        &sandbox.home.join(".memrecall/telemetry"),
        &logs.join(format!("{}-telemetry.jsonl", agent.name)),
    )?;
    let ran = snapshot("after-runs")?;
    let uninstall = sandbox.memrecall(&["hook", "uninstall", "--agent", agent.name]);
    let after = snapshot("after-uninstall")?;
    let verdict = match uninstall {
        Err(error) => (Verdict::Fail, format!("uninstall failed: {error:#}")),
        Ok(_) => uninstall_verdict(&settings, [&before, &installed, &ran, &after]),
    };
    row(Check::Uninstall, verdict, "");

    let package = package_run(&context, binary)?;
    row(Check::Package, package.verdict, &package.hook);
    if let Some(doctor) = package.doctor {
        row(Check::DoctorHealthy, doctor, "");
    }
    rows.extend(super::unrunnable::rows(&context, binary)?);
    Ok(rows)
}

/// A fresh sandbox with memrecall installed only as the agent's own package, through the
/// agent's own command (no `hook install`, no MCP registration of ours), the timing script in
/// front of the built binary on `PATH` as `memrecall`, and the English prompt: the verdict and
/// the hooks' wall times.
fn package_run(context: &RunContext<'_>, binary: &Path) -> Result<PackageRun> {
    let agent = context.agent;
    let sandbox = Sandbox::new(binary)?;
    let markers = Markers::new();
    write_memories(&sandbox.project_memory(agent)?, &markers)?;
    configure(
        &sandbox,
        agent,
        context.agent_bin,
        &context.server.uri(),
        false,
    )?;
    let installed = match package::install(&sandbox, agent, context.agent_bin)? {
        package::Installed::Done(how) => how,
        package::Installed::NoPackage(why) => {
            return Ok(PackageRun {
                verdict: (Verdict::NotRun, why),
                hook: String::new(),
                doctor: None,
            });
        }
        package::Installed::Failed(why) => {
            return Ok(PackageRun {
                verdict: (Verdict::Fail, why),
                hook: String::new(),
                doctor: None,
            });
        }
    };
    let context = RunContext {
        sandbox: &sandbox,
        ..*context
    };
    let run = context.run(None, Duration::ZERO, PROMPT_EN, "package")?;
    let hook = run.hook_summary();
    let doctor = sandbox
        .command(sandbox.bin.join("memrecall"))
        .current_dir(&sandbox.repo)
        .arg("doctor")
        .output()
        .context("could not run memrecall doctor")?;
    let stdout = String::from_utf8_lossy(&doctor.stdout);
    std::fs::write(
        context
            .logs
            .join(format!("{}-package-doctor.txt", agent.name)),
        stdout.as_bytes(),
    )?;
    let doctor = checks::doctor_healthy(doctor.status.code(), &stdout);
    Ok(PackageRun {
        verdict: checks::package(&run, &markers.en, &installed),
        hook,
        doctor: Some(doctor),
    })
}

/// The settings file's bytes before `install`, after it, after the runs and after `uninstall`
/// (`None`: no file): the uninstall row's verdict.
fn uninstall_verdict(
    settings: &Path,
    [before, installed, ran, after]: [&Option<Vec<u8>>; 4],
) -> Verdicted {
    let (verdict, mut detail) =
        checks::uninstall(before.as_deref(), after.as_deref(), installed != ran);
    if verdict == Verdict::Fail {
        detail.push_str(&backup_note(settings, before.as_deref()));
    }
    (verdict, detail)
}

/// A check's verdict and its detail.
type Verdicted = (Verdict, String);

/// What the run with memrecall installed as the agent's own package found.
struct PackageRun {
    verdict: Verdicted,
    /// The hooks' wall times.
    hook: String,
    /// `memrecall doctor` there, when the package was installed.
    doctor: Option<Verdicted>,
}

/// Whether a backup beside the settings file still holds the bytes from before `install`.
fn backup_note(settings: &Path, before: Option<&[u8]>) -> String {
    let (Some(dir), Some(name)) = (settings.parent(), settings.file_name()) else {
        return String::new();
    };
    let name = name.to_string_lossy();
    let backups: Vec<Vec<u8>> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|entry| {
            let other = entry.file_name().to_string_lossy().into_owned();
            other.starts_with(name.as_ref()) && other.contains("memrecall-backup")
        })
        .filter_map(|entry| std::fs::read(entry.path()).ok())
        .collect();
    let count = backups.len();
    match before {
        None => format!("; {count} backup(s) beside it"),
        Some(b) => {
            let original = backups.iter().any(|backup| backup == b);
            format!("; {count} backup(s) beside it, one holding the original bytes: {original}")
        }
    }
}

/// Copies memrecall's telemetry of every run into one file.
fn keep_telemetry(dir: &Path, to: &Path) -> Result<()> {
    let mut files: Vec<_> = match std::fs::read_dir(dir) {
        Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    let mut all = Vec::new();
    for file in files {
        all.extend(std::fs::read(file)?);
    }
    std::fs::write(to, all)?;
    Ok(())
}

/// Three memories: one the English prompt matches, one with a Chinese title the Chinese prompt
/// matches, and one only the selector picks for the English prompt.
pub(super) fn write_memories(dir: &Path, markers: &Markers) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    let topic = |name: &str, description: &str, body: &str| {
        format!("---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n{body}\n")
    };
    let files = [
        (
            "migrations.md",
            topic(
                "Database migration conventions",
                "How database migration scripts are written and reviewed in this project",
                &format!(
                    "Every migration script is reversible and carries the review tag {}.",
                    markers.en
                ),
            ),
        ),
        (
            "migrations-zh.md",
            topic(
                "数据库迁移脚本规范",
                "数据库迁移脚本的写法与审查",
                &format!(
                    "每个迁移脚本都必须可以回滚，并带有审查标记 {}。",
                    markers.zh
                ),
            ),
        ),
        (
            "release-freeze.md",
            topic(
                "Release freeze calendar",
                "Weeks when nothing ships to production",
                &format!(
                    "No release ships in the last week of a quarter; freeze code {}.",
                    markers.picked
                ),
            ),
        ),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).with_context(|| format!("could not write {name}"))?;
    }
    Ok(())
}
