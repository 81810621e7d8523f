//! `memrecall hook`: one agent hook call, from the event on stdin to the delivery on stdout.
//!
//! It never stands in the user's way: whatever happens (bad JSON, no home, unreadable roots, a
//! selector that fails or never answers, a panic) it exits 0, prints nothing (Gemini CLI: `{}`
//! when there is simply nothing to add) and writes one line to `$MEMRECALL_HOME/logs/hook.log`.
//! Exit code 2 would block the user's prompt in every agent, so it is never used.
//!
//! The hook is a thin client of the user's server (`memrecall serve`, see [`crate::server`]): it
//! sends the event and prints the answer in the agent's shape. It resolves no memory roots for
//! the server: it sends the agent's working directory, the layout and the variables layouts
//! read, and the server resolves the roots once, under its own rules, and sends back the files
//! that resolution ignored, for this log. The hook resolves roots only to recall in its own
//! process. The server keeps the session's
//! recall between events, so a prompt event gets the fast result and a later tool-result event
//! the model's remaining picks, once; the stop event ends the turn. When no server runs, a prompt
//! event starts one; when none answers within `CONNECT_BUDGET` (or its answer is late or
//! broken), the prompt is recalled in this process as below, and a tool event prints nothing.
//!
//! Qwen Code's continuation after a tool result (its prompt event again, with an empty prompt or
//! the same one) is the tool-result point: with an empty prompt always, with the same one when
//! the server's open turn has that query or a hook recalled that turn in its own process
//! (`turn_state`). So a
//! continuation gets the model's remaining pick from the server, once, and never a document the
//! turn was already given; a turn recalled in the hook's own process has nothing left to give.
//!
//! In this process, a prompt event runs one recall turn: the recall starts, the initial point
//! waits at most the 100 ms ceiling, and what it delivers is printed, cut to whole documents
//! under [`hook_io::MAX_CONTEXT_UTF16`] (as is a server's answer). The process then ends the
//! turn (a selector still thinking is cancelled) and brings the catalogs up to date for the next
//! call, for at most `EXIT_GRACE` after printing: the agent waits for the process to exit. The
//! recall's telemetry events go where the running program's [`Program::telemetry`] sends them
//! (memrecall: `$MEMRECALL_HOME/telemetry/`).

use std::io::{Read as _, Write as _};
use std::sync::Arc;
use std::time::{Duration, Instant};

use recall_facade::{OnceConfig, RecallOptions, recall_once};

use crate::Program;
use crate::ServerPaths;
use crate::client::{self, Autostart, Budget, ClientError};
use crate::protocol::{EventRequest, Point, PromptEvent, Request, Response, ToolResultEvent};
use agent_hooks::hook_io::{self, HookEvent};
use agent_hooks::{Agent, Environment, Layout, layout};

mod log;
mod told;
mod turn_state;

use log::{log, trace_to_hook_log, write_log_line};

/// The most stdin a hook reads: a prompt of 100,000 characters is well under it.
const MAX_STDIN_BYTES: u64 = 8 * 1024 * 1024;
/// How long the hook process may live after printing its answer, bringing the catalogs up to
/// date: the agent waits for the process to exit before it goes on. A catalog not written by
/// then is left for a later call (the writer's temporary file goes with the process).
const EXIT_GRACE: Duration = Duration::from_millis(50);
/// How long a hook tries to reach the server (starting it when needed) before recalling in its
/// own process: the first-prompt ceiling, counted from the hook's start. A dead socket is noticed
/// at once (connection refused); the time is spent only waiting for a server just started.
const CONNECT_BUDGET: Duration = recall_facade::FIRST_PROMPT_CEILING;
/// How long a hook waits for the server's answer once asked: the server's own wait is at most
/// the 100 ms ceiling, the rest is margin for its scan on a busy machine.
const ANSWER_BUDGET: Duration = Duration::from_millis(250);

/// Runs one hook call; always succeeds (see the module docs).
pub fn run(agent: Agent, layout: Option<Layout>, program: &'static dyn Program) {
    let env = Environment::from_process();
    trace_to_hook_log(&env, program);
    // A panic is logged, never shown: the agent may print the hook's stderr to the user.
    std::panic::set_hook(Box::new(|_| {}));
    // Nothing of the program is used after a panic but to log it.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        answer(agent, layout, &env, program)
    }));
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(error)) => log(&env, agent, &error.to_string()),
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

