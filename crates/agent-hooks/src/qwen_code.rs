//! Qwen Code: its memory is `<qwen>/projects/<dir>/memory` and `<qwen>/memories` (see
//! [`crate::layout`]). Its hook settings are `$QWEN_HOME/settings.json` or
//! `~/.qwen/settings.json` (or the project's `.qwen/settings.json`), timeouts in seconds (0.24.4;
//! values of 1000 or more are read as legacy milliseconds, with a warning); its events are
//! `UserPromptSubmit` (`submitted_prompt`, else `prompt`), `PostToolUse`, `Stop` and
//! `SessionEnd`, and it fires its prompt event again before each tool-result continuation.

use std::path::{Path, PathBuf};

use crate::conventions::{
    CannotRun, CommandShell, Conventions, HookEvents, HookTimeout, McpRegistrations, PackageStore,
};
use crate::layout::ResolvedRoots;
use crate::{Environment, Layout};

/// The setting that turns Qwen Code's own memory recall (and its extraction of new memories)
/// on and off: `memory.enableManagedAutoMemory`, on unless set to `false`.
pub const OWN_RECALL_SETTING: [&str; 2] = ["memory", "enableManagedAutoMemory"];

/// Qwen Code's conventions.
pub const CONVENTIONS: Conventions = Conventions {
    name: "qwen-code",
    command: "qwen",
    default_layout: Layout::QwenCode,
    dot_dir: ".qwen",
    home_variable: Some("QWEN_HOME"),
    settings_file: "settings.json",
    settings_accept_comments: false,
    hook_entry_named: false,
    hook_timeout: HookTimeout::Seconds(10),
    session_end_timeout_limit: None,
    events: HookEvents {
        prompt: "UserPromptSubmit",
        tool_result: "PostToolUse",
        turn_end: "Stop",
        session_end: Some("SessionEnd"),
    },
    prompt_fields: &["submitted_prompt", "prompt"],
    prompt_event_continues: true,
    nothing: "",
    command_cannot_run: CannotRun::GoesOn,
    windows_shell: CommandShell::Cmd,
    mcp_registrations: McpRegistrations::SettingsFile,
    packages: Some(PackageStore::Extensions {
        manifest: "qwen-extension.json",
        activation_store: true,
    }),
    hook_trust: None,
    mcp_failure_cache: None,
};

/// Whether Qwen Code recalls the notes of its own memory roots itself, and which setting says so.
///
/// Qwen Code (0.24.4) selects notes from its project and user memory roots before each prompt
/// and adds its own `## Relevant memory` block, unless `memory.enableManagedAutoMemory` is
/// `false` in the workspace's `.qwen/settings.json` (which wins) or the user's settings. A
/// settings file that cannot be read or parsed is passed over, as Qwen Code passes it over.
pub fn own_recall(cwd: &Path, env: &Environment) -> OwnRecall {
    let user = crate::settings::settings_path(crate::Agent::QwenCode, None, env).ok();
    let workspace = crate::settings::settings_path(crate::Agent::QwenCode, Some(cwd), env).ok();
    for file in [workspace, user].into_iter().flatten() {
        if let Some(enabled) = own_recall_setting(&file) {
            return if enabled {
                OwnRecall::On(Some(file))
            } else {
                OwnRecall::Off(file)
            };
        }
    }
    OwnRecall::On(None)
}

/// What [`own_recall`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnRecall {
    /// Qwen Code recalls its own notes: the settings file that turns it on, `None` by default.
    On(Option<PathBuf>),
    /// Turned off by this settings file.
    Off(PathBuf),
}

