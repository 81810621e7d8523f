//! The wire protocol between `memrecall hook` (and `stop`, `status`) and `memrecall serve`.
//!
//! One Unix-socket connection carries one exchange: the client writes one request as a single
//! line of JSON ending in `\n` (at most [`MAX_LINE_BYTES`], UTF-8, cut by
//! [`crate::frame::FrameDecoder`] on both sides), the server answers with one line and closes
//! the connection. A client that does not send its whole request within the server's deadline
//! is dropped unanswered; a line too long or not UTF-8 is answered with an `error`.
//! Every message carries the protocol version `"v"`; this is version [`VERSION`] (3). A server
//! answers a request of another version with an `error` naming the version it speaks, and a
//! client that gets an answer of another version treats the server as unavailable. A new
//! version is needed for any change a peer of the old one would misread; adding an optional
//! field is not one.
//!
//! Requests (`"kind"` picks one):
//!
//! ```json
//! {"v":3,"kind":"event","agent":"claude-code","session":"abc","point":"initial","query":"…",
//!  "repeat_is_continuation":false,"cwd":"/home/ana/shop","layout":null,
//!  "env":{"HOME":"/home/ana"},"selector_key":{"variable":"OPENAI_API_KEY","value":"…"}}
//! {"v":3,"kind":"event","agent":"claude-code","session":"abc","point":"tool_result",
//!  "fetched":["memory://project/deploy.md"]}
//! {"v":3,"kind":"event","agent":"claude-code","session":"abc","point":"turn_end"}
//! {"v":3,"kind":"event","agent":"claude-code","session":"abc","point":"session_end"}
//! {"v":3,"kind":"status"}
//! {"v":3,"kind":"stop"}
//! ```
//!
//! - `initial` begins a turn (the agent's prompt event): recall for `query`, wait at most the
//!   first-prompt ceiling, answer the initial delivery. The client sends what the agent gave it
//!   (its working directory, the layout, the environment variables layouts read) and the server
//!   resolves the memory roots itself, with the hook's own code, once per prompt (the client
//!   resolves none): a client never names a directory to scan or write in. A relative `cwd` is
//!   refused; a root that is not an existing directory is not read. The optional
//!   `selector_key` is the key the hook's environment holds for the HTTP selector's
//!   `api_key_env`: the server asks with it from this prompt on. With `repeat_is_continuation`
//!   (Qwen Code), a query equal to the open turn's is the tool-result point instead.
//! - `tool_result` answers what the turn's recall settled with, minus what was already
//!   delivered, once; the memories in `fetched` (optional: those memrecall's recall tool showed
//!   the model) count as delivered first; `turn_end` ends the turn (a recall still pending is discarded);
//!   `session_end` also forgets the session. Without `session` an event is a one-off: a
//!   turn begun by `initial` ends as soon as it is answered and the other points answer nothing.
//!
//! Answers:
//!
//! ```json
//! {"v":3,"kind":"delivery","context":"…","fast_ms":3.1,"handled_ms":4.0}
//! {"v":3,"kind":"status","pid":42,…}
//! {"v":3,"kind":"stopping","pid":42}
//! {"v":3,"kind":"error","message":"…"}
//! ```
//!
//! `context` is the memory to add, already cut to the agent's budget (empty: nothing to add);
//! `fast_ms` is the server's time from the start of the session's latest recall to its first
//! result (the fast one; the settled one when it came first), once there is one (on `initial`
//! and `tool_result` answers); `handled_ms` the server's time on the request. `turn_ended` on a `turn_end` or
//! `session_end` answer says how the turn's recall ended (a discard reason, `delivered` when it
//! had already been delivered in full, `none` when there was no recall). The status fields are
//! those of [`Status`].

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::frame::{FrameDecoder, FrameError};
use agent_hooks::memory_uri::MemoryUri;
use agent_hooks::{Agent, Layout};
use memory_scan::CacheFootprint;

/// The protocol version this build speaks.
pub const VERSION: u32 = 3;

/// The longest line either side reads: a prompt of 100,000 characters is well under it.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// One request line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestLine {
    /// The protocol version.
    pub v: u32,
    /// What is asked.
    #[serde(flatten)]
    pub request: Request,
}

/// What a client asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Request {
    /// An agent's hook event.
    Event(EventRequest),
    /// The server's state.
    Status,
    /// Stop the server.
    Stop,
}

/// One hook event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventRequest {
    /// The agent that sent it.
    pub agent: Agent,
    /// The agent's session; `None` makes the event a one-off.
    #[serde(default)]
    pub session: Option<String>,
    /// The delivery point, with what it needs.
    #[serde(flatten)]
    pub point: Point,
}

