use std::fs;
use std::path::{Path, PathBuf};

use memory_scan::{DocumentCache, MemoryRoots, MemoryType, ScanError, Scope};

use crate::support::{Tree, at, set_mtime, topic, write, write_topic};

fn relative_paths(scan: &memory_scan::RecallScan) -> Vec<(Scope, PathBuf)> {
    scan.documents
        .iter()
        .map(|d| (d.scope(), d.relative_path().to_path_buf()))
        .collect()
}

#[test]
fn recall_returns_project_documents_before_user_documents_sorted_by_relative_path() {
    let tree = Tree::new();
    write_topic(&tree.user(), "a.md");
    write_topic(&tree.project(), "z.md");
    write_topic(&tree.project(), "b/c.md");
    write_topic(&tree.project(), "a.md");
    write_topic(&tree.user(), "0/x.md");

    let scan = DocumentCache::new().scan_recall(&tree.roots()).unwrap();

    assert_eq!(
        relative_paths(&scan),
        vec![
            (Scope::Project, PathBuf::from("a.md")),
            (Scope::Project, PathBuf::from("b/c.md")),
            (Scope::Project, PathBuf::from("z.md")),
            (Scope::User, PathBuf::from("0/x.md")),
            (Scope::User, PathBuf::from("a.md")),
        ]
    );
}

#[test]
fn recall_has_no_cap() {
    let tree = Tree::new();
    for i in 0..250 {
        write_topic(&tree.project(), &format!("t{i:03}.md"));
    }
    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();
    assert_eq!(scan.documents.len(), 250);
}

#[test]
fn same_relative_path_in_both_scopes_stays_two_documents() {
    let tree = Tree::new();
    write_topic(&tree.project(), "user/role.md");
    write_topic(&tree.user(), "user/role.md");

    let scan = DocumentCache::new().scan_recall(&tree.roots()).unwrap();

    assert_eq!(scan.documents.len(), 2);
    assert_ne!(scan.documents[0].path(), scan.documents[1].path());
}

#[test]
fn documents_carry_absolute_path_relative_path_fields_and_file_mtime() {
    let tree = Tree::new();
    let path = write(
        &tree.project(),
        "notes/deploy.md",
        topic("reference", "Deploy", "Dashboards", "See the board."),
    );
    set_mtime(&path, 1_700_000_000);

    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();
    let document = &scan.documents[0];

    assert!(document.path().is_absolute());
    assert_eq!(document.path(), path);
    assert_eq!(document.relative_path(), Path::new("notes/deploy.md"));
    assert_eq!(document.scope(), Scope::Project);
    assert_eq!(document.memory_type(), MemoryType::Reference);
    assert_eq!(document.title(), "Deploy");
    assert_eq!(document.description(), "Dashboards");
    assert_eq!(document.body(), "See the board.");
    assert_eq!(document.mtime(), at(1_700_000_000));
}

#[test]
fn scanned_documents_carry_prepared_scoring_text_of_their_fields() {
    let tree = Tree::new();
    write(
        &tree.project(),
        "a.md",
        topic("user", "ＡＢＣ Title", "Desc", "Body"),
    );
    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();
    let expected = lexical_score::PreparedText::new("ＡＢＣ Title", "Desc", "Body");
    assert_eq!(scan.documents[0].prepared(), &expected);
}

#[test]
fn missing_roots_are_empty_scopes() {
    let tree = Tree::new();
    let roots = MemoryRoots {
        project: Some(tree.dir.path().join("absent-project")),
        user: Some(tree.dir.path().join("absent-user")),
    };
    let scan = DocumentCache::new().scan_recall(&roots).unwrap();
    assert!(scan.documents.is_empty());
    assert_eq!(scan.report, memory_scan::ScanReport::default());
}

#[test]
fn unset_roots_are_empty_scopes() {
    let scan = DocumentCache::new()
        .scan_recall(&MemoryRoots::default())
        .unwrap();
    assert!(scan.documents.is_empty());
}

#[test]
fn project_root_that_cannot_be_listed_is_an_error() {
    let tree = Tree::new();
    let file_root = write(tree.dir.path(), "not-a-dir", "x");
    let roots = MemoryRoots {
        project: Some(file_root.clone()),
        user: Some(tree.user()),
    };
    let error = DocumentCache::new().scan_recall(&roots).unwrap_err();
    assert!(matches!(error, ScanError::ProjectRoot { ref path, .. } if *path == file_root));
}

#[test]
fn user_root_failure_is_a_warning_and_project_recall_continues() {
    let tree = Tree::new();
    write_topic(&tree.project(), "kept.md");
    let file_root = write(tree.dir.path(), "not-a-dir", "x");
    let roots = MemoryRoots {
        project: Some(tree.project()),
        user: Some(file_root),
    };

    let scan = DocumentCache::new().scan_recall(&roots).unwrap();

    assert_eq!(scan.documents.len(), 1);
    assert_eq!(scan.report.warnings.len(), 1);
    assert!(scan.report.warnings[0].contains("user memory root"));
}

