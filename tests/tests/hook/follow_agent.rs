//! Commands without `--layout` follow the layouts of the installed hooks: a note written where
//! `roots` says is the note the agent's hook delivers, and `doctor` names notes no installed
//! agent reads.

use std::path::PathBuf;

use serde_json::json;

use super::{World, claude_prompt, titles, topic};

fn install(world: &World, agent: &str) {
    let run = world.run(&["hook", "install", "--agent", agent, "--write"], "", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

/// The root `memrecall roots` names for `scope` (`project` or `user`), from the repository.
fn root_named(world: &World, scope: &str) -> PathBuf {
    let run = world.run(&["roots"], "", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let line = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{scope}: ")))
        .unwrap_or_else(|| panic!("no {scope} root in\n{}", run.stdout));
    PathBuf::from(line.trim_end_matches(" (does not exist yet)"))
}

fn a_note(dir: &std::path::Path) {
    topic(
        dir,
        "deploy-runbook.md",
        "Deploy runbook",
        "How the shop is deployed to production",
        "Tag the release, then run the deploy pipeline.",
    );
}

fn qwen_prompt(world: &World, prompt: &str) -> serde_json::Value {
    json!({
        "session_id": "q1", "prompt_id": "q1########1", "cwd": world.repo(),
        "hook_event_name": "UserPromptSubmit", "prompt": prompt
    })
}

#[test]
fn with_only_claude_codes_hook_a_note_written_where_roots_says_is_delivered_by_it() {
    let world = World::new();
    install(&world, "claude-code");
    let project = root_named(&world, "project");
    assert_eq!(project, world.claude_memory(&world.repo()));
    a_note(&project);

    let run = world.hook_delivering(
        "claude-code",
        &claude_prompt(&world.repo(), "how is the shop deployed?"),
        &[],
    );

    assert_eq!(titles(&run.context("UserPromptSubmit")), ["Deploy runbook"]);
}

#[test]
fn with_only_qwen_codes_hook_a_note_written_where_roots_says_is_delivered_by_it() {
    let world = World::new();
    install(&world, "qwen-code");
    super::qwen_own_recall_off(&world.home().join(".qwen"));
    let user = root_named(&world, "user");
    assert_eq!(user, world.home().join(".qwen/memories"));
    a_note(&user);

    let run = world.hook_delivering(
        "qwen-code",
        &qwen_prompt(&world, "how is the shop deployed?"),
        &[],
    );

    assert_eq!(titles(&run.context("UserPromptSubmit")), ["Deploy runbook"]);
}

#[test]
fn with_qwen_codes_own_recall_on_roots_says_qwen_code_delivers_its_notes_itself() {
    let world = World::new();
    install(&world, "qwen-code");

    let run = world.run(&["roots"], "", &[]);

    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = run.stdout;
    assert!(
        out.contains("Qwen Code delivers these notes itself (memory.enableManagedAutoMemory is on by default)"),
        "{out}"
    );
}

#[test]
fn with_no_hook_installed_roots_names_memrecalls_layout_and_says_why() {
    let world = World::new();
    let run = world.run(&["roots"], "", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout.starts_with(
            "layout: memrecall\n  no agent runs memrecall's hook, so memrecall's own layout"
        ),
        "{}",
        run.stdout
    );
    assert_eq!(root_named(&world, "user"), world.path("mr/memories"));
}

#[test]
fn rank_without_a_layout_reads_the_installed_hooks_layout_and_says_so() {
    let world = World::new();
    install(&world, "claude-code");
    a_note(&world.claude_memory(&world.repo()));

    let run = world.run(&["rank", "deploy runbook", "--json"], "", &[]);

    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let value: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(value["ranked"][0]["title"], "Deploy runbook", "{value}");
    let settings = world.home().join(".claude/settings.json");
    assert!(
        run.stderr.contains(&format!(
            "memrecall: layout claude-code (read by claude-code's hook in {})",
            settings.display()
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn roots_lists_each_installed_layout_and_which_one_the_commands_read() {
    let world = World::new();
    install(&world, "qwen-code");
    install(&world, "codex");

    let run = world.run(&["roots"], "", &[]);

    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let layouts: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("layout: "))
        .collect();
    assert_eq!(layouts, ["layout: qwen-code", "layout: memrecall"]);
    assert!(
        run.stdout.contains(
            "recall, scan and rank read the first layout (qwen-code); --layout chooses another"
        ),
        "{}",
        run.stdout
    );
}

#[cfg(unix)]
#[test]
fn doctor_names_notes_no_installed_agent_reads_and_its_fix_moves_them_to_the_agent() {
    let world = World::new();
    install(&world, "qwen-code");
    super::qwen_own_recall_off(&world.home().join(".qwen"));
    let unread = world.path("mr/memories");
    a_note(&unread);
    let repo = world.repo();
    let doctor = || world.run(&["doctor", "--cwd", repo.to_str().unwrap()], "", &[]);

    let run = doctor();

    assert_eq!(run.code, Some(1), "{}\n{}", run.stdout, run.stderr);
    let problem = format!(
        "1 note(s) in {}, the memrecall layout's user root, which no installed agent reads",
        unread.display()
    );
    assert!(run.stdout.contains(&problem), "{}", run.stdout);
    let fix = run
        .stdout
        .lines()
        .skip_while(|l| !l.contains(&problem))
        .find_map(|l| l.trim().strip_prefix("fix: "))
        .expect("the problem has a fix")
        .to_owned();
    assert!(fix.starts_with("mkdir -p "), "{fix}");
    let moved = std::process::Command::new("sh")
        .args(["-c", &fix])
        .status()
        .unwrap();
    assert!(moved.success(), "{fix}");
    assert!(!doctor().stdout.contains("no installed agent reads"));
    let run = world.hook_delivering(
        "qwen-code",
        &qwen_prompt(&world, "how is the shop deployed?"),
        &[],
    );
    assert_eq!(titles(&run.context("UserPromptSubmit")), ["Deploy runbook"]);
}
