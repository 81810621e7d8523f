//! Each layout's project and user memory roots for a working directory, resolved the way the
//! agent that writes them does, with the reason for each.
//!
//! - **Claude Code**: `<config>/projects/<dir>/memory`, where `<config>` is `$CLAUDE_CONFIG_DIR`
//!   or `~/.claude`, and `<dir>` is the canonical git root (a linked worktree maps to its main
//!   repository; outside git, the working directory), NFC-normalised, with every character that
//!   is not an ASCII letter or digit replaced by `-` once per UTF-16 unit (the agent runs the
//!   replacement on a JavaScript string, so a character outside the Basic Multilingual Plane
//!   gives `--`). A name over 200 units is cut to 200 and the agent appends `-<hash>`, a hash that
//!   differs between its front ends, so the directory is found by that prefix (the one whose
//!   `memory` changed last, when several match). Overrides, strongest first:
//!   `CLAUDE_CODE_DISABLE_AUTO_MEMORY=1` (no project root), the `autoMemoryDirectory` setting
//!   (in `<project>/.claude/settings.local.json`, else `<config>/settings.json`; the agent does
//!   not accept it from a shared project's `settings.json`), then `CLAUDE_CODE_PROJECT_DIR_NAME`
//!   (the `<dir>` name). The agent keeps no user memory of its own (`CLAUDE.md` files are
//!   instructions, not memory), so the user root is memrecall's (`<home>/memories`, below).
//! - **Qwen Code**: `<qwen>/projects/<dir>/memory` and `<qwen>/memories`, where `<qwen>` is
//!   `$QWEN_HOME` or `~/.qwen` and `<dir>` is the nearest ancestor holding `.git` (each linked
//!   worktree its own), same character rule, no length cap. `QWEN_CODE_MEMORY_LOCAL=1` puts the
//!   project root at `<project>/.qwen/memory`. The team scope (`<repo>/.qwen/team-memory`) is
//!   not read.
//! - **memrecall**: `<home>/projects/<dir>/memory` and `<home>/memories`, where `<home>` is
//!   `$MEMRECALL_HOME` or `~/.memrecall` and `<dir>` is the nearest ancestor holding `.git` (else
//!   the working directory) named by `recall_facade::sanitise_project_path`.

use std::path::{Path, PathBuf};

use unicode_normalization::UnicodeNormalization as _;

use super::{Environment, Layout, git};

/// Claude Code cuts a project directory name longer than this many UTF-16 units.
pub const CLAUDE_CODE_MAX_DIR_NAME: usize = 200;

/// Who decided where a root is, which decides whether memrecall may write in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RootOrigin {
    /// The agent's own convention, the user's environment or the user's own settings: the
    /// root's catalog is kept inside it.
    #[default]
    User,
    /// A file inside the project, which whoever wrote the repository decides: the root is read
    /// as the agent reads it, but memrecall writes nothing there (its catalog lives under
    /// `$MEMRECALL_HOME/catalogs`).
    Repository,
}

/// One resolved root and why it is where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootChoice {
    /// The root; `None` is an empty scope.
    pub path: Option<PathBuf>,
    /// How it was found, for `memrecall roots`.
    pub why: String,
    /// Who decided where it is.
    pub origin: RootOrigin,
}

impl RootChoice {
    fn at(path: PathBuf, why: impl Into<String>) -> Self {
        Self {
            path: Some(path),
            why: why.into(),
            origin: RootOrigin::User,
        }
    }

    fn none(why: impl Into<String>) -> Self {
        Self {
            path: None,
            why: why.into(),
            origin: RootOrigin::User,
        }
    }

    fn chosen_by_repository(mut self) -> Self {
        self.origin = RootOrigin::Repository;
        self
    }
}

