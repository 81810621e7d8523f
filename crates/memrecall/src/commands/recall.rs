//! `memrecall recall`: one real turn for a query, with the selector and delivery design from the
//! command line or config.toml, and the telemetry it asks for.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_hooks::Environment;
use clap::{Args, ValueEnum};
use delivery_telemetry::{JsonLinesSink, RecordingSink, TelemetrySink};
use recall_facade::{
    DeliveryDesign, DeliveryRule, HttpSelectorConfig, MemoryRecall, OnceConfig, RecallOptions,
    SelectorChoice, recall_once,
};
use selector::{MockAnswer, MockSelector, MockStep};

use super::roots::{RootArgs, resolve_roots};
use super::{Failure, emit, runtime};
use crate::config::{Config, ConfigSelectorKind};
use crate::output::{RecallOutput, TurnKind};
use crate::stats;

/// The delivery designs the command line may choose.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub(crate) enum DeliveryArg {
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

/// The delivery rules the command line may choose.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum TrimArg {
    /// Documents with evidence beyond uninformative words, trimmed relative to the lead.
    Measured,
    /// The design's whole top five.
    None,
}

impl From<TrimArg> for DeliveryRule {
    fn from(arg: TrimArg) -> Self {
        match arg {
            TrimArg::Measured => Self::SHIPPED,
            TrimArg::None => Self::UNTRIMMED,
        }
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum SelectorKind {
    /// No model: recall settles with the lexical result.
    None,
    /// An OpenAI-compatible chat-completions server (needs --selector-url and --selector-model).
    Http,
    /// A stand-in model that picks nothing after --mock-latency-ms (to watch the timing): what
    /// arrives is the lexical result.
    Mock,
}

#[derive(Debug, Args)]
// Independent command-line switches, as the user types them; the field comments are `--help`
// text, where `[delivery]` names a table of config.toml, not a link.
#[allow(clippy::struct_excessive_bools, rustdoc::broken_intra_doc_links)]
pub(crate) struct RecallArgs {
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
    /// What of the lexical ranking is delivered: `measured` (the measured delivery rule) or
    /// `none` (the design's whole top five) [default: [delivery] trim in
    /// $MEMRECALL_HOME/config.toml, else measured].
    #[arg(long, value_enum)]
    trim: Option<TrimArg>,
    /// Most documents the turn delivers in all, fast and refined together [default: [delivery]
    /// turn_cap in $MEMRECALL_HOME/config.toml, else no cap].
    #[arg(long, value_name = "N")]
    turn_cap: Option<std::num::NonZeroUsize>,
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
    /// Neither read nor write the persistent catalog of each memory root (under the memrecall
    /// home's `catalogs/`).
    #[arg(long)]
    no_catalog: bool,
}

pub(crate) fn run(args: &RecallArgs) -> Result<(), Failure> {
    let recall_roots = resolve_roots(&args.roots)?;
    let roots = recall_roots.memory_roots();
    let (options, used) = recall_options(args)?;
    let recording = Arc::new(RecordingSink::new());
    let sinks = recall_sinks(args.telemetry.as_deref(), &recording)?;
    let turn = if args.tool_using {
        TurnKind::ToolUsing
    } else {
        TurnKind::ToolFree
    };
    let runtime = runtime()?;
    let ran = runtime.block_on(async {
        let mut config = OnceConfig::new(roots.clone());
        config.options = options;
        config.telemetry = Arc::clone(&sinks.all.sink);
        config.catalogs = recall_roots.catalogs.clone().filter(|_| !args.no_catalog);
        let mut once = recall_once(config, &args.query)
            .await
            .map_err(|e| Failure::selector(e.to_string()))?;
        // In text, the initial point is told as it happens: the rest of a tool-using turn can
        // wait on the selector for up to its ceiling.
        let scan_shown = if args.json {
            false
        } else {
            let state = once.recall.latest_recall();
            let head = RecallOutput::build(
                &args.query,
                turn,
                once.recall.design(),
                &roots,
                &once.initial,
                None,
                &recall_facade::Delivery::Idle,
                state.as_ref(),
                &[],
            );
            emit(&head.head_text(args.prompt))?;
            head.has_scan()
        };
        let tool_result = match turn {
            TurnKind::ToolFree => {
                used.wait_to_tell(&once.recall).await;
                None
            }
            TurnKind::ToolUsing => {
                // The tool call is modelled as lasting until the recall settles (bounded by the
                // selector ceiling), the moment its result would arrive.
                once.recall
                    .wait_settled(selector::SELECTOR_CEILING + Duration::from_secs(1))
                    .await;
                Some(once.recall.after_tool_result())
            }
        };
        let end = once.recall.end_turn();
        let state = once.recall.latest_recall();
        let note = used.note(state.as_ref().and_then(|s| s.settled.as_deref()));
        let output = RecallOutput::build(
            &args.query,
            turn,
            once.recall.design(),
            &roots,
            &once.initial,
            tool_result.as_ref(),
            &end,
            state.as_ref(),
            &recording.events(),
        )
        .with_selector_note(note);
        Ok::<_, Failure>((once, output, scan_shown))
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
    if let Some(once) = recall {
        // A catalog that cannot be written (a read-only tree) is not the user's problem: recall
        // works without it, and the next run tries again; no warning on every run.
        runtime.block_on(once.finish(deadline));
    }
    runtime.shutdown_timeout(deadline.saturating_duration_since(tokio::time::Instant::now()));
    printed.and(check_telemetry(&sinks))
}

/// How long the command waits, after printing, for background work to finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The delivery design and rule: `--delivery` and `--trim`, else `[delivery]` in config.toml, else
/// fast-path and the measured rule.
/// The options of this recall: each flag given, else `config.toml`'s choice (read only when a
/// flag is missing), else the default.
fn recall_options(args: &RecallArgs) -> Result<(RecallOptions, SelectorUsed), Failure> {
    let selector_flags_suffice =
        matches!(args.selector, Some(SelectorKind::None | SelectorKind::Mock))
            || (args.selector_url.is_some()
                && args.selector_model.is_some()
                && args.api_key_env.is_some());
    let delivery_flags_suffice =
        args.delivery.is_some() && args.trim.is_some() && args.turn_cap.is_some();
    let config = if selector_flags_suffice && delivery_flags_suffice {
        Config::default()
    } else {
        match Environment::from_process().memrecall_home() {
            Some(home) => Config::load(&home).map_err(|e| Failure::selector(e.to_string()))?,
            None => Config::default(),
        }
    };
    let (selector, used) = selector_choice(args, &config)?;
    let mut options = RecallOptions::from(config);
    options.selector = selector;
    if let Some(design) = args.delivery {
        options.design = design.into();
    }
    if let Some(trim) = args.trim {
        options.rule = trim.into();
    }
    if let Some(cap) = args.turn_cap {
        options.turn_cap = Some(cap);
    }
    Ok((options, used))
}

/// The note for a selector whose answer came after the turn ended.
const TURN_ENDED_FIRST: &str =
    "the turn ended before the selector answered; its answer was not used";

/// How long a tool-free recall waits, after its initial point, for the HTTP selector to answer
/// or fail, so that the output can say which.
const TOOL_FREE_SELECTOR_WAIT: Duration = Duration::from_secs(2);

/// Which selector a recall asked, for what its output says about it.
enum SelectorUsed {
    None,
    Mock { latency_ms: u64 },
    Http,
}

impl SelectorUsed {
    /// A tool-free turn has no later point to deliver the HTTP selector's answer at, but what
    /// became of it (its pick or its failure) is worth a moment's wait to say.
    async fn wait_to_tell(&self, recall: &MemoryRecall) {
        if matches!(self, Self::Http) {
            recall.wait_settled(TOOL_FREE_SELECTOR_WAIT).await;
        }
    }

    /// What the text output should say about the selector besides a failure (which it says
    /// on its own): why it was not asked or not heard, or what a stand-in does.
    fn note(&self, settled: Option<&recall_facade::SettledRecall>) -> Option<String> {
        let mut notes = Vec::new();
        match self {
            SelectorUsed::None => return None,
            SelectorUsed::Mock { latency_ms } => notes.push(format!(
                "the mock selector stands in for a model and picks nothing unless scripted: it answers with no memory after {latency_ms} ms, so what arrives is the lexical result"
            )),
            // The selector's own word on its failure (an unset key variable, say).
            SelectorUsed::Http => notes.extend(
                settled
                    .and_then(|s| s.selector_failure.as_ref())
                    .and_then(|failure| failure.note.clone()),
            ),
        }
        let cancelled = settled
            .is_some_and(|s| matches!(s.selector_error, Some(selector::SelectorError::Cancelled)));
        match settled {
            None => notes.push(TURN_ENDED_FIRST.to_owned()),
            Some(_) if cancelled => notes.push(TURN_ENDED_FIRST.to_owned()),
            Some(settled)
                if settled.selector_error.is_none() && settled.timings.selector.is_none() =>
            {
                notes.push(
                    "the selector was not asked: no memory matched the query, so there was nothing to choose from"
                        .to_owned(),
                );
            }
            Some(_) => {}
        }
        (!notes.is_empty()).then(|| notes.join("; "))
    }
}

/// The selector: the command line's flags, each falling back to `[selector]` in config.toml.
fn selector_choice(
    args: &RecallArgs,
    config: &Config,
) -> Result<(SelectorChoice, SelectorUsed), Failure> {
    let kind = args.selector.unwrap_or(match config.selector.kind {
        ConfigSelectorKind::None => SelectorKind::None,
        ConfigSelectorKind::Http => SelectorKind::Http,
    });
    match kind {
        SelectorKind::None => Ok((SelectorChoice::None, SelectorUsed::None)),
        SelectorKind::Mock => {
            let mock = MockSelector::new();
            mock.push(MockStep {
                after: Duration::from_millis(args.mock_latency_ms),
                answer: MockAnswer::Ids(Vec::new()),
            });
            Ok((
                SelectorChoice::Custom(Arc::new(mock)),
                SelectorUsed::Mock {
                    latency_ms: args.mock_latency_ms,
                },
            ))
        }
        SelectorKind::Http => {
            let table = &config.selector;
            let url = args
                .selector_url
                .clone()
                .or_else(|| table.url.clone())
                .ok_or_else(|| {
                    Failure::selector(
                        "--selector http needs --selector-url (and --selector-model)".into(),
                    )
                })?;
            let model = args
                .selector_model
                .clone()
                .or_else(|| table.model.clone())
                .ok_or_else(|| {
                    Failure::selector("--selector http needs --selector-model".into())
                })?;
            let mut http = HttpSelectorConfig::new(url, model);
            if let Some(var) = args
                .api_key_env
                .clone()
                .or_else(|| table.api_key_env.clone())
            {
                http.api_key_env = var;
            }
            Ok((SelectorChoice::Http(http), SelectorUsed::Http))
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
    let home = Environment::from_process().memrecall_home();
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
