//! The OpenAI-compatible chat-completions adapter.

use std::fmt;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, HeaderValue};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::manifest::{ANSWER_KEY, Manifest, validate_answer};
use crate::prompt::{answer_schema, system_prompt, user_message};
use crate::{CancellationToken, SELECTOR_CEILING, SelectionRequest, Selector, SelectorError};

/// A selection answer is a few hundred bytes; anything far beyond that is not an answer, and
/// reading it whole would let a misbehaving server exhaust memory.
const MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// How many `{` positions the plain-content fallback tries before giving up, bounding its work on
/// long prose answers.
const MAX_OBJECT_STARTS: usize = 16;

/// How an [`HttpSelector`] reaches its server.
#[derive(Clone, Debug)]
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
    key: Option<ApiKey>,
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
    /// expect; a variable that is not valid Unicode is a [`SelectorError::Config`].
    pub fn new(config: HttpSelectorConfig) -> Result<Self, SelectorError> {
        let key = match std::env::var(&config.api_key_env) {
            Ok(key) => Some(ApiKey::new(key)),
            Err(std::env::VarError::NotPresent) => None,
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(SelectorError::Config(format!(
                    "environment variable {} is not valid Unicode",
                    config.api_key_env
                )));
            }
        };
        Self::with_api_key(config, key)
    }

    /// Builds a selector with an explicit key (or none), ignoring `api_key_env`.
    pub fn with_api_key(
        config: HttpSelectorConfig,
        key: Option<ApiKey>,
    ) -> Result<Self, SelectorError> {
        let endpoint = chat_completions_url(&config.base_url)?;
        let key = key.filter(|ApiKey(key)| !key.trim().is_empty());
        let authorization = match &key {
            Some(ApiKey(key)) => {
                let mut value =
                    HeaderValue::from_str(&format!("Bearer {}", key.trim())).map_err(|_| {
                        SelectorError::Config(
                            "the API key contains characters an HTTP header cannot carry"
                                .to_owned(),
                        )
                    })?;
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
            .map_err(|error| SelectorError::Config(describe(&error)))?;
        Ok(Self {
            client,
            endpoint,
            config,
            authorization,
            key,
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

    /// Removes the key from an error's text. No message is built from it, but a server can echo
    /// it back (in a body a parse error quotes, for instance), and errors end up in logs.
    fn scrub(&self, error: SelectorError) -> SelectorError {
        let Some(ApiKey(key)) = &self.key else {
            return error;
        };
        let clean = |text: String| text.replace(key.trim(), "<redacted>");
        match error {
            SelectorError::Transport(text) => SelectorError::Transport(clean(text)),
            SelectorError::InvalidAnswer { why } => {
                SelectorError::InvalidAnswer { why: clean(why) }
            }
            SelectorError::Config(text) => SelectorError::Config(clean(text)),
            other => other,
        }
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
    async fn exchange(&self, body: &Value) -> Result<String, SelectorError> {
        let mut builder = self.client.post(self.endpoint.clone()).json(body);
        if let Some(authorization) = &self.authorization {
            builder = builder.header(AUTHORIZATION, authorization.clone());
        }
        let mut response = builder.send().await.map_err(transport)?;
        let status = response.status();
        if !status.is_success() {
            return Err(SelectorError::Http {
                status: status.as_u16(),
            });
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(transport)? {
            if bytes.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(invalid(format!(
                    "the response is larger than {MAX_RESPONSE_BYTES} bytes"
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        let completion: ChatCompletion = serde_json::from_slice(&bytes)
            .map_err(|error| invalid(format!("the response is not a chat completion: {error}")))?;
        let Some(choice) = completion.choices.into_iter().next() else {
            return Err(invalid("the response has no choices".to_owned()));
        };
        match (choice.message.content, choice.message.refusal) {
            (Some(content), _) if !content.trim().is_empty() => Ok(content),
            (_, Some(_)) => Err(invalid("the model refused to answer".to_owned())),
            _ => Err(invalid("the message has no content".to_owned())),
        }
    }
}

#[crate::async_trait]
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
        let result = content
            .and_then(|content| {
                let answer = parse_answer_content(&content)?;
                validate_answer(&answer, &manifest, request.limit)
            })
            .map_err(|error| self.scrub(error));
        match &result {
            Ok(ids) => tracing::debug!(selected = ids.len(), "selector answered"),
            Err(error) => tracing::debug!(%error, "selector call failed"),
        }
        result
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

/// Reads the JSON answer out of a message's content.
///
/// Content that is JSON as a whole is returned as is. Otherwise, for servers that ignore
/// `response_format`, the first JSON object embedded in the text (after prose, inside a
/// ```` ```json ```` fence) is used, preferring one that has a `selected_memories` member. Shape
/// checks are left to [`validate_answer`].
pub fn parse_answer_content(content: &str) -> Result<Value, SelectorError> {
    if let Ok(value) = serde_json::from_str::<Value>(content.trim()) {
        return Ok(value);
    }
    let mut first_object = None;
    for (start, _) in content.match_indices('{').take(MAX_OBJECT_STARTS) {
        let Some(rest) = content.get(start..) else {
            continue;
        };
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        if let Some(Ok(Value::Object(object))) = values.next() {
            if object.contains_key(ANSWER_KEY) {
                return Ok(Value::Object(object));
            }
            first_object.get_or_insert(Value::Object(object));
        }
    }
    first_object.ok_or_else(|| invalid("the message content holds no JSON object".to_owned()))
}

/// `{base}/v1/chat/completions`, or `{base}/chat/completions` when the base already ends in `/v1`.
fn chat_completions_url(base_url: &str) -> Result<reqwest::Url, SelectorError> {
    // Checked as given, before joining: `http://` alone would otherwise join to `http:/v1/…`,
    // which parses with `v1` as its host.
    let given = reqwest::Url::parse(base_url.trim()).map_err(|error| {
        SelectorError::Config(format!("invalid base URL {base_url:?}: {error}"))
    })?;
    if given.host_str().is_none_or(str::is_empty) {
        return Err(SelectorError::Config(format!(
            "base URL {base_url:?} names no host"
        )));
    }
    let base = base_url.trim().trim_end_matches('/');
    let joined = if base.ends_with("/v1") {
        format!("{base}/chat/completions")
    } else {
        format!("{base}/v1/chat/completions")
    };
    let url = reqwest::Url::parse(&joined).map_err(|error| {
        SelectorError::Config(format!("invalid base URL {base_url:?}: {error}"))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(SelectorError::Config(format!(
            "base URL {base_url:?} must use http or https"
        )));
    }
    Ok(url)
}

fn invalid(why: String) -> SelectorError {
    SelectorError::InvalidAnswer { why }
}

fn transport(error: reqwest::Error) -> SelectorError {
    SelectorError::Transport(describe(&error.without_url()))
}

/// The error and its causes on one line (reqwest's own message alone hides the cause, such as
/// "connection refused").
fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_without_version_gets_v1_chat_completions() {
        let url = chat_completions_url("http://127.0.0.1:8080/").unwrap();
        assert_eq!(url.as_str(), "http://127.0.0.1:8080/v1/chat/completions");
    }

    #[test]
    fn base_url_ending_in_v1_gets_only_chat_completions() {
        let url = chat_completions_url("http://localhost:11434/v1").unwrap();
        assert_eq!(url.as_str(), "http://localhost:11434/v1/chat/completions");
    }

    #[test]
    fn base_url_without_a_host_is_a_config_error() {
        for base in ["http://", "https://", "http:"] {
            let error = chat_completions_url(base).unwrap_err();
            assert!(
                matches!(error, SelectorError::Config(_)),
                "{base}: {error:?}"
            );
        }
    }

    #[test]
    fn base_url_with_another_scheme_is_a_config_error() {
        let error = chat_completions_url("ftp://example.com").unwrap_err();
        assert!(matches!(error, SelectorError::Config(_)));
    }

    #[test]
    fn content_wrapped_in_a_json_fence_is_parsed() {
        let content = "Here you go:\n```json\n{\"selected_memories\": [\"/a.md\"]}\n```\n";
        let value = parse_answer_content(content).unwrap();
        assert_eq!(value, json!({ "selected_memories": ["/a.md"] }));
    }

    #[test]
    fn an_object_with_the_answer_key_is_preferred_over_an_earlier_one() {
        let content = "I considered {\"note\": 1} and chose {\"selected_memories\": []}.";
        let value = parse_answer_content(content).unwrap();
        assert_eq!(value, json!({ "selected_memories": [] }));
    }

    #[test]
    fn content_without_an_object_is_an_invalid_answer() {
        let error = parse_answer_content("I cannot decide.").unwrap_err();
        assert!(matches!(error, SelectorError::InvalidAnswer { .. }));
    }
}