/// A delivery point of a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "point", rename_all = "snake_case")]
pub enum Point {
    /// The initial point: the agent's prompt event begins a turn.
    Initial(PromptEvent),
    /// After a tool result.
    ToolResult(ToolResultEvent),
    /// The agent's stop event: the turn is over.
    TurnEnd,
    /// The agent's session-end event: the turn and the session are over.
    SessionEnd,
}

/// What a tool result tells the session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolResultEvent {
    /// The memories the tool showed the model (memrecall's own recall tool): delivered from now
    /// on, never delivered again in this session.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fetched: Vec<MemoryUri>,
}

/// What a prompt event recalls for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptEvent {
    /// The text to recall for.
    pub query: String,
    /// Whether a query equal to the open turn's is a continuation (Qwen Code).
    #[serde(default)]
    pub repeat_is_continuation: bool,
    /// The agent's working directory, absolute.
    pub cwd: PathBuf,
    /// The layout to read; `None`: the agent's own (see [`agent_hooks::default_layout`]).
    #[serde(default)]
    pub layout: Option<Layout>,
    /// The environment variables the layouts read, as the hook saw them (see
    /// [`agent_hooks::Environment`]).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The selector's API key in the hook's environment, when the configuration's HTTP selector
    /// names a variable the hook has set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector_key: Option<SelectorKey>,
}

/// The variable `api_key_env` names and its value in the hook's environment: the server, started
/// by an earlier hook, may not have it. Its `Debug` does not show the value.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectorKey {
    /// The variable's name.
    pub variable: String,
    /// Its value.
    pub value: String,
}

impl std::fmt::Debug for SelectorKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SelectorKey")
            .field("variable", &self.variable)
            .field("value", &"<redacted>")
            .finish()
    }
}

/// One answer line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseLine {
    /// The protocol version.
    pub v: u32,
    /// The answer.
    #[serde(flatten)]
    pub response: Response,
}

/// What the server answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Response {
    /// The answer to an event.
    Delivery(DeliveryAnswer),
    /// The answer to `status` (boxed: the other answers are small).
    Status(Box<Status>),
    /// The answer to `stop`: the server exits once it has answered.
    Stopping {
        /// The server's process id.
        pid: u32,
    },
    /// The request could not be served.
    Error {
        /// Why, as a sentence.
        message: String,
    },
}

/// The answer to an event.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeliveryAnswer {
    /// The memory to add, cut to the agent's budget; empty when there is nothing to add.
    pub context: String,
    /// Milliseconds from the latest recall's start to its first result, once it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_ms: Option<f64>,
    /// Milliseconds the server spent on the request.
    #[serde(default)]
    pub handled_ms: f64,
    /// How the turn's recall ended, on `turn_end` and `session_end`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_ended: Option<String>,
    /// Problems the server met serving the agent, for the hook to write in its own log: a
    /// selector failure or a configuration error, each once per kind until `config.toml`
    /// changes, and on an `initial` answer each file the resolution of its roots ignored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
}

/// The server's state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// The server's process id.
    pub pid: u32,
    /// The server's version.
    pub version: String,
    /// Seconds since the server started.
    pub uptime_s: f64,
    /// Seconds without a request after which the server exits.
    pub idle_exit_s: f64,
    /// Agent sessions kept.
    pub sessions: usize,
    /// Sessions whose recall is still running or not yet fully delivered.
    pub pending_recalls: usize,
    /// Memory roots whose documents are cached.
    pub roots: Vec<PathBuf>,
    /// How changes to memory files are noticed.
    pub watch: String,
    /// Prompt recalls begun.
    pub recalls_served: u64,
    /// Recalls whose terminal telemetry event was emitted.
    pub recalls_ended: u64,
    /// Resident memory now, in KiB (`None` where it cannot be read).
    pub rss_kib: Option<u64>,
    /// Peak resident memory, in KiB (`None` where it cannot be read).
    pub peak_rss_kib: Option<u64>,
    /// What the document caches hold, in bytes by part, summed over every cached set of roots.
    #[serde(default)]
    pub footprint: CacheFootprint,
    /// The last selector failure, if any since the server started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_selector_error: Option<SelectorFailure>,
    /// The variable `api_key_env` names, when the server's HTTP selector sends no key: neither
    /// the server's environment nor any prompt's hook had it set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector_key_unset: Option<String>,
}

/// One selector failure the server saw.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelectorFailure {
    /// When, RFC 3339 (UTC, whole seconds).
    pub at: String,
    /// The kind: `timeout`, `transport`, `http_401`, …
    pub kind: String,
    /// The failure as one line, secrets redacted.
    pub message: String,
}

