//! `memrecall mcp`: memory recall as a Model Context Protocol server on stdin and stdout.
//!
//! Tools: `recall_memories`, `list_memories`, `explain_recall` and (unless `--read-only`)
//! `save_memory`. Every memory is also a read-only resource, `memory://project/<path>` or
//! `memory://user/<path>`, where `<path>` is its path below the root, percent-encoded. A
//! resource is looked up among the documents a scan of the roots found, never opened by the
//! path in its URI, so nothing outside the roots can be reached through one.
//!
//! A request the server cannot parse or route gets a protocol error: a line that is not JSON a
//! parse error, a string that is not Unicode an invalid-params error (see [`stdio`]), and the
//! server reads on; a tool argument the model
//! can fix (a file that exists, a name that leaves the root) gets a tool result marked as an
//! error, whose text says what to change. The server ends when the client closes its input.

mod params;
mod resources;
mod save;
mod stdio;
mod tools;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use memory_scan::{DocumentCache, MemoryRoots, ScannedDocument, Scope};
use recall_facade::{MemoryRecall, RecallConfig};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::{ErrorData, ServiceExt as _};

use crate::commands::roots::{RootArgs, resolve_roots};
use crate::failure::Failure;
use agent_hooks::layout::RecallRoots;
use agent_hooks::{Agent, Environment, Layout};

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
const URI_PREFIX: &str = "memory://";

/// `memrecall mcp`'s command line.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// The agent running the server: its memory layout gives the default roots.
    #[arg(long, value_enum)]
    agent: Option<Agent>,
    /// Whose memory layout gives the default roots [default: the agent's, else memrecall's].
    #[arg(long, value_enum)]
    layout: Option<Layout>,
    /// Project memory root [default: the layout's for the current directory].
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// User memory root [default: the layout's].
    #[arg(long, value_name = "DIR")]
    user: Option<PathBuf>,
    /// Offer no save_memory tool: the server only reads memory.
    #[arg(long)]
    read_only: bool,
}

/// Runs the server until the client closes stdin.
pub fn run(args: &McpArgs) -> Result<(), Failure> {
    let layout = args
        .layout
        .or(args.agent.map(agent_hooks::default_layout))
        .unwrap_or(Layout::Memrecall);
    let roots = resolve_roots(&RootArgs {
        project: args.project.clone(),
        user: args.user.clone(),
        layout,
    })?;
    // Tools wait for the settled recall, so the delivery design does not apply here; the
    // delivery rule does, to what settles without a selector.
    let settings =
        crate::config::recall_options(&Environment::from_process()).map_err(Failure::selector)?;
    let runtime = crate::failure::runtime()?;
    let served = runtime.block_on(async {
        let server = MemoryServer::new(roots, settings, args.read_only)?;
        let (transport, written) = stdio::transport();
        let service = server
            .clone()
            .serve(transport)
            .await
            .map_err(|e| anyhow::anyhow!("the MCP session did not start: {e}"))?;
        let ended = service.waiting().await;
        server.close().await;
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, written).await;
        ended
            .map(|_| ())
            .map_err(|e| Failure::from(anyhow::anyhow!("the MCP session failed: {e}")))
    });
    // Standard input is read on a blocking thread that may still wait for a byte; it must not
    // keep the process alive once the session has ended.
    runtime.shutdown_timeout(Duration::from_millis(100));
    served
}

/// The server: the roots, one recall session and one scan cache shared by every request.
#[derive(Debug, Clone)]
pub struct MemoryServer {
    state: Arc<State>,
    tool_router: ToolRouter<Self>,
}

#[derive(Debug)]
struct State {
    roots: MemoryRoots,
    /// Recalls run one at a time: the session's turns are sequential.
    recall: tokio::sync::Mutex<MemoryRecall>,
    /// For listing, explaining and resources.
    cache: DocumentCache,
}

impl MemoryServer {
    /// Builds the server; must be called inside the runtime.
    fn new(
        recall_roots: RecallRoots,
        options: recall_facade::RecallOptions,
        read_only: bool,
    ) -> Result<Self, Failure> {
        let roots = recall_roots.memory_roots();
        let mut config = RecallConfig::with_roots(roots.project.clone(), roots.user.clone());
        config.options = options;
        config.scanner = recall_roots.catalogs.into();
        let recall = MemoryRecall::new(config).map_err(|e| Failure::selector(e.to_string()))?;
        let mut tool_router = Self::tool_router();
        if read_only {
            tool_router.remove_route("save_memory");
        }
        Ok(Self {
            state: Arc::new(State {
                roots,
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
