//! The walk/read/parse engine both scanners share.
//!
//! Walk rules, in the order they apply to each directory entry:
//! - names starting with `.` that are directories are not walked: that is where tooling state
//!   such as a catalog lives, and editors keep their own caches there;
//! - only names ending in `.md` (case-sensitive) are topic candidates, and `MEMORY.md` at any
//!   depth is the human-maintained index, never a topic;
//! - a `*.md` entry that is a directory is walked like any directory and also reported as
//!   `not_a_file`; sockets, FIFOs and devices are reported the same way and never opened;
//! - symlinks are resolved but never walked as directories (their targets inside the root are
//!   walked anyway, so nothing loops and nothing is listed twice through a link); one that leads
//!   to a directory outside the root is reported as `symlink_outside_root`. A symlinked file
//!   counts only if it resolves to a regular file inside the root, and a file reached both by
//!   its own name and through links is one document (see [`drop_duplicate_links`]).
//!
//! A walk goes at most [`MAX_DEPTH`] directory levels below its root and takes at most
//! [`MAX_FILES_PER_ROOT`] `*.md` entries from it (the first in path order), and reads at most
//! [`MAX_ENTRIES_PER_DIRECTORY`] entries of a directory, reporting each limit once when it stops
//! the walk.
//!
//! When the roots overlap (the same directory given for both scopes, or one inside the other), a
//! file both walks reach is one document, in the project scope: a document's identity is its
//! absolute path. The scan report carries a warning saying how many files that was.
//!
//! Each candidate is read with one `open`, one `fstat` of that descriptor and one read, in
//! parallel across the rayon pool; results are ordered by relative path, never by thread timing.
//! On Unix every file is reached from the root's directory handle without following a symlink,
//! and each thread keeps the directory it is in open and opens and stats files by name in it
//! (see [`OpenParent`] and the `access` module).

mod access;
pub(crate) mod changes;
mod listing;
mod read;
mod roots;
mod visit;
mod walk;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) use access::{OpenParent, RootDir};
pub(crate) use listing::{Directories, DirectoryListing, EntryKind};
pub(crate) use read::ReadOutcome;
pub(crate) use roots::{Walked, list_scopes};
pub(crate) use visit::{drop_duplicate_links, scan_scopes, visit_scopes};
pub(crate) use walk::PriorListings;

use crate::document::Scope;
use crate::key::FileKey;
use crate::report::SkippedFile;

/// The largest topic file read, in bytes. Larger files are skipped and reported, not truncated:
/// a memory that big is not a note a prompt could show, and reading it would stall recall.
pub const MAX_TOPIC_BYTES: u64 = 256 * 1024;

/// The deepest a walk goes, in directory levels below its memory root (the root's own
/// subdirectories are level 1). A directory deeper than this is not listed, nor anything below
/// it; the first one met is reported as skipped ([`SkipReason::TooDeep`](crate::SkipReason)), once
/// per scan and root, and the files above it are still read. Memory trees are a few levels deep;
/// the limit bounds what a pathological one (thousands of nested directories) costs a prompt.
pub const MAX_DEPTH: usize = 16;

/// The most `*.md` entries a walk takes from one memory root. The walk goes depth first, each
/// directory in name order, so the entries taken are the first ones in path order, the same at
/// every scan. At the first entry past the limit the walk stops listing: that entry is reported
/// as skipped ([`SkipReason::TooManyFiles`](crate::SkipReason)), once per scan and root, and the
/// entries taken are still read, with the root's own files that follow (a folder of thousands of
/// files must not hide the notes at the top). A scan without a catalog of this many files stays
/// well inside the first-prompt ceiling.
pub const MAX_FILES_PER_ROOT: usize = 5_000;

/// The most entries a walk reads from one directory, of any kind and name (a directory of
/// 200,000 files costs more to list whole than a prompt can wait). A directory with more is walked
/// from the first this many the file system gives (the same ones while the directory is
/// unchanged) and listed again at every walk, never remembered; the first such directory is
/// reported as skipped ([`SkipReason::TooManyEntries`](crate::SkipReason)), once per scan and
/// root.
pub const MAX_ENTRIES_PER_DIRECTORY: usize = 20_000;

/// The file name of the per-root index, which is never a topic.
pub const INDEX_FILE_NAME: &str = "MEMORY.md";

/// Where recall looks. A `None` root is an empty scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryRoots {
    /// The project memory root.
    pub project: Option<PathBuf>,
    /// The user (cross-project) memory root.
    pub user: Option<PathBuf>,
}

/// A `*.md` entry that will be read.
#[derive(Debug)]
pub(crate) struct Candidate {
    pub(crate) relative: PathBuf,
    pub(crate) path: PathBuf,
    /// Whether the entry was listed as a symlink (and resolved to a file inside the root). Any
    /// other candidate is opened without following a symlink, so a symlink that takes its place
    /// after listing, or that a remembered listing calls a file, is never read through.
    pub(crate) symlink: bool,
    /// The file's key when it was taken right after listing (see [`Walked::take_keys`]).
    pub(crate) early_key: EarlyKey,
}

/// Whether a candidate's [`FileKey`] was taken ahead of its visit, and what it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EarlyKey {
    /// Not taken: whoever needs it asks the file system.
    NotTaken,
    /// `stat` of the path (following a symlink to its target) gave this key.
    Taken(FileKey),
    /// `stat` failed; reading the file will report why.
    Unavailable,
}

/// One scope's entries, sorted by relative path, each with what the caller made of it.
pub(crate) struct ScopeListing<T> {
    pub(crate) scope: Scope,
    /// What the visit made of each candidate, in listing order.
    pub(crate) entries: Vec<T>,
    pub(crate) skipped: Vec<SkippedFile>,
    pub(crate) files_seen: usize,
}

/// Both scopes' listings (project first) and the user-scope warnings.
pub(crate) struct Listings<T> {
    pub(crate) scopes: Vec<ScopeListing<T>>,
    pub(crate) warnings: Vec<String>,
}

/// A root opened for a walk; its candidates are read through it.
type Root = Arc<RootDir>;

/// `base/name`, allocated once at its final size (`Path::join` grows the buffer as it appends).
pub(crate) fn join(base: &Path, name: &std::ffi::OsStr) -> PathBuf {
    let mut path = PathBuf::with_capacity(base.as_os_str().len() + 1 + name.len());
    path.push(base);
    path.push(name);
    path
}

/// Whether the walk treats a name as a topic name (`*.md`, case-sensitive).
pub(crate) fn is_markdown(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().ends_with(b".md")
}