/// A layout's roots for one working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedRoots {
    /// The layout resolved.
    pub layout: Layout,
    /// The working directory, made absolute (and canonical when it exists).
    pub cwd: PathBuf,
    /// The project memory root.
    pub project: RootChoice,
    /// The user memory root.
    pub user: RootChoice,
    /// Files that were consulted and ignored, each with the reason (a settings file that is a
    /// FIFO, too large or not JSON), for the hook's log and `memrecall roots`.
    pub ignored: Vec<String>,
}

/// The roots one recall reads, and where their catalogs are kept.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecallRoots {
    /// The project memory root.
    pub project: Option<PathBuf>,
    /// The user memory root.
    pub user: Option<PathBuf>,
    /// Where the catalogs go; `None`: no catalog (a root chosen by a repository, and no
    /// memrecall home to keep its catalog in).
    pub catalogs: Option<memory_scan::CatalogStore>,
}

/// The directory under memrecall's home that holds the catalogs of roots memrecall must not
/// write in.
pub const CATALOG_STORE_DIR: &str = "catalogs";

impl RecallRoots {
    /// The two roots, for a scan.
    pub fn memory_roots(&self) -> memory_scan::MemoryRoots {
        memory_scan::MemoryRoots {
            project: self.project.clone(),
            user: self.user.clone(),
        }
    }
}

impl ResolvedRoots {
    /// The roots to recall from, with their catalogs inside them, unless a repository's own
    /// file chose one of them: then memrecall writes nothing there and keeps the catalogs under
    /// `memrecall_home` ([`CATALOG_STORE_DIR`]).
    pub fn recall_roots(&self, memrecall_home: Option<&Path>) -> RecallRoots {
        let chosen_by_repository = [&self.project, &self.user]
            .iter()
            .any(|root| root.path.is_some() && root.origin == RootOrigin::Repository);
        let catalogs = if chosen_by_repository {
            memrecall_home
                .map(|home| memory_scan::CatalogStore::Under(home.join(CATALOG_STORE_DIR)))
        } else {
            Some(memory_scan::CatalogStore::InRoot)
        };
        RecallRoots {
            project: self.project.path.clone(),
            user: self.user.path.clone(),
            catalogs,
        }
    }
}

/// Why roots cannot be resolved.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// `HOME` (or the layout's own home variable) is not set.
    #[error("cannot find the {layout} home: set {variable} or HOME")]
    NoHome {
        /// The layout.
        layout: &'static str,
        /// The variable that would name it.
        variable: &'static str,
    },
    /// The working directory could not be made absolute.
    #[error("cannot resolve the working directory {path}: {source}")]
    Cwd {
        /// The directory given.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

/// Resolves `layout`'s roots for the working directory `cwd`.
pub fn resolve(
    layout: Layout,
    cwd: &Path,
    env: &Environment,
) -> Result<ResolvedRoots, LayoutError> {
    let cwd = std::fs::canonicalize(cwd)
        .or_else(|_| std::path::absolute(cwd))
        .map_err(|source| LayoutError::Cwd {
            path: cwd.to_path_buf(),
            source,
        })?;
    let repository = git::find(&cwd);
    let mut ignored = Vec::new();
    let (project, user) = match layout {
        Layout::ClaudeCode => claude_code(&cwd, repository.as_ref(), env, &mut ignored)?,
        Layout::QwenCode => qwen_code(&cwd, repository.as_ref(), env)?,
        Layout::Memrecall => memrecall(&cwd, repository.as_ref(), env)?,
    };
    Ok(ResolvedRoots {
        layout,
        cwd,
        project,
        user,
        ignored,
    })
}

/// The project directory and a phrase saying where it came from.
fn project_dir(
    cwd: &Path,
    repository: Option<&git::GitRoot>,
    canonical: bool,
) -> (PathBuf, String) {
    match repository {
        Some(repo) if canonical && repo.main.is_some() => (
            repo.canonical().to_path_buf(),
            format!(
                "the main repository {} of the linked worktree {}",
                repo.canonical().display(),
                repo.root.display()
            ),
        ),
        Some(repo) => (
            repo.root.clone(),
            format!("the git root {}", repo.root.display()),
        ),
        None => (
            cwd.to_path_buf(),
            format!(
                "the working directory {} (not in a git repository)",
                cwd.display()
            ),
        ),
    }
}

/// A path as a directory name, JavaScript style: each UTF-16 unit of a character that is not an
/// ASCII letter or digit becomes `-`.
pub fn js_sanitise(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('-', c.len_utf16()));
        }
    }
    out
}

