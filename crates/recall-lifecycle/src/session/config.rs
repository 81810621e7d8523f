//! What a session is built from.

use std::num::NonZeroUsize;
use std::sync::Arc;

use delivery_telemetry::TelemetrySink;
use lexical_score::delivery::{DeliveryRule, Tiering};
use memory_scan::{DocumentCache, MemoryRoots, RecallScanner};
use selector::Selector;

use crate::DeliveryDesign;
use crate::prompt::{Clock, SystemClock};

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
    /// The delivery design (default [`DeliveryDesign::FastPath`]).
    pub design: DeliveryDesign,
    /// Most documents one refined delivery may carry.
    pub limit: usize,
    /// What of the lexical ranking the fast result and the heuristic settle deliver (default
    /// [`DeliveryRule::SHIPPED`]; [`DeliveryRule::UNTRIMMED`] is the lexical top five). The
    /// model's pick is never trimmed.
    pub delivery_rule: DeliveryRule,
    /// Which documents of a lexical result are shown whole and which as one line each (default
    /// [`Tiering::SHIPPED`]; [`Tiering::Off`] shows every one whole). A document given as a
    /// line is not marked delivered: the model's pick, or a later turn, may still deliver it
    /// whole.
    pub tiering: Tiering,
    /// Most documents one turn delivers in all, fast and refined together; `None` (the
    /// default) leaves a turn at what the design gives it (up to the fast result's two plus
    /// `limit` refined). Documents cut by the cap are not marked delivered, so a later turn may
    /// recall them.
    pub turn_cap: Option<NonZeroUsize>,
    /// Most UTF-16 units one delivery's prompt may hold (what the agent takes); `None` (the
    /// default) leaves it whole. Over it, a delivery keeps its first documents whose prompt
    /// fits (or the first one, cut to it): only those are marked delivered, so what did not fit
    /// may be delivered later.
    pub context_budget: Option<NonZeroUsize>,
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
            delivery_rule: DeliveryRule::SHIPPED,
            tiering: Tiering::SHIPPED,
            turn_cap: None,
            context_budget: None,
            cache: Arc::new(DocumentCache::new()),
        }
    }
}
