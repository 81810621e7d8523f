//! `memrecall`: see what a memory tree would deliver for a query, and why.
//!
//! Exit codes: 0 success; 1 unexpected failure; 2 bad command line; 3 a memory root given on the
//! command line is missing or unreadable; 4 the selector is misconfigured (for example
//! `--selector http` without `--selector-url`). A selector that is configured but unreachable
//! is not an error: recall falls back to the lexical result and the output says so.

#![forbid(unsafe_code)]
// Doc comments on the argument types are `--help` text, read in a terminal, not Markdown.
#![allow(clippy::doc_markdown)]
#![allow(
    rustdoc::invalid_html_tags,
    rustdoc::bare_urls,
    rustdoc::broken_intra_doc_links
)]

// Recall allocates many small strings on tokio and rayon threads at once; glibc's allocator
// spent about a fifth of a 10,000-topic recall in malloc and free, mimalloc halves the recall.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod agent;
mod config;
mod hook;
mod mcp;
mod output;
mod serve;
mod stats;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand, ValueEnum};
use delivery_telemetry::{JsonLinesSink, RecordingSink, TelemetrySink};
use memory_scan::{DocumentCache, MemoryRoots};
use recall_facade::{
    DeliveryDesign, HttpSelectorConfig, MemoryRecall, RecallConfig, SelectorChoice,
};
use selector::{MockAnswer, MockSelector, MockStep};

use crate::agent::{Agent, Environment, Layout, layout, settings};
use crate::config::{Config, ConfigSelectorKind};
use crate::output::{RankRow, RecallOutput, ScanOutput, TurnKind};

/// See what your memory tree would deliver to a coding agent for a query, and why.
///
/// A memory tree is a directory of Markdown topic files with a small frontmatter (name,
/// description, type: user | feedback | project | reference). Recall reads the project root and
/// the user root, ranks topics lexically (any language) and, when a model selector is
/// configured, lets the model refine the choice.
#[derive(Debug, Parser)]
#[command(name = "memrecall", version, about, long_about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run one real turn for a query and show what is delivered at the initial point and at the
    /// tool-result point, with strategy, phase and timings.
    Recall(RecallArgs),
    /// Show the deterministic ranking with each field's score contribution.
    Rank(RankArgs),
    /// List the documents found and the files skipped (with reasons), and the scan time.
    Scan(ScanArgs),
    /// Show where a layout's project and user memory roots are for a directory, and why.
    Roots(RootsArgs),
    /// Run as an agent's hook (event JSON on stdin, context on stdout), or install it.
    Hook(HookArgs),
    /// Serve recall, listing, ranking explanations and saving as a Model Context Protocol
    /// server on stdin and stdout, for agents that look memory up themselves.
    Mcp(mcp::McpArgs),
    /// Summarise the recorded telemetry: delivery rate by phase, strategy and delivery point,
    /// discard reasons, and latency percentiles against the 100 ms budget.
    Stats(stats::StatsArgs),
    /// Keep each agent session's recall alive between its prompt and tool events: the per-user
    /// server `memrecall hook` talks to (started by the hook when needed).
    Serve(ServeArgs),
    /// Stop the user's server.
    Stop,
    /// Show the user's server: sessions, roots, uptime, memory, recalls served.
    Status(StatusArgs),
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// Exit after this long without a request [default: `serve.idle_exit` in config.toml, else
    /// 30m].
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    idle_exit: Option<std::time::Duration>,
}

