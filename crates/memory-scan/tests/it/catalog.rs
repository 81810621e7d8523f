use std::fs;
#[cfg(unix)]
use std::path::Path;
#[cfg(unix)]
use std::process::Command;
use std::sync::Arc;

use lexical_score::{QueryTokens, score};
use memory_scan::{
    CatalogOutcome, CatalogRejection, CatalogStore, DocumentCache, RecallScan, ScannedDocument,
    catalog_path,
};

use crate::support::{Tree, make_stable, topic, write, write_topic};
#[cfg(unix)]
use crate::support::{
    finishes_within, make_fifo, passes_as_another_user, project_root_as_another_user, set_modes,
    setpriv_as_root,
};

/// A project tree of three stable topics and one stable non-topic, with its catalog written.
pub(crate) fn tree_with_catalog() -> Tree {
    let tree = Tree::new();
    write(
        &tree.project(),
        "a.md",
        topic("user", "Alpha", "first", "Body of alpha."),
    );
    write(
        &tree.project(),
        "nested/b.md",
        topic("project", "Beta", "second", "Body of beta, ünïcödé 記憶."),
    );
    write_topic(&tree.project(), "c.md");
    write(&tree.project(), "notes.md", "no frontmatter here");
    make_stable(tree.dir.path());
    let cache = DocumentCache::with_catalog();
    cache.scan_recall(&tree.project_only()).unwrap();
    let writes = cache.persist_catalogs();
    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0].outcome.as_ref().ok(), Some(&4));
    tree
}

fn scan_with_catalog(tree: &Tree) -> RecallScan {
    DocumentCache::with_catalog()
        .scan_recall(&tree.project_only())
        .unwrap()
}

/// A scan by a cache for one recall, which reads the catalog whole.
pub(crate) fn scan_for_one_recall(tree: &Tree) -> RecallScan {
    DocumentCache::for_one_recall(CatalogStore::InRoot)
        .scan_recall(&tree.project_only())
        .unwrap()
}

/// Cuts the last ten bytes off the tree's catalog.
fn truncate_catalog(tree: &Tree) {
    let path = catalog_path(&tree.project());
    let bytes = fs::read(&path).unwrap();
    fs::write(&path, &bytes[..bytes.len() - 10]).unwrap();
}

/// Checks that `scan` rejected its catalog as damaged and read the three topics instead.
pub(crate) fn assert_rejected_as_damaged(scan: &RecallScan) {
    let CatalogOutcome::Rejected { reason } = catalog_outcome(scan) else {
        panic!("truncated catalog was used");
    };
    assert!(
        matches!(**reason, CatalogRejection::Damaged { .. }),
        "{reason}"
    );
    assert_eq!(scan.documents.len(), 3);
}

/// Everything recall can observe of a document.
fn observable(documents: &[Arc<ScannedDocument>]) -> Vec<String> {
    documents
        .iter()
        .map(|d| {
            format!(
                "{:?} {} {} {:?} {:?} {:?} {:?} {:?}",
                d.scope(),
                d.path().display(),
                d.relative_path().display(),
                d.topic(),
                d.mtime(),
                d.prepared().title(),
                d.prepared().description(),
                d.prepared().body_window(),
            )
        })
        .collect()
}

pub(crate) fn catalog_outcome(scan: &RecallScan) -> &CatalogOutcome {
    &scan.report.catalogs[0].outcome
}

#[test]
fn fresh_cache_starts_from_the_catalog_without_reading_unchanged_files() {
    let tree = tree_with_catalog();

    let scan = scan_with_catalog(&tree);

    assert_eq!(
        catalog_outcome(&scan),
        &CatalogOutcome::Loaded { entries: 4 }
    );
    assert!(scan.report.catalog_used());
    assert_eq!(
        (
            scan.report.reread,
            scan.report.reused,
            scan.report.from_catalog
        ),
        (0, 4, 4)
    );
}

#[test]
fn results_with_a_catalog_equal_results_of_a_plain_scan() {
    let tree = tree_with_catalog();

    let with_catalog = scan_with_catalog(&tree);
    let plain = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(
        observable(&with_catalog.documents),
        observable(&plain.documents)
    );
    assert_eq!(with_catalog.report.skipped, plain.report.skipped);
    assert_eq!(
        (with_catalog.report.files_seen, with_catalog.report.parsed),
        (plain.report.files_seen, plain.report.parsed)
    );
}

