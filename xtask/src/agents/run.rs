//! One agent's checks: memory and settings in a sandbox, memrecall installed as the README says,
//! headless runs against the loopback model, and verdicts from the requests it logged.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::model::{MEMORY_TOOL, Script};
use super::requests::{mentions, occurrences, offered_tools, parse_bodies, tool_results};
use super::setup::{Agent, Sandbox, configure, headless};
use super::{Check, Row, Verdict};

/// The English prompt and the memory it should bring.
pub const PROMPT_EN: &str = "How should database migration scripts be written in this project?";
/// The Chinese prompt.
pub const PROMPT_ZH: &str = "数据库迁移脚本应该怎么写？";

/// Unique strings only the memory files hold.
pub struct Markers {
    /// In the English migrations memory.
    pub en: String,
    /// In the Chinese-titled memory.
    pub zh: String,
    /// In a memory only a model selector would pick for the English prompt.
    pub picked: String,
}

impl Markers {
    pub fn new() -> Self {
        let unique = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
            ^ std::process::id();
        Self {
            en: format!("ORCHARD-{unique:08x}"),
            zh: format!("LANTERN-{unique:08x}"),
            picked: format!("HARBOUR-{unique:08x}"),
        }
    }
}

/// What one headless run left behind.
struct Outcome {
    bodies: Vec<Value>,
    hook_ms: Vec<f64>,
    elapsed: Duration,
    exit: String,
}

impl Outcome {
    /// Requests of the main conversation: those offering the model tools.
    fn main_requests(&self, agent: &Agent) -> Vec<&Value> {
        self.bodies
            .iter()
            .filter(|body| !offered_tools(agent.api, body).is_empty())
            .collect()
    }

    fn hook_summary(&self) -> String {
        match self.hook_ms.as_slice() {
            [] => "no hook ran".into(),
            [first, rest @ ..] => {
                let max = rest.iter().copied().fold(*first, f64::max);
                format!(
                    "{first:.0} ms first, {max:.0} max, {} calls",
                    self.hook_ms.len()
                )
            }
        }
    }
}

