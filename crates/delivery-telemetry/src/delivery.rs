//! Per-recall delivery tokens that make "at most one fast, exactly one terminal event" a property
//! of the types rather than of careful callers.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::event::{
    DeliveredAt, DeliveryEvent, DeliveryPoint, DiscardReason, FastWait, InitialWait, Phase,
    Strategy, TelemetryEvent, duration_ms,
};
use crate::sink::TelemetrySink;

/// Entry point: one call per recall yields its two delivery tokens.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use delivery_telemetry::{DeliveredAt, DeliveryTelemetry, FastWait, RecordingSink, Strategy};
///
/// let sink = Arc::new(RecordingSink::new());
/// let (fast, terminal) = DeliveryTelemetry::new(sink.clone());
/// fast.emit(FastWait::Published, 2, Duration::from_millis(100));
/// terminal.delivered(DeliveredAt::ToolResult, Strategy::Model, 3, Duration::from_millis(900));
/// assert_eq!(sink.deliveries().len(), 2);
/// ```
///
/// Each token is consumed by the call that emits its event, so a second emission is a compile
/// error, not a runtime check:
///
/// ```compile_fail,E0382
/// use std::sync::Arc;
/// use std::time::Duration;
/// use delivery_telemetry::{DeliveryTelemetry, FastWait, RecordingSink};
///
/// let (fast, _terminal) = DeliveryTelemetry::new(Arc::new(RecordingSink::new()));
/// fast.emit(FastWait::Published, 2, Duration::from_millis(100));
/// fast.emit(FastWait::Published, 2, Duration::from_millis(100)); // use of moved value: `fast`
/// ```
///
/// ```compile_fail,E0382
/// use std::sync::Arc;
/// use std::time::Duration;
/// use delivery_telemetry::{DeliveredAt, DeliveryTelemetry, DiscardReason, RecordingSink, Strategy};
///
/// let (_fast, terminal) = DeliveryTelemetry::new(Arc::new(RecordingSink::new()));
/// terminal.delivered(DeliveredAt::Initial, Strategy::Model, 1, Duration::from_millis(50));
/// // use of moved value: `terminal`
/// terminal.discarded(DiscardReason::Reset, Strategy::Model, 1, Duration::from_millis(60));
/// ```
#[derive(Debug)]
pub struct DeliveryTelemetry;

impl DeliveryTelemetry {
    /// Creates the fast and terminal tokens of one recall, both reporting to `sink`.
    #[allow(
        clippy::new_ret_no_self,
        reason = "one constructor hands out both halves of the per-recall obligation"
    )]
    #[must_use = "dropping the terminal token immediately records the recall as discarded (abort)"]
    pub fn new(sink: Arc<dyn TelemetrySink>) -> (FastDelivery, TerminalDelivery) {
        (
            FastDelivery {
                sink: Arc::clone(&sink),
            },
            TerminalDelivery {
                sink: Some(sink),
                on_drop: DropContext::default(),
                initial: None,
            },
        )
    }
}

/// Permission to emit at most one `fast` delivery event for a recall.
///
/// Dropping it unused emits nothing: a recall that settles inside the initial wait has no fast
/// phase at all.
pub struct FastDelivery {
    sink: Arc<dyn TelemetrySink>,
}

impl FastDelivery {
    /// Emits the fast event: phase `fast`, delivery point `initial`, strategy `heuristic`, and
    /// `wait`, how the initial wait that delivered it ended.
    ///
    /// A fast result is always the deterministic lexical top, delivered on the first prompt, so
    /// point and strategy are fixed. `latency` is measured by the caller from the recall start.
    pub fn emit(self, wait: FastWait, docs_selected: usize, latency: Duration) {
        self.sink.emit(&TelemetryEvent::Delivery(DeliveryEvent {
            phase: Phase::Fast,
            delivery_point: DeliveryPoint::Initial,
            discard_reason: None,
            strategy: Strategy::Heuristic,
            docs_selected,
            latency_ms: duration_ms(latency),
            initial_wait: Some(wait.into()),
        }));
    }
}

