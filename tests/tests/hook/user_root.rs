//! Agents without a user memory of their own (Claude Code here; Gemini CLI and Codex read
//! memrecall's layout whole) take memrecall's user root as their user scope, and `hook install
//! --layout` writes the layout a hook reads into its command.

use super::*;

/// The user memory the README teaches to write, in the memrecall home.
fn no_force_push(world: &World) {
    write(
        &world.path("mr/memories/no-force-push.md"),
        &topic_text(
            "Never force push to main",
            "Force pushing to main rewrites shared history; push a branch and open a pull request",
            "feedback",
            "main is protected: force push only to your own branches.",
        ),
    );
}

#[test]
fn claude_code_hook_delivers_a_user_memory_from_the_memrecall_home() {
    let world = World::new();
    no_force_push(&world);

    let run = world.hook_delivering(
        "claude-code",
        &claude_prompt(&world.repo(), "can I force push to main?"),
        &[],
    );

    assert_eq!(
        titles(&run.context("UserPromptSubmit")),
        ["Never force push to main"]
    );
}

#[test]
fn roots_says_claude_code_takes_memrecalls_user_root() {
    let world = World::new();
    let run = world.run(&["roots", "--layout", "claude-code"], "", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let user = world.path("mr/memories");
    assert!(
        run.stdout
            .contains(&format!("user: {} (does not exist yet)\n", user.display())),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "the user memories in the memrecall home (Claude Code keeps no user memory of its own)"
        ),
        "{}",
        run.stdout
    );
}

#[test]
fn hook_install_writes_the_chosen_layout_into_the_command() {
    let world = World::new();
    let run = world.run(
        &[
            "hook",
            "install",
            "--agent",
            "claude-code",
            "--layout",
            "memrecall",
        ],
        "",
        &[],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let value: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        value["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        format!(
            "{} hook --agent claude-code --layout memrecall",
            installed_binary().display()
        )
    );
}

#[test]
fn installing_again_with_a_layout_replaces_the_entry_and_uninstall_removes_it() {
    let world = World::new();
    let settings = world.home().join(".claude/settings.json");
    let install = |extra: &[&str]| {
        let mut args = vec!["hook", "install", "--agent", "claude-code", "--write"];
        args.extend_from_slice(extra);
        let run = world.run(&args, "", &[]);
        assert_eq!(run.code, Some(0), "{}", run.stderr);
    };
    install(&[]);
    install(&["--layout", "memrecall"]);

    let text = std::fs::read_to_string(&settings).unwrap();
    assert_eq!(
        text.matches("hook --agent claude-code").count(),
        4,
        "{text}"
    );
    assert_eq!(text.matches("--layout memrecall").count(), 4, "{text}");

    let run = world.run(&["hook", "uninstall", "--agent", "claude-code"], "", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(!settings.exists(), "install had created it");
}

#[test]
fn a_recall_from_a_subdirectory_reads_the_roots_the_hook_reads() {
    let world = World::new();
    let project = world
        .path("mr/projects")
        .join(memory_scan::sanitise_project_path(&world.repo()))
        .join("memory");
    deploy_memories(&project);
    let subdirectory = world.repo().join("src/billing");
    std::fs::create_dir_all(&subdirectory).unwrap();

    let rank = world.run_in(
        &subdirectory,
        &[
            "rank",
            "release checklist",
            "--layout",
            "memrecall",
            "--json",
        ],
        "",
        &[],
    );
    let hook = world.hook_delivering(
        "codex",
        &json!({
            "session_id": "c1",
            "cwd": subdirectory,
            "hook_event_name": "UserPromptSubmit",
            "prompt": "release checklist",
        }),
        &[],
    );

    assert_eq!(rank.code, Some(0), "{}", rank.stderr);
    let ranked: Value = serde_json::from_str(&rank.stdout).unwrap();
    assert_eq!(
        ranked["ranked"][0]["path"],
        json!(project.join("deploy.md")),
        "{ranked}"
    );
    assert_eq!(
        titles(&hook.context("UserPromptSubmit")),
        ["Deploy checklist"]
    );
}