/// `memory.enableManagedAutoMemory` in the settings file at `path`, when it holds a boolean.
fn own_recall_setting(path: &Path) -> Option<bool> {
    let (text, exists) = crate::settings::file::read(path).ok()?;
    if !exists {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    let [section, key] = OWN_RECALL_SETTING;
    value.get(section)?.get(key)?.as_bool()
}

/// Leaves to Qwen Code the roots it recalls itself: when `agent` is Qwen Code, the resolved
/// layout is Qwen Code's and its own recall is on, neither root is read by memrecall's hook (each note would otherwise
/// reach the model twice, once in each block). The roots are kept, with the reason, in
/// `ignored`, for the hook's log and `memrecall roots`.
pub fn leave_own_recall(agent: crate::Agent, resolved: &mut ResolvedRoots, env: &Environment) {
    if agent != crate::Agent::QwenCode || resolved.layout != Layout::QwenCode {
        return;
    }
    let OwnRecall::On(file) = own_recall(&resolved.cwd, env) else {
        return;
    };
    let setting = OWN_RECALL_SETTING.join(".");
    let because = match file {
        Some(file) => format!("{setting} is true in {}", file.display()),
        None => format!("{setting} is on by default"),
    };
    for choice in [&mut resolved.project, &mut resolved.user] {
        if let Some(root) = choice.path.take() {
            resolved.ignored.push(format!(
                "{}: Qwen Code recalls the notes there itself ({because}); memrecall leaves them to it, so that none reaches the model twice (set {setting} to false in Qwen Code's settings for memrecall to deliver them)",
                root.display()
            ));
            choice.why = format!("left to Qwen Code's own recall ({because})");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout;

    fn qwen_home(dir: &Path) -> Environment {
        Environment::from_pairs([("HOME", dir.to_str().unwrap())])
    }

    fn resolved(cwd: &Path, env: &Environment) -> ResolvedRoots {
        layout::resolve(Layout::QwenCode, cwd, env).unwrap()
    }

    #[test]
    fn qwen_codes_own_recall_is_on_by_default_and_memrecall_reads_neither_root() {
        let home = tempfile::tempdir().unwrap();
        let env = qwen_home(home.path());
        let mut roots = resolved(home.path(), &env);
        leave_own_recall(crate::Agent::QwenCode, &mut roots, &env);
        assert_eq!((roots.project.path, roots.user.path), (None, None));
        assert_eq!(roots.ignored.len(), 2);
        assert!(roots.ignored[1].contains("memory.enableManagedAutoMemory is on by default"));
    }

    #[test]
    fn own_recall_turned_off_in_the_user_settings_lets_memrecall_read_both_roots() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join(".qwen")).unwrap();
        std::fs::write(
            home.path().join(".qwen/settings.json"),
            r#"{"memory":{"enableManagedAutoMemory":false}}"#,
        )
        .unwrap();
        let env = qwen_home(home.path());
        let mut roots = resolved(home.path(), &env);
        let before = roots.clone();
        leave_own_recall(crate::Agent::QwenCode, &mut roots, &env);
        assert_eq!(roots, before);
    }

    #[test]
    fn the_workspace_setting_wins_over_the_users() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        for (dir, enabled) in [(home.path(), false), (project.path(), true)] {
            std::fs::create_dir(dir.join(".qwen")).unwrap();
            std::fs::write(
                dir.join(".qwen/settings.json"),
                format!(r#"{{"memory":{{"enableManagedAutoMemory":{enabled}}}}}"#),
            )
            .unwrap();
        }
        let env = qwen_home(home.path());
        assert!(matches!(
            own_recall(project.path(), &env),
            OwnRecall::On(Some(_))
        ));
    }

    #[test]
    fn another_agent_reading_qwen_codes_roots_reads_them() {
        let home = tempfile::tempdir().unwrap();
        let env = qwen_home(home.path());
        let mut roots = resolved(home.path(), &env);
        let before = roots.clone();
        leave_own_recall(crate::Agent::ClaudeCode, &mut roots, &env);
        assert_eq!(roots, before);
    }

    #[test]
    fn another_layout_is_read_as_it_is() {
        let home = tempfile::tempdir().unwrap();
        let env = qwen_home(home.path());
        let mut roots = layout::resolve(Layout::Memrecall, home.path(), &env).unwrap();
        let before = roots.clone();
        leave_own_recall(crate::Agent::QwenCode, &mut roots, &env);
        assert_eq!(roots, before);
    }
}