impl fmt::Debug for FastDelivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FastDelivery").finish_non_exhaustive()
    }
}

/// What the implicit `abort` event reports when a [`TerminalDelivery`] is dropped unused.
#[derive(Debug, Clone, Copy)]
struct DropContext {
    strategy: Strategy,
    docs_selected: usize,
    latency: Duration,
}

impl Default for DropContext {
    fn default() -> Self {
        Self {
            strategy: Strategy::None,
            docs_selected: 0,
            latency: Duration::ZERO,
        }
    }
}

/// Obligation to emit exactly one terminal (`refined` or `discarded`) event for a recall.
///
/// [`delivered`](Self::delivered) and [`discarded`](Self::discarded) consume the token. If it is
/// dropped without either — a panic unwinding through the owner, a task cancelled mid-turn, a
/// forgotten branch — its `Drop` emits a `discarded` event with reason `abort`, so exactly one
/// terminal event exists per recall even on paths nobody planned for. That implicit event reports
/// strategy `none`, zero documents and zero latency unless the owner kept
/// [`note_progress`](Self::note_progress) up to date (this crate owns no clock).
#[must_use = "dropping the terminal token records the recall as discarded (abort)"]
pub struct TerminalDelivery {
    // `None` once the terminal event has been emitted, so `Drop` stays silent.
    sink: Option<Arc<dyn TelemetrySink>>,
    on_drop: DropContext,
    /// How the recall's initial point ended, once it has; carried by the terminal event.
    initial: Option<InitialWait>,
}

impl TerminalDelivery {
    /// Emits the terminal event for a delivered result: phase `refined`, delivered at `at`.
    pub fn delivered(
        mut self,
        at: DeliveredAt,
        strategy: Strategy,
        docs_selected: usize,
        latency: Duration,
    ) {
        self.finish(DeliveryEvent {
            phase: Phase::Refined,
            delivery_point: at.into(),
            discard_reason: None,
            strategy,
            docs_selected,
            latency_ms: duration_ms(latency),
            initial_wait: None,
        });
    }

    /// Emits the terminal event for a dropped result: phase `refined`, point `discarded`, `reason`.
    pub fn discarded(
        mut self,
        reason: DiscardReason,
        strategy: Strategy,
        docs_selected: usize,
        latency: Duration,
    ) {
        self.finish(discard_event(reason, strategy, docs_selected, latency));
    }

    /// Records what the recall knows so far, for the `abort` event an unexpected drop would emit.
    ///
    /// Purely optional; it never emits anything itself.
    pub fn note_progress(&mut self, strategy: Strategy, docs_selected: usize, latency: Duration) {
        self.on_drop = DropContext {
            strategy,
            docs_selected,
            latency,
        };
    }

    /// Records how the recall's initial point ended, for the terminal event (whenever it
    /// comes) to carry as `initial_wait`. A recall has one initial point: a second call replaces
    /// the first. Never emits anything itself.
    pub fn note_initial(&mut self, wait: InitialWait) {
        self.initial = Some(wait);
    }

    fn finish(&mut self, mut event: DeliveryEvent) {
        if let Some(sink) = self.sink.take() {
            event.initial_wait = self.initial;
            sink.emit(&TelemetryEvent::Delivery(event));
        }
    }
}

fn discard_event(
    reason: DiscardReason,
    strategy: Strategy,
    docs_selected: usize,
    latency: Duration,
) -> DeliveryEvent {
    DeliveryEvent {
        phase: Phase::Refined,
        delivery_point: DeliveryPoint::Discarded,
        discard_reason: Some(reason),
        strategy,
        docs_selected,
        latency_ms: duration_ms(latency),
        initial_wait: None,
    }
}

impl Drop for TerminalDelivery {
    fn drop(&mut self) {
        let DropContext {
            strategy,
            docs_selected,
            latency,
        } = self.on_drop;
        self.finish(discard_event(
            DiscardReason::Abort,
            strategy,
            docs_selected,
            latency,
        ));
    }
}

impl fmt::Debug for TerminalDelivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TerminalDelivery")
            .field("pending", &self.sink.is_some())
            .finish_non_exhaustive()
    }
}
