use std::path::Path;
#[cfg(unix)]
use std::time::Duration;

use memory_scan::{
    DocumentCache, MAX_TOPIC_BYTES, ScanReport, Scope, SkipReason, SkippedFile, scan_capped,
};

#[cfg(unix)]
use crate::support::finishes_within;
#[cfg(unix)]
use crate::support::make_fifo;
use crate::support::{Tree, topic, write, write_topic};

fn project_report(tree: &Tree) -> ScanReport {
    DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap()
        .report
}

fn only_skip(report: &ScanReport) -> &SkipReason {
    assert_eq!(report.skipped.len(), 1, "{:?}", report.skipped);
    &report.skipped[0].reason
}

#[test]
fn non_utf8_file_is_skipped_as_not_utf8() {
    let tree = Tree::new();
    write(
        &tree.project(),
        "a.md",
        b"---\nname: \xff\xfe\ntype: user\n---\n",
    );
    assert_eq!(only_skip(&project_report(&tree)), &SkipReason::NotUtf8);
}

#[test]
fn file_over_the_cap_is_skipped_as_too_large_with_the_limit() {
    let tree = Tree::new();
    let size = usize::try_from(MAX_TOPIC_BYTES).unwrap() + 1;
    let mut text = topic("user", "Big", "", "");
    text.push_str(&"x".repeat(size - text.len()));
    write(&tree.project(), "big.md", text);

    assert_eq!(
        only_skip(&project_report(&tree)),
        &SkipReason::TooLarge {
            limit_bytes: MAX_TOPIC_BYTES,
            size_bytes: MAX_TOPIC_BYTES + 1,
        }
    );
}

#[test]
fn file_exactly_at_the_cap_is_read_whole() {
    let tree = Tree::new();
    let size = usize::try_from(MAX_TOPIC_BYTES).unwrap();
    let mut text = topic("user", "Big", "", "");
    let body_len = size - text.len();
    text.push_str(&"x".repeat(body_len));
    write(&tree.project(), "big.md", text);

    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(scan.documents[0].body().len(), body_len);
}

#[test]
fn file_without_frontmatter_is_skipped_as_no_frontmatter() {
    let tree = Tree::new();
    write(&tree.project(), "notes.md", "# Just notes\n");
    assert_eq!(
        only_skip(&project_report(&tree)),
        &SkipReason::NoFrontmatter
    );
}

#[test]
fn unclosed_frontmatter_is_skipped_as_unterminated() {
    let tree = Tree::new();
    write(&tree.project(), "a.md", "---\nname: A\ntype: user\n");
    assert_eq!(
        only_skip(&project_report(&tree)),
        &SkipReason::UnterminatedFrontmatter
    );
}

#[test]
fn frontmatter_without_type_is_skipped_as_missing_type() {
    let tree = Tree::new();
    write(&tree.project(), "a.md", "---\nname: A\n---\n");
    assert_eq!(only_skip(&project_report(&tree)), &SkipReason::MissingType);
}

#[test]
fn unknown_type_is_skipped_with_the_value_found() {
    let tree = Tree::new();
    write(&tree.project(), "a.md", topic("journal", "A", "", ""));
    assert_eq!(
        only_skip(&project_report(&tree)),
        &SkipReason::UnknownType {
            value: "journal".to_owned()
        }
    );
}

#[test]
fn directory_named_like_a_topic_is_not_a_file_but_is_still_walked() {
    let tree = Tree::new();
    write_topic(&tree.project(), "folder.md/inner.md");

    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(scan.documents.len(), 1);
    assert_eq!(
        scan.report.skipped,
        vec![SkippedFile {
            scope: Scope::Project,
            path: tree.project().join("folder.md"),
            reason: SkipReason::NotAFile,
        }]
    );
}

// FIFOs are made with mkfifo(1), a Unix tool.
#[cfg(unix)]
#[test]
fn fifo_named_like_a_topic_is_not_a_file_and_is_never_opened() {
    let tree = Tree::new();
    make_fifo(&tree.project().join("pipe.md"));
    assert_eq!(only_skip(&project_report(&tree)), &SkipReason::NotAFile);
}

#[cfg(unix)]
#[test]
fn symlink_to_a_fifo_is_not_a_file_and_the_scan_does_not_wait_for_a_writer() {
    let tree = Tree::new();
    make_fifo(&tree.project().join("pipe"));
    std::os::unix::fs::symlink("pipe", tree.project().join("link.md")).unwrap();
    let report = finishes_within(Duration::from_secs(30), move || project_report(&tree));
    assert_eq!(only_skip(&report), &SkipReason::NotAFile);
}

#[cfg(unix)]
#[test]
fn symlink_leading_out_of_the_root_is_skipped() {
    let tree = Tree::new();
    let outside = write_topic(&tree.user(), "secret.md");
    std::os::unix::fs::symlink(outside, tree.project().join("escape.md")).unwrap();
    assert_eq!(
        only_skip(&project_report(&tree)),
        &SkipReason::SymlinkOutsideRoot
    );
}

#[cfg(unix)]
#[test]
fn symlink_loop_is_skipped() {
    let tree = Tree::new();
    let root = tree.project();
    std::os::unix::fs::symlink(root.join("b.md"), root.join("a.md")).unwrap();
    std::os::unix::fs::symlink(root.join("a.md"), root.join("b.md")).unwrap();

    let report = project_report(&tree);

    assert_eq!(report.skipped.len(), 2);
    assert!(
        report
            .skipped
            .iter()
            .all(|s| s.reason == SkipReason::SymlinkLoop)
    );
}

#[cfg(unix)]
#[test]
fn dangling_symlink_is_skipped_as_broken() {
    let tree = Tree::new();
    std::os::unix::fs::symlink(tree.project().join("gone.md"), tree.project().join("a.md"))
        .unwrap();
    assert_eq!(
        only_skip(&project_report(&tree)),
        &SkipReason::BrokenSymlink
    );
}

#[test]
fn skips_never_abort_the_scan_and_are_counted_beside_parsed_files() {
    let tree = Tree::new();
    write_topic(&tree.project(), "good.md");
    write(&tree.project(), "bad.md", "no frontmatter");
    write_topic(&tree.user(), "good.md");
    write(&tree.user(), "bad.md", topic("other", "x", "", ""));

    let scan = DocumentCache::new().scan_recall(&tree.roots()).unwrap();

    assert_eq!(scan.documents.len(), 2);
    assert_eq!(scan.report.files_seen, 4);
    assert_eq!(scan.report.parsed, 2);
    let skipped: Vec<(Scope, &Path)> = scan
        .report
        .skipped
        .iter()
        .map(|s| (s.scope, s.path.as_path()))
        .collect();
    assert_eq!(
        skipped,
        vec![
            (Scope::Project, tree.project().join("bad.md").as_path()),
            (Scope::User, tree.user().join("bad.md").as_path()),
        ]
    );
}

#[test]
fn capped_scanner_reports_the_same_skips() {
    let tree = Tree::new();
    write(&tree.project(), "bad.md", "no frontmatter");
    let report = scan_capped(&tree.project_only()).unwrap().report;
    assert_eq!(only_skip(&report), &SkipReason::NoFrontmatter);
}
