//! The libraries' `tracing` events of a hook's recall, in the logs as `MEMRECALL_LOG` chooses:
//! `hook.log` when the hook recalls in its own process, `serve.log` when the server it started
//! (which inherits the variable) recalls for it.

use super::{World, claude_prompt, deploy_memories};

/// Both logs a hook's recall may write to.
fn logs(world: &World) -> String {
    let serve = std::fs::read_to_string(world.path("mr/logs/serve.log")).unwrap_or_default();
    world.log() + &serve
}

#[test]
fn memrecall_log_info_puts_the_libraries_events_of_a_hooks_recall_in_the_logs() {
    let world = World::new();
    deploy_memories(&world.claude_memory(&world.repo()));
    world.hook_delivering(
        "claude-code",
        &claude_prompt(&world.repo(), "release checklist"),
        &[("MEMRECALL_LOG", "info")],
    );
    let log = logs(&world);
    assert!(
        log.lines()
            .any(|l| l.contains(" INFO memory_recall:") && l.contains("delivery")),
        "{log}"
    );
}

#[test]
fn without_memrecall_log_a_hook_records_no_information_events() {
    let world = World::new();
    deploy_memories(&world.claude_memory(&world.repo()));
    world.hook_delivering(
        "claude-code",
        &claude_prompt(&world.repo(), "release checklist"),
        &[],
    );
    let log = logs(&world);
    assert!(!log.contains(" INFO "), "{log}");
}
