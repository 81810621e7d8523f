//! Scans told which paths changed (as a watcher would): nothing else is listed or stat'ed, and
//! the documents are those a full scan finds.

use std::fs;
use std::path::Path;

use memory_scan::{
    ChangedPaths, DocumentCache, KnownChanges, MemoryRoots, RecallScan, RootChanges,
};

use crate::support::{Tree, topic, write, write_topic};

/// A project tree of three topics in two directories, scanned once by a fresh cache.
fn scanned_tree() -> (Tree, DocumentCache) {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    write_topic(&tree.project(), "notes/b.md");
    write_topic(&tree.project(), "notes/c.md");
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();
    (tree, cache)
}

fn only(paths: &[&str]) -> KnownChanges {
    KnownChanges {
        project: RootChanges::Only(paths.iter().copied().collect::<ChangedPaths>()),
        user: RootChanges::Unknown,
    }
}

fn scan(cache: &DocumentCache, roots: &MemoryRoots, changes: &KnownChanges) -> RecallScan {
    cache.scan_recall_knowing(roots, changes, None).unwrap()
}

/// The documents' paths and titles, and the skipped paths, of a scan.
fn outcome(scan: &RecallScan) -> (Vec<(String, String)>, Vec<String>) {
    let documents = scan
        .documents
        .iter()
        .map(|d| (d.path().display().to_string(), d.title().to_owned()))
        .collect();
    let skipped = scan
        .report
        .skipped
        .iter()
        .map(|s| s.path.display().to_string())
        .collect();
    (documents, skipped)
}

/// What a fresh cache finds in `roots`.
fn full_scan(roots: &MemoryRoots) -> (Vec<(String, String)>, Vec<String>) {
    outcome(&DocumentCache::new().scan_recall(roots).unwrap())
}

#[test]
fn a_root_with_no_change_is_neither_listed_nor_stated() {
    let (tree, cache) = scanned_tree();

    let scan = scan(&cache, &tree.project_only(), &only(&[]));

    let report = &scan.report;
    assert_eq!(
        (
            report.work.directories_listed,
            report.work.directories_stated,
            report.work.files_stated,
            report.reread
        ),
        (0, 0, 0, 0)
    );
    assert_eq!(report.reused, 3);
    assert_eq!(outcome(&scan), full_scan(&tree.project_only()));
}

#[test]
fn a_stat_scan_counts_its_stats_and_listings() {
    let (tree, cache) = scanned_tree();

    let scan = cache.scan_recall(&tree.project_only()).unwrap();

    // Fresh files are within the racy margin: all are read again, and both directories listed.
    assert_eq!(scan.report.reread, 3);
    assert_eq!(scan.report.work.directories_listed, 2);
    assert_eq!(scan.report.work.directories_stated, 2);
}

#[test]
fn an_edit_that_keeps_size_and_times_is_read_when_reported() {
    let (tree, cache) = scanned_tree();
    let path = tree.project().join("notes/b.md");
    let before = fs::metadata(&path).unwrap().modified().unwrap();
    let text = fs::read_to_string(&path).unwrap().replace("Body.", "Edit.");
    fs::write(&path, text).unwrap();
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(before)
        .unwrap();

    let mut edited = ChangedPaths::new();
    edited.insert_edit("notes/b.md");
    let changes = KnownChanges {
        project: RootChanges::Only(edited),
        user: RootChanges::Unknown,
    };

    let scan = scan(&cache, &tree.project_only(), &changes);

    assert_eq!((scan.report.reread, scan.report.work.files_stated), (1, 0));
    assert_eq!(scan.report.work.directories_listed, 0);
    let edited = scan
        .documents
        .iter()
        .find(|d| d.path() == path)
        .expect("still a document");
    assert!(edited.body().contains("Edit."), "{}", edited.body());
}

#[test]
fn created_and_deleted_files_are_seen_by_listing_only_their_directory() {
    let (tree, cache) = scanned_tree();
    write(
        &tree.project(),
        "notes/new.md",
        topic("user", "New", "", "new"),
    );
    fs::remove_file(tree.project().join("notes/c.md")).unwrap();

    let scan = scan(
        &cache,
        &tree.project_only(),
        &only(&["notes/new.md", "notes/c.md"]),
    );

    assert_eq!(scan.report.work.directories_listed, 1);
    assert_eq!((scan.report.reread, scan.report.work.files_stated), (1, 0));
    assert_eq!(outcome(&scan), full_scan(&tree.project_only()));
}

#[test]
fn a_renamed_directory_is_walked_again_below_both_names() {
    let (tree, cache) = scanned_tree();
    write_topic(&tree.project(), "notes/deeper/d.md");
    let scan_with_deeper = scan(&cache, &tree.project_only(), &only(&["notes/deeper"]));
    assert_eq!(scan_with_deeper.documents.len(), 4);
    fs::rename(tree.project().join("notes"), tree.project().join("moved")).unwrap();

    let scan = scan(&cache, &tree.project_only(), &only(&["notes", "moved"]));

    assert_eq!(scan.report.work.files_stated, 0);
    assert_eq!(scan.report.reread, 3);
    assert_eq!(outcome(&scan), full_scan(&tree.project_only()));
}

#[test]
fn changes_for_a_root_this_cache_never_scanned_are_not_relied_on() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    let cache = DocumentCache::new();

    let scan = scan(&cache, &tree.project_only(), &only(&[]));

    assert_eq!(scan.report.work.directories_listed, 1);
    assert_eq!(scan.documents.len(), 1);
}

#[test]
fn an_unknown_root_beside_a_known_one_is_checked_file_by_file() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    write_topic(&tree.user(), "u.md");
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.roots()).unwrap();
    let changes = KnownChanges {
        project: RootChanges::Only(ChangedPaths::new()),
        user: RootChanges::Unknown,
    };

    let scan = cache
        .scan_recall_knowing(&tree.roots(), &changes, None)
        .unwrap();

    // Only the user root is listed; its fresh file is read again by the racy-timestamp rule.
    assert_eq!(scan.report.work.directories_listed, 1);
    assert_eq!(scan.report.reread, 1);
    assert!(Path::new(&scan.documents[1].path()).ends_with("u.md"));
}

#[test]
fn a_quiet_scan_told_again_that_nothing_changed_gives_the_same_result() {
    let (tree, cache) = scanned_tree();
    let quiet = scan(&cache, &tree.project_only(), &only(&[]));

    let again = scan(&cache, &tree.project_only(), &only(&[]));

    assert_eq!(again.report, quiet.report);
    assert_eq!(outcome(&again), outcome(&quiet));
}

#[test]
fn a_change_after_a_quiet_scan_is_seen() {
    let (tree, cache) = scanned_tree();
    scan(&cache, &tree.project_only(), &only(&[]));
    scan(&cache, &tree.project_only(), &only(&[]));
    write_topic(&tree.project(), "later.md");

    let scan = scan(&cache, &tree.project_only(), &only(&["later.md"]));

    assert_eq!(scan.documents.len(), 4);
    assert_eq!(outcome(&scan), full_scan(&tree.project_only()));
}
