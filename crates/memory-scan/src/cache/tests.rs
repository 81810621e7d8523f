use std::fs;

use super::*;

fn scanned_tree() -> (tempfile::TempDir, DocumentCache, RecallScan) {
    scanned_tree_titled(["a.md", "b.md"])
}

/// A root with `a.md` (a user topic) and `b.md` (a project topic) of the given titles, both about
/// rollback steps, and `notes.md`, which is not a topic; scanned once for "rollback".
pub(super) fn scanned_tree_titled(
    titles: [&str; 2],
) -> (tempfile::TempDir, DocumentCache, RecallScan) {
    let dir = tempfile::tempdir().unwrap();
    for ((name, kind), title) in [("a.md", "user"), ("b.md", "project")]
        .into_iter()
        .zip(titles)
    {
        let text = format!("---\nname: {title}\ntype: {kind}\n---\n\nrollback steps\n");
        fs::write(dir.path().join(name), text).unwrap();
    }
    fs::write(dir.path().join("notes.md"), "no frontmatter\n").unwrap();
    let roots = MemoryRoots {
        project: Some(dir.path().to_path_buf()),
        user: None,
    };
    let cache = DocumentCache::new();
    let scan = cache
        .scan_recall_for(&roots, &QueryTokens::new("rollback"))
        .unwrap();
    assert_eq!(scan.documents.len(), 2);
    (dir, cache, scan)
}

#[test]
fn documents_a_scan_for_a_query_read_get_their_index_from_build_indexes_once() {
    let (_dir, cache, scan) = scanned_tree();
    assert!(scan.documents.iter().all(|d| !d.prepared().has_index()));

    assert_eq!(cache.build_indexes(&|| false), 2);
    assert!(scan.documents.iter().all(|d| d.prepared().has_index()));
    assert_eq!(cache.build_indexes(&|| false), 0);
}

#[test]
fn building_indexes_stops_when_asked_to() {
    let (_dir, cache, scan) = scanned_tree();
    assert_eq!(cache.build_indexes(&|| true), 0);
    assert!(scan.documents.iter().all(|d| !d.prepared().has_index()));
}