#[derive(Debug, Args)]
struct StatusArgs {
    /// Print the server's status as one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct RootsArgs {
    /// Whose memory layout to resolve.
    #[arg(long, value_enum, default_value_t = Layout::Memrecall)]
    layout: Layout,
    /// The working directory to resolve for [default: the current directory].
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
struct HookArgs {
    #[command(subcommand)]
    action: Option<HookAction>,
    /// The agent running the hook: it decides the event names and the output shape.
    #[arg(long, value_enum, required = true)]
    agent: Option<Agent>,
    /// Whose memory layout to read [default: the agent's own where it keeps memory (Claude
    /// Code, Qwen Code), memrecall's otherwise].
    #[arg(long, value_enum)]
    layout: Option<Layout>,
}

#[derive(Debug, Subcommand)]
enum HookAction {
    /// Print the settings snippet that runs the hook at each prompt, tool result and turn end;
    /// --write merges it into the agent's settings file.
    Install(InstallArgs),
    /// Remove the entry `install --write` added from the agent's settings file.
    Uninstall(InstallArgs),
}

#[derive(Debug, Args)]
struct InstallArgs {
    /// The agent whose settings to change.
    #[arg(long, value_enum)]
    agent: Agent,
    /// Use the project's settings file in DIR instead of the user's.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Change the settings file (a backup of it is kept beside it) instead of printing the
    /// snippet. Only for install; uninstall always writes.
    #[arg(long)]
    write: bool,
}

#[derive(Debug, Args)]
struct RootArgs {
    /// Project memory root [default: $MEMRECALL_HOME/projects/<this directory>/memory].
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// User memory root [default: $MEMRECALL_HOME/memories; MEMRECALL_HOME defaults to ~/.memrecall].
    #[arg(long, value_name = "DIR")]
    user: Option<PathBuf>,
    /// Whose memory layout gives the default roots for this directory (see `memrecall roots`).
    #[arg(long, value_enum, default_value_t = Layout::Memrecall)]
    layout: Layout,
}

/// The delivery designs the command line may choose.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum DeliveryArg {
    /// The fast result ends the first prompt's wait as soon as it is published.
    FastPath,
    /// Only a confident fast result ends the wait early; a weak one is held for the selector
    /// until the 100 ms ceiling.
    Gated,
}