#[test]
fn a_cache_for_one_recall_loads_the_catalog_and_finds_what_a_plain_scan_finds() {
    let tree = tree_with_catalog();

    let one_recall = scan_for_one_recall(&tree);
    let plain = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(
        catalog_outcome(&one_recall),
        &CatalogOutcome::Loaded { entries: 4 }
    );
    assert_eq!(one_recall.report.from_catalog, 4);
    assert_eq!(
        observable(&one_recall.documents),
        observable(&plain.documents)
    );
    assert_eq!(one_recall.report.skipped, plain.report.skipped);
}

/// The documents of a cache for one recall share the buffer the catalog was read into; memrecall
/// replaces a catalog by renaming a new file over it, which must leave them as they were.
#[test]
fn documents_from_a_catalog_read_whole_stay_as_read_when_a_new_catalog_replaces_it() {
    let tree = tree_with_catalog();
    let one_recall = DocumentCache::for_one_recall(CatalogStore::InRoot);
    let scan = one_recall.scan_recall(&tree.project_only()).unwrap();
    assert_eq!(scan.report.from_catalog, 4);
    let before = observable(&scan.documents);

    write(
        &tree.project(),
        "a.md",
        topic("user", "Alpha v2", "", "Edited."),
    );
    let writer = DocumentCache::with_catalog();
    writer.scan_recall(&tree.project_only()).unwrap();
    assert_eq!(writer.persist_catalogs()[0].outcome.as_ref().ok(), Some(&4));
    // The cache for one recall writes its own next catalog over the file it read, too.
    let rescan = one_recall.scan_recall(&tree.project_only()).unwrap();
    assert_eq!(rescan.documents[0].title(), "Alpha v2");
    assert_eq!(
        one_recall.persist_catalogs()[0].outcome.as_ref().ok(),
        Some(&4)
    );

    assert_eq!(observable(&scan.documents), before);
    assert_eq!(scan.documents[0].title(), "Alpha");
    let next = scan_with_catalog(&tree);
    assert_eq!(next.documents[0].title(), "Alpha v2");
    // The edited file is too new to be trusted from a catalog; the other three come from it.
    assert_eq!(next.report.from_catalog, 3);
}

/// Scores of every document for `query` and for a query with the same words made afresh, which
/// nothing was scored ahead for.
fn scores_ahead_and_afresh(scan: &RecallScan, query: &QueryTokens, text: &str) -> Vec<(u32, u32)> {
    let afresh = QueryTokens::new(text);
    scan.documents
        .iter()
        .map(|d| (score(query, &**d), score(&afresh, &**d)))
        .collect()
}

#[test]
fn a_scan_for_a_query_finds_what_a_plain_scan_finds_and_scores_it_correctly() {
    let tree = tree_with_catalog();
    let text = "alpha body of beta 記憶";
    let query = QueryTokens::new(text);
    let from_catalog = DocumentCache::with_catalog()
        .scan_recall_for(&tree.project_only(), &query)
        .unwrap();
    let read = DocumentCache::new()
        .scan_recall_for(&tree.project_only(), &query)
        .unwrap();
    let plain = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(from_catalog.report.from_catalog, 4);
    for scan in [&from_catalog, &read] {
        assert_eq!(observable(&scan.documents), observable(&plain.documents));
        assert_eq!(scan.report.skipped, plain.report.skipped);
        let scores = scores_ahead_and_afresh(scan, &query, text);
        assert!(
            scores.iter().all(|(ahead, afresh)| ahead == afresh),
            "{scores:?}"
        );
        assert!(scores.iter().any(|&(ahead, _)| ahead > 0));
    }
}

#[test]
fn edited_file_is_read_again_and_shows_its_new_content() {
    let tree = tree_with_catalog();
    write(
        &tree.project(),
        "a.md",
        topic("user", "Alpha v2", "", "Edited."),
    );

    let scan = scan_with_catalog(&tree);

    assert_eq!(scan.documents[0].title(), "Alpha v2");
    assert_eq!((scan.report.reread, scan.report.from_catalog), (1, 3));
}

#[test]
fn deleted_file_is_dropped() {
    let tree = tree_with_catalog();
    fs::remove_file(tree.project().join("c.md")).unwrap();

    let scan = scan_with_catalog(&tree);

    let titles: Vec<&str> = scan.documents.iter().map(|d| d.title()).collect();
    assert_eq!(titles, vec!["Alpha", "Beta"]);
    assert_eq!(scan.report.reread, 0);
}

