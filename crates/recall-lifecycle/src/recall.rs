//! The recall task: one per user query. Scan, rank, publish the fast result, ask the selector,
//! settle (or fall back, or stop silently when its caller cancels it).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use delivery_telemetry::{RecallEvent, Strategy, TelemetrySink, emit_recall};
use lexical_score::{ActiveToolAliases, CandidateSelection, PreparedText, QueryTokens, Scorable};
use memory_scan::{MemoryRoots, RecallScanner, ScanReport, ScannedDocument};
use selector::{
    AnswerError, Candidate, SELECTOR_CEILING, SelectionRequest, Selector, SelectorError,
};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::DeliveryDesign;
use crate::confidence::{FastConfidence, judge_fast};

/// The deterministic result published before the selector is asked: the lexical top two.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FastResult {
    /// At most [`lexical_score::FAST_LIMIT`] documents, best first.
    pub documents: Vec<Arc<ScannedDocument>>,
    /// Time from the recall call to this publication.
    pub published_after: Duration,
    /// Whether its lead document shares a whole word with the query (see [`judge_fast`]);
    /// judged for every fast result, acted on only by the gated design.
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
    /// The selected documents, at most the limit, in selection order. What the scan found is in
    /// [`RecallState::scanned`], published before this.
    pub documents: Vec<Arc<ScannedDocument>>,
    /// Where the time went.
    pub timings: RecallTimings,
    /// Why the selector's answer was not used, when it was asked and failed.
    pub selector_error: Option<SelectorError>,
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

/// A scanned document in the recall pool; a local wrapper so the pool can be scored in place.
struct PoolDocument(Arc<ScannedDocument>);

impl Scorable for PoolDocument {
    fn prepared(&self) -> &PreparedText {
        self.0.prepared()
    }
    fn memory_type(&self) -> lexical_score::MemoryType {
        self.0.memory_type()
    }
    fn mtime(&self) -> std::time::SystemTime {
        self.0.mtime()
    }
}

struct Ranked {
    pool: Vec<PoolDocument>,
    selection: CandidateSelection,
    /// The judgement of the fast result; `None` when nothing matched.
    fast_confidence: Option<FastConfidence>,
    docs_scanned: usize,
    report: ScanReport,
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

    let fast = ranked.selection.fast();
    // Without a selector there is nothing to arrive first: the recall settles at once with the
    // lexical result, which the initial consume then delivers as `refined`.
    let selector_asked = ctx.selector.is_some();
    let publishes_fast = match ctx.design {
        DeliveryDesign::FastPath | DeliveryDesign::Gated => true,
        #[cfg(feature = "measurement")]
        DeliveryDesign::SinglePath => false,
    };
    let fast_result = ranked
        .fast_confidence
        .filter(|_| publishes_fast && selector_asked && !fast.is_empty() && !cancel.is_cancelled())
        .map(|confidence| FastResult {
            documents: documents_at(&ranked.pool, fast.iter().map(|r| r.index)),
            published_after: started.elapsed(),
            confidence,
        });
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
        strategy,
        duration_ms: millis(timings.settled),
        scan_duration_ms: millis(scan_elapsed),
        fast_duration_ms: timings.fast_published.map(millis),
        selector_duration_ms: timings.selector.map(millis),
    };
    let settled = SettledRecall {
        strategy,
        documents,
        timings,
        selector_error,
        scan_error: None,
    };
    settle(&ctx, &state, &cancel, settled, event);
}

/// Emits `memory.recall` and publishes the settled result, unless the caller has cancelled the
/// recall. Both happen under the channel's write lock, after the cancel check, and the session
/// cancels before it reads the state to discard; so either the session's discard sees this
/// result, or nothing is published and no `memory.recall` is emitted for a recall its caller
/// aborted. Whoever sees the settled result also finds its `memory.recall` already emitted.
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

/// What the recall settles with, before telemetry and timings are attached.
struct Selection {
    strategy: Strategy,
    documents: Vec<Arc<ScannedDocument>>,
    selector_duration: Option<Duration>,
    selector_error: Option<SelectorError>,
}

