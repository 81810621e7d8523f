//! `memrecall hook`: one agent hook call, from the event on stdin to the delivery on stdout.
//!
//! It never stands in the user's way: whatever happens (bad JSON, no home, unreadable roots, a
//! selector that fails or never answers, a panic) it exits 0, prints nothing (Gemini CLI: `{}`
//! when there is simply nothing to add) and writes one line to `$MEMRECALL_HOME/logs/hook.log`.
//! Exit code 2 would block the user's prompt in every agent, so it is never used.
//!
//! The hook is a thin client of the user's server (`memrecall serve`, see [`crate::serve`]): it
//! sends the event and prints the answer in the agent's shape. The server keeps the session's
//! recall between events, so a prompt event gets the fast result and a later tool-result event
//! the model's remaining picks, once; the stop event ends the turn. When no server runs, a prompt
//! event starts one; when none answers within [`CONNECT_BUDGET`] (or its answer is late or
//! broken), the prompt is recalled in this process as below, and a tool event prints nothing.
//!
//! In this process, a prompt event runs one recall turn: the recall starts, the initial point
//! waits at most the 100 ms ceiling, and what it delivers is printed, cut to whole documents
//! under [`hook_io::MAX_CONTEXT_UTF16`]. The process then ends the turn (a selector still
//! thinking is cancelled) and brings the catalogs up to date for the next call. The recall's
//! telemetry events go to `$MEMRECALL_HOME/telemetry/` (see [`crate::stats`]).

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use memory_scan::ScannedDocument;
use recall_facade::{
    DeliveryDesign, DeliveryRule, HttpSelectorConfig, MemoryRecall, RecallConfig, SelectorChoice,
};

use crate::agent::hook_io::{self, HookEvent, MAX_CONTEXT_UTF16, utf16_len};
use crate::agent::{Agent, Environment, Layout, layout};
use crate::config::{Config, ConfigSelectorKind};
use crate::serve::ServerPaths;
use crate::serve::client::{self, Autostart, Budget, ClientError};
use crate::serve::protocol::{EventRequest, Point, PromptEvent, Request, Response};

/// The most stdin a hook reads: a prompt of 100,000 characters is well under it.
const MAX_STDIN_BYTES: u64 = 8 * 1024 * 1024;
/// The log is moved to `hook.log.1` once it grows past this.
const MAX_LOG_BYTES: u64 = 512 * 1024;
/// How long the hook waits, after printing, to bring the catalogs up to date.
const CATALOG_GRACE: Duration = Duration::from_secs(2);
/// How long a hook tries to reach the server (starting it when needed) before recalling in its
/// own process: the 100 ms ceiling, counted from the hook's start. A dead socket is noticed at
/// once (connection refused); the budget is spent only waiting for a server just started.
const CONNECT_BUDGET: Duration = Duration::from_millis(100);
/// How long a hook waits for the server's answer once asked: the server's own wait is at most
/// the 100 ms ceiling, the rest is margin for its scan on a busy machine.
const ANSWER_BUDGET: Duration = Duration::from_millis(250);
const TRUNCATED_NOTE: &str = "\n\n> NOTE: Relevant memory truncated for prompt budget.\n";

/// Runs one hook call; always succeeds (see the module docs).
pub fn run(agent: Agent, layout: Option<Layout>) {
    let env = Environment::from_process();
    // A panic is logged, never shown: the agent may print the hook's stderr to the user.
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(|| serve(agent, layout, &env));
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(message)) => log(&env, agent, &message),
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            log(&env, agent, &format!("internal error: {what}"));
        }
    }
}

/// Logs a failure to parse the hook's own command line (a bad hook entry in the agent's
/// settings), which must not exit 2 either.
pub fn log_bad_command_line(message: &str) {
    let env = Environment::from_process();
    let first = message.lines().next().unwrap_or_default();
    write_log_line(&env, &format!("hook: bad command line: {first}"));
}

