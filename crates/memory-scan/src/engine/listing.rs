//! What a walk remembers of a directory's listing, and which entries of it the walk acts on.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;

use super::{INDEX_FILE_NAME, is_markdown};
use crate::key::FileKey;

/// The kind of a remembered directory entry the walk acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum EntryKind {
    /// A regular `*.md` file other than the index.
    File,
    /// A directory not hidden (a `*.md` one is also reported as `not_a_file`).
    Directory,
}

impl EntryKind {
    /// Whether the walk acts on an entry of this kind with this name (see the walk rules in the
    /// `engine` module): a directory unless hidden; a file named `*.md` other than the index.
    pub(crate) fn walks(self, name: &std::ffi::OsStr) -> bool {
        let bytes = name.as_encoded_bytes();
        match self {
            EntryKind::File => is_markdown(name) && bytes != INDEX_FILE_NAME.as_bytes(),
            EntryKind::Directory => !bytes.starts_with(b"."),
        }
    }
}

/// One directory's listing as a walk used it, kept so the next walk can skip listing it.
///
/// A directory gains or loses an entry only by a create, unlink or rename in it, each of which
/// moves its mtime and ctime, so a listing holds while the directory's [`FileKey`] (taken just
/// before listing) is unchanged, provided its mtime was stable (older than the racy margin)
/// when it was listed: a change in the same clock tick after the listing would keep the key.
/// Only directories whose relevant entries are all regular files and directories are
/// remembered; one holding a symlink (other than a hidden one), an odd file type or an unreadable
/// entry is listed every time, since what those resolve to can change without the directory
/// changing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DirectoryListing {
    pub(crate) key: FileKey,
    pub(crate) stable: bool,
    /// The entries the walk acts on, in name order; names ignored by the walk are left out.
    pub(crate) entries: Vec<(OsString, EntryKind)>,
}

/// Remembered listings by directory path below the root (empty for the root itself).
pub(crate) type Directories = BTreeMap<PathBuf, DirectoryListing>;