#[test]
fn memory_index_at_any_depth_is_not_a_topic() {
    let tree = Tree::new();
    write(
        &tree.project(),
        "MEMORY.md",
        topic("user", "Index", "", "- [a](a.md)"),
    );
    write(
        &tree.project(),
        "deep/er/MEMORY.md",
        topic("user", "Index", "", ""),
    );
    write_topic(&tree.project(), "a.md");

    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(scan.documents.len(), 1);
    assert_eq!(scan.report.files_seen, 1);
    assert!(scan.report.skipped.is_empty());
}

#[test]
fn hidden_directories_are_not_walked() {
    let tree = Tree::new();
    write_topic(&tree.project(), ".memrecall/catalog/a.md");
    write_topic(&tree.project(), "visible/.git/b.md");
    write_topic(&tree.project(), "visible/c.md");

    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(
        relative_paths(&scan),
        vec![(Scope::Project, PathBuf::from("visible/c.md"))]
    );
    assert_eq!(scan.report.files_seen, 1);
}

#[test]
fn files_not_ending_in_md_are_ignored() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.txt");
    write_topic(&tree.project(), "b.markdown");
    write_topic(&tree.project(), "c.MD");
    write_topic(&tree.project(), "d.md");

    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(scan.documents.len(), 1);
    assert_eq!(scan.report.files_seen, 1);
}

#[cfg(unix)]
#[test]
fn symlinked_file_inside_the_root_is_a_document_under_the_link_path() {
    let tree = Tree::new();
    let target = write(
        &tree.project(),
        "real/a.txt",
        topic("project", "Linked", "kept as text", "Body."),
    );
    std::os::unix::fs::symlink(&target, tree.project().join("link.md")).unwrap();

    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(
        relative_paths(&scan),
        vec![(Scope::Project, PathBuf::from("link.md"))]
    );
}

#[cfg(unix)]
#[test]
fn a_file_reached_by_its_name_and_by_a_symlink_is_one_document_under_its_own_name() {
    let tree = Tree::new();
    let target = write_topic(&tree.project(), "real/a.md");
    std::os::unix::fs::symlink(&target, tree.project().join("link.md")).unwrap();
    std::os::unix::fs::symlink(&target, tree.project().join("other-link.md")).unwrap();

    for scan in [
        DocumentCache::new()
            .scan_recall(&tree.project_only())
            .unwrap()
            .report,
        memory_scan::scan_capped(&tree.project_only())
            .unwrap()
            .report,
    ] {
        let mut duplicates: Vec<_> = scan
            .skipped
            .iter()
            .map(|skipped| (skipped.path.clone(), skipped.reason.clone()))
            .collect();
        duplicates.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(scan.parsed, 1);
        let of = |link: &str| {
            (
                tree.project().join(link),
                memory_scan::SkipReason::DuplicateLink { of: target.clone() },
            )
        };
        assert_eq!(duplicates, vec![of("link.md"), of("other-link.md")]);
    }
}

#[cfg(unix)]
#[test]
fn two_symlinks_to_one_file_that_is_no_topic_are_one_document_under_the_first() {
    let tree = Tree::new();
    let target = write(
        &tree.project(),
        "real/a.txt",
        topic("project", "Linked", "kept as text", "Body."),
    );
    std::os::unix::fs::symlink(&target, tree.project().join("b.md")).unwrap();
    std::os::unix::fs::symlink(&target, tree.project().join("a.md")).unwrap();

    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(
        relative_paths(&scan),
        vec![(Scope::Project, PathBuf::from("a.md"))]
    );
    assert_eq!(scan.report.skipped.len(), 1);
    assert_eq!(scan.report.skipped[0].path, tree.project().join("b.md"));
}

#[cfg(unix)]
#[test]
fn symlinked_directories_are_not_followed_so_a_cycle_ends() {
    let tree = Tree::new();
    write_topic(&tree.project(), "sub/a.md");
    std::os::unix::fs::symlink(tree.project(), tree.project().join("sub/loop")).unwrap();
    std::os::unix::fs::symlink(tree.user(), tree.project().join("outside")).unwrap();
    write_topic(&tree.user(), "u.md");

    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(
        relative_paths(&scan),
        vec![(Scope::Project, PathBuf::from("sub/a.md"))]
    );
}

#[test]
fn root_given_as_a_relative_path_yields_absolute_document_paths() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    let cwd = std::env::current_dir().unwrap();
    let relative = pathdiff(&tree.project(), &cwd);
    let roots = MemoryRoots {
        project: Some(relative),
        user: None,
    };
    let scan = DocumentCache::new().scan_recall(&roots).unwrap();
    assert!(scan.documents[0].path().is_absolute());
    assert_eq!(
        fs::canonicalize(scan.documents[0].path()).unwrap(),
        fs::canonicalize(tree.project().join("a.md")).unwrap()
    );
}