fn serve(agent: Agent, layout: Option<Layout>, env: &Environment) -> Result<(), String> {
    let started = Instant::now();
    let mut stdin = String::new();
    std::io::stdin()
        .take(MAX_STDIN_BYTES)
        .read_to_string(&mut stdin)
        .map_err(|e| format!("cannot read stdin: {e}"))?;
    let input = hook_io::parse(agent, &stdin).map_err(|e| e.to_string())?;
    let point = match &input.event {
        HookEvent::Prompt { .. } | HookEvent::Other => None,
        HookEvent::ToolResult => Some(Point::ToolResult),
        HookEvent::TurnEnd => Some(Point::TurnEnd),
        HookEvent::SessionEnd => Some(Point::SessionEnd),
    };
    if let Some(point) = point {
        // Only a server keeps a recall past its prompt event; without one there is nothing to
        // deliver or end, and no reason to start one.
        let context = match input.session_id.clone() {
            Some(session) => ask_server(env, agent, Some(session), point, Autostart::No, started)
                .unwrap_or_else(|error| {
                    if !matches!(error, ClientError::NotRunning) {
                        log(env, agent, &error.to_string());
                    }
                    String::new()
                }),
            None => String::new(),
        };
        return print(&hook_io::render(agent, &input.event_name, &context));
    }
    let HookEvent::Prompt {
        query,
        repeat_is_continuation,
    } = input.event
    else {
        return print(hook_io::nothing(agent));
    };
    if query.trim().is_empty() {
        return print(hook_io::nothing(agent));
    }
    let cwd = match input.cwd {
        Some(cwd) => cwd,
        None => {
            std::env::current_dir().map_err(|e| format!("no cwd given and none readable: {e}"))?
        }
    };
    let cwd = std::path::absolute(&cwd).map_err(|e| {
        format!(
            "cannot resolve the working directory {}: {e}",
            cwd.display()
        )
    })?;
    let layout = layout.unwrap_or(crate::agent::default_layout(agent));
    let resolved = layout::resolve(layout, &cwd, env).map_err(|e| e.to_string())?;
    for ignored in &resolved.ignored {
        log(env, agent, &format!("ignored: {ignored}"));
    }
    let roots = resolved.recall_roots(env.memrecall_home().as_deref());
    if roots.project.is_none() && roots.user.is_none() {
        return print(hook_io::nothing(agent));
    }
    let prompt = PromptEvent {
        query,
        repeat_is_continuation,
        cwd,
        layout: Some(layout),
        env: env.to_named(),
    };
    let served = ask_server(
        env,
        agent,
        input.session_id.clone(),
        Point::Prompt(prompt.clone()),
        Autostart::Yes,
        started,
    );
    match served {
        Ok(context) => print(&hook_io::render(agent, &input.event_name, &context)),
        Err(error) => {
            log(env, agent, &format!("{error}; recalling in this process"));
            recall_here(
                agent,
                env,
                &input.event_name,
                input.session_id.as_deref(),
                prompt,
                roots,
            )
        }
    }
}

/// Asks the user's server for the delivery at `point`, starting the server when `autostart`
/// says so; the whole exchange fits in [`CONNECT_BUDGET`] and [`ANSWER_BUDGET`].
fn ask_server(
    env: &Environment,
    agent: Agent,
    session: Option<String>,
    point: Point,
    autostart: Autostart,
    started: Instant,
) -> Result<String, ClientError> {
    let paths = ServerPaths::from_env(env).ok_or(ClientError::NotRunning)?;
    let request = Request::Event(EventRequest {
        agent,
        session,
        point,
    });
    let budget = Budget {
        connect_by: started + CONNECT_BUDGET,
        answer_within: ANSWER_BUDGET,
    };
    match client::exchange(&paths, request, autostart, budget)? {
        Response::Delivery(answer) => Ok(answer.context),
        other => Err(ClientError::Server(format!("unexpected answer {other:?}"))),
    }
}

