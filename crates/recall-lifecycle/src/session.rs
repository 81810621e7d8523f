//! The session and its per-turn delivery handle: when a recall's result reaches the model, what
//! is excluded, and the exactly-once terminal telemetry.

use std::collections::HashSet;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use delivery_telemetry::{
    DeliveredAt, DeliveryTelemetry, DiscardReason, FastDelivery, FastWait, InitialWait, Phase,
    Strategy, TelemetrySink, TerminalDelivery,
};
use memory_scan::{DocumentCache, MemoryRoots, RecallScanner, ScannedDocument};
use selector::Selector;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::confidence::FastConfidence;
use crate::prompt::{Clock, SystemClock, render_prompt};
use crate::recall::{
    FastResult, RecallContext, RecallInput, RecallState, SettledRecall, run_recall,
};
use crate::{DeliveryDesign, INITIAL_CEILING};

/// What the initial consume point does once its wait is over, decided from one reading of the
/// recall's state. Each variant carries only the waits that can lead to it, so the recorded
/// `initial_wait` cannot disagree with what was delivered.
#[derive(Debug)]
enum InitialDecision {
    /// The turn was cancelled: nothing is delivered and the recall is discarded (`abort`).
    Cancelled,
    /// The recall has settled: its result is delivered (or discarded when nothing remains).
    Settled(SettledWait),
    /// The fast result is delivered and the recall stays pending.
    Fast(Arc<FastResult>, FastWait),
    /// Nothing is ready: nothing now, the recall stays pending.
    Nothing(NothingWait),
}

/// How a wait that ended with a settled recall went.
#[derive(Debug, Clone, Copy)]
enum SettledWait {
    #[cfg(feature = "measurement")]
    ZeroWait,
    Settled,
    WeakFastSuperseded,
}

/// How a wait that ended with nothing to deliver went.
#[derive(Debug, Clone, Copy)]
enum NothingWait {
    #[cfg(feature = "measurement")]
    ZeroWait,
    Empty,
}

impl InitialDecision {
    fn of(design: DeliveryDesign, cancelled: bool, state: &RecallState) -> Self {
        if cancelled {
            return Self::Cancelled;
        }
        if state.settled.is_some() {
            return Self::Settled(match (design, &state.fast) {
                #[cfg(feature = "measurement")]
                (DeliveryDesign::SinglePath, _) => SettledWait::ZeroWait,
                (DeliveryDesign::Gated, Some(fast)) if fast.confidence == FastConfidence::Weak => {
                    SettledWait::WeakFastSuperseded
                }
                _ => SettledWait::Settled,
            });
        }
        match (design, &state.fast) {
            #[cfg(feature = "measurement")]
            (DeliveryDesign::SinglePath, _) => Self::Nothing(NothingWait::ZeroWait),
            (_, None) => Self::Nothing(NothingWait::Empty),
            (DeliveryDesign::FastPath, Some(fast)) => {
                Self::Fast(Arc::clone(fast), FastWait::Published)
            }
            (DeliveryDesign::Gated, Some(fast)) => {
                let wait = match fast.confidence {
                    FastConfidence::Confident => FastWait::Confident,
                    FastConfidence::Weak => FastWait::WeakAtCeiling,
                };
                Self::Fast(Arc::clone(fast), wait)
            }
        }
    }

    fn wait(&self) -> InitialWait {
        match self {
            Self::Cancelled => InitialWait::Cancelled,
            #[cfg(feature = "measurement")]
            Self::Settled(SettledWait::ZeroWait) | Self::Nothing(NothingWait::ZeroWait) => {
                InitialWait::ZeroWait
            }
            Self::Settled(SettledWait::Settled) => InitialWait::Settled,
            Self::Settled(SettledWait::WeakFastSuperseded) => InitialWait::WeakFastSuperseded,
            Self::Fast(_, wait) => (*wait).into(),
            Self::Nothing(NothingWait::Empty) => InitialWait::Empty,
        }
    }
}

