//! Claude Code's memory roots: its project root, found as the agent finds it, and memrecall's
//! user root.

use std::path::{Path, PathBuf};

use unicode_normalization::UnicodeNormalization as _;

use super::{LayoutError, RootChoice, RootOrigin};
use crate::claude_code::MAX_DIR_NAME;
use crate::{Environment, git};

/// Claude Code's roots for `cwd` (see [`super`]).
pub(crate) fn roots(
    cwd: &Path,
    repository: Option<&git::GitRoot>,
    env: &Environment,
    ignored: &mut Vec<String>,
) -> Result<(RootChoice, RootChoice), LayoutError> {
    let user = super::memrecall_user_root(env, "Claude Code");
    if env.is_truthy("CLAUDE_CODE_DISABLE_AUTO_MEMORY") {
        return Ok((
            RootChoice::none("auto memory is off: CLAUDE_CODE_DISABLE_AUTO_MEMORY is set"),
            user,
        ));
    }
    let config = match env.path("CLAUDE_CONFIG_DIR") {
        Some(dir) => dir,
        None => env
            .home()
            .map(|h| h.join(".claude"))
            .ok_or(LayoutError::NoHome {
                layout: "Claude Code",
                variable: "CLAUDE_CONFIG_DIR",
            })?,
    };
    let settings_project = repository.map_or(cwd, |r| r.root.as_path());
    if let Some((dir, file, origin)) =
        auto_memory_directory(settings_project, &config, env, ignored)
    {
        let choice = RootChoice::at(dir, format!("autoMemoryDirectory in {}", file.display()));
        let choice = match origin {
            RootOrigin::User => choice,
            RootOrigin::Repository => choice.chosen_by_repository(),
        };
        return Ok((choice, user));
    }
    let projects = config.join("projects");
    if let Some(name) = env.var("CLAUDE_CODE_PROJECT_DIR_NAME") {
        return Ok((
            RootChoice::at(
                projects.join(name).join("memory"),
                "the project directory named by CLAUDE_CODE_PROJECT_DIR_NAME",
            ),
            user,
        ));
    }
    let (dir, source) = super::project_dir(cwd, repository, true);
    let normalised: String = dir.to_string_lossy().nfc().collect();
    let name = super::js_sanitise(&normalised);
    // The name is ASCII, so units, characters and bytes agree.
    if name.len() <= MAX_DIR_NAME {
        return Ok((
            RootChoice::at(
                projects.join(&name).join("memory"),
                format!("named after {source}"),
            ),
            user,
        ));
    }
    let prefix = format!("{}-", &name[..MAX_DIR_NAME]);
    let project = match newest_with_prefix(&projects, &prefix) {
        Some(found) => RootChoice::at(
            found.join("memory"),
            format!(
                "named after {source}: its name is over {MAX_DIR_NAME} characters, so the directory starting with the first {MAX_DIR_NAME} and a hash"
            ),
        ),
        None => RootChoice::none(format!(
            "named after {source}: its name is over {MAX_DIR_NAME} characters and no directory in {} starts with its first {MAX_DIR_NAME} and a hash yet",
            projects.display()
        )),
    };
    Ok((project, user))
}

/// `autoMemoryDirectory` from the local project settings, else the user settings, with `~/`
/// expanded and a relative path taken from the project directory, and who chose it (the project's
/// file is the repository's). A settings file that cannot be used is skipped with its reason in
/// `ignored`; every file is read through [`memory_scan::foreign`], so a FIFO, a device or a huge
/// file put in its place is refused without blocking or reading it.
fn auto_memory_directory(
    project: &Path,
    config: &Path,
    env: &Environment,
    ignored: &mut Vec<String>,
) -> Option<(PathBuf, PathBuf, RootOrigin)> {
    use memory_scan::foreign::{self, ByteLimit, Links};
    [
        (
            project.join(".claude").join("settings.local.json"),
            RootOrigin::Repository,
        ),
        (config.join("settings.json"), RootOrigin::User),
    ]
    .into_iter()
    .find_map(|(file, origin)| {
        let text = match foreign::read_to_string(&file, ByteLimit::SETTINGS, Links::Follow) {
            Ok(text) => text,
            Err(error) if error.is_not_found() => return None,
            Err(error) => {
                ignored.push(error.to_string());
                return None;
            }
        };
        let value: serde_json::Value = match serde_json::from_str(&text) {
            Ok(value) => value,
            Err(error) => {
                ignored.push(format!("{} is not JSON ({error})", file.display()));
                return None;
            }
        };
        let dir = value.get("autoMemoryDirectory")?.as_str()?.trim();
        if dir.is_empty() {
            return None;
        }
        let dir = match dir.strip_prefix("~/") {
            Some(rest) => env.home()?.join(rest),
            None if dir == "~" => env.home()?,
            None => project.join(dir),
        };
        Some((dir, file, origin))
    })
}

/// The entry of `dir` whose name starts with `prefix` and whose `memory` directory (else itself)
/// changed last; the name breaks ties.
fn newest_with_prefix(dir: &Path, prefix: &str) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(prefix))
        })
        .map(|entry| {
            let path = entry.path();
            let changed = std::fs::metadata(path.join("memory"))
                .or_else(|_| std::fs::metadata(&path))
                .and_then(|m| m.modified())
                .ok();
            (changed, path)
        })
        .max()
        .map(|(_, path)| path)
}