/// The recall of one prompt in this process, when no server answers: nothing outlives the
/// call, so the tool-result point of this turn has nothing to deliver.
fn recall_here(
    agent: Agent,
    env: &Environment,
    event_name: &str,
    session: Option<&str>,
    prompt: PromptEvent,
    roots: layout::RecallRoots,
) -> Result<(), String> {
    let PromptEvent {
        query,
        repeat_is_continuation,
        ..
    } = prompt;
    if repeat_is_continuation && is_repeat(env, agent, session, &query) {
        return print(hook_io::nothing(agent));
    }
    let settings = settings_from_config(env).unwrap_or_else(|message| {
        log(
            env,
            agent,
            &format!("{message}; recalling without a selector"),
        );
        RecallSettings::default()
    });

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let home = env.memrecall_home();
    let telemetry =
        crate::stats::telemetry_sink(home.as_deref(), vec![Arc::new(recall_facade::TracingSink)]);
    let ran = runtime.block_on(async {
        let mut config = RecallConfig::with_roots(roots.project, roots.user);
        config.catalog = roots.catalogs.is_some();
        config.catalog_store = roots.catalogs.unwrap_or_default();
        config.telemetry = Arc::clone(&telemetry.sink);
        config.selector = settings.selector;
        config.delivery = settings.design;
        config.delivery_rule = settings.rule;
        let mut recall = MemoryRecall::new(config).map_err(|e| e.to_string())?;
        recall.begin_turn(&query, &[]);
        let initial = recall.initial().await;
        let context = initial
            .delivered()
            .map(|memory| fit(&memory.documents, &memory.prompt, SystemTime::now()))
            .unwrap_or_default();
        Ok::<_, String>((recall, context))
    });
    let (mut recall, context) = match ran {
        Ok(done) => done,
        Err(message) => {
            runtime.shutdown_timeout(Duration::ZERO);
            return Err(message);
        }
    };
    let printed = print(&hook_io::render(agent, event_name, &context));
    // After printing: the selector (if still thinking) is cancelled and the catalogs this call
    // brought up to date are written, so the next call starts warm.
    recall.end_turn();
    let deadline = tokio::time::Instant::now() + CATALOG_GRACE;
    runtime.block_on(async {
        let _ = tokio::time::timeout_at(deadline, recall.write_catalogs()).await;
        recall.shutdown();
    });
    runtime.shutdown_timeout(deadline.saturating_duration_since(tokio::time::Instant::now()));
    if let Some(dropped) = telemetry.history.and_then(|history| history.dropped()) {
        log(
            env,
            agent,
            &format!(
                "{} telemetry event(s) not recorded: {}",
                dropped.count, dropped.first_error
            ),
        );
    }
    printed
}

/// The prompt, or the longest run of its first documents whose prompt fits the budget, or the
/// first document's prompt cut to it.
pub(crate) fn fit(documents: &[Arc<ScannedDocument>], prompt: &str, now: SystemTime) -> String {
    if utf16_len(prompt) <= MAX_CONTEXT_UTF16 {
        return prompt.to_owned();
    }
    for keep in (1..documents.len()).rev() {
        let shorter =
            recall_facade::render_prompt(documents[..keep].iter().map(|d| d.document()), now);
        if utf16_len(&shorter) <= MAX_CONTEXT_UTF16 {
            return shorter;
        }
    }
    let one = recall_facade::render_prompt(documents.iter().take(1).map(|d| d.document()), now);
    let budget = MAX_CONTEXT_UTF16 - utf16_len(TRUNCATED_NOTE);
    let mut used = 0;
    let cut = one
        .char_indices()
        .find(|(_, c)| {
            used += c.len_utf16();
            used > budget
        })
        .map_or(one.len(), |(at, _)| at);
    format!("{}{TRUNCATED_NOTE}", one[..cut].trim_end())
}

/// What `config.toml` chooses for a recall: the selector, the delivery design and the delivery
/// rule.
#[derive(Clone)]
pub(crate) struct RecallSettings {
    pub(crate) selector: SelectorChoice,
    pub(crate) design: DeliveryDesign,
    pub(crate) rule: DeliveryRule,
}