/// Why a hook call printed nothing: the one line its log gets.
#[derive(Debug, thiserror::Error)]
enum HookError {
    /// Standard input could not be read.
    #[error("cannot read stdin: {0}")]
    Stdin(#[source] std::io::Error),
    /// The agent's event could not be parsed.
    #[error(transparent)]
    Input(#[from] hook_io::HookInputError),
    /// The event names no working directory and this process has none.
    #[error("no cwd given and none readable: {0}")]
    NoCwd(#[source] std::io::Error),
    /// The working directory could not be made absolute.
    #[error("cannot resolve the working directory {}: {source}", path.display())]
    Cwd {
        /// The directory given.
        path: std::path::PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The memory roots could not be resolved.
    #[error(transparent)]
    Layout(#[from] agent_hooks::layout::LayoutError),
    /// The async runtime of the recall in this process could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The recall session in this process could not be built.
    #[error(transparent)]
    Recall(#[from] recall_facade::FacadeError),
    /// Standard output could not be written.
    #[error("cannot write stdout: {0}")]
    Stdout(#[source] std::io::Error),
}

/// Answers one hook call: reads the event from standard input, recalls (through the server when
/// one is running, else in this process) and prints what the agent should add.
fn answer(
    agent: Agent,
    layout: Option<Layout>,
    env: &Environment,
    program: &dyn Program,
) -> Result<(), HookError> {
    let started = Instant::now();
    let mut stdin = String::new();
    std::io::stdin()
        .take(MAX_STDIN_BYTES)
        .read_to_string(&mut stdin)
        .map_err(HookError::Stdin)?;
    let input = hook_io::parse(agent, &stdin)?;
    let session = input.session_id.as_deref();
    let point = later_point(&input.event, env, agent, session);
    if matches!(point, Some(Point::TurnEnd | Point::SessionEnd)) {
        turn_state::end_turn(env, agent, session);
    }
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
        None => std::env::current_dir().map_err(HookError::NoCwd)?,
    };
    let cwd = std::path::absolute(&cwd).map_err(|source| HookError::Cwd {
        path: cwd.clone(),
        source,
    })?;
    let layout = layout.unwrap_or(agent_hooks::default_layout(agent));
    // A served prompt's roots are resolved by the server alone, from what is sent here; this
    // process resolves them only to recall in its own process.
    let prompt = PromptEvent {
        query,
        repeat_is_continuation,
        cwd,
        layout: Some(layout),
        env: env.to_named(),
        selector_key: selector_key(program, env),
    };
    let served = ask_server(
        env,
        agent,
        input.session_id.clone(),
        Point::Initial(prompt.clone()),
        Autostart::Yes,
        started,
    );
    match served {
        Ok(context) => print(&hook_io::render(agent, &input.event_name, &context)),
        Err(error) => {
            log(env, agent, &format!("{error}; recalling in this process"));
            let mut resolved = layout::resolve(layout, &prompt.cwd, env)?;
            for ignored in &resolved.ignored {
                log(env, agent, &format!("ignored: {ignored}"));
            }
            // The server leaves an agent's own recall its roots, and says so once in its log;
            // here it is done silently, as it would be on every prompt.
            agent_hooks::qwen_code::leave_own_recall(agent, &mut resolved, env);
            let roots = resolved.recall_roots(env.memrecall_home().as_deref());
            if roots.project.is_none() && roots.user.is_none() {
                return print(hook_io::nothing(agent));
            }
            recall_here(
                program,
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

/// The point after the prompt an event is, if any: a tool result (with the memories a memory
/// tool showed the model), the turn's end or the session's end.
fn later_point(
    event: &HookEvent,
    env: &Environment,
    agent: Agent,
    session: Option<&str>,
) -> Option<Point> {
    match event {
        // A continuation repeating the prompt of a turn a hook recalled in its own process (no
        // server held it): the tool-result point, never a second recall of the same documents.
        HookEvent::Prompt {
            query,
            repeat_is_continuation: true,
        } if turn_state::is_open_turn(env, agent, session, query) => {
            Some(Point::ToolResult(ToolResultEvent::default()))
        }
        HookEvent::Prompt { .. } | HookEvent::Other => None,
        HookEvent::ToolResult { fetched } => Some(Point::ToolResult(ToolResultEvent {
            fetched: fetched.clone(),
        })),
        HookEvent::TurnEnd => Some(Point::TurnEnd),
        HookEvent::SessionEnd => Some(Point::SessionEnd),
    }
}

/// The key this process's environment holds for the configuration's HTTP selector, for the
/// server, which may have been started without it.
fn selector_key(program: &dyn Program, env: &Environment) -> Option<crate::protocol::SelectorKey> {
    let options = program.recall_options(env).ok()?;
    let recall_facade::SelectorChoice::Http(http) = options.selector else {
        return None;
    };
    let value = std::env::var(&http.api_key_env)
        .ok()
        .filter(|value| !value.trim().is_empty())?;
    Some(crate::protocol::SelectorKey {
        variable: http.api_key_env,
        value,
    })
}

/// Asks the user's server for the delivery at `point`, starting the server when `autostart`
/// says so; the whole exchange fits in `CONNECT_BUDGET` and `ANSWER_BUDGET`.
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
        Response::Delivery(answer) => {
            for notice in &answer.notices {
                log(env, agent, &format!("server: {notice}"));
            }
            // The server cuts its answer to the budget; whatever listens there, the hook never
            // prints more than the agent takes.
            Ok(recall_facade::fit_context(
                &answer.context,
                agent_hooks::hook_io::MAX_CONTEXT_UTF16,
            ))
        }
        other => Err(crate::client::AnswerError::Unexpected {
            request: "an event",
            answer: Box::new(other),
        }
        .into()),
    }
}

/// The recall of one prompt in this process, when no server answers: nothing outlives the
/// call, so the tool-result point of this turn has nothing to deliver.
fn recall_here(
    program: &dyn Program,
    agent: Agent,
    env: &Environment,
    event_name: &str,
    session: Option<&str>,
    prompt: PromptEvent,
    roots: layout::RecallRoots,
) -> Result<(), HookError> {
    let PromptEvent {
        query,
        repeat_is_continuation,
        ..
    } = prompt;
    if repeat_is_continuation {
        turn_state::open_turn(env, agent, session, &query);
    }
    let options = program.recall_options(env).unwrap_or_else(|error| {
        log(
            env,
            agent,
            &format!("{error}; recalling without a selector"),
        );
        RecallOptions::default()
    });

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(HookError::Runtime)?;
    let home = env.memrecall_home();
    let telemetry = program.telemetry(home.as_deref());
    let mut config = OnceConfig::new(roots.memory_roots());
    config.catalogs = roots.catalogs;
    config.telemetry = Arc::clone(&telemetry.sink);
    config.options = options;
    config.options.context_budget = agent_hooks::context::budget();
    let mut once = match runtime.block_on(recall_once(config, &query)) {
        Ok(once) => once,
        Err(error) => {
            runtime.shutdown_timeout(Duration::ZERO);
            return Err(error.into());
        }
    };
    let context = once
        .initial
        .delivered()
        .map(|memory| memory.prompt.clone())
        .unwrap_or_default();
    let printed = print(&hook_io::render(agent, event_name, &context));
    let exit_by = tokio::time::Instant::now() + EXIT_GRACE;
    // After printing: the selector (if still thinking) is cancelled and the catalogs this call
    // brought up to date are written, so the next call starts warm.
    once.recall.end_turn();
    for line in crate::server::walk_limits(&once.recall) {
        if told::first_time(env, &line) {
            log(env, agent, &line);
        }
    }
    // The recall recorded its selector failure when it settled; the log says it once per kind.
    let settled = once.recall.latest_recall().and_then(|state| state.settled);
    if let Some(failure) = settled.as_ref().and_then(|s| s.selector_failure.as_ref())
        && told::first_time(env, &failure.kind)
    {
        log(
            env,
            agent,
            &format!(
                "the selector failed ({}): {}{}; the lexical result stood in (said once per kind until config.toml changes)",
                failure.kind,
                failure.message,
                crate::server::note_of(failure)
            ),
        );
    }
    runtime.block_on(once.finish(exit_by));
    runtime.shutdown_timeout(exit_by.saturating_duration_since(tokio::time::Instant::now()));
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

fn print(text: &str) -> Result<(), HookError> {
    if text.is_empty() {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(HookError::Stdout)
}