/// Everything a session is built from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SessionConfig {
    /// The project and user memory roots.
    pub roots: MemoryRoots,
    /// The model selector; `None` settles every recall with the lexical result.
    pub selector: Option<Arc<dyn Selector>>,
    /// Where telemetry events go.
    pub sink: Arc<dyn TelemetrySink>,
    /// The clock prompts compute ages against.
    pub clock: Arc<dyn Clock>,
    /// The delivery design; [`DeliveryDesign::FastPath`] unless measuring the old one.
    pub design: DeliveryDesign,
    /// Most documents one refined delivery may carry.
    pub limit: usize,
    /// Most documents one turn delivers in all, fast and refined together; `None` (the
    /// default) leaves a turn at what the design gives it (up to the fast result's two plus
    /// `limit` refined). Documents cut by the cap are not marked delivered, so a later turn may
    /// recall them.
    pub turn_cap: Option<NonZeroUsize>,
    /// What the session's recalls scan their roots with (default: a [`DocumentCache`] without
    /// catalogs); share one between sessions over the same roots.
    pub cache: Arc<dyn RecallScanner>,
}

impl SessionConfig {
    /// A configuration with the shipped defaults: no selector, system clock, fast path, limit 5.
    pub fn new(roots: MemoryRoots, sink: Arc<dyn TelemetrySink>) -> Self {
        Self {
            roots,
            selector: None,
            sink,
            clock: Arc::new(SystemClock),
            design: DeliveryDesign::FastPath,
            limit: selector::DEFAULT_LIMIT,
            turn_cap: None,
            cache: Arc::new(DocumentCache::new()),
        }
    }
}

/// Why a pending recall is abandoned by its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CancelReason {
    /// The turn ended with no tool call, so the result has no later delivery point.
    NoSafeDeliveryPoint,
    /// The user sent another query.
    NewQuery,
    /// The session was reset.
    Reset,
    /// The turn was aborted.
    Abort,
    /// The session is shutting down.
    Shutdown,
}

impl From<CancelReason> for DiscardReason {
    fn from(reason: CancelReason) -> Self {
        match reason {
            CancelReason::NoSafeDeliveryPoint => DiscardReason::NoSafeDeliveryPoint,
            CancelReason::NewQuery => DiscardReason::NewQuery,
            CancelReason::Reset => DiscardReason::Reset,
            CancelReason::Abort => DiscardReason::Abort,
            CancelReason::Shutdown => DiscardReason::Shutdown,
        }
    }
}

/// Memory put in front of the model at one delivery point.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DeliveredMemory {
    /// `fast` for the deterministic result, `refined` for the settled one.
    pub phase: Phase,
    /// How the documents were chosen.
    pub strategy: Strategy,
    /// Where it was delivered.
    pub point: DeliveredAt,
    /// The delivered documents, never one delivered earlier in the session.
    pub documents: Vec<Arc<ScannedDocument>>,
    /// The rendered prompt text.
    pub prompt: String,
    /// Time since the recall started.
    pub latency: Duration,
}

/// What a consume point produced.
#[derive(Debug, Clone)]
pub enum Delivery {
    /// Memory is delivered now.
    Delivered(DeliveredMemory),
    /// Nothing now; the recall is still running and may deliver later.
    Pending,
    /// The recall ended without (further) delivery, for this reason.
    Discarded(DiscardReason),
    /// There is no recall to consume: none started, or it already ended.
    Idle,
}

impl Delivery {
    /// The delivered memory, if any.
    pub fn delivered(&self) -> Option<&DeliveredMemory> {
        match self {
            Delivery::Delivered(memory) => Some(memory),
            _ => None,
        }
    }
}

/// The recall of the current query and what has been delivered from it. Emitting its terminal
/// event is the only way to end it: every path that does so consumes the whole value, and
/// dropping it unfinished (the session dropped without [`RecallSession::shutdown`], a panic)
/// cancels the recall task and records the recall as discarded (`abort`).
#[derive(Debug)]
struct ActiveRecall {
    started: Instant,
    cancel: CancellationToken,
    state: watch::Receiver<RecallState>,
    fast: Option<FastDelivery>,
    /// `None` only once the terminal event has been emitted, so `Drop` stays silent.
    terminal: Option<TerminalDelivery>,
    fast_delivered: Vec<Arc<ScannedDocument>>,
    initial_consumed: bool,
}

impl ActiveRecall {
    fn finish_delivered(mut self, at: DeliveredAt, strategy: Strategy, count: usize) {
        if let Some(terminal) = self.terminal.take() {
            terminal.delivered(at, strategy, count, self.started.elapsed());
        }
    }

    fn finish_discarded(mut self, reason: DiscardReason) -> DiscardReason {
        self.discard(|_, _| reason)
    }

