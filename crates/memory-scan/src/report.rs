//! What a scan saw beside the documents: counts, skipped files and scope warnings.

use std::path::PathBuf;
use std::sync::Arc;

use crate::document::Scope;
use crate::error::{CatalogRejection, CatalogWriteError};

/// Serialises a path losslessly: as a string when it is UTF-8, otherwise as the array of its
/// bytes (Unix file names are bytes, and a lossy string could name another file). Every path in
/// this crate's serialised reports, and in `memrecall`'s JSON, follows this rule.
pub fn serialize_path<S: serde::Serializer>(
    path: &std::path::Path,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match path.to_str() {
        Some(text) => serializer.serialize_str(text),
        None => serializer.collect_seq(path.as_os_str().as_encoded_bytes()),
    }
}

/// Why a file under a memory root is not a topic document.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum SkipReason {
    /// The content is not valid UTF-8.
    NotUtf8,
    /// The file exceeds [`MAX_TOPIC_BYTES`](crate::MAX_TOPIC_BYTES); it is skipped whole rather
    /// than truncated.
    TooLarge {
        /// The cap in bytes.
        limit_bytes: u64,
        /// The size found (at least `limit_bytes + 1` when the file grew while being read).
        size_bytes: u64,
    },
    /// The file does not open with a `---` frontmatter block.
    NoFrontmatter,
    /// The frontmatter block is never closed.
    UnterminatedFrontmatter,
    /// The frontmatter has no `type`.
    MissingType,
    /// The `type` is not a memory type.
    UnknownType {
        /// The value found.
        value: String,
    },
    /// Opening, reading or listing failed (permissions, I/O).
    Unreadable {
        /// The operating system's message.
        error: String,
    },
    /// The file disappeared between listing and reading.
    Vanished,
    /// The `*.md` entry is a directory, socket, FIFO or device, not a regular file.
    NotAFile,
    /// A symlink that resolves outside its memory root.
    SymlinkOutsideRoot,
    /// A symlink chain that loops.
    SymlinkLoop,
    /// A symlink whose target does not exist.
    BrokenSymlink,
    /// A directory deeper below its root than [`MAX_DEPTH`](crate::MAX_DEPTH) levels: neither it
    /// nor anything below it is walked. Said once per scan and root, of the first such directory
    /// met.
    TooDeep {
        /// The limit in directory levels below the root.
        limit_depth: usize,
    },
    /// The root holds more `*.md` entries than
    /// [`MAX_FILES_PER_ROOT`](crate::MAX_FILES_PER_ROOT): this entry and every one after it in
    /// path order are left out, and the walk stops. Said once per scan and root, of the first
    /// entry left out.
    TooManyFiles {
        /// The limit in `*.md` entries.
        limit_files: usize,
    },
    /// A directory with more entries than
    /// [`MAX_ENTRIES_PER_DIRECTORY`](crate::MAX_ENTRIES_PER_DIRECTORY): only the first that many the
    /// file system gave were walked. Said once per scan and root, of the first such directory.
    TooManyEntries {
        /// The limit in entries of one directory.
        limit_entries: usize,
    },
    /// A symlink to a file that is already a document under another path (its own name, or the
    /// first link to it listed): one file is recalled once.
    DuplicateLink {
        /// The path the file is recalled under.
        #[serde(serialize_with = "serialize_path")]
        of: PathBuf,
    },
}

impl SkipReason {
    /// Whether a walk's limit left this entry, and what followed it, out
    /// ([`SkipReason::TooDeep`], [`SkipReason::TooManyFiles`], [`SkipReason::TooManyEntries`]).
    pub fn is_limit(&self) -> bool {
        self.limit_text().is_some()
    }

    /// What a walk's limit left out, in words for a person; `None` for any other reason.
    pub fn limit_text(&self) -> Option<String> {
        match self {
            Self::TooDeep { limit_depth } => Some(format!(
                "more than {limit_depth} directory levels below its root: not walked"
            )),
            Self::TooManyFiles { limit_files } => Some(format!(
                "the root holds more than {limit_files} memory files: this one and those after it are left out"
            )),
            Self::TooManyEntries { limit_entries } => Some(format!(
                "a directory of more than {limit_entries} entries: only the first {limit_entries} are walked"
            )),
            _ => None,
        }
    }

    /// Whether the reason may not hold at the next attempt although the file is unchanged: a
    /// failed read (an I/O error, a network file system's hiccup) or a file that was gone. Such a
    /// verdict is remembered neither in the session's cache nor in a catalog.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Unreadable { .. } | Self::Vanished)
    }
}

/// One skipped entry and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkippedFile {
    /// The scope whose root holds the entry.
    pub scope: Scope,
    /// The entry's absolute path.
    #[serde(serialize_with = "serialize_path")]
    pub path: PathBuf,
    /// Why it is not a document; serialised inline (`"reason": "not_utf8"` beside the path).
    #[serde(flatten)]
    pub reason: SkipReason,
}

