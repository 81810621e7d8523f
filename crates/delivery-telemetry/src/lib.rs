//! Telemetry for recall and delivery: the `memory.recall` and `memory.recall.delivery` events and
//! the sinks that receive them.
//!
//! The exactly-once terminal delivery event is enforced by types. It knows nothing of files,
//! scoring or selectors.
//!
//! - [`RecallEvent`] and [`DeliveryEvent`] carry the fields each documents, no more;
//!   [`TelemetryEvent`] tags them with their name under `"event"` in JSON.
//! - [`Phase`] (delivery stage) and [`Strategy`] (selection method) are separate on purpose: a
//!   refined delivery is `heuristic` when the selector failed, and that must stay
//!   distinguishable from "the fast result arrived first".
//! - [`DeliveryTelemetry::new`] hands out one [`FastDelivery`] (at most one `fast` event) and one
//!   [`TerminalDelivery`] (exactly one `refined`/`discarded` event, an `abort` discard if dropped
//!   unused) per recall.
//! - [`InitialWait`] on every delivery event says how the recall's initial point ended
//!   (for example a confident fast result, or a weak one held until the ceiling); the fast token
//!   takes the narrower [`FastWait`], and the terminal token carries what
//!   [`TerminalDelivery::note_initial`] recorded into its one event.
//! - Sinks: [`TracingSink`], [`RecordingSink`], [`JsonLinesSink`], [`FanOutSink`], [`NullSink`].
//!   Emitting never fails for the caller; a sink that cannot write logs a warning instead.
//! - Latencies are measured by the caller and passed in as [`std::time::Duration`]s: this crate
//!   owns no clock.
//!
//! # A sink receiving a turn's events
//!
//! A sink is anything that takes events; this one counts the documents that reached the model.
//! Each recall hands out its two tokens: the fast one may emit once, the terminal one emits
//! exactly once (here a refined delivery after a tool result).
//!
//! ```
//! use std::sync::Arc;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use std::time::Duration;
//! use delivery_telemetry::{
//!     DeliveredAt, DeliveryPoint, DeliveryTelemetry, FastWait, Strategy, TelemetryEvent,
//!     TelemetrySink,
//! };
//!
//! #[derive(Debug, Default)]
//! struct DeliveredDocuments(AtomicUsize);
//!
//! impl TelemetrySink for DeliveredDocuments {
//!     fn emit(&self, event: &TelemetryEvent) {
//!         if let TelemetryEvent::Delivery(delivery) = event
//!             && delivery.delivery_point != DeliveryPoint::Discarded
//!         {
//!             self.0.fetch_add(delivery.docs_selected, Ordering::Relaxed);
//!         }
//!     }
//! }
//!
//! let sink = Arc::new(DeliveredDocuments::default());
//! let (fast, terminal) = DeliveryTelemetry::new(sink.clone());
//! // The first model request got the two lexical documents after 12 ms…
//! fast.emit(FastWait::Published, 2, Duration::from_millis(12));
//! // …and the model's three picks went in after a tool result, 900 ms into the recall.
//! terminal.delivered(DeliveredAt::ToolResult, Strategy::Model, 3, Duration::from_millis(900));
//! assert_eq!(sink.0.load(Ordering::Relaxed), 5);
//! ```

#![forbid(unsafe_code)]

mod delivery;
mod error;
mod event;
mod rotating;
mod sink;

pub use delivery::{DeliveryTelemetry, FastDelivery, TerminalDelivery};
pub use error::TelemetryError;
pub use event::{
    DeliveredAt, DeliveryEvent, DeliveryPoint, DiscardReason, FastWait, InitialWait, Phase,
    RecallEvent, SelectorErrorEvent, Strategy, TelemetryEvent, duration_ms,
};
pub use rotating::{
    DEFAULT_KEEP_FILES, DEFAULT_MAX_FILE_BYTES, RotatingSink, RotatingSinkError, RotationPolicy,
    TELEMETRY_FILE_EXTENSION, TimedEvent,
};
pub use sink::{
    DroppedEvents, FanOutSink, JsonLinesSink, NullSink, RecordingSink, TelemetrySink, TracingSink,
    emit_recall, read_json_lines,
};
