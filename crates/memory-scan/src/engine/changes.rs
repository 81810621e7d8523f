//! What a caller that watches a root knows about the changes under it, so a scan can skip
//! listing and checking everything else.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::listing::EntryKind;

/// Paths below a memory root (relative to it) that may have changed: created, removed, renamed
/// from or to ([`ChangedPaths::insert`]), or written or had their metadata changed
/// ([`ChangedPaths::insert_edit`]). A path stands for itself and, when it is or was a directory,
/// for everything below it.
///
/// A scan re-lists the directory holding each path (and the path itself, should it be a
/// directory) and reads again every topic file at or below a path, whatever its key says: an
/// edit that keeps a file's size and times is seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChangedPaths {
    /// The paths as given.
    paths: BTreeSet<PathBuf>,
    /// The directories holding them, which must be listed again.
    parents: BTreeSet<PathBuf>,
}

impl ChangedPaths {
    /// No path changed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that `relative` (a path below the root; empty for the root itself) may have
    /// changed.
    ///
    /// A path below a directory the walk never enters (a hidden one, such as the catalog's own
    /// `.memrecall`) cannot change a scan and is not recorded.
    pub fn insert(&mut self, relative: impl Into<PathBuf>) {
        let relative = relative.into();
        if below_an_unwalked_directory(&relative) {
            return;
        }
        if let Some(parent) = relative.parent() {
            self.parents.insert(parent.to_path_buf());
        }
        self.paths.insert(relative);
    }

    /// Records that the content or metadata of `relative` may have changed, but not the entries
    /// of the directory holding it: the path is read (or, for a directory, listed) again, and its
    /// directory is not listed for it.
    pub fn insert_edit(&mut self, relative: impl Into<PathBuf>) {
        let relative = relative.into();
        if !below_an_unwalked_directory(&relative) {
            self.paths.insert(relative);
        }
    }

    /// Adds every path of `other`.
    pub fn extend(&mut self, other: ChangedPaths) {
        self.paths.extend(other.paths);
        self.parents.extend(other.parents);
    }

    /// How many paths were recorded.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Whether no path was recorded.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The recorded paths, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Path> {
        self.paths.iter().map(PathBuf::as_path)
    }

    /// Whether the topic file at `relative` must be read again: it, or a directory above it
    /// below the root, changed.
    pub(crate) fn touches_file(&self, relative: &Path) -> bool {
        !self.paths.is_empty()
            && relative
                .ancestors()
                .filter(|path| !path.as_os_str().is_empty())
                .any(|path| self.paths.contains(path))
    }

    /// Whether the directory at `relative` (empty for the root) must be listed again: an entry of
    /// it changed, or it or a directory above it did.
    pub(crate) fn touches_listing(&self, relative: &Path) -> bool {
        !self.paths.is_empty()
            && (self.parents.contains(relative)
                || self.paths.contains(relative)
                || self.touches_file(relative))
    }
}

/// Whether a directory above `relative` (below the root) is one the walk does not enter.
fn below_an_unwalked_directory(relative: &Path) -> bool {
    relative
        .parent()
        .is_some_and(|parent| parent.iter().any(|name| !EntryKind::Directory.walks(name)))
}

impl<P: Into<PathBuf>> FromIterator<P> for ChangedPaths {
    fn from_iter<I: IntoIterator<Item = P>>(paths: I) -> Self {
        let mut changed = Self::new();
        for path in paths {
            changed.insert(path);
        }
        changed
    }
}

/// What the caller knows about the changes under one root since this cache's previous scan of
/// that root began.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum RootChanges {
    /// Nothing: the root is listed and every file's key checked, as without a watcher.
    #[default]
    Unknown,
    /// Only these paths may have changed. The scan reuses the remembered listings of the other
    /// directories without opening them and the remembered outcome of every other file without
    /// a `stat` (whatever the racy-timestamp rule would say: a watcher reports a write that keeps
    /// a file's key). A root this cache has not scanned completely before is scanned as
    /// [`RootChanges::Unknown`].
    ///
    /// The promise must hold from before the previous scan of this cache began: a watcher has to
    /// be in place, and its events up to now delivered, before the scan that relies on it.
    Only(ChangedPaths),
}

/// What the caller knows about the changes under each root (see [`RootChanges`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnownChanges {
    /// The project root's.
    pub project: RootChanges,
    /// The user root's.
    pub user: RootChanges,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_below_a_hidden_directory_is_not_recorded_but_one_of_a_hidden_name_is() {
        let mut changed = ChangedPaths::new();
        changed.insert(".memrecall/catalog");
        changed.insert_edit("notes/.cache/a.md");

        assert!(changed.is_empty());

        changed.insert(".memrecall");
        changed.insert_edit(".hidden.md");

        assert_eq!(changed.len(), 2);
    }

    #[test]
    fn a_changed_directory_covers_the_files_and_listings_below_it() {
        let changed: ChangedPaths = ["notes", "a.md"].into_iter().collect();

        assert!(changed.touches_file(Path::new("notes/deep/b.md")));
        assert!(changed.touches_file(Path::new("a.md")));
        assert!(!changed.touches_file(Path::new("b.md")));
        assert!(changed.touches_listing(Path::new("")));
        assert!(changed.touches_listing(Path::new("notes/deep")));
        assert!(!changed.touches_listing(Path::new("other")));
    }

    #[test]
    fn an_edit_does_not_list_the_directory_holding_it() {
        let mut changed = ChangedPaths::new();
        changed.insert_edit("notes/a.md");

        assert!(changed.touches_file(Path::new("notes/a.md")));
        assert!(!changed.touches_listing(Path::new("notes")));
    }

    #[test]
    fn no_change_touches_nothing() {
        let changed = ChangedPaths::new();

        assert!(!changed.touches_file(Path::new("a.md")));
        assert!(!changed.touches_listing(Path::new("")));
    }
}
