//! A small session API for agent loops: configure roots, selector and telemetry once, then begin
//! a turn, take the initial delivery, take the tool-result delivery, end the turn.
//!
//! It is wiring only; behaviour lives in the crates below it. It knows nothing of the command
//! line.
//!
//! A turn over a memory tree (here a temporary one holding one project memory):
//!
//! ```
//! use std::time::Duration;
//! use recall_facade::{MemoryRecall, RecallConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tree = tempfile::tempdir()?;
//! std::fs::create_dir_all(tree.path().join("project"))?;
//! std::fs::write(
//!     tree.path().join("project/rollback.md"),
//!     "---\nname: Release rollback runbook\ndescription: How to roll back a bad release\n\
//!      type: project\n---\n\nRun `deploy rollback --to previous`.\n",
//! )?;
//! let config = RecallConfig::with_roots(Some(tree.path().join("project")), None);
//!
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! let mut recall = MemoryRecall::new(config)?;
//! recall.begin_turn("how do we roll back a release?", &[]);
//! let mut prompts = Vec::new();
//! // At most 100 ms: what is ready goes in front of the first model request.
//! if let Some(memory) = recall.initial().await.delivered() {
//!     prompts.push(memory.prompt.clone());
//! }
//! // … the model calls a tool (here: until the recall has settled); after its result, what
//! // arrived since goes with the next model request, never a document twice.
//! recall.session().wait_settled(Duration::from_secs(30)).await;
//! if let Some(memory) = recall.after_tool_result().delivered() {
//!     prompts.push(memory.prompt.clone());
//! }
//! recall.end_turn();
//! assert!(prompts.concat().contains("Release rollback runbook"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok(())
//! # }
//! ```
//!
//! Default roots: `$MEMRECALL_HOME` (else `~/.memrecall`) holds
//! `projects/<sanitised project path>/memory` for the project scope and `memories` for the user
//! scope. The sanitised path is the absolute project path with every character that is not an
//! ASCII letter or digit replaced by `-` (`/home/ana/shop` → `-home-ana-shop`). A sanitised path
//! longer than a file name may be (255 bytes) is cut short and ends in `_` and a hash of the full
//! path instead; see [`sanitise_project_path`].

#![forbid(unsafe_code)]

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use delivery_telemetry::{
    DeliveredAt, DiscardReason, JsonLinesSink, Phase, RecordingSink, Strategy, TelemetryEvent,
    TelemetrySink, TracingSink,
};

pub use memory_scan::MemoryRoots;
pub use recall_lifecycle::{
    CancelReason, Clock, DeliveredMemory, Delivery, DeliveryDesign, DeliveryRule, FixedClock,
    Lines, RecallState, SettledRecall, SystemClock, printable, render_prompt,
};
pub use selector::Selector;
pub use selector_http::{HttpSelector, HttpSelectorConfig};

/// Which selector picks memories after the lexical pass.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum SelectorChoice {
    /// No model: every recall settles with the deterministic lexical result.
    #[default]
    None,
    /// An OpenAI-compatible chat-completions endpoint.
    Http(HttpSelectorConfig),
    /// Any other implementation of the port.
    Custom(Arc<dyn Selector>),
}

impl SelectorChoice {
    /// The selector this choice names, built (an HTTP selector's client is created here, once;
    /// share the result to share its connections). `None` for [`SelectorChoice::None`].
    pub fn build(self) -> Result<Option<Arc<dyn Selector>>, FacadeError> {
        Ok(match self {
            Self::None => None,
            Self::Http(http) => Some(Arc::new(HttpSelector::new(http)?)),
            Self::Custom(selector) => Some(selector),
        })
    }
}

