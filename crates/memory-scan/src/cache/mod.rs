//! The session document cache behind the uncapped recall scanner, optionally backed by a
//! persistent catalog per memory root.

mod footprint;
mod persist;
mod reuse;
mod scan;

pub use footprint::CacheFootprint;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[cfg(doc)]
use lexical_score::PreparedText;
use lexical_score::QueryTokens;

use crate::catalog::{CatalogRead, CatalogStore};
use crate::document::ScannedDocument;
use crate::engine::changes::KnownChanges;
#[cfg(doc)]
use crate::engine::changes::RootChanges;
use crate::engine::{Directories, MemoryRoots};
use crate::entry::{Entries, Verdict};
use crate::lock;
use crate::report::{CatalogLoad, ScanError, ScanReport};
#[cfg(doc)]
use crate::{catalog_path, key::FileKey};

/// How recent a file's modification may be, relative to the start of the scan that read it, for
/// its cached outcome to be trusted later (the racy-timestamp rule).
///
/// File systems stamp writes with a coarse clock (a kernel tick on Linux, two seconds on FAT), so
/// a file rewritten just after it was read can keep its size, times and inode: its [`FileKey`]
/// would still match content the cache never saw. An outcome read while the file's mtime was
/// within this margin of the scan's start is therefore "unstable" and read again on every scan
/// until a scan finds the file older than that. Files with mtimes in the future never become
/// stable.
pub const RACY_MARGIN: Duration = Duration::from_secs(2);

/// Recall scan result: project documents first, then user documents, each scope sorted by
/// relative path.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RecallScan {
    /// Every topic document of both scopes, no cap.
    pub documents: Vec<Arc<ScannedDocument>>,
    /// What was seen, skipped, re-read and reused.
    pub report: ScanReport,
}

/// The session document cache + the uncapped recall scanner. Shareable across threads.
///
/// Each scan still lists both roots (that is how new and deleted files are noticed), but a file
/// whose [`FileKey`] is unchanged, and whose outcome is stable (see [`RACY_MARGIN`]), is not
/// opened again: its document, prepared scoring text included, or its skip verdict is reused.
/// Entries for files no longer listed are dropped. Concurrent scans take turns, so the second one
/// benefits from the first one's reads.
///
/// Built with [`DocumentCache::with_catalog`], the first scan of each root starts from the root's
/// persistent catalog (at [`catalog_path`]) instead of from nothing, and
/// [`DocumentCache::persist_catalogs`] writes back what changed. Results are the same with or
/// without a catalog: every catalog entry is checked against its file exactly like an entry of an
/// earlier scan in the same process.
#[derive(Debug, Default)]
pub struct DocumentCache {
    scopes: Mutex<[Option<RootCache>; 2]>,
    /// Where catalogs are kept and how their bytes are read; `None` without persistence.
    catalogs: Option<(CatalogStore, CatalogRead)>,
    /// Serialises catalog writes, so they land in the order their snapshots were taken.
    writing: Mutex<()>,
    /// The last scan, when it relied on known changes for every root and touched the file
    /// system not at all: a scan of the same roots told again that nothing changed would find
    /// the same, so it is served as it is. Locked after `scopes`.
    quiet: Mutex<Option<(MemoryRoots, RecallScan)>>,
}

/// What the cache knows about one root.
#[derive(Debug)]
pub(super) struct RootCache {
    /// The root made absolute.
    root: PathBuf,
    /// Keyed by the path below the root, in the order a listing produces (see [`path_order`]),
    /// so a scan matches them to its listing in one merge instead of one look-up per file.
    entries: Entries,
    /// The listings of the directories the last walk may skip listing next time.
    directories: Directories,
    /// Whether the entries may differ from the root's catalog on disk.
    dirty: bool,
    /// Whether the last scan of the root listed it (its entries and listings are the root's as
    /// of that scan), so changes reported since can be relied on.
    complete: bool,
}

/// A root's cache as a scan starts it, and how its catalog load went (without catalogs, none).
pub(super) type Started = (RootCache, Option<CatalogLoad>);

impl DocumentCache {
    /// An empty cache without persistence.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty cache that starts each root from its persistent catalog and can write the catalog
    /// back with [`DocumentCache::persist_catalogs`].
    pub fn with_catalog() -> Self {
        Self::with_catalog_store(CatalogStore::InRoot)
    }

    /// [`DocumentCache::with_catalog`], each catalog kept where `store` says.
    pub fn with_catalog_store(store: CatalogStore) -> Self {
        Self {
            catalogs: Some((store, CatalogRead::PerPart)),
            ..Self::default()
        }
    }

