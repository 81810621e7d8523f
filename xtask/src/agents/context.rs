//! One headless run of an agent against the loopback model and selector, in its sandbox, and
//! what it left: the hook's output, the model's requests and the telemetry.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::{Value, json};
use tokio::runtime::Runtime;
use wiremock::matchers::any;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::checks::{self, Hook, Markers, Outcome};
use super::model::{LIST_TOOL, RECALL_TOOL, Script};
use super::requests::parse_bodies;
use super::setup::{Agent, Sandbox, headless};
use super::{Options, Verdict};

/// The English prompt.
pub(super) const PROMPT_EN: &str =
    "How should database migration scripts be written in this project?";

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
    pub(super) fn selector_run(
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
    pub(super) fn fetched_run(
        &self,
        memory: &Path,
        markers: &Markers,
    ) -> Result<((Verdict, String), String)> {
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
    pub(super) fn own_recall_run(&self, markers: &Markers) -> Result<((Verdict, String), String)> {
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