#[test]
fn renamed_file_appears_under_its_new_path_only() {
    let tree = tree_with_catalog();
    fs::rename(tree.project().join("c.md"), tree.project().join("d.md")).unwrap();

    let scan = scan_with_catalog(&tree);

    let paths: Vec<String> = scan
        .documents
        .iter()
        .map(|d| d.relative_path().display().to_string())
        .collect();
    assert_eq!(paths, vec!["a.md", "d.md", "nested/b.md"]);
    assert_eq!(scan.report.reread, 1);
}

#[test]
fn new_file_is_read_and_the_rest_comes_from_the_catalog() {
    let tree = tree_with_catalog();
    write(
        &tree.project(),
        "e.md",
        topic("feedback", "Echo", "", "New."),
    );

    let scan = scan_with_catalog(&tree);

    assert_eq!(scan.documents.len(), 4);
    assert_eq!((scan.report.reread, scan.report.from_catalog), (1, 4));
}

#[test]
fn same_size_rewrite_inside_the_racy_margin_is_never_served_from_the_catalog() {
    let tree = Tree::new();
    let path = write(&tree.project(), "a.md", topic("user", "AAAA", "", "one"));
    let cache = DocumentCache::with_catalog();
    cache.scan_recall(&tree.project_only()).unwrap();
    cache.persist_catalogs();
    // Same size, and within the same second as the first version.
    fs::write(&path, topic("user", "BBBB", "", "two")).unwrap();

    let scan = scan_with_catalog(&tree);

    assert_eq!(scan.documents[0].title(), "BBBB");
    assert_eq!((scan.report.reread, scan.report.from_catalog), (1, 0));
}

#[test]
fn corrupted_catalog_is_ignored_and_rebuilt() {
    let tree = tree_with_catalog();
    let path = catalog_path(&tree.project());
    let mut bytes = fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x55;
    fs::write(&path, bytes).unwrap();

    let cache = DocumentCache::with_catalog();
    let scan = cache.scan_recall(&tree.project_only()).unwrap();
    cache.persist_catalogs();

    assert!(matches!(
        catalog_outcome(&scan),
        CatalogOutcome::Rejected { .. }
    ));
    assert_eq!((scan.documents.len(), scan.report.reread), (3, 4));
    let rebuilt = scan_with_catalog(&tree);
    assert_eq!(
        catalog_outcome(&rebuilt),
        &CatalogOutcome::Loaded { entries: 4 }
    );
}

#[cfg(unix)]
#[test]
fn fifo_in_the_catalogs_place_is_rejected_without_waiting_for_a_writer() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    fs::create_dir(tree.project().join(".memrecall")).unwrap();
    make_fifo(&catalog_path(&tree.project()));

    let roots = tree.project_only();
    let scan = finishes_within(std::time::Duration::from_secs(30), move || {
        DocumentCache::with_catalog().scan_recall(&roots).unwrap()
    });

    assert!(matches!(
        catalog_outcome(&scan),
        CatalogOutcome::Rejected { .. }
    ));
    assert_eq!(scan.documents.len(), 1);
}

#[test]
fn truncated_catalog_is_ignored() {
    let tree = tree_with_catalog();
    truncate_catalog(&tree);

    let scan = scan_with_catalog(&tree);

    assert_rejected_as_damaged(&scan);
}

#[test]
fn a_cache_for_one_recall_rejects_a_truncated_catalog_and_reads_the_files() {
    let tree = tree_with_catalog();
    truncate_catalog(&tree);

    let scan = scan_for_one_recall(&tree);

    assert_rejected_as_damaged(&scan);
}

#[test]
fn a_cache_for_one_recall_rejects_an_empty_catalog_and_reads_the_files() {
    let tree = tree_with_catalog();
    fs::write(catalog_path(&tree.project()), b"").unwrap();

    let scan = scan_for_one_recall(&tree);

    assert!(
        matches!(catalog_outcome(&scan), CatalogOutcome::Rejected { .. }),
        "{:?}",
        catalog_outcome(&scan)
    );
    assert_eq!(scan.documents.len(), 3);
}

