//! The HTTP adapter against a real loopback server.

use std::time::{Duration, Instant};

use selector::{
    AnswerError, CancellationToken, Candidate, SELECTOR_CEILING, SelectionRequest, Selector,
    SelectorError,
};
use selector_http::{ApiKey, ConfigError, HttpSelector, HttpSelectorConfig, ReplyError};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

use support::{ids, sample_candidates};

// The port's own test candidates, so both crates test against the same manifest.
#[allow(dead_code)] // not every helper there is used here
#[path = "../../selector/tests/it/support.rs"]
mod support;

const DEPLOY: &str = "/work/app/.memory/project/deploy-checklist.md";
const ROLE: &str = "/home/dev/.memory/user/role.md";
const GRAFANA: &str = "/work/app/.memory/reference/grafana.md";
const SECRET: &str = "sk-test-very-secret-4f9a";
/// An environment variable no test environment sets, for "no key" selectors.
const UNSET_KEY_ENV: &str = "MEMRECALL_SELECTOR_TEST_KEY_THAT_IS_NEVER_SET";

/// A chat completion whose first message carries `content`.
fn completion(content: &str) -> Value {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_796_040_000,
        "model": "test-model",
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": content },
            "finish_reason": "stop"
        }]
    })
}

async fn server_answering(template: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(template)
        .mount(&server)
        .await;
    server
}

async fn server_with_content(content: &str) -> MockServer {
    server_answering(ResponseTemplate::new(200).set_body_json(completion(content))).await
}

fn config(server: &MockServer) -> HttpSelectorConfig {
    let mut config = HttpSelectorConfig::new(server.uri(), "test-model");
    UNSET_KEY_ENV.clone_into(&mut config.api_key_env);
    config
}

fn selector_with_key(server: &MockServer) -> HttpSelector {
    HttpSelector::with_api_key(config(server), Some(ApiKey::new(SECRET))).unwrap()
}

async fn select_with(
    selector: &HttpSelector,
    candidates: &[Candidate],
    limit: usize,
) -> Result<Vec<String>, SelectorError> {
    let request = SelectionRequest::new("how do we deploy?", candidates, limit);
    selector.select(request, CancellationToken::new()).await
}

async fn ask(server: &MockServer) -> Result<Vec<String>, SelectorError> {
    select_with(&selector_with_key(server), &sample_candidates(), 5).await
}

async fn only_request(server: &MockServer) -> Request {
    let mut requests = server.received_requests().await.unwrap();
    assert_eq!(requests.len(), 1);
    requests.remove(0)
}

#[tokio::test]
async fn a_correct_answer_returns_the_selected_ids() {
    let server =
        server_with_content(&json!({ "selected_memories": [DEPLOY, GRAFANA] }).to_string()).await;
    assert_eq!(ask(&server).await.unwrap(), ids(&[DEPLOY, GRAFANA]));
}