/// Runs every check for one agent; `agent_bin` is its installed command.
pub fn check_agent(
    runtime: &Runtime,
    agent: &Agent,
    agent_bin: &Path,
    binary: &Path,
    timeout: Duration,
    logs: &Path,
) -> Result<Vec<Row>> {
    let sandbox = Sandbox::new(binary)?;
    let markers = Markers::new();
    let memory = sandbox.project_memory(agent);
    write_memories(&memory, &markers)?;
    let server = runtime.block_on(MockServer::start());
    configure(&sandbox, agent, agent_bin, &server.uri())?;
    let settings = sandbox.hook_settings(agent);
    let before = std::fs::read(&settings).ok();
    sandbox.memrecall(&["hook", "install", "--agent", agent.name, "--write"])?;
    let installed = std::fs::read(&settings).ok();

    let mut rows = Vec::new();
    let mut row = |check: Check, verdict: Verdict, hook: String, detail: String| {
        rows.push(Row {
            agent: agent.name,
            version: agent.version,
            check,
            verdict,
            hook,
            detail,
        });
    };

    // English prompt; the model calls the memory tool once.
    let script = Script {
        api: agent.api,
        tool_query: Some("database migration scripts".into()),
    };
    let context = RunContext {
        runtime,
        server: &server,
        sandbox: &sandbox,
        agent,
        agent_bin,
        timeout,
        logs,
    };
    let run = |script: Script, prompt: &str, label: &str| context.run(script, prompt, label);
    let en = run(script, PROMPT_EN, "en")?;
    let main = en.main_requests(agent);
    let first = main.first().copied();
    let hook = en.hook_summary();
    let (verdict, detail) = match first {
        None => no_main_request(&en),
        Some(body) if mentions(body, &markers.en) => (Verdict::Pass, took(&en)),
        Some(_) => (
            Verdict::Fail,
            format!("marker absent from the first request; {}", took(&en)),
        ),
    };
    row(Check::FirstPromptEn, verdict, hook.clone(), detail);
    let tools: Vec<String> = first
        .map(|b| offered_tools(agent.api, b))
        .unwrap_or_default();
    let memrecall_tools: Vec<&String> = tools
        .iter()
        .filter(|t| t.ends_with(MEMORY_TOOL) || t.ends_with("list_memories"))
        .collect();
    let listed = if memrecall_tools.len() == 2 {
        (Verdict::Pass, format!("{}", memrecall_tools[0]))
    } else {
        (Verdict::Fail, format!("offered: {}", tools.join(", ")))
    };
    row(Check::McpListed, listed.0, String::new(), listed.1);
    let results: Vec<String> = main
        .iter()
        .flat_map(|b| tool_results(agent.api, b))
        .collect();
    let called = if results.iter().any(|r| r.contains(&markers.en)) {
        (Verdict::Pass, "the tool result holds the memory".to_owned())
    } else if results.is_empty() {
        (
            Verdict::Fail,
            "no tool result came back to the model".to_owned(),
        )
    } else {
        (
            Verdict::Fail,
            format!("tool result without the memory: {}", clip(&results[0])),
        )
    };
    row(Check::McpCall, called.0, String::new(), called.1);

    // Chinese prompt, answered with text.
    let script = Script {
        api: agent.api,
        tool_query: None,
    };
    let zh = run(script, PROMPT_ZH, "zh")?;
    let (verdict, detail) = match zh.main_requests(agent).first() {
        None => no_main_request(&zh),
        Some(body) if mentions(body, &markers.zh) => (Verdict::Pass, took(&zh)),
        Some(_) => (
            Verdict::Fail,
            format!("marker absent from the first request; {}", took(&zh)),
        ),
    };
    row(Check::FirstPromptZh, verdict, zh.hook_summary(), detail);

    // A selector answering after 300 ms: its extra pick arrives after the tool call.
    let selector = runtime.block_on(MockServer::start());
    let picks = vec![
        memory.join("migrations.md").display().to_string(),
        memory.join("release-freeze.md").display().to_string(),
    ];
    runtime.block_on(
        Mock::given(any())
            .respond_with(Selector { picks })
            .mount(&selector),
    );
    let config = format!(
        "[selector]\nkind = \"http\"\nurl = \"{}\"\nmodel = \"loopback\"\n",
        selector.uri()
    );
    let memrecall_home = sandbox.home.join(".memrecall");
    std::fs::create_dir_all(&memrecall_home)?;
    std::fs::write(memrecall_home.join("config.toml"), config)?;
    let script = Script {
        api: agent.api,
        tool_query: Some("sourdough starter feeding schedule".into()),
    };
    let refined = run(script, PROMPT_EN, "selector")?;
    let asked = runtime
        .block_on(selector.received_requests())
        .map_or(0, |r| r.len());
    let (verdict, detail) = refined_verdict(agent, &refined, &markers, asked);
    row(Check::Refined, verdict, refined.hook_summary(), detail);
    std::fs::remove_file(memrecall_home.join("config.toml"))?;

    let _ = sandbox.memrecall(&["stop"]);
    let uninstall = sandbox.memrecall(&["hook", "uninstall", "--agent", agent.name]);
    let after = std::fs::read(&settings).ok();
    let (verdict, detail) = match uninstall {
        Err(error) => (Verdict::Fail, format!("uninstall failed: {error:#}")),
        Ok(_) => uninstall_verdict(before.as_deref(), installed.as_deref(), after.as_deref()),
    };
    row(Check::Uninstall, verdict, String::new(), detail);
    Ok(rows)
}

fn took(outcome: &Outcome) -> String {
    format!(
        "run {:.1} s, {}",
        outcome.elapsed.as_secs_f64(),
        outcome.exit
    )
}

fn no_main_request(outcome: &Outcome) -> (Verdict, String) {
    (
        Verdict::Fail,
        format!(
            "no request offered tools ({} requests); {}",
            outcome.bodies.len(),
            took(outcome)
        ),
    )
}

fn clip(text: &str) -> String {
    let clipped: String = text.chars().take(80).collect();
    clipped.replace('\n', " ")
}

