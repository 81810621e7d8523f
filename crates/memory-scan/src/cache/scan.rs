//! One scan through the cache: which roots start over, what each reuses, and the documents and
//! report it gathers.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use lexical_score::QueryTokens;

use super::reuse::{Check, Recorded, match_to_listing, record, visit};
use super::{DocumentCache, RACY_MARGIN, RecallScan, RootCache};
use crate::document::{ScannedDocument, Scope};
use crate::engine::changes::{ChangedPaths, KnownChanges, RootChanges};
use crate::engine::{
    MemoryRoots, PriorListings, ScopeListing, Walked, drop_duplicate_links, visit_scopes,
};
use crate::entry::Entries;
use crate::key::to_epoch_ns;
use crate::lock;
use crate::report::{CatalogOutcome, ScanError, ScanReport, ScanWork};

impl DocumentCache {
    pub(super) fn scan(
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
