//! The OpenAI-compatible chat-completions adapter for the [`Selector`] port.
//!
//! [`HttpSelector`] sends the port's shared system prompt and manifest to a
//! `/v1/chat/completions` endpoint and holds the answer to the port's rules
//! ([`selector::validate_answer`]). The port itself (the trait, the manifest, the mock) lives in
//! the `selector` crate, which has no HTTP dependency.
//!
//! # Pointing [`HttpSelector`] at a hosted service
//!
//! The base URL is the server root; `/v1/chat/completions` is appended (a base URL that already
//! ends in `/v1` gets only `/chat/completions`). The API key is read once, from the environment
//! variable named in the config (`OPENAI_API_KEY` by default), and sent as a bearer token.
//!
//! ```no_run
//! use selector::{CancellationToken, SelectionRequest, Selector};
//! use selector_http::{HttpSelector, HttpSelectorConfig};
//!
//! # async fn run(candidates: &[selector::Candidate]) -> Result<(), Box<dyn std::error::Error>> {
//! let selector = HttpSelector::new(HttpSelectorConfig::new("https://api.openai.com", "gpt-4o-mini"))?;
//! let request = SelectionRequest::new("how do we deploy?", candidates, selector::DEFAULT_LIMIT);
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
//! the way to talk to them. Building a selector sends nothing, so this runs without a server:
//!
//! ```
//! use std::time::Duration;
//! use selector_http::{ConfigError, HttpSelector, HttpSelectorConfig};
//!
//! # fn run() -> Result<(), ConfigError> {
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
//! let ollama = HttpSelector::new(ollama)?;
//! assert_eq!(ollama.endpoint(), "http://localhost:11434/v1/chat/completions");
//! let vllm = HttpSelector::new(vllm)?;
//! assert_eq!(vllm.ceiling(), Duration::from_secs(10));
//! let _llama_cpp = HttpSelector::new(llama_cpp)?;
//!
//! // A base URL the adapter cannot use is refused when the selector is built, not at its first
//! // call.
//! let error = HttpSelector::new(HttpSelectorConfig::new("ftp://example.com", "local")).unwrap_err();
//! assert!(matches!(error, ConfigError::Scheme { .. }));
//! # Ok(())
//! # }
//! # run().unwrap();
//! ```
//!
//! Servers that ignore `response_format` still work when they put the JSON object somewhere in
//! the message content: wrapped in prose or in a fenced code block, it is found and validated.

#![forbid(unsafe_code)]

mod refusal;

use std::fmt;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};

use selector::{
    AnswerError, CancellationToken, Manifest, SELECTOR_CEILING, SelectionRequest, Selector,
    SelectorError, answer_schema, parse_answer_content, system_prompt, user_message,
    validate_answer,
};

/// A selection answer is a few hundred bytes; anything far beyond that is not an answer, and
/// reading it whole would let a misbehaving server exhaust memory.
pub const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// How an [`HttpSelector`] reaches its server.
///
/// Built with [`HttpSelectorConfig::new`], then adjusted field by field; new settings will come
/// with defaults, so the struct cannot be written out literally.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpSelectorConfig {
    /// The server root, e.g. `https://api.openai.com` or `http://localhost:11434/v1`.
    pub base_url: String,
    /// The model name sent with every request.
    pub model: String,
    /// The environment variable holding the API key; unset or empty means no `Authorization`.
    pub api_key_env: String,
    /// The longest a call may take; values above [`SELECTOR_CEILING`] are capped to it.
    pub ceiling: Duration,
}

impl HttpSelectorConfig {
    /// A config for `model` at `base_url`, with the key in `OPENAI_API_KEY` and a 30 s ceiling.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            api_key_env: "OPENAI_API_KEY".to_owned(),
            ceiling: SELECTOR_CEILING,
        }
    }
}

