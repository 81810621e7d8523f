//! The recall task: one per user query. Scan, rank, publish the fast result, ask the selector,
//! settle (or fall back, or stop silently when its caller cancels it).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use delivery_telemetry::{
    RecallEvent, SelectorErrorEvent, Strategy, TelemetryEvent, TelemetrySink, emit_recall,
};
use lexical_score::delivery::Tier;
use memory_scan::{MemoryRoots, RecallScanner, ScanReport, ScannedDocument};
use selector::{Selector, SelectorError};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::DeliveryDesign;
use crate::confidence::FastConfidence;

mod candidate_id;
mod rank;
mod select;

pub use candidate_id::candidate_id;
use rank::{documents_at, scan_and_rank};
use select::{Selection, choose};

/// The deterministic result published before the selector is asked: the lexical top two.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FastResult {
    /// At most [`lexical_score::FAST_LIMIT`] documents, best first, shown whole.
    pub documents: Vec<Arc<ScannedDocument>>,
    /// Documents of the lexical top two with weak evidence, shown as one line each
    /// ([`Tiering`](lexical_score::delivery::Tiering)); never more than the limit with
    /// [`FastResult::documents`].
    pub lines: Vec<Arc<ScannedDocument>>,
    /// Time from the recall call to this publication.
    pub published_after: Duration,
    /// Whether its lead document shares a whole word with the query (see
    /// [`judge_fast`](crate::judge_fast)); judged for every fast result, acted on only by the
    /// gated design.
    pub confidence: FastConfidence,
}

/// Where the time of a recall went (the scan's own time is [`ScanOutcome::duration`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RecallTimings {
    /// From the recall call to the fast-result publication; `None` when nothing was published.
    pub fast_published: Option<Duration>,
    /// Time spent waiting for the selector; `None` when it was not asked.
    pub selector: Option<Duration>,
    /// From the recall call to settling.
    pub settled: Duration,
}

/// A recall that ran to the end: what it selected and how.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SettledRecall {
    /// How the documents were chosen.
    pub strategy: Strategy,
    /// The selected documents, at most the limit, in selection order, shown whole. What the
    /// scan found is in [`RecallState::scanned`], published before this.
    pub documents: Vec<Arc<ScannedDocument>>,
    /// A lexical result's documents with weak evidence, shown as one line each; none when the
    /// selector chose.
    pub lines: Vec<Arc<ScannedDocument>>,
    /// Where the time went.
    pub timings: RecallTimings,
    /// Why the selector's answer was not used, when it was asked and failed.
    pub selector_error: Option<SelectorError>,
    /// The `memory.selector.error` event this recall recorded when it settled: its selector
    /// failed (a cancelled call is no failure), with the selector's note on it.
    pub selector_failure: Option<SelectorErrorEvent>,
    /// Why the recall could not scan the project scope, when it could not.
    pub scan_error: Option<RecallScanError>,
}

/// Why a recall found nothing to rank. Cloneable (the causes are shared), so the settled result
/// that carries it can be published to every observer; it prints as one line.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum RecallScanError {
    /// The scan itself failed (the project root cannot be listed).
    #[error(transparent)]
    Scan(Arc<memory_scan::ScanError>),
    /// The scan's task ended without a result (it panicked or its runtime shut down).
    #[error("recall scan stopped unexpectedly: {0}")]
    Stopped(Arc<tokio::task::JoinError>),
}

/// What the scan of a recall found; published with the fast result, before the selector is
/// asked, so a turn that ends before the recall settles can still say what was scanned. A scan
/// that failed found nothing: no documents and an empty report (the settled result says why).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ScanOutcome {
    /// Documents the scan found (before excluding those already delivered this session).
    pub docs_scanned: usize,
    /// What the scan saw and skipped, and whether it started from a catalog.
    pub report: Arc<ScanReport>,
    /// Enumerating, reading, parsing and scoring the memory tree.
    pub duration: Duration,
}

/// What a recall has published so far; observed by the delivery handle through a watch channel.
#[derive(Debug, Clone, Default)]
pub struct RecallState {
    /// The fast result, once published.
    pub fast: Option<Arc<FastResult>>,
    /// What the scan found, once it is done.
    pub scanned: Option<Arc<ScanOutcome>>,
    /// The settled result, once settled.
    pub settled: Option<Arc<SettledRecall>>,
}

/// Everything a recall needs that outlives one query.
#[derive(Debug)]
pub(crate) struct RecallContext {
    pub cache: Arc<dyn RecallScanner>,
    pub roots: MemoryRoots,
    pub selector: Option<Arc<dyn Selector>>,
    pub sink: Arc<dyn TelemetrySink>,
    pub design: DeliveryDesign,
    pub limit: usize,
    pub delivery_rule: lexical_score::delivery::DeliveryRule,
    pub tiering: lexical_score::delivery::Tiering,
}

