//! Selector failures and configuration errors show up where the user looks: `serve.log` and
//! `hook.log` (each kind once until `config.toml` changes), `status` and `stats`.

use super::*;

/// A loopback model refusing every request with HTTP 401 and an OpenAI-compatible error body, on a runtime
/// of its own.
fn refusing_model() -> (tokio::runtime::Runtime, MockServer) {
    crate::support::loopback_model(
        401,
        json!({
            "error": {
                "message": "Incorrect API key provided: sk-proj-abc1***wxyz. You can find your API key at https://platform.openai.com/account/api-keys.",
                "type": "invalid_request_error"
            }
        }),
    )
}

const FAILURE: &str = "the selector failed (http_401): selector answered HTTP 401: Incorrect API key provided: [redacted]";

impl World {
    fn serve_log(&self) -> String {
        std::fs::read_to_string(self.path("mr/logs/serve.log")).unwrap_or_default()
    }

    /// Turns (prompt, then stop) in new sessions until the hook's log holds `needle`; then
    /// `more` turns after it.
    fn turns_until_logged(&self, needle: &str, more: usize) {
        let deadline = Instant::now() + PATIENCE;
        let mut turn = 0;
        let mut after = 0;
        while after <= more {
            let session = format!("s{turn}");
            turn += 1;
            self.hook(
                "claude-code",
                &prompt_event(&session, &self.path("repo"), QUERY),
            );
            self.hook("claude-code", &stop_event(&session));
            if self.hook_log().contains(needle) {
                after += 1;
            } else {
                assert!(
                    Instant::now() < deadline,
                    "{needle:?} never logged; hook.log:\n{}",
                    self.hook_log()
                );
            }
        }
    }
}

/// A world whose selector refuses every request, with its server started.
fn world_with_a_refusing_selector() -> (World, tokio::runtime::Runtime, MockServer) {
    let mut world = World::new();
    deploy_memories(&world.claude_memory(&world.path("repo")));
    let (runtime, model) = refusing_model();
    world.selector(&model.uri());
    world.start_server();
    (world, runtime, model)
}

#[test]
fn a_selector_failure_is_logged_once_in_both_logs_with_the_servers_message() {
    let (world, _runtime, _model) = world_with_a_refusing_selector();

    world.turns_until_logged(FAILURE, 2);

    assert_eq!(
        world.hook_log().matches(FAILURE).count(),
        1,
        "{}",
        world.hook_log()
    );
    assert_eq!(
        world.serve_log().matches(FAILURE).count(),
        1,
        "{}",
        world.serve_log()
    );
    assert!(!world.hook_log().contains("abc1"), "{}", world.hook_log());
}

#[test]
fn a_selector_failure_in_the_logs_names_the_unset_key_variable() {
    let (world, _runtime, _model) = world_with_a_refusing_selector();

    world.turns_until_logged(FAILURE, 0);

    let line = world
        .hook_log()
        .lines()
        .find(|l| l.contains(FAILURE))
        .unwrap()
        .to_owned();
    assert!(
        line.contains(
            "api_key_env names MEMRECALL_E2E_KEY_THAT_IS_NEVER_SET, which is not set, so no API key was sent"
        ),
        "{line}"
    );
}

#[test]
fn status_shows_the_last_selector_failure_and_when() {
    let (world, _runtime, _model) = world_with_a_refusing_selector();
    world.turns_until_logged(FAILURE, 0);

    let status = world.status().unwrap();
    let failure = &status["last_selector_error"];
    assert_eq!(failure["kind"], "http_401", "{status}");
    assert!(failure["at"].as_str().unwrap().ends_with('Z'), "{status}");
    let text = world.command(&["status"]).output().unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("selector: last failed at ")
                && l.contains(
                    "(http_401): selector answered HTTP 401: Incorrect API key provided"
                )),
        "{text}"
    );
}

#[test]
fn stats_counts_the_selector_failures_by_kind() {
    let (world, _runtime, _model) = world_with_a_refusing_selector();
    world.turns_until_logged(FAILURE, 0);

    let output = world.command(&["stats", "--json"]).output().unwrap();
    let stats: Value = serde_json::from_slice(&output.stdout).unwrap();
    let rows = stats["selector_errors"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{stats}");
    assert_eq!(rows[0]["kind"], "http_401");
    assert!(rows[0]["count"].as_u64().unwrap() >= 1, "{stats}");
}

#[test]
fn a_config_error_reaches_the_hook_log_as_one_line_naming_key_and_line() {
    let mut world = World::new();
    deploy_memories(&world.claude_memory(&world.path("repo")));
    std::fs::write(
        world.path("mr/config.toml"),
        "[selector]\nkind = \"http\"\nurl = \"http://127.0.0.1:9\"\nmodle = \"qwen3-4b\"\n[serve]\nidle_exit = \"60s\"\n",
    )
    .unwrap();
    world.start_server();

    world.turns_until_logged("line 4, key `modle`", 0);

    let line = world
        .hook_log()
        .lines()
        .find(|l| l.contains("line 4, key `modle`"))
        .unwrap()
        .to_owned();
    assert!(
        line.contains("config.toml: line 4, key `modle`: unknown field `modle`, expected one of"),
        "{line}"
    );
    assert!(!line.contains("qwen3-4b"), "{line}");
    // `recall` says the same words.
    let recall = world.command(&["recall", QUERY]).output().unwrap();
    let stderr = String::from_utf8(recall.stderr).unwrap();
    let said = line
        .split_once("config.toml: ")
        .map(|(_, rest)| rest.split("; recalling").next().unwrap_or(rest))
        .unwrap();
    assert!(stderr.contains(said), "{stderr}\nvs {said}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
