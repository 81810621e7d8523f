//! One recall per user query: scan, rank, publish the fast result, ask the selector, settle; and
//! the per-turn delivery handle that decides what reaches the model and when.
//!
//! It owns time (the 100 ms initial ceiling) and exclusion of already-delivered documents. It
//! knows nothing of configuration files, default paths or the command line.
//!
//! The flow of a turn, as an agent loop drives it:
//! 1. [`RecallSession::begin_turn`] starts the recall task (scan → rank → fast result →
//!    selector → settle).
//! 2. [`RecallSession::initial`] waits at most [`FIRST_PROMPT_CEILING`]: a settled result is
//!    delivered `refined`; otherwise a published fast result (≤ 2 documents) is delivered `fast`
//!    and the recall stays pending; otherwise nothing. Under [`DeliveryDesign::Gated`] only a
//!    confident fast result ends the wait early (see [`judge_fast`]); a weak one is held until
//!    the recall settles or the ceiling passes.
//! 3. [`RecallSession::after_tool_result`] (after each tool result, zero wait) delivers a
//!    settled recall minus what the fast phase already sent.
//! 4. [`RecallSession::end_turn`] discards a recall that is still pending.
//!
//! # A session over a memory tree
//!
//! With no selector, a recall settles with the lexical result, which the initial point
//! delivers once it is ready:
//!
//! ```
//! use std::sync::Arc;
//! use delivery_telemetry::RecordingSink;
//! use memory_scan::MemoryRoots;
//! use recall_lifecycle::{RecallSession, SessionConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tree = tempfile::tempdir()?;
//! std::fs::write(
//!     tree.path().join("deploy.md"),
//!     "---\nname: Deploy checklist\ndescription: Steps before every deploy\ntype: project\n---\n\n\
//!      Tag the release, then run the smoke suite.\n",
//! )?;
//! let roots = MemoryRoots { project: Some(tree.path().to_path_buf()), user: None };
//! let sink = Arc::new(RecordingSink::new());
//!
//! # tokio::runtime::Runtime::new()?.block_on(async {
//! let mut session = RecallSession::new(SessionConfig::new(roots, sink.clone()));
//! session.begin_turn("what do we do before a deploy?", &[]);
//! let mut delivery = session.initial().await;
//! if delivery.delivered().is_none() {
//!     // The scan outlasted the 100 ms wait (a slow disk); the result follows a tool call.
//!     session.wait_settled(std::time::Duration::from_secs(30)).await;
//!     delivery = session.after_tool_result();
//! }
//! let memory = delivery.delivered().expect("the checklist is recalled");
//! assert!(memory.prompt.contains("Deploy checklist"));
//! session.end_turn();
//! // One `memory.recall` event, and one terminal delivery event for the recall.
//! assert_eq!(sink.recalls().len(), 1);
//! # });
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]

mod confidence;
mod prompt;
mod recall;
mod session;

pub use confidence::{FastConfidence, judge_fast};
/// What of a ranking is delivered; chosen per session ([`SessionConfig::delivery_rule`]).
pub use lexical_score::delivery::DeliveryRule;
/// Which delivered documents are shown whole and which as one line; chosen per session
/// ([`SessionConfig::tiering`]).
pub use lexical_score::delivery::{Tier, Tiering};
pub use prompt::{
    Clock, FixedClock, LINES_HEADER, Lines, Rendered, SystemClock, TRUNCATED_NOTE, age_in_days,
    fit_context, printable, render_prompt, render_tiered_prompt, utf16_len,
};
pub use recall::{
    FastResult, RecallScanError, RecallState, RecallTimings, ScanOutcome, SettledRecall,
    candidate_id,
};
pub use session::{CancelReason, DeliveredMemory, Delivery, RecallSession, SessionConfig};

/// The first-prompt ceiling: the most a turn waits at its initial point for something to deliver.
/// A ceiling set by measurement, not a public setting; every other use of the 100 ms (the hook's
/// wait for its server, the reports' reference line) derives from this constant.
pub const FIRST_PROMPT_CEILING: std::time::Duration = std::time::Duration::from_millis(100);

/// Which delivery design a session follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum DeliveryDesign {
    /// The shipped design: bounded initial wait ending on the fast result, fast delivery,
    /// refined delivery later without repeats.
    #[default]
    FastPath,
    /// The single-path design, a baseline to measure against: a zero-wait initial consume and no
    /// fast result (`docs/design.md#the-problem-a-good-answer-that-arrives-too-late`). A
    /// measurement tool, not a design to ship: it exists only with the crate's `measurement`
    /// feature, which the evaluation enables.
    #[cfg(feature = "measurement")]
    SinglePath,
    /// The confidence-gated fast path: the initial wait ends early on a settled recall or on a
    /// [`FastConfidence::Confident`] fast result only. A weak fast result is held: a recall that
    /// settles before the ceiling is delivered instead, otherwise the weak result is delivered at
    /// the ceiling and the recall stays pending for the tool-result point, as in the fast path.
    Gated,
}

impl DeliveryDesign {
    /// The name used in configuration, reports and `recall --json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FastPath => "fast-path",
            #[cfg(feature = "measurement")]
            Self::SinglePath => "single-path",
            Self::Gated => "gated",
        }
    }
}
