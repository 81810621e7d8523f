//! `memrecall uninstall` end to end: after hooks for every agent and some recalls, the home is
//! file for file what it was before install, and each agent's settings byte for byte.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use super::{World, claude_prompt, deploy_memories, write};

/// Runs the binary in the world's repository with only `HOME` (and the world's temporary
/// directory) set: memrecall's home is the default `~/.memrecall`.
fn run(world: &World, args: &[&str], stdin: &str) -> super::Finished {
    let mut child = Command::new(crate::support::binary())
        .args(args)
        .current_dir(world.repo())
        .env_clear()
        .env("HOME", world.home())
        .env("TMPDIR", world.path("tmp"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("memrecall can be started");
    let mut input = child.stdin.take().unwrap();
    let _ = std::io::Write::write_all(&mut input, stdin.as_bytes());
    drop(input);
    let output = child.wait_with_output().unwrap();
    super::Finished {
        code: output.status.code(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// Every file and directory below `dir`, with each file's bytes.
fn listing(dir: &Path) -> BTreeMap<String, Option<String>> {
    let mut found = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            let name = path.strip_prefix(dir).unwrap().display().to_string();
            if std::fs::symlink_metadata(&path).unwrap().is_dir() {
                pending.push(path);
                found.insert(name, None);
            } else {
                let bytes = std::fs::read(&path).unwrap();
                found.insert(name, Some(String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    found
}

#[test]
fn uninstall_after_hooks_for_every_agent_and_recalls_leaves_the_home_as_it_was() {
    let world = World::new();
    write(
        &world.home().join(".claude/settings.json"),
        "{\n  \"model\": \"opus\"\n}\n",
    );
    write(
        &world.home().join(".qwen/settings.json"),
        "{\"ui\":   {\"theme\": \"dark\"}}",
    );
    deploy_memories(&world.claude_memory(&world.repo()));
    let before = listing(&world.home());

    for agent in ["claude-code", "qwen-code", "gemini-cli", "codex"] {
        let installed = run(
            &world,
            &["hook", "install", "--agent", agent, "--write"],
            "",
        );
        assert_eq!(installed.code, Some(0), "{agent}: {}", installed.stderr);
    }
    let recalled = run(
        &world,
        &["recall", "--layout", "claude-code", "release checklist"],
        "",
    );
    assert!(
        recalled.stdout.contains("Deploy checklist"),
        "{}",
        recalled.stderr
    );
    let prompt = claude_prompt(&world.repo(), "release checklist").to_string();
    let hooked = run(&world, &["hook", "--agent", "claude-code"], &prompt);
    assert_eq!(hooked.code, Some(0), "{}", hooked.stderr);
    // memrecall writes nothing in the agent's memory folder, only under its own home.
    assert!(
        !world
            .claude_memory(&world.repo())
            .join(".memrecall")
            .exists()
    );
    assert!(world.home().join(".memrecall/catalogs").exists());

    let removed = run(&world, &["uninstall", "--delete-notes"], "");

    assert_eq!(
        removed.code,
        Some(0),
        "{}\n{}",
        removed.stdout,
        removed.stderr
    );
    assert_eq!(listing(&world.home()), before, "{}", removed.stdout);
}

#[test]
fn uninstall_without_a_terminal_or_a_flag_keeps_the_notes_and_says_so() {
    let world = World::new();
    let notes = world.home().join(".memrecall/memories/style.md");
    write(
        &notes,
        &super::topic_text("Release notes style", "Terse", "feedback", ""),
    );
    write(&world.home().join(".memrecall/logs/hook.log"), "a line\n");

    let removed = run(&world, &["uninstall"], "");

    assert_eq!(removed.code, Some(0), "{}", removed.stderr);
    assert!(
        removed.stdout.contains("kept your notes"),
        "{}",
        removed.stdout
    );
    assert!(notes.is_file());
    assert!(!world.home().join(".memrecall/logs").exists());
}

#[test]
fn uninstall_names_the_agents_own_command_for_an_extension_it_did_not_install() {
    let world = World::new();
    std::fs::create_dir_all(world.home().join(".gemini/extensions/memrecall")).unwrap();

    let removed = run(&world, &["uninstall", "--keep-notes"], "");

    assert_eq!(removed.code, Some(0), "{}", removed.stderr);
    assert!(
        removed
            .stdout
            .contains("  gemini extensions uninstall memrecall\n"),
        "{}",
        removed.stdout
    );
    assert!(world.home().join(".gemini/extensions/memrecall").is_dir());
}

#[test]
fn uninstall_leaves_a_roots_memrecall_folder_that_holds_more_than_a_catalog() {
    let world = World::new();
    let memory = world.claude_memory(&world.repo());
    deploy_memories(&memory);
    write(&memory.join(".memrecall/catalog"), "old catalog");
    write(&memory.join(".memrecall/mine.txt"), "not memrecall's");

    let removed = run(&world, &["uninstall", "--keep-notes"], "");

    assert_eq!(removed.code, Some(1), "{}", removed.stdout);
    assert!(!memory.join(".memrecall/catalog").exists());
    assert_eq!(
        std::fs::read_to_string(memory.join(".memrecall/mine.txt")).unwrap(),
        "not memrecall's"
    );
    assert!(
        removed.stdout.contains("not memrecall's catalog"),
        "{}",
        removed.stdout
    );
}
