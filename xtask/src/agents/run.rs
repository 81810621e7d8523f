//! One agent's runs: memories and settings in a sandbox, memrecall installed as the README says,
//! headless runs against the loopback model, then the verdicts of `checks`.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::checks::{self, Hook, Markers, Outcome};
use super::model::{LIST_TOOL, RECALL_TOOL, Script};
use super::package;
use super::requests::parse_bodies;
use super::setup::{Agent, Sandbox, configure, headless};
use super::{Check, Options, Row, Verdict};

/// The English prompt.
pub(super) const PROMPT_EN: &str =
    "How should database migration scripts be written in this project?";
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
    let memory = sandbox.project_memory(agent);
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
    write_memories(&sandbox.project_memory(agent), &markers)?;
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

/// How long the selector takes to answer.
const SELECTOR_DELAY: Duration = Duration::from_millis(300);

/// Answers every selection request after [`SELECTOR_DELAY`] with the same picks, noting when
/// each answer went out (nanoseconds since the Unix epoch).
struct Selector {
    picks: Vec<String>,
    answered: std::sync::Arc<std::sync::Mutex<Vec<u128>>>,
}

impl Respond for Selector {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let at = unix_ns() + SELECTOR_DELAY.as_nanos();
        if let Ok(mut answered) = self.answered.lock() {
            answered.push(at);
        }
        let content = json!({ "selected_memories": self.picks }).to_string();
        ResponseTemplate::new(200)
            .set_delay(SELECTOR_DELAY)
            .set_body_json(json!({
                "id": "chatcmpl-selector", "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop"}],
            }))
    }
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

/// What a headless run needs besides its script and prompt.
#[derive(Clone, Copy)]
pub(super) struct RunContext<'a> {
    pub(super) runtime: &'a Runtime,
    pub(super) server: &'a MockServer,
    pub(super) sandbox: &'a Sandbox,
    pub(super) agent: &'a Agent,
    pub(super) agent_bin: &'a Path,
    pub(super) options: &'a Options,
    pub(super) logs: &'a Path,
}

