//! What a delivery point produces, and why a caller abandons a recall.

use std::sync::Arc;
use std::time::Duration;

use delivery_telemetry::{DeliveredAt, DiscardReason, Phase, Strategy};
use memory_scan::ScannedDocument;

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
    /// The documents delivered whole, never one delivered earlier in the session.
    pub documents: Vec<Arc<ScannedDocument>>,
    /// Documents given as one line each (weak lexical matches): named, not delivered.
    pub lines: Vec<Arc<ScannedDocument>>,
    /// The rendered prompt text.
    pub prompt: String,
    /// Time since the recall started.
    pub latency: Duration,
}

/// What a delivery point produced.
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
