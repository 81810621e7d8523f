//! `hook install` and `uninstall` end to end: what each agent's settings file holds after them,
//! and what the user is told.

use std::path::Path;

use serde_json::{Value, json};

use super::{World, deploy_memories, installed_binary, write};

fn install(world: &World, agent: &str, extra: &[&str]) -> super::Finished {
    let mut args = vec!["hook", "install", "--agent", agent, "--write"];
    args.extend_from_slice(extra);
    world.run(&args, "", &[])
}

fn uninstall(world: &World, agent: &str) -> super::Finished {
    world.run(&["hook", "uninstall", "--agent", agent], "", &[])
}

fn json_of(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn qwen_code_install_registers_post_tool_use_with_timeouts_in_seconds() {
    let world = World::new();
    let run = install(&world, "qwen-code", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let hooks = &json_of(&world.home().join(".qwen/settings.json"))["hooks"];
    for event in ["UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"] {
        assert_eq!(
            hooks[event][0]["hooks"][0]["timeout"], 10,
            "{event}: {hooks}"
        );
    }
}

#[test]
fn gemini_cli_install_writes_timeouts_in_milliseconds() {
    let world = World::new();
    install(&world, "gemini-cli", &[]);
    let hooks = &json_of(&world.home().join(".gemini/settings.json"))["hooks"];
    assert_eq!(
        hooks["AfterTool"][0]["hooks"][0]["timeout"], 10_000,
        "{hooks}"
    );
}

#[test]
fn codex_install_says_the_hook_runs_only_once_trusted_and_registers_session_end() {
    let world = World::new();
    let run = install(&world, "codex", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stdout
            .contains("Codex runs a hook only once you have trusted it"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("trusted_hash"), "{}", run.stdout);
    assert!(run.stdout.contains("`codex exec` skips"), "{}", run.stdout);
    let hooks = &json_of(&world.home().join(".codex/hooks.json"))["hooks"];
    assert!(hooks["SessionEnd"].is_array(), "{hooks}");
}

#[test]
fn install_names_the_running_binary_by_its_absolute_path() {
    let world = World::new();
    install(&world, "claude-code", &[]);
    let hooks = &json_of(&world.home().join(".claude/settings.json"))["hooks"];
    assert_eq!(
        hooks["UserPromptSubmit"][0]["hooks"][0]["command"],
        format!("{} hook --agent claude-code", installed_binary().display())
    );
}

/// A copy of the binary in the world's temporary directory.
fn binary_in_temp(world: &World) -> std::path::PathBuf {
    let copy = world.path("tmp/memrecall");
    std::fs::copy(installed_binary(), &copy).unwrap();
    copy
}

/// Runs the copy at `copy` with `args` in the world. A child another test thread forks while
/// the copy is still open for writing holds it open a moment longer, and exec then fails with
/// ETXTBSY: that start is made again.
fn run_copy(world: &World, copy: &Path, args: &[&str]) -> std::process::Output {
    const TEXT_FILE_BUSY: i32 = 26;
    let mut tries = 0;
    loop {
        let output = std::process::Command::new(copy)
            .args(args)
            .env_clear()
            .env("HOME", world.home())
            .env("MEMRECALL_HOME", world.path("mr"))
            .env("TMPDIR", world.path("tmp"))
            .output();
        match output {
            Err(e) if e.raw_os_error() == Some(TEXT_FILE_BUSY) && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other.unwrap(),
        }
    }
}

/// The program the first hook entry of Claude Code's settings runs.
fn claude_code_hook_program(world: &World) -> std::path::PathBuf {
    let hooks = &json_of(&world.home().join(".claude/settings.json"))["hooks"];
    let command = hooks["UserPromptSubmit"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    let program = command
        .strip_suffix(" hook --agent claude-code")
        .unwrap_or_else(|| panic!("not a hook command: {command}"));
    std::path::PathBuf::from(program)
}

#[test]
fn a_binary_in_the_temporary_directory_installs_a_copy_of_itself_and_names_it_in_the_hook() {
    let world = World::new();
    let copy = binary_in_temp(&world);
    let output = run_copy(
        &world,
        &copy,
        &["hook", "install", "--agent", "claude-code", "--write"],
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );

    let program = claude_code_hook_program(&world);
    assert!(
        !program.starts_with(world.path("tmp")),
        "{}",
        program.display()
    );
    assert_eq!(program, world.path("mr/bin/memrecall"));
    assert!(
        stdout.contains(&format!("to {}\n", program.display())),
        "{stdout}"
    );
    std::fs::remove_file(&copy).unwrap();
    let version = run_copy(&world, &program, &["--version"]);
    assert_eq!(version.status.code(), Some(0));
    assert!(
        String::from_utf8(version.stdout)
            .unwrap()
            .starts_with("memrecall ")
    );
}

#[test]
fn the_snippet_from_the_temporary_directory_names_the_copy_and_copies_nothing() {
    let world = World::new();
    let copy = binary_in_temp(&world);
    let output = run_copy(&world, &copy, &["hook", "install", "--agent", "codex"]);
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    let stable = world.path("mr/bin/memrecall");
    assert_eq!(
        value["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        format!("{} hook --agent codex", stable.display())
    );
    assert!(stderr.contains("first copied to"), "{stderr}");
    assert!(!stable.exists());
}

#[test]
fn the_snippet_from_the_temporary_directory_without_a_home_is_shown_with_a_warning() {
    let world = World::new();
    let copy = binary_in_temp(&world);
    let output = loop {
        // As in `run_copy`, without a home: a start that finds the copy busy is made again.
        match std::process::Command::new(&copy)
            .args(["hook", "install", "--agent", "claude-code", "--project"])
            .arg(world.repo())
            .env_clear()
            .env("TMPDIR", world.path("tmp"))
            .output()
        {
            Err(e) if e.raw_os_error() == Some(26) => {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => break other.unwrap(),
        }
    };
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("no home to copy it to"), "{stderr}");
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        value["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        format!("{} hook --agent claude-code", copy.display())
    );
}

#[test]
fn a_command_in_the_temporary_directory_is_accepted_with_a_warning() {
    let world = World::new();
    let named = world.executable("tmp/unpacked/memrecall");
    let run = install(&world, "codex", &["--command", named.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("in the temporary directory, which goes away"),
        "{}",
        run.stderr
    );
    let hooks = &json_of(&world.home().join(".codex/hooks.json"))["hooks"];
    assert_eq!(
        hooks["Stop"][0]["hooks"][0]["command"],
        format!("{} hook --agent codex", named.display())
    );
}

#[test]
fn install_with_command_names_that_binary_even_from_the_temporary_directory() {
    let world = World::new();
    let copy = binary_in_temp(&world);
    let named = world.executable("opt/memrecall/bin/memrecall");
    let output = run_copy(
        &world,
        &copy,
        &[
            "hook",
            "install",
            "--agent",
            "codex",
            "--write",
            "--command",
            named.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0));
    let hooks = &json_of(&world.home().join(".codex/hooks.json"))["hooks"];
    assert_eq!(
        hooks["Stop"][0]["hooks"][0]["command"],
        format!("{} hook --agent codex", named.display())
    );
}

#[test]
fn roots_says_which_binary_each_installed_hook_runs() {
    let world = World::new();
    install(&world, "claude-code", &[]);
    let gone = world.executable("nowhere/memrecall");
    install(&world, "codex", &["--command", gone.to_str().unwrap()]);
    std::fs::remove_file(&gone).unwrap();
    let run = world.run(&["roots"], "", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let binary = installed_binary();
    assert!(
        run.stdout
            .contains(&format!("binary: {}\n", binary.display())),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("hook: claude-code runs {} (", binary.display())),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "hook: codex runs {} (missing: the hook cannot run)",
            gone.display()
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn gemini_cli_settings_with_comments_keep_them_through_install_and_uninstall() {
    let world = World::new();
    let settings = world.home().join(".gemini/settings.json");
    let original = "{\n  // my theme\n  \"theme\": \"dark\", /* for now */\n  \"model\": {\"name\": \"gemini\"}\n}\n";
    write(&settings, original);

    let run = install(&world, "gemini-cli", &[]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let installed = std::fs::read_to_string(&settings).unwrap();
    assert!(installed.contains("// my theme"), "{installed}");
    assert!(installed.contains("/* for now */"), "{installed}");
    assert!(installed.contains("\"BeforeAgent\""), "{installed}");

    // The user edits the file after install: uninstall keeps the edit and the comments.
    let edited = installed.replace("\"dark\"", "\"light\"");
    std::fs::write(&settings, &edited).unwrap();
    let run = uninstall(&world, "gemini-cli");
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        original.replace("\"dark\"", "\"light\"")
    );
}

#[test]
fn comments_in_a_file_the_agent_reads_as_plain_json_are_refused_with_the_reason_once() {
    let world = World::new();
    let settings = world.home().join(".claude/settings.json");
    let original = "{\n  // mine\n  \"model\": \"opus\"\n}\n";
    write(&settings, original);

    let run = install(&world, "claude-code", &[]);

    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert_eq!(run.stderr.matches("line 2").count(), 1, "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
}

#[test]
fn uninstall_restores_the_original_bytes_exactly() {
    let world = World::new();
    let settings = world.home().join(".qwen/settings.json");
    let original = "{\"model\":   \"qwen3\",\n\t\"ui\": {\"theme\":\"x\"}}";
    write(&settings, original);
    install(&world, "qwen-code", &[]);
    // A second install (say, after an upgrade) does not lose the original.
    let other = world.executable("opt/bin/memrecall");
    install(&world, "qwen-code", &["--command", other.to_str().unwrap()]);

    let run = uninstall(&world, "qwen-code");

    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
    assert!(
        !settings
            .with_file_name("settings.json.memrecall-backup")
            .exists()
    );
}

#[test]
fn uninstall_removes_the_file_install_created() {
    let world = World::new();
    let settings = world.home().join(".codex/hooks.json");
    install(&world, "codex", &[]);
    assert!(settings.is_file());

    let run = uninstall(&world, "codex");

    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(!settings.exists(), "{}", run.stdout);
}

#[test]
fn uninstall_of_a_created_file_the_user_added_to_keeps_their_addition() {
    let world = World::new();
    let settings = world.home().join(".codex/hooks.json");
    install(&world, "codex", &[]);
    let mut value = json_of(&settings);
    value["hooks"]["SessionStart"] = json!([{"hooks": [{"type": "command", "command": "notify"}]}]);
    std::fs::write(&settings, serde_json::to_string_pretty(&value).unwrap()).unwrap();

    uninstall(&world, "codex");

    assert_eq!(
        json_of(&settings),
        json!({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "notify"}]}]}})
    );
}

#[test]
fn the_installed_hook_runs_from_a_path_without_memrecall() {
    let world = World::new();
    deploy_memories(&world.claude_memory(&world.repo()));
    install(&world, "claude-code", &[]);
    let hooks = json_of(&world.home().join(".claude/settings.json"));
    let command = hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap()
        .to_owned();
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
    let mut attempt = 0;
    let stdout = loop {
        // Each attempt its own session: a session is never given a document twice.
        attempt += 1;
        let mut event = super::claude_prompt(&world.repo(), "release checklist");
        event["session_id"] = json!(format!("path-{attempt}"));
        let event = event.to_string();
        let mut child = std::process::Command::new("/bin/sh")
            .args(["-c", &command])
            .current_dir(world.repo())
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", world.home())
            .env("MEMRECALL_HOME", world.path("mr"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        std::io::Write::write_all(&mut input, event.as_bytes()).unwrap();
        drop(input);
        let output = child.wait_with_output().unwrap();
        let stdout = String::from_utf8(output.stdout).unwrap();
        if stdout.contains("additionalContext") {
            break stdout;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no delivery: {stdout:?}"
        );
    };
    assert!(stdout.contains("Deploy checklist"), "{stdout}");
}