impl RunContext<'_> {
    /// The English prompt with a selector answering after 300 ms configured, the model listing
    /// memories (titles only, no bodies) once: the verdict and the hooks' wall times.
    fn selector_run(
        &self,
        memory: &Path,
        markers: &Markers,
    ) -> Result<((Verdict, String), String)> {
        let call = Some((LIST_TOOL, json!({})));
        let (refined, asked, answered_ms) = self.with_selector(memory, call, "selector")?;
        Ok((
            checks::refined(&refined, markers, asked, answered_ms),
            refined.hook_summary(),
        ))
    }

    /// The English prompt with the same selector, the model calling `recall_memories` (whose
    /// answer waits for the selector, and so holds its pick): the verdict and the hooks' wall
    /// times.
    fn fetched_run(&self, memory: &Path, markers: &Markers) -> Result<((Verdict, String), String)> {
        let call = Some((
            RECALL_TOOL,
            json!({ "query": "database migration scripts" }),
        ));
        let (fetched, asked, answered_ms) = self.with_selector(memory, call, "fetched")?;
        Ok((
            checks::fetched_once(&fetched, &markers.picked, asked, answered_ms),
            fetched.hook_summary(),
        ))
    }

    /// One run of the English prompt with a selector answering after [`SELECTOR_DELAY`] with
    /// the English and the selector-only memories configured, and the model making `call`: the
    /// run, how many times the selector was asked, and when it first answered (milliseconds
    /// from the agent's start).
    fn with_selector(
        &self,
        memory: &Path,
        call: Option<(&'static str, Value)>,
        label: &str,
    ) -> Result<(Outcome, usize, Option<u64>)> {
        let selector = self.runtime.block_on(MockServer::start());
        let picks = ["migrations.md", "release-freeze.md"]
            .map(|name| memory.join(name).display().to_string())
            .to_vec();
        let answered = std::sync::Arc::default();
        let responder = Selector {
            picks,
            answered: std::sync::Arc::clone(&answered),
        };
        self.runtime
            .block_on(Mock::given(any()).respond_with(responder).mount(&selector));
        let memrecall_home = self.sandbox.home.join(".memrecall");
        std::fs::create_dir_all(&memrecall_home)?;
        let config = memrecall_home.join("config.toml");
        let url = selector.uri();
        let text = format!("[selector]\nkind = \"http\"\nurl = \"{url}\"\nmodel = \"loopback\"\n");
        std::fs::write(&config, text)?;
        let run = self.run(call, self.options.model_latency, PROMPT_EN, label);
        std::fs::remove_file(&config)?;
        // The next run's prompt hook starts a server with the configuration it then finds.
        let _ = self.sandbox.memrecall(&["stop"]);
        let run = run?;
        let asked = self
            .runtime
            .block_on(selector.received_requests())
            .map_or(0, |requests| requests.len());
        let answered_ms = answered
            .lock()
            .ok()
            .and_then(|a| a.first().copied())
            .map(|at| run.ms_from_start(at));
        Ok((run, asked, answered_ms))
    }

    /// Qwen Code with its own memory recall on (its default; the sandbox turns it off for the
    /// other runs) and the English prompt: the verdict and the hooks' wall times.
    fn own_recall_run(&self, markers: &Markers) -> Result<((Verdict, String), String)> {
        let settings = self.sandbox.hook_settings(self.agent);
        let original = std::fs::read_to_string(&settings)?;
        let mut value: Value = serde_json::from_str(&original)?;
        if let Some(object) = value.as_object_mut() {
            object.remove("memory");
        }
        std::fs::write(&settings, serde_json::to_string_pretty(&value)?)?;
        let run = self.run(None, Duration::ZERO, PROMPT_EN, "own-recall");
        std::fs::write(&settings, original)?;
        let run = run?;
        Ok((
            checks::own_recall_once(&run, &markers.en),
            run.hook_summary(),
        ))
    }

    /// One headless run of the agent against a fresh request log; the requests and the agent's
    /// output are kept in `logs` as `<agent>-<label>.requests.json` and `.log`.
    pub(super) fn run(
        &self,
        call: Option<(&'static str, Value)>,
        latency: Duration,
        prompt: &str,
        label: &str,
    ) -> Result<Outcome> {
        let (server, sandbox, agent) = (self.server, self.sandbox, self.agent);
        let script = Script {
            api: agent.api,
            call,
            latency,
        };
        self.runtime.block_on(async {
            server.reset().await;
            Mock::given(any()).respond_with(script).mount(server).await;
        });
        let _ = std::fs::remove_file(&sandbox.hook_times);
        for entry in std::fs::read_dir(&sandbox.hook_outputs)? {
            std::fs::remove_file(entry?.path())?;
        }
        let mut command = headless(sandbox, agent, self.agent_bin, &server.uri(), prompt);
        let log = self.logs.join(format!("{}-{label}.log", agent.name));
        let out = std::fs::File::create(&log)?;
        command
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out);
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let started = Instant::now();
        let started_ns = unix_ns();
        let child = command
            .spawn()
            .with_context(|| format!("could not start {}", self.agent_bin.display()))?;
        let exit = wait(child, self.options.timeout)?;
        let elapsed = started.elapsed();
        let requests = self
            .runtime
            .block_on(server.received_requests())
            .unwrap_or_default();
        let bodies: Vec<Vec<u8>> = requests
            .into_iter()
            .filter(|r| r.method.as_str() == "POST")
            .map(|r| r.body)
            .collect();
        let bodies = parse_bodies(&bodies);
        let dump = self
            .logs
            .join(format!("{}-{label}.requests.json", agent.name));
        std::fs::write(&dump, serde_json::to_vec_pretty(&bodies)?)?;
        let mut hooks = Vec::new();
        for line in std::fs::read_to_string(&sandbox.hook_times)
            .unwrap_or_default()
            .lines()
        {
            if let Some((start, wall_ms)) = checks::hook_line(line) {
                let kept = sandbox.hook_outputs.join(format!("hook-{start}"));
                let input = std::fs::read(kept.with_extension("in")).unwrap_or_default();
                let event = serde_json::from_slice::<Value>(&input)
                    .ok()
                    .and_then(|v| v["hook_event_name"].as_str().map(str::to_owned))
                    .unwrap_or_default();
                let at_ns = u128::from(start).saturating_sub(started_ns);
                hooks.push(Hook {
                    at_ms: u64::try_from(at_ns / 1_000_000).unwrap_or(u64::MAX),
                    wall_ms,
                    event,
                    out: std::fs::read_to_string(kept.with_extension("out")).unwrap_or_default(),
                });
            }
        }
        hooks.sort_by_key(|hook| hook.at_ms);
        let kept: Vec<Value> = hooks
            .iter()
            .map(|h| {
                json!({"started_ms": h.at_ms, "wall_ms": h.wall_ms, "event": h.event,
                       "stdout": h.out})
            })
            .collect();
        let dump = self.logs.join(format!("{}-{label}.hooks.json", agent.name));
        std::fs::write(&dump, serde_json::to_vec_pretty(&kept)?)?;
        Ok(Outcome::new(
            agent.api,
            bodies,
            hooks,
            (started_ns, elapsed),
            exit,
        ))
    }
}

/// Now, in nanoseconds since the Unix epoch.
fn unix_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// Waits for the agent, killing its process group at the deadline.
fn wait(mut child: Child, timeout: Duration) -> Result<String> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            let code = status
                .code()
                .map_or("by a signal".into(), |c| c.to_string());
            return Ok(format!("exit {code}"));
        }
        if Instant::now() >= deadline {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            return Ok(format!("killed after {} s", timeout.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
