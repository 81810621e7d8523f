//! The two telemetry events and the vocabulary they are made of.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How the documents of a result were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Strategy {
    /// Nothing was selected (no lexical match, or the recall ended before selecting).
    None,
    /// The deterministic lexical scorer chose (fast result, or fallback after a selector failure).
    Heuristic,
    /// The model selector chose.
    Model,
}

impl Strategy {
    /// The wire name, as it appears in JSON and tracing fields.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Heuristic => "heuristic",
            Self::Model => "model",
        }
    }
}

/// Which delivery stage an event belongs to; independent of [`Strategy`].
///
/// A refined delivery is normally `model` but `heuristic` when the selector failed, so reading the
/// stage off the strategy would merge "the fast result came first" with "the selector broke".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Phase {
    /// The deterministic result delivered when the initial wait ran out before the recall settled.
    Fast,
    /// The settled result of the recall (delivered or discarded).
    Refined,
}

impl Phase {
    /// The wire name, as it appears in JSON and tracing fields.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fast => "fast",
            Self::Refined => "refined",
        }
    }
}

/// Where a delivery event ended up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DeliveryPoint {
    /// Injected into the first prompt of a user query turn.
    Initial,
    /// Injected alongside a tool result later in the turn.
    ToolResult,
    /// Never delivered; the event carries a [`DiscardReason`].
    Discarded,
}

impl DeliveryPoint {
    /// The wire name, as it appears in JSON and tracing fields.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Initial => "initial",
            Self::ToolResult => "tool_result",
            Self::Discarded => "discarded",
        }
    }
}

/// Where a result was delivered (the non-discarded delivery points).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DeliveredAt {
    /// Injected into the first prompt of a user query turn.
    Initial,
    /// Injected alongside a tool result later in the turn.
    ToolResult,
}

impl From<DeliveredAt> for DeliveryPoint {
    fn from(at: DeliveredAt) -> Self {
        match at {
            DeliveredAt::Initial => Self::Initial,
            DeliveredAt::ToolResult => Self::ToolResult,
        }
    }
}

/// Why a recall result was never delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DiscardReason {
    /// The turn ended without a tool call, so no later delivery point came.
    NoSafeDeliveryPoint,
    /// A new user query superseded the recall.
    NewQuery,
    /// The session was reset.
    Reset,
    /// The turn was aborted, or the terminal token was dropped without a decision.
    Abort,
    /// The process is shutting down.
    Shutdown,
    /// Every selected document had already been delivered by the fast phase.
    AlreadyDelivered,
    /// The settled recall selected nothing.
    NoRelevantResults,
    /// The turn had already delivered as many documents as its cap allows (see the session's
    /// `turn_cap`); what the settled recall selected beyond them may be recalled later.
    TurnCapReached,
}

impl DiscardReason {
    /// The wire name, as it appears in JSON and tracing fields.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::NoSafeDeliveryPoint => "no_safe_delivery_point",
            Self::NewQuery => "new_query",
            Self::Reset => "reset",
            Self::Abort => "abort",
            Self::Shutdown => "shutdown",
            Self::AlreadyDelivered => "already_delivered",
            Self::NoRelevantResults => "no_relevant_results",
            Self::TurnCapReached => "turn_cap_reached",
        }
    }
}

/// How the initial point of a recall ended: the `initial_wait` field of
/// `memory.recall.delivery`.
///
/// The delivery design decides which values occur: the single-path design only ever records
/// [`ZeroWait`](Self::ZeroWait); the fast-path design [`Settled`](Self::Settled),
/// [`Fast`](Self::Fast), [`Empty`](Self::Empty) or [`Cancelled`](Self::Cancelled); the gated
/// design any of those but `ZeroWait` and `Fast`, plus the three fast-result judgements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum InitialWait {
    /// The single-path design: no wait; whatever had settled at that instant was taken.
    ZeroWait,
    /// The recall settled inside the wait with no fast result held; the settled result was taken.
    Settled,
    /// The fast-path design: the wait ended on the fast result as soon as it was published.
    Fast,
    /// The gated design: a confident fast result ended the wait as soon as it was published.
    ConfidentFast,
    /// The gated design: a weak fast result was held and the recall settled before the ceiling,
    /// so the settled result was taken instead.
    WeakFastSuperseded,
    /// The gated design: a weak fast result was held until the ceiling and delivered there.
    WeakFastAtCeiling,
    /// The ceiling passed with nothing to deliver.
    Empty,
    /// The turn was cancelled during the wait.
    Cancelled,
}

impl InitialWait {
    /// The wire name, as it appears in JSON and tracing fields.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ZeroWait => "zero_wait",
            Self::Settled => "settled",
            Self::Fast => "fast",
            Self::ConfidentFast => "confident_fast",
            Self::WeakFastSuperseded => "weak_fast_superseded",
            Self::WeakFastAtCeiling => "weak_fast_at_ceiling",
            Self::Empty => "empty",
            Self::Cancelled => "cancelled",
        }
    }
}

