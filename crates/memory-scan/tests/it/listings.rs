//! Directory listings remembered between scans: a stable directory whose key is unchanged is
//! not listed again, and any create, delete or rename in it brings the listing back.

use std::fs;
use std::sync::Arc;

use memory_scan::{DocumentCache, RecallScan, ScannedDocument};

use crate::support::{
    Tree, make_stable, passes_as_another_user, project_root_as_another_user, set_modes,
    setpriv_as_root, topic, write, write_topic,
};

/// A stable project tree: `a.md`, `nested/b.md`, `nested/deeper/c.md` and a non-topic file.
fn stable_tree() -> Tree {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    write_topic(&tree.project(), "nested/b.md");
    write_topic(&tree.project(), "nested/deeper/c.md");
    write(&tree.project(), "nested/notes.txt", "not a topic");
    make_stable(tree.dir.path());
    tree
}

fn paths(scan: &RecallScan) -> Vec<String> {
    scan.documents
        .iter()
        .map(|d| d.relative_path().display().to_string())
        .collect()
}

fn titles(documents: &[Arc<ScannedDocument>]) -> Vec<String> {
    documents.iter().map(|d| d.title().to_owned()).collect()
}

#[test]
fn stable_directories_are_not_listed_again_by_the_next_scan() {
    let tree = stable_tree();
    let cache = DocumentCache::new();
    let first = cache.scan_recall(&tree.project_only()).unwrap();

    let second = cache.scan_recall(&tree.project_only()).unwrap();

    assert_eq!(first.report.listings_reused, 0);
    assert_eq!(second.report.listings_reused, 3);
    assert_eq!(paths(&second), paths(&first));
    assert_eq!(second.report.files_seen, first.report.files_seen);
}

#[test]
fn file_added_to_a_stable_directory_is_found() {
    let tree = stable_tree();
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();
    write_topic(&tree.project(), "nested/new.md");

    let scan = cache.scan_recall(&tree.project_only()).unwrap();

    assert_eq!(
        paths(&scan),
        ["a.md", "nested/b.md", "nested/deeper/c.md", "nested/new.md"]
    );
    // The root and `nested/deeper` are unchanged; `nested` is listed again.
    assert_eq!(scan.report.listings_reused, 2);
}

#[test]
fn removed_subdirectory_takes_its_topics_with_it() {
    let tree = stable_tree();
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();
    fs::remove_dir_all(tree.project().join("nested/deeper")).unwrap();

    let scan = cache.scan_recall(&tree.project_only()).unwrap();

    assert_eq!(paths(&scan), ["a.md", "nested/b.md"]);
    assert_eq!(scan.report.listings_reused, 1);
}

#[test]
fn renamed_file_is_found_under_its_new_name_only() {
    let tree = stable_tree();
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();
    fs::rename(
        tree.project().join("nested/deeper/c.md"),
        tree.project().join("nested/deeper/d.md"),
    )
    .unwrap();

    let scan = cache.scan_recall(&tree.project_only()).unwrap();

    assert_eq!(paths(&scan), ["a.md", "nested/b.md", "nested/deeper/d.md"]);
}

#[test]
fn directory_changed_within_the_racy_margin_is_listed_on_every_scan() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();

    let scan = cache.scan_recall(&tree.project_only()).unwrap();

    assert_eq!(scan.report.listings_reused, 0);
}

#[cfg(unix)]
#[test]
fn directory_holding_a_symlinked_topic_is_listed_on_every_scan() {
    let tree = stable_tree();
    fs::copy(tree.project().join("a.md"), tree.project().join("a.txt")).unwrap();
    std::os::unix::fs::symlink(
        tree.project().join("a.txt"),
        tree.project().join("nested/deeper/link.md"),
    )
    .unwrap();
    make_stable(tree.dir.path());
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();

    let scan = cache.scan_recall(&tree.project_only()).unwrap();

    assert_eq!(scan.report.listings_reused, 2);
    assert!(paths(&scan).contains(&"nested/deeper/link.md".to_owned()));
}

#[test]
fn directory_named_like_a_topic_is_reported_and_walked_from_a_remembered_listing() {
    let tree = stable_tree();
    write_topic(&tree.project(), "folder.md/inner.md");
    make_stable(tree.dir.path());
    let cache = DocumentCache::new();
    let first = cache.scan_recall(&tree.project_only()).unwrap();

    let second = cache.scan_recall(&tree.project_only()).unwrap();

    assert_eq!(second.report.listings_reused, 4);
    assert_eq!(second.report.skipped, first.report.skipped);
    assert_eq!(second.report.files_seen, first.report.files_seen);
    assert!(paths(&second).contains(&"folder.md/inner.md".to_owned()));
}

/// A stable tree with a catalog that holds the listing of every directory as it is now.
fn stable_tree_with_catalog() -> Tree {
    let tree = stable_tree();
    // The first catalog creates the state directory, which changes the root; stable again, the
    // next scan lists the root once more and its catalog remembers that listing.
    let persist = || {
        let writer = DocumentCache::with_catalog();
        writer.scan_recall(&tree.project_only()).unwrap();
        writer.persist_catalogs();
    };
    persist();
    make_stable(tree.dir.path());
    persist();
    tree
}

