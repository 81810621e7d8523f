//! What a cache holds in memory, by part.

use std::mem::size_of;
use std::ops::AddAssign;
use std::path::PathBuf;

use super::{DocumentCache, RootCache};
use crate::document::{Document, ScannedDocument};
use crate::engine::DirectoryListing;
use crate::entry::{CacheEntry, Verdict};
use crate::lock;

/// The bytes a [`DocumentCache`] holds, by part (see [`DocumentCache::footprint`]).
///
/// Heap bytes are counted once, with the part that owns them: a normalised field that shares its
/// document's text counts with the document; a document loaded from a catalog counts the bytes
/// it shares of the catalog's buffer (the rest of that buffer, and what the allocator keeps
/// beside each allocation, is not counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct CacheFootprint {
    /// Topic documents remembered.
    pub topics: usize,
    /// Files remembered that are not topic documents.
    pub skipped: usize,
    /// The documents' own texts: title, description, body, keywords and usage scenarios.
    pub document_text: usize,
    /// Normalised scoring text that is not a share of a document's text.
    pub prepared_text: usize,
    /// Term indexes built so far.
    pub term_index: usize,
    /// Each file's absolute path, its path below the root and the key it is remembered by.
    pub paths: usize,
    /// Remembered directory listings, names included.
    pub listings: usize,
    /// The fixed-size records that hold the parts above: entries, documents, prepared texts.
    pub records: usize,
}

impl CacheFootprint {
    /// Every byte counted.
    pub fn total(&self) -> usize {
        self.document_text
            + self.prepared_text
            + self.term_index
            + self.paths
            + self.listings
            + self.records
    }

    fn root(cache: &RootCache) -> Self {
        let mut footprint = Self {
            paths: cache.root.capacity(),
            records: cache.entries.capacity() * size_of::<(std::ffi::OsString, CacheEntry)>(),
            listings: cache
                .directories
                .iter()
                .map(|(path, listing)| listing_bytes(path, listing))
                .sum(),
            ..Self::default()
        };
        for (relative, entry) in &cache.entries {
            footprint.paths += relative.capacity();
            match &entry.verdict {
                Verdict::Document(document) => footprint.add_document(document),
                Verdict::Skipped(_) => footprint.skipped += 1,
            }
        }
        footprint
    }

    fn add_document(&mut self, scanned: &ScannedDocument) {
        let document: &Document = scanned.document();
        let topic = document.topic();
        self.topics += 1;
        self.document_text += topic.title().len()
            + topic.description().len()
            + topic.body().len()
            + topic.keywords().len()
            + topic.usage_scenarios().len();
        let text = scanned.prepared().footprint();
        self.prepared_text += text.normalized;
        self.term_index += text.index;
        self.paths +=
            document.path().as_os_str().len() + document.relative_path().as_os_str().len();
        // The document and its prepared text sit in one allocation behind the entry's `Arc`,
        // after its two reference counts.
        self.records += size_of::<ScannedDocument>() + 2 * size_of::<usize>();
    }
}

impl AddAssign for CacheFootprint {
    fn add_assign(&mut self, other: Self) {
        self.topics += other.topics;
        self.skipped += other.skipped;
        self.document_text += other.document_text;
        self.prepared_text += other.prepared_text;
        self.term_index += other.term_index;
        self.paths += other.paths;
        self.listings += other.listings;
        self.records += other.records;
    }
}

/// A listing's path, its entries and their names.
fn listing_bytes(path: &PathBuf, listing: &DirectoryListing) -> usize {
    path.capacity()
        + size_of::<DirectoryListing>()
        + listing.entries.capacity() * size_of::<(std::ffi::OsString, crate::engine::EntryKind)>()
        + listing
            .entries
            .iter()
            .map(|(name, _)| name.capacity())
            .sum::<usize>()
}

impl DocumentCache {
    /// The bytes this cache holds, by part: what a long-lived process (a server) keeps per
    /// topic. Takes the cache's lock for a walk over its entries, as a scan does.
    ///
    /// ```
    /// use memory_scan::DocumentCache;
    ///
    /// let cache = DocumentCache::new();
    /// assert_eq!(cache.footprint().topics, 0);
    /// ```
    pub fn footprint(&self) -> CacheFootprint {
        let mut footprint = CacheFootprint::default();
        for root in lock(&self.scopes).iter().flatten() {
            footprint += CacheFootprint::root(root);
        }
        footprint
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::tests::scanned_tree_titled;
    use super::*;

    /// [`scanned_tree_titled`] with a non-ASCII title, and the documents its scan found.
    fn scanned() -> (tempfile::TempDir, DocumentCache, Vec<Arc<ScannedDocument>>) {
        let (dir, cache, scan) = scanned_tree_titled(["Rollback", "Résumé"]);
        (dir, cache, scan.documents)
    }

    #[test]
    fn the_footprint_counts_topics_and_files_that_are_not_topics() {
        let (_dir, cache, _) = scanned();
        let footprint = cache.footprint();
        assert_eq!((footprint.topics, footprint.skipped), (2, 1));
    }

    #[test]
    fn the_footprint_counts_every_text_field_of_each_document() {
        let (_dir, cache, documents) = scanned();
        let expected: usize = documents
            .iter()
            .map(|d| d.title().len() + d.description().len() + d.body().len())
            .sum();
        assert_eq!(cache.footprint().document_text, expected);
    }

    #[test]
    fn the_footprint_counts_only_normalised_text_that_is_not_a_share_of_the_source() {
        let (_dir, cache, _) = scanned();
        // "Rollback" and both bodies are ASCII: shared. "Résumé" is normalised apart.
        assert_eq!(cache.footprint().prepared_text, "résumé".len());
    }

    #[test]
    fn built_term_indexes_add_their_bytes_to_the_footprint() {
        let (_dir, cache, documents) = scanned();
        assert_eq!(cache.footprint().term_index, 0);
        cache.build_indexes(&|| false);
        let expected: usize = documents
            .iter()
            .map(|d| d.prepared().footprint().index)
            .sum();
        assert!(expected > 0);
        assert_eq!(cache.footprint().term_index, expected);
    }

    #[test]
    fn the_footprint_total_is_the_sum_of_its_byte_counts() {
        let (_dir, cache, _) = scanned();
        let f = cache.footprint();
        assert!(f.paths > 0 && f.records > 0);
        assert_eq!(
            f.total(),
            f.document_text + f.prepared_text + f.term_index + f.paths + f.listings + f.records
        );
    }
}
