//! `memrecall doctor` sees what the agents installed themselves: Claude Code's plugin and the
//! Gemini CLI extension, copied from `plugins/` where each agent keeps them, with the bare
//! `memrecall` they run on `PATH` or not; and the fixes it prints are the README's.

use std::path::{Path, PathBuf};

use super::packages::repository;
use super::{World, installed_binary, write};

/// Copies the package in `plugins/<package>` (its hooks and its manifests) to `dir`.
fn copy_package(package: &str, dir: &Path) {
    let source = repository().join("plugins").join(package);
    for relative in [
        "hooks/hooks.json",
        ".claude-plugin/plugin.json",
        "gemini-extension.json",
        "qwen-extension.json",
    ] {
        if let Ok(text) = std::fs::read_to_string(source.join(relative)) {
            write(&dir.join(relative), &text);
        }
    }
}

/// memrecall's Claude Code plugin installed as `claude plugin install memrecall@memrecall`
/// leaves it (2.1.328), enabled or not in the user's settings.
fn install_claude_plugin(world: &World, enabled: bool) -> PathBuf {
    let config = world.home().join(".claude");
    let dir = config.join("plugins/cache/memrecall/memrecall/0.1.0");
    copy_package("claude-code", &dir);
    let installed = serde_json::json!({
        "version": 2,
        "plugins": {"memrecall@memrecall": [{
            "scope": "user",
            "installPath": dir,
            "version": "0.1.0",
            "installedAt": "2026-12-07T06:50:24.802Z",
            "lastUpdated": "2026-12-07T06:50:24.802Z"
        }]}
    });
    write(
        &config.join("plugins/installed_plugins.json"),
        &installed.to_string(),
    );
    write(
        &config.join("settings.json"),
        &serde_json::json!({"enabledPlugins": {"memrecall@memrecall": enabled}}).to_string(),
    );
    dir
}

/// A directory holding a `memrecall` that is the binary under test, for `PATH`.
fn path_with_memrecall(world: &World) -> PathBuf {
    let bin = world.path("bin");
    std::fs::create_dir_all(&bin).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(installed_binary(), bin.join("memrecall")).unwrap();
    #[cfg(not(unix))]
    std::fs::copy(installed_binary(), bin.join("memrecall.exe")).unwrap();
    bin
}

fn doctor(world: &World, agent: &str, path: Option<&Path>) -> super::Finished {
    let repo = world.repo();
    let env: Vec<(&str, &str)> = path
        .map(|p| ("PATH", p.to_str().unwrap()))
        .into_iter()
        .collect();
    world.run(
        &["doctor", "--agent", agent, "--cwd", repo.to_str().unwrap()],
        "",
        &env,
    )
}

#[test]
fn doctor_with_the_claude_code_plugin_enabled_and_memrecall_on_path_says_healthy() {
    let world = World::new();
    let dir = install_claude_plugin(&world, true);
    let bin = path_with_memrecall(&world);

    let run = doctor(&world, "claude-code", Some(&bin));

    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    let out = &run.stdout;
    assert!(
        out.contains(&format!(
            "  plugin memrecall@memrecall (enabled): {}\n    hook: runs memrecall (on PATH: {})",
            dir.display(),
            bin.join("memrecall").display()
        )),
        "{out}"
    );
    assert!(!out.contains("hook: not installed"), "{out}");
    assert!(!out.contains("mcp: not registered"), "{out}");
    assert!(out.contains("  mcp: runs memrecall (on PATH: "), "{out}");
    assert!(out.ends_with("problems: none\n"), "{out}");
}

#[cfg(unix)]
#[test]
fn doctor_with_the_claude_code_plugin_and_no_memrecall_on_path_says_what_to_do() {
    let world = World::new();
    install_claude_plugin(&world, true);
    let empty = world.path("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();

    let run = doctor(&world, "claude-code", Some(&empty));

    assert_eq!(run.code, Some(1), "{}", run.stdout);
    let out = &run.stdout;
    assert!(
        out.contains(
            "claude-code: the plugin memrecall@memrecall runs `memrecall`, which is not on PATH"
        ),
        "{out}"
    );
    let binary = installed_binary();
    assert!(
        out.contains(&format!(
            "fix: add {} to the PATH the agent starts with, or claude plugin uninstall memrecall@memrecall and {} hook install --agent claude-code --write",
            binary.parent().unwrap().display(),
            binary.display()
        )),
        "{out}"
    );
    assert!(!out.contains("hook: not installed"), "{out}");
}

#[cfg(unix)]
#[test]
fn doctor_with_the_plugin_and_the_settings_hook_says_it_runs_twice_and_never_installs_a_third() {
    let world = World::new();
    install_claude_plugin(&world, true);
    let bin = path_with_memrecall(&world);
    let installed = world.run(
        &["hook", "install", "--agent", "claude-code", "--write"],
        "",
        &[],
    );
    assert_eq!(installed.code, Some(0), "{}", installed.stderr);

    let run = doctor(&world, "claude-code", Some(&bin));

    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout.contains("the hook is installed twice"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "fix: {} hook uninstall --agent claude-code",
            installed_binary().display()
        )),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("hook install"), "{}", run.stdout);
}

