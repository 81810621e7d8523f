//! What `recall`'s text says besides the deliveries: why the selector failed, was skipped or
//! stood in, and which default root does not exist yet.

use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::{Tree, UNSET_KEY_ENV};

const QUERY: &str = "release checklist";

/// The lines of `text` starting with `note: `.
fn notes(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.starts_with("note: ")).collect()
}

/// A loopback server answering every chat completion with `status` and an OpenAI-compatible
/// error body.
async fn refusing_server(status: u16, message: &str) -> MockServer {
    refusing_server_after(status, message, std::time::Duration::ZERO).await
}

/// [`refusing_server`] answering each request after `delay`.
async fn refusing_server_after(
    status: u16,
    message: &str,
    delay: std::time::Duration,
) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(status).set_delay(delay).set_body_json(json!({
            "error": { "message": message, "type": "invalid_request_error", "code": "invalid_api_key" }
        })))
        .mount(&server)
        .await;
    server
}

/// A tool-using recall over the standard tree with the HTTP selector at `url`, the key read
/// from `key_env`.
fn recall_with_http_selector(tree: &Tree, url: &str, key_env: &str) -> crate::support::Run {
    recall_with(tree, url, key_env, &["--tool-using"])
}

/// A recall over the standard tree with the HTTP selector at `url`, the key read from
/// `key_env`, and `extra` arguments.
fn recall_with(tree: &Tree, url: &str, key_env: &str, extra: &[&str]) -> crate::support::Run {
    let mut args = vec![
        "--selector",
        "http",
        "--selector-url",
        url,
        "--selector-model",
        "m",
        "--api-key-env",
        key_env,
    ];
    args.extend_from_slice(extra);
    tree.run_with_roots("recall", QUERY, &args)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_selector_refusal_is_told_with_the_servers_own_message_and_no_key() {
    let server = refusing_server(
        401,
        "Incorrect API key provided: sk-proj-abc1***************wxyz. You can find your API key at https://platform.openai.com/account/api-keys.",
    )
    .await;
    let tree = Tree::standard();
    let url = server.uri();
    let run =
        tokio::task::spawn_blocking(move || recall_with_http_selector(&tree, &url, UNSET_KEY_ENV))
            .await
            .unwrap();
    run.success();
    let notes = notes(&run.stdout);
    assert!(
        notes.iter().any(|n| n.starts_with(
            "note: the selector failed (selector answered HTTP 401: Incorrect API key provided: [redacted]"
        )),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("abc1"), "{}", run.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_key_variable_that_is_not_set_is_named() {
    let server = refusing_server(401, "You didn't provide an API key.").await;
    let tree = Tree::standard();
    let url = server.uri();
    let run =
        tokio::task::spawn_blocking(move || recall_with_http_selector(&tree, &url, UNSET_KEY_ENV))
            .await
            .unwrap();
    run.success();
    assert!(
        notes(&run.stdout).iter().any(|n| n.contains(&format!(
            "api_key_env names {UNSET_KEY_ENV}, which is not set"
        ))),
        "{}",
        run.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_free_recall_says_the_selectors_refusal_rather_than_that_the_turn_ended_first() {
    // The refusal comes after the initial point (the fast result is out by then), as a hosted
    // provider's does.
    let server = refusing_server_after(
        401,
        "Incorrect API key provided: sk-x.",
        std::time::Duration::from_millis(300),
    )
    .await;
    let tree = Tree::standard();
    let url = server.uri();
    let run = tokio::task::spawn_blocking(move || recall_with(&tree, &url, UNSET_KEY_ENV, &[]))
        .await
        .unwrap();
    run.success();
    let notes = notes(&run.stdout);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("note: the selector failed (selector answered HTTP 401")),
        "{}",
        run.stdout
    );
    assert!(
        !run.stdout
            .contains("the turn ended before the selector answered"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_tool_free_recall_with_an_unreachable_selector_says_what_became_of_it() {
    // A port nobody listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let tree = Tree::standard();
    let run = tree.run_with_roots(
        "recall",
        QUERY,
        &[
            "--selector",
            "http",
            "--selector-url",
            &format!("http://127.0.0.1:{port}"),
            "--selector-model",
            "m",
            "--api-key-env",
            UNSET_KEY_ENV,
        ],
    );
    run.success();
    // Either the refusal came back before the turn ended, or the turn ended first: both are
    // said.
    assert!(
        notes(&run.stdout).iter().any(|n| {
            n.starts_with("note: the selector failed (selector transport error")
                || n.contains("the turn ended before the selector answered")
        }),
        "{}",
        run.stdout
    );
}

#[test]
fn the_mock_selector_says_it_picks_nothing_unless_scripted() {
    let tree = Tree::standard();
    let run = tree.run_with_roots(
        "recall",
        QUERY,
        &[
            "--selector",
            "mock",
            "--mock-latency-ms",
            "0",
            "--tool-using",
        ],
    );
    run.success();
    assert!(
        notes(&run.stdout).iter().any(|n| n.starts_with(
            "note: the mock selector stands in for a model and picks nothing unless scripted"
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn recall_says_a_missing_default_root_does_not_exist_yet() {
    let tree = Tree::standard();
    let project = tree.project().display().to_string();
    // No --user: the default user root, under a memrecall home that holds no memories.
    let run = tree.run(&["recall", QUERY, "--project", &project]);
    run.success();
    let user = tree.base().join("home/memories");
    assert!(
        run.stdout.lines().any(|l| l.starts_with("roots: ")
            && l.ends_with(&format!("user {} (does not exist yet)", user.display()))),
        "{}",
        run.stdout
    );
}

#[test]
fn recall_and_mcp_say_a_config_error_in_the_same_one_line() {
    let tree = Tree::standard();
    tree.write(
        "home/config.toml",
        "[selector]\nkind = \"http\"\nurl = \"http://127.0.0.1:9\"\nmodle = \"qwen3-4b\"\n",
    );
    let mut mcp = vec!["mcp".to_owned()];
    mcp.extend(tree.root_args());

    let recall = tree.run_with_roots("recall", QUERY, &[]);
    let served = tree.run(&mcp);

    let expected = format!(
        "memrecall: {}: line 4, key `modle`: unknown field `modle`, expected one of `kind`, `url`, `model`, `api_key_env`\n",
        tree.base().join("home/config.toml").display()
    );
    for run in [&recall, &served] {
        assert_eq!(run.code, Some(4), "{}", run.stderr);
        assert_eq!(run.stderr, expected);
    }
}
