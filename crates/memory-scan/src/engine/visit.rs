//! The visit driver: runs a visit on every listed candidate in parallel and keeps one document
//! per file identity.

use std::sync::Arc;

use super::access::OpenParent;
use super::walk::Walk;
use super::{Candidate, Listings, MemoryRoots, ScopeListing, Walked, list_scopes};
use crate::document::Scope;
use crate::key::FileKey;
use crate::report::{ScanError, SkipReason, SkippedFile};

/// Walks every configured root and runs `visit` on each candidate in parallel.
pub(crate) fn scan_scopes<T, F>(
    roots: &MemoryRoots,
    visit: F,
) -> Result<Listings<(Candidate, T)>, ScanError>
where
    T: Send,
    F: Fn(Scope, &Candidate, &mut OpenParent) -> T + Sync,
{
    Ok(visit_scopes(
        list_scopes(roots, [None, None])?,
        |_, candidates| vec![(); candidates.len()],
        |scope, candidate, (), parent| {
            let visited = visit(scope, &candidate, parent);
            (candidate, visited)
        },
    ))
}

/// Runs `visit` on each listed candidate in parallel, with what `prior` says about it; results
/// keep the listing order.
///
/// `prior` gets each scope's candidates in listing order (sorted by relative path) and returns
/// one value per candidate, in the same order; each value is moved into its candidate's visit.
/// Each thread keeps the directory it is in open for its visits (see [`OpenParent`]).
pub(crate) fn visit_scopes<P, T, F>(
    walked: Walked,
    mut prior: impl FnMut(Scope, &[Candidate]) -> Vec<P>,
    visit: F,
) -> Listings<T>
where
    P: Send,
    T: Send,
    F: Fn(Scope, Candidate, P, &mut OpenParent) -> T + Sync,
{
    let scopes = walked
        .scopes
        .into_iter()
        .map(|(scope, walk)| {
            let Walk {
                root,
                candidates,
                skipped,
                files_seen,
                ..
            } = walk;
            debug_assert!(candidates.is_sorted_by(|a, b| a.relative <= b.relative));
            let priors = prior(scope, &candidates);
            assert_eq!(priors.len(), candidates.len(), "one prior per candidate");
            let entries = crate::par::map_pairs_init(
                candidates,
                priors,
                || OpenParent::new(Arc::clone(&root)),
                |parent, (candidate, prior)| visit(scope, candidate, prior, parent),
            );
            ScopeListing {
                scope,
                entries,
                skipped,
                files_seen,
            }
        })
        .collect();
    Listings {
        scopes,
        warnings: walked.warnings,
    }
}

/// One document per file identity: of the documents that are the same file (same device and
/// inode), the file's own entry is kept, or, when only links reach it, the first link in pool
/// order (project before user, then by path). Takes each document's identity and whether it was
/// reached through a symlink, in pool order; returns each dropped document's index with the index
/// of the one kept in its place. Costs nothing without symlinks.
fn dedupe_linked(documents: &[(FileKey, bool)]) -> Vec<(usize, usize)> {
    if !documents.iter().any(|(_, symlink)| *symlink) {
        return Vec::new();
    }
    let identity = |key: &FileKey| (key.device, key.inode);
    let mut kept = std::collections::HashMap::new();
    for (index, (key, _)) in documents.iter().enumerate().filter(|(_, (_, link))| !link) {
        kept.entry(identity(key)).or_insert(index);
    }
    let mut dropped = Vec::new();
    for (index, (key, _)) in documents.iter().enumerate().filter(|(_, (_, link))| *link) {
        match kept.entry(identity(key)) {
            std::collections::hash_map::Entry::Occupied(first) => {
                dropped.push((index, *first.get()));
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(index);
            }
        }
    }
    dropped.sort_unstable();
    dropped
}

/// Removes from `documents` (in pool order, with each one's identity and whether a symlink
/// reached it in `identities`) those [`dedupe_linked`] finds to be another path to a document
/// kept, and reports each as skipped.
pub(crate) fn drop_duplicate_links<D>(
    documents: &mut Vec<D>,
    identities: &[(FileKey, bool)],
    document: impl Fn(&D) -> &crate::document::Document,
    skipped: &mut Vec<SkippedFile>,
) {
    let dropped = dedupe_linked(identities);
    if dropped.is_empty() {
        return;
    }
    for &(index, kept) in &dropped {
        let duplicate = document(&documents[index]);
        skipped.push(SkippedFile {
            scope: duplicate.scope(),
            path: duplicate.path().to_path_buf(),
            reason: SkipReason::DuplicateLink {
                of: document(&documents[kept]).path().to_path_buf(),
            },
        });
    }
    let mut index = 0;
    documents.retain(|_| {
        index += 1;
        dropped
            .binary_search_by_key(&(index - 1), |(at, _)| *at)
            .is_err()
    });
}
