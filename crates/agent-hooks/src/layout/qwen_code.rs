//! Qwen Code's memory roots: its project and user roots, found as the agent finds them.

use std::path::Path;

use super::{LayoutError, RootChoice};
use crate::{Environment, Platform, git};

/// Qwen Code's roots for `cwd` (see [`super`]).
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
    let (dir, source) = super::project_dir(cwd, repository, false);
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
    let name = super::js_sanitise(&dir.to_string_lossy());
    match platform {
        Platform::Unix => name,
        Platform::Windows => name.to_lowercase(),
    }
}