/// `target` relative to `base`, climbing with `..` as needed.
fn pathdiff(target: &Path, base: &Path) -> PathBuf {
    let target: Vec<_> = target.components().collect();
    let base: Vec<_> = base.components().collect();
    let common = target.iter().zip(&base).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..base.len() {
        out.push("..");
    }
    for component in &target[common..] {
        out.push(component);
    }
    out
}

#[test]
fn order_is_deterministic_across_scans_and_fresh_caches() {
    let tree = Tree::new();
    for i in (0..300).rev() {
        write_topic(&tree.project(), &format!("d{}/t{i}.md", i % 7));
        write_topic(&tree.user(), &format!("t{i}.md"));
    }
    let first = relative_paths(&DocumentCache::new().scan_recall(&tree.roots()).unwrap());
    let mut sorted = first.clone();
    sorted.sort();
    assert_eq!(first, sorted);
    for _ in 0..5 {
        let again = relative_paths(&DocumentCache::new().scan_recall(&tree.roots()).unwrap());
        assert_eq!(again, first);
    }
}

#[test]
fn recall_orders_paths_by_component_even_when_names_sort_below_the_separator() {
    let tree = Tree::new();
    for relative in ["a.md", "a-b.md", "a b.md", "a/b.md"] {
        write_topic(&tree.project(), relative);
    }

    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    let paths: Vec<PathBuf> = relative_paths(&scan).into_iter().map(|(_, p)| p).collect();
    let mut component_order = paths.clone();
    component_order.sort();
    assert_eq!(paths, component_order);
    assert_eq!(paths[0], PathBuf::from("a/b.md"));
}

#[test]
fn the_same_root_given_for_both_scopes_yields_each_file_once_in_the_project_scope() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    write(&tree.project(), "notes.md", "no frontmatter here");
    let roots = MemoryRoots {
        project: Some(tree.project()),
        user: Some(tree.project().join(".").join("..").join("project")),
    };

    let scan = DocumentCache::new().scan_recall(&roots).unwrap();

    assert_eq!(
        relative_paths(&scan),
        vec![(Scope::Project, PathBuf::from("a.md"))]
    );
    assert_eq!(scan.report.skipped.len(), 1);
    assert_eq!(scan.report.files_seen, 2);
    assert_eq!(scan.report.warnings.len(), 1, "{:?}", scan.report.warnings);
}

#[test]
fn a_user_root_inside_the_project_root_yields_its_files_once_in_the_project_scope() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    write_topic(&tree.project(), "mine/b.md");
    let roots = MemoryRoots {
        project: Some(tree.project()),
        user: Some(tree.project().join("mine")),
    };

    let scan = DocumentCache::new().scan_recall(&roots).unwrap();

    assert_eq!(
        relative_paths(&scan),
        vec![
            (Scope::Project, PathBuf::from("a.md")),
            (Scope::Project, PathBuf::from("mine/b.md")),
        ]
    );
}

#[test]
fn a_project_root_inside_the_user_root_leaves_the_user_scope_its_other_files() {
    let tree = Tree::new();
    write_topic(&tree.user(), "u.md");
    write_topic(&tree.user(), "work/p.md");
    let roots = MemoryRoots {
        project: Some(tree.user().join("work")),
        user: Some(tree.user()),
    };

    let scan = DocumentCache::new().scan_recall(&roots).unwrap();

    assert_eq!(
        relative_paths(&scan),
        vec![
            (Scope::Project, PathBuf::from("p.md")),
            (Scope::User, PathBuf::from("u.md")),
        ]
    );
}

#[test]
fn a_user_root_in_a_hidden_directory_of_the_project_root_keeps_its_files_without_a_warning() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    write_topic(&tree.project(), ".mine/b.md");
    let roots = MemoryRoots {
        project: Some(tree.project()),
        user: Some(tree.project().join(".mine")),
    };

    let scan = DocumentCache::new().scan_recall(&roots).unwrap();

    assert_eq!(
        relative_paths(&scan),
        vec![
            (Scope::Project, PathBuf::from("a.md")),
            (Scope::User, PathBuf::from("b.md")),
        ]
    );
    assert_eq!(scan.report.files_seen, 2);
    assert!(
        scan.report.warnings.is_empty(),
        "{:?}",
        scan.report.warnings
    );
}

#[test]
fn separate_roots_raise_no_overlap_warning() {
    let tree = Tree::new();
    write_topic(&tree.project(), "a.md");
    write_topic(&tree.user(), "a.md");

    let scan = DocumentCache::new().scan_recall(&tree.roots()).unwrap();

    assert_eq!(scan.documents.len(), 2);
    assert!(
        scan.report.warnings.is_empty(),
        "{:?}",
        scan.report.warnings
    );
}