/// The per-query input of a recall.
#[derive(Debug)]
pub(crate) struct RecallInput {
    pub query: String,
    pub recent_tools: Vec<String>,
    /// Documents already delivered in this session; they are not recalled again.
    pub excluded: HashSet<PathBuf>,
    /// Cancelled when the session needs the CPU for something else (its next query, its end):
    /// background work the recall leaves behind stops then. Not the recall's own cancellation,
    /// which a recall delivered in full never sees.
    pub idle: CancellationToken,
}

/// Runs one recall to completion, publishing into `state`. Returns without settling when
/// `cancel` fires: a recall aborted by its caller emits no `memory.recall` event. Every way a
/// session ends a recall before it settles counts as its caller aborting it (end of a tool-free
/// turn, a new query, reset, abort, shutdown): the recall's outcome is then the terminal
/// `memory.recall.delivery` event alone, whose discard reason says which it was.
pub(crate) async fn run_recall(
    ctx: Arc<RecallContext>,
    mut input: RecallInput,
    cancel: CancellationToken,
    state: watch::Sender<RecallState>,
    started: Instant,
) {
    let query_length = input.query.chars().count();
    let ranked = {
        let ctx = Arc::clone(&ctx);
        let query = input.query.clone();
        let tools = input.recent_tools.clone();
        let excluded = std::mem::take(&mut input.excluded);
        let cancel = cancel.clone();
        // Reading files and scoring is blocking, CPU- and I/O-bound work.
        tokio::task::spawn_blocking(move || {
            let ranked = scan_and_rank(&ctx, &query, &tools, &excluded);
            // A recall ended while it scanned has no fast result to hurry, and its task may not
            // run again (a process exiting drops it), so the catalog is written here; a tree
            // whose scan outlasts the first prompt's wait would otherwise never get one.
            if cancel.is_cancelled() {
                persist_catalogs(ctx.cache.as_ref());
            }
            ranked
        })
        .await
    };
    let scan_elapsed = started.elapsed();
    if cancel.is_cancelled() {
        // Cancelled after the check above: the write is still owed (a second one finds nothing
        // left to write).
        persist_and_index_in_background(&ctx.cache, &input.idle);
        return;
    }
    let mut ranked = match ranked
        .map_err(|join_error| RecallScanError::Stopped(Arc::new(join_error)))
        .and_then(|ranked| ranked.map_err(|error| RecallScanError::Scan(Arc::new(error))))
    {
        Ok(ranked) => ranked,
        Err(error) => {
            settle_failed(&ctx, &state, &cancel, query_length, scan_elapsed, error);
            return;
        }
    };

    // Without a selector there is nothing to arrive first: the recall settles at once with the
    // lexical result, which the initial consume then delivers as `refined`.
    let publishes_fast = match ctx.design {
        DeliveryDesign::FastPath | DeliveryDesign::Gated => true,
        #[cfg(feature = "measurement")]
        DeliveryDesign::SinglePath => false,
    };
    let fast_result = (publishes_fast && ctx.selector.is_some() && !cancel.is_cancelled())
        .then(|| fast_result(&ranked, started))
        .flatten();
    let fast_published = fast_result.as_ref().map(|f| f.published_after);
    let scanned = Arc::new(ScanOutcome {
        docs_scanned: ranked.docs_scanned,
        report: Arc::new(std::mem::take(&mut ranked.report)),
        duration: scan_elapsed,
    });
    state.send_modify(|s| {
        s.fast = fast_result.map(Arc::new);
        s.scanned = Some(scanned);
    });

    persist_and_index_in_background(&ctx.cache, &input.idle);

    let Some(Selection {
        strategy,
        documents,
        lines,
        selector_duration,
        selector_error,
    }) = choose(&ctx, &input, &ranked, &cancel).await
    else {
        return;
    };

    let timings = RecallTimings {
        fast_published,
        selector: selector_duration,
        settled: started.elapsed(),
    };
    let event = RecallEvent {
        query_length,
        docs_scanned: ranked.docs_scanned,
        docs_selected: documents.len(),
        docs_trimmed: ranked.trimmed(),
        strategy,
        duration_ms: millis(timings.settled),
        scan_duration_ms: millis(scan_elapsed),
        fast_duration_ms: timings.fast_published.map(millis),
        selector_duration_ms: timings.selector.map(millis),
    };
    let selector_failure = selector_error
        .as_ref()
        .and_then(|error| failure_event(error, ctx.selector.as_deref()));
    let settled = SettledRecall {
        strategy,
        documents,
        lines,
        timings,
        selector_error,
        selector_failure,
        scan_error: None,
    };
    settle(&ctx, &state, &cancel, settled, event);
}

