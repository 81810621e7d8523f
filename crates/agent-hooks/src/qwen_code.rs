//! Qwen Code: its memory is `<qwen>/projects/<dir>/memory` and `<qwen>/memories` (see
//! [`layout`]). Its hook settings are `$QWEN_HOME/settings.json` or
//! `~/.qwen/settings.json` (or the project's `.qwen/settings.json`), timeouts in seconds (0.24.4;
//! values of 1000 or more are read as legacy milliseconds, with a warning); its events are
//! `UserPromptSubmit` (`submitted_prompt`, else `prompt`), `PostToolUse`, `Stop` and
//! `SessionEnd`, and it fires its prompt event again before each tool-result continuation.

use std::path::Path;

use crate::conventions::{CannotRun, Conventions, HookEvents};
use crate::layout::{self, LayoutError, RootChoice};
use crate::{Environment, Layout, Platform, git};

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
    hook_timeout: 10,
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
};

/// Qwen Code's roots for `cwd` (see [`layout`]).
pub(crate) fn roots(
    cwd: &Path,
    repository: Option<&git::GitRoot>,
    env: &Environment,
) -> Result<(RootChoice, RootChoice), LayoutError> {
    let home = match env.path("QWEN_HOME") {
        Some(home) => (home, "QWEN_HOME"),
        None => (
            env.home()
                .map(|h| h.join(".qwen"))
                .ok_or(LayoutError::NoHome {
                    layout: "Qwen Code",
                    variable: "QWEN_HOME",
                })?,
            "~/.qwen",
        ),
    };
    let (dir, source) = layout::project_dir(cwd, repository, false);
    let project = if env.is_truthy("QWEN_CODE_MEMORY_LOCAL") {
        RootChoice::at(
            dir.join(".qwen").join("memory"),
            format!("inside {source}: QWEN_CODE_MEMORY_LOCAL is set"),
        )
    } else {
        let name = project_name(&dir, env.platform());
        RootChoice::at(
            home.0.join("projects").join(name).join("memory"),
            format!("in {}, named after {source}", home.1),
        )
    };
    let user = RootChoice::at(
        home.0.join("memories"),
        format!("the user memories in {}", home.1),
    );
    Ok((project, user))
}

/// Qwen Code's folder name for a project directory: sanitised as Claude Code's, and lowercased
/// on Windows.
pub(crate) fn project_name(dir: &Path, platform: Platform) -> String {
    let name = layout::js_sanitise(&dir.to_string_lossy());
    match platform {
        Platform::Unix => name,
        Platform::Windows => name.to_lowercase(),
    }
}
