use std::fs;
use std::sync::Arc;

use memory_scan::{DocumentCache, SkipReason};

use crate::support::{Tree, make_stable, topic, write, write_topic};

#[test]
fn second_scan_reuses_unchanged_files_without_reading_them() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    write_topic(&tree.user(), "b.md");
    make_stable(tree.dir.path());
    let cache = DocumentCache::new();

    let first = cache.scan_recall(&tree.roots()).unwrap();
    let second = cache.scan_recall(&tree.roots()).unwrap();

    assert_eq!((first.report.reread, first.report.reused), (2, 0));
    assert_eq!((second.report.reread, second.report.reused), (0, 2));
    assert!(
        first
            .documents
            .iter()
            .zip(&second.documents)
            .all(|(a, b)| Arc::ptr_eq(a, b)),
        "unchanged documents are the same prepared objects"
    );
}

#[test]
fn change_deletion_and_unchanged_file_across_two_scans() {
    let tree = Tree::new();
    let changed = write(
        &tree.project(),
        "changed.md",
        topic("user", "Before", "", "old"),
    );
    let deleted = write_topic(&tree.project(), "deleted.md");
    write_topic(&tree.project(), "same.md");
    make_stable(tree.dir.path());
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();

    fs::write(&changed, topic("user", "After the edit", "", "new body")).unwrap();
    fs::remove_file(&deleted).unwrap();
    let scan = cache.scan_recall(&tree.project_only()).unwrap();

    let titles: Vec<&str> = scan.documents.iter().map(|d| d.title()).collect();
    assert_eq!(titles, vec!["After the edit", "same.md"]);
    assert_eq!((scan.report.reread, scan.report.reused), (1, 1));
    assert_eq!(cache.len(), 2);
}

#[test]
fn new_file_is_read_on_the_next_scan() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    make_stable(tree.dir.path());
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();

    write_topic(&tree.project(), "b.md");
    let scan = cache.scan_recall(&tree.project_only()).unwrap();

    assert_eq!(scan.documents.len(), 2);
    assert_eq!((scan.report.reread, scan.report.reused), (1, 1));
}

#[test]
fn replaced_file_with_same_size_is_read_again() {
    let tree = Tree::new();
    let path = write(&tree.project(), "a.md", topic("user", "AAAA", "", ""));
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();

    let replacement = write(
        tree.dir.path(),
        "replacement.md",
        topic("user", "BBBB", "", ""),
    );
    fs::rename(&replacement, &path).unwrap();
    let scan = cache.scan_recall(&tree.project_only()).unwrap();

    assert_eq!(scan.documents[0].title(), "BBBB");
    assert_eq!(scan.report.reread, 1);
}

#[test]
fn unchanged_skipped_file_keeps_its_verdict_without_being_read() {
    let tree = Tree::new();
    write(&tree.project(), "bad.md", "no frontmatter");
    make_stable(tree.dir.path());
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();

    let scan = cache.scan_recall(&tree.project_only()).unwrap();

    assert_eq!(scan.report.skipped[0].reason, SkipReason::NoFrontmatter);
    assert_eq!((scan.report.reread, scan.report.reused), (0, 1));
}

#[test]
fn file_fixed_after_a_skip_becomes_a_document() {
    let tree = Tree::new();
    let path = write(&tree.project(), "a.md", "draft");
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();

    fs::write(&path, topic("user", "Fixed", "", "")).unwrap();
    let scan = cache.scan_recall(&tree.project_only()).unwrap();

    assert_eq!(scan.documents[0].title(), "Fixed");
    assert!(scan.report.skipped.is_empty());
}

#[test]
fn switching_roots_drops_documents_of_the_old_root() {
    let first = Tree::new();
    let second = Tree::new();
    write_topic(&first.project(), "a.md");
    write_topic(&second.project(), "b.md");
    let cache = DocumentCache::new();
    cache.scan_recall(&first.project_only()).unwrap();

    let scan = cache.scan_recall(&second.project_only()).unwrap();

    assert_eq!(scan.documents.len(), 1);
    assert_eq!(scan.documents[0].title(), "b.md");
    assert_eq!(cache.len(), 1);
}

#[test]
fn cache_is_shared_across_threads() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    make_stable(tree.dir.path());
    let cache = Arc::new(DocumentCache::new());
    cache.scan_recall(&tree.project_only()).unwrap();

    let handles: Vec<_> = (0..4)
        .map(|_| {
            let cache = Arc::clone(&cache);
            let roots = tree.project_only();
            std::thread::spawn(move || cache.scan_recall(&roots).unwrap().report.reused)
        })
        .collect();

    for handle in handles {
        assert_eq!(handle.join().unwrap(), 1);
    }
}

#[test]
fn file_modified_within_the_racy_margin_is_read_again_on_every_scan() {
    let tree = Tree::new();
    write_topic(&tree.project(), "fresh.md");
    let cache = DocumentCache::new();

    let scans: Vec<(usize, usize)> = (0..3)
        .map(|_| {
            let report = cache.scan_recall(&tree.project_only()).unwrap().report;
            (report.reread, report.reused)
        })
        .collect();

    assert_eq!(scans, vec![(1, 0); 3]);
}

#[test]
fn file_becomes_stable_once_a_scan_finds_it_older_than_the_racy_margin() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();

    make_stable(tree.dir.path());
    let becoming = cache.scan_recall(&tree.project_only()).unwrap().report;
    let stable = cache.scan_recall(&tree.project_only()).unwrap().report;

    assert_eq!((becoming.reread, becoming.reused), (1, 0));
    assert_eq!((stable.reread, stable.reused), (0, 1));
}
