//! A hook that cannot reach a server recalls in its own process, and still says a selector
//! failure in `hook.log`, once per kind until `config.toml` changes.

use super::*;

const FAILURE: &str = "claude-code: the selector failed (http_401): selector answered HTTP 401: Incorrect API key provided";

/// A loopback model refusing every request with HTTP 401 and an OpenAI-compatible error body,
/// on a runtime of its own.
fn refusing_model() -> (tokio::runtime::Runtime, wiremock::MockServer) {
    crate::support::loopback_model(
        401,
        json!({"error": {"message": "Incorrect API key provided: sk-abc1***wxyz."}}),
    )
}

#[test]
fn a_hook_recalling_in_its_own_process_logs_a_selector_failure_once_per_configuration() {
    use std::os::unix::fs::PermissionsExt as _;
    let world = World::new();
    deploy_memories(&world.claude_memory(&world.repo()));
    let (_runtime, model) = refusing_model();
    write(
        &world.path("mr/config.toml"),
        &format!(
            "[selector]\nkind = \"http\"\nurl = \"{}\"\nmodel = \"m\"\napi_key_env = \"MEMRECALL_E2E_KEY_THAT_IS_NEVER_SET\"\n",
            model.uri()
        ),
    );
    // A run directory open to others is refused, so no server is started or asked.
    let run_dir = world.path("xdg/memrecall");
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::set_permissions(&run_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let xdg = world.path("xdg");
    let env = [("XDG_RUNTIME_DIR", xdg.to_str().unwrap())];
    let prompt = claude_prompt(&world.repo(), "release checklist");

    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
    let mut after = 0;
    while after < 3 {
        world.hook("claude-code", &prompt, &env);
        let _ = std::fs::remove_dir_all(world.path("mr/state/claude-code"));
        if world.log().contains(FAILURE) {
            after += 1;
        } else {
            assert!(
                std::time::Instant::now() < deadline,
                "never logged; hook.log:\n{}",
                world.log()
            );
        }
    }

    let log = world.log();
    assert!(log.contains("recalling in this process"), "{log}");
    assert_eq!(log.matches(FAILURE).count(), 1, "{log}");
    assert!(!log.contains("abc1"), "{log}");
}

#[test]
fn a_hook_recalling_in_its_own_process_logs_a_walk_limit_once() {
    use std::os::unix::fs::PermissionsExt as _;
    let world = World::new();
    let memory = world.claude_memory(&world.repo());
    deploy_memories(&memory);
    let deep = (0..20).fold(memory.clone(), |dir, _| dir.join("d"));
    topic(&deep, "hidden.md", "Hidden checklist", "", "Too deep.");
    let run_dir = world.path("xdg/memrecall");
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::set_permissions(&run_dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let xdg = world.path("xdg");
    let env = [("XDG_RUNTIME_DIR", xdg.to_str().unwrap())];
    let prompt = claude_prompt(&world.repo(), "release checklist");

    for _ in 0..2 {
        world.hook("claude-code", &prompt, &env);
    }

    let said: Vec<String> = world
        .log()
        .lines()
        .filter(|l| l.contains("directory levels below its root"))
        .map(str::to_owned)
        .collect();
    assert_eq!(said.len(), 1, "{}", world.log());
}
