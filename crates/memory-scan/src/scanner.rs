//! The port a recall scans memory through, so a caller can choose how roots are kept fresh.

use lexical_score::QueryTokens;

use crate::cache::{DocumentCache, RecallScan};
use crate::engine::MemoryRoots;
use crate::report::{CatalogWrite, ScanError};

/// What a recall scans its roots with: [`DocumentCache`] checks every file's key on each scan;
/// another implementation (a cache whose roots are watched, say) may know what changed and
/// skip the rest. Every implementation gives the documents and report a [`DocumentCache`] would
/// give for the same files.
pub trait RecallScanner: Send + Sync + std::fmt::Debug {
    /// The documents of both roots, scored ahead for `query` (see
    /// [`DocumentCache::scan_recall_for`]).
    fn scan_recall_for(
        &self,
        roots: &MemoryRoots,
        query: &QueryTokens,
    ) -> Result<RecallScan, ScanError>;

    /// Writes the catalogs of roots whose entries changed (see
    /// [`DocumentCache::persist_catalogs`]); nothing for a scanner without catalogs.
    fn persist_catalogs(&self) -> Vec<CatalogWrite>;

    /// Builds the term indexes still missing, asking `stop` between batches (see
    /// [`DocumentCache::build_indexes`]); returns how many were built.
    fn build_indexes(&self, stop: &(dyn Fn() -> bool + Sync)) -> usize;

    /// Whether [`RecallScanner::persist_catalogs`] writes anything.
    fn uses_catalogs(&self) -> bool;
}

impl RecallScanner for DocumentCache {
    fn scan_recall_for(
        &self,
        roots: &MemoryRoots,
        query: &QueryTokens,
    ) -> Result<RecallScan, ScanError> {
        DocumentCache::scan_recall_for(self, roots, query)
    }

    fn persist_catalogs(&self) -> Vec<CatalogWrite> {
        DocumentCache::persist_catalogs(self)
    }

    fn build_indexes(&self, stop: &(dyn Fn() -> bool + Sync)) -> usize {
        DocumentCache::build_indexes(self, stop)
    }

    fn uses_catalogs(&self) -> bool {
        DocumentCache::uses_catalogs(self)
    }
}