#[tokio::test]
async fn the_request_body_carries_prompt_manifest_recent_tools_and_schema() {
    let server = server_with_content(r#"{"selected_memories": []}"#).await;
    let candidates = sample_candidates();
    let tools = ids(&["mcp__grafana__query_dashboard", "Bash"]);
    let request = SelectionRequest::new("why is the checkout dashboard red?", &candidates, 5)
        .with_recent_tools(&tools);
    selector_with_key(&server)
        .select(request, CancellationToken::new())
        .await
        .unwrap();

    let body: Value = only_request(&server).await.body_json().unwrap();
    insta::assert_json_snapshot!(body);
}

#[tokio::test]
async fn an_answer_naming_an_unknown_path_is_rejected() {
    let server =
        server_with_content(&json!({ "selected_memories": [DEPLOY, "/tmp/other.md"] }).to_string())
            .await;
    assert!(matches!(
        ask(&server).await,
        Err(SelectorError::InvalidAnswer(_))
    ));
}

#[tokio::test]
async fn an_answer_with_more_paths_than_the_limit_is_rejected() {
    let server =
        server_with_content(&json!({ "selected_memories": [DEPLOY, ROLE, GRAFANA] }).to_string())
            .await;
    let result = select_with(&selector_with_key(&server), &sample_candidates(), 2).await;
    assert!(matches!(result, Err(SelectorError::InvalidAnswer(_))));
}

#[tokio::test]
async fn duplicate_paths_in_an_answer_are_collapsed() {
    let server = server_with_content(
        &json!({ "selected_memories": [ROLE, ROLE, DEPLOY, ROLE] }).to_string(),
    )
    .await;
    assert_eq!(ask(&server).await.unwrap(), ids(&[ROLE, DEPLOY]));
}

#[tokio::test]
async fn an_answer_of_the_wrong_shape_is_rejected() {
    let server = server_with_content(&json!({ "selected_memories": DEPLOY }).to_string()).await;
    assert!(matches!(
        ask(&server).await,
        Err(SelectorError::InvalidAnswer(_))
    ));
}

#[tokio::test]
async fn non_json_content_is_rejected() {
    let server = server_with_content("The deploy checklist looks most useful.").await;
    assert!(matches!(
        ask(&server).await,
        Err(SelectorError::InvalidAnswer(_))
    ));
}

#[tokio::test]
async fn an_answer_wrapped_in_prose_and_a_json_fence_is_accepted() {
    let content = format!(
        "Sure! Here is my selection:\n```json\n{}\n```\nLet me know if you need more.",
        json!({ "selected_memories": [ROLE] })
    );
    let server = server_with_content(&content).await;
    assert_eq!(ask(&server).await.unwrap(), ids(&[ROLE]));
}

#[tokio::test]
async fn a_response_that_is_not_a_chat_completion_is_rejected() {
    let server =
        server_answering(ResponseTemplate::new(200).set_body_string("<html>hi</html>")).await;
    assert!(matches!(
        ask(&server).await,
        Err(SelectorError::InvalidAnswer(_))
    ));
}

#[tokio::test]
async fn a_completion_without_choices_is_rejected() {
    let server =
        server_answering(ResponseTemplate::new(200).set_body_json(json!({ "choices": [] }))).await;
    assert!(matches!(
        ask(&server).await,
        Err(SelectorError::InvalidAnswer(_))
    ));
}

async fn status_of(code: u16) -> Result<Vec<String>, SelectorError> {
    let server = server_answering(
        ResponseTemplate::new(code).set_body_json(json!({ "error": { "message": "nope" } })),
    )
    .await;
    ask(&server).await
}

#[tokio::test]
async fn http_400_is_reported_with_its_status_and_the_servers_message() {
    assert_eq!(
        status_of(400).await,
        Err(SelectorError::HttpMessage {
            status: 400,
            message: "nope".to_owned()
        })
    );
}

#[tokio::test]
async fn http_401_is_reported_with_its_status_and_the_servers_message() {
    assert_eq!(
        status_of(401).await,
        Err(SelectorError::HttpMessage {
            status: 401,
            message: "nope".to_owned()
        })
    );
}

#[tokio::test]
async fn http_401_keeps_the_servers_message_with_the_key_redacted() {
    let server = server_answering(ResponseTemplate::new(401).set_body_json(json!({
        "error": {
            "message": format!("Incorrect API key provided: {SECRET}. Check your key."),
            "type": "invalid_request_error"
        }
    })))
    .await;
    let error = ask(&server).await.unwrap_err();
    assert_eq!(
        error,
        SelectorError::HttpMessage {
            status: 401,
            message: "Incorrect API key provided: [redacted]. Check your key.".to_owned()
        }
    );
    assert_eq!(error.kind(), "http_401");
    assert!(!error.to_string().contains("4f9a"), "{error}");
}

#[tokio::test]
async fn http_429_is_reported_with_its_status_and_the_servers_message() {
    assert_eq!(
        status_of(429).await,
        Err(SelectorError::HttpMessage {
            status: 429,
            message: "nope".to_owned()
        })
    );
}

#[tokio::test]
async fn a_redirect_is_reported_with_its_status_and_not_followed() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(307).insert_header("location", "/elsewhere/chat/completions"),
        )
        .mount(&server)
        .await;
    Mock::given(path("/elsewhere/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion(
            &json!({ "selected_memories": [DEPLOY] }).to_string(),
        )))
        .mount(&server)
        .await;

    assert_eq!(ask(&server).await, Err(SelectorError::Http { status: 307 }));
    assert_eq!(
        only_request(&server).await.url.path(),
        "/v1/chat/completions"
    );
}