/// Asks the selector (when there is one) or takes the lexical result; `None` when the caller
/// cancelled the recall meanwhile.
async fn choose(
    ctx: &RecallContext,
    input: &RecallInput,
    ranked: &Ranked,
    cancel: &CancellationToken,
) -> Option<Selection> {
    let fallback = || {
        documents_at(
            &ranked.pool,
            ranked.selection.fallback().iter().map(|r| r.index),
        )
    };
    let lexical = |strategy, documents| Selection {
        strategy,
        documents,
        selector_duration: None,
        selector_error: None,
    };
    let selector = match (&ctx.selector, ranked.pool.is_empty()) {
        (_, true) => return Some(lexical(Strategy::None, Vec::new())),
        (None, false) => return Some(lexical(Strategy::Heuristic, fallback())),
        (Some(selector), false) => selector,
    };
    let asked = Instant::now();
    let answer = ask_selector(
        selector.as_ref(),
        &input.query,
        &input.recent_tools,
        ranked,
        ctx.limit,
        cancel,
    )
    .await;
    let selector_duration = Some(asked.elapsed());
    if cancel.is_cancelled() {
        return None;
    }
    Some(match answer {
        Ok(documents) => Selection {
            strategy: Strategy::Model,
            documents,
            selector_duration,
            selector_error: None,
        },
        Err(error) => {
            tracing::debug!(%error, "selector failed; using the lexical fallback");
            Selection {
                strategy: Strategy::Heuristic,
                documents: fallback(),
                selector_duration,
                selector_error: Some(error),
            }
        }
    })
}

fn scan_and_rank(
    ctx: &RecallContext,
    query: &str,
    tools: &[String],
    excluded: &HashSet<PathBuf>,
) -> Result<Ranked, memory_scan::ScanError> {
    let tokens = QueryTokens::new(query);
    // Each document is scored while the scan has its text at hand; the ranking below reads those
    // scores instead of fetching every document's text or index again.
    let scan = ctx.cache.scan_recall_for(&ctx.roots, &tokens)?;
    let docs_scanned = scan.documents.len();
    let pool: Vec<PoolDocument> = scan
        .documents
        .into_iter()
        // Hashing every path costs more than the check itself when nothing is excluded.
        .filter(|doc| excluded.is_empty() || !excluded.contains(doc.path()))
        .map(PoolDocument)
        .collect();
    // Derived once per recall, never per document (design document, verification list).
    let aliases = ActiveToolAliases::from_tool_names(tools);
    let selection = CandidateSelection::select(&tokens, &pool, &aliases);
    let fast_confidence = selection
        .fast()
        .first()
        .and_then(|lead| pool.get(lead.index))
        .map(|lead| judge_fast(&tokens, lead));
    Ok(Ranked {
        pool,
        selection,
        fast_confidence,
        docs_scanned,
        report: scan.report,
    })
}

async fn ask_selector(
    selector: &dyn Selector,
    query: &str,
    recent_tools: &[String],
    ranked: &Ranked,
    limit: usize,
    cancel: &CancellationToken,
) -> Result<Vec<Arc<ScannedDocument>>, SelectorError> {
    let candidates: Vec<Candidate> = ranked
        .selection
        .candidates()
        .iter()
        .filter_map(|&i| ranked.pool.get(i))
        .map(|doc| Candidate {
            id: candidate_id(doc.0.path()),
            memory_type: doc.0.memory_type().as_str().to_owned(),
            mtime: doc.0.mtime(),
            description: doc.0.description().to_owned(),
            keywords: doc
                .0
                .topic()
                .keywords()
                .lines()
                .map(str::to_owned)
                .collect(),
        })
        .collect();
    let request = SelectionRequest::new(query, &candidates, limit).with_recent_tools(recent_tools);
    // The lifecycle enforces the ceiling itself so that no selector implementation can hold a
    // recall open longer than the design allows.
    let ids = tokio::select! {
        answer = tokio::time::timeout(SELECTOR_CEILING, selector.select(request, cancel.child_token())) => {
            answer.map_err(|_| SelectorError::Timeout(SELECTOR_CEILING))??
        }
        () = cancel.cancelled() => return Err(SelectorError::Cancelled),
    };
    // The first candidate with an id wins, as in the manifest, so an answered id always names
    // the document whose line the model was shown. Ids are unique per path (`candidate_id`);
    // only the same path listed twice could repeat one, and then both entries are that file.
    let mut by_id: HashMap<&str, usize> = HashMap::with_capacity(candidates.len());
    for (candidate, &index) in candidates.iter().zip(ranked.selection.candidates()) {
        by_id.entry(candidate.id.as_str()).or_insert(index);
    }
    let mut chosen = Vec::with_capacity(ids.len());
    for (position, id) in ids.iter().take(limit).enumerate() {
        // Selectors validate against the manifest; an id outside the candidates is still
        // refused here so a custom selector cannot smuggle in an unknown document.
        let index = by_id
            .get(id.as_str())
            .ok_or(AnswerError::NotInManifest { position })?;
        if !chosen.contains(index) {
            chosen.push(*index);
        }
    }
    Ok(documents_at(&ranked.pool, chosen.into_iter()))
}