/// The fast result of `ranked`: what the delivery rule keeps of the lexical top two, whole and
/// as lines; `None` when it keeps nothing.
fn fast_result(ranked: &rank::Ranked, started: Instant) -> Option<FastResult> {
    let (whole, lines) = (ranked.fast(Tier::Whole), ranked.fast(Tier::Line));
    if whole.is_empty() && lines.is_empty() {
        return None;
    }
    ranked.fast_confidence.map(|confidence| FastResult {
        documents: documents_at(&ranked.pool, whole.into_iter()),
        lines: documents_at(&ranked.pool, lines.into_iter()),
        published_after: started.elapsed(),
        confidence,
    })
}

/// Emits `memory.recall` (and `memory.selector.error` when the selector failed) and publishes
/// the settled result, unless the caller has cancelled the recall. All happen under the
/// channel's write lock, after the cancel check, and the session cancels before it reads the
/// state to discard; so either the session's discard sees this result, or nothing is published
/// and no event is emitted for a recall its caller aborted. Whoever sees the settled result also
/// finds its events already emitted.
fn settle(
    ctx: &RecallContext,
    state: &watch::Sender<RecallState>,
    cancel: &CancellationToken,
    settled: SettledRecall,
    event: RecallEvent,
) {
    state.send_if_modified(|s| {
        if cancel.is_cancelled() {
            return false;
        }
        emit_recall(ctx.sink.as_ref(), event);
        if let Some(failure) = &settled.selector_failure {
            ctx.sink
                .emit(&TelemetryEvent::SelectorError(failure.clone()));
        }
        s.settled = Some(Arc::new(settled));
        true
    });
}

/// Off the critical path (the fast result is already out, and this runs beside the selector
/// call): writes the catalogs of a cache built with them, which builds the term indexes the scan
/// left out, then builds those still missing (all of them without catalogs, or those of a root
/// whose catalog could not be written), so the session's next query scores its documents through
/// their indexes. The index build stops once `idle` is cancelled: a new query, or the session's
/// end, needs the CPU more.
fn persist_and_index_in_background(cache: &Arc<dyn RecallScanner>, idle: &CancellationToken) {
    let cache = Arc::clone(cache);
    let idle = idle.clone();
    tokio::task::spawn_blocking(move || {
        if cache.uses_catalogs() {
            persist_catalogs(cache.as_ref());
        }
        cache.build_indexes(&|| idle.is_cancelled());
    });
}

/// Writes the catalogs whose roots changed since they were last written (none without catalogs).
fn persist_catalogs(cache: &dyn RecallScanner) {
    for write in cache.persist_catalogs() {
        match write.outcome {
            Ok(entries) => {
                tracing::debug!(path = %write.path.display(), entries, "catalog written");
            }
            Err(error) => {
                tracing::debug!(path = %write.path.display(), %error, "catalog not written");
            }
        }
    }
}

fn settle_failed(
    ctx: &RecallContext,
    state: &watch::Sender<RecallState>,
    cancel: &CancellationToken,
    query_length: usize,
    scan_elapsed: Duration,
    error: RecallScanError,
) {
    tracing::warn!(%error, "memory recall could not scan the project scope");
    let event = RecallEvent {
        query_length,
        docs_scanned: 0,
        docs_selected: 0,
        docs_trimmed: 0,
        strategy: Strategy::None,
        duration_ms: millis(scan_elapsed),
        scan_duration_ms: millis(scan_elapsed),
        fast_duration_ms: None,
        selector_duration_ms: None,
    };
    let scanned = Arc::new(ScanOutcome {
        docs_scanned: 0,
        report: Arc::new(ScanReport::default()),
        duration: scan_elapsed,
    });
    state.send_modify(|s| s.scanned = Some(scanned));
    let settled = SettledRecall {
        strategy: Strategy::None,
        documents: Vec::new(),
        lines: Vec::new(),
        timings: RecallTimings {
            fast_published: None,
            selector: None,
            settled: scan_elapsed,
        },
        selector_error: None,
        selector_failure: None,
        scan_error: Some(error),
    };
    settle(ctx, state, cancel, settled, event);
}

/// The `memory.selector.error` event of a selector's failure: its kind, its message as one
/// escaped line and the selector's note; `None` for a call cancelled by the turn's end, which
/// is no failure.
fn failure_event(
    error: &SelectorError,
    selector: Option<&dyn Selector>,
) -> Option<SelectorErrorEvent> {
    if matches!(error, SelectorError::Cancelled) {
        return None;
    }
    let one_line = |text: &str| crate::printable(text, crate::Lines::Escaped).into_owned();
    Some(SelectorErrorEvent {
        kind: error.kind(),
        message: one_line(&error.to_string()),
        note: selector
            .and_then(Selector::failure_note)
            .map(|note| one_line(&note)),
    })
}

pub(crate) fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}
