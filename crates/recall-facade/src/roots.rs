//! Where memories live by default: the memory home, and the project's directory in it (named by
//! [`memory_scan::sanitise_project_path`]).

use std::path::{Path, PathBuf};

use memory_scan::{MemoryRoots, sanitise_project_path};

use crate::FacadeError;

/// The memory home: `$MEMRECALL_HOME`, else `~/.memrecall`.
pub fn memory_home() -> Result<PathBuf, FacadeError> {
    if let Some(home) = std::env::var_os("MEMRECALL_HOME").filter(|h| !h.is_empty()) {
        return Ok(PathBuf::from(home));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(".memrecall"))
        .ok_or(FacadeError::NoHome)
}

/// The default project and user roots for a project directory.
pub fn default_roots(project_dir: &Path) -> Result<MemoryRoots, FacadeError> {
    let home = memory_home()?;
    let absolute = std::path::absolute(project_dir).map_err(|source| FacadeError::ProjectDir {
        path: project_dir.to_path_buf(),
        source,
    })?;
    Ok(MemoryRoots {
        project: Some(
            home.join("projects")
                .join(sanitise_project_path(&absolute))
                .join("memory"),
        ),
        user: Some(home.join("memories")),
    })
}
