//! The walk's limits on a tree's cost: at most `MAX_DEPTH` directory levels below a root and
//! `MAX_FILES_PER_ROOT` `*.md` entries from it, each limit reported once, the documents within
//! them still returned; through a catalog's remembered listings and a watcher's known changes as
//! well.

use std::path::{Path, PathBuf};
use std::time::Duration;

use memory_scan::{
    ChangedPaths, DocumentCache, KnownChanges, MAX_DEPTH, MAX_ENTRIES_PER_DIRECTORY,
    MAX_FILES_PER_ROOT, MemoryRoots, RecallScan, RootChanges, SkipReason,
};

use crate::support::{Tree, finishes_within, make_stable, topic, write};

/// The relative path of a directory `levels` levels below the root: `d/d/…/d`.
fn nested(levels: usize) -> PathBuf {
    std::iter::repeat_n("d", levels).collect()
}

/// Makes `levels` nested directories `d` under `root`, each from its parent's handle (a path
/// thousands of levels long is longer than the system takes).
fn make_nested(root: &Path, levels: usize) {
    use rustix::fs::{CWD, Mode, OFlags, mkdirat, openat};
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let mut dir = openat(CWD, root, flags, Mode::empty()).unwrap();
    for _ in 0..levels {
        mkdirat(&dir, "d", Mode::from_raw_mode(0o755)).unwrap();
        dir = openat(&dir, "d", flags, Mode::empty()).unwrap();
    }
}

fn write_named(root: &Path, relative: &Path, title: &str) {
    let text = topic("project", title, "", "Body.");
    write(root, relative.to_str().unwrap(), text);
}

/// The relative paths of the documents found, in pool order.
fn found(scan: &RecallScan) -> Vec<PathBuf> {
    scan.documents
        .iter()
        .map(|d| d.relative_path().to_path_buf())
        .collect()
}

/// The skips a walk limit caused, with their paths.
fn limit_skips(scan: &RecallScan) -> Vec<(PathBuf, SkipReason)> {
    scan.report
        .skipped
        .iter()
        .filter(|skip| {
            matches!(
                skip.reason,
                SkipReason::TooDeep { .. }
                    | SkipReason::TooManyFiles { .. }
                    | SkipReason::TooManyEntries { .. }
            )
        })
        .map(|skip| (skip.path.clone(), skip.reason.clone()))
        .collect()
}

fn scan(roots: &MemoryRoots) -> RecallScan {
    let roots = roots.clone();
    finishes_within(Duration::from_mins(1), move || {
        DocumentCache::new().scan_recall(&roots).unwrap()
    })
}

#[test]
fn a_root_of_3000_nested_directories_is_walked_to_the_depth_limit_which_is_reported_once() {
    let tree = Tree::new();
    let root = tree.project();
    make_nested(&root, 3_000);
    write_named(&root, Path::new("top.md"), "Top");
    let deepest_walked = nested(MAX_DEPTH).join("deepest.md");
    write_named(&root, &deepest_walked, "Deepest walked");
    write_named(
        &root,
        &nested(MAX_DEPTH + 1).join("too-deep.md"),
        "Too deep",
    );

    let scan = scan(&tree.project_only());

    assert_eq!(found(&scan), vec![deepest_walked, PathBuf::from("top.md")]);
    assert_eq!(
        limit_skips(&scan),
        vec![(
            root.join(nested(MAX_DEPTH + 1)),
            SkipReason::TooDeep {
                limit_depth: MAX_DEPTH
            }
        )]
    );
}

/// A tree of `count` topics in two directories, `a/` and `b/`; returns every topic's relative
/// path in path order.
fn write_many(root: &Path, count: usize) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = (0..count)
        .map(|i| Path::new(if i % 2 == 0 { "a" } else { "b" }).join(format!("t{i:05}.md")))
        .collect();
    for path in &paths {
        write_named(root, path, "Topic");
    }
    paths.sort();
    paths
}

#[test]
fn a_root_with_more_files_than_the_limit_gives_the_first_in_path_order_and_reports_once() {
    let tree = Tree::new();
    let root = tree.project();
    let all = write_many(&root, MAX_FILES_PER_ROOT + 10);

    let scan = scan(&tree.project_only());

    assert_eq!(found(&scan), all[..MAX_FILES_PER_ROOT]);
    assert_eq!(scan.report.files_seen, MAX_FILES_PER_ROOT);
    assert_eq!(
        limit_skips(&scan),
        vec![(
            root.join(&all[MAX_FILES_PER_ROOT]),
            SkipReason::TooManyFiles {
                limit_files: MAX_FILES_PER_ROOT
            }
        )]
    );
}