/// The id under which a document is listed in the selector's manifest and named in its answer:
/// the absolute path, readable and distinct for every distinct path.
///
/// A path that is valid UTF-8 and holds no `%` is its own id. Otherwise each byte that is not
/// part of valid UTF-8 is written `%XX` (two upper-case hex digits) and every `%` of the path is
/// written `%25`, so the mapping is lossless: `caf\xE9.md` is `caf%E9.md`, `caf\xE8.md` is
/// `caf%E8.md`, and a file literally named `caf%E9.md` is `caf%25E9.md`. (A lossy conversion
/// would give both non-UTF-8 names the same id, and the model's pick could name either file.)
/// On Windows the bytes are the platform's encoding of the path, a superset of UTF-8, so a
/// lone surrogate is written as the `%XX` of its bytes.
pub fn candidate_id(path: &Path) -> String {
    let bytes = path.as_os_str().as_encoded_bytes();
    if let Ok(text) = std::str::from_utf8(bytes)
        && !text.contains('%')
    {
        return text.to_owned();
    }
    let mut id = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for (n, part) in chunk.valid().split('%').enumerate() {
            if n > 0 {
                id.push_str("%25");
            }
            id.push_str(part);
        }
        for &byte in chunk.invalid() {
            push_percent_encoded(&mut id, byte);
        }
    }
    id
}

fn push_percent_encoded(id: &mut String, byte: u8) {
    const HEX: [char; 16] = [
        '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'A', 'B', 'C', 'D', 'E', 'F',
    ];
    id.push('%');
    id.push(HEX[usize::from(byte >> 4)]);
    id.push(HEX[usize::from(byte & 0x0F)]);
}

fn documents_at(
    pool: &[PoolDocument],
    indices: impl Iterator<Item = usize>,
) -> Vec<Arc<ScannedDocument>> {
    indices
        .filter_map(|i| pool.get(i))
        .map(|doc| Arc::clone(&doc.0))
        .collect()
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
        timings: RecallTimings {
            fast_published: None,
            selector: None,
            settled: scan_elapsed,
        },
        selector_error: None,
        scan_error: Some(error),
    };
    settle(ctx, state, cancel, settled, event);
}

pub(crate) fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_path_without_percent_is_its_own_id() {
        let path = Path::new("/home/me/.memory/project/記憶-deploy.md");
        assert_eq!(
            candidate_id(path),
            "/home/me/.memory/project/記憶-deploy.md"
        );
    }

    #[test]
    fn percent_in_a_path_is_written_as_percent_25() {
        assert_eq!(candidate_id(Path::new("/m/100%.md")), "/m/100%25.md");
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_bytes_are_percent_encoded_and_the_rest_kept() {
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(std::ffi::OsStr::from_bytes(b"/m/caf\xe9-\xff\xfe.md"));
        assert_eq!(candidate_id(path), "/m/caf%E9-%FF%FE.md");
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_name_and_a_file_named_like_its_encoding_get_different_ids() {
        use std::os::unix::ffi::OsStrExt;
        let raw = Path::new(std::ffi::OsStr::from_bytes(b"/m/caf\xe9.md"));
        let literal = Path::new("/m/caf%E9.md");
        assert_ne!(candidate_id(raw), candidate_id(literal));
    }
}
