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
//!   the working directory) named by `memory_scan::sanitise_project_path`.

use std::path::{Path, PathBuf};

use crate::{Environment, Layout, git};

mod claude_code;
mod qwen_code;

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
    pub(crate) fn at(path: PathBuf, why: impl Into<String>) -> Self {
        Self {
            path: Some(path),
            why: why.into(),
            origin: RootOrigin::User,
        }
    }

    pub(crate) fn none(why: impl Into<String>) -> Self {
        Self {
            path: None,
            why: why.into(),
            origin: RootOrigin::User,
        }
    }

    pub(crate) fn chosen_by_repository(mut self) -> Self {
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
    /// Where the catalogs go; `None`: no catalog (no memrecall home to keep them in).
    pub catalogs: Option<memory_scan::CatalogStore>,
}

/// The directory under memrecall's home that holds the catalogs of every memory root: memrecall
/// writes nothing inside a memory root, an agent's folder or a repository.
pub const CATALOG_STORE_DIR: &str = "catalogs";

/// Where the catalogs of every root are kept for the memrecall home `home`.
pub fn catalog_store(home: Option<&Path>) -> Option<memory_scan::CatalogStore> {
    home.map(|home| memory_scan::CatalogStore::Under(home.join(CATALOG_STORE_DIR)))
}

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
    /// The roots to recall from, with their catalogs kept under `memrecall_home`
    /// ([`CATALOG_STORE_DIR`]), never inside the roots.
    pub fn recall_roots(&self, memrecall_home: Option<&Path>) -> RecallRoots {
        let catalogs = catalog_store(memrecall_home);
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
    let cwd = crate::paths::canonicalize(cwd)
        .or_else(|_| std::path::absolute(cwd))
        .map_err(|source| LayoutError::Cwd {
            path: cwd.to_path_buf(),
            source,
        })?;
    let repository = git::find(&cwd);
    let mut ignored = Vec::new();
    let (project, user) = match layout {
        Layout::ClaudeCode => claude_code::roots(&cwd, repository.as_ref(), env, &mut ignored)?,
        Layout::QwenCode => qwen_code::roots(&cwd, repository.as_ref(), env)?,
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

/// The project memory root `layout` resolves for the project `dir` (a repository or any
/// directory below it) of a user whose home is `home` and who sets no variable of an agent's or
/// of memrecall's: where a sandbox (a test, a latency report) puts a project's memories for a
/// hook run with that home to find them. The resolution is [`resolve`]'s, settings files under
/// `home` included; `None` when the layout gives the project no root.
pub fn project_memory_for_home(
    layout: Layout,
    dir: &Path,
    home: &Path,
) -> Result<Option<PathBuf>, LayoutError> {
    let env = Environment::from_pairs([("HOME", home.as_os_str().to_owned())]);
    Ok(resolve(layout, dir, &env)?.project.path)
}

/// The project directory and a phrase saying where it came from.
pub(crate) fn project_dir(
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

/// The user root of an agent that keeps no user memory of its own: memrecall's, where the
/// README teaches the user to write theirs.
pub(crate) fn memrecall_user_root(env: &Environment, agent: &str) -> RootChoice {
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
            .join(memory_scan::sanitise_project_path(&dir))
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
