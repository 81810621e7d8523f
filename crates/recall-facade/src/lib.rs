//! A small session API for agent loops: configure roots, selector and telemetry once, then begin
//! a turn, take the initial delivery, take the tool-result delivery, end the turn.
//!
//! It is the one place a recall session is assembled: the roots, the options a product offers
//! its users ([`RecallOptions`]: selector, delivery design, delivery rule, limit, turn cap), the
//! scanner ([`ScannerChoice`]: a catalog of the session's own, or a cache shared between
//! sessions) and telemetry go in through [`RecallConfig`]. Behaviour lives in the crates below
//! it; it knows nothing of the command line.
//!
//! Feature `http` (default): [`SelectorChoice::Http`], an OpenAI-compatible selector over
//! HTTP. Without it the facade depends on no HTTP stack; bring a selector of your own through
//! [`SelectorChoice::Custom`].
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
//! recall.wait_settled(Duration::from_secs(30)).await;
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
//! A process that makes one recall and exits (a hook started per prompt, a command line) takes
//! it with [`recall_once`], which reads each catalog whole and, through [`OneRecall::finish`],
//! writes the catalogs before the process exits.
//!
//! The roots are the caller's to give: the facade knows no home and no layout. memrecall's own
//! (`$MEMRECALL_HOME`, else `~/.memrecall`, holding `projects/<project folder>/memory` and
//! `memories`, the project named after its git root) and each agent's are resolved by the
//! `agent-hooks` crate (`agent_hooks::layout::resolve`), the one place a working directory
//! becomes memory roots. A project folder's name is [`memory_scan::sanitise_project_path`] of
//! the project's absolute path.

#![forbid(unsafe_code)]

mod config;
mod once;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use config::{FacadeError, RecallConfig, RecallOptions, ScannerChoice, SelectorChoice};
pub use delivery_telemetry::{
    DeliveredAt, DiscardReason, JsonLinesSink, Phase, RecordingSink, Strategy, TelemetryEvent,
    TelemetrySink, TracingSink,
};
pub use memory_scan::{CatalogStore, MemoryRoots, RecallScanner};
pub use once::{OnceConfig, OneRecall, recall_once};
pub use recall_lifecycle::{
    CancelReason, Clock, DeliveredMemory, Delivery, DeliveryDesign, DeliveryRule,
    FIRST_PROMPT_CEILING, FixedClock, Lines, RecallState, Rendered, SettledRecall, SystemClock,
    Tiering, fit_context, printable,
};
pub use selector::Selector;
#[cfg(feature = "http")]
pub use selector_http::{ApiKey, HttpSelector, HttpSelectorConfig};

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
        let design = config.options.design;
        Ok(Self {
            design,
            session: recall_lifecycle::RecallSession::new(config.into_session()?),
        })
    }

    /// The delivery design this session follows.
    pub fn design(&self) -> DeliveryDesign {
        self.design
    }

    /// Begins a user turn: starts recall for `query` (cancelling any recall of the previous
    /// query). `recent_tools` are tool names used recently, for active-tool noise filtering.
    pub fn begin_turn(&mut self, query: &str, recent_tools: &[String]) {
        self.session.begin_turn(query, recent_tools);
    }

    /// The memory for the first model request of the turn; waits at most the first-prompt
    /// ceiling ([`FIRST_PROMPT_CEILING`]).
    pub async fn initial(&mut self) -> Delivery {
        self.session.initial().await
    }

    /// The memory to add after a tool result; never waits.
    pub fn after_tool_result(&mut self) -> Delivery {
        self.session.after_tool_result()
    }

    /// Records documents (by path) the model was shown another way, such as a memory tool it
    /// called, as delivered: no later point of the session delivers them again.
    pub fn note_shown_elsewhere(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        self.session.note_shown_elsewhere(paths);
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

    /// Waits until the turn's recall settles or `timeout` passes, consuming nothing: for a
    /// caller that models a tool call lasting that long. Whether it settled.
    pub async fn wait_settled(&self, timeout: Duration) -> bool {
        self.session.wait_settled(timeout).await
    }

    /// Waits until the turn's recall publishes its fast result or settles, or `timeout`
    /// passes, consuming nothing: for latency reports. Whether either happened.
    pub async fn wait_published(&self, timeout: Duration) -> bool {
        self.session.wait_published(timeout).await
    }

    /// What the latest recall has published (fast result, settled result, timings, scan
    /// report), for reporting.
    pub fn latest_recall(&self) -> Option<RecallState> {
        self.session.latest_recall()
    }

    /// `documents` (from a published result, for a caller that shows them itself) rendered as a
    /// delivery's are: one prompt, with the session's clock, within its context budget; nothing
    /// is marked delivered (see [`recall_lifecycle::RecallSession::render`]).
    pub fn render(&self, documents: Vec<Arc<memory_scan::ScannedDocument>>) -> Rendered {
        self.session.render(documents)
    }

    /// Whether a recall is under way (started and not yet delivered in full or discarded).
    pub fn has_pending_recall(&self) -> bool {
        self.session.has_pending_recall()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selection_limit_outside_one_to_five_is_rejected_and_one_to_five_accepted() {
        let config = |limit| {
            let mut config = RecallConfig::with_roots(None, None);
            config.options.limit = limit;
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
            RecallConfig::with_roots(None, None).options.design,
            DeliveryDesign::FastPath
        );
    }

    #[tokio::test]
    async fn a_session_reports_the_delivery_design_it_was_built_with() {
        let mut config = RecallConfig::with_roots(None, None);
        config.options.design = DeliveryDesign::Gated;
        let recall = MemoryRecall::new(config).unwrap();
        assert_eq!(recall.design(), DeliveryDesign::Gated);
    }
}
