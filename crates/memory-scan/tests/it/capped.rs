use std::path::PathBuf;

use memory_scan::{CAPPED_SCAN_LIMIT, MemoryRoots, Scope, scan_capped};

use crate::support::{Tree, set_mtime, write_topic};

fn names(documents: &[memory_scan::Document]) -> Vec<PathBuf> {
    documents
        .iter()
        .map(|d| d.relative_path().to_path_buf())
        .collect()
}

#[test]
fn capped_scan_keeps_the_200_newest_documents_newest_first() {
    let tree = Tree::new();
    for i in 0..205_u64 {
        let path = write_topic(&tree.project(), &format!("t{i:03}.md"));
        set_mtime(&path, 1_000_000 + i);
    }

    let scan = scan_capped(&tree.project_only()).unwrap();

    assert_eq!(scan.documents.len(), CAPPED_SCAN_LIMIT);
    assert_eq!(scan.report.parsed, 205);
    assert_eq!(scan.report.dropped_by_cap, 5);
    let expected: Vec<PathBuf> = (5..205)
        .rev()
        .map(|i| PathBuf::from(format!("t{i:03}.md")))
        .collect();
    assert_eq!(names(&scan.documents), expected);
}

#[test]
fn capped_scan_breaks_mtime_ties_by_file_name() {
    let tree = Tree::new();
    for name in ["z/b.md", "a/c.md", "y/a.md"] {
        set_mtime(&write_topic(&tree.project(), name), 5_000);
    }
    set_mtime(&write_topic(&tree.project(), "newest.md"), 6_000);

    let scan = scan_capped(&tree.project_only()).unwrap();

    assert_eq!(
        names(&scan.documents),
        ["newest.md", "y/a.md", "z/b.md", "a/c.md"].map(PathBuf::from)
    );
}

#[test]
fn capped_scan_ranks_both_scopes_together_by_recency() {
    let tree = Tree::new();
    set_mtime(&write_topic(&tree.project(), "old.md"), 1_000);
    set_mtime(&write_topic(&tree.user(), "new.md"), 2_000);
    set_mtime(&write_topic(&tree.user(), "old.md"), 1_000);

    let scan = scan_capped(&tree.roots()).unwrap();

    let order: Vec<(Scope, PathBuf)> = scan
        .documents
        .iter()
        .map(|d| (d.scope(), d.relative_path().to_path_buf()))
        .collect();
    assert_eq!(
        order,
        vec![
            (Scope::User, PathBuf::from("new.md")),
            (Scope::Project, PathBuf::from("old.md")),
            (Scope::User, PathBuf::from("old.md")),
        ]
    );
}

#[test]
fn capped_scan_of_unset_roots_is_empty() {
    let scan = scan_capped(&MemoryRoots::default()).unwrap();
    assert!(scan.documents.is_empty());
}
