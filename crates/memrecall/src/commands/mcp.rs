//! `memrecall mcp`: memory recall as a Model Context Protocol server on stdin and stdout (the
//! server is `recall_mcp`'s).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use memory_scan::ScannedDocument;
use recall_mcp::{McpError, MemoryServer};

use super::Failure;
use super::roots::{RootArgs, resolve_roots};
use crate::output::RankRow;
use agent_hooks::{Agent, Environment, Layout};

/// `memrecall mcp`'s command line.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
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
pub(crate) fn run(args: &McpArgs) -> Result<(), Failure> {
    let layout = args
        .layout
        .or(args.agent.map(agent_hooks::default_layout))
        .unwrap_or(Layout::Memrecall);
    let roots = resolve_roots(&RootArgs {
        project: args.project.clone(),
        user: args.user.clone(),
        layout: Some(layout),
    })?;
    // Tools wait for the settled recall, so the delivery design does not apply here; the
    // delivery rule does, to what settles without a selector.
    let settings = crate::config::recall_options(&Environment::from_process())
        .map_err(|error| Failure::selector(error.to_string()))?;
    let runtime = super::runtime()?;
    let served = runtime.block_on(async {
        let server = MemoryServer::new(roots, settings, args.read_only, explain)?;
        recall_mcp::serve_stdio(server).await
    });
    // Standard input is read on a blocking thread that may still wait for a byte; it must not
    // keep the process alive once the session has ended.
    runtime.shutdown_timeout(Duration::from_millis(100));
    served.map_err(|error| match error {
        McpError::Recall(error) => Failure::selector(error.to_string()),
        other => Failure::from(anyhow::Error::new(other)),
    })
}

/// `explain_recall`'s text: `memrecall rank`'s, for the first `rows` of the ranking.
fn explain(query: &str, documents: &[Arc<ScannedDocument>], rows: usize) -> String {
    let ranked: Vec<RankRow> = RankRow::rank(query, documents)
        .into_iter()
        .take(rows)
        .collect();
    let verdicts = crate::output::token_verdicts(query, documents);
    RankRow::to_text(query, &ranked, &verdicts, documents.len())
}
