//! The session document cache behind the uncapped recall scanner, optionally backed by a
//! persistent catalog per memory root.

use std::cmp::Ordering;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

#[cfg(doc)]
use lexical_score::PreparedText;
use lexical_score::QueryTokens;
use rayon::prelude::*;

use crate::catalog;
use crate::document::{Document, ScannedDocument, Scope};
use crate::engine::{
    Candidate, Directories, MemoryRoots, OpenParent, PriorListings, ReadOutcome, ScopeListing,
    Walked, drop_duplicate_links, list_scopes, visit_scopes,
};
use crate::key::{FileKey, to_epoch_ns};
use crate::report::{
    CatalogLoad, CatalogOutcome, CatalogWrite, ScanError, ScanReport, SkipReason, SkippedFile,
};

/// How recent a file's modification may be, relative to the start of the scan that read it, for
/// its cached outcome to be trusted later (the racy-timestamp rule).
///
/// File systems stamp writes with a coarse clock (a kernel tick on Linux, two seconds on FAT), so
/// a file rewritten just after it was read can keep its size, times and inode: its [`FileKey`]
/// would still match content the cache never saw. An outcome read while the file's mtime was
/// within this margin of the scan's start is therefore "unsettled" and read again on every scan
/// until a scan finds the file older than that. Files with mtimes in the future never settle.
pub const RACY_MARGIN: Duration = Duration::from_secs(2);

/// Recall scan result: project documents first, then user documents, each scope sorted by
/// relative path.
#[derive(Debug, Clone)]
pub struct RecallScan {
    /// Every topic document of both scopes, no cap.
    pub documents: Vec<Arc<ScannedDocument>>,
    /// What was seen, skipped, re-read and reused.
    pub report: ScanReport,
}

/// The session document cache + the uncapped recall scanner. Shareable across threads.
///
/// Each scan still lists both roots (that is how new and deleted files are noticed), but a file
/// whose [`FileKey`] is unchanged, and whose outcome is settled (see [`RACY_MARGIN`]), is not
/// opened again: its document, prepared scoring text included, or its skip verdict is reused.
/// Entries for files no longer listed are dropped. Concurrent scans take turns, so the second one
/// benefits from the first one's reads.
///
/// Built with [`DocumentCache::with_catalog`], the first scan of each root starts from the root's
/// persistent catalog (see the `catalog` module) instead of from nothing, and
/// [`DocumentCache::persist_catalogs`] writes back what changed. Results are the same with or
/// without a catalog: every catalog entry is checked against its file exactly like an entry of an
/// earlier scan in the same process.
#[derive(Debug, Default)]
pub struct DocumentCache {
    scopes: Mutex<[Option<RootCache>; 2]>,
    catalogs: bool,
    /// Serialises catalog writes, so they land in the order their snapshots were taken.
    writing: Mutex<()>,
}

/// What the cache knows about one root.
#[derive(Debug)]
struct RootCache {
    /// The root made absolute.
    root: PathBuf,
    /// Keyed by the path below the root, in the order a listing produces (see [`path_order`]),
    /// so a scan matches them to its listing in one merge instead of one look-up per file.
    entries: catalog::Entries,
    /// The listings of the directories the last walk may skip listing next time.
    directories: Directories,
    /// Whether the entries may differ from the root's catalog on disk.
    dirty: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct CacheEntry {
    pub(crate) key: FileKey,
    /// Whether the file was older than [`RACY_MARGIN`] before the scan that read it started.
    pub(crate) settled: bool,
    pub(crate) verdict: Verdict,
}

#[derive(Debug, Clone)]
pub(crate) enum Verdict {
    Document(Arc<ScannedDocument>),
    Skipped(SkipReason),
}

/// A root's cache as a scan starts it, and how its catalog load went (without catalogs, none).
type Started = (RootCache, Option<CatalogLoad>);

/// What happened to one candidate during a cached scan.
enum Visit {
    Reused(CacheEntry),
    Read {
        verdict: Verdict,
        key: Option<FileKey>,
        /// Whether the cache remembered the file (its entry is replaced or dropped).
        remembered: bool,
    },
}

impl DocumentCache {
    /// An empty cache without persistence.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty cache that starts each root from its persistent catalog and can write the catalog
    /// back with [`DocumentCache::persist_catalogs`].
    pub fn with_catalog() -> Self {
        Self {
            catalogs: true,
            ..Self::default()
        }
    }