    /// Cancels the task, then reads what it settled with, once: a result published before the
    /// cancel is reported with its strategy, and the task publishes no settled result after it.
    /// `reason` picks the discard reason from that same reading (the settled result, if any, and
    /// the documents fast-delivered), so reason, strategy and count cannot disagree.
    fn discard(
        &mut self,
        reason: impl FnOnce(Option<&SettledRecall>, &[Arc<ScannedDocument>]) -> DiscardReason,
    ) -> DiscardReason {
        self.cancel.cancel();
        let (reason, strategy, selected) = {
            let state = self.state.borrow();
            let settled = state.settled.as_deref();
            let (strategy, selected) =
                settled.map_or((Strategy::None, 0), |s| (s.strategy, s.documents.len()));
            (reason(settled, &self.fast_delivered), strategy, selected)
        };
        if let Some(terminal) = self.terminal.take() {
            terminal.discarded(reason, strategy, selected, self.started.elapsed());
        }
        reason
    }

    /// Cancels the recall because its caller abandons it for `reason`, and records it as
    /// discarded. When it had settled and every selected document was already fast-delivered,
    /// the result is recorded as `already_delivered`: nothing was lost. Otherwise a turn whose abort token had fired is recorded as `abort`,
    /// whatever call noticed it first.
    fn abandon(&mut self, reason: CancelReason) -> DiscardReason {
        let aborted = self.cancel.is_cancelled();
        self.discard(|settled, fast_delivered| {
            let fully_delivered = settled.is_some_and(|s| {
                !s.documents.is_empty()
                    && s.documents
                        .iter()
                        .all(|d| fast_delivered.iter().any(|f| f.path() == d.path()))
            });
            if fully_delivered {
                DiscardReason::AlreadyDelivered
            } else if aborted {
                DiscardReason::Abort
            } else {
                reason.into()
            }
        })
    }

    /// Cancels the recall and records it as discarded (see [`Self::abandon`]).
    fn cancel(mut self, reason: CancelReason) -> DiscardReason {
        self.abandon(reason)
    }
}

impl Drop for ActiveRecall {
    fn drop(&mut self) {
        if self.terminal.is_some() {
            self.abandon(CancelReason::Abort);
        }
    }
}

/// A recall session: one recall per user query, documents delivered at most once.
#[derive(Debug)]
pub struct RecallSession {
    ctx: Arc<RecallContext>,
    clock: Arc<dyn Clock>,
    turn_cap: Option<NonZeroUsize>,
    surfaced: HashSet<PathBuf>,
    active: Option<ActiveRecall>,
    last_state: Option<watch::Receiver<RecallState>>,
    /// Stops the background work of the last recall (see [`RecallInput::idle`]); cancelled by the
    /// next query and when the session ends.
    idle: CancellationToken,
}

impl Drop for RecallSession {
    fn drop(&mut self) {
        self.idle.cancel();
    }
}

impl RecallSession {
    /// Creates a session; no recall runs until [`RecallSession::begin_query`].
    pub fn new(config: SessionConfig) -> Self {
        Self {
            ctx: Arc::new(RecallContext {
                cache: config.cache,
                roots: config.roots,
                selector: config.selector,
                sink: config.sink,
                design: config.design,
                limit: config.limit,
            }),
            clock: config.clock,
            turn_cap: config.turn_cap,
            surfaced: HashSet::new(),
            active: None,
            last_state: None,
            idle: CancellationToken::new(),
        }
    }

    /// Starts the recall for a new user query. A recall still pending from the previous query
    /// is cancelled (`new_query`), so its results can never reach this one.
    pub fn begin_query(&mut self, query: &str, recent_tools: &[String]) {
        self.cancel(CancelReason::NewQuery);
        self.idle.cancel();
        self.idle = CancellationToken::new();
        let cancel = CancellationToken::new();
        let (sender, receiver) = watch::channel(RecallState::default());
        let input = RecallInput {
            query: query.to_owned(),
            recent_tools: recent_tools.to_vec(),
            excluded: self.surfaced.clone(),
            idle: self.idle.clone(),
        };
        let (fast, terminal) = DeliveryTelemetry::new(Arc::clone(&self.ctx.sink));
        let started = Instant::now();
        // Detached: the task ends on its own, or promptly after `cancel` fires.
        tokio::spawn(run_recall(
            Arc::clone(&self.ctx),
            input,
            cancel.clone(),
            sender,
            started,
        ));
        self.last_state = Some(receiver.clone());
        self.active = Some(ActiveRecall {
            started,
            cancel,
            state: receiver,
            fast: Some(fast),
            terminal: Some(terminal),
            fast_delivered: Vec::new(),
            initial_consumed: false,
        });
    }