#[test]
fn catalog_of_an_older_format_is_ignored() {
    let tree = tree_with_catalog();
    let path = catalog_path(&tree.project());
    let mut bytes = fs::read(&path).unwrap();
    // The format version follows the 8-byte magic.
    bytes[8..12].copy_from_slice(&0u32.to_le_bytes());
    fs::write(&path, bytes).unwrap();

    let scan = scan_with_catalog(&tree);

    let CatalogOutcome::Rejected { reason } = catalog_outcome(&scan) else {
        panic!("old catalog was used");
    };
    assert!(
        matches!(**reason, CatalogRejection::OtherVersion { format: 0, .. }),
        "{reason}"
    );
    assert_eq!(scan.report.reread, 4);
}

#[test]
fn foreign_file_in_the_catalog_place_is_ignored() {
    let tree = tree_with_catalog();
    fs::write(catalog_path(&tree.project()), "not a catalog at all").unwrap();

    let scan = scan_with_catalog(&tree);

    assert!(
        matches!(catalog_outcome(&scan), CatalogOutcome::Rejected { reason } if matches!(**reason, CatalogRejection::NotACatalog))
    );
    assert_eq!(scan.documents.len(), 3);
}

#[test]
fn catalog_is_never_a_topic() {
    let tree = tree_with_catalog();

    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(scan.report.files_seen, 4);
}

#[test]
fn missing_root_gets_no_catalog_and_is_not_created() {
    let tree = Tree::new();
    fs::remove_dir(tree.project()).unwrap();
    let cache = DocumentCache::with_catalog();
    cache.scan_recall(&tree.project_only()).unwrap();

    let writes = cache.persist_catalogs();

    assert!(writes.iter().all(|w| w.outcome.is_err()));
    assert!(!tree.project().exists());
}

#[test]
fn unwritable_state_location_leaves_recall_working() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    // A file where the state directory should be: nothing can be written under it.
    fs::write(tree.project().join(".memrecall"), "occupied").unwrap();
    let cache = DocumentCache::with_catalog();

    let scan = cache.scan_recall(&tree.project_only()).unwrap();
    let writes = cache.persist_catalogs();

    assert_eq!(scan.documents.len(), 1);
    assert!(writes[0].outcome.is_err());
    assert_eq!(
        fs::read_to_string(tree.project().join(".memrecall")).unwrap(),
        "occupied"
    );
}

/// Makes a directory read-only for the duration of a test, also for a superuser (through the
/// immutable attribute when permissions alone do not stop writes); restores it on drop.
#[cfg(unix)]
struct ReadOnly<'a> {
    dir: &'a Path,
    immutable: bool,
}

#[cfg(unix)]
impl<'a> ReadOnly<'a> {
    fn new(dir: &'a Path) -> Option<Self> {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o555)).unwrap();
        let mut guard = Self {
            dir,
            immutable: false,
        };
        if guard.writable() {
            guard.immutable = Command::new("chattr")
                .arg("+i")
                .arg(dir)
                .status()
                .is_ok_and(|s| s.success());
        }
        (!guard.writable()).then_some(guard)
    }

    fn writable(&self) -> bool {
        let probe = self.dir.join("probe");
        let created = fs::write(&probe, "").is_ok();
        let _ = fs::remove_file(probe);
        created
    }
}

#[cfg(unix)]
impl Drop for ReadOnly<'_> {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if self.immutable {
            let _ = Command::new("chattr").arg("-i").arg(self.dir).status();
        }
        let _ = fs::set_permissions(self.dir, fs::Permissions::from_mode(0o755));
    }
}

#[cfg(unix)]
#[test]
fn read_only_memory_directory_gets_no_catalog_and_recall_still_works() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    make_stable(tree.dir.path());
    let project = tree.project();
    let Some(_read_only) = ReadOnly::new(&project) else {
        eprintln!(
            "skipped: this user can write to a read-only directory and cannot set it immutable"
        );
        return;
    };
    let cache = DocumentCache::with_catalog();

    let first = cache.scan_recall(&tree.project_only()).unwrap();
    let writes = cache.persist_catalogs();
    let second = cache.scan_recall(&tree.project_only()).unwrap();

    assert_eq!(first.documents.len(), 1);
    assert!(writes[0].outcome.is_err());
    assert!(!catalog_path(&tree.project()).exists());
    assert_eq!((second.report.reread, second.report.reused), (0, 1));
}