/// An API key. It has no `Display`, and its `Debug` prints `<redacted>`, so it cannot leak into
/// logs or error messages by formatting.
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// A [`Selector`] that asks a model through an OpenAI-compatible `/v1/chat/completions` endpoint.
///
/// Each call sends the shared system prompt and user message with `temperature: 0` and a
/// JSON-schema `response_format`; when the server ignores the format, a JSON object found in the
/// plain message content is used instead. An empty manifest or a zero limit returns `[]` without
/// a request. The call is abandoned at the ceiling or as soon as the caller cancels.
pub struct HttpSelector {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    config: HttpSelectorConfig,
    authorization: Option<HeaderValue>,
    /// Built without a key: `api_key_env` was unset or empty (see [`Selector::failure_note`]).
    key_unset: bool,
}

impl fmt::Debug for HttpSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = if self.authorization.is_some() {
            "<redacted>"
        } else {
            "<none>"
        };
        f.debug_struct("HttpSelector")
            .field("endpoint", &self.endpoint.as_str())
            .field("model", &self.config.model)
            .field("api_key_env", &self.config.api_key_env)
            .field("api_key", &key)
            .field("ceiling", &self.ceiling())
            .finish_non_exhaustive()
    }
}

impl HttpSelector {
    /// Builds a selector, reading the API key once from the environment variable the config names.
    ///
    /// An unset or empty variable means no `Authorization` header, which is what local servers
    /// expect; a variable that is not valid Unicode is a [`ConfigError::KeyNotUnicode`].
    pub fn new(config: HttpSelectorConfig) -> Result<Self, ConfigError> {
        let key = match std::env::var(&config.api_key_env) {
            Ok(key) => Some(ApiKey::new(key)),
            Err(std::env::VarError::NotPresent) => None,
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(ConfigError::KeyNotUnicode {
                    variable: config.api_key_env,
                });
            }
        };
        let key = key.filter(|ApiKey(key)| !key.is_empty());
        Self::with_api_key(config, key)
    }

    /// Builds a selector with an explicit key (or none), ignoring `api_key_env`. Without a key,
    /// a failure's note ([`Selector::failure_note`]) says that `api_key_env` was not set.
    pub fn with_api_key(
        config: HttpSelectorConfig,
        key: Option<ApiKey>,
    ) -> Result<Self, ConfigError> {
        let key_unset = key.is_none();
        let endpoint = chat_completions_url(&config.base_url)?;
        let authorization = match key.filter(|ApiKey(key)| !key.trim().is_empty()) {
            Some(ApiKey(key)) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {}", key.trim()))
                    .map_err(|_| ConfigError::KeyNotHeaderSafe)?;
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        // A chat-completions endpoint has no reason to redirect; following one would turn the
        // POST into a GET (301, 302) or send the query and manifest to another origin (307, 308).
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(ConfigError::Client)?;
        Ok(Self {
            client,
            endpoint,
            config,
            authorization,
            key_unset,
        })
    }

    /// The URL requests are posted to.
    pub fn endpoint(&self) -> &str {
        self.endpoint.as_str()
    }

    /// The ceiling actually applied: the configured one, at most [`SELECTOR_CEILING`].
    pub fn ceiling(&self) -> Duration {
        self.config.ceiling.min(SELECTOR_CEILING)
    }

    fn request_body(&self, request: &SelectionRequest<'_>, manifest: &Manifest) -> Value {
        json!({
            "model": self.config.model,
            "temperature": 0,
            "messages": [
                { "role": "system", "content": system_prompt() },
                { "role": "user", "content": user_message(request, manifest) },
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": "memory_selection",
                    "strict": true,
                    "schema": answer_schema(),
                },
            },
        })
    }

    /// Posts the request and returns the first choice's message content.
    ///
    /// The only text the server sent that an error carries is the message of an error status
    /// ([`refusal::server_message`]): bounded, on one line, with the key and anything that looks
    /// like one redacted, so an API key a server echoes back cannot reach a message or a log.
    async fn exchange(&self, body: &Value) -> Result<String, SelectorError> {
        let mut builder = self.client.post(self.endpoint.clone()).json(body);
        if let Some(authorization) = &self.authorization {
            builder = builder.header(AUTHORIZATION, authorization.clone());
        }
        let mut response = builder.send().await.map_err(transport)?;
        let status = response.status();
        if !status.is_success() {
            let status = status.as_u16();
            let mut body = Vec::new();
            // The message is a courtesy: a body that cannot be read leaves the status alone.
            while body.len() < refusal::MAX_ERROR_BODY_BYTES
                && let Ok(Some(chunk)) = response.chunk().await
            {
                body.extend_from_slice(&chunk);
            }
            body.truncate(refusal::MAX_ERROR_BODY_BYTES);
            let key = self
                .authorization
                .as_ref()
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.strip_prefix("Bearer "));
            return Err(match refusal::server_message(&body, key) {
                Some(message) => SelectorError::HttpMessage { status, message },
                None => SelectorError::Http { status },
            });
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(transport)? {
            if bytes.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(reply(ReplyError::TooLarge {
                    limit: MAX_RESPONSE_BYTES,
                }));
            }
            bytes.extend_from_slice(&chunk);
        }
        let completion: ChatCompletion = serde_json::from_slice(&bytes).map_err(|error| {
            reply(ReplyError::NotACompletion {
                problem: JsonProblem::of(&error),
                line: error.line(),
                column: error.column(),
            })
        })?;
        let Some(choice) = completion.choices.into_iter().next() else {
            return Err(reply(ReplyError::NoChoices));
        };
        match (choice.message.content, choice.message.refusal) {
            (Some(content), _) if !content.trim().is_empty() => Ok(content),
            (_, Some(_)) => Err(reply(ReplyError::Refused)),
            _ => Err(reply(ReplyError::NoContent)),
        }
    }
}

