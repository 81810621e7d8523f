//! The recall of the current query, and the exactly-once terminal event that ends it.

use std::sync::Arc;

use delivery_telemetry::{DeliveredAt, DiscardReason, FastDelivery, Strategy, TerminalDelivery};
use memory_scan::ScannedDocument;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::CancelReason;
use crate::recall::{RecallState, SettledRecall};

/// The recall of the current query and what has been delivered from it. Emitting its terminal
/// event is the only way to end it: every path that does so consumes the whole value, and
/// dropping it unfinished (the session dropped without
/// [`RecallSession::shutdown`](super::RecallSession::shutdown), a panic) cancels the recall task
/// and records the recall as discarded (`abort`).
#[derive(Debug)]
pub(super) struct ActiveRecall {
    pub(super) started: Instant,
    pub(super) cancel: CancellationToken,
    pub(super) state: watch::Receiver<RecallState>,
    pub(super) fast: Option<FastDelivery>,
    /// `None` only once the terminal event has been emitted, so `Drop` stays silent.
    pub(super) terminal: Option<TerminalDelivery>,
    pub(super) fast_delivered: Vec<Arc<ScannedDocument>>,
    /// Documents the fast result gave as one line each: not delivered, not given again as a line
    /// this turn.
    pub(super) fast_lines: Vec<Arc<ScannedDocument>>,
    pub(super) initial_consumed: bool,
}

impl ActiveRecall {
    pub(super) fn finish_delivered(mut self, at: DeliveredAt, strategy: Strategy, count: usize) {
        if let Some(terminal) = self.terminal.take() {
            terminal.delivered(at, strategy, count, self.started.elapsed());
        }
    }

    pub(super) fn finish_discarded(mut self, reason: DiscardReason) -> DiscardReason {
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
    pub(super) fn cancel(mut self, reason: CancelReason) -> DiscardReason {
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
