//! The capped scanner for callers other than recall (forget, index, status).

use std::cmp::Reverse;

use crate::document::Document;
use crate::engine::{MemoryRoots, ReadOutcome, drop_duplicate_links, scan_scopes};
use crate::report::{ScanError, ScanReport, SkippedFile};

/// The capped scanner's limit: the newest documents it returns.
pub const CAPPED_SCAN_LIMIT: usize = 200;

/// The capped scan result: at most [`CAPPED_SCAN_LIMIT`] documents.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CappedScan {
    /// The newest documents of both scopes together: mtime descending, then file name, then
    /// project before user, then relative path.
    pub documents: Vec<Document>,
    /// What was seen and skipped; `dropped_by_cap` counts documents beyond the limit.
    pub report: ScanReport,
}

/// The capped scanner for non-recall callers: 200 newest (mtime desc, then file name).
///
/// Blocking; it reads every topic file (no cache) and keeps the newest.
pub fn scan_capped(roots: &MemoryRoots) -> Result<CappedScan, ScanError> {
    let listings = scan_scopes(roots, |_, candidate, parent| candidate.read(parent))?;
    let mut report = ScanReport {
        warnings: listings.warnings,
        ..ScanReport::default()
    };
    let mut documents = Vec::new();
    let mut identities = Vec::new();
    for listing in listings.scopes {
        report.files_seen += listing.files_seen;
        report.skipped.extend(listing.skipped);
        for (candidate, outcome) in listing.entries {
            report.reread += 1;
            match outcome {
                ReadOutcome::Parsed { topic, mtime, key } => {
                    identities.push((key, candidate.symlink));
                    documents.push(Document::from_scan(
                        listing.scope,
                        candidate.path,
                        candidate.relative,
                        topic,
                        mtime,
                    ));
                }
                ReadOutcome::Skipped { reason, .. } => report.skipped.push(SkippedFile {
                    scope: listing.scope,
                    path: candidate.path,
                    reason,
                }),
            }
        }
    }
    drop_duplicate_links(&mut documents, &identities, |d| d, &mut report.skipped);
    report.parsed = documents.len();
    report
        .skipped
        .sort_by(|a, b| (a.scope, &a.path).cmp(&(b.scope, &b.path)));
    documents.sort_by(|a, b| {
        (
            Reverse(a.mtime()),
            a.file_name(),
            a.scope(),
            a.relative_path(),
        )
            .cmp(&(
                Reverse(b.mtime()),
                b.file_name(),
                b.scope(),
                b.relative_path(),
            ))
    });
    report.dropped_by_cap = documents.len().saturating_sub(CAPPED_SCAN_LIMIT);
    documents.truncate(CAPPED_SCAN_LIMIT);
    Ok(CappedScan { documents, report })
}