    /// Whether this cache reads and writes persistent catalogs.
    pub fn uses_catalogs(&self) -> bool {
        self.catalogs
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
        let documents: Vec<Arc<ScannedDocument>> = self
            .lock()
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
        documents
            .par_chunks(BATCH)
            .map(|batch| {
                if stop() {
                    return 0;
                }
                for document in batch {
                    document.prepared().build_index();
                }
                batch.len()
            })
            .sum()
    }

    /// How many files the cache remembers.
    pub fn len(&self) -> usize {
        self.lock().iter().flatten().map(|c| c.entries.len()).sum()
    }

    /// Whether the cache remembers no file.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Scans both roots with no cap, re-reading only files that changed since the last scan.
    ///
    /// Blocking; call from `spawn_blocking` in async code.
    pub fn scan_recall(&self, roots: &MemoryRoots) -> Result<RecallScan, ScanError> {
        self.scan(roots, None)
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
        self.scan(roots, Some(query))
    }

    fn scan(
        &self,
        roots: &MemoryRoots,
        query: Option<&QueryTokens>,
    ) -> Result<RecallScan, ScanError> {
        let settle_before = to_epoch_ns(SystemTime::now() - RACY_MARGIN);
        let mut scopes = self.lock();
        let mut report = ScanReport::default();
        // Roots seen for the first time start from their catalog, loaded while the roots are
        // listed: the listing waits on the file system, the load on the CPU.
        let starting = roots_to_start(&mut scopes, roots);
        // Known roots offer the listings of their last walk.
        let priors = scopes.each_mut().map(|cache| {
            cache.as_mut().map(|cache| PriorListings {
                directories: std::mem::take(&mut cache.directories),
                settle_before,
            })
        });
        let (walked, started) =
            self.list_while_starting(roots, starting, priors, settle_before, query);
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
                let visited = visit(scope, &candidate, previous, query, parent);
                settle(scope, candidate, visited, settle_before)
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
                cache.entries = catalog::Entries::new();
                continue;
            };
            cache.dirty |= self.catalogs && (changed || unmatched > 0 || directories_changed);
            cache.entries = entries;
        }
        Ok(RecallScan { documents, report })
    }

    /// Lists the roots while the roots in `starting` are started (from their catalogs). On the
    /// listing side, a starting root's catalog first offers its directory listings to the walk;
    /// on the other, its entries are read and decoded. The two parts are checked independently.
    fn list_while_starting(
        &self,
        roots: &MemoryRoots,
        starting: Vec<(usize, Scope, PathBuf)>,
        mut priors: [Option<PriorListings>; 2],
        settle_before: i64,
        query: Option<&QueryTokens>,
    ) -> (Result<Walked, ScanError>, Vec<(usize, Started)>) {
        let opened: Vec<_> = starting
            .into_iter()
            .map(|(slot, scope, root)| {
                let catalog = if self.catalogs {
                    catalog::open(&root)
                } else {
                    Ok(None)
                };
                (slot, scope, root, catalog)
            })
            .collect();
        // While a catalog is decoded, the other core takes the keys of its root's listed files,
        // which the visit would otherwise take after the decoding. (The files of a root without
        // a catalog are all read, and reading needs no key taken before.)
        let keys_early: Vec<Scope> = opened
            .iter()
            .filter(|(_, _, _, catalog)| matches!(catalog, Ok(Some(_))))
            .map(|(_, scope, _, _)| *scope)
            .collect();
        rayon::join(
            || {
                for (slot, _, _, catalog) in &opened {
                    let directories = match catalog {
                        Ok(Some(opened)) => opened.directories().unwrap_or_else(|rejection| {
                            tracing::debug!(%rejection, "catalog directory listings ignored");
                            Directories::new()
                        }),
                        _ => Directories::new(),
                    };
                    priors[*slot] = Some(PriorListings {
                        directories,
                        settle_before,
                    });
                }
                list_scopes(roots, priors).map(|mut walked| {
                    walked.take_keys(|scope| keys_early.contains(&scope));
                    walked
                })
            },
            || {
                opened
                    .iter()
                    .map(|(slot, scope, root, catalog)| {
                        let started = self.start_root(root.clone(), *scope, catalog, query);
                        (*slot, started)
                    })
                    .collect::<Vec<_>>()
            },
        )
    }

    /// Writes the catalog of every root whose entries changed since its catalog was read or
    /// written. Does nothing for a cache built without catalogs.
    ///
    /// Blocking, and meant to run off the recall's critical path (after the fast result is
    /// published). A root whose state directory cannot be written (a read-only tree) is reported
    /// and tried again after the next scan; recall is unaffected.
    pub fn persist_catalogs(&self) -> Vec<CatalogWrite> {
        self.persist_catalogs_with(&mut |root, entries, directories| {
            catalog::save(root, entries, directories)
        })
    }

    /// [`DocumentCache::persist_catalogs`], each catalog written by `save`.
    pub(crate) fn persist_catalogs_with(
        &self,
        save: &mut catalog::SaveFn<'_>,
    ) -> Vec<CatalogWrite> {
        if !self.catalogs {
            return Vec::new();
        }
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        let (project_root, snapshots): (Option<PathBuf>, Vec<(Scope, PathBuf, _)>) = {
            let mut scopes = self.lock();
            // The project root counts whether or not its cache changed: a user scope naming the
            // same root must not write over the project's catalog when only the user scope is dirty.
            let project_root = scopes[0].as_ref().map(|cache| cache.root.clone());
            let snapshots = [Scope::Project, Scope::User]
                .into_iter()
                .zip(scopes.iter_mut())
                .filter_map(|(scope, slot)| {
                    let cache = slot.as_mut().filter(|cache| cache.dirty)?;
                    cache.dirty = false;
                    let snapshot = (cache.entries.clone(), cache.directories.clone());
                    Some((scope, cache.root.clone(), snapshot))
                })
                .collect();
            (project_root, snapshots)
        };
        let same_root = |a: &Path, b: &Path| {
            fs::canonicalize(a)
                .ok()
                .is_some_and(|a| fs::canonicalize(b).ok() == Some(a))
        };
        snapshots
            .into_iter()
            // The same root given for both scopes has one catalog, the project scope's: the user
            // scope recalls none of its files (see the engine's overlap rule).
            .filter(|(scope, root, _)| {
                *scope == Scope::Project
                    || !project_root
                        .as_deref()
                        .is_some_and(|project| same_root(project, root))
            })
            .map(|(scope, root, (entries, directories))| {
                let outcome = match save(&root, &entries, &directories) {
                    Ok(written) => Ok(written),
                    Err(error) => {
                        self.mark_dirty(&root);
                        Err(error.to_string())
                    }
                };
                CatalogWrite {
                    scope,
                    path: catalog::catalog_path(&root),
                    outcome,
                }
            })
            .collect()
    }

    /// A root's cache as this scan starts it: from its catalog's entries when `catalog` (already
    /// opened, `None` without catalogs or when there is none) decodes.
    fn start_root(
        &self,
        root: PathBuf,
        scope: Scope,
        catalog: &Result<Option<catalog::Opened>, catalog::Rejection>,
        query: Option<&QueryTokens>,
    ) -> Started {
        let mut cache = RootCache {
            root,
            entries: catalog::Entries::new(),
            directories: Directories::new(),
            dirty: self.catalogs,
        };
        if !self.catalogs {
            return (cache, None);
        }
        let loaded = match catalog {
            Ok(Some(opened)) => opened
                .entries(&cache.root, scope, query)
                .map(Some)
                .map_err(|rejection| rejection.to_string()),
            Ok(None) => Ok(None),
            Err(rejection) => Err(rejection.to_string()),
        };
        let outcome = match loaded {
            Ok(Some(mut entries)) => {
                let loaded = entries.len();
                // Written in listing order; sorted here should another writer have used another.
                if !entries.is_sorted_by(|a, b| path_order(a, b).is_le()) {
                    entries.sort_by(path_order);
                }
                cache.entries = entries;
                cache.dirty = false;
                CatalogOutcome::Loaded { entries: loaded }
            }
            Ok(None) => CatalogOutcome::Missing,
            Err(reason) => {
                tracing::debug!(root = %cache.root.display(), %reason, "catalog ignored");
                CatalogOutcome::Rejected { reason }
            }
        };
        let load = CatalogLoad {
            scope,
            path: catalog::catalog_path(&cache.root),
            outcome,
        };
        (cache, Some(load))
    }

    fn mark_dirty(&self, root: &Path) {
        for cache in self.lock().iter_mut().flatten() {
            if cache.root == root {
                cache.dirty = true;
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, [Option<RootCache>; 2]> {
        // A panic elsewhere cannot leave a map inconsistent: maps are replaced whole after a scan.
        self.scopes.lock().unwrap_or_else(PoisonError::into_inner)
    }
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
    scopes: Vec<ScopeListing<Settled>>,
    from_catalog: [bool; 2],
    report: &mut ScanReport,
) -> (
    Vec<Arc<ScannedDocument>>,
    [Option<catalog::Entries>; 2],
    [bool; 2],
) {
    let mut documents = Vec::new();
    // Each document's file identity and whether a symlink reached it.
    let mut identities = Vec::new();
    let mut next: [Option<catalog::Entries>; 2] = [None, None];
    let mut changed = [false; 2];
    for listing in scopes {
        let slot = slot_of(listing.scope);
        report.files_seen += listing.files_seen;
        report.skipped.extend(listing.skipped);
        let mut entries = catalog::Entries::with_capacity(listing.entries.len());
        documents.reserve(listing.entries.len());
        for settled in listing.entries {
            changed[slot] |= settled.changed;
            if settled.read {
                report.reread += 1;
            } else {
                report.reused += 1;
                report.from_catalog += usize::from(from_catalog[slot]);
            }
            if let (Some(document), Some((_, entry))) = (settled.document, &settled.entry) {
                identities.push((entry.key, settled.symlink));
                documents.push(document);
            }
            report
                .skipped
                .extend(settled.skipped.map(|skipped| *skipped));
            entries.extend(settled.entry);
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

/// What one listed file leaves after its visit. Worked out on the visit's thread, so the scan's
/// serial tail only counts and moves.
struct Settled {
    /// The entry to remember under the file's path below the root; none for a file not even
    /// opened (gone, unreadable, a symlink where a file was listed): with no key there is nothing
    /// to remember.
    entry: Option<(OsString, CacheEntry)>,
    /// The document found, shared with `entry`.
    document: Option<Arc<ScannedDocument>>,
    /// Why the file is not a document (rare, so kept out of line).
    skipped: Option<Box<SkippedFile>>,
    /// Whether the file was read, not reused.
    read: bool,
    /// Whether the candidate is a symlink to a file (see [`drop_duplicate_links`]).
    symlink: bool,
    /// Whether what the cache remembers changed: a read that leaves no entry where there was
    /// none (a file that cannot be read, again) changes nothing a catalog holds.
    changed: bool,
}

fn settle(scope: Scope, candidate: Candidate, visited: Visit, settle_before: i64) -> Settled {
    let (read, remembered) = match visited {
        Visit::Reused(_) => (false, true),
        Visit::Read { remembered, .. } => (true, remembered),
    };
    let entry = match visited {
        Visit::Reused(entry) => Ok(entry),
        // A read that failed is tried again at the next scan, unchanged file or not.
        Visit::Read {
            verdict: Verdict::Skipped(reason),
            ..
        } if reason.is_transient() => Err(Verdict::Skipped(reason)),
        Visit::Read {
            verdict,
            key: Some(key),
            ..
        } => Ok(CacheEntry {
            key,
            settled: key.mtime_ns < settle_before,
            verdict,
        }),
        Visit::Read {
            verdict, key: None, ..
        } => Err(verdict),
    };
    let changed = read && (entry.is_ok() || remembered);
    let (document, reason) = match &entry {
        Ok(CacheEntry {
            verdict: Verdict::Document(document),
            ..
        }) => (Some(Arc::clone(document)), None),
        Ok(CacheEntry {
            verdict: Verdict::Skipped(reason),
            ..
        })
        | Err(Verdict::Skipped(reason)) => (None, Some(reason.clone())),
        Err(Verdict::Document(_)) => (None, None),
    };
    let symlink = candidate.symlink;
    Settled {
        skipped: reason.map(|reason| {
            Box::new(SkippedFile {
                scope,
                path: candidate.path,
                reason,
            })
        }),
        entry: entry
            .ok()
            .map(|entry| (candidate.relative.into_os_string(), entry)),
        document,
        read,
        symlink,
        changed,
    }
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

/// The order of relative paths in a listing: component by component, as `Path` compares.
fn path_order(a: &(OsString, CacheEntry), b: &(OsString, CacheEntry)) -> Ordering {
    listing_order(Path::new(&a.0), Path::new(&b.0))
}

/// Component-by-component order of two plain relative paths (no empty, `.` or `..` component;
/// the walk builds no other, and the catalog accepts no other), as `Path` compares them. On Unix
/// that is byte order with the separator ranked below every other byte, which is compared here
/// without splitting either path into components.
pub(crate) fn listing_order(a: &Path, b: &Path) -> Ordering {
    #[cfg(unix)]
    {
        let (a, b) = (
            a.as_os_str().as_encoded_bytes(),
            b.as_os_str().as_encoded_bytes(),
        );
        let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let rank = |byte: &u8| {
            if *byte == b'/' {
                0
            } else {
                u16::from(*byte) + 1
            }
        };
        match (a.get(common), b.get(common)) {
            (Some(x), Some(y)) => rank(x).cmp(&rank(y)),
            (x, y) => x.is_some().cmp(&y.is_some()),
        }
    }
    #[cfg(not(unix))]
    {
        a.cmp(b)
    }
}

/// Pairs each candidate with the remembered entry for its path, if any, by merging two lists in
/// the same order; also returns how many entries matched no candidate. Of entries with the same
/// path (only a damaged catalog holds them), the first is used.
fn match_to_listing(
    previous: catalog::Entries,
    candidates: &[Candidate],
) -> (Vec<Option<CacheEntry>>, usize) {
    let mut previous = previous.into_iter().peekable();
    let mut unmatched = 0;
    let matched = candidates
        .iter()
        .map(|candidate| {
            while let Some((path, _)) = previous.peek() {
                // Nearly every remembered path is the candidate's own: one comparison of bytes
                // settles that before the component order is worked out.
                let order = if path.as_os_str() == candidate.relative.as_os_str() {
                    Ordering::Equal
                } else {
                    listing_order(Path::new(path), &candidate.relative)
                };
                match order {
                    Ordering::Less => {
                        previous.next();
                        unmatched += 1;
                    }
                    Ordering::Equal => return previous.next().map(|(_, entry)| entry),
                    Ordering::Greater => return None,
                }
            }
            None
        })
        .collect();
    (matched, unmatched + previous.count())
}

fn visit(
    scope: Scope,
    candidate: &Candidate,
    previous: Option<CacheEntry>,
    query: Option<&QueryTokens>,
    parent: &mut OpenParent,
) -> Visit {
    let remembered = previous.is_some();
    if let Some(entry) = previous
        && entry.settled
        && candidate.current_key(parent) == Some(entry.key)
    {
        return Visit::Reused(entry);
    }
    match candidate.read(parent) {
        ReadOutcome::Parsed { topic, mtime, key } => {
            let document = Document::from_scan(
                scope,
                candidate.path.clone(),
                candidate.relative.clone(),
                topic,
                mtime,
            );
            let scanned = ScannedDocument::new(document);
            if let Some(query) = query {
                scanned.prepared().score_ahead(query);
            }
            let scanned = Arc::new(scanned);
            Visit::Read {
                verdict: Verdict::Document(scanned),
                key: Some(key),
                remembered,
            }
        }
        ReadOutcome::Skipped { reason, key } => Visit::Read {
            verdict: Verdict::Skipped(reason),
            key,
            remembered,
        },
    }
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::engine::EarlyKey;
    use crate::topic::parse_topic;

    fn candidate(name: &str) -> Candidate {
        Candidate {
            relative: PathBuf::from(name),
            path: PathBuf::from("/root").join(name),
            symlink: false,
            early_key: EarlyKey::NotTaken,
        }
    }

    fn unreadable() -> SkipReason {
        SkipReason::Unreadable {
            error: "Input/output error (os error 5)".to_owned(),
        }
    }

    fn scanned_tree() -> (tempfile::TempDir, DocumentCache, RecallScan) {
        let dir = tempfile::tempdir().unwrap();
        for (name, kind) in [("a.md", "user"), ("b.md", "project")] {
            let text = format!("---\nname: {name}\ntype: {kind}\n---\n\nrollback steps\n");
            fs::write(dir.path().join(name), text).unwrap();
        }
        fs::write(dir.path().join("notes.md"), "no frontmatter\n").unwrap();
        let roots = MemoryRoots {
            project: Some(dir.path().to_path_buf()),
            user: None,
        };
        let cache = DocumentCache::new();
        let scan = cache
            .scan_recall_for(&roots, &QueryTokens::new("rollback"))
            .unwrap();
        assert_eq!(scan.documents.len(), 2);
        (dir, cache, scan)
    }

    #[test]
    fn documents_a_scan_for_a_query_read_get_their_index_from_build_indexes_once() {
        let (_dir, cache, scan) = scanned_tree();
        assert!(scan.documents.iter().all(|d| !d.prepared().has_index()));

        assert_eq!(cache.build_indexes(&|| false), 2);
        assert!(scan.documents.iter().all(|d| d.prepared().has_index()));
        assert_eq!(cache.build_indexes(&|| false), 0);
    }

    #[test]
    fn building_indexes_stops_when_asked_to() {
        let (_dir, cache, scan) = scanned_tree();
        assert_eq!(cache.build_indexes(&|| true), 0);
        assert!(scan.documents.iter().all(|d| !d.prepared().has_index()));
    }

    #[test]
    fn a_failed_read_is_not_remembered_so_the_next_scan_tries_again() {
        let key = FileKey {
            device: 1,
            inode: 2,
            size: 3,
            mtime_ns: 0,
            ctime_ns: 0,
        };
        let unreadable = unreadable();

        let failed = settle(
            Scope::Project,
            candidate("a.md"),
            Visit::Read {
                verdict: Verdict::Skipped(unreadable.clone()),
                key: Some(key),
                remembered: false,
            },
            i64::MAX,
        );
        let refused = settle(
            Scope::Project,
            candidate("b.md"),
            Visit::Read {
                verdict: Verdict::Skipped(SkipReason::NoFrontmatter),
                key: Some(key),
                remembered: false,
            },
            i64::MAX,
        );

        assert!(failed.entry.is_none());
        assert_eq!(failed.skipped.map(|s| s.reason), Some(unreadable));
        assert!(refused.entry.is_some_and(|(_, entry)| entry.settled));
    }

    #[test]
    fn a_failed_read_changes_what_the_cache_holds_only_when_it_remembered_the_file() {
        for remembered in [false, true] {
            let settled = settle(
                Scope::Project,
                candidate("a.md"),
                Visit::Read {
                    verdict: Verdict::Skipped(unreadable()),
                    key: None,
                    remembered,
                },
                i64::MAX,
            );
            assert!(settled.read && settled.entry.is_none());
            assert_eq!(settled.changed, remembered, "remembered: {remembered}");
        }
    }

    #[test]
    fn a_file_that_vanished_changes_what_the_cache_holds_only_when_it_was_remembered() {
        let dir = tempfile::tempdir().unwrap();
        for remembered in [None, Some(skipped_entry(7))] {
            let gone = Candidate {
                path: dir.path().join("gone.md"),
                ..candidate("gone.md")
            };
            let was_remembered = remembered.is_some();
            let visited = visit(
                Scope::Project,
                &gone,
                remembered,
                None,
                &mut OpenParent::new(std::sync::Arc::new(
                    crate::access::RootDir::open(dir.path().into(), dir.path().into()).unwrap(),
                )),
            );
            let settled = settle(Scope::Project, gone, visited, i64::MAX);
            assert!(settled.read && settled.entry.is_none());
            assert_eq!(settled.changed, was_remembered);
        }
    }

    /// A root holding `a.md` titled "Current" and a catalog whose entry for it carries the file's
    /// exact key but a stale document titled "Stale": the same-tick rewrite the key cannot see.
    fn root_with_stale_catalog_entry(settled: bool) -> (tempfile::TempDir, MemoryRoots) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.md");
        fs::write(&path, "---\nname: Current\ntype: user\n---\n").unwrap();
        let key = FileKey::from_metadata(&fs::metadata(&path).unwrap());
        let stale = parse_topic("---\nname: Stale\ntype: user\n---\n").unwrap();
        let document = Document::from_scan(
            Scope::Project,
            path,
            PathBuf::from("a.md"),
            stale,
            SystemTime::UNIX_EPOCH,
        );
        let entry = CacheEntry {
            key,
            settled,
            verdict: Verdict::Document(Arc::new(ScannedDocument::new(document))),
        };
        catalog::save(
            dir.path(),
            &[(OsString::from("a.md"), entry)],
            &Directories::new(),
        )
        .unwrap();
        let roots = MemoryRoots {
            project: Some(dir.path().to_path_buf()),
            user: None,
        };
        (dir, roots)
    }

    #[test]
    fn transient_skip_verdicts_are_left_out_of_the_catalog_and_the_rest_loads() {
        let (dir, _roots) = root_with_stale_catalog_entry(true);
        let transient = CacheEntry {
            key: FileKey {
                device: 1,
                inode: 2,
                size: 3,
                mtime_ns: 4,
                ctime_ns: 5,
            },
            settled: true,
            verdict: Verdict::Skipped(SkipReason::Unreadable {
                error: "input/output error".into(),
            }),
        };
        let (mut entries, directories) =
            catalog::load(dir.path(), Scope::Project).unwrap().unwrap();
        entries.push((OsString::from("flaky.md"), transient));

        let written = catalog::save(dir.path(), &entries, &directories).unwrap();
        let (loaded, _) = catalog::load(dir.path(), Scope::Project).unwrap().unwrap();

        assert_eq!(written, 1);
        assert_eq!(loaded.len(), 1);
        assert_eq!(loaded[0].0, OsString::from("a.md"));
    }

    /// Dates the paths in `settled` and `root` itself an hour back, writes the root's catalog, and
    /// returns the roots with what the catalog holds.
    fn catalog_of_settled(
        root: &Path,
        settled: &[PathBuf],
    ) -> (MemoryRoots, catalog::Entries, Directories) {
        let hour_ago = SystemTime::now() - Duration::from_hours(1);
        for path in settled.iter().map(PathBuf::as_path).chain([root]) {
            fs::File::open(path)
                .unwrap()
                .set_modified(hour_ago)
                .unwrap();
        }
        let roots = MemoryRoots {
            project: Some(root.to_path_buf()),
            user: None,
        };
        let writer = DocumentCache::with_catalog();
        writer.scan_recall(&roots).unwrap();
        writer.persist_catalogs();
        let (entries, directories) = catalog::load(root, Scope::Project).unwrap().unwrap();
        (roots, entries, directories)
    }

    #[test]
    fn catalog_listings_naming_a_path_instead_of_a_name_are_ignored() {
        use crate::engine::EntryKind;
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join(".memrecall")).unwrap();
        fs::create_dir(dir.path().join("a")).unwrap();
        fs::write(dir.path().join("a/x.md"), "---\ntype: user\n---\n").unwrap();
        let (roots, entries, mut directories) = catalog_of_settled(
            dir.path(),
            &[dir.path().join("a/x.md"), dir.path().join("a")],
        );
        let root_listing = directories
            .get_mut(Path::new(""))
            .expect("root listing kept");
        // `a/` would walk `a` a second time.
        root_listing
            .entries
            .push((OsString::from("a/"), EntryKind::Directory));
        catalog::save(dir.path(), &entries, &directories).unwrap();

        let cache = DocumentCache::with_catalog();
        let scan = cache.scan_recall(&roots).unwrap();

        assert_eq!(scan.report.listings_reused, 0);
        assert_eq!(scan.documents.len(), 1);
        // The listings the walk made replace them in the next catalog.
        cache.persist_catalogs();
        let (_, directories) = catalog::load(dir.path(), Scope::Project).unwrap().unwrap();
        assert_eq!(directories[Path::new("")].entries.len(), 1);
    }

    /// A listing that calls a symlink a file (a catalog no walk wrote) must not lead the scan to
    /// read through it: here to a topic outside the root.
    #[cfg(unix)]
    #[test]
    fn symlink_a_stored_listing_calls_a_file_is_not_read_through() {
        use crate::engine::EntryKind;
        let outside = tempfile::tempdir().unwrap();
        fs::write(
            outside.path().join("secret.md"),
            "---\ntype: user\n---\nThe vault code is 4711.\n",
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join(".memrecall")).unwrap();
        fs::write(dir.path().join("a.md"), "---\ntype: user\n---\nInside.\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.md"), dir.path().join("link.md"))
            .unwrap();
        // A directory holding a topic symlink is never remembered; forge its listing.
        let (roots, entries, mut directories) =
            catalog_of_settled(dir.path(), &[dir.path().join("a.md")]);
        let key = FileKey::from_metadata(&fs::metadata(dir.path()).unwrap());
        let forged = crate::engine::DirectoryListing {
            key,
            settled: true,
            entries: vec![
                (OsString::from("a.md"), EntryKind::File),
                (OsString::from("link.md"), EntryKind::File),
            ],
        };
        directories.insert(PathBuf::new(), forged);
        catalog::save(dir.path(), &entries, &directories).unwrap();

        let scan = DocumentCache::with_catalog().scan_recall(&roots).unwrap();

        assert_eq!(scan.report.listings_reused, 1);
        assert!(scan.documents.iter().all(|d| !d.body().contains("4711")));
        let link = scan
            .report
            .skipped
            .iter()
            .find(|s| s.path.ends_with("link.md"))
            .expect("the symlink is reported");
        assert_eq!(link.reason, SkipReason::NotAFile);
    }

    fn skipped_entry(inode: u64) -> CacheEntry {
        CacheEntry {
            key: FileKey {
                device: 1,
                inode,
                size: 0,
                mtime_ns: 0,
                ctime_ns: 0,
            },
            settled: true,
            verdict: Verdict::Skipped(SkipReason::NoFrontmatter),
        }
    }

    #[test]
    fn remembered_entries_are_matched_to_the_listing_component_by_component() {
        // Component order puts `a/b.md` before `a-b.md` (byte order would not).
        let listed = ["a/b.md", "a-b.md", "c.md"];
        let candidates: Vec<Candidate> = listed
            .iter()
            .map(|relative| Candidate {
                relative: PathBuf::from(relative),
                path: PathBuf::from("/root").join(relative),
                symlink: false,
                early_key: EarlyKey::NotTaken,
            })
            .collect();
        let previous: catalog::Entries = ["a/b.md", "a/gone.md", "a-b.md", "zz.md"]
            .iter()
            .zip(1..)
            .map(|(path, inode)| (OsString::from(path), skipped_entry(inode)))
            .collect();

        let (matched, unmatched) = match_to_listing(previous, &candidates);

        let inodes: Vec<Option<u64>> = matched
            .iter()
            .map(|e| e.as_ref().map(|e| e.key.inode))
            .collect();
        assert_eq!(inodes, vec![Some(1), Some(3), None]);
        assert_eq!(unmatched, 2);
    }

    #[test]
    fn a_catalog_written_in_byte_order_is_reused_in_full() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("a")).unwrap();
        let mut entries = Vec::new();
        for relative in ["a/b.md", "a-b.md"] {
            let path = dir.path().join(relative);
            fs::write(&path, "---\ntype: user\n---\n").unwrap();
            let file = fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(SystemTime::now() - Duration::from_hours(1))
                .unwrap();
            let key = FileKey::from_metadata(&fs::metadata(&path).unwrap());
            let topic = parse_topic("---\ntype: user\n---\n").unwrap();
            let document = Document::from_scan(
                Scope::Project,
                path,
                PathBuf::from(relative),
                topic,
                SystemTime::UNIX_EPOCH,
            );
            let verdict = Verdict::Document(Arc::new(ScannedDocument::new(document)));
            entries.push((
                OsString::from(relative),
                CacheEntry {
                    key,
                    settled: true,
                    verdict,
                },
            ));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(entries[0].0, OsString::from("a-b.md"));
        catalog::save(dir.path(), &entries, &Directories::new()).unwrap();
        let roots = MemoryRoots {
            project: Some(dir.path().to_path_buf()),
            user: None,
        };

        let scan = DocumentCache::with_catalog().scan_recall(&roots).unwrap();

        assert_eq!((scan.report.from_catalog, scan.report.reread), (2, 0));
    }

    #[test]
    fn unsettled_catalog_entry_is_read_again_even_when_its_key_matches() {
        let (_dir, roots) = root_with_stale_catalog_entry(false);

        let scan = DocumentCache::with_catalog().scan_recall(&roots).unwrap();

        assert_eq!(scan.documents[0].title(), "Current");
        assert_eq!((scan.report.reread, scan.report.from_catalog), (1, 0));
    }

    #[test]
    fn settled_catalog_entry_is_trusted_on_its_key_alone() {
        let (_dir, roots) = root_with_stale_catalog_entry(true);

        let scan = DocumentCache::with_catalog().scan_recall(&roots).unwrap();

        assert_eq!(scan.documents[0].title(), "Stale");
        assert_eq!((scan.report.reread, scan.report.from_catalog), (0, 1));
    }

    proptest::proptest! {
        /// Names drawn from bytes around the separator (`-` and `.` sort below `/`, `0` above).
        #[test]
        fn listing_order_is_the_component_order_of_paths(
            a in proptest::collection::vec("[-.0a]{1,3}", 1..4),
            b in proptest::collection::vec("[-.0a]{1,3}", 1..4),
        ) {
            let plain = |names: &[String]| names.iter().all(|n| n != "." && n != "..");
            proptest::prop_assume!(plain(&a) && plain(&b));
            let (a, b) = (PathBuf::from(a.join("/")), PathBuf::from(b.join("/")));
            proptest::prop_assert_eq!(listing_order(&a, &b), a.cmp(&b));
        }
    }
}
