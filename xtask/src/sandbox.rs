//! Where the sandboxes of the reports and checks put an agent's memories: found by the hook's own
//! resolution (`agent_hooks::layout`), so a sandbox's memories are where a hook run with its home
//! looks.

use std::path::{Path, PathBuf};

use agent_hooks::{Layout, layout};
use anyhow::{Context as _, Result};

/// The project memory root `layout` gives `repo` for a hook whose home is `home`.
pub(crate) fn project_memory(layout: Layout, repo: &Path, home: &Path) -> Result<PathBuf> {
    layout::project_memory_for_home(layout, repo, home)
        .with_context(|| format!("resolving the {layout:?} layout for {}", repo.display()))?
        .with_context(|| {
            format!(
                "the {layout:?} layout gives {} no project memory root",
                repo.display()
            )
        })
}

/// Claude Code's project memory root for `repo` under `home` (the layout most sandboxes use).
pub(crate) fn claude_code_memory(repo: &Path, home: &Path) -> Result<PathBuf> {
    project_memory(Layout::ClaudeCode, repo, home)
}