    /// A token that aborts the current recall's initial wait and prevents its delivery when
    /// cancelled from elsewhere (for example, the user pressing Ctrl-C). Once it has fired, the
    /// next call that ends the recall records it as `abort` (or `already_delivered`, when the
    /// fast phase had sent everything it selected), whatever that call's own reason.
    pub fn abort_token(&self) -> Option<CancellationToken> {
        self.active.as_ref().map(|a| a.cancel.clone())
    }

    /// The initial consume point of a user-query turn: waits at most [`INITIAL_CEILING`],
    /// ending early when the recall settles, the turn is cancelled, or a fast result is
    /// published (under [`DeliveryDesign::Gated`], only a confident one). The single-path design
    /// does not wait.
    pub async fn consume_initial(&mut self) -> Delivery {
        let design = self.ctx.design;
        let Some(active) = self.active.as_mut() else {
            return Delivery::Idle;
        };
        if active.initial_consumed {
            return Delivery::Pending;
        }
        let ends_wait: Option<fn(&RecallState) -> bool> = match design {
            #[cfg(feature = "measurement")]
            DeliveryDesign::SinglePath => None,
            DeliveryDesign::FastPath => Some(|s| s.settled.is_some() || s.fast.is_some()),
            DeliveryDesign::Gated => Some(|s| {
                s.settled.is_some()
                    || s.fast
                        .as_ref()
                        .is_some_and(|f| f.confidence == FastConfidence::Confident)
            }),
        };
        if let Some(ends_wait) = ends_wait {
            let mut state = active.state.clone();
            tokio::select! {
                _ = state.wait_for(ends_wait) => {}
                () = active.cancel.cancelled() => {}
                () = tokio::time::sleep(INITIAL_CEILING) => {}
            }
        }
        // Marked only after the wait, the last await: a call dropped mid-wait (a timeout, a
        // `select!`) consumes nothing, and every call that gets past here returns its result.
        active.initial_consumed = true;
        let decision =
            InitialDecision::of(design, active.cancel.is_cancelled(), &active.state.borrow());
        if let Some(terminal) = active.terminal.as_mut() {
            terminal.note_initial(decision.wait());
        }
        match decision {
            InitialDecision::Cancelled => self.cancel(CancelReason::Abort),
            InitialDecision::Settled(_) => self.deliver_settled(DeliveredAt::Initial),
            InitialDecision::Nothing(_) => Delivery::Pending,
            InitialDecision::Fast(fast, wait) => {
                let Some(token) = active.fast.take() else {
                    return Delivery::Pending;
                };
                let latency = active.started.elapsed();
                let mut documents = fast.documents.clone();
                if let Some(cap) = self.turn_cap {
                    documents.truncate(cap.get());
                }
                token.emit(wait, documents.len(), latency);
                active.fast_delivered.clone_from(&documents);
                Delivery::Delivered(self.record_delivery(
                    Phase::Fast,
                    Strategy::Heuristic,
                    DeliveredAt::Initial,
                    documents,
                    latency,
                ))
            }
        }
    }

    /// The tool-result consume point: never waits; only a settled recall is consumed.
    pub fn consume_tool_result(&mut self) -> Delivery {
        let Some(active) = self.active.as_ref() else {
            return Delivery::Idle;
        };
        if active.cancel.is_cancelled() {
            return self.cancel(CancelReason::Abort);
        }
        if active.state.borrow().settled.is_none() {
            return Delivery::Pending;
        }
        self.deliver_settled(DeliveredAt::ToolResult)
    }

    /// Ends the turn. A recall still pending then has no safe delivery point and is discarded.
    pub fn end_turn(&mut self) -> Delivery {
        self.cancel(CancelReason::NoSafeDeliveryPoint)
    }

    /// Abandons the pending recall, if any, for `reason`.
    pub fn cancel(&mut self, reason: CancelReason) -> Delivery {
        match self.active.take() {
            Some(active) => Delivery::Discarded(active.cancel(reason)),
            None => Delivery::Idle,
        }
    }

    /// Cancels any pending recall and forgets what was delivered, so it may be recalled again.
    pub fn reset(&mut self) {
        self.cancel(CancelReason::Reset);
        self.surfaced.clear();
    }

    /// Cancels any pending recall; the session cannot be used afterwards.
    pub fn shutdown(mut self) {
        self.cancel(CancelReason::Shutdown);
    }