/// How an initial wait that delivered the fast result ended: the subset of [`InitialWait`] a
/// `fast` event can carry, so a fast event claiming "settled" cannot be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FastWait {
    /// The fast-path design: delivered as soon as it was published.
    Published,
    /// The gated design: confident, delivered as soon as it was published.
    Confident,
    /// The gated design: weak, held until the ceiling and delivered there.
    WeakAtCeiling,
}

impl From<FastWait> for InitialWait {
    fn from(wait: FastWait) -> Self {
        match wait {
            FastWait::Published => Self::Fast,
            FastWait::Confident => Self::ConfidentFast,
            FastWait::WeakAtCeiling => Self::WeakFastAtCeiling,
        }
    }
}

macro_rules! display_as_str {
    ($($ty:ty),*) => {$(
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}

display_as_str!(
    Strategy,
    Phase,
    DeliveryPoint,
    DeliveredAt,
    DiscardReason,
    InitialWait
);

impl DeliveredAt {
    /// The wire name, as it appears in JSON and tracing fields.
    pub fn as_str(self) -> &'static str {
        DeliveryPoint::from(self).as_str()
    }
}

/// `memory.recall`: one per recall that its caller did not abort.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecallEvent {
    /// Length of the user query in characters.
    pub query_length: usize,
    /// Topic documents the recall scan read.
    pub docs_scanned: usize,
    /// Documents in the settled result.
    pub docs_selected: usize,
    /// Documents of the lexical top five the delivery trim left out of the fast result and the
    /// heuristic result (0 when the trim is off). Read as 0 from an event that lacks it.
    #[serde(default)]
    pub docs_trimmed: usize,
    /// How the settled result was chosen.
    pub strategy: Strategy,
    /// Wall time of the whole recall, in milliseconds.
    pub duration_ms: f64,
    /// Time spent scanning the memory tree, in milliseconds.
    pub scan_duration_ms: f64,
    /// Time from recall start to fast-result publication, when one was published.
    pub fast_duration_ms: Option<f64>,
    /// Time spent in the model selector, when it was asked.
    pub selector_duration_ms: Option<f64>,
}

/// `memory.recall.delivery`: what happened to a result of a recall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeliveryEvent {
    /// Delivery stage (fast or refined).
    pub phase: Phase,
    /// Where the result went, or `discarded`.
    pub delivery_point: DeliveryPoint,
    /// Why the result was discarded; `null` unless `delivery_point` is `discarded`.
    #[serde(default)]
    pub discard_reason: Option<DiscardReason>,
    /// How the result was chosen.
    pub strategy: Strategy,
    /// Documents in the delivered (or discarded) result.
    pub docs_selected: usize,
    /// Milliseconds since the recall started.
    pub latency_ms: f64,
    /// How the recall's initial point ended. Always set on a `fast` event; on the
    /// terminal event, `null` only when the recall ended before its initial point was consumed.
    #[serde(default)]
    pub initial_wait: Option<InitialWait>,
}

/// Either event, tagged with its name under `"event"` when serialized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event")]
#[non_exhaustive]
pub enum TelemetryEvent {
    /// A `memory.recall` event.
    #[serde(rename = "memory.recall")]
    Recall(RecallEvent),
    /// A `memory.recall.delivery` event.
    #[serde(rename = "memory.recall.delivery")]
    Delivery(DeliveryEvent),
    /// A `memory.selector.error` event.
    #[serde(rename = "memory.selector.error")]
    SelectorError(SelectorErrorEvent),
}

/// The model selector failed and the lexical result stood in; recorded by the recall's
/// lifecycle when the recall settles, once per failed recall (a turn ending before the answer is
/// not a failure).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectorErrorEvent {
    /// One stable word for the kind of failure: `timeout`, `transport`, `http_401`, …
    pub kind: String,
    /// The failure as one line, with secrets already redacted.
    pub message: String,
    /// What the selector says the failure may well be about (for example, that no API key was
    /// sent), as one line; absent when it says nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl TelemetryEvent {
    /// Name of the recall event.
    pub const RECALL: &'static str = "memory.recall";
    /// Name of the delivery event.
    pub const DELIVERY: &'static str = "memory.recall.delivery";
    /// Name of the selector error event.
    pub const SELECTOR_ERROR: &'static str = "memory.selector.error";

    /// The event name: `memory.recall`, `memory.recall.delivery` or `memory.selector.error`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Recall(_) => Self::RECALL,
            Self::Delivery(_) => Self::DELIVERY,
            Self::SelectorError(_) => Self::SELECTOR_ERROR,
        }
    }
}

impl From<RecallEvent> for TelemetryEvent {
    fn from(event: RecallEvent) -> Self {
        Self::Recall(event)
    }
}

impl From<DeliveryEvent> for TelemetryEvent {
    fn from(event: DeliveryEvent) -> Self {
        Self::Delivery(event)
    }
}

/// Converts a caller-measured duration to the fractional milliseconds the events carry.
pub fn duration_ms(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
