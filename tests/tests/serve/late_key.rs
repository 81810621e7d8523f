//! A server started without the selector's API key, the key exported afterwards and the agent
//! started again with it: the next prompt's hook hands the key over and the selector's request
//! carries it, without `memrecall stop`.

use super::*;

/// The variable `api_key_env` names in these tests; never set in the server's environment.
const LATE_KEY_ENV: &str = "MEMRECALL_E2E_LATE_KEY";

/// A world whose selector, a loopback model picking nothing, reads its key from
/// [`LATE_KEY_ENV`], with its server started without that variable.
fn world_started_without_the_key() -> (World, tokio::runtime::Runtime, MockServer) {
    let mut world = World::new();
    deploy_memories(&world.claude_memory(&world.path("repo")));
    let answer = json!({ "selected_memories": [] }).to_string();
    let (runtime, model) = crate::support::loopback_model(200, completion(&answer));
    world.config(&format!(
        "[selector]\nkind = \"http\"\nurl = \"{}\"\nmodel = \"m\"\napi_key_env = \"{LATE_KEY_ENV}\"\n",
        model.uri()
    ));
    world.start_server();
    (world, runtime, model)
}

/// The `Authorization` headers of the requests `model` received so far, once there are `count`.
fn authorizations(
    runtime: &tokio::runtime::Runtime,
    model: &MockServer,
    count: usize,
) -> Vec<Option<String>> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let received = runtime
            .block_on(model.received_requests())
            .unwrap_or_default();
        if received.len() >= count {
            return received
                .iter()
                .map(|r| {
                    r.headers
                        .get("authorization")
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned)
                })
                .collect();
        }
        assert!(
            Instant::now() < deadline,
            "the model received {} request(s), not {count}",
            received.len()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_key_exported_after_the_server_started_reaches_the_next_prompts_selector_request() {
    let (world, runtime, model) = world_started_without_the_key();
    let repo = world.path("repo");
    world.hook("claude-code", &prompt_event("before", &repo, QUERY));
    assert_eq!(authorizations(&runtime, &model, 1), [None]);
    assert_eq!(
        world.status().unwrap()["selector_key_unset"],
        LATE_KEY_ENV,
        "the server says its selector has no key"
    );

    world.hook_with(
        "claude-code",
        &prompt_event("after", &repo, QUERY),
        &[(LATE_KEY_ENV, "sk-exported-later")],
    );

    let sent = authorizations(&runtime, &model, 2);
    assert_eq!(sent[1].as_deref(), Some("Bearer sk-exported-later"));
    assert!(world.status().unwrap().get("selector_key_unset").is_none());
    assert!(
        !std::fs::read_to_string(world.path("mr/logs/serve.log"))
            .unwrap_or_default()
            .contains("sk-exported-later"),
        "the key is never logged"
    );
}

#[test]
fn a_prompt_whose_hook_lacks_the_key_leaves_the_one_in_use() {
    let (world, runtime, model) = world_started_without_the_key();
    let repo = world.path("repo");
    world.hook_with(
        "claude-code",
        &prompt_event("with", &repo, QUERY),
        &[(LATE_KEY_ENV, "sk-first")],
    );
    authorizations(&runtime, &model, 1);

    world.hook("claude-code", &prompt_event("without", &repo, QUERY));

    let sent = authorizations(&runtime, &model, 2);
    assert_eq!(sent[1].as_deref(), Some("Bearer sk-first"));
}