/// Qwen Code's folder name for a project directory: sanitised as Claude Code's, and lowercased
/// on Windows.
fn qwen_project_name(dir: &Path, platform: super::Platform) -> String {
    let name = js_sanitise(&dir.to_string_lossy());
    match platform {
        super::Platform::Unix => name,
        super::Platform::Windows => name.to_lowercase(),
    }
}

fn claude_code(
    cwd: &Path,
    repository: Option<&git::GitRoot>,
    env: &Environment,
    ignored: &mut Vec<String>,
) -> Result<(RootChoice, RootChoice), LayoutError> {
    let user = memrecall_user_root(env, "Claude Code");
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
    let (dir, source) = project_dir(cwd, repository, true);
    let normalised: String = dir.to_string_lossy().nfc().collect();
    let name = js_sanitise(&normalised);
    // The name is ASCII, so units, characters and bytes agree.
    if name.len() <= CLAUDE_CODE_MAX_DIR_NAME {
        return Ok((
            RootChoice::at(
                projects.join(&name).join("memory"),
                format!("named after {source}"),
            ),
            user,
        ));
    }
    let prefix = format!("{}-", &name[..CLAUDE_CODE_MAX_DIR_NAME]);
    let project = match newest_with_prefix(&projects, &prefix) {
        Some(found) => RootChoice::at(
            found.join("memory"),
            format!(
                "named after {source}: its name is over {CLAUDE_CODE_MAX_DIR_NAME} characters, so the directory starting with the first {CLAUDE_CODE_MAX_DIR_NAME} and a hash"
            ),
        ),
        None => RootChoice::none(format!(
            "named after {source}: its name is over {CLAUDE_CODE_MAX_DIR_NAME} characters and no directory in {} starts with its first {CLAUDE_CODE_MAX_DIR_NAME} and a hash yet",
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

fn qwen_code(
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
    let (dir, source) = project_dir(cwd, repository, false);
    let project = if env.is_truthy("QWEN_CODE_MEMORY_LOCAL") {
        RootChoice::at(
            dir.join(".qwen").join("memory"),
            format!("inside {source}: QWEN_CODE_MEMORY_LOCAL is set"),
        )
    } else {
        let name = qwen_project_name(&dir, env.platform());
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

/// The user root of an agent that keeps no user memory of its own: memrecall's, where the
/// README teaches the user to write theirs.
fn memrecall_user_root(env: &Environment, agent: &str) -> RootChoice {
    match env.memrecall_home() {
        Some(home) => RootChoice::at(
            home.join("memories"),
            format!(
                "the user memories in the memrecall home ({agent} keeps no user memory of its own)"
            ),
        ),
        None => RootChoice::none(format!(
            "{agent} keeps no user memory of its own, and there is no memrecall home (set MEMRECALL_HOME or HOME)"
        )),
    }
}

fn memrecall(
    cwd: &Path,
    repository: Option<&git::GitRoot>,
    env: &Environment,
) -> Result<(RootChoice, RootChoice), LayoutError> {
    let home = env.memrecall_home().ok_or(LayoutError::NoHome {
        layout: "memrecall",
        variable: "MEMRECALL_HOME",
    })?;
    let (dir, source) = project_dir(cwd, repository, false);
    let project = RootChoice::at(
        home.join("projects")
            .join(recall_facade::sanitise_project_path(&dir))
            .join("memory"),
        format!("in the memrecall home, named after {source}"),
    );
    let user = RootChoice::at(
        home.join("memories"),
        "the user memories in the memrecall home",
    );
    Ok((project, user))
}

#[cfg(test)]
mod tests;
