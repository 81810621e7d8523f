//! Temporary files of catalog writes: the next write in a state directory removes those whose
//! writer is gone and keeps those of live writers.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use memory_scan::{CATALOG_DIR_NAME, CATALOG_FILE_NAME, DocumentCache};

use crate::support::{Tree, write_topic};

/// A process id no process can have: above Linux's largest `pid_max` (2^22) and every other
/// Unix's.
const NO_SUCH_PROCESS: i32 = i32::MAX;

/// A project tree whose catalog was written once, so its state directory exists.
fn tree_with_state_directory() -> Tree {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    let cache = DocumentCache::with_catalog();
    cache.scan_recall(&tree.project_only()).unwrap();
    assert!(cache.persist_catalogs()[0].outcome.is_ok());
    tree
}

/// Leaves a temporary file named `name` in the tree's state directory, as a writer that died
/// would; returns its path.
fn leave_temporary(tree: &Tree, name: &str) -> PathBuf {
    let path = tree.project().join(CATALOG_DIR_NAME).join(name);
    fs::write(&path, b"half a catalog").unwrap();
    path
}

/// Makes the tree's catalog out of date and writes it again.
fn write_catalog_again(tree: &Tree) {
    write_topic(&tree.project(), "b.md");
    let cache = DocumentCache::with_catalog();
    cache.scan_recall(&tree.project_only()).unwrap();
    let writes = cache.persist_catalogs();
    assert_eq!(writes[0].outcome.as_ref().ok(), Some(&2));
}

fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

#[test]
fn the_next_catalog_write_removes_a_temporary_file_whose_writer_is_gone() {
    let tree = tree_with_state_directory();
    let dead = leave_temporary(&tree, &format!("catalog.tmp-{NO_SUCH_PROCESS}-0"));

    write_catalog_again(&tree);

    assert!(!exists(&dead));
}

#[test]
fn the_next_catalog_write_keeps_a_temporary_file_of_a_live_writer() {
    let tree = tree_with_state_directory();
    let live = leave_temporary(&tree, &format!("catalog.tmp-{}-999", std::process::id()));

    write_catalog_again(&tree);

    assert!(exists(&live));
}

#[test]
fn the_next_catalog_write_removes_a_temporary_file_older_than_any_write_whoever_wrote_it() {
    let tree = tree_with_state_directory();
    let old = leave_temporary(&tree, &format!("catalog.tmp-{}-998", std::process::id()));
    fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_hours(1))
        .unwrap();

    write_catalog_again(&tree);

    assert!(!exists(&old));
}

#[test]
fn the_next_catalog_write_leaves_other_files_in_the_state_directory_alone() {
    let tree = tree_with_state_directory();
    let other = leave_temporary(&tree, "notes");

    write_catalog_again(&tree);

    assert!(exists(&other));
}

#[test]
fn a_catalog_write_that_fails_leaves_no_temporary_file() {
    let tree = tree_with_state_directory();
    let state = tree.project().join(CATALOG_DIR_NAME);
    // A directory that is not empty in the catalog's place: renaming over it fails, whoever runs.
    fs::remove_file(state.join(CATALOG_FILE_NAME)).unwrap();
    fs::create_dir(state.join(CATALOG_FILE_NAME)).unwrap();
    fs::write(state.join(CATALOG_FILE_NAME).join("kept"), b"").unwrap();
    write_topic(&tree.project(), "b.md");
    let cache = DocumentCache::with_catalog();
    cache.scan_recall(&tree.project_only()).unwrap();

    let writes = cache.persist_catalogs();

    assert!(writes[0].outcome.is_err(), "{:?}", writes[0].outcome);
    let left: Vec<String> = fs::read_dir(&state)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec![CATALOG_FILE_NAME.to_owned()]);
}