/// Everything a recall session is built from.
#[derive(Debug, Clone)]
#[non_exhaustive]
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
    /// Most documents one refined delivery carries: 1 to 5 (default 5, the most a prompt
    /// carries); [`MemoryRecall::new`] rejects any other value.
    pub limit: usize,
    /// Whether recall keeps a persistent catalog under each memory root (default on): the first
    /// recall of a process then reads only files that changed since the catalog was written. See
    /// `memory_scan::DocumentCache::with_catalog`.
    pub catalog: bool,
    /// Where the catalogs are kept when [`catalog`](Self::catalog) is on (default: inside each
    /// root). `memory_scan::CatalogStore::Under` keeps them in a directory of the caller's, for
    /// roots whose place the caller must not write in.
    pub catalog_store: memory_scan::CatalogStore,
    /// The delivery design (default [`DeliveryDesign::FastPath`]: a bounded first wait that
    /// ends on the fast result, the refined result later without repeats).
    /// [`DeliveryDesign::Gated`] ends the first prompt's wait early only on a confident fast
    /// result, so a fast model's answer can replace a weak lexical match.
    pub delivery: DeliveryDesign,
    /// Most documents one turn delivers in all, fast and refined together (default `None`: no
    /// cap). Without it a turn may reach seven documents: the fast result's two at the first
    /// request, then up to [`limit`](Self::limit) refined ones after a tool result. With a cap,
    /// the fast delivery is cut to it and the refined one to what the fast one left; when
    /// nothing is left the refined result is discarded as
    /// [`DiscardReason::TurnCapReached`]. Documents cut this way are not marked delivered, so a
    /// later turn may still recall them.
    pub turn_cap: Option<NonZeroUsize>,
    /// What of the lexical ranking the fast result and the heuristic result deliver (default
    /// [`DeliveryRule::SHIPPED`]: documents with evidence beyond uninformative query tokens,
    /// trimmed relative to the lead). [`DeliveryRule::UNTRIMMED`] delivers the whole lexical top
    /// five. The model's pick is never trimmed.
    pub delivery_rule: DeliveryRule,
}

/// Why a recall session could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
            catalog_store: memory_scan::CatalogStore::InRoot,
            delivery: DeliveryDesign::FastPath,
            turn_cap: None,
            delivery_rule: DeliveryRule::SHIPPED,
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

/// The longest directory name [`sanitise_project_path`] returns, in bytes: the file-name limit of
/// ext4, XFS, Btrfs and APFS (NTFS allows 255 UTF-16 units, the same for an ASCII name).
pub const MAX_PROJECT_DIR_NAME_BYTES: usize = 255;

/// Hex digits of the path hash that ends a shortened name.
const PATH_HASH_HEX_DIGITS: usize = 16;

/// Turns an absolute project path into one directory name.
///
/// Every character that is not an ASCII letter or digit becomes `-`, so `/home/ana/shop.v2` gives
/// `-home-ana-shop-v2`. When that name is at most [`MAX_PROJECT_DIR_NAME_BYTES`] (255) bytes it is
/// the answer as it is: the rule every tool that finds memrecall's project roots follows.
///
/// A longer name could not be created (`ENAMETOOLONG`), so it is cut on a character boundary to
/// 238 bytes and followed by `_` and the 16 lowercase hex digits of the XXH3-64 hash (seed 0) of
/// the full path as given (its bytes as `OsStr::as_encoded_bytes` returns them, the raw bytes on
/// Unix). The result is exactly 255 bytes. The hash is a fixed, published algorithm, so a
/// project's directory does not move between builds or Rust versions, and two long paths that
/// share the kept prefix still get different names. `_` never occurs in an unshortened name, so
/// a shortened name cannot be taken by another project's unshortened one.
pub fn sanitise_project_path(path: &Path) -> String {
    let name: String = path
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if name.len() <= MAX_PROJECT_DIR_NAME_BYTES {
        return name;
    }
    let hash = twox_hash::XxHash3_64::oneshot(path.as_os_str().as_encoded_bytes());
    let kept = name.floor_char_boundary(MAX_PROJECT_DIR_NAME_BYTES - 1 - PATH_HASH_HEX_DIGITS);
    format!("{}_{hash:0PATH_HASH_HEX_DIGITS$x}", &name[..kept])
}

/// A recall session shaped like an agent's turn loop.
#[derive(Debug)]
pub struct MemoryRecall {
    session: recall_lifecycle::RecallSession,
    design: DeliveryDesign,
}

impl MemoryRecall {
    /// Builds the session (and the HTTP selector, when chosen). Must be called inside a tokio
    /// runtime before turns begin.
    pub fn new(config: RecallConfig) -> Result<Self, FacadeError> {
        if !(1..=selector::DEFAULT_LIMIT).contains(&config.limit) {
            return Err(FacadeError::Limit {
                limit: config.limit,
            });
        }
        let selector = config.selector.build()?;
        let roots = MemoryRoots {
            project: config.project_root,
            user: config.user_root,
        };
        let mut session = recall_lifecycle::SessionConfig::new(roots, config.telemetry);
        session.selector = selector;
        session.clock = config.clock;
        session.limit = config.limit;
        session.design = config.delivery;
        session.turn_cap = config.turn_cap;
        session.delivery_rule = config.delivery_rule;
        if config.catalog {
            session.cache = Arc::new(memory_scan::DocumentCache::with_catalog_store(
                config.catalog_store,
            ));
        }
        Ok(Self {
            design: config.delivery,
            session: recall_lifecycle::RecallSession::new(session),
        })
    }