#[test]
fn catalog_carries_directory_listings_to_a_new_cache() {
    let tree = stable_tree_with_catalog();
    let plain = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    let scan = DocumentCache::with_catalog()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(scan.report.listings_reused, 3);
    assert_eq!(scan.report.from_catalog, 3);
    assert_eq!(titles(&scan.documents), titles(&plain.documents));
}

#[test]
fn catalog_listing_of_a_changed_directory_is_not_trusted() {
    let tree = stable_tree_with_catalog();
    write(
        &tree.project(),
        "nested/deeper/e.md",
        topic("user", "Echo", "", "New."),
    );

    let scan = DocumentCache::with_catalog()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(scan.report.listings_reused, 2);
    assert!(titles(&scan.documents).contains(&"Echo".to_owned()));
}

/// Scans `tree` with `cache` and checks the result against a plain scan of a fresh cache.
fn assert_same_as_plain_scan(cache: &DocumentCache, tree: &Tree) {
    let scan = cache.scan_recall(&tree.project_only()).unwrap();
    let plain = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();
    assert_eq!(paths(&scan), paths(&plain));
    assert_eq!(scan.report.skipped, plain.report.skipped);
    assert_eq!(scan.report.files_seen, plain.report.files_seen);
}

#[test]
fn directory_replaced_by_a_topic_file_of_the_same_name() {
    let tree = stable_tree();
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();
    fs::remove_dir_all(tree.project().join("nested/deeper")).unwrap();
    write_topic(&tree.project(), "nested/deeper");

    assert_same_as_plain_scan(&cache, &tree);
}

#[test]
fn topic_directory_turned_into_a_topic_file() {
    let tree = stable_tree();
    write_topic(&tree.project(), "folder.md/inner.md");
    make_stable(tree.dir.path());
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();
    fs::remove_dir_all(tree.project().join("folder.md")).unwrap();
    write_topic(&tree.project(), "folder.md");

    assert_same_as_plain_scan(&cache, &tree);
}

#[test]
fn directory_moved_to_another_parent() {
    let tree = stable_tree();
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();
    fs::rename(
        tree.project().join("nested/deeper"),
        tree.project().join("deeper"),
    )
    .unwrap();

    assert_same_as_plain_scan(&cache, &tree);
}

#[cfg(unix)]
#[test]
fn topic_file_replaced_by_a_symlink() {
    let tree = stable_tree();
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();
    fs::remove_file(tree.project().join("nested/b.md")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", tree.project().join("nested/b.md")).unwrap();

    assert_same_as_plain_scan(&cache, &tree);
}

#[cfg(unix)]
#[test]
fn directory_replaced_by_a_symlink_to_a_directory() {
    let tree = stable_tree();
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();
    fs::remove_dir_all(tree.project().join("nested/deeper")).unwrap();
    std::os::unix::fs::symlink(tree.project(), tree.project().join("nested/deeper")).unwrap();

    assert_same_as_plain_scan(&cache, &tree);
}

/// Needs root (to write the catalog as one user and scan as another) and `setpriv`; elsewhere it
/// says it was skipped and returns. The scan as another user is this test run again as that user.
#[cfg(unix)]
#[test]
fn catalog_listing_is_not_used_for_a_directory_this_process_cannot_list() {
    if let Some(project) = project_root_as_another_user() {
        catalog_scan_equals_a_plain_scan(project);
        return;
    }
    let tree = Tree::new();
    let Some(setpriv) = setpriv_as_root(&tree) else {
        return;
    };
    write_topic(&tree.project(), "a.md");
    write_topic(&tree.project(), "nested/b.md");
    fs::create_dir(tree.project().join(".memrecall")).unwrap();
    // Others may search `nested` but not list it.
    set_modes(&[
        (tree.dir.path().to_path_buf(), 0o755),
        (tree.project(), 0o755),
        (tree.project().join(".memrecall"), 0o755),
        (tree.project().join("nested"), 0o711),
    ]);
    make_stable(tree.dir.path());
    let writer = DocumentCache::with_catalog();
    writer.scan_recall(&tree.project_only()).unwrap();
    writer.persist_catalogs();

    let passed = passes_as_another_user(
        &setpriv,
        "listings::catalog_listing_is_not_used_for_a_directory_this_process_cannot_list",
        &tree.project(),
    );

    assert!(
        passed,
        "the scan as another user differed from a plain scan"
    );
}

/// The part of the test above that runs as another user: a scan with the catalog root wrote
/// equals a plain scan.
#[cfg(unix)]
fn catalog_scan_equals_a_plain_scan(project: std::path::PathBuf) {
    let roots = memory_scan::MemoryRoots {
        project: Some(project),
        user: None,
    };
    let plain = DocumentCache::new().scan_recall(&roots).unwrap();
    let scan = DocumentCache::with_catalog().scan_recall(&roots).unwrap();
    assert_eq!(paths(&scan), paths(&plain));
    assert_eq!(scan.report.skipped, plain.report.skipped);
    assert_eq!(scan.report.files_seen, plain.report.files_seen);
}
