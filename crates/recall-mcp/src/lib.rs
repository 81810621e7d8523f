#![forbid(unsafe_code)]
//! Memory recall as a Model Context Protocol server on stdin and stdout, on the official SDK
//! (`rmcp`): what `memrecall mcp` serves to agents that look memory up themselves.
//!
//! Tools: `recall_memories`, `list_memories`, `explain_recall` and (unless `--read-only`)
//! `save_memory`. Every memory is also a read-only resource, `memory://project/<path>` or
//! `memory://user/<path>`, where `<path>` is its path below the root, percent-encoded. A
//! resource is looked up among the documents a scan of the roots found, never opened by the
//! path in its URI, so nothing outside the roots can be reached through one.
//!
//! A request the server cannot parse or route gets a protocol error: a line that is not JSON a
//! parse error, a string that is not Unicode an invalid-params error (see `stdio`), and the
//! server reads on; a tool argument the model
//! can fix (a file that exists, a name that leaves the root) gets a tool result marked as an
//! error, whose text says what to change. The server ends when the client closes its input.
//!
//! # Example
//!
//! ```
//! use agent_hooks::layout::RecallRoots;
//! use recall_mcp::MemoryServer;
//!
//! let dir = tempfile::tempdir()?;
//! let roots = RecallRoots { project: Some(dir.path().to_path_buf()), user: None, catalogs: None };
//! let runtime = tokio::runtime::Runtime::new()?;
//! let explain: recall_mcp::Explain = |query, documents, _| format!("{query}: {}", documents.len());
//! let server = runtime.block_on(async {
//!     MemoryServer::new(roots, recall_facade::RecallOptions::default(), true, explain)
//! })?;
//! // recall_mcp::serve_stdio(server) would now answer a client on stdin and stdout.
//! # drop(server);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod params;
mod resources;
mod save;
mod stdio;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use memory_scan::{DocumentCache, MemoryRoots, ScannedDocument, Scope};
use recall_facade::{MemoryRecall, RecallConfig};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::{ErrorData, ServiceExt as _};

use agent_hooks::layout::RecallRoots;

/// Most memories `list_memories` shows.
const MAX_LISTED: usize = 50;
/// Most ranked memories `explain_recall` shows.
const MAX_EXPLAINED: usize = 10;
/// Most memories one recall returns (the selector's limit).
const MAX_RECALLED: usize = 5;
/// The longest query accepted, in bytes.
const MAX_QUERY_BYTES: usize = 16 * 1024;
/// How long the server waits, once the client is gone, to write the catalogs.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
const SECONDS_PER_DAY: u64 = 86_400;

/// Serves `server` on this process's standard input and output until the client closes its
/// input, then writes the catalogs the recalls brought up to date. Must be called inside a
/// multi-threaded runtime.
pub async fn serve_stdio(server: MemoryServer) -> Result<(), McpError> {
    let (transport, written) = stdio::transport();
    let service = server
        .clone()
        .serve(transport)
        .await
        .map_err(|error| McpError::NotStarted(Box::new(error)))?;
    let ended = service.waiting().await;
    server.close().await;
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, written).await;
    ended.map(|_| ()).map_err(McpError::Failed)
}

/// Why the server cannot start or serve.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The recall session cannot be built (a selector that cannot be configured).
    #[error(transparent)]
    Recall(#[from] recall_facade::FacadeError),
    /// The MCP session did not start.
    #[error("the MCP session did not start: {0}")]
    NotStarted(#[source] Box<rmcp::service::ServerInitializeError>),
    /// The MCP session's task ended in an error (it panicked or its runtime shut down).
    #[error("the MCP session failed: {0}")]
    Failed(#[source] tokio::task::JoinError),
}

/// The text `explain_recall` answers for a query, given every scanned document and the most
/// rows to show: the ranking with each field's contribution (memrecall's is `memrecall rank`'s
/// text).
pub type Explain = fn(query: &str, documents: &[Arc<ScannedDocument>], rows: usize) -> String;

/// The server: the roots, one recall session and one scan cache shared by every request.
#[derive(Debug, Clone)]
pub struct MemoryServer {
    state: Arc<State>,
    tool_router: ToolRouter<Self>,
}

#[derive(Debug)]
struct State {
    roots: MemoryRoots,
    /// The text of `explain_recall`.
    explain: Explain,
    /// Recalls run one at a time: the session's turns are sequential.
    recall: tokio::sync::Mutex<MemoryRecall>,
    /// For listing, explaining and resources.
    cache: DocumentCache,
}

impl MemoryServer {
    /// Builds the server over `recall_roots`, recalling with `options`, without the
    /// `save_memory` tool when `read_only`, explaining rankings with `explain`; must be called
    /// inside the runtime.
    pub fn new(
        recall_roots: RecallRoots,
        options: recall_facade::RecallOptions,
        read_only: bool,
        explain: Explain,
    ) -> Result<Self, McpError> {
        let roots = recall_roots.memory_roots();
        let mut config = RecallConfig::with_roots(roots.project.clone(), roots.user.clone());
        config.options = options;
        config.scanner = recall_roots.catalogs.into();
        let recall = MemoryRecall::new(config)?;
        let mut tool_router = Self::tool_router();
        if read_only {
            tool_router.remove_route("save_memory");
        }
        Ok(Self {
            state: Arc::new(State {
                roots,
                explain,
                recall: tokio::sync::Mutex::new(recall),
                cache: DocumentCache::new(),
            }),
            tool_router,
        })
    }

    /// Writes the catalogs the recalls brought up to date, within a grace period.
    async fn close(&self) {
        let recall = self.state.recall.lock().await;
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, recall.write_catalogs()).await;
    }

    /// Every document of both roots, project first, each scope by relative path.
    async fn scan(&self) -> Result<Vec<Arc<ScannedDocument>>, ErrorData> {
        let state = Arc::clone(&self.state);
        tokio::task::spawn_blocking(move || state.cache.scan_recall(&state.roots))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the scan stopped: {e}"), None))?
            .map(|scan| scan.documents)
            .map_err(|e| ErrorData::internal_error(format!("cannot scan memory: {e}"), None))
    }

    fn root(&self, scope: Scope) -> Option<&PathBuf> {
        match scope {
            Scope::Project => self.state.roots.project.as_ref(),
            Scope::User => self.state.roots.user.as_ref(),
        }
    }
}
