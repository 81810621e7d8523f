//! The session document cache behind the uncapped recall scanner, optionally backed by a
//! persistent catalog per memory root.

mod footprint;
mod persist;
mod reuse;

pub use footprint::CacheFootprint;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

#[cfg(doc)]
use lexical_score::PreparedText;
use lexical_score::QueryTokens;

use crate::catalog::{CatalogRead, CatalogStore};
use crate::document::{ScannedDocument, Scope};
use crate::engine::changes::{ChangedPaths, KnownChanges, RootChanges};
use crate::engine::{
    Directories, MemoryRoots, PriorListings, ScopeListing, Walked, drop_duplicate_links,
    visit_scopes,
};
use crate::entry::{Entries, Verdict};
use crate::key::to_epoch_ns;
use crate::lock;
use crate::report::{CatalogLoad, CatalogOutcome, ScanError, ScanReport, ScanWork};
#[cfg(doc)]
use crate::{catalog_path, key::FileKey};
use reuse::{Check, Recorded, match_to_listing, record, visit};

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

    fn scan(
        &self,
        roots: &MemoryRoots,
        changes: &KnownChanges,
        query: Option<&QueryTokens>,
    ) -> Result<RecallScan, ScanError> {
        let stable_before = to_epoch_ns(SystemTime::now() - RACY_MARGIN);
        let mut scopes = lock(&self.scopes);
        let mut quiet = lock(&self.quiet);
        match quiet.take() {
            Some((quiet_roots, scan))
                if quiet_roots == *roots && nothing_changed(roots, changes) =>
            {
                let served = scan.clone();
                *quiet = Some((quiet_roots, scan));
                return Ok(served);
            }
            _ => {}
        }
        let mut report = ScanReport::default();
        // Roots seen for the first time start from their catalog, loaded while the roots are
        // listed: the listing waits on the file system, the load on the CPU.
        let starting = roots_to_start(&mut scopes, roots);
        let watched = relied_on(&scopes, &starting, changes);
        // Known roots offer the listings of their last walk.
        let mut priors = scopes.each_mut().map(|cache| {
            cache.as_mut().map(|cache| PriorListings {
                directories: std::mem::take(&mut cache.directories),
                stable_before,
                changes: None,
            })
        });
        for (prior, watched) in priors.iter_mut().zip(&watched) {
            if let Some(prior) = prior {
                prior.changes.clone_from(watched);
            }
        }
        let (walked, started) =
            self.list_while_starting(roots, starting, priors, stable_before, query);
        // Reuses in a scope that started from its catalog in this scan came from that catalog.
        let mut from_catalog = [false; 2];
        for (slot, (cache, load)) in started {
            from_catalog[slot] = load
                .as_ref()
                .is_some_and(|load| matches!(load.outcome, CatalogOutcome::Loaded { .. }));
            report.catalogs.extend(load);
            scopes[slot] = Some(cache);
        }

        let mut walked = match walked {
            Ok(walked) => walked,
            Err(error) => {
                // The project root could not be listed: its catalog is left alone (not replaced
                // by an empty one because a root seen first in this scan starts out unwritten).
                if let Some(project) = scopes[slot_of(Scope::Project)].as_mut() {
                    project.dirty = false;
                }
                return Err(error);
            }
        };
        let directories_changed = keep_directories(&mut scopes, &mut walked, &mut report);
        // Remembered entries are moved out and matched to the listing; those left unmatched
        // belong to files that are gone.
        let mut unmatched = [0usize; 2];
        let listings = visit_scopes(
            walked,
            |scope, candidates| {
                let slot = slot_of(scope);
                let previous = scopes[slot]
                    .as_mut()
                    .map(|cache| std::mem::take(&mut cache.entries))
                    .unwrap_or_default();
                let (matched, left) = match_to_listing(previous, candidates);
                unmatched[slot] = left;
                matched
            },
            |scope, candidate, previous, parent| {
                let check = match &watched[slot_of(scope)] {
                    Some(changes) => Check::Watched {
                        changed: changes.touches_file(&candidate.relative),
                    },
                    None => Check::Key,
                };
                let (visited, stated) = visit(scope, &candidate, previous, query, parent, check);
                (record(scope, candidate, visited, stable_before), stated)
            },
        );

        report.warnings = listings.warnings;
        let (documents, next, changed) = gather(listings.scopes, from_catalog, &mut report);
        report
            .skipped
            .sort_by(|a, b| (a.scope, &a.path).cmp(&(b.scope, &b.path)));

        for ((((slot, entries), changed), unmatched), directories_changed) in scopes
            .iter_mut()
            .zip(next)
            .zip(changed)
            .zip(unmatched)
            .zip(directories_changed)
        {
            let Some(cache) = slot else { continue };
            // A root that could not be listed (missing, or a failing user root) keeps nothing and
            // leaves its catalog alone.
            let Some(entries) = entries else {
                cache.dirty = false;
                cache.complete = false;
                cache.entries = Entries::new();
                continue;
            };
            cache.complete = true;
            cache.dirty |=
                self.catalogs.is_some() && (changed || unmatched > 0 || directories_changed);
            cache.entries = entries;
        }
        let scan = RecallScan { documents, report };
        *quiet = quiet_scan(roots, &watched, &scan);
        Ok(scan)
    }

    fn mark_dirty(&self, root: &Path) {
        for cache in lock(&self.scopes).iter_mut().flatten() {
            if cache.root == root {
                cache.dirty = true;
            }
        }
    }
}