#[test]
fn concurrent_recalls_never_leave_a_damaged_catalog() {
    let tree = tree_with_catalog();
    for i in 0..40 {
        write_topic(&tree.project(), &format!("more/{i:02}.md"));
    }
    make_stable(tree.dir.path());

    let handles: Vec<_> = (0..4)
        .map(|_| {
            let roots = tree.project_only();
            std::thread::spawn(move || {
                for _ in 0..10 {
                    // A new cache each round, as a new process would have.
                    let cache = DocumentCache::with_catalog();
                    let scan = cache.scan_recall(&roots).unwrap();
                    assert_eq!(scan.documents.len(), 43);
                    for write in cache.persist_catalogs() {
                        assert_eq!(
                            write.outcome.as_ref().ok(),
                            Some(&44),
                            "{:?}",
                            write.outcome
                        );
                    }
                }
            })
        })
        .collect();
    for handle in handles {
        handle.join().unwrap();
    }

    let scan = scan_with_catalog(&tree);
    assert_eq!(
        catalog_outcome(&scan),
        &CatalogOutcome::Loaded { entries: 44 }
    );
    assert_eq!(scan.report.reread, 0);
    let leftovers = fs::read_dir(tree.project().join(".memrecall"))
        .unwrap()
        .count();
    assert_eq!(leftovers, 1, "only the catalog remains");
}

mod damaged {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Whatever bytes of a catalog are flipped or cut, recall returns what a plain scan
        /// returns: damage is either detected (and the catalog ignored) or harmless.
        #[test]
        fn damaged_catalog_never_changes_results(
            flips in prop::collection::vec((any::<prop::sample::Index>(), 1u8..), 0..4),
            cut in prop::option::of(any::<prop::sample::Index>()),
        ) {
            let tree = tree_with_catalog();
            let path = catalog_path(&tree.project());
            let mut bytes = fs::read(&path).unwrap();
            for (at, mask) in flips {
                let at = at.index(bytes.len());
                bytes[at] ^= mask;
            }
            if let Some(cut) = cut {
                bytes.truncate(cut.index(bytes.len()));
            }
            fs::write(&path, &bytes).unwrap();

            let with_catalog = scan_with_catalog(&tree);
            let plain = DocumentCache::new().scan_recall(&tree.project_only()).unwrap();

            prop_assert_eq!(observable(&with_catalog.documents), observable(&plain.documents));
            prop_assert_eq!(with_catalog.report.skipped, plain.report.skipped);
        }
    }
}

#[test]
fn the_same_root_given_for_both_scopes_gets_one_catalog_holding_the_project_scope() {
    let tree = tree_with_catalog();
    let roots = memory_scan::MemoryRoots {
        project: Some(tree.project()),
        user: Some(tree.project()),
    };
    write_topic(&tree.project(), "d.md");
    make_stable(tree.dir.path());

    let cache = DocumentCache::with_catalog();
    cache.scan_recall(&roots).unwrap();
    let writes = cache.persist_catalogs();

    assert_eq!(writes.len(), 1);
    assert_eq!(writes[0].scope, memory_scan::Scope::Project);
    assert_eq!(writes[0].outcome.as_ref().ok(), Some(&5));
    let again = scan_with_catalog(&tree);
    assert_eq!(
        catalog_outcome(&again),
        &CatalogOutcome::Loaded { entries: 5 }
    );
}

#[test]
fn the_same_root_for_both_scopes_keeps_its_catalog_across_runs_where_nothing_changed() {
    let tree = tree_with_catalog();
    let roots = memory_scan::MemoryRoots {
        project: Some(tree.project()),
        user: Some(tree.project()),
    };

    for run in 0..4 {
        let cache = DocumentCache::with_catalog();
        let scan = cache.scan_recall(&roots).unwrap();
        assert_eq!(
            catalog_outcome(&scan),
            &CatalogOutcome::Loaded { entries: 4 },
            "run {run}"
        );
        let writes = cache.persist_catalogs();
        // The first write made the catalog's state directory, which changed the root's listing,
        // so the first run here may write once; after that nothing changes and nothing is written.
        if run > 0 {
            assert!(writes.is_empty(), "run {run} wrote {writes:?}");
        }
    }
}