impl Default for RecallSettings {
    /// No selector, the fast-path design and the measured rule: what a missing `config.toml`
    /// means.
    fn default() -> Self {
        Self {
            selector: SelectorChoice::None,
            design: DeliveryDesign::FastPath,
            rule: DeliveryRule::SHIPPED,
        }
    }
}

impl From<Config> for RecallSettings {
    fn from(config: Config) -> Self {
        let selector = match config.selector.kind {
            ConfigSelectorKind::None => SelectorChoice::None,
            ConfigSelectorKind::Http => {
                let table = config.selector;
                let mut http = HttpSelectorConfig::new(
                    table.url.unwrap_or_default(),
                    table.model.unwrap_or_default(),
                );
                if let Some(var) = table.api_key_env {
                    http.api_key_env = var;
                }
                SelectorChoice::Http(http)
            }
        };
        Self {
            selector,
            design: config.delivery.design.into(),
            rule: config.delivery.trim.into(),
        }
    }
}

/// What `config.toml` under the memrecall home chooses; the defaults without a home.
pub(crate) fn settings_from_config(env: &Environment) -> Result<RecallSettings, String> {
    let Some(home) = env.memrecall_home() else {
        return Ok(RecallSettings::default());
    };
    let config = Config::load(&home).map_err(|e| e.to_string())?;
    Ok(config.into())
}

/// Whether `query` repeats the last query recalled in this session (a Qwen Code continuation);
/// remembers it otherwise. Without a session or a home, nothing is a repeat.
fn is_repeat(env: &Environment, agent: Agent, session: Option<&str>, query: &str) -> bool {
    let (Some(session), Some(home)) = (session, env.memrecall_home()) else {
        return false;
    };
    let dir = home.join("state").join(agent.as_str());
    let file = dir.join(format!(
        "{:016x}",
        twox_hash::XxHash3_64::oneshot(session.as_bytes())
    ));
    let fingerprint = format!("{:016x}", twox_hash::XxHash3_64::oneshot(query.as_bytes()));
    let last = memory_scan::foreign::read_to_string(
        &file,
        memory_scan::foreign::ByteLimit::STATE,
        memory_scan::foreign::Links::Refuse,
    );
    if last.is_ok_and(|last| last.trim() == fingerprint) {
        return true;
    }
    // Best effort: without the state, the next continuation is recalled like a prompt.
    let _ = private_dir(&dir).and_then(|()| {
        private_file(
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true),
        )
        .open(&file)?
        .write_all(fingerprint.as_bytes())
    });
    false
}

/// Creates `dir` and its missing parents, each private to this user (0700 on Unix): what the
/// hook keeps under `$MEMRECALL_HOME` is about the user's prompts and memory.
pub(crate) fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// `options` creating a file private to this user (0600 on Unix) and refusing a symlink in its
/// place (`O_NOFOLLOW`: the open fails rather than write through a link to another file).
pub(crate) fn private_file(options: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        let no_follow = rustix::fs::OFlags::NOFOLLOW.bits();
        options
            .mode(0o600)
            .custom_flags(i32::try_from(no_follow).unwrap_or(0));
    }
    options
}

fn print(text: &str) -> Result<(), String> {
    if text.is_empty() {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| format!("cannot write stdout: {e}"))
}

fn log(env: &Environment, agent: Agent, message: &str) {
    write_log_line(
        env,
        &format!("{}: {}", agent.as_str(), message.replace('\n', " ")),
    );
}

/// Appends one timestamped line to `$MEMRECALL_HOME/logs/hook.log`. Failing to log is silent:
/// there is nowhere else to say it.
fn write_log_line(env: &Environment, line: &str) {
    let Some(home) = env.memrecall_home() else {
        return;
    };
    let _ = Log::new(home.join("logs").join("hook.log")).append(line);
}