    /// Writes, and waits for, the catalogs of the roots whose files changed since their catalogs
    /// were last written (none when the session keeps no catalogs). A recall writes them in the
    /// background after its fast result, but background work not yet started when the runtime
    /// shuts down never runs, so a process about to exit awaits this first. The scan of the
    /// active recall, if any, is waited for (until it publishes what it found, the recall settles
    /// or it is cancelled; a cancelled scan writes its catalogs itself), then the catalogs are
    /// written.
    pub async fn write_catalogs(&self) -> Vec<memory_scan::CatalogWrite> {
        if let Some(active) = self.active.as_ref() {
            let mut state = active.state.clone();
            tokio::select! {
                _ = state.wait_for(|s| s.scanned.is_some() || s.settled.is_some()) => {}
                () = active.cancel.cancelled() => {}
            }
        }
        let cache = Arc::clone(&self.ctx.cache);
        tokio::task::spawn_blocking(move || cache.persist_catalogs())
            .await
            .unwrap_or_default()
    }

    /// Whether a recall is active (started and not yet delivered in full or discarded).
    pub fn has_pending_recall(&self) -> bool {
        self.active.is_some()
    }

    /// Waits until the current recall settles or `timeout` passes, without consuming it; for
    /// callers that model a tool call taking that long.
    pub async fn wait_settled(&self, timeout: Duration) -> bool {
        self.wait_until(timeout, |s| s.settled.is_some()).await
    }

    /// Waits until the current recall publishes its fast result or settles, or `timeout`
    /// passes, without consuming anything; for latency reports.
    pub async fn wait_published(&self, timeout: Duration) -> bool {
        self.wait_until(timeout, |s| s.fast.is_some() || s.settled.is_some())
            .await
    }

    async fn wait_until(&self, timeout: Duration, ready: impl FnMut(&RecallState) -> bool) -> bool {
        let Some(active) = self.active.as_ref() else {
            return false;
        };
        let mut state = active.state.clone();
        tokio::time::timeout(timeout, state.wait_for(ready))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// What the latest recall has published (fast result, settled result), for reporting.
    pub fn latest_recall(&self) -> Option<RecallState> {
        self.last_state.as_ref().map(|s| s.borrow().clone())
    }

    /// Paths delivered so far in this session.
    pub fn surfaced(&self) -> &HashSet<PathBuf> {
        &self.surfaced
    }

    fn deliver_settled(&mut self, at: DeliveredAt) -> Delivery {
        let Some(active) = self.active.take() else {
            return Delivery::Idle;
        };
        let Some(settled) = active.state.borrow().settled.clone() else {
            self.active = Some(active);
            return Delivery::Pending;
        };
        // Both results come from one scan, so the selector can legitimately re-select what the
        // fast phase sent; those are removed and the prompt is rebuilt from the rest.
        let mut remaining: Vec<Arc<ScannedDocument>> = settled
            .documents
            .iter()
            .filter(|d| !active.fast_delivered.iter().any(|f| f.path() == d.path()))
            .cloned()
            .collect();
        let new_documents = remaining.len();
        if let Some(cap) = self.turn_cap {
            remaining.truncate(cap.get().saturating_sub(active.fast_delivered.len()));
        }
        if remaining.is_empty() {
            let reason = if settled.documents.is_empty() {
                DiscardReason::NoRelevantResults
            } else if new_documents == 0 {
                DiscardReason::AlreadyDelivered
            } else {
                DiscardReason::TurnCapReached
            };
            return Delivery::Discarded(active.finish_discarded(reason));
        }
        let latency = active.started.elapsed();
        active.finish_delivered(at, settled.strategy, remaining.len());
        Delivery::Delivered(self.record_delivery(
            Phase::Refined,
            settled.strategy,
            at,
            remaining,
            latency,
        ))
    }

    fn record_delivery(
        &mut self,
        phase: Phase,
        strategy: Strategy,
        point: DeliveredAt,
        documents: Vec<Arc<ScannedDocument>>,
        latency: Duration,
    ) -> DeliveredMemory {
        self.surfaced
            .extend(documents.iter().map(|d| d.path().to_path_buf()));
        let prompt = render_prompt(documents.iter().map(|d| d.document()), self.clock.now());
        DeliveredMemory {
            phase,
            strategy,
            point,
            documents,
            prompt,
            latency,
        }
    }
}
