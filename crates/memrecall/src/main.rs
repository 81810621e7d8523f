//! `memrecall`: see what a memory tree would deliver for a query, and why.
//!
//! Exit codes: 0 success; 1 unexpected failure; 2 bad command line; 3 a memory root given on the
//! command line is missing or unreadable; 4 the selector is misconfigured (for example
//! `--selector http` without `--selector-url`). A selector that is configured but unreachable
//! is not an error: recall falls back to the lexical result and the output says so.

// Doc comments on the argument types are `--help` text, read in a terminal, not Markdown.
#![allow(clippy::doc_markdown)]

// Recall allocates many small strings on tokio and rayon threads at once; glibc's allocator
// spent about a fifth of a 10,000-topic recall in malloc and free, mimalloc halves the recall.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod output;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, Parser, Subcommand, ValueEnum};
use delivery_telemetry::{FanOutSink, JsonLinesSink, RecordingSink, TelemetrySink};
use memory_scan::{DocumentCache, MemoryRoots};
use recall_facade::{HttpSelectorConfig, MemoryRecall, RecallConfig, SelectorChoice};
use selector::{MockAnswer, MockSelector, MockStep};

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
}

#[derive(Debug, Args)]
struct RootArgs {
    /// Project memory root [default: $MEMRECALL_HOME/projects/<this directory>/memory].
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// User memory root [default: $MEMRECALL_HOME/memories; MEMRECALL_HOME defaults to ~/.memrecall].
    #[arg(long, value_name = "DIR")]
    user: Option<PathBuf>,
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
    /// Which selector refines the lexical result.
    #[arg(long, value_enum, default_value_t = SelectorKind::None)]
    selector: SelectorKind,
    /// Base URL of the OpenAI-compatible server, e.g. https://api.openai.com or http://127.0.0.1:8080.
    #[arg(long, value_name = "URL")]
    selector_url: Option<String>,
    /// Model name sent to the server.
    #[arg(long, value_name = "NAME")]
    selector_model: Option<String>,
    /// Environment variable holding the API key (none is sent when it is unset).
    #[arg(long, value_name = "VAR", default_value = "OPENAI_API_KEY")]
    api_key_env: String,
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
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Recall(args) => run_recall(&args),
        Command::Rank(args) => run_rank(&args),
        Command::Scan(args) => run_scan(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("memrecall: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

/// Resolves the roots: explicit ones must exist and be directories; defaults may be missing
/// (an empty scope).
fn resolve_roots(args: &RootArgs) -> Result<MemoryRoots, Failure> {
    let defaults = if args.project.is_none() || args.user.is_none() {
        let cwd = std::env::current_dir().map_err(|e| {
            Failure::from(anyhow::anyhow!("cannot read the current directory: {e}"))
        })?;
        Some(recall_facade::default_roots(&cwd).map_err(|e| Failure::root(e.to_string()))?)
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

fn selector_choice(args: &RecallArgs) -> Result<SelectorChoice, Failure> {
    match args.selector {
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
            let url = args.selector_url.clone().ok_or_else(|| {
                Failure::selector(
                    "--selector http needs --selector-url (and --selector-model)".into(),
                )
            })?;
            let model = args.selector_model.clone().ok_or_else(|| {
                Failure::selector("--selector http needs --selector-model".into())
            })?;
            let mut config = HttpSelectorConfig::new(url, model);
            config.api_key_env.clone_from(&args.api_key_env);
            Ok(SelectorChoice::Http(config))
        }
    }
}

/// A turn's telemetry sink, and the JSON-lines file among its sinks, if any.
type Sinks = (Arc<dyn TelemetrySink>, Option<Arc<JsonLinesSink>>);

/// The turn's telemetry sink: `recording`, and the JSON-lines file `spec` names, if any (also
/// returned, so that events it could not write are reported before the command exits).
fn telemetry_sink(spec: Option<&str>, recording: &Arc<RecordingSink>) -> Result<Sinks, Failure> {
    let recording: Arc<dyn TelemetrySink> = Arc::clone(recording) as Arc<dyn TelemetrySink>;
    let Some(spec) = spec else {
        return Ok((recording, None));
    };
    let path = spec.strip_prefix("jsonl:").ok_or_else(|| Failure {
        code: 2,
        message: format!("--telemetry must look like jsonl:PATH, got {spec:?}"),
    })?;
    // A path that cannot be created is a mistake on the command line, like a malformed one.
    let file = JsonLinesSink::create(Path::new(path)).map_err(|e| Failure {
        code: 2,
        message: format!("cannot open telemetry file {path}: {e}"),
    })?;
    let file = Arc::new(file);
    let sinks = FanOutSink(vec![recording, Arc::clone(&file) as Arc<dyn TelemetrySink>]);
    Ok((Arc::new(sinks), Some(file)))
}

/// A failure when `file` could not write every event: telemetry a user asked for is never lost
/// silently.
fn check_telemetry(file: Option<&JsonLinesSink>) -> Result<(), Failure> {
    match file.and_then(JsonLinesSink::dropped) {
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
    let recording = Arc::new(RecordingSink::new());
    let (sink, telemetry_file) = telemetry_sink(args.telemetry.as_deref(), &recording)?;
    let turn = if args.tool_using {
        TurnKind::ToolUsing
    } else {
        TurnKind::ToolFree
    };
    let runtime = runtime()?;
    let ran = runtime.block_on(async {
        let mut config = RecallConfig::with_roots(roots.project.clone(), roots.user.clone());
        config.selector = selector;
        config.telemetry = sink;
        config.catalog = !args.no_catalog;
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
    printed.and(check_telemetry(telemetry_file.as_deref()))
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
