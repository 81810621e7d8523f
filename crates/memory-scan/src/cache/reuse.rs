//! The per-file reuse rule: which remembered outcome a scan may serve without reading the file,
//! and what a visit leaves to remember.

use std::cmp::Ordering;
use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;

#[cfg(doc)]
use lexical_score::PreparedText;
use lexical_score::QueryTokens;

use crate::document::{Document, ScannedDocument, Scope};
use crate::engine::{Candidate, EarlyKey, OpenParent, ReadOutcome};
use crate::entry::{CacheEntry, Entries, Verdict, listing_order};
use crate::key::FileKey;
use crate::report::SkippedFile;

/// What happened to one candidate during a cached scan.
pub(super) enum Visit {
    Reused(CacheEntry),
    Read {
        verdict: Verdict,
        key: Option<FileKey>,
        /// Whether the cache remembered the file (its entry is replaced or dropped).
        remembered: bool,
    },
}

/// What one listed file leaves after its visit. Worked out on the visit's thread, so the scan's
/// serial tail only counts and moves.
pub(super) struct Recorded {
    /// The entry to remember under the file's path below the root; none for a file not even
    /// opened (gone, unreadable, a symlink where a file was listed): with no key there is nothing
    /// to remember.
    pub(super) entry: Option<(OsString, CacheEntry)>,
    /// The document found, shared with `entry`.
    pub(super) document: Option<Arc<ScannedDocument>>,
    /// Why the file is not a document (rare, so kept out of line).
    pub(super) skipped: Option<Box<SkippedFile>>,
    /// Whether the file was read, not reused.
    pub(super) read: bool,
    /// Whether the candidate is a symlink to a file (see [`drop_duplicate_links`]).
    pub(super) symlink: bool,
    /// Whether what the cache remembers changed: a read that leaves no entry where there was
    /// none (a file that cannot be read, again) changes nothing a catalog holds.
    pub(super) changed: bool,
}

pub(super) fn record(
    scope: Scope,
    candidate: Candidate,
    visited: Visit,
    stable_before: i64,
) -> Recorded {
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
            stable: key.mtime_ns < stable_before,
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
    Recorded {
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

/// Pairs each candidate with the remembered entry for its path, if any, by merging two lists in
/// the same order; also returns how many entries matched no candidate. Of entries with the same
/// path (only a damaged catalog holds them), the first is used.
pub(super) fn match_to_listing(
    previous: Entries,
    candidates: &[Candidate],
) -> (Vec<Option<CacheEntry>>, usize) {
    let mut previous = previous.into_iter().peekable();
    let mut unmatched = 0;
    let matched = candidates
        .iter()
        .map(|candidate| {
            while let Some((path, _)) = previous.peek() {
                // Nearly every remembered path is the candidate's own: one comparison of bytes
                // decides that before the component order is worked out.
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

/// How a visit decides whether a remembered outcome still holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// By the file's key and the racy-timestamp rule.
    Key,
    /// By what a watcher reported: `changed` when the file, or a directory above it, changed.
    /// A symlinked file is checked by its key all the same: what it resolves to can change
    /// without an event for the link.
    Watched { changed: bool },
}

/// Serves the candidate's remembered outcome when it still holds (see [`Check`]), else reads the
/// file. Also says whether the file's key was taken by a `stat` of its own.
pub(super) fn visit(
    scope: Scope,
    candidate: &Candidate,
    previous: Option<CacheEntry>,
    query: Option<&QueryTokens>,
    parent: &mut OpenParent,
    check: Check,
) -> (Visit, bool) {
    let remembered = previous.is_some();
    let mut stated = false;
    if let Some(entry) = previous {
        let holds = match check {
            Check::Watched { changed: true } => false,
            Check::Watched { changed: false } if !candidate.symlink => true,
            Check::Key | Check::Watched { .. } => {
                entry.stable && {
                    stated = candidate.early_key == EarlyKey::NotTaken;
                    candidate.current_key(parent) == Some(entry.key)
                }
            }
        };
        if holds {
            return (Visit::Reused(entry), stated);
        }
    }
    (read(scope, candidate, remembered, query, parent), stated)
}

/// Reads the candidate's file.
fn read(
    scope: Scope,
    candidate: &Candidate,
    remembered: bool,
    query: Option<&QueryTokens>,
    parent: &mut OpenParent,
) -> Visit {
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
    use std::path::PathBuf;

    use super::*;
    use crate::report::SkipReason;

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

        let failed = record(
            Scope::Project,
            candidate("a.md"),
            Visit::Read {
                verdict: Verdict::Skipped(unreadable.clone()),
                key: Some(key),
                remembered: false,
            },
            i64::MAX,
        );
        let refused = record(
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
        assert!(refused.entry.is_some_and(|(_, entry)| entry.stable));
    }

    #[test]
    fn a_failed_read_changes_what_the_cache_holds_only_when_it_remembered_the_file() {
        for remembered in [false, true] {
            let recorded = record(
                Scope::Project,
                candidate("a.md"),
                Visit::Read {
                    verdict: Verdict::Skipped(unreadable()),
                    key: None,
                    remembered,
                },
                i64::MAX,
            );
            assert!(recorded.read && recorded.entry.is_none());
            assert_eq!(recorded.changed, remembered, "remembered: {remembered}");
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
            let (visited, _) = visit(
                Scope::Project,
                &gone,
                remembered,
                None,
                &mut OpenParent::new(std::sync::Arc::new(
                    crate::engine::RootDir::open(dir.path().into(), dir.path().into()).unwrap(),
                )),
                Check::Key,
            );
            let recorded = record(Scope::Project, gone, visited, i64::MAX);
            assert!(recorded.read && recorded.entry.is_none());
            assert_eq!(recorded.changed, was_remembered);
        }
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
            stable: true,
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
        let previous: Entries = ["a/b.md", "a/gone.md", "a-b.md", "zz.md"]
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
}
