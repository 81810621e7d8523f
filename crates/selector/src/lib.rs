//! The model selector port: given a query and candidate memories, pick the few that clearly help.
//!
//! Holds the [`Selector`] trait, the manifest builder and answer validator every implementation
//! shares, and a scriptable mock. It takes plain candidates and knows nothing of files, scoring,
//! delivery or networks: a model client is an adapter that implements the trait (the
//! OpenAI-compatible HTTP one is the `selector-http` crate), so depending on the port pulls in no
//! HTTP stack.
//!
//! # The rules every selector follows
//!
//! - The model sees a [`Manifest`]: one line per candidate, in candidate order,
//!   `- [type] /absolute/path.md (2026-11-30T12:00:00.000Z): description`, followed by
//!   ` [keywords: a, b]` when the memory has keywords. Descriptions are cut to
//!   [`DESCRIPTION_MAX_CHARS`] characters and keywords to [`KEYWORDS_MAX_CHARS`] (never inside a
//!   character, and whole keywords only), and line breaks in them become spaces; the whole text stays within [`MANIFEST_MAX_BYTES`], skipping a line that does
//!   not fit while later, shorter ones may still go in. Bodies are never sent.
//! - The answer is `{"selected_memories": ["/absolute/path.md", …]}`. [`validate_answer`] rejects
//!   any other shape, an id that was not in the manifest, or more ids than the limit; repeated ids
//!   collapse to their first occurrence.
//! - A call gives up after [`SELECTOR_CEILING`] at most and returns
//!   [`SelectorError::Cancelled`] promptly once the caller's [`CancellationToken`] fires.
//!
//! # Writing a new [`Selector`]
//!
//! An adapter for your own model client builds the [`Manifest`] from the candidates, shows it to
//! the model, and lets [`validate_answer`] hold the answer to the shared rules. This one stands in
//! for a model with a rule (pick the candidates whose description mentions the query); a real
//! client would send [`system_prompt`] and [`user_message`] and read the reply with
//! [`parse_answer_content`]:
//!
//! ```
//! use selector::{async_trait, CancellationToken, Manifest, SelectionRequest, Selector, SelectorError};
//! use serde_json::json;
//!
//! #[derive(Debug)]
//! struct DescriptionMatch;
//!
//! #[async_trait]
//! impl Selector for DescriptionMatch {
//!     async fn select(
//!         &self,
//!         request: SelectionRequest<'_>,
//!         cancel: CancellationToken,
//!     ) -> Result<Vec<String>, SelectorError> {
//!         if cancel.is_cancelled() {
//!             return Err(SelectorError::Cancelled);
//!         }
//!         let manifest = Manifest::build(request.candidates);
//!         let query = request.query.to_lowercase();
//!         let picked: Vec<&str> = request
//!             .candidates
//!             .iter()
//!             .filter(|c| manifest.contains(&c.id) && c.description.to_lowercase().contains(&query))
//!             .map(|c| c.id.as_str())
//!             .take(request.limit)
//!             .collect();
//!         let answer = json!({ "selected_memories": picked });
//!         Ok(selector::validate_answer(&answer, &manifest, request.limit)?)
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let candidates = vec![selector::Candidate {
//!     id: "/home/me/.memory/project/deploy.md".to_owned(),
//!     memory_type: "project".to_owned(),
//!     mtime: std::time::SystemTime::UNIX_EPOCH,
//!     description: "Deploy checklist".to_owned(),
//!     keywords: vec![],
//! }];
//! let request = SelectionRequest::new("deploy", &candidates, 5);
//! let picked = DescriptionMatch.select(request, CancellationToken::new()).await.unwrap();
//! assert_eq!(picked, ["/home/me/.memory/project/deploy.md"]);
//!
//! // An answer naming a path the manifest never listed is refused, whoever produced it.
//! let manifest = Manifest::build(&candidates);
//! let forged = json!({ "selected_memories": ["/etc/passwd"] });
//! assert_eq!(
//!     selector::validate_answer(&forged, &manifest, 5),
//!     Err(selector::AnswerError::NotInManifest { position: 0 }),
//! );
//! # });
//! ```

#![forbid(unsafe_code)]

use std::time::{Duration, SystemTime};

mod content;
mod error;
mod manifest;
mod mock;
mod prompt;

pub use async_trait::async_trait;
pub use tokio_util::sync::CancellationToken;

pub use content::parse_answer_content;
pub use error::{AnswerError, JsonKind, SelectorError, SharedError};
pub use manifest::{ANSWER_KEY, Manifest, format_timestamp, validate_answer};
pub use mock::{MockAnswer, MockSelector, MockStep, RecordedCall};
pub use prompt::{answer_schema, system_prompt, user_message};

/// The number of memories a selector may pick by default.
pub const DEFAULT_LIMIT: usize = 5;
/// The longest a selector call may take before it is abandoned.
pub const SELECTOR_CEILING: Duration = Duration::from_secs(30);
/// The largest manifest, in UTF-8 bytes counting newlines.
pub const MANIFEST_MAX_BYTES: usize = 25_000;
/// The longest description shown in the manifest, in characters.
pub const DESCRIPTION_MAX_CHARS: usize = 512;
/// The most characters of keywords shown in the manifest per candidate, separators included.
pub const KEYWORDS_MAX_CHARS: usize = 160;

/// A memory the model may pick. `id` is the absolute path (the identity).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Candidate {
    /// The absolute path of the memory file; two scopes' same relative path stay distinct.
    pub id: String,
    /// The memory type word (`user`, `feedback`, `project` or `reference`).
    pub memory_type: String,
    /// The last modification time, shown to the model as an ISO-8601 UTC timestamp.
    pub mtime: SystemTime,
    /// The one-line description from the frontmatter (may be empty).
    pub description: String,
    /// The keywords from the frontmatter, when it has them (shown after the description, cut to
    /// [`KEYWORDS_MAX_CHARS`] characters in all).
    pub keywords: Vec<String>,
}

/// What a selector is asked. Built with [`SelectionRequest::new`]; fields may be added, each
/// with a default.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SelectionRequest<'a> {
    /// The user's query.
    pub query: &'a str,
    /// The candidates, most promising first; the manifest keeps this order.
    pub candidates: &'a [Candidate],
    /// The most ids the answer may hold.
    pub limit: usize,
    /// Tools the agent used recently, whose usage notes the model should skip.
    pub recent_tools: &'a [String],
}

impl<'a> SelectionRequest<'a> {
    /// A request for at most `limit` of `candidates` for `query`, with no recently used tools.
    pub fn new(query: &'a str, candidates: &'a [Candidate], limit: usize) -> Self {
        Self {
            query,
            candidates,
            limit,
            recent_tools: &[],
        }
    }

    /// The same request, naming the tools the agent used recently.
    #[must_use]
    pub fn with_recent_tools(self, recent_tools: &'a [String]) -> Self {
        Self {
            recent_tools,
            ..self
        }
    }
}

/// Picks the memories that clearly help with a query.
#[async_trait]
pub trait Selector: Send + Sync + std::fmt::Debug {
    /// Returns the selected ids (validated against the manifest; ≤ limit; unique; in answer order).
    async fn select(
        &self,
        request: SelectionRequest<'_>,
        cancel: CancellationToken,
    ) -> Result<Vec<String>, SelectorError>;

    /// A word on what this selector sent that a failure may well be about (for example, that it
    /// sent no API key), said with the failure; `None` (the default) when there is none.
    fn failure_note(&self) -> Option<String> {
        None
    }
}