#[selector::async_trait]
impl Selector for HttpSelector {
    async fn select(
        &self,
        request: SelectionRequest<'_>,
        cancel: CancellationToken,
    ) -> Result<Vec<String>, SelectorError> {
        if cancel.is_cancelled() {
            return Err(SelectorError::Cancelled);
        }
        let manifest = Manifest::build(request.candidates);
        if manifest.is_empty() || request.limit == 0 {
            return Ok(Vec::new());
        }
        let body = self.request_body(&request, &manifest);
        let ceiling = self.ceiling();
        // Dropping the exchange future on either branch aborts the in-flight request.
        let content = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(SelectorError::Cancelled),
            outcome = tokio::time::timeout(ceiling, self.exchange(&body)) => {
                outcome.unwrap_or(Err(SelectorError::Timeout(ceiling)))
            }
        };
        let result = content.and_then(|content| {
            let answer = parse_answer_content(&content)?;
            Ok(validate_answer(&answer, &manifest, request.limit)?)
        });
        match &result {
            Ok(ids) => tracing::debug!(selected = ids.len(), "selector answered"),
            Err(error) => tracing::debug!(%error, "selector call failed"),
        }
        result
    }

    /// That no API key was sent, when `api_key_env` was not set: local servers need none, so it
    /// is worth a word only with a failure.
    fn failure_note(&self) -> Option<String> {
        self.key_unset.then(|| {
            format!(
                "api_key_env names {}, which is not set, so no API key was sent",
                self.config.api_key_env
            )
        })
    }
}

#[derive(Deserialize)]
struct ChatCompletion {
    choices: Vec<ChatChoice>,
}

#[derive(Deserialize)]
struct ChatChoice {
    message: ChatMessage,
}

#[derive(Deserialize)]
struct ChatMessage {
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
}