/// Why a line could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The connection failed.
    #[error("socket error: {0}")]
    Io(#[from] std::io::Error),
    /// The peer closed the connection without a line.
    #[error("the peer closed the connection without answering")]
    Closed,
    /// The line is over [`MAX_LINE_BYTES`].
    #[error("the line is over {MAX_LINE_BYTES} bytes")]
    TooLong,
    /// The line is not UTF-8.
    #[error("the line is not UTF-8")]
    NotUtf8,
    /// The line is not a message of this protocol.
    #[error("not a message of this protocol: {0}")]
    Malformed(#[from] serde_json::Error),
    /// The peer speaks another version.
    #[error("the peer speaks protocol version {0}, not {VERSION}")]
    Version(u32),
}

/// Writes `message` as one line.
pub fn write_line<T: Serialize>(out: &mut impl Write, message: &T) -> Result<(), WireError> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()?;
    Ok(())
}

impl From<FrameError> for WireError {
    fn from(error: FrameError) -> Self {
        match error {
            FrameError::TooLong => Self::TooLong,
            FrameError::NotUtf8 => Self::NotUtf8,
            FrameError::Empty => Self::Closed,
        }
    }
}

/// Reads one line (at most [`MAX_LINE_BYTES`]), without its newline.
pub fn read_line(mut input: impl BufRead) -> Result<String, WireError> {
    let mut decoder = FrameDecoder::new(MAX_LINE_BYTES);
    while !decoder.is_complete() {
        let bytes = match input.fill_buf() {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e.into()),
        };
        if bytes.is_empty() {
            break;
        }
        let taken = decoder.push(bytes)?;
        input.consume(taken);
    }
    Ok(decoder.finish()?)
}

/// Parses an answer line, refusing another version.
pub fn parse_response(line: &str) -> Result<Response, WireError> {
    parse_versioned::<ResponseLine>(line).map(|parsed| parsed.response)
}

/// Parses a request line, refusing another version.
pub fn parse_request(line: &str) -> Result<Request, WireError> {
    parse_versioned::<RequestLine>(line).map(|parsed| parsed.request)
}

/// Parses a line of this protocol's version as `T`; a line of another version is refused by its
/// version alone, before the rest is read, so the error names the version.
fn parse_versioned<T: serde::de::DeserializeOwned>(line: &str) -> Result<T, WireError> {
    #[derive(Deserialize)]
    struct Versioned {
        v: u32,
    }
    let Versioned { v } = serde_json::from_str(line)?;
    if v != VERSION {
        return Err(WireError::Version(v));
    }
    Ok(serde_json::from_str(line)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_event_reads_back_as_written() {
        let request = RequestLine {
            v: VERSION,
            request: Request::Event(EventRequest {
                agent: Agent::ClaudeCode,
                session: Some("abc".into()),
                point: Point::Initial(PromptEvent {
                    query: "deploy".into(),
                    repeat_is_continuation: false,
                    cwd: "/p".into(),
                    layout: Some(Layout::Memrecall),
                    env: BTreeMap::from([("HOME".to_owned(), "/home/ana".to_owned())]),
                    selector_key: Some(SelectorKey {
                        variable: "K".into(),
                        value: "secret".into(),
                    }),
                }),
            }),
        };
        let mut line = Vec::new();
        write_line(&mut line, &request).unwrap();
        assert_eq!(line.last(), Some(&b'\n'));
        let text = String::from_utf8(line).unwrap();
        assert!(
            text.starts_with(r#"{"v":3,"kind":"event","agent":"claude-code""#),
            "{text}"
        );
        assert_eq!(parse_request(&text).unwrap(), request.request);
        assert!(!format!("{request:?}").contains("secret"));
    }

    #[test]
    fn a_request_of_another_version_is_refused_with_its_version() {
        let error = parse_request(r#"{"v":1,"kind":"status"}"#).unwrap_err();
        assert!(matches!(error, WireError::Version(1)), "{error}");
    }

    #[test]
    fn an_answer_of_another_version_is_refused() {
        let error = parse_response(r#"{"v":7,"kind":"stopping","pid":1}"#).unwrap_err();
        assert!(matches!(error, WireError::Version(7)), "{error}");
    }

    #[test]
    fn a_line_over_the_bound_is_refused() {
        let long = vec![b'x'; MAX_LINE_BYTES + 2];
        let error = read_line(&long[..]).unwrap_err();
        assert!(matches!(error, WireError::TooLong), "{error}");
    }

    #[test]
    fn a_closed_connection_is_not_an_empty_line() {
        assert!(matches!(read_line(&b""[..]), Err(WireError::Closed)));
    }
}