    /// The delivery design this session follows.
    pub fn design(&self) -> DeliveryDesign {
        self.design
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

    /// Writes the catalogs that are behind the memory trees and waits for the writes; a process
    /// about to exit calls it so the next one starts from a current catalog (see
    /// [`recall_lifecycle::RecallSession::write_catalogs`]).
    pub async fn write_catalogs(&self) -> Vec<memory_scan::CatalogWrite> {
        self.session.write_catalogs().await
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

    /// An absolute path of `len` bytes: `/` then `x`s, ending in `tail`.
    fn long_path(len: usize, tail: &str) -> PathBuf {
        PathBuf::from(format!("/{}{tail}", "x".repeat(len - 1 - tail.len())))
    }

    #[test]
    fn a_selection_limit_outside_one_to_five_is_rejected_and_one_to_five_accepted() {
        let config = |limit| {
            let mut config = RecallConfig::with_roots(None, None);
            config.limit = limit;
            config
        };
        for limit in [0, selector::DEFAULT_LIMIT + 1, 50] {
            assert!(
                matches!(MemoryRecall::new(config(limit)), Err(FacadeError::Limit { limit: l }) if l == limit),
                "{limit}"
            );
        }
        for limit in 1..=selector::DEFAULT_LIMIT {
            assert!(MemoryRecall::new(config(limit)).is_ok(), "{limit}");
        }
    }

    #[test]
    fn the_default_delivery_design_is_the_fast_path() {
        assert_eq!(
            RecallConfig::with_roots(None, None).delivery,
            DeliveryDesign::FastPath
        );
    }

    #[tokio::test]
    async fn a_session_reports_the_delivery_design_it_was_built_with() {
        let mut config = RecallConfig::with_roots(None, None);
        config.delivery = DeliveryDesign::Gated;
        let recall = MemoryRecall::new(config).unwrap();
        assert_eq!(recall.design(), DeliveryDesign::Gated);
    }

    #[test]
    fn project_paths_sanitise_to_one_directory_name() {
        assert_eq!(
            sanitise_project_path(Path::new("/home/ana/shop.v2")),
            "-home-ana-shop-v2"
        );
    }

    #[test]
    fn a_path_whose_name_fits_in_255_bytes_keeps_its_unshortened_name() {
        let path = long_path(MAX_PROJECT_DIR_NAME_BYTES, "/shop");
        let expected = format!("-{}-shop", "x".repeat(MAX_PROJECT_DIR_NAME_BYTES - 6));
        assert_eq!(sanitise_project_path(&path), expected);
    }

    #[test]
    fn a_long_path_gives_a_name_of_at_most_255_bytes() {
        for len in [MAX_PROJECT_DIR_NAME_BYTES + 1, 382, 4000] {
            let name = sanitise_project_path(&long_path(len, "/shop"));
            assert!(
                name.len() <= MAX_PROJECT_DIR_NAME_BYTES,
                "{len}: {}",
                name.len()
            );
        }
    }

    #[test]
    fn a_long_non_ascii_path_gives_a_name_of_at_most_255_bytes() {
        let path = PathBuf::from(format!("/{}", "é".repeat(300)));
        let name = sanitise_project_path(&path);
        assert!(name.len() <= MAX_PROJECT_DIR_NAME_BYTES, "{}", name.len());
    }

    #[test]
    fn two_long_paths_differing_only_at_the_end_get_different_names() {
        let a = sanitise_project_path(&long_path(382, "/a"));
        let b = sanitise_project_path(&long_path(382, "/b"));
        assert_ne!(a, b);
    }

    #[test]
    fn two_long_paths_differing_only_in_punctuation_get_different_names() {
        let a = sanitise_project_path(&long_path(382, "/a.b"));
        let b = sanitise_project_path(&long_path(382, "/a-b"));
        assert_ne!(a, b);
    }

    #[test]
    fn a_long_path_name_is_stable_across_calls() {
        let path = long_path(382, "/shop");
        assert_eq!(sanitise_project_path(&path), sanitise_project_path(&path));
    }

    #[test]
    fn a_long_path_name_is_the_kept_prefix_then_the_pinned_xxh3_of_the_path() {
        // Pinned so that a change of the rule, which would move existing directories, fails here.
        // 1bd33f972d9e4dfa is XXH3-64 of the path as computed by the reference C library.
        let name = sanitise_project_path(&long_path(382, "/shop"));
        let expected = format!("-{}_1bd33f972d9e4dfa", "x".repeat(237));
        assert_eq!(name, expected);
    }

    #[test]
    fn a_long_project_path_gives_a_memory_directory_that_can_be_created() {
        let home = tempfile::tempdir().unwrap();
        let project = long_path(382, "/shop");
        let root = home
            .path()
            .join("projects")
            .join(sanitise_project_path(&project))
            .join("memory");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("a.md"), "x").unwrap();
    }
}