/// Why an [`HttpSelector`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The base URL does not parse.
    #[error("invalid base URL {base_url:?}: {source}")]
    BaseUrl {
        /// The base URL as configured.
        base_url: String,
        /// Why it does not parse.
        source: url::ParseError,
    },
    /// The base URL names no host (`http://`).
    #[error("base URL {base_url:?} names no host")]
    NoHost {
        /// The base URL as configured.
        base_url: String,
    },
    /// The base URL's scheme is neither `http` nor `https`.
    #[error("base URL {base_url:?} must use http or https")]
    Scheme {
        /// The base URL as configured.
        base_url: String,
    },
    /// The key variable is set but not valid Unicode.
    #[error("environment variable {variable} is not valid Unicode")]
    KeyNotUnicode {
        /// The variable's name.
        variable: String,
    },
    /// The key holds characters an HTTP header cannot carry (a line break, for instance); the
    /// key itself is not quoted.
    #[error("the API key contains characters an HTTP header cannot carry")]
    KeyNotHeaderSafe,
    /// The HTTP client could not be built (its TLS backend failed to initialise).
    #[error("the HTTP client could not be built: {0}")]
    Client(#[source] reqwest::Error),
}

/// Why a server's reply held no answer; the source of an
/// [`AnswerError::Reply`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplyError {
    /// The body is larger than [`MAX_RESPONSE_BYTES`].
    #[error("the response is larger than {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The body is not a chat completion. Only where and how it went wrong is kept, not the
    /// parser's message, which may quote the body.
    #[error("the response is not a chat completion ({problem} at line {line}, column {column})")]
    NotACompletion {
        /// What kind of problem the parser met.
        problem: JsonProblem,
        /// The line it met it on, from 1.
        line: usize,
        /// The column it met it on, from 1.
        column: usize,
    },
    /// The completion has no choices.
    #[error("the response has no choices")]
    NoChoices,
    /// The model refused to answer.
    #[error("the model refused to answer")]
    Refused,
    /// The first choice's message has no content.
    #[error("the message has no content")]
    NoContent,
}

/// What kind of problem made a body unreadable as a chat completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum JsonProblem {
    /// The body is not JSON.
    Syntax,
    /// The body is JSON of another shape.
    Shape,
    /// The body ends early.
    Truncated,
}

impl JsonProblem {
    fn of(error: &serde_json::Error) -> Self {
        match error.classify() {
            serde_json::error::Category::Data => Self::Shape,
            serde_json::error::Category::Eof => Self::Truncated,
            serde_json::error::Category::Syntax | serde_json::error::Category::Io => Self::Syntax,
        }
    }
}

impl fmt::Display for JsonProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Syntax => "malformed JSON",
            Self::Shape => "JSON of another shape",
            Self::Truncated => "truncated JSON",
        })
    }
}

/// `{base}/v1/chat/completions`, or `{base}/chat/completions` when the base already ends in `/v1`.
fn chat_completions_url(base_url: &str) -> Result<reqwest::Url, ConfigError> {
    let invalid = |source| ConfigError::BaseUrl {
        base_url: base_url.to_owned(),
        source,
    };
    // Checked as given, before joining: `http://` alone would otherwise join to `http:/v1/…`,
    // which parses with `v1` as its host.
    let given = reqwest::Url::parse(base_url.trim()).map_err(invalid)?;
    if given.host_str().is_none_or(str::is_empty) {
        return Err(ConfigError::NoHost {
            base_url: base_url.to_owned(),
        });
    }
    let base = base_url.trim().trim_end_matches('/');
    let joined = if base.ends_with("/v1") {
        format!("{base}/chat/completions")
    } else {
        format!("{base}/v1/chat/completions")
    };
    let url = reqwest::Url::parse(&joined).map_err(invalid)?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ConfigError::Scheme {
            base_url: base_url.to_owned(),
        });
    }
    Ok(url)
}

fn reply(error: ReplyError) -> SelectorError {
    SelectorError::InvalidAnswer(AnswerError::reply(error))
}

fn transport(error: reqwest::Error) -> SelectorError {
    SelectorError::transport(error.without_url())
}

#[cfg(test)]
mod tests;
