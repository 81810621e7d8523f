//! The model selector port: given a query and candidate memories, pick the few that clearly help.
//!
//! Holds the `Selector` trait, the manifest builder and answer validator every implementation
//! shares, an OpenAI-compatible HTTP adapter and a scriptable mock. It takes plain candidates and
//! knows nothing of files, scoring or delivery.
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
//! # Pointing [`HttpSelector`] at a hosted service
//!
//! The base URL is the server root; `/v1/chat/completions` is appended (a base URL that already
//! ends in `/v1` gets only `/chat/completions`). The API key is read once, from the environment
//! variable named in the config (`OPENAI_API_KEY` by default), and sent as a bearer token.
//!
//! ```no_run
//! use selector::{CancellationToken, HttpSelector, HttpSelectorConfig, SelectionRequest, Selector};
//!
//! # async fn run(candidates: &[selector::Candidate]) -> Result<(), selector::SelectorError> {
//! let selector = HttpSelector::new(HttpSelectorConfig::new("https://api.openai.com", "gpt-4o-mini"))?;
//! let request = SelectionRequest {
//!     query: "how do we deploy?",
//!     candidates,
//!     limit: selector::DEFAULT_LIMIT,
//!     recent_tools: &[],
//! };
//! let picked: Vec<String> = selector.select(request, CancellationToken::new()).await?;
//! # drop(picked);
//! # Ok(())
//! # }
//! ```
//!
//! # Pointing [`HttpSelector`] at a local OpenAI-compatible server
//!
//! Local servers usually need no key. When the configured environment variable is unset (or
//! empty) no `Authorization` header is sent at all, so naming a variable that does not exist is
//! the way to talk to them:
//!
//! ```no_run
//! use std::time::Duration;
//! use selector::{HttpSelector, HttpSelectorConfig};
//!
//! # fn run() -> Result<(), selector::SelectorError> {
//! // llama.cpp's `llama-server` (default port 8080); the model name is informational there.
//! let llama_cpp = HttpSelectorConfig::new("http://127.0.0.1:8080", "local");
//! // Ollama (its OpenAI-compatible API lives under /v1).
//! let ollama = HttpSelectorConfig::new("http://localhost:11434/v1", "qwen2.5:7b-instruct");
//! // vLLM's `vllm serve` (default port 8000), guarded by its own key variable.
//! let mut vllm = HttpSelectorConfig::new("http://localhost:8000", "Qwen/Qwen2.5-7B-Instruct");
//! vllm.api_key_env = "VLLM_API_KEY".to_owned();
//! // A slow local model may get less than the default 30 s; more than 30 s is capped.
//! vllm.ceiling = Duration::from_secs(10);
//!
//! for config in [llama_cpp, ollama, vllm] {
//!     let _selector = HttpSelector::new(config)?;
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Servers that ignore `response_format` still work when they put the JSON object somewhere in
//! the message content: wrapped in prose or in a fenced code block, it is found and validated.
//!
//! # Writing a new [`Selector`]
//!
//! Build the [`Manifest`] from the candidates, decide, and let [`validate_answer`] hold the answer
//! to the shared rules. This one picks the candidates whose description mentions the query:
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
//!         selector::validate_answer(&json!({ "selected_memories": picked }), &manifest, request.limit)
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
//! let request = SelectionRequest { query: "deploy", candidates: &candidates, limit: 5, recent_tools: &[] };
//! let picked = DescriptionMatch.select(request, CancellationToken::new()).await.unwrap();
//! assert_eq!(picked, ["/home/me/.memory/project/deploy.md"]);
//! # });
//! ```

use std::time::{Duration, SystemTime};

mod http;
mod manifest;
mod mock;
mod prompt;

pub use async_trait::async_trait;
pub use tokio_util::sync::CancellationToken;

pub use http::{ApiKey, HttpSelector, HttpSelectorConfig, parse_answer_content};
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

/// What a selector is asked.
#[derive(Debug, Clone, Copy)]
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

/// Why a selector produced no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// The call exceeded its ceiling.
    #[error("selector did not answer within {0:?}")]
    Timeout(Duration),
    /// The caller cancelled the call.
    #[error("selector call cancelled")]
    Cancelled,
    /// The request could not be sent or the response not read.
    #[error("selector transport error: {0}")]
    Transport(String),
    /// The server answered with a non-success HTTP status.
    #[error("selector answered HTTP {status}")]
    Http {
        /// The HTTP status code.
        status: u16,
    },
    /// The answer broke the shared rules (shape, limit or manifest membership).
    #[error("selector answer rejected: {why}")]
    InvalidAnswer {
        /// What was wrong with the answer.
        why: String,
    },
    /// The selector is misconfigured (bad base URL, unreadable key variable).
    #[error("selector misconfigured: {0}")]
    Config(String),
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
}