#[tokio::test]
async fn http_500_is_reported_with_its_status_and_the_servers_message() {
    assert_eq!(
        status_of(500).await,
        Err(SelectorError::HttpMessage {
            status: 500,
            message: "nope".to_owned()
        })
    );
}

#[tokio::test]
async fn a_response_slower_than_the_ceiling_times_out() {
    let server = server_answering(
        ResponseTemplate::new(200)
            .set_body_json(completion(r#"{"selected_memories": []}"#))
            .set_delay(Duration::from_secs(5)),
    )
    .await;
    let mut config = config(&server);
    config.ceiling = Duration::from_millis(200);
    let selector = HttpSelector::with_api_key(config, None).unwrap();

    let started = Instant::now();
    let result = select_with(&selector, &sample_candidates(), 5).await;

    assert_eq!(
        result,
        Err(SelectorError::Timeout(Duration::from_millis(200)))
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn cancelling_while_the_request_is_in_flight_returns_cancelled_promptly() {
    let server = server_answering(
        ResponseTemplate::new(200)
            .set_body_json(completion(r#"{"selected_memories": []}"#))
            .set_delay(Duration::from_secs(10)),
    )
    .await;
    let selector = selector_with_key(&server);
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        canceller.cancel();
    });
    let candidates = sample_candidates();
    let request = SelectionRequest::new("q", &candidates, 5);

    let started = Instant::now();
    let result = selector.select(request, cancel).await;

    assert_eq!(result, Err(SelectorError::Cancelled));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn an_already_cancelled_call_sends_nothing() {
    let server = server_with_content(r#"{"selected_memories": []}"#).await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let candidates = sample_candidates();
    let request = SelectionRequest::new("q", &candidates, 5);

    let result = selector_with_key(&server).select(request, cancel).await;

    assert_eq!(result, Err(SelectorError::Cancelled));
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn no_candidates_return_an_empty_selection_without_a_request() {
    let server = server_with_content(r#"{"selected_memories": []}"#).await;
    let result = select_with(&selector_with_key(&server), &[], 5).await;
    assert_eq!(result, Ok(Vec::new()));
    assert!(server.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_unreachable_server_is_a_transport_error() {
    // Bind then drop a listener so the port is known to be closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = HttpSelectorConfig::new(format!("http://127.0.0.1:{port}"), "m");
    let selector = HttpSelector::with_api_key(config, Some(ApiKey::new(SECRET))).unwrap();

    let result = select_with(&selector, &sample_candidates(), 5).await;

    let Err(error @ SelectorError::Transport(_)) = result else {
        panic!("expected a transport error, got {result:?}");
    };
    assert!(!error.to_string().contains(SECRET), "{}", error.to_string());
}

#[tokio::test]
async fn the_api_key_is_sent_as_a_bearer_token() {
    let server = server_with_content(r#"{"selected_memories": []}"#).await;
    ask(&server).await.unwrap();
    let request = only_request(&server).await;
    assert_eq!(
        request
            .headers
            .get("authorization")
            .unwrap()
            .to_str()
            .unwrap(),
        format!("Bearer {SECRET}")
    );
}

#[tokio::test]
async fn an_unset_key_variable_sends_no_authorization_header() {
    let server = server_with_content(r#"{"selected_memories": []}"#).await;
    let selector = HttpSelector::new(config(&server)).unwrap();
    select_with(&selector, &sample_candidates(), 5)
        .await
        .unwrap();
    assert!(
        only_request(&server)
            .await
            .headers
            .get("authorization")
            .is_none()
    );
}

#[tokio::test]
async fn a_selector_without_its_key_variable_notes_it_and_one_with_a_key_does_not() {
    let server = server_with_content(r#"{"selected_memories": []}"#).await;
    let unset = HttpSelector::new(config(&server)).unwrap();
    let note = unset.failure_note().unwrap();
    assert!(
        note.contains("which is not set, so no API key was sent"),
        "{note}"
    );
    let mut with_key = config(&server);
    "CARGO_PKG_NAME".clone_into(&mut with_key.api_key_env);
    assert_eq!(HttpSelector::new(with_key).unwrap().failure_note(), None);
}

#[tokio::test]
async fn the_key_is_read_from_the_named_environment_variable() {
    // Cargo sets CARGO_PKG_NAME for the test process; setting a variable of our own would need
    // `unsafe`, which the workspace forbids.
    let expected = std::env::var("CARGO_PKG_NAME").unwrap();
    let server = server_with_content(r#"{"selected_memories": []}"#).await;
    let mut config = config(&server);
    "CARGO_PKG_NAME".clone_into(&mut config.api_key_env);
    let selector = HttpSelector::new(config).unwrap();

    select_with(&selector, &sample_candidates(), 5)
        .await
        .unwrap();

    let request = only_request(&server).await;
    assert_eq!(
        request
            .headers
            .get("authorization")
            .unwrap()
            .to_str()
            .unwrap(),
        format!("Bearer {expected}")
    );
}

#[tokio::test]
async fn the_api_key_is_absent_from_debug_output() {
    let server = MockServer::start().await;
    let selector = selector_with_key(&server);
    let debug = format!("{selector:?}");
    assert!(!debug.contains(SECRET), "{debug}");
    assert!(debug.contains("<redacted>"), "{debug}");
    assert!(!format!("{:?}", ApiKey::new(SECRET)).contains(SECRET));
}

#[tokio::test]
async fn the_api_key_is_absent_from_error_messages() {
    for server in [
        status_of_server(401).await,
        server_with_content("not json at all").await,
        server_with_content(&json!({ "selected_memories": [SECRET] }).to_string()).await,
    ] {
        let error = ask(&server).await.unwrap_err();
        assert!(!error.to_string().contains(SECRET), "{}", error.to_string());
        assert!(!format!("{error:?}").contains(SECRET), "{error:?}");
    }
}

async fn status_of_server(code: u16) -> MockServer {
    server_answering(ResponseTemplate::new(code)).await
}

#[test]
fn a_configured_ceiling_above_thirty_seconds_is_capped() {
    let mut config = HttpSelectorConfig::new("http://127.0.0.1:9", "m");
    config.ceiling = Duration::from_mins(10);
    let selector = HttpSelector::with_api_key(config, None).unwrap();
    assert_eq!(selector.ceiling(), SELECTOR_CEILING);
}

#[test]
fn a_key_with_a_line_break_is_a_config_error_that_does_not_quote_it() {
    let config = HttpSelectorConfig::new("http://127.0.0.1:9", "m");
    let error = HttpSelector::with_api_key(config, Some(ApiKey::new("sk-a\nb"))).unwrap_err();
    assert!(matches!(error, ConfigError::KeyNotHeaderSafe));
    assert!(!error.to_string().contains("sk-a"));
}

#[tokio::test]
async fn a_key_echoed_back_in_a_malformed_response_stays_out_of_the_error() {
    let server =
        server_answering(ResponseTemplate::new(200).set_body_json(json!({ "choices": SECRET })))
            .await;
    let error = ask(&server).await.unwrap_err();
    let SelectorError::InvalidAnswer(AnswerError::Reply(reply)) = &error else {
        panic!("expected an unreadable reply, got {error:?}");
    };
    assert!(reply.get().is::<ReplyError>(), "{reply:?}");
    assert!(!error.to_string().contains(SECRET), "{}", error.to_string());
    assert!(!format!("{error:?}").contains(SECRET), "{error:?}");
}