/// The selector's pick must not be in the first request, must arrive once after the tool result,
/// and the lexical document must not be delivered a second time.
fn refined_verdict(
    agent: &Agent,
    outcome: &Outcome,
    markers: &Markers,
    asked: usize,
) -> (Verdict, String) {
    let main = outcome.main_requests(agent);
    let (Some(first), Some(last)) = (main.first(), main.last()) else {
        return no_main_request(outcome);
    };
    // Count deliveries outside tool results (the memory tool may show the documents too).
    let delivered = |body: &Value, marker: &str| {
        let in_results: usize = tool_results(agent.api, body)
            .iter()
            .map(|r| r.matches(marker).count())
            .sum();
        occurrences(body, marker).saturating_sub(in_results)
    };
    let early = mentions(first, &markers.picked);
    let picked = delivered(last, &markers.picked);
    let lexical = delivered(last, &markers.en);
    let facts = format!(
        "selector asked {asked}×; pick in 1st request: {early}; in last of {} requests: pick {picked}×, lexical {lexical}×",
        main.len()
    );
    let pass = asked > 0 && !early && picked == 1 && lexical == 1 && main.len() > 1;
    (if pass { Verdict::Pass } else { Verdict::Fail }, facts)
}

fn uninstall_verdict(
    before: Option<&[u8]>,
    installed: Option<&[u8]>,
    after: Option<&[u8]>,
) -> (Verdict, String) {
    match (before, after) {
        (None, None) => (Verdict::Pass, "created by install, removed".into()),
        (Some(b), Some(a)) if a == b => (Verdict::Pass, "byte-identical".into()),
        (None, Some(a)) => (
            Verdict::Fail,
            format!(
                "created by install, left behind: {}",
                clip(&String::from_utf8_lossy(a))
            ),
        ),
        (Some(_), None) => (Verdict::Fail, "the settings file is gone".into()),
        (Some(b), Some(a)) => {
            let changed_by_install = installed != Some(b);
            (
                Verdict::Fail,
                format!(
                    "{} bytes before, {} after (install changed it: {changed_by_install}); first difference at byte {}",
                    b.len(),
                    a.len(),
                    b.iter().zip(a).take_while(|(x, y)| x == y).count()
                ),
            )
        }
    }
}

/// Answers every selection request after 300 ms with the same picks.
struct Selector {
    picks: Vec<String>,
}

impl Respond for Selector {
    fn respond(&self, _request: &Request) -> ResponseTemplate {
        let content = json!({ "selected_memories": self.picks }).to_string();
        ResponseTemplate::new(200)
            .set_delay(Duration::from_millis(300))
            .set_body_json(json!({
                "id": "chatcmpl-selector", "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop"}],
            }))
    }
}

fn write_memories(dir: &Path, markers: &Markers) -> Result<()> {
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
struct RunContext<'a> {
    runtime: &'a Runtime,
    server: &'a MockServer,
    sandbox: &'a Sandbox,
    agent: &'a Agent,
    agent_bin: &'a Path,
    timeout: Duration,
    logs: &'a Path,
}

impl RunContext<'_> {
    /// One headless run of the agent against a fresh request log; the requests and the agent's
    /// output are kept in `logs` as `<agent>-<label>.requests.json` and `.log`.
    fn run(&self, script: Script, prompt: &str, label: &str) -> Result<Outcome> {
        let (server, sandbox, agent) = (self.server, self.sandbox, self.agent);
        self.runtime.block_on(async {
            server.reset().await;
            Mock::given(any()).respond_with(script).mount(server).await;
        });
        let _ = std::fs::remove_file(&sandbox.hook_times);
        let mut command = headless(sandbox, agent, self.agent_bin, &server.uri(), prompt);
        let log = self.logs.join(format!("{}-{label}.log", agent.name));
        let out = std::fs::File::create(&log)?;
        command
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out);
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let started = Instant::now();
        let child = command
            .spawn()
            .with_context(|| format!("could not start {}", self.agent_bin.display()))?;
        let exit = wait(child, self.timeout)?;
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
        let hook_ms = std::fs::read_to_string(&sandbox.hook_times)
            .unwrap_or_default()
            .lines()
            .filter_map(super::hook_wall_ms)
            .collect();
        Ok(Outcome {
            bodies,
            hook_ms,
            elapsed,
            exit,
        })
    }
}

/// Waits for the agent, killing its process group at the deadline.
fn wait(mut child: Child, timeout: Duration) -> Result<String> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(format!(
                "exit {}",
                status.code().map_or("signal".into(), |c| c.to_string())
            ));
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