#[test]
fn a_note_at_the_top_of_a_root_is_read_although_a_folder_before_it_holds_more_than_the_limit() {
    let tree = Tree::new();
    let root = tree.project();
    let many = write_many(&root, MAX_FILES_PER_ROOT + 10);
    write_named(&root, Path::new("runbook.md"), "Runbook");
    write_named(&root, Path::new("c/later.md"), "Later");

    let scan = scan(&tree.project_only());

    let mut expected = many[..MAX_FILES_PER_ROOT].to_vec();
    expected.push(PathBuf::from("runbook.md"));
    assert_eq!(found(&scan), expected);
    assert_eq!(limit_skips(&scan).len(), 1);
}

#[test]
fn a_directory_with_more_entries_than_the_limit_is_read_in_part_and_reported_once() {
    let tree = Tree::new();
    let root = tree.project();
    let big = root.join("big");
    std::fs::create_dir(&big).unwrap();
    for i in 0..MAX_ENTRIES_PER_DIRECTORY + 10 {
        std::fs::File::create(big.join(format!("{i}.txt"))).unwrap();
    }
    write_named(&root, Path::new("top.md"), "Top");

    let first = scan(&tree.project_only());
    let second = scan(&tree.project_only());

    assert_eq!(found(&first), vec![PathBuf::from("top.md")]);
    let expected = vec![(
        big,
        SkipReason::TooManyEntries {
            limit_entries: MAX_ENTRIES_PER_DIRECTORY,
        },
    )];
    assert_eq!(limit_skips(&first), expected);
    assert_eq!(limit_skips(&second), expected);
}

/// Scans `tree` with a catalog, writes it, and scans again from it: the second scan walks the
/// catalog's remembered listings.
fn scan_from_a_catalog(tree: &Tree) -> (RecallScan, RecallScan) {
    make_stable(&tree.project());
    let first = DocumentCache::with_catalog();
    let without = first.scan_recall(&tree.project_only()).unwrap();
    assert!(first.persist_catalogs()[0].outcome.is_ok());
    let with = DocumentCache::with_catalog()
        .scan_recall(&tree.project_only())
        .unwrap();
    assert!(with.report.catalog_used());
    assert!(with.report.listings_reused > 0);
    (without, with)
}

#[test]
fn a_catalogs_remembered_listings_keep_the_file_limit() {
    let tree = Tree::new();
    write_many(&tree.project(), MAX_FILES_PER_ROOT + 10);

    let (without, with) = scan_from_a_catalog(&tree);

    assert_eq!(found(&with), found(&without));
    assert_eq!(found(&with).len(), MAX_FILES_PER_ROOT);
    assert_eq!(limit_skips(&with), limit_skips(&without));
    assert_eq!(limit_skips(&with).len(), 1);
}

#[test]
fn a_catalogs_remembered_listings_keep_the_depth_limit() {
    let tree = Tree::new();
    let root = tree.project();
    write_named(
        &root,
        &nested(MAX_DEPTH + 3).join("too-deep.md"),
        "Too deep",
    );
    write_named(
        &root,
        &nested(MAX_DEPTH).join("deepest.md"),
        "Deepest walked",
    );

    let (without, with) = scan_from_a_catalog(&tree);

    assert_eq!(found(&with), found(&without));
    assert_eq!(found(&with), vec![nested(MAX_DEPTH).join("deepest.md")]);
    assert_eq!(limit_skips(&with), limit_skips(&without));
    assert_eq!(limit_skips(&with).len(), 1);
}

#[test]
fn a_scan_told_of_changes_below_the_depth_limit_keeps_the_limit() {
    let tree = Tree::new();
    let root = tree.project();
    write_named(
        &root,
        &nested(MAX_DEPTH).join("deepest.md"),
        "Deepest walked",
    );
    let cache = DocumentCache::new();
    cache.scan_recall(&tree.project_only()).unwrap();
    let too_deep = nested(MAX_DEPTH + 2).join("too-deep.md");
    write_named(&root, &too_deep, "Too deep");
    write_named(&root, Path::new("new.md"), "New");
    // What a watcher reports: the two directories made, the two files written.
    let (made, made_below) = (nested(MAX_DEPTH + 1), nested(MAX_DEPTH + 2));
    let changed = [&made, &made_below, &too_deep, Path::new("new.md")];
    let changes = KnownChanges {
        project: RootChanges::Only(
            changed
                .iter()
                .map(|path| path.to_str().unwrap())
                .collect::<ChangedPaths>(),
        ),
        user: RootChanges::Unknown,
    };

    let scan = cache
        .scan_recall_knowing(&tree.project_only(), &changes, None)
        .unwrap();

    assert_eq!(
        found(&scan),
        vec![
            nested(MAX_DEPTH).join("deepest.md"),
            PathBuf::from("new.md")
        ]
    );
    assert_eq!(
        limit_skips(&scan),
        vec![(
            root.join(nested(MAX_DEPTH + 1)),
            SkipReason::TooDeep {
                limit_depth: MAX_DEPTH
            }
        )]
    );
}