#[test]
fn a_claude_code_plugin_that_is_not_enabled_is_fixed_by_enabling_it() {
    let world = World::new();
    install_claude_plugin(&world, false);

    let run = doctor(&world, "claude-code", None);

    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("  plugin memrecall@memrecall (not enabled here): "),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("fix: claude plugin enable memrecall@memrecall\n"),
        "{}",
        run.stdout
    );
}

/// memrecall's Gemini CLI extension as `gemini extensions install` leaves it (0.61.0), with its
/// enablement rule for the repository.
fn install_gemini_extension(world: &World, rule: &str) {
    let extensions = world.home().join(".gemini/extensions");
    copy_package("gemini-cli", &extensions.join("memrecall"));
    write(
        &extensions.join("extension-enablement.json"),
        &serde_json::json!({"memrecall": {"overrides": [rule]}}).to_string(),
    );
}

#[cfg(unix)]
#[test]
fn doctor_with_the_gemini_cli_extension_enabled_says_healthy() {
    let world = World::new();
    install_gemini_extension(&world, &format!("{}/*", world.repo().display()));
    let bin = path_with_memrecall(&world);

    let run = doctor(&world, "gemini-cli", Some(&bin));

    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("  extension memrecall (enabled): "),
        "{}",
        run.stdout
    );
    assert!(run.stdout.ends_with("problems: none\n"), "{}", run.stdout);
}

#[test]
fn a_gemini_cli_extension_disabled_for_the_directory_is_fixed_by_enabling_it() {
    let world = World::new();
    install_gemini_extension(&world, &format!("!{}/*", world.repo().display()));

    let run = doctor(&world, "gemini-cli", None);

    assert_eq!(run.code, Some(1), "{}", run.stdout);
    assert!(
        run.stdout
            .contains("fix: gemini extensions enable memrecall\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_claude_code_mcp_fix_is_the_readmes_registration_read_only() {
    let world = World::new();
    let installed = world.run(
        &["hook", "install", "--agent", "claude-code", "--write"],
        "",
        &[],
    );
    assert_eq!(installed.code, Some(0), "{}", installed.stderr);
    write(
        &world.home().join(".claude.json"),
        r#"{"mcpServers":{"memrecall":{"command":"/gone/memrecall","args":["mcp"]}}}"#,
    );

    let run = doctor(&world, "claude-code", None);

    assert_eq!(run.code, Some(1), "{}", run.stdout);
    let binary = installed_binary();
    let registration = "claude mcp add memrecall -- memrecall mcp --agent claude-code --read-only";
    assert!(
        run.stdout.contains(&format!(
            "fix: claude mcp remove memrecall; {}",
            registration.replace("-- memrecall", &format!("-- {}", binary.display()))
        )),
        "{}",
        run.stdout
    );
    let readme = std::fs::read_to_string(repository().join("README.md")).unwrap();
    assert!(readme.contains(registration));
}

#[test]
fn codex_gets_a_session_end_timeout_within_its_limit_and_doctor_names_an_earlier_one() {
    let world = World::new();
    let installed = world.run(&["hook", "install", "--agent", "codex", "--write"], "", &[]);
    assert_eq!(installed.code, Some(0), "{}", installed.stderr);
    let file = world.home().join(".codex/hooks.json");
    let hooks: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(hooks["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"], 3);
    assert_eq!(
        hooks["hooks"]["UserPromptSubmit"][0]["hooks"][0]["timeout"],
        10
    );

    // What an earlier install wrote.
    let earlier =
        std::fs::read_to_string(&file)
            .unwrap()
            .replacen("\"timeout\": 3", "\"timeout\": 10", 1);
    std::fs::write(&file, earlier).unwrap();
    let run = doctor(&world, "codex", None);

    assert!(
        run.stdout
            .contains("codex: the SessionEnd hook's timeout in")
            && run
                .stdout
                .contains("is 10, above the 3 the agent allows there"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!(
            "fix: {} hook install --agent codex --write",
            installed_binary().display()
        )),
        "{}",
        run.stdout
    );
}