/// Counts and problems of one scan.
///
/// `files_seen` counts every `*.md` entry considered (the `MEMORY.md` index is not one), so
/// `files_seen == parsed + skipped entries`, except that `skipped` also lists subdirectories that
/// could not be listed and where a walk's limits stopped it ([`SkipReason::TooDeep`],
/// [`SkipReason::TooManyFiles`], [`SkipReason::TooManyEntries`]), none of which was counted. `reread` and `reused` say how many entries the document cache read from
/// disk and how many it served unchanged; the capped scanner reads everything and reuses nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct ScanReport {
    /// `*.md` entries considered.
    pub files_seen: usize,
    /// Entries that became documents.
    pub parsed: usize,
    /// Entries that did not, with the reason, ordered by scope then path.
    pub skipped: Vec<SkippedFile>,
    /// User-scope failures; the project scope was still scanned.
    pub warnings: Vec<String>,
    /// Files read from disk in this scan.
    pub reread: usize,
    /// Files whose cached outcome was reused because their [`FileKey`](crate::FileKey) matched.
    pub reused: usize,
    /// Documents parsed but left out by the capped scanner's limit.
    pub dropped_by_cap: usize,
    /// Of `reused`, the files whose outcome came from a persistent catalog loaded by this scan.
    pub from_catalog: usize,
    /// Directories not listed again because the listing remembered from an earlier scan or a
    /// catalog still held (their key unchanged since a stable listing), or because a watcher
    /// reported no change in them.
    pub listings_reused: usize,
    /// The file system work the scan did besides reading files. Not serialised: the report's
    /// JSON form predates it.
    #[serde(skip)]
    pub work: ScanWork,
    /// The persistent catalogs this scan tried to load (one per root on the first scan of a cache
    /// built with catalogs; none otherwise).
    pub catalogs: Vec<CatalogLoad>,
}

/// The file system calls a scan made besides reading files (each file read is opened once and
/// counted in [`ScanReport::reread`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ScanWork {
    /// Files whose key was taken with a `stat` of their own, to compare it with a remembered one.
    pub files_stated: usize,
    /// Directories listed.
    pub directories_listed: usize,
    /// Directories opened to take their key, to check a remembered listing or to remember one.
    pub directories_stated: usize,
}

impl ScanReport {
    /// Whether this scan started from at least one persistent catalog.
    pub fn catalog_used(&self) -> bool {
        self.catalogs
            .iter()
            .any(|load| matches!(load.outcome, CatalogOutcome::Loaded { .. }))
    }
}

/// What became of one root's persistent catalog when a scan tried to load it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[non_exhaustive]
pub struct CatalogLoad {
    /// The root's scope.
    pub scope: Scope,
    /// The catalog file.
    #[serde(serialize_with = "serialize_path")]
    pub path: PathBuf,
    /// Loaded, missing or rejected; serialised inline (`"catalog": "loaded"`).
    #[serde(flatten)]
    pub outcome: CatalogOutcome,
}

/// The outcome of loading a persistent catalog.
///
/// Two outcomes are equal when they say the same: the same count, or rejections with the same
/// message.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(tag = "catalog", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CatalogOutcome {
    /// The catalog was read; its entries are trusted only where their file key still matches.
    Loaded {
        /// Entries read from it.
        entries: usize,
    },
    /// There is no catalog yet; one is written after the scan.
    Missing,
    /// The catalog is unreadable, damaged or of another version; it is ignored and rewritten.
    Rejected {
        /// Why it was ignored; serialised as its message.
        #[serde(serialize_with = "serialize_display")]
        reason: Arc<CatalogRejection>,
    },
}

impl PartialEq for CatalogOutcome {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Loaded { entries: a }, Self::Loaded { entries: b }) => a == b,
            (Self::Missing, Self::Missing) => true,
            (Self::Rejected { reason: a }, Self::Rejected { reason: b }) => {
                Arc::ptr_eq(a, b) || a.to_string() == b.to_string()
            }
            _ => false,
        }
    }
}

impl Eq for CatalogOutcome {}

/// Serialises a value as its message.
fn serialize_display<S: serde::Serializer>(
    value: &impl std::fmt::Display,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_str(value)
}

/// Serialises a write's outcome as `{"Ok": entries}` or `{"Err": message}`.
fn serialize_write_outcome<S: serde::Serializer>(
    outcome: &Result<usize, Arc<CatalogWriteError>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::Serialize;
    outcome
        .as_ref()
        .map(|written| *written)
        .map_err(ToString::to_string)
        .serialize(serializer)
}

/// The outcome of writing one root's persistent catalog.
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct CatalogWrite {
    /// The root's scope.
    pub scope: Scope,
    /// The catalog file.
    #[serde(serialize_with = "serialize_path")]
    pub path: PathBuf,
    /// The number of entries written, or why nothing was written; serialised as
    /// `{"Ok": entries}` or `{"Err": message}`.
    #[serde(serialize_with = "serialize_write_outcome")]
    pub outcome: Result<usize, Arc<CatalogWriteError>>,
}

/// A scan that could not produce a result at all.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// The project root exists but cannot be listed (or is not a directory).
    #[error("cannot read project memory root {path}: {source}")]
    ProjectRoot {
        /// The root as configured.
        path: PathBuf,
        /// The underlying failure.
        source: std::io::Error,
    },
}