/// By slot, the changes this scan relies on: those known for a root this cache scanned
/// completely before (and not restarted by this scan).
fn relied_on(
    scopes: &[Option<RootCache>; 2],
    starting: &[(usize, Scope, PathBuf)],
    changes: &KnownChanges,
) -> [Option<Arc<ChangedPaths>>; 2] {
    let known = [&changes.project, &changes.user].map(|changes| match changes {
        RootChanges::Only(paths) => Some(paths),
        RootChanges::Unknown => None,
    });
    [0, 1].map(|slot| {
        let complete = scopes[slot].as_ref().is_some_and(|cache| cache.complete)
            && !starting.iter().any(|(starting, _, _)| *starting == slot);
        known[slot]
            .filter(|_| complete)
            .map(|paths| Arc::new(paths.clone()))
    })
}

/// What to serve the next scan of `roots` told that nothing changed: `scan`, when it relied on
/// known changes for every root and touched the file system not at all (see
/// [`DocumentCache::quiet`]).
fn quiet_scan(
    roots: &MemoryRoots,
    watched: &[Option<Arc<ChangedPaths>>; 2],
    scan: &RecallScan,
) -> Option<(MemoryRoots, RecallScan)> {
    let all_watched = [&roots.project, &roots.user]
        .iter()
        .zip(watched)
        .all(|(root, watched)| root.is_none() || watched.is_some());
    let untouched = scan.report.work == ScanWork::default()
        && scan.report.reread == 0
        && scan.report.warnings.is_empty();
    (all_watched && untouched).then(|| (roots.clone(), scan.clone()))
}

/// Whether `changes` says no path changed under any root of `roots`.
fn nothing_changed(roots: &MemoryRoots, changes: &KnownChanges) -> bool {
    [
        (&roots.project, &changes.project),
        (&roots.user, &changes.user),
    ]
    .into_iter()
    .all(|(root, changes)| {
        root.is_none() || matches!(changes, RootChanges::Only(paths) if paths.is_empty())
    })
}

/// The roots this scan sees for the first time (or at a new place), with their slot and scope.
/// Slots of roots no longer configured are emptied.
fn roots_to_start(
    scopes: &mut [Option<RootCache>; 2],
    roots: &MemoryRoots,
) -> Vec<(usize, Scope, PathBuf)> {
    let mut starting = Vec::new();
    for (slot, scope, root) in [
        (0, Scope::Project, &roots.project),
        (1, Scope::User, &roots.user),
    ] {
        let Some(root) = root.as_deref().and_then(|r| std::path::absolute(r).ok()) else {
            scopes[slot] = None;
            continue;
        };
        if scopes[slot].as_ref().is_none_or(|cache| cache.root != root) {
            starting.push((slot, scope, root));
        }
    }
    starting
}

/// The documents of a cached scan's visits (in pool order, one per file), the entries each
/// root's cache keeps, and by slot whether they changed; counts what was read and reused.
fn gather(
    scopes: Vec<ScopeListing<(Recorded, bool)>>,
    from_catalog: [bool; 2],
    report: &mut ScanReport,
) -> (Vec<Arc<ScannedDocument>>, [Option<Entries>; 2], [bool; 2]) {
    let mut documents = Vec::new();
    // Each document's file identity and whether a symlink reached it.
    let mut identities = Vec::new();
    let mut next: [Option<Entries>; 2] = [None, None];
    let mut changed = [false; 2];
    for listing in scopes {
        let slot = slot_of(listing.scope);
        report.files_seen += listing.files_seen;
        report.skipped.extend(listing.skipped);
        let mut entries = Entries::with_capacity(listing.entries.len());
        documents.reserve(listing.entries.len());
        for (recorded, stated) in listing.entries {
            changed[slot] |= recorded.changed;
            report.work.files_stated += usize::from(stated);
            if recorded.read {
                report.reread += 1;
            } else {
                report.reused += 1;
                report.from_catalog += usize::from(from_catalog[slot]);
            }
            if let (Some(document), Some((_, entry))) = (recorded.document, &recorded.entry) {
                identities.push((entry.key, recorded.symlink));
                documents.push(document);
            }
            report
                .skipped
                .extend(recorded.skipped.map(|skipped| *skipped));
            entries.extend(recorded.entry);
        }
        next[slot] = Some(entries);
    }
    drop_duplicate_links(
        &mut documents,
        &identities,
        |d| d.document(),
        &mut report.skipped,
    );
    report.parsed = documents.len();
    (documents, next, changed)
}

/// Keeps the directory listings of this walk for the next one; returns, by slot, whether they
/// differ from the remembered ones.
fn keep_directories(
    scopes: &mut [Option<RootCache>; 2],
    walked: &mut Walked,
    report: &mut ScanReport,
) -> [bool; 2] {
    let mut changed = [false; 2];
    for walked in walked.take_directories() {
        let slot = slot_of(walked.scope);
        changed[slot] = walked.changed;
        report.listings_reused += walked.reused;
        report.work.directories_listed += walked.listed;
        report.work.directories_stated += walked.stated;
        report.work.files_stated += walked.keys_taken;
        if let Some(cache) = scopes[slot].as_mut() {
            cache.directories = walked.directories;
        }
    }
    changed
}

fn slot_of(scope: Scope) -> usize {
    match scope {
        Scope::Project => 0,
        Scope::User => 1,
    }
}

#[cfg(test)]
mod tests;
