//! A small session API for agent loops: configure roots, selector and telemetry once, then begin
//! a turn, take the initial delivery, take the tool-result delivery, end the turn.
//!
//! It is wiring only; behaviour lives in the crates below it. It knows nothing of the command
//! line.
//!
//! ```no_run
//! # async fn demo() -> Result<(), recall_facade::FacadeError> {
//! use recall_facade::{MemoryRecall, RecallConfig};
//!
//! let config = RecallConfig::with_roots(Some("mem/project".into()), Some("mem/user".into()));
//! let mut recall = MemoryRecall::new(config)?;
//! recall.begin_turn("how do we roll back a release?", &[]);
//! if let Some(memory) = recall.initial().await.delivered() {
//!     println!("{}", memory.prompt); // prepend to the first model request
//! }
//! // … the model calls a tool; after its result:
//! if let Some(memory) = recall.after_tool_result().delivered() {
//!     println!("{}", memory.prompt); // append to the next model request
//! }
//! recall.end_turn();
//! # Ok(()) }
//! ```
//!
//! Default roots: `$MEMRECALL_HOME` (else `~/.memrecall`) holds
//! `projects/<sanitised project path>/memory` for the project scope and `memories` for the user
//! scope. The sanitised path is the absolute project path with every character that is not an
//! ASCII letter or digit replaced by `-` (`/home/ana/shop` → `-home-ana-shop`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use delivery_telemetry::{
    DeliveredAt, DiscardReason, JsonLinesSink, Phase, RecordingSink, Strategy, TelemetryEvent,
    TelemetrySink, TracingSink,
};
pub use memory_scan::MemoryRoots;
pub use recall_lifecycle::{
    CancelReason, Clock, DeliveredMemory, Delivery, FixedClock, RecallState, SettledRecall,
    SystemClock,
};
pub use selector::{HttpSelector, HttpSelectorConfig, Selector};

/// Which selector picks memories after the lexical pass.
#[derive(Debug, Clone, Default)]
pub enum SelectorChoice {
    /// No model: every recall settles with the deterministic lexical result.
    #[default]
    None,
    /// An OpenAI-compatible chat-completions endpoint.
    Http(HttpSelectorConfig),
    /// Any other implementation of the port.
    Custom(Arc<dyn Selector>),
}

/// Everything a recall session is built from.
#[derive(Debug, Clone)]
pub struct RecallConfig {
    /// The project memory root; `None` is an empty project scope.
    pub project_root: Option<PathBuf>,
    /// The user (cross-project) memory root; `None` is an empty user scope.
    pub user_root: Option<PathBuf>,
    /// The model selector.
    pub selector: SelectorChoice,
    /// Where telemetry goes (default: `tracing`).
    pub telemetry: Arc<dyn TelemetrySink>,
    /// The clock prompts compute memory ages against.
    pub clock: Arc<dyn Clock>,
    /// Most documents one refined delivery carries (default 5).
    pub limit: usize,
    /// Whether recall keeps a persistent catalog under each memory root (default on): the first
    /// recall of a process then reads only files that changed since the catalog was written. See
    /// `memory_scan::DocumentCache::with_catalog`.
    pub catalog: bool,
}

