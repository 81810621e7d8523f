//! The frontmatter's `modified` field as a document's saved time, and the extra fields agents
//! write that must not make a file a skip.

use std::time::Duration;

use memory_scan::{DocumentCache, MemoryType, Topic, parse_topic, render_topic};

use crate::support::{Tree, at, set_mtime, write};

#[test]
fn a_modified_timestamp_is_read_as_the_topics_saved_time() {
    let topic =
        parse_topic("---\nname: A\ntype: user\nmodified: 2026-11-30T12:00:00.000Z\n---\n").unwrap();
    assert_eq!(topic.modified(), Some(at(1_796_040_000)));
}

#[test]
fn a_modified_value_that_is_not_a_timestamp_counts_as_absent() {
    let topic = parse_topic("---\nname: A\ntype: user\nmodified: last tuesday\n---\n").unwrap();
    assert_eq!(topic.modified(), None);
}

#[test]
fn category_keywords_and_usage_scenarios_are_accepted() {
    let topic = parse_topic(
        "---\ntitle: Qwen style\ntype: feedback\ncategory: style\nkeywords: [a, b]\nusage_scenarios:\n  - when reviewing\n---\nbody",
    )
    .unwrap();
    assert_eq!(topic.title(), "Qwen style");
    assert_eq!(topic.memory_type(), MemoryType::Feedback);
}

#[test]
fn a_topic_with_a_modified_time_survives_render_then_parse() {
    let topic = Topic::new(MemoryType::Project, "A", "d", "body")
        .unwrap()
        .with_modified(Some(at(1_796_040_000) + Duration::from_millis(5)));
    assert_eq!(parse_topic(&render_topic(&topic)).unwrap(), topic);
}

#[test]
fn a_documents_saved_time_is_modified_when_present_and_the_file_mtime_otherwise() {
    let tree = Tree::new();
    let with = write(
        &tree.project(),
        "with.md",
        "---\nname: With\ntype: user\nmodified: 2001-09-09T01:46:40Z\n---\n",
    );
    let without = write(
        &tree.project(),
        "without.md",
        "---\nname: Without\ntype: user\n---\n",
    );
    set_mtime(&with, 2_000_000_000);
    set_mtime(&without, 1_500_000_000);
    let scan = DocumentCache::new()
        .scan_recall(&tree.project_only())
        .unwrap();
    let saved: Vec<_> = scan
        .documents
        .iter()
        .map(|d| (d.title().to_owned(), d.mtime()))
        .collect();
    assert!(
        saved.contains(&("With".to_owned(), at(1_000_000_000))),
        "{saved:?}"
    );
    assert!(
        saved.contains(&("Without".to_owned(), at(1_500_000_000))),
        "{saved:?}"
    );
}

// Catalogs are kept on Unix only.
#[cfg(unix)]
#[test]
fn a_catalog_gives_back_the_modified_saved_time() {
    use crate::support::make_stable;
    let tree = Tree::new();
    write(
        &tree.project(),
        "with.md",
        "---\nname: With\ntype: user\nmodified: 2001-09-09T01:46:40Z\n---\n",
    );
    make_stable(tree.dir.path());
    let first = DocumentCache::with_catalog();
    first.scan_recall(&tree.project_only()).unwrap();
    first.persist_catalogs();

    let scan = DocumentCache::with_catalog()
        .scan_recall(&tree.project_only())
        .unwrap();

    assert_eq!(scan.report.from_catalog, 1);
    assert_eq!(scan.documents[0].mtime(), at(1_000_000_000));
    assert_eq!(scan.documents[0].topic().modified(), None);
}
