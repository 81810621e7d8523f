//! What the initial point of a turn does, decided from one reading of the recall's state.

use std::sync::Arc;

use delivery_telemetry::{FastWait, InitialWait};

use crate::DeliveryDesign;
use crate::confidence::FastConfidence;
use crate::recall::{FastResult, RecallState};

/// What the initial point does once its wait is over, decided from one reading of the
/// recall's state. Each variant carries only the waits that can lead to it, so the recorded
/// `initial_wait` cannot disagree with what was delivered.
#[derive(Debug)]
pub(super) enum InitialDecision {
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
pub(super) enum SettledWait {
    #[cfg(feature = "measurement")]
    ZeroWait,
    Settled,
    WeakFastSuperseded,
}

/// How a wait that ended with nothing to deliver went.
#[derive(Debug, Clone, Copy)]
pub(super) enum NothingWait {
    #[cfg(feature = "measurement")]
    ZeroWait,
    Empty,
}

impl InitialDecision {
    pub(super) fn of(design: DeliveryDesign, cancelled: bool, state: &RecallState) -> Self {
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

    pub(super) fn wait(&self) -> InitialWait {
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
