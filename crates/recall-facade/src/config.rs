//! What a recall session is built from: the roots, the options a product exposes to its users,
//! the scanner and where telemetry goes.

use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::sync::Arc;

use delivery_telemetry::{TelemetrySink, TracingSink};
use memory_scan::{CatalogStore, DocumentCache, MemoryRoots, RecallScanner};
use recall_lifecycle::{Clock, DeliveryDesign, DeliveryRule, SystemClock, Tiering};
use selector::Selector;

#[cfg(feature = "http")]
use selector_http::{HttpSelector, HttpSelectorConfig};

/// Which selector picks memories after the lexical pass.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum SelectorChoice {
    /// No model: every recall settles with the deterministic lexical result.
    #[default]
    None,
    /// An OpenAI-compatible chat-completions endpoint (feature `http`, on by default).
    #[cfg(feature = "http")]
    Http(HttpSelectorConfig),
    /// Any other implementation of the port, or one already built and shared between sessions.
    Custom(Arc<dyn Selector>),
}

impl SelectorChoice {
    /// The selector this choice names, built (an HTTP selector's client is created here, once;
    /// share the result to share its connections). `None` for [`SelectorChoice::None`].
    pub fn build(self) -> Result<Option<Arc<dyn Selector>>, FacadeError> {
        Ok(match self {
            Self::None => None,
            #[cfg(feature = "http")]
            Self::Http(http) => Some(Arc::new(HttpSelector::new(http)?)),
            Self::Custom(selector) => Some(selector),
        })
    }
}

impl From<Option<Arc<dyn Selector>>> for SelectorChoice {
    /// A selector already built (`Some`), or none.
    fn from(selector: Option<Arc<dyn Selector>>) -> Self {
        selector.map_or(Self::None, Self::Custom)
    }
}

/// What the sessions' recalls scan the memory trees with.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ScannerChoice {
    /// A document cache of the session's own that reads the trees and keeps no catalog.
    Uncatalogued,
    /// A document cache of the session's own that keeps a persistent catalog per root, so the
    /// first recall of a process reads only the files that changed since the catalog was
    /// written (see `memory_scan::DocumentCache::with_catalog_store`). `CatalogStore::Under`
    /// keeps the catalogs in a directory of the caller's, for roots whose place the caller must
    /// not write in.
    Catalog(CatalogStore),
    /// [`ScannerChoice::Catalog`] for a process that makes one recall and exits, such as a hook
    /// started per prompt: each catalog's file is read whole with one read rather than part by
    /// part (see `memory_scan::DocumentCache::for_one_recall`).
    OneRecall(CatalogStore),
    /// A scanner the caller shares between sessions over the same roots, such as a
    /// `memory_scan::DocumentCache` or a watched cache kept up to date by file system events.
    Shared(Arc<dyn RecallScanner>),
}

impl Default for ScannerChoice {
    /// A catalog inside each root.
    fn default() -> Self {
        Self::Catalog(CatalogStore::InRoot)
    }
}

impl From<Option<CatalogStore>> for ScannerChoice {
    /// A catalog kept where `store` says, or none.
    fn from(store: Option<CatalogStore>) -> Self {
        store.map_or(Self::Uncatalogued, Self::Catalog)
    }
}

impl ScannerChoice {
    fn build(self) -> Arc<dyn RecallScanner> {
        match self {
            Self::Uncatalogued => Arc::new(DocumentCache::new()),
            Self::Catalog(store) => Arc::new(DocumentCache::with_catalog_store(store)),
            Self::OneRecall(store) => Arc::new(DocumentCache::for_one_recall(store)),
            Self::Shared(scanner) => scanner,
        }
    }
}