/// Why a recall session could not be built.
#[derive(Debug, thiserror::Error)]
pub enum FacadeError {
    /// Neither `$MEMRECALL_HOME` nor `$HOME` is set, so there are no default roots.
    #[error(
        "cannot find the memory home: set MEMRECALL_HOME or HOME, or pass the roots explicitly"
    )]
    NoHome,
    /// The project directory could not be made absolute.
    #[error("cannot resolve project directory {path}: {source}")]
    ProjectDir {
        /// The directory given.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The HTTP selector could not be built.
    #[error(transparent)]
    Selector(#[from] selector::SelectorError),
}

impl RecallConfig {
    /// A configuration over explicit roots with the defaults: no selector, tracing telemetry,
    /// limit 5.
    pub fn with_roots(project_root: Option<PathBuf>, user_root: Option<PathBuf>) -> Self {
        Self {
            project_root,
            user_root,
            selector: SelectorChoice::None,
            telemetry: Arc::new(TracingSink),
            clock: Arc::new(SystemClock),
            limit: selector::DEFAULT_LIMIT,
            catalog: true,
        }
    }

    /// A configuration over the default roots for `project_dir` (see the crate docs).
    pub fn for_project(project_dir: &Path) -> Result<Self, FacadeError> {
        let roots = default_roots(project_dir)?;
        Ok(Self::with_roots(roots.project, roots.user))
    }
}

/// The memory home: `$MEMRECALL_HOME`, else `~/.memrecall`.
pub fn memory_home() -> Result<PathBuf, FacadeError> {
    if let Some(home) = std::env::var_os("MEMRECALL_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(".memrecall"))
        .ok_or(FacadeError::NoHome)
}

/// The default project and user roots for a project directory.
pub fn default_roots(project_dir: &Path) -> Result<MemoryRoots, FacadeError> {
    let home = memory_home()?;
    let absolute = std::path::absolute(project_dir).map_err(|source| FacadeError::ProjectDir {
        path: project_dir.to_path_buf(),
        source,
    })?;
    Ok(MemoryRoots {
        project: Some(
            home.join("projects")
                .join(sanitise_project_path(&absolute))
                .join("memory"),
        ),
        user: Some(home.join("memories")),
    })
}

/// Turns an absolute project path into one directory name: every character that is not an
/// ASCII letter or digit becomes `-`.
pub fn sanitise_project_path(path: &Path) -> String {
    path.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// A recall session shaped like an agent's turn loop.
#[derive(Debug)]
pub struct MemoryRecall {
    session: recall_lifecycle::RecallSession,
}

impl MemoryRecall {
    /// Builds the session (and the HTTP selector, when chosen). Must be called inside a tokio
    /// runtime before turns begin.
    pub fn new(config: RecallConfig) -> Result<Self, FacadeError> {
        let selector: Option<Arc<dyn Selector>> = match config.selector {
            SelectorChoice::None => None,
            SelectorChoice::Http(http) => Some(Arc::new(HttpSelector::new(http)?)),
            SelectorChoice::Custom(selector) => Some(selector),
        };
        let roots = MemoryRoots {
            project: config.project_root,
            user: config.user_root,
        };
        let mut session = recall_lifecycle::SessionConfig::new(roots, config.telemetry);
        session.selector = selector;
        session.clock = config.clock;
        session.limit = config.limit;
        if config.catalog {
            session.cache = Arc::new(memory_scan::DocumentCache::with_catalog());
        }
        Ok(Self {
            session: recall_lifecycle::RecallSession::new(session),
        })
    }

    /// Begins a user turn: starts recall for `query` (cancelling any recall of the previous
    /// query). `recent_tools` are tool names used recently, for active-tool noise filtering.
    pub fn begin_turn(&mut self, query: &str, recent_tools: &[String]) {
        self.session.begin_query(query, recent_tools);
    }

    /// The memory for the first model request of the turn; waits at most 100 ms.
    pub async fn initial(&mut self) -> Delivery {
        self.session.consume_initial().await
    }

    /// The memory to add after a tool result; never waits.
    pub fn after_tool_result(&mut self) -> Delivery {
        self.session.consume_tool_result()
    }

    /// Ends the turn; a recall still pending is discarded.
    pub fn end_turn(&mut self) -> Delivery {
        self.session.end_turn()
    }

    /// Aborts the current turn (for example on Ctrl-C).
    pub fn abort(&mut self) -> Delivery {
        self.session.cancel(CancelReason::Abort)
    }

    /// Forgets what was delivered so far; the next recalls may deliver it again.
    pub fn reset(&mut self) {
        self.session.reset();
    }

    /// Ends the session.
    pub fn shutdown(self) {
        self.session.shutdown();
    }

    /// The underlying lifecycle session, for reporting (timings, scan report) and for callers
    /// that model a tool call's duration.
    pub fn session(&mut self) -> &mut recall_lifecycle::RecallSession {
        &mut self.session
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_paths_sanitise_to_one_directory_name() {
        assert_eq!(
            sanitise_project_path(Path::new("/home/ana/shop.v2")),
            "-home-ana-shop-v2"
        );
    }
}
