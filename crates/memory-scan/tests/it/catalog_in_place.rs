//! A catalog that another program changes in place (rewrites at the same length, truncates,
//! copies over) while caches for one recall read it: each recall uses the catalog whole or
//! rejects it and reads the files, finds every topic, and the process never dies.

use std::fs::{self, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use memory_scan::{CatalogOutcome, CatalogStore, DocumentCache, catalog_path};

use crate::catalog::{
    assert_rejected_as_damaged, catalog_outcome, scan_for_one_recall, tree_with_catalog,
};

/// The catalog's magic and format versions: bytes past them are what the checksums guard.
const MAGIC_AND_VERSIONS: usize = 16;

/// A xorshift generator: reproducible noise without a dependency.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % (n.max(1) as u64)).unwrap()
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next().to_le_bytes()[0]).collect()
    }
}

/// Writes `bytes` at `offset` of the file at `path` in place: the same file, not truncated.
fn write_in_place(path: &Path, offset: usize, bytes: &[u8]) {
    let file = OpenOptions::new().write(true).open(path).unwrap();
    file.write_all_at(bytes, offset as u64).unwrap();
}

/// Sets the length of the file at `path` in place.
fn truncate_in_place(path: &Path, len: usize) {
    let file = OpenOptions::new().write(true).open(path).unwrap();
    file.set_len(len as u64).unwrap();
}

/// The titles a recall found, sorted.
fn titles(scan: &memory_scan::RecallScan) -> Vec<String> {
    let mut titles: Vec<String> = scan
        .documents
        .iter()
        .map(|d| d.title().to_owned())
        .collect();
    titles.sort();
    titles
}

#[test]
fn a_cache_for_one_recall_rejects_a_catalog_rewritten_in_place_with_random_bytes_and_reads_the_files()
 {
    let tree = tree_with_catalog();
    let path = catalog_path(&tree.project());
    let len = fs::read(&path).unwrap().len();
    let cache = DocumentCache::for_one_recall(CatalogStore::InRoot);

    let mut noise = Noise(0x9e37_79b9_7f4a_7c15);
    write_in_place(
        &path,
        MAGIC_AND_VERSIONS,
        &noise.bytes(len - MAGIC_AND_VERSIONS),
    );
    let scan = cache.scan_recall(&tree.project_only()).unwrap();

    assert_eq!(fs::read(&path).unwrap().len(), len);
    assert_rejected_as_damaged(&scan);
}

#[test]
fn a_cache_for_one_recall_rejects_a_catalog_truncated_in_place_and_reads_the_files() {
    let tree = tree_with_catalog();
    let path = catalog_path(&tree.project());
    let len = fs::read(&path).unwrap().len();
    let cache = DocumentCache::for_one_recall(CatalogStore::InRoot);

    truncate_in_place(&path, len / 2);
    let scan = cache.scan_recall(&tree.project_only()).unwrap();

    assert_rejected_as_damaged(&scan);
}

/// One change another program makes to the catalog at `path`, whose good bytes are `good`.
fn change_in_place(path: &Path, good: &[u8], noise: &mut Noise) {
    match noise.below(3) {
        // Good bytes, then a few random spots, at the same length.
        0 => {
            write_in_place(path, 0, good);
            for _ in 0..4 {
                let at = noise.below(good.len());
                write_in_place(path, at, &noise.bytes(1));
            }
        }
        // Truncated to a random length.
        1 => truncate_in_place(path, noise.below(good.len())),
        // Copied over, as `cp` does: truncated, then written again.
        _ => fs::write(path, good).unwrap(),
    }
}

#[test]
fn recalls_while_another_thread_rewrites_truncates_and_copies_over_the_catalog_find_every_topic() {
    let tree = tree_with_catalog();
    let path = catalog_path(&tree.project());
    let good = fs::read(&path).unwrap();
    let expected = titles(&scan_for_one_recall(&tree));
    assert_eq!(expected.len(), 3);
    let stop = Arc::new(AtomicBool::new(false));
    let changes = Arc::new(AtomicUsize::new(0));
    let changer = {
        let (stop, changes, path) = (Arc::clone(&stop), Arc::clone(&changes), path.clone());
        std::thread::spawn(move || {
            let mut noise = Noise(0x2545_f491_4f6c_dd1d);
            while !stop.load(Ordering::Relaxed) {
                change_in_place(&path, &good, &mut noise);
                changes.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    for _ in 0..300 {
        let scan = scan_for_one_recall(&tree);
        assert_eq!(titles(&scan), expected);
        // Used whole, or not at all.
        if let CatalogOutcome::Loaded { entries } = catalog_outcome(&scan) {
            assert_eq!(*entries, 4);
        }
    }
    stop.store(true, Ordering::Relaxed);
    changer.join().unwrap();

    assert!(changes.load(Ordering::Relaxed) > 0);
}
