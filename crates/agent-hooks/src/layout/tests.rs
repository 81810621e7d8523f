//! Each layout's roots for a working directory, on real temporary trees.

use super::*;

fn home_env(home: &Path) -> Environment {
    Environment::from_pairs([("HOME", home.as_os_str().to_owned())])
}

#[test]
fn dots_underscores_and_slashes_become_dashes() {
    assert_eq!(js_sanitise("/home/ana/my_app.v2"), "-home-ana-my-app-v2");
}

#[test]
fn a_character_outside_the_basic_plane_becomes_two_dashes() {
    assert_eq!(js_sanitise("/a🦀b"), "-a--b");
    assert_eq!(js_sanitise("/é"), "--");
}

#[test]
fn claude_code_without_a_repository_names_the_directory_after_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    let base = crate::paths::canonicalize(dir.path()).unwrap();
    let cwd = base.join("work.dir_1");
    std::fs::create_dir_all(&cwd).unwrap();
    let roots = resolve(Layout::ClaudeCode, &cwd, &home_env(&base)).unwrap();
    let expected = base
        .join(".claude/projects")
        .join(js_sanitise(&cwd.to_string_lossy()))
        .join("memory");
    assert_eq!(roots.project.path, Some(expected));
    assert_eq!(roots.user.path, Some(base.join(".memrecall/memories")));
}

#[test]
fn claude_code_reads_the_nfc_form_of_a_decomposed_path() {
    let dir = tempfile::tempdir().unwrap();
    let base = crate::paths::canonicalize(dir.path()).unwrap();
    // "é" as e + combining acute: two characters before NFC, one after.
    let cwd = base.join("cafe\u{301}");
    std::fs::create_dir_all(&cwd).unwrap();
    let roots = resolve(Layout::ClaudeCode, &cwd, &home_env(&base)).unwrap();
    let name = format!("{}-caf-", js_sanitise(&base.to_string_lossy()));
    assert_eq!(
        roots.project.path,
        Some(base.join(".claude/projects").join(name).join("memory"))
    );
}

#[test]
fn claude_code_config_dir_moves_the_projects_directory() {
    let dir = tempfile::tempdir().unwrap();
    let base = crate::paths::canonicalize(dir.path()).unwrap();
    let env = Environment::from_pairs([
        ("HOME", base.as_os_str().to_owned()),
        ("CLAUDE_CONFIG_DIR", base.join("cfg").into_os_string()),
    ]);
    let roots = resolve(Layout::ClaudeCode, &base, &env).unwrap();
    assert!(
        roots
            .project
            .path
            .unwrap()
            .starts_with(base.join("cfg/projects"))
    );
}

#[test]
fn a_local_auto_memory_directory_setting_wins_over_the_derived_directory() {
    let dir = tempfile::tempdir().unwrap();
    let base = crate::paths::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(base.join("repo/.git")).unwrap();
    std::fs::create_dir_all(base.join("repo/.claude")).unwrap();
    std::fs::write(
        base.join("repo/.claude/settings.local.json"),
        r#"{"autoMemoryDirectory": "notes/memory"}"#,
    )
    .unwrap();
    let roots = resolve(Layout::ClaudeCode, &base.join("repo"), &home_env(&base)).unwrap();
    assert_eq!(roots.project.path, Some(base.join("repo/notes/memory")));
    assert_eq!(roots.project.origin, RootOrigin::Repository);
}

#[cfg(unix)]
#[test]
fn a_local_settings_file_linked_to_dev_zero_is_ignored_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let base = crate::paths::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(base.join("repo/.git")).unwrap();
    std::fs::create_dir_all(base.join("repo/.claude")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", base.join("repo/.claude/settings.local.json")).unwrap();
    let roots = resolve(Layout::ClaudeCode, &base.join("repo"), &home_env(&base)).unwrap();
    assert!(
        roots
            .project
            .path
            .unwrap()
            .starts_with(base.join(".claude/projects")),
        "the derived directory is used"
    );
    assert_eq!(roots.ignored.len(), 1);
    assert!(roots.ignored[0].contains("a device"), "{:?}", roots.ignored);
}

