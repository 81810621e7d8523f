//! `memrecall doctor` end to end: a healthy setup, and each kind of problem with its fix.

use serde_json::Value;

use super::{World, deploy_memories, installed_binary, write};

fn install(world: &World, agent: &str, extra: &[&str]) {
    let mut args = vec!["hook", "install", "--agent", agent, "--write"];
    args.extend_from_slice(extra);
    let run = world.run(&args, "", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
}

fn doctor(world: &World, agent: &str, extra: &[&str]) -> super::Finished {
    let repo = world.repo();
    let mut args = vec!["doctor", "--agent", agent, "--cwd", repo.to_str().unwrap()];
    args.extend_from_slice(extra);
    world.run(&args, "", &[])
}

#[test]
fn doctor_on_a_healthy_setup_shows_the_binary_hook_and_roots_and_exits_0() {
    let world = World::new();
    deploy_memories(&world.claude_memory(&world.repo()));
    install(&world, "claude-code", &[]);

    let run = doctor(&world, "claude-code", &[]);

    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let binary = installed_binary();
    let out = &run.stdout;
    assert!(
        out.contains(&format!("binary: {} (version ", binary.display())),
        "{out}"
    );
    assert!(
        out.contains(&format!("  hook: runs {} (present)", binary.display())),
        "{out}"
    );
    let root = world.claude_memory(&world.repo());
    assert!(
        out.contains(&format!("{} (3 topic(s))", root.display())),
        "{out}"
    );
    assert!(out.contains("server: not running"), "{out}");
    assert!(out.ends_with("problems: none\n"), "{out}");
}

#[test]
fn doctor_names_a_hook_binary_that_is_gone_and_the_install_that_fixes_it() {
    let world = World::new();
    let gone = world.executable("nowhere/memrecall");
    install(
        &world,
        "claude-code",
        &["--command", gone.to_str().unwrap()],
    );
    std::fs::remove_file(&gone).unwrap();

    let run = doctor(&world, "claude-code", &[]);

    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(
            "the hook runs {}, which does not exist",
            gone.display()
        )),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "fix: {} hook install --agent claude-code --write",
            installed_binary().display()
        )),
        "{}",
        run.stdout
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

#[test]
fn doctor_says_an_untrusted_codex_hook_is_skipped_and_how_to_trust_it() {
    let world = World::new();
    install(&world, "codex", &[]);

    let run = doctor(&world, "codex", &[]);

    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout.contains("  trust: not trusted"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("fix: run `codex` in a terminal and trust the memrecall hook there"),
        "{}",
        run.stdout
    );
}

#[test]
fn doctor_takes_a_codex_hook_with_a_trusted_hash_as_trusted() {
    let world = World::new();
    install(&world, "codex", &[]);
    write(
        &world.home().join(".codex/config.toml"),
        "[hooks.state.\"memrecall\"]\ntrusted_hash = \"abc\"\n",
    );

    let run = doctor(&world, "codex", &[]);

    assert_eq!(run.code, Some(0), "{}", run.stdout);
    assert!(
        run.stdout.contains("  trust: 1 hook(s) trusted"),
        "{}",
        run.stdout
    );
}

#[test]
fn doctor_reports_an_unreachable_selector_with_its_fix() {
    let world = World::new();
    install(&world, "claude-code", &[]);
    // Port 1 on loopback is closed: the probe is refused at once.
    write(
        &world.path("mr/config.toml"),
        "[selector]\nkind = \"http\"\nurl = \"http://127.0.0.1:1\"\nmodel = \"m\"\n",
    );

    let run = doctor(&world, "claude-code", &["--json"]);

    assert_eq!(run.code, Some(1), "{}", run.stdout);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(
        report["selector"]["probe"]
            .as_str()
            .unwrap()
            .starts_with("unreachable: "),
        "{report}"
    );
    let problems = report["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{report}");
    assert!(
        problems[0]["fix"]
            .as_str()
            .unwrap()
            .starts_with("start the model server at http://127.0.0.1:1"),
        "{report}"
    );
}

#[cfg(unix)]
#[test]
fn doctor_shows_the_version_the_agent_reports() {
    let world = World::new();
    install(&world, "claude-code", &[]);
    let path = world.path("bin");
    std::fs::create_dir_all(&path).unwrap();
    // Written by another process: a script this process had open for writing could be held open
    // by a child another test thread forks, and running it would fail with ETXTBSY.
    let status = std::process::Command::new("/bin/sh")
        .args([
            "-c",
            "printf '#!/bin/sh\\necho \"2.1.328 (Claude Code)\"\\n' > \"$1/claude\" && chmod 755 \"$1/claude\"",
            "sh",
        ])
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success());

    let repo = world.repo();
    let run = world.run(
        &[
            "doctor",
            "--agent",
            "claude-code",
            "--cwd",
            repo.to_str().unwrap(),
        ],
        "",
        &[("PATH", path.to_str().unwrap())],
    );

    assert!(
        run.stdout.contains("  version: 2.1.328 (Claude Code)\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn doctor_names_a_project_hook_whose_binary_is_gone_and_the_project_install_that_fixes_it() {
    let world = World::new();
    install(&world, "qwen-code", &[]);
    let repo = world.repo();
    let gone = world.executable("gone/memrecall");
    install(
        &world,
        "qwen-code",
        &[
            "--project",
            repo.to_str().unwrap(),
            "--command",
            gone.to_str().unwrap(),
        ],
    );
    std::fs::remove_file(&gone).unwrap();

    let run = doctor(&world, "qwen-code", &[]);

    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!(
            "fix: {} hook install --agent qwen-code --write --project {}",
            installed_binary().display(),
            repo.display()
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn doctor_names_a_root_deeper_than_the_walk_goes_as_a_problem_with_its_fix() {
    let world = World::new();
    let memory = world.claude_memory(&world.repo());
    deploy_memories(&memory);
    let deep = (0..20).fold(memory.clone(), |dir, _| dir.join("d"));
    super::topic(&deep, "hidden.md", "Hidden checklist", "", "Too deep.");
    install(&world, "claude-code", &[]);

    let run = doctor(&world, "claude-code", &[]);

    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout.contains("directory levels below its root"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("move what recall need not read"),
        "{}",
        run.stdout
    );
}
