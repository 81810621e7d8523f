#![forbid(unsafe_code)]
//! Reads the project and user memory trees into typed topic documents.
//!
//! It walks a memory root, parses each `*.md` topic file's frontmatter, and reports every file it
//! skipped and why; a bad file never aborts a scan. It knows nothing of queries, selectors,
//! delivery or telemetry.
//!
//! - [`parse_topic`] / [`render_topic`]: the file format as pure functions over text.
//! - [`DocumentCache::scan_recall`]: the uncapped recall scanner, project documents first, with a
//!   session cache that re-reads only changed files and keeps each document's prepared scoring
//!   text.
//! - [`DocumentCache::with_catalog`]: the same cache started from a persistent catalog per root
//!   (kept where its [`CatalogStore`] says: inside the root, [`catalog_path`], or under a
//!   directory of the caller's) and written back by
//!   [`DocumentCache::persist_catalogs`], so a new process reads only files that changed. An entry
//!   is trusted only when its [`FileKey`] matches and its file was older than [`RACY_MARGIN`] when
//!   it was read; a damaged, foreign or older catalog is ignored and rebuilt.
//! - [`DocumentCache::scan_recall_knowing`]: the same scan for a caller that watches the roots
//!   and says which paths changed ([`KnownChanges`]): nothing else is listed or `stat`ed, and
//!   [`ScanReport::work`] counts what was.
//! - [`beneath`] (Unix): the one walk from a root's directory handle to a directory below it,
//!   never through a symlink, that scans, catalogs and saves share.
//! - [`foreign`]: reading a file memrecall does not own (agent settings, `.git` files, its
//!   configuration) without blocking on a FIFO or reading a device or an oversized file.
//! - [`scan_capped`]: the [`CAPPED_SCAN_LIMIT`] newest documents, for everything that is not recall.
//!
//! Walk rules, in short: hidden directories (name starting with `.`) are not walked because that
//! is where tooling state such as a catalog lives; `MEMORY.md` at any depth is the index and never
//! a topic; symlinks never lead out of a root nor loop; files over [`MAX_TOPIC_BYTES`] are skipped
//! and reported, never truncated; a walk goes at most [`MAX_DEPTH`] directory levels deep and takes
//! at most [`MAX_FILES_PER_ROOT`] `*.md` entries per root and [`MAX_ENTRIES_PER_DIRECTORY`]
//! entries per directory, reporting each limit once per scan.
//!
//! With the default `parallel` feature, files are read, catalogs decoded and encoded and indexes
//! built on the rayon thread pool; without it, on the calling thread, with the same results.
//!
//! # Example
//!
//! Scan a project memory root and read its topics:
//!
//! ```
//! use memory_scan::{DocumentCache, MemoryRoots};
//!
//! let root = tempfile::tempdir()?;
//! std::fs::write(
//!     root.path().join("deploys.md"),
//!     "---\nname: Deploys\ntype: project\n---\nRun the rollback script before a deploy.\n",
//! )?;
//! let roots = MemoryRoots {
//!     project: Some(root.path().to_path_buf()),
//!     user: None,
//! };
//!
//! let cache = DocumentCache::new();
//! let scan = cache.scan_recall(&roots)?;
//!
//! assert_eq!(scan.documents.len(), 1);
//! assert_eq!(scan.documents[0].title(), "Deploys");
//! assert!(scan.report.skipped.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::sync::{Mutex, MutexGuard, PoisonError};

#[cfg(unix)]
pub mod beneath;
mod cache;
mod capped;
mod catalog;
#[cfg(all(test, unix))]
mod catalog_faults;
mod document;
mod engine;
mod entry;
mod error;
pub mod foreign;
mod key;
mod par;
mod project_name;
mod report;
mod scanner;
#[cfg_attr(
    not(unix),
    allow(dead_code, reason = "catalogs are only written on Unix")
)]
mod state_dir;
mod timestamp;
mod topic;

pub use cache::{CacheFootprint, DocumentCache, RACY_MARGIN, RecallScan};
pub use capped::{CAPPED_SCAN_LIMIT, CappedScan, scan_capped};
pub use catalog::{
    CATALOG_DIR_NAME, CATALOG_FILE_NAME, CATALOG_FORMAT_VERSION, CatalogStore, catalog_path,
    remove_in_root_catalog,
};
pub use document::{Document, DocumentError, ScannedDocument, Scope};
pub use engine::changes::{ChangedPaths, KnownChanges, RootChanges};
pub use engine::{
    INDEX_FILE_NAME, MAX_DEPTH, MAX_ENTRIES_PER_DIRECTORY, MAX_FILES_PER_ROOT, MAX_TOPIC_BYTES,
    MemoryRoots,
};
pub use error::{CatalogRejection, CatalogWriteError};
pub use key::FileKey;
pub use lexical_score::MemoryType;
pub use project_name::{MAX_PROJECT_DIR_NAME_BYTES, sanitise_project_path};
pub use report::{
    CatalogLoad, CatalogOutcome, CatalogWrite, ScanError, ScanReport, ScanWork, SkipReason,
    SkippedFile, serialize_path,
};
pub use scanner::RecallScanner;
pub use state_dir::StateDirError;
pub use topic::{EMPTY_BODY_PLACEHOLDER, ParseError, Topic, TopicError, parse_topic, render_topic};

/// Entry points for the fuzz targets under `fuzz/`; not part of the API.
#[cfg(feature = "fuzzing")]
pub mod fuzzing {
    /// Decodes `bytes` as a whole catalog file: the number of entries, or why it was rejected.
    /// Any byte string is either rejected or decoded; none panics or allocates past what its
    /// length allows.
    pub fn decode_catalog(bytes: &[u8]) -> Result<usize, crate::CatalogRejection> {
        crate::catalog::decode_bytes(bytes)
    }
}

/// Locks `mutex`, taking the data as it is when another thread panicked while holding it: what a
/// cache keeps behind a mutex (its maps, its last quiet scan, the writer's turn) is only ever
/// replaced whole, so a panic elsewhere cannot leave it half-changed.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