#[test]
fn a_user_auto_memory_directory_setting_expands_the_home_directory() {
    let dir = tempfile::tempdir().unwrap();
    let base = crate::paths::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(base.join(".claude")).unwrap();
    std::fs::write(
        base.join(".claude/settings.json"),
        r#"{"autoMemoryDirectory": "~/mem"}"#,
    )
    .unwrap();
    let roots = resolve(Layout::ClaudeCode, &base, &home_env(&base)).unwrap();
    assert_eq!(roots.project.path, Some(base.join("mem")));
    assert_eq!(roots.project.origin, RootOrigin::User);
}

#[test]
fn qwen_code_puts_user_memories_under_its_home() {
    let dir = tempfile::tempdir().unwrap();
    let base = crate::paths::canonicalize(dir.path()).unwrap();
    let roots = resolve(Layout::QwenCode, &base, &home_env(&base)).unwrap();
    assert_eq!(roots.user.path, Some(base.join(".qwen/memories")));
}

#[test]
fn the_memrecall_layout_uses_the_git_root_of_a_subdirectory() {
    let dir = tempfile::tempdir().unwrap();
    let base = crate::paths::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(base.join("repo/.git")).unwrap();
    std::fs::create_dir_all(base.join("repo/src")).unwrap();
    let roots = resolve(Layout::Memrecall, &base.join("repo/src"), &home_env(&base)).unwrap();
    let expected = base
        .join(".memrecall/projects")
        .join(memory_scan::sanitise_project_path(&base.join("repo")))
        .join("memory");
    assert_eq!(roots.project.path, Some(expected));
    assert_eq!(roots.user.path, Some(base.join(".memrecall/memories")));
}

#[test]
fn a_project_memory_for_a_home_is_the_root_a_hook_with_that_home_resolves() {
    let dir = tempfile::tempdir().unwrap();
    let base = crate::paths::canonicalize(dir.path()).unwrap();
    let home = base.join("home");
    std::fs::create_dir_all(base.join("repo.v2/.git")).unwrap();
    std::fs::create_dir_all(base.join("repo.v2/src")).unwrap();
    for layout in [Layout::ClaudeCode, Layout::QwenCode, Layout::Memrecall] {
        let found = project_memory_for_home(layout, &base.join("repo.v2"), &home).unwrap();
        let hook = resolve(layout, &base.join("repo.v2/src"), &home_env(&home)).unwrap();
        assert_eq!(found, hook.project.path, "{layout:?}");
    }
    assert_eq!(
        project_memory_for_home(Layout::ClaudeCode, &base.join("repo.v2"), &home).unwrap(),
        Some(
            home.join(".claude/projects")
                .join(js_sanitise(&base.join("repo.v2").to_string_lossy()))
                .join("memory")
        )
    );
}

#[test]
fn no_home_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let error = resolve(Layout::QwenCode, dir.path(), &Environment::default()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "cannot find the Qwen Code home: set QWEN_HOME or HOME"
    );
}

#[test]
fn a_windows_project_folder_name_turns_the_drive_colon_and_backslashes_into_dashes() {
    assert_eq!(js_sanitise(r"C:\Users\Ana\shop"), "C--Users-Ana-shop");
    assert_eq!(
        memory_scan::sanitise_project_path(Path::new(r"C:\Users\Ana\shop")),
        "C--Users-Ana-shop"
    );
}

#[test]
fn qwen_code_lowercases_a_project_folder_name_on_windows_only() {
    let dir = Path::new(r"C:\Users\Ana\Shop");
    assert_eq!(
        super::qwen_code::project_name(dir, crate::Platform::Windows),
        "c--users-ana-shop"
    );
    assert_eq!(
        super::qwen_code::project_name(Path::new("/home/Ana/Shop"), crate::Platform::Unix),
        "-home-Ana-Shop"
    );
}

