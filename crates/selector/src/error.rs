//! Why a selector produced no usable answer.

use std::error::Error;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use crate::ANSWER_KEY;

/// Why a selector produced no usable answer.
///
/// Cloneable, so one failure can be recorded in a settled recall and reported more than once.
/// Two errors are equal when they are the same failure: implementations' own causes
/// ([`SharedError`]) compare by identity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectorError {
    /// The call exceeded its ceiling.
    #[error("selector did not answer within {0:?}")]
    Timeout(Duration),
    /// The caller cancelled the call.
    #[error("selector call cancelled")]
    Cancelled,
    /// The request could not be sent or the response not read; the source is the client's own
    /// error (for the HTTP adapter, the transport error without its URL).
    #[error("selector transport error: {0}")]
    Transport(#[source] SharedError),
    /// The server answered with a non-success HTTP status.
    #[error("selector answered HTTP {status}")]
    Http {
        /// The HTTP status code.
        status: u16,
    },
    /// The server answered with a non-success HTTP status and said why in its body (one line,
    /// bounded, with anything that looks like a key redacted by the adapter).
    #[error("selector answered HTTP {status}: {message}")]
    HttpMessage {
        /// The HTTP status code.
        status: u16,
        /// The server's own message.
        message: String,
    },
    /// The answer broke the shared rules (shape, limit or manifest membership), or the reply
    /// held no readable answer.
    #[error("selector answer rejected: {0}")]
    InvalidAnswer(#[from] AnswerError),
}

impl SelectorError {
    /// A transport failure caused by `error`.
    pub fn transport(error: impl Error + Send + Sync + 'static) -> Self {
        Self::Transport(SharedError::new(error))
    }

    /// The kind of failure, one stable word for logs and counts: `timeout`, `cancelled`,
    /// `transport`, `http_<status>` or `invalid_answer`.
    pub fn kind(&self) -> String {
        match self {
            Self::Timeout(_) => "timeout".to_owned(),
            Self::Cancelled => "cancelled".to_owned(),
            Self::Transport(_) => "transport".to_owned(),
            Self::Http { status } | Self::HttpMessage { status, .. } => format!("http_{status}"),
            Self::InvalidAnswer(_) => "invalid_answer".to_owned(),
        }
    }
}

/// What was wrong with a model's answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    /// The answer is not a JSON object.
    #[error("expected a JSON object with `{ANSWER_KEY}`, got {found}")]
    NotAnObject {
        /// What the answer was instead.
        found: JsonKind,
    },
    /// The object has no `selected_memories` member.
    #[error("the object has no `{ANSWER_KEY}` member")]
    MissingMember,
    /// `selected_memories` is not an array.
    #[error("`{ANSWER_KEY}` must be an array, got {found}")]
    NotAnArray {
        /// What the member was instead.
        found: JsonKind,
    },
    /// An item of `selected_memories` is not a string.
    #[error("`{ANSWER_KEY}` item {position} must be a string, got {found}")]
    NotAString {
        /// The item's position, from 0.
        position: usize,
        /// What the item was instead.
        found: JsonKind,
    },
    /// An item names an id the manifest does not list. The id itself is not kept: it is
    /// arbitrary model output, which may echo anything from its context (a secret included),
    /// and errors end up in logs.
    #[error("`{ANSWER_KEY}` item {position} is not in the manifest")]
    NotInManifest {
        /// The item's position, from 0.
        position: usize,
    },
    /// More distinct ids than the limit.
    #[error("{selected} memories selected, the limit is {limit}")]
    OverLimit {
        /// How many distinct ids the answer named.
        selected: usize,
        /// The request's limit.
        limit: usize,
    },
    /// The reply's text holds no JSON object at all.
    #[error("the message content holds no JSON object")]
    NoJsonObject,
    /// The reply could not be read as an answer for a reason particular to one implementation
    /// (for the HTTP adapter: not a chat completion, no choices, a refusal, too large).
    #[error("{0}")]
    Reply(#[source] SharedError),
}

impl AnswerError {
    /// An unreadable reply, caused by `error`.
    pub fn reply(error: impl Error + Send + Sync + 'static) -> Self {
        Self::Reply(SharedError::new(error))
    }
}

/// The kind of a JSON value, as answer errors name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JsonKind {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl JsonKind {
    /// The kind of `value`.
    pub fn of(value: &Value) -> Self {
        match value {
            Value::Null => Self::Null,
            Value::Bool(_) => Self::Bool,
            Value::Number(_) => Self::Number,
            Value::String(_) => Self::String,
            Value::Array(_) => Self::Array,
            Value::Object(_) => Self::Object,
        }
    }
}

impl fmt::Display for JsonKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Null => "null",
            Self::Bool => "a boolean",
            Self::Number => "a number",
            Self::String => "a string",
            Self::Array => "an array",
            Self::Object => "an object",
        })
    }
}

/// An implementation's own error, shared so that the errors holding it stay cloneable.
///
/// It displays as the error it wraps followed by that error's causes, `: `-separated, so the
/// one line an error prints says what went wrong down to the root cause; its source is the
/// wrapped error's source.
#[derive(Clone)]
pub struct SharedError(Arc<dyn Error + Send + Sync + 'static>);

impl SharedError {
    /// Wraps `error`.
    pub fn new(error: impl Error + Send + Sync + 'static) -> Self {
        Self(Arc::new(error))
    }

    /// The wrapped error.
    pub fn get(&self) -> &(dyn Error + Send + Sync + 'static) {
        &*self.0
    }
}

impl fmt::Debug for SharedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for SharedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&*self.0, f)?;
        let mut source = self.0.source();
        while let Some(cause) = source {
            write!(f, ": {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

impl Error for SharedError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        self.0.source()
    }
}

impl PartialEq for SharedError {
    /// Two shared errors are equal when they share the same underlying error.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for SharedError {}
