//! A working directory's git root, found by reading `.git` entries (never by running git, which
//! would cost a process start on every prompt).
//!
//! The root is the nearest ancestor (the directory itself included) holding a `.git` directory or
//! file. A `.git` *file* holding `gitdir: <dir>` is a linked worktree when `<dir>` holds a
//! `commondir` file naming the main repository's git directory, `<dir>` sits in that directory's
//! `worktrees/`, and `<dir>/gitdir` points back at this `.git` file; its main repository is the
//! directory holding that common git directory. A `.git` file without those (a submodule, a
//! hand-made file) is still a root, with no main repository.

use std::path::{Path, PathBuf};

/// Where a directory's repository starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitRoot {
    /// The nearest ancestor holding `.git`: the worktree's own root.
    pub root: PathBuf,
    /// For a linked worktree, the main repository's root.
    pub main: Option<PathBuf>,
}

impl GitRoot {
    /// The main repository's root for a linked worktree, else the root itself.
    pub fn canonical(&self) -> &Path {
        self.main.as_deref().unwrap_or(&self.root)
    }
}

/// The git root of `start` (an absolute directory), if any ancestor holds `.git`.
pub fn find(start: &Path) -> Option<GitRoot> {
    start.ancestors().find_map(|dir| {
        let dot_git = dir.join(".git");
        let metadata = std::fs::metadata(&dot_git).ok()?;
        let main = if metadata.is_file() {
            main_of_worktree(&dot_git)
        } else {
            None
        };
        Some(GitRoot {
            root: dir.to_path_buf(),
            main,
        })
    })
}

/// The main repository of the linked worktree whose `.git` file is `dot_git`, when every link
/// checks out.
fn main_of_worktree(dot_git: &Path) -> Option<PathBuf> {
    // A `.git` file is one short line; a large one is not git's.
    let text = read_small(dot_git)?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let worktree_root = dot_git.parent()?;
    let git_dir = canonical(&worktree_root.join(target))?;
    let common = read_small(&git_dir.join("commondir"))?;
    let common_dir = canonical(&git_dir.join(common.trim()))?;
    if git_dir.parent()? != common_dir.join("worktrees") {
        return None;
    }
    let back = read_small(&git_dir.join("gitdir"))?;
    let back = canonical(&git_dir.join(back.trim()))?;
    if back != canonical(dot_git)? {
        return None;
    }
    common_dir.parent().map(Path::to_path_buf)
}

/// A git pointer file's text; a FIFO, a device or an oversized file in its place is refused
/// without blocking or reading it (see [`memory_scan::foreign`]).
fn read_small(path: &Path) -> Option<String> {
    use memory_scan::foreign::{self, ByteLimit, Links};
    foreign::read_to_string(path, ByteLimit::GIT_POINTER, Links::Follow).ok()
}

fn canonical(path: &Path) -> Option<PathBuf> {
    crate::paths::canonicalize(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = crate::paths::canonicalize(dir.path()).unwrap();
        (dir, base)
    }

    /// A main repository at `base/main` and a linked worktree at `base/wt`, laid out as
    /// `git worktree add` leaves them.
    fn repository_with_worktree(base: &Path) -> (PathBuf, PathBuf) {
        let main = base.join("main");
        let wt = base.join("wt");
        let admin = main.join(".git/worktrees/wt");
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(admin.join("commondir"), "../..\n").unwrap();
        std::fs::write(
            admin.join("gitdir"),
            format!("{}\n", wt.join(".git").display()),
        )
        .unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
        (main, wt)
    }

    #[test]
    fn the_nearest_ancestor_with_a_git_directory_is_the_root() {
        let (_dir, base) = dir();
        std::fs::create_dir_all(base.join("repo/.git")).unwrap();
        std::fs::create_dir_all(base.join("repo/src/deep")).unwrap();
        let found = find(&base.join("repo/src/deep")).unwrap();
        assert_eq!(found.root, base.join("repo"));
        assert_eq!(found.main, None);
    }

    #[test]
    fn a_directory_outside_any_repository_has_no_root() {
        let (_dir, base) = dir();
        assert_eq!(find(&base), None);
    }

    #[test]
    fn a_linked_worktree_has_its_own_root_and_the_main_repository_as_canonical() {
        let (_dir, base) = dir();
        let (main, wt) = repository_with_worktree(&base);
        std::fs::create_dir_all(wt.join("src")).unwrap();
        let found = find(&wt.join("src")).unwrap();
        assert_eq!(found.root, wt);
        assert_eq!(found.canonical(), main);
    }

    #[test]
    fn a_worktree_whose_back_link_points_elsewhere_is_its_own_repository() {
        let (_dir, base) = dir();
        let (_main, wt) = repository_with_worktree(&base);
        std::fs::write(
            base.join("main/.git/worktrees/wt/gitdir"),
            "/somewhere/else/.git\n",
        )
        .unwrap();
        let found = find(&wt).unwrap();
        assert_eq!(found.canonical(), wt);
    }

    #[test]
    fn a_git_file_without_commondir_is_a_root_of_its_own() {
        let (_dir, base) = dir();
        std::fs::create_dir_all(base.join("super/.git/modules/sub")).unwrap();
        std::fs::create_dir_all(base.join("super/sub")).unwrap();
        std::fs::write(base.join("super/sub/.git"), "gitdir: ../.git/modules/sub\n").unwrap();
        let found = find(&base.join("super/sub")).unwrap();
        assert_eq!(found.root, base.join("super/sub"));
        assert_eq!(found.main, None);
    }

    #[cfg(unix)]
    #[test]
    fn a_commondir_that_is_a_fifo_is_refused_without_blocking() {
        let (_dir, base) = dir();
        let (_main, wt) = repository_with_worktree(&base);
        let commondir = base.join("main/.git/worktrees/wt/commondir");
        std::fs::remove_file(&commondir).unwrap();
        crate::test_support::make_fifo(&commondir);
        let found = find(&wt).unwrap();
        assert_eq!(found.root, wt);
        assert_eq!(found.main, None);
    }
}
