//! The session and its per-turn delivery handle: when a recall's result reaches the model, what
//! is excluded, and the exactly-once terminal telemetry.

use std::collections::HashSet;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use delivery_telemetry::{DeliveredAt, DeliveryTelemetry, DiscardReason, Phase, Strategy};
use memory_scan::ScannedDocument;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::confidence::FastConfidence;
use crate::prompt::{Clock, Rendered};
use crate::recall::{RecallContext, RecallInput, RecallState, run_recall};
use crate::{DeliveryDesign, FIRST_PROMPT_CEILING};

mod active;
mod config;
mod delivery;
mod initial;

use active::ActiveRecall;
pub use config::SessionConfig;
pub use delivery::{CancelReason, DeliveredMemory, Delivery};
use initial::InitialDecision;

/// A recall session: one recall per user query, documents delivered at most once.
#[derive(Debug)]
pub struct RecallSession {
    ctx: Arc<RecallContext>,
    clock: Arc<dyn Clock>,
    turn_cap: Option<NonZeroUsize>,
    context_budget: Option<NonZeroUsize>,
    delivered: HashSet<PathBuf>,
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
    /// Creates a session; no recall runs until [`RecallSession::begin_turn`].
    pub fn new(config: SessionConfig) -> Self {
        Self {
            ctx: Arc::new(RecallContext {
                cache: config.cache,
                roots: config.roots,
                selector: config.selector,
                sink: config.sink,
                design: config.design,
                limit: config.limit,
                delivery_rule: config.delivery_rule,
                tiering: config.tiering,
            }),
            clock: config.clock,
            turn_cap: config.turn_cap,
            context_budget: config.context_budget,
            delivered: HashSet::new(),
            active: None,
            last_state: None,
            idle: CancellationToken::new(),
        }
    }

    /// Starts the recall for a new user query. A recall still pending from the previous query
    /// is cancelled (`new_query`), so its results can never reach this one.
    pub fn begin_turn(&mut self, query: &str, recent_tools: &[String]) {
        self.cancel(CancelReason::NewQuery);
        self.idle.cancel();
        self.idle = CancellationToken::new();
        let cancel = CancellationToken::new();
        let (sender, receiver) = watch::channel(RecallState::default());
        let input = RecallInput {
            query: query.to_owned(),
            recent_tools: recent_tools.to_vec(),
            excluded: self.delivered.clone(),
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
            fast_lines: Vec::new(),
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

    /// The initial point of a user-query turn: waits at most [`FIRST_PROMPT_CEILING`],
    /// ending early when the recall settles, the turn is cancelled, or a fast result is
    /// published (under [`DeliveryDesign::Gated`], only a confident one). The single-path design
    /// does not wait.
    pub async fn initial(&mut self) -> Delivery {
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
                () = tokio::time::sleep(FIRST_PROMPT_CEILING) => {}
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
                let shown = Rendered::within(
                    documents,
                    fast.lines.clone(),
                    self.clock.now(),
                    self.context_budget,
                );
                token.emit(wait, shown.count(), latency);
                active.fast_delivered.clone_from(&shown.documents);
                active.fast_lines.clone_from(&shown.lines);
                Delivery::Delivered(self.record_delivery(
                    Phase::Fast,
                    Strategy::Heuristic,
                    DeliveredAt::Initial,
                    shown,
                    latency,
                ))
            }
        }
    }

    /// The tool-result point: never waits; only a settled recall is consumed.
    pub fn after_tool_result(&mut self) -> Delivery {
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
        self.delivered.clear();
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

    /// `documents` (from a published result, for a caller that shows them itself, such as a
    /// tool answering a question) rendered as a delivery's are: one prompt, with the session's
    /// clock, within its context budget. Nothing is marked delivered.
    pub fn render(&self, documents: Vec<Arc<ScannedDocument>>) -> Rendered {
        Rendered::within(documents, Vec::new(), self.clock.now(), self.context_budget)
    }

    /// Paths delivered so far in this session.
    pub fn delivered(&self) -> &HashSet<PathBuf> {
        &self.delivered
    }

    /// Records documents the model was shown another way (a memory tool it called) as
    /// delivered: no later point of this session delivers them again, the pending recall's
    /// included. Paths that are no document of the session's roots never match anything.
    pub fn note_shown_elsewhere(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        self.delivered.extend(paths);
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
        // fast phase sent, and the model may have fetched a document through a tool meanwhile;
        // those are removed and the prompt is rebuilt from the rest.
        let mut remaining: Vec<Arc<ScannedDocument>> = settled
            .documents
            .iter()
            .filter(|d| {
                !self.delivered.contains(d.path())
                    && !active.fast_delivered.iter().any(|f| f.path() == d.path())
            })
            .cloned()
            .collect();
        // A weak match the fast result gave as a line is not given again as one this turn.
        let lines: Vec<Arc<ScannedDocument>> = settled
            .lines
            .iter()
            .filter(|d| {
                !self.delivered.contains(d.path())
                    && !active.fast_delivered.iter().any(|f| f.path() == d.path())
                    && !active.fast_lines.iter().any(|f| f.path() == d.path())
            })
            .cloned()
            .collect();
        let new_documents = remaining.len();
        if let Some(cap) = self.turn_cap {
            remaining.truncate(cap.get().saturating_sub(active.fast_delivered.len()));
        }
        if remaining.is_empty() && lines.is_empty() {
            let reason = if settled.documents.is_empty() && settled.lines.is_empty() {
                DiscardReason::NoRelevantResults
            } else if new_documents == 0 {
                DiscardReason::AlreadyDelivered
            } else {
                DiscardReason::TurnCapReached
            };
            return Delivery::Discarded(active.finish_discarded(reason));
        }
        let latency = active.started.elapsed();
        let shown = Rendered::within(remaining, lines, self.clock.now(), self.context_budget);
        active.finish_delivered(at, settled.strategy, shown.count());
        Delivery::Delivered(self.record_delivery(
            Phase::Refined,
            settled.strategy,
            at,
            shown,
            latency,
        ))
    }

    /// Marks what `shown` holds whole delivered: only what the model is shown. A document given
    /// as a line stays eligible.
    fn record_delivery(
        &mut self,
        phase: Phase,
        strategy: Strategy,
        point: DeliveredAt,
        shown: Rendered,
        latency: Duration,
    ) -> DeliveredMemory {
        self.delivered
            .extend(shown.documents.iter().map(|d| d.path().to_path_buf()));
        DeliveredMemory {
            phase,
            strategy,
            point,
            documents: shown.documents,
            lines: shown.lines,
            prompt: shown.prompt,
            latency,
        }
    }
}