/// Needs root (to make a file another user cannot read) and `setpriv`; elsewhere it says it was
/// skipped and returns. The scans as another user are this test run again as that user.
#[cfg(unix)]
#[test]
fn a_file_that_cannot_be_read_is_retried_every_scan_without_rewriting_the_catalog() {
    if let Some(project) = project_root_as_another_user() {
        scans_by_a_user_who_cannot_read_one_file_write_the_catalog_once(project);
        return;
    }
    let tree = Tree::new();
    let Some(setpriv) = setpriv_as_root(&tree) else {
        return;
    };
    write_topic(&tree.project(), "a.md");
    write_topic(&tree.project(), "secret.md");
    // Made before dating the tree back, so the catalog's first write does not change the root's listing.
    fs::create_dir(tree.project().join(".memrecall")).unwrap();
    set_modes(&[
        (tree.dir.path().to_path_buf(), 0o755),
        (tree.project(), 0o755),
        (tree.project().join(".memrecall"), 0o777),
        (tree.project().join("secret.md"), 0o000),
    ]);
    // The state directory must belong to the user who scans.
    std::os::unix::fs::chown(tree.project().join(".memrecall"), Some(65534), Some(65534)).unwrap();
    make_stable(tree.dir.path());

    let passed = passes_as_another_user(
        &setpriv,
        "catalog::a_file_that_cannot_be_read_is_retried_every_scan_without_rewriting_the_catalog",
        &tree.project(),
    );

    assert!(passed, "the scans as another user failed");
}

/// The part of the test above that runs as another user: scans that cannot read one file
/// report it every time, and the catalog is written once.
#[cfg(unix)]
fn scans_by_a_user_who_cannot_read_one_file_write_the_catalog_once(project: std::path::PathBuf) {
    let roots = memory_scan::MemoryRoots {
        project: Some(project),
        user: None,
    };
    let unreadable = |scan: &RecallScan| {
        scan.report.skipped.iter().any(|skipped| {
            skipped.path.ends_with("secret.md")
                && matches!(skipped.reason, memory_scan::SkipReason::Unreadable { .. })
        })
    };
    let session = DocumentCache::with_catalog();
    let first = session.scan_recall(&roots).unwrap();
    let first_writes = session.persist_catalogs();
    let again = session.scan_recall(&roots).unwrap();
    let again_writes = session.persist_catalogs();
    let next_process = DocumentCache::with_catalog();
    let from_catalog = next_process.scan_recall(&roots).unwrap();
    let from_catalog_writes = next_process.persist_catalogs();

    assert!(unreadable(&first) && unreadable(&again) && unreadable(&from_catalog));
    assert_eq!(first.documents.len(), 1);
    assert!(first_writes.len() == 1 && first_writes[0].outcome.is_ok());
    assert!(again_writes.is_empty(), "rewritten: {again_writes:?}");
    assert_eq!(from_catalog.report.from_catalog, 1);
    assert!(
        from_catalog_writes.is_empty(),
        "rewritten: {from_catalog_writes:?}"
    );
}

#[test]
fn a_catalog_kept_under_a_store_directory_leaves_the_root_untouched_and_warms_the_next_cache() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    write_topic(&tree.project(), "nested/b.md");
    make_stable(tree.dir.path());
    let store_dir = tree.dir.path().join("home/catalogs");
    let store = memory_scan::CatalogStore::Under(store_dir.clone());

    let first = DocumentCache::with_catalog_store(store.clone());
    first.scan_recall(&tree.project_only()).unwrap();
    let writes = first.persist_catalogs();

    assert_eq!(writes[0].outcome.as_ref().ok(), Some(&2));
    assert!(
        writes[0].path.starts_with(&store_dir),
        "{:?}",
        writes[0].path
    );
    assert_eq!(writes[0].path, store.catalog_path(&tree.project()));
    assert!(!catalog_path(&tree.project()).exists());
    assert!(!tree.project().join(memory_scan::CATALOG_DIR_NAME).exists());
    let second = DocumentCache::with_catalog_store(store);
    let scan = second.scan_recall(&tree.project_only()).unwrap();
    assert_eq!(
        scan.report.catalogs[0].outcome,
        CatalogOutcome::Loaded { entries: 2 }
    );
}

#[cfg(unix)]
#[test]
fn a_store_directory_is_created_private_to_the_user() {
    use std::os::unix::fs::PermissionsExt as _;
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    let store_dir = tree.dir.path().join("home/catalogs");
    let cache =
        DocumentCache::with_catalog_store(memory_scan::CatalogStore::Under(store_dir.clone()));
    cache.scan_recall(&tree.project_only()).unwrap();
    assert!(cache.persist_catalogs()[0].outcome.is_ok());
    let mode = fs::metadata(&store_dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}