    /// [`DocumentCache::with_catalog_store`] for a process that makes one recall and exits, such
    /// as a hook: each catalog's file is read whole into one buffer with one read, instead of part
    /// by part into buffers of their own on the threads that decode them, and every document of
    /// the catalog shares that buffer for as long as any of them lives. The bytes are the
    /// process's own once read, so another program rewriting or truncating the file meanwhile
    /// can only make the catalog rejected (its files are then read), never change what was
    /// checked.
    pub fn for_one_recall(store: CatalogStore) -> Self {
        Self {
            catalogs: Some((store, CatalogRead::Whole)),
            ..Self::default()
        }
    }

    /// Whether this cache reads and writes persistent catalogs.
    pub fn uses_catalogs(&self) -> bool {
        self.catalogs.is_some()
    }

    /// Builds the term index of every remembered document that has none yet (see
    /// [`PreparedText::build_index`]); returns how many were built. A scan for a query
    /// ([`DocumentCache::scan_recall_for`]) scores the files it reads without one, so a session
    /// that keeps this cache calls this while it waits for its user (writing a catalog builds them
    /// too), and the next query scores those documents through their indexes.
    ///
    /// `stop` is asked before each small batch; once it says so, the rest is left for the next
    /// query to build as it scores. Blocking and CPU-bound; runs on the rayon thread pool.
    pub fn build_indexes(&self, stop: &(dyn Fn() -> bool + Sync)) -> usize {
        /// Small enough that a stop is seen within a fraction of a millisecond.
        const BATCH: usize = 64;
        let documents: Vec<Arc<ScannedDocument>> = lock(&self.scopes)
            .iter()
            .flatten()
            .flat_map(|cache| &cache.entries)
            .filter_map(|(_, entry)| match &entry.verdict {
                Verdict::Document(document) if !document.prepared().has_index() => {
                    Some(Arc::clone(document))
                }
                _ => None,
            })
            .collect();
        crate::par::map_chunks(&documents, BATCH, |batch| {
            if stop() {
                return 0;
            }
            for document in batch {
                document.prepared().build_index();
            }
            batch.len()
        })
        .into_iter()
        .sum()
    }

    /// How many files the cache remembers.
    pub fn len(&self) -> usize {
        lock(&self.scopes)
            .iter()
            .flatten()
            .map(|c| c.entries.len())
            .sum()
    }

    /// Whether the cache remembers no file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Scans both roots with no cap, re-reading only files that changed since the last scan.
    ///
    /// Blocking; call from `spawn_blocking` in async code.
    pub fn scan_recall(&self, roots: &MemoryRoots) -> Result<RecallScan, ScanError> {
        self.scan(roots, &KnownChanges::default(), None)
    }

    /// [`DocumentCache::scan_recall`] for a recall that will rank the documents for `query`: each
    /// document read from its file or loaded from a catalog is scored ahead for it (see
    /// [`PreparedText::score_ahead`]) while its text is still in the CPU's caches, so the ranking
    /// that follows does not fetch every document's text or index from memory again. A document
    /// read from its file is scored by searching its fields and has no index until it is stored
    /// or [`DocumentCache::build_indexes`] runs. The documents and the report are the same as
    /// [`DocumentCache::scan_recall`] gives.
    pub fn scan_recall_for(
        &self,
        roots: &MemoryRoots,
        query: &QueryTokens,
    ) -> Result<RecallScan, ScanError> {
        self.scan(roots, &KnownChanges::default(), Some(query))
    }

    /// [`DocumentCache::scan_recall`] (or, with a `query`,
    /// [`DocumentCache::scan_recall_for`]) for a caller that watches the roots: a root whose
    /// changes are known (see [`RootChanges::Only`]) is scanned without listing the directories
    /// and without a `stat` of the files the changes do not touch. The documents are the ones a
    /// scan without that knowledge would give; the report's work counts
    /// ([`ScanReport::work`]) show what was spared.
    pub fn scan_recall_knowing(
        &self,
        roots: &MemoryRoots,
        changes: &KnownChanges,
        query: Option<&QueryTokens>,
    ) -> Result<RecallScan, ScanError> {
        self.scan(roots, changes, query)
    }

    pub(super) fn mark_dirty(&self, root: &Path) {
        for cache in lock(&self.scopes).iter_mut().flatten() {
            if cache.root == root {
                cache.dirty = true;
            }
        }
    }
}

#[cfg(test)]
mod tests;