impl From<DeliveryArg> for DeliveryDesign {
    fn from(arg: DeliveryArg) -> Self {
        match arg {
            DeliveryArg::FastPath => Self::FastPath,
            DeliveryArg::Gated => Self::Gated,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SelectorKind {
    /// No model: recall settles with the lexical result.
    None,
    /// An OpenAI-compatible chat-completions server (needs --selector-url and --selector-model).
    Http,
    /// A stand-in model that picks nothing after --mock-latency-ms (to watch the timing).
    Mock,
}

#[derive(Debug, Args)]
#[allow(clippy::struct_excessive_bools)] // independent command-line switches, as the user types them
struct RecallArgs {
    /// What the user asked.
    query: String,
    #[command(flatten)]
    roots: RootArgs,
    /// Which selector refines the lexical result [default: [selector] in
    /// $MEMRECALL_HOME/config.toml, else none].
    #[arg(long, value_enum)]
    selector: Option<SelectorKind>,
    /// Base URL of the OpenAI-compatible server, e.g. https://api.openai.com or http://127.0.0.1:8080.
    #[arg(long, value_name = "URL")]
    selector_url: Option<String>,
    /// Model name sent to the server.
    #[arg(long, value_name = "NAME")]
    selector_model: Option<String>,
    /// Environment variable holding the API key (none is sent when it is unset) [default:
    /// api_key_env in config.toml, else OPENAI_API_KEY].
    #[arg(long, value_name = "VAR")]
    api_key_env: Option<String>,
    /// The delivery design [default: [delivery] design in $MEMRECALL_HOME/config.toml, else
    /// fast-path].
    #[arg(long, value_enum)]
    delivery: Option<DeliveryArg>,
    /// Latency of the mock selector, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 250)]
    mock_latency_ms: u64,
    /// The turn ends without a tool call, so only the initial point can deliver (default).
    #[arg(long, conflicts_with = "tool_using")]
    tool_free: bool,
    /// The turn calls a tool; the tool result arrives once the recall settles.
    #[arg(long)]
    tool_using: bool,
    /// Print the prompt text each delivery puts in front of the model.
    #[arg(long)]
    prompt: bool,
    /// Also write telemetry events, e.g. `jsonl:events.jsonl`.
    #[arg(long, value_name = "jsonl:PATH")]
    telemetry: Option<String>,
    /// Print machine-readable JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Neither read nor write the persistent catalog under each memory root (`.memrecall/`).
    #[arg(long)]
    no_catalog: bool,
}

#[derive(Debug, Args)]
struct RankArgs {
    /// What the user asked.
    query: String,
    #[command(flatten)]
    roots: RootArgs,
    /// Rank with the frozen pre-change scorer instead of the shipped one.
    #[arg(long)]
    frozen: bool,
    /// How many documents to show; 0 shows every match.
    #[arg(long, default_value_t = 5)]
    limit: usize,
    /// Print machine-readable JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ScanArgs {
    #[command(flatten)]
    roots: RootArgs,
    /// Print machine-readable JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// A failure with its documented exit code.
#[derive(Debug)]
struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn root(message: String) -> Self {
        Self { code: 3, message }
    }
    fn selector(message: String) -> Self {
        Self { code: 4, message }
    }
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Self {
        Self {
            code: 1,
            message: format!("{error:#}"),
        }
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) if is_hook_run() && error.use_stderr() => {
            // A hook entry with a bad command line must not exit 2 (that blocks the prompt).
            hook::log_bad_command_line(&error.to_string());
            return ExitCode::SUCCESS;
        }
        Err(error) => error.exit(),
    };
    let result = match cli.command {
        Command::Recall(args) => run_recall(&args),
        Command::Rank(args) => run_rank(&args),
        Command::Scan(args) => run_scan(&args),
        Command::Roots(args) => run_roots(&args),
        Command::Mcp(args) => mcp::run(&args),
        Command::Stats(args) => stats::run(&args),
        Command::Serve(args) => run_serve(&args),
        Command::Stop => run_stop(),
        Command::Status(args) => run_status(&args),
        Command::Hook(HookArgs {
            action: Some(action),
            ..
        }) => run_hook_settings(&action),
        Command::Hook(HookArgs {
            action: None,
            agent,
            layout,
        }) => {
            if let Some(agent) = agent {
                hook::run(agent, layout);
            }
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("memrecall: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

fn run_serve(args: &ServeArgs) -> Result<(), Failure> {
    let options = serve::server::ServeOptions {
        idle_exit: args.idle_exit,
    };
    match serve::server::run(options, &agent::Environment::from_process()) {
        // Two hooks racing to start a server start two; the one without the lock leaves quietly.
        Err(serve::server::ServeError::AlreadyRunning) => Ok(()),
        other => other.map_err(|e| Failure::from(anyhow::Error::new(e))),
    }
}

/// How long `stop` and `status` wait for the server.
const CONTROL_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

fn control(
    request: serve::protocol::Request,
) -> Result<Option<serve::protocol::Response>, Failure> {
    let env = agent::Environment::from_process();
    let paths = serve::ServerPaths::from_env(&env).ok_or_else(|| {
        Failure::from(anyhow::anyhow!(
            "cannot find a run directory: set XDG_RUNTIME_DIR, MEMRECALL_HOME or HOME"
        ))
    })?;
    let budget = serve::client::Budget {
        connect_by: std::time::Instant::now() + CONTROL_BUDGET,
        answer_within: CONTROL_BUDGET,
    };
    match serve::client::exchange(&paths, request, serve::client::Autostart::No, budget) {
        Ok(response) => Ok(Some(response)),
        Err(serve::client::ClientError::NotRunning) => Ok(None),
        Err(error) => Err(Failure::from(anyhow::Error::new(error))),
    }
}

fn run_stop() -> Result<(), Failure> {
    let Some(response) = control(serve::protocol::Request::Stop)? else {
        println!("no server is running");
        return Ok(());
    };
    let serve::protocol::Response::Stopping { pid } = response else {
        return Err(Failure::from(anyhow::anyhow!(
            "unexpected answer to stop: {response:?}"
        )));
    };
    // The lock is released when the process exits: wait for that, so that a `stop` that
    // returned leaves no server behind.
    let env = agent::Environment::from_process();
    if let Some(paths) = serve::ServerPaths::from_env(&env) {
        let deadline = std::time::Instant::now() + CONTROL_BUDGET;
        while serve::client::server_holds_lock(&paths) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    println!("stopped the server (pid {pid})");
    Ok(())
}

fn run_status(args: &StatusArgs) -> Result<(), Failure> {
    let Some(response) = control(serve::protocol::Request::Status)? else {
        if args.json {
            println!("null");
        } else {
            println!("no server is running");
        }
        return Ok(());
    };
    let serve::protocol::Response::Status(status) = response else {
        return Err(Failure::from(anyhow::anyhow!(
            "unexpected answer to status: {response:?}"
        )));
    };
    if args.json {
        let text = serde_json::to_string(&status).map_err(anyhow::Error::new)?;
        println!("{text}");
        return Ok(());
    }
    let kib = |v: Option<u64>| {
        v.map_or_else(
            || "unknown".to_owned(),
            |k| format!("{:.1} MiB", k as f64 / 1024.0),
        )
    };
    println!("server: pid {} · version {}", status.pid, status.version);
    println!(
        "uptime: {} · exits after {} idle",
        humantime::format_duration(whole_seconds(status.uptime_s)),
        humantime::format_duration(whole_seconds(status.idle_exit_s))
    );
    println!(
        "sessions: {} ({} with a recall pending)",
        status.sessions, status.pending_recalls
    );
    println!(
        "recalls: {} served, {} ended",
        status.recalls_served, status.recalls_ended
    );
    println!(
        "memory: {} resident, {} peak",
        kib(status.rss_kib),
        kib(status.peak_rss_kib)
    );
    println!("watch: {}", status.watch);
    if status.roots.is_empty() {
        println!("roots: none yet");
    }
    for root in &status.roots {
        println!("root: {}", root.display());
    }
    Ok(())
}

/// `seconds` rounded down to whole seconds (zero when not a duration).
fn whole_seconds(seconds: f64) -> std::time::Duration {
    std::time::Duration::from_secs(
        std::time::Duration::try_from_secs_f64(seconds)
            .unwrap_or_default()
            .as_secs(),
    )
}

/// Whether the command line asks to run a hook (not to install or uninstall one).
fn is_hook_run() -> bool {
    let args: Vec<String> = std::env::args().skip(1).take(2).collect();
    args.first().is_some_and(|a| a == "hook")
        && !args
            .get(1)
            .is_some_and(|a| matches!(a.as_str(), "install" | "uninstall" | "help"))
}

fn current_dir() -> Result<PathBuf, Failure> {
    std::env::current_dir()
        .map_err(|e| Failure::from(anyhow::anyhow!("cannot read the current directory: {e}")))
}

/// Resolves the roots: explicit ones must exist and be directories; defaults (from the layout)
/// may be missing (an empty scope).
fn resolve_roots(args: &RootArgs) -> Result<MemoryRoots, Failure> {
    let defaults = if args.project.is_none() || args.user.is_none() {
        let resolved = layout::resolve(args.layout, &current_dir()?, &Environment::from_process())
            .map_err(|e| Failure::root(e.to_string()))?;
        Some(MemoryRoots {
            project: resolved.project.path,
            user: resolved.user.path,
        })
    } else {
        None
    };
    let pick = |given: &Option<PathBuf>, default: Option<PathBuf>, scope: &str| match given {
        Some(dir) => check_root(dir, scope).map(Some),
        None => Ok(default),
    };
    Ok(MemoryRoots {
        project: pick(
            &args.project,
            defaults.as_ref().and_then(|d| d.project.clone()),
            "project",
        )?,
        user: pick(&args.user, defaults.and_then(|d| d.user), "user")?,
    })
}

fn check_root(dir: &Path, scope: &str) -> Result<PathBuf, Failure> {
    let absolute = std::path::absolute(dir)
        .map_err(|e| Failure::root(format!("{scope} root {}: {e}", dir.display())))?;
    match std::fs::read_dir(&absolute) {
        Ok(_) => Ok(absolute),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Failure::root(format!(
            "{scope} root {} does not exist (pass an existing directory with --{scope})",
            dir.display()
        ))),
        Err(e) => Err(Failure::root(format!(
            "{scope} root {} cannot be read: {e}",
            dir.display()
        ))),
    }
}

/// The delivery design: `--delivery`, else `[delivery] design` in config.toml, else fast-path.
fn delivery_design(args: &RecallArgs) -> Result<DeliveryDesign, Failure> {
    if let Some(arg) = args.delivery {
        return Ok(arg.into());
    }
    let config = match recall_facade::memory_home() {
        Ok(home) => Config::load(&home).map_err(|e| Failure::selector(e.to_string()))?,
        Err(_) => Config::default(),
    };
    Ok(config.delivery.design.into())
}

/// The selector: the command line's flags, each falling back to `[selector]` in config.toml.
fn selector_choice(args: &RecallArgs) -> Result<SelectorChoice, Failure> {
    let needs_config = !matches!(args.selector, Some(SelectorKind::None | SelectorKind::Mock))
        && (args.selector_url.is_none()
            || args.selector_model.is_none()
            || args.api_key_env.is_none());
    let config = if needs_config {
        match recall_facade::memory_home() {
            Ok(home) => Config::load(&home).map_err(|e| Failure::selector(e.to_string()))?,
            Err(_) => Config::default(),
        }
    } else {
        Config::default()
    };
    let kind = args.selector.unwrap_or(match config.selector.kind {
        ConfigSelectorKind::None => SelectorKind::None,
        ConfigSelectorKind::Http => SelectorKind::Http,
    });
    match kind {
        SelectorKind::None => Ok(SelectorChoice::None),
        SelectorKind::Mock => {
            let mock = MockSelector::new();
            mock.push(MockStep {
                after: Duration::from_millis(args.mock_latency_ms),
                answer: MockAnswer::Ids(Vec::new()),
            });
            Ok(SelectorChoice::Custom(Arc::new(mock)))
        }
        SelectorKind::Http => {
            let table = config.selector;
            let url = args.selector_url.clone().or(table.url).ok_or_else(|| {
                Failure::selector(
                    "--selector http needs --selector-url (and --selector-model)".into(),
                )
            })?;
            let model = args.selector_model.clone().or(table.model).ok_or_else(|| {
                Failure::selector("--selector http needs --selector-model".into())
            })?;
            let mut http = HttpSelectorConfig::new(url, model);
            if let Some(var) = args.api_key_env.clone().or(table.api_key_env) {
                http.api_key_env = var;
            }
            Ok(SelectorChoice::Http(http))
        }
    }
}

/// A turn's telemetry: every sink, the JSON-lines file `--telemetry` asked for (if any) and the
/// history under `$MEMRECALL_HOME/telemetry` (if recorded).
struct RecallSinks {
    all: stats::TelemetrySinks,
    file: Option<Arc<JsonLinesSink>>,
}

/// The turn's telemetry (see [`stats::telemetry_sink`]): `recording`, and the JSON-lines file
/// `spec` names, if any (also returned, so that events it could not write are reported before
/// the command exits).
fn recall_sinks(
    spec: Option<&str>,
    recording: &Arc<RecordingSink>,
) -> Result<RecallSinks, Failure> {
    let mut also: Vec<Arc<dyn TelemetrySink>> =
        vec![Arc::clone(recording) as Arc<dyn TelemetrySink>];
    let file = match spec {
        None => None,
        Some(spec) => {
            let path = spec.strip_prefix("jsonl:").ok_or_else(|| Failure {
                code: 2,
                message: format!("--telemetry must look like jsonl:PATH, got {spec:?}"),
            })?;
            // A path that cannot be created is a mistake on the command line, like a malformed
            // one.
            let file = JsonLinesSink::create(Path::new(path)).map_err(|e| Failure {
                code: 2,
                message: format!("cannot open telemetry file {path}: {e}"),
            })?;
            let file = Arc::new(file);
            also.push(Arc::clone(&file) as Arc<dyn TelemetrySink>);
            Some(file)
        }
    };
    let home = recall_facade::memory_home().ok();
    Ok(RecallSinks {
        all: stats::telemetry_sink(home.as_deref(), also),
        file,
    })
}

/// A failure when `file` could not write every event: telemetry a user asked for is never lost
/// silently.
fn check_telemetry(sinks: &RecallSinks) -> Result<(), Failure> {
    // The history was not asked for on this command line: losing it is worth a warning only.
    if let Some(history) = &sinks.all.history
        && let Some(dropped) = history.dropped()
    {
        eprintln!(
            "memrecall: warning: {} telemetry event(s) could not be recorded in {}: {}",
            dropped.count,
            history.dir().display(),
            dropped.first_error
        );
    }
    match sinks.file.as_deref().and_then(JsonLinesSink::dropped) {
        None => Ok(()),
        Some(dropped) => Err(Failure::from(anyhow::anyhow!(
            "{} telemetry event(s) could not be written: {}",
            dropped.count,
            dropped.first_error
        ))),
    }
}

/// Writes to stdout; a reader that went away (`memrecall … | head`) ends the output quietly
/// instead of failing.
fn emit(text: &str) -> Result<(), Failure> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(Failure::from(anyhow::anyhow!("cannot write output: {e}")))
        }
        _ => Ok(()),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::from(anyhow::anyhow!("cannot start the async runtime: {e}")))
}

fn run_recall(args: &RecallArgs) -> Result<(), Failure> {
    let roots = resolve_roots(&args.roots)?;
    let selector = selector_choice(args)?;
    let design = delivery_design(args)?;
    let recording = Arc::new(RecordingSink::new());
    let sinks = recall_sinks(args.telemetry.as_deref(), &recording)?;
    let turn = if args.tool_using {
        TurnKind::ToolUsing
    } else {
        TurnKind::ToolFree
    };
    let runtime = runtime()?;
    let ran = runtime.block_on(async {
        let mut config = RecallConfig::with_roots(roots.project.clone(), roots.user.clone());
        config.selector = selector;
        config.telemetry = Arc::clone(&sinks.all.sink);
        config.catalog = !args.no_catalog;
        config.delivery = design;
        let mut recall = MemoryRecall::new(config).map_err(|e| Failure::selector(e.to_string()))?;
        recall.begin_turn(&args.query, &[]);
        let initial = recall.initial().await;
        // In text, the initial point is told as it happens: the rest of a tool-using turn can
        // wait on the selector for up to its ceiling.
        let scan_shown = if args.json {
            false
        } else {
            let state = recall.session().latest_recall();
            let head = RecallOutput::build(
                &args.query,
                turn,
                recall.design(),
                &roots,
                &initial,
                None,
                &recall_facade::Delivery::Idle,
                state.as_ref(),
                &[],
            );
            emit(&head.head_text(args.prompt))?;
            head.has_scan()
        };
        let tool_result = match turn {
            TurnKind::ToolFree => None,
            TurnKind::ToolUsing => {
                // The tool call is modelled as lasting until the recall settles (bounded by the
                // selector ceiling), the moment its result would arrive.
                recall
                    .session()
                    .wait_settled(selector::SELECTOR_CEILING + Duration::from_secs(1))
                    .await;
                Some(recall.after_tool_result())
            }
        };
        let end = recall.end_turn();
        let state = recall.session().latest_recall();
        let output = RecallOutput::build(
            &args.query,
            turn,
            recall.design(),
            &roots,
            &initial,
            tool_result.as_ref(),
            &end,
            state.as_ref(),
            &recording.events(),
        );
        Ok::<_, Failure>((recall, output, scan_shown))
    });
    let (recall, printed) = match ran {
        Ok((recall, output, scan_shown)) => {
            let printed = if args.json {
                output.to_json().and_then(|json| emit(&format!("{json}\n")))
            } else {
                emit(&output.tail_text(args.prompt, scan_shown))
            };
            (Some(recall), printed)
        }
        Err(failure) => (None, Err(failure)),
    };
    // After printing, so the answer is not held up: the catalogs this recall brought up to date
    // are written (background work not yet started when the runtime shuts down would never run).
    // A scan or write stuck in the file system must not keep the process from exiting, whether
    // the command succeeded or not.
    let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
    if let Some(recall) = recall {
        runtime.block_on(async {
            // A catalog that cannot be written (a read-only tree) is not the user's problem:
            // recall works without it, and the next run tries again; no warning on every run.
            let _ = tokio::time::timeout_at(deadline, recall.write_catalogs()).await;
            recall.shutdown();
        });
    }
    runtime.shutdown_timeout(deadline.saturating_duration_since(tokio::time::Instant::now()));
    printed.and(check_telemetry(&sinks))
}

/// How long the command waits, after printing, for background work to finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

fn run_rank(args: &RankArgs) -> Result<(), Failure> {
    let roots = resolve_roots(&args.roots)?;
    let started = Instant::now();
    let scan = DocumentCache::new()
        .scan_recall(&roots)
        .map_err(|e| Failure::root(e.to_string()))?;
    let scan_time = started.elapsed();
    let rows = RankRow::rank(&args.query, &scan.documents, args.frozen);
    let limit = if args.limit == 0 {
        usize::MAX
    } else {
        args.limit
    };
    let rows: Vec<RankRow> = rows.into_iter().take(limit).collect();
    if args.json {
        let value = serde_json::json!({
            "query": args.query,
            "scorer": if args.frozen { "frozen" } else { "shipped" },
            "documents": scan.documents.len(),
            "scan_ms": scan_time.as_secs_f64() * 1_000.0,
            "ranked": rows,
        });
        emit(&format!(
            "{}\n",
            serde_json::to_string_pretty(&value).map_err(anyhow::Error::from)?
        ))?;
    } else {
        emit(&RankRow::to_text(
            &args.query,
            &rows,
            scan.documents.len(),
            args.frozen,
        ))?;
    }
    Ok(())
}

fn run_scan(args: &ScanArgs) -> Result<(), Failure> {
    let roots = resolve_roots(&args.roots)?;
    let started = Instant::now();
    let scan = DocumentCache::new()
        .scan_recall(&roots)
        .map_err(|e| Failure::root(e.to_string()))?;
    let output = ScanOutput::new(&roots, &scan, started.elapsed());
    if args.json {
        emit(&format!("{}\n", output.to_json()?))?;
    } else {
        emit(&output.to_text())?;
    }
    Ok(())
}

fn run_roots(args: &RootsArgs) -> Result<(), Failure> {
    let cwd = match &args.cwd {
        Some(dir) => dir.clone(),
        None => current_dir()?,
    };
    let roots = layout::resolve(args.layout, &cwd, &Environment::from_process())
        .map_err(|e| Failure::root(e.to_string()))?;
    let show = |choice: &layout::RootChoice| match &choice.path {
        Some(path) if path.is_dir() => format!("{}\n  {}", path.display(), choice.why),
        Some(path) => format!("{} (does not exist yet)\n  {}", path.display(), choice.why),
        None => format!("none\n  {}", choice.why),
    };
    emit(&format!(
        "layout: {}\ncwd: {}\nproject: {}\nuser: {}\n",
        roots.layout.as_str(),
        roots.cwd.display(),
        show(&roots.project),
        show(&roots.user),
    ))
}

fn run_hook_settings(action: &HookAction) -> Result<(), Failure> {
    let env = Environment::from_process();
    let (args, installing) = match action {
        HookAction::Install(args) => (args, true),
        HookAction::Uninstall(args) => (args, false),
    };
    let settings_error = |e: settings::SettingsError| Failure::from(anyhow::Error::from(e));
    let path = settings::settings_path(args.agent, args.project.as_deref(), &env)
        .map_err(settings_error)?;
    if installing && !args.write {
        let snippet = serde_json::to_string_pretty(&settings::snippet(args.agent))
            .map_err(anyhow::Error::from)?;
        emit(&format!("{snippet}\n"))?;
        eprintln!(
            "memrecall: merge this into {} (or run again with --write)",
            path.display()
        );
        return Ok(());
    }
    let (mut current, existed) = settings::read(&path).map_err(settings_error)?;
    let changed = if installing {
        settings::merge(&mut current, args.agent, &path).map_err(settings_error)?
    } else {
        settings::remove(&mut current, args.agent)
    };
    if changed {
        settings::write(&path, &current, existed).map_err(settings_error)?;
    }
    let message = match (installing, changed) {
        (true, true) => format!("added the memrecall hook to {}", path.display()),
        (true, false) => format!("{} already runs the memrecall hook", path.display()),
        (false, true) => format!("removed the memrecall hook from {}", path.display()),
        (false, false) => format!("{} has no memrecall hook to remove", path.display()),
    };
    let backup = if changed && existed {
        format!(
            " (the previous file is in {})",
            settings::backup_path(&path).display()
        )
    } else {
        String::new()
    };
    emit(&format!("{message}{backup}\n"))
}