/// A log (`….log`) kept under [`MAX_LOG_BYTES`]: a log over it is moved to `….log.1` before the
/// next line, so at most two logs of that size exist. The file stays open from one line to the
/// next, so a process that has run out of descriptors still logs.
#[derive(Debug)]
pub(crate) struct Log {
    path: PathBuf,
    file: Option<std::fs::File>,
}

impl Log {
    pub(crate) const fn new(path: PathBuf) -> Self {
        Self { path, file: None }
    }

    /// Appends one timestamped line.
    pub(crate) fn append(&mut self, line: &str) -> std::io::Result<()> {
        let size = match &self.file {
            Some(file) => file.metadata()?.len(),
            None => std::fs::symlink_metadata(&self.path)
                .ok()
                .filter(std::fs::Metadata::is_file)
                .map_or(0, |m| m.len()),
        };
        if size > MAX_LOG_BYTES {
            self.file = None;
            match std::fs::rename(&self.path, rotated(&self.path)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        let file = if let Some(file) = &mut self.file {
            file
        } else {
            if let Some(dir) = self.path.parent() {
                private_dir(dir)?;
            }
            let opened = private_file(std::fs::OpenOptions::new().create(true).append(true))
                .open(&self.path)?;
            self.file.insert(opened)
        };
        let now = humantime::format_rfc3339_seconds(SystemTime::now());
        // One write per line, so concurrent hooks do not interleave within a line.
        file.write_all(format!("{now} {line}\n").as_bytes())
    }
}

fn rotated(path: &Path) -> PathBuf {
    path.with_extension("log.1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_over_its_bound_moves_aside_and_a_new_one_starts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hook.log");
        std::fs::write(
            &path,
            vec![b'x'; usize::try_from(MAX_LOG_BYTES).unwrap() + 1],
        )
        .unwrap();
        Log::new(path.clone()).append("fresh").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.ends_with(" fresh\n") && text.lines().count() == 1,
            "{text}"
        );
        assert!(dir.path().join("hook.log.1").is_file());
    }

    #[test]
    fn a_log_kept_open_moves_aside_once_it_grows_past_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.log");
        let mut log = Log::new(path.clone());
        let long = "x".repeat(64 * 1024);
        while !dir.path().join("serve.log.1").exists() {
            log.append(&long).unwrap();
            assert!(std::fs::metadata(&path).unwrap().len() <= MAX_LOG_BYTES + 65 * 1024);
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn the_log_and_the_session_state_are_private_to_the_user() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::from_pairs([("MEMRECALL_HOME", dir.path().as_os_str().to_owned())]);
        write_log_line(&env, "a line");
        is_repeat(&env, Agent::QwenCode, Some("s1"), "first");
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;

        assert_eq!(mode(&dir.path().join("logs")), 0o700);
        assert_eq!(mode(&dir.path().join("logs/hook.log")), 0o600);
        let state = dir.path().join("state/qwen-code");
        assert_eq!(mode(&state), 0o700);
        let file = std::fs::read_dir(&state)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        assert_eq!(mode(&file), 0o600);
    }

    #[cfg(unix)]
    #[test]
    fn a_log_that_is_a_symlink_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "keep\n").unwrap();
        let logs = dir.path().join("logs");
        std::fs::create_dir(&logs).unwrap();
        std::os::unix::fs::symlink(&target, logs.join("hook.log")).unwrap();
        assert!(Log::new(logs.join("hook.log")).append("a line").is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    }

    #[test]
    fn a_repeated_query_in_the_same_session_is_a_repeat_and_a_new_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let env = Environment::from_pairs([("MEMRECALL_HOME", dir.path().as_os_str().to_owned())]);
        assert!(!is_repeat(&env, Agent::QwenCode, Some("s1"), "first"));
        assert!(is_repeat(&env, Agent::QwenCode, Some("s1"), "first"));
        assert!(!is_repeat(&env, Agent::QwenCode, Some("s2"), "first"));
        assert!(!is_repeat(&env, Agent::QwenCode, Some("s1"), "second"));
        assert!(!is_repeat(&env, Agent::QwenCode, None, "second"));
    }
}
