//! The session document cache behind the uncapped recall scanner.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs;
use std::sync::{Arc, Mutex, PoisonError};

use crate::document::{Document, ScannedDocument, Scope};
use crate::engine::{Candidate, MemoryRoots, ReadOutcome, read_topic_file, scan_scopes};
use crate::key::FileKey;
use crate::report::{ScanError, ScanReport, SkipReason, SkippedFile};

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
/// whose [`FileKey`] is unchanged is not opened again: its document, prepared scoring text
/// included, or its skip verdict is reused. Entries for files no longer listed are dropped.
/// Concurrent scans take turns, so the second one benefits from the first one's reads.
#[derive(Debug, Default)]
pub struct DocumentCache {
    // Keyed by the path's bytes: hashing a `Path` walks its components, which costs more than
    // the lookup it serves.
    entries: Mutex<HashMap<OsString, CacheEntry>>,
}

#[derive(Debug, Clone)]
struct CacheEntry {
    key: FileKey,
    verdict: Verdict,
}

#[derive(Debug, Clone)]
enum Verdict {
    Document(Arc<ScannedDocument>),
    Skipped(SkipReason),
}

/// What happened to one candidate during a cached scan.
enum Visit {
    Reused(CacheEntry),
    Read(Verdict, Option<FileKey>),
}

impl DocumentCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many files the cache remembers.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the cache remembers no file.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Scans both roots with no cap, re-reading only files that changed since the last scan.
    ///
    /// Blocking; call from `spawn_blocking` in async code.
    pub fn scan_recall(&self, roots: &MemoryRoots) -> Result<RecallScan, ScanError> {
        let mut entries = self.lock();
        let previous = &*entries;
        let listings = scan_scopes(roots, |scope, candidate| visit(previous, scope, candidate))?;

        let mut report = ScanReport {
            warnings: listings.warnings,
            ..ScanReport::default()
        };
        let mut documents = Vec::new();
        let mut next = HashMap::with_capacity(previous.len());
        for listing in listings.scopes {
            report.files_seen += listing.files_seen;
            report.skipped.extend(listing.skipped);
            for (candidate, visited) in listing.entries {
                let (verdict, key) = match visited {
                    Visit::Reused(entry) => {
                        report.reused += 1;
                        (entry.verdict, Some(entry.key))
                    }
                    Visit::Read(verdict, key) => {
                        report.reread += 1;
                        (verdict, key)
                    }
                };
                match &verdict {
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
                if let Some(key) = key {
                    next.insert(candidate.path.into_os_string(), CacheEntry { key, verdict });
                }
            }
        }
        report
            .skipped
            .sort_by(|a, b| (a.scope, &a.path).cmp(&(b.scope, &b.path)));
        *entries = next;
        Ok(RecallScan { documents, report })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<OsString, CacheEntry>> {
        // A panic elsewhere cannot leave the map inconsistent: it is replaced whole after a scan.
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn visit(previous: &HashMap<OsString, CacheEntry>, scope: Scope, candidate: &Candidate) -> Visit {
    if let Some(entry) = previous.get(candidate.path.as_os_str())
        && still_valid(entry, scope, candidate)
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

/// A cached entry is valid when the file is the same version and, for a document, it is still
/// found through the same scope and relative path (roots may change between scans).
fn still_valid(entry: &CacheEntry, scope: Scope, candidate: &Candidate) -> bool {
    if let Verdict::Document(document) = &entry.verdict
        && (document.scope() != scope || document.relative_path() != candidate.relative)
    {
        return false;
    }
    fs::metadata(&candidate.path)
        .is_ok_and(|metadata| FileKey::from_metadata(&metadata) == entry.key)
}