#[test]
fn on_windows_the_home_is_userprofile_and_home_only_without_it() {
    use crate::Platform;
    let both = Environment::from_pairs([("USERPROFILE", r"C:\Users\ana"), ("HOME", "/h")]);
    assert_eq!(
        both.clone().on(Platform::Windows).home(),
        Some(PathBuf::from(r"C:\Users\ana"))
    );
    assert_eq!(both.on(Platform::Unix).home(), Some(PathBuf::from("/h")));
    let home_only = Environment::from_pairs([("HOME", "/h")]).on(Platform::Windows);
    assert_eq!(home_only.home(), Some(PathBuf::from("/h")));
}

#[test]
fn on_windows_the_memrecall_layout_is_in_the_userprofile_when_home_is_unset() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("shop/.git")).unwrap();
    let profile = std::env::temp_dir().join("ana-profile");
    let env = Environment::from_pairs([("USERPROFILE", profile.as_os_str().to_owned())])
        .on(crate::Platform::Windows);
    let roots = resolve(Layout::Memrecall, &dir.path().join("shop"), &env).unwrap();
    let home = profile.join(".memrecall");
    assert_eq!(roots.user.path, Some(home.join("memories")));
    assert!(
        roots
            .project
            .path
            .as_ref()
            .is_some_and(|project| project.starts_with(home.join("projects"))),
        "{:?}",
        roots.project
    );
}

/// The repository `shop` in a fresh directory, and the path an agent running there sees:
/// `std::fs::canonicalize`'s, which on Windows is verbatim (`\\?\C:\…`), without the prefix.
#[cfg(windows)]
fn windows_repository() -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("shop");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let verbatim = std::fs::canonicalize(&repo).unwrap();
    let seen = verbatim
        .to_str()
        .and_then(|v| v.strip_prefix(r"\\?\"))
        .expect("std::fs::canonicalize gives a verbatim path on Windows")
        .to_owned();
    (dir, repo, seen)
}

/// The name of the folder that holds a project root (`<projects>/<name>/memory`).
#[cfg(windows)]
fn folder_name(root: &RootChoice) -> String {
    let path = root.path.as_ref().unwrap();
    path.parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[cfg(windows)]
#[test]
fn on_windows_claude_code_names_the_folder_after_the_drive_path_the_agent_sees() {
    let (dir, repo, seen) = windows_repository();
    let env = Environment::from_pairs([("USERPROFILE", dir.path().as_os_str().to_owned())]);
    let roots = resolve(Layout::ClaudeCode, &repo, &env).unwrap();
    let name = folder_name(&roots.project);
    let drive = &seen[..1];
    assert!(name.starts_with(&format!("{drive}--")), "{name} for {seen}");
    assert_eq!(name, js_sanitise(&seen));
    assert!(name.ends_with("-shop"), "{name}");
}

#[cfg(windows)]
#[test]
fn on_windows_qwen_code_names_the_folder_after_the_lowercased_drive_path() {
    let (dir, repo, seen) = windows_repository();
    let env = Environment::from_pairs([("USERPROFILE", dir.path().as_os_str().to_owned())]);
    let roots = resolve(Layout::QwenCode, &repo, &env).unwrap();
    let name = folder_name(&roots.project);
    assert_eq!(name, js_sanitise(&seen).to_lowercase());
    assert!(
        name.starts_with(&format!("{}--", seen[..1].to_lowercase())),
        "{name}"
    );
}

#[cfg(windows)]
#[test]
fn on_windows_the_working_directory_and_git_root_are_reported_without_the_verbatim_prefix() {
    let (dir, repo, seen) = windows_repository();
    std::fs::create_dir_all(repo.join("src")).unwrap();
    let env = Environment::from_pairs([("USERPROFILE", dir.path().as_os_str().to_owned())]);
    let roots = resolve(Layout::Memrecall, &repo.join("src"), &env).unwrap();
    assert_eq!(roots.cwd, Path::new(&seen).join("src"));
    assert!(roots.project.why.contains(&seen), "{}", roots.project.why);
    assert!(
        !roots.project.why.contains(r"\\?\"),
        "{}",
        roots.project.why
    );
}
