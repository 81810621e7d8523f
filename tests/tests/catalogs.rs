//! Where catalogs go: under memrecall's home, never inside a memory root.

use std::path::{Path, PathBuf};

use crate::support::Tree;

/// Every file below `dir`, relative to it.
fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    found.sort();
    found
}

#[test]
fn recalls_leave_nothing_inside_the_roots_but_the_notes_and_the_second_uses_the_catalog() {
    let tree = Tree::standard();
    let before = [files_below(&tree.project()), files_below(&tree.user())];
    tree.age_files();

    tree.run_with_roots("recall", "release checklist", &[])
        .success();
    let second = tree.run_with_roots("recall", "release checklist", &[]);

    second.success();
    assert_eq!(
        [files_below(&tree.project()), files_below(&tree.user())],
        before
    );
    assert!(
        !second.stdout.contains(" 0 file(s) known from the catalog"),
        "{}",
        second.stdout
    );
    assert!(tree.base().join("home/catalogs").is_dir());
}

#[test]
fn a_catalog_an_earlier_version_kept_inside_a_root_is_removed_when_seen() {
    let tree = Tree::standard();
    let legacy = tree.project().join(".memrecall");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::write(legacy.join("catalog"), "an old catalog").unwrap();
    std::fs::write(legacy.join("catalog.tmp-999999999-0"), "a dead writer's").unwrap();

    tree.run_with_roots("recall", "release checklist", &[])
        .success();

    assert!(!legacy.exists(), "{:?}", files_below(&tree.project()));
}

#[test]
fn a_file_of_someone_elses_keeps_the_old_catalog_folder() {
    let tree = Tree::standard();
    let legacy = tree.project().join(".memrecall");
    std::fs::create_dir_all(&legacy).unwrap();
    std::fs::write(legacy.join("catalog"), "an old catalog").unwrap();
    std::fs::write(legacy.join("notes.txt"), "not memrecall's").unwrap();

    tree.run_with_roots("recall", "release checklist", &[])
        .success();

    assert!(!legacy.join("catalog").exists());
    assert_eq!(
        std::fs::read_to_string(legacy.join("notes.txt")).unwrap(),
        "not memrecall's"
    );
}