/// The choices a product hands its users: which selector, how recall delivers and how much.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RecallOptions {
    /// The model selector (default: none).
    pub selector: SelectorChoice,
    /// The delivery design (default [`DeliveryDesign::FastPath`]: a bounded first wait that
    /// ends on the fast result, the refined result later without repeats).
    /// [`DeliveryDesign::Gated`] ends the first prompt's wait early only on a confident fast
    /// result, so a fast model's answer can replace a weak lexical match.
    pub design: DeliveryDesign,
    /// What of the lexical ranking the fast result and the heuristic result deliver (default
    /// [`DeliveryRule::SHIPPED`]: documents with evidence beyond uninformative query tokens,
    /// trimmed relative to the lead). [`DeliveryRule::UNTRIMMED`] delivers the whole lexical
    /// top five. The
    /// model's pick is never trimmed.
    pub rule: DeliveryRule,
    /// Which documents of a lexical result are shown whole and which as one line each (default
    /// [`Tiering::SHIPPED`]: a note holding fewer than half of the prompt's informative words
    /// is named, not shown; [`Tiering::Off`] shows every one whole).
    pub tiering: Tiering,
    /// Most documents one refined delivery carries: 1 to 5 (default 5, the most a prompt
    /// carries); [`MemoryRecall::new`](crate::MemoryRecall::new) rejects any other value.
    pub limit: usize,
    /// Most documents one turn delivers in all, fast and refined together (default `None`: no
    /// cap). Without it a turn may reach seven documents: the fast result's two at the first
    /// request, then up to [`limit`](Self::limit) refined ones after a tool result. With a cap,
    /// the fast delivery is cut to it and the refined one to what the fast one left; when
    /// nothing is left the refined result is discarded as
    /// [`DiscardReason::TurnCapReached`](crate::DiscardReason::TurnCapReached). Documents cut
    /// this way are not marked delivered, so a later turn may still recall them.
    pub turn_cap: Option<NonZeroUsize>,
    /// Most UTF-16 units one delivery's prompt holds: what the agent takes (default `None`: the
    /// whole prompt). Over it a delivery keeps its first documents whose prompt fits, or the
    /// first one cut to it; only those are marked delivered.
    pub context_budget: Option<NonZeroUsize>,
}

impl Default for RecallOptions {
    /// No selector, the fast-path design, the shipped rule, limit 5, no turn cap.
    fn default() -> Self {
        Self {
            selector: SelectorChoice::None,
            design: DeliveryDesign::FastPath,
            rule: DeliveryRule::SHIPPED,
            tiering: Tiering::SHIPPED,
            limit: selector::DEFAULT_LIMIT,
            turn_cap: None,
            context_budget: None,
        }
    }
}

/// Everything a recall session is built from.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RecallConfig {
    /// The project and user memory roots; a `None` root is an empty scope.
    pub roots: MemoryRoots,
    /// The selector and the delivery choices.
    pub options: RecallOptions,
    /// What the recalls scan the roots with (default: a catalog inside each root).
    pub scanner: ScannerChoice,
    /// Where telemetry goes (default: `tracing`).
    pub telemetry: Arc<dyn TelemetrySink>,
    /// The clock prompts compute memory ages against.
    pub clock: Arc<dyn Clock>,
}

impl RecallConfig {
    /// A configuration over `roots` with the defaults: [`RecallOptions::default`], a catalog in
    /// each root, tracing telemetry, the system clock.
    pub fn new(roots: MemoryRoots) -> Self {
        Self {
            roots,
            options: RecallOptions::default(),
            scanner: ScannerChoice::default(),
            telemetry: Arc::new(TracingSink),
            clock: Arc::new(SystemClock),
        }
    }

    /// A configuration over explicit project and user roots with the defaults.
    pub fn with_roots(project_root: Option<PathBuf>, user_root: Option<PathBuf>) -> Self {
        Self::new(MemoryRoots {
            project: project_root,
            user: user_root,
        })
    }

    /// The lifecycle's session configuration: the one place a session is assembled.
    pub(crate) fn into_session(self) -> Result<recall_lifecycle::SessionConfig, FacadeError> {
        let options = self.options;
        if !(1..=selector::DEFAULT_LIMIT).contains(&options.limit) {
            return Err(FacadeError::Limit {
                limit: options.limit,
            });
        }
        let mut session = recall_lifecycle::SessionConfig::new(self.roots, self.telemetry);
        session.selector = options.selector.build()?;
        session.clock = self.clock;
        session.limit = options.limit;
        session.design = options.design;
        session.turn_cap = options.turn_cap;
        session.context_budget = options.context_budget;
        session.delivery_rule = options.rule;
        session.tiering = options.tiering;
        session.cache = self.scanner.build();
        Ok(session)
    }
}

/// Why a recall session could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FacadeError {
    /// The HTTP selector could not be built.
    #[cfg(feature = "http")]
    #[error("selector misconfigured: {0}")]
    Selector(#[from] selector_http::ConfigError),
    /// The selection limit is outside 1 to [`selector::DEFAULT_LIMIT`].
    #[error(
        "the selection limit must be 1 to {max} documents, not {limit}",
        max = selector::DEFAULT_LIMIT
    )]
    Limit {
        /// The limit given.
        limit: usize,
    },
}
