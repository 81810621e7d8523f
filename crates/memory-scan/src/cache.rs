//! The session document cache behind the uncapped recall scanner, optionally backed by a
//! persistent catalog per memory root.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use crate::catalog;
use crate::document::{Document, ScannedDocument, Scope};
use crate::engine::{
    Candidate, EarlyKey, MemoryRoots, ReadOutcome, list_scopes, read_topic_file, visit_scopes,
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

type EntryMap = HashMap<OsString, CacheEntry, foldhash::fast::FixedState>;

/// What the cache knows about one root.
#[derive(Debug)]
struct RootCache {
    /// The root made absolute.
    root: PathBuf,
    /// Keyed by the path below the root (its bytes: hashing a `Path` walks its components).
    entries: EntryMap,
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

/// What happened to one candidate during a cached scan.
enum Visit {
    Reused(CacheEntry),
    Read(Verdict, Option<FileKey>),
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
        let settle_before = to_epoch_ns(SystemTime::now() - RACY_MARGIN);
        let mut scopes = self.lock();
        let mut report = ScanReport::default();
        // Roots seen for the first time start from their catalog, loaded while the roots are
        // listed: the listing waits on the file system, the load on the CPU.
        let starting = roots_to_start(&mut scopes, roots);
        // While a catalog is decoded, the other core takes the keys of the listed files, which
        // the visit would otherwise take after the decoding.
        let keys_early = starting
            .iter()
            .any(|(_, _, root)| self.catalogs && catalog::catalog_path(root).is_file());
        let (walked, started) = rayon::join(
            || {
                list_scopes(roots).map(|mut walked| {
                    if keys_early {
                        walked.take_keys();
                    }
                    walked
                })
            },
            || {
                starting
                    .into_iter()
                    .map(|(slot, scope, root)| (slot, self.start_root(root, scope)))
                    .collect::<Vec<_>>()
            },
        );
        // Reuses in a scope that started from its catalog in this scan came from that catalog.
        let mut from_catalog = [false; 2];
        for (slot, (cache, load)) in started {
            from_catalog[slot] = load
                .as_ref()
                .is_some_and(|load| matches!(load.outcome, CatalogOutcome::Loaded { .. }));
            report.catalogs.extend(load);
            scopes[slot] = Some(cache);
        }

        let previous = &*scopes;
        let listings = visit_scopes(walked?, |scope, candidate| {
            visit(previous[slot_of(scope)].as_ref(), scope, candidate)
        });

        report.warnings = listings.warnings;
        let mut documents = Vec::new();
        let mut next: [Option<EntryMap>; 2] = [None, None];
        let mut changed = [false; 2];
        for listing in listings.scopes {
            let slot = slot_of(listing.scope);
            report.files_seen += listing.files_seen;
            report.skipped.extend(listing.skipped);
            let mut entries = EntryMap::with_capacity_and_hasher(
                listing.entries.len(),
                foldhash::fast::FixedState::default(),
            );
            for (candidate, visited) in listing.entries {
                let entry = match visited {
                    Visit::Reused(entry) => {
                        report.reused += 1;
                        if from_catalog[slot] {
                            report.from_catalog += 1;
                        }
                        Some(entry)
                    }
                    Visit::Read(verdict, key) => {
                        report.reread += 1;
                        changed[slot] = true;
                        key.map(|key| CacheEntry {
                            key,
                            settled: key.mtime_ns < settle_before,
                            verdict,
                        })
                    }
                };
                let Some(entry) = entry else { continue };
                match &entry.verdict {
                    Verdict::Document(document) => {
                        report.parsed += 1;
                        documents.push(Arc::clone(document));
                    }
                    Verdict::Skipped(reason) => report.skipped.push(SkippedFile {
                        scope: listing.scope,
                        path: candidate.path.clone(),
                        reason: reason.clone(),
                    }),
                }
                entries.insert(candidate.relative.into_os_string(), entry);
            }
            next[slot] = Some(entries);
        }
        report
            .skipped
            .sort_by(|a, b| (a.scope, &a.path).cmp(&(b.scope, &b.path)));

        for ((slot, entries), changed) in scopes.iter_mut().zip(next).zip(changed) {
            let Some(cache) = slot else { continue };
            // A root that could not be listed (missing, or a failing user root) keeps nothing and
            // leaves its catalog alone.
            let entries = entries.unwrap_or_default();
            let dropped = entries.len() != cache.entries.len();
            cache.dirty |= self.catalogs && (changed || dropped);
            cache.entries = entries;
        }
        Ok(RecallScan { documents, report })
    }

    /// Writes the catalog of every root whose entries changed since its catalog was read or
    /// written. Does nothing for a cache built without catalogs.
    ///
    /// Blocking, and meant to run off the recall's critical path (after the fast result is
    /// published). A root whose state directory cannot be written (a read-only tree) is reported
    /// and tried again after the next scan; recall is unaffected.
    pub fn persist_catalogs(&self) -> Vec<CatalogWrite> {
        if !self.catalogs {
            return Vec::new();
        }
        let _writing = self.writing.lock().unwrap_or_else(PoisonError::into_inner);
        let snapshots: Vec<(Scope, PathBuf, catalog::Entries)> = {
            let mut scopes = self.lock();
            [Scope::Project, Scope::User]
                .into_iter()
                .zip(scopes.iter_mut())
                .filter_map(|(scope, slot)| {
                    let cache = slot.as_mut().filter(|cache| cache.dirty)?;
                    cache.dirty = false;
                    let mut entries: catalog::Entries = cache
                        .entries
                        .iter()
                        .map(|(path, entry)| (path.clone(), entry.clone()))
                        .collect();
                    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                    Some((scope, cache.root.clone(), entries))
                })
                .collect()
        };
        snapshots
            .into_iter()
            .map(|(scope, root, entries)| {
                let outcome = match catalog::save(&root, &entries) {
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

    fn start_root(&self, root: PathBuf, scope: Scope) -> (RootCache, Option<CatalogLoad>) {
        let mut cache = RootCache {
            root,
            entries: EntryMap::default(),
            dirty: self.catalogs,
        };
        if !self.catalogs {
            return (cache, None);
        }
        let outcome = match catalog::load(&cache.root, scope) {
            Ok(Some(entries)) => {
                let loaded = entries.len();
                cache.entries.reserve(loaded);
                cache.entries.extend(entries);
                cache.dirty = false;
                CatalogOutcome::Loaded { entries: loaded }
            }
            Ok(None) => CatalogOutcome::Missing,
            Err(rejection) => {
                tracing::debug!(root = %cache.root.display(), %rejection, "catalog ignored");
                CatalogOutcome::Rejected {
                    reason: rejection.to_string(),
                }
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

fn slot_of(scope: Scope) -> usize {
    match scope {
        Scope::Project => 0,
        Scope::User => 1,
    }
}

fn visit(previous: Option<&RootCache>, scope: Scope, candidate: &Candidate) -> Visit {
    if let Some(entry) =
        previous.and_then(|cache| cache.entries.get(candidate.relative.as_os_str()))
        && entry.settled
        && current_key(candidate) == Some(entry.key)
    {
        return Visit::Reused(entry.clone());
    }
    match read_topic_file(&candidate.path) {
        ReadOutcome::Parsed { topic, mtime, key } => {
            let document = Document::from_scan(
                scope,
                candidate.path.clone(),
                candidate.relative.clone(),
                topic,
                mtime,
            );
            let scanned = Arc::new(ScannedDocument::new(document));
            Visit::Read(Verdict::Document(scanned), Some(key))
        }
        ReadOutcome::Skipped { reason, key } => Visit::Read(Verdict::Skipped(reason), key),
    }
}

/// The key of a candidate's file now, or as taken right after listing.
fn current_key(candidate: &Candidate) -> Option<FileKey> {
    match candidate.early_key {
        EarlyKey::Taken(key) => Some(key),
        EarlyKey::Unavailable => None,
        EarlyKey::NotTaken => fs::metadata(&candidate.path)
            .ok()
            .map(|metadata| FileKey::from_metadata(&metadata)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topic::parse_topic;

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
        catalog::save(dir.path(), &[(OsString::from("a.md"), entry)]).unwrap();
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
        let mut entries = catalog::load(dir.path(), Scope::Project).unwrap().unwrap();
        entries.push((OsString::from("flaky.md"), transient));

        let written = catalog::save(dir.path(), &entries).unwrap();
        let loaded = catalog::load(dir.path(), Scope::Project).unwrap().unwrap();

        assert_eq!(written, 1);
        assert_eq!(loaded.len(), 1);
        assert_eq!(loaded[0].0, OsString::from("a.md"));
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
}
