use std::path::Path;

use memory_scan::{DocumentCache, SkippedFile};
use serde::Serialize;

use crate::support::{Tree, topic, write};

/// A document without its absolute path or mtime, which change per run.
#[derive(Serialize)]
struct DocumentView<'a> {
    scope: memory_scan::Scope,
    relative_path: &'a Path,
    memory_type: memory_scan::MemoryType,
    title: &'a str,
    description: &'a str,
    body: &'a str,
}

#[derive(Serialize)]
struct SkipView<'a> {
    relative_path: String,
    #[serde(flatten)]
    skipped: &'a SkippedFile,
}

fn fixture(tree: &Tree) {
    let project = tree.project();
    let user = tree.user();
    write(&project, "MEMORY.md", "- [Deploy](deploy.md)\n");
    write(
        &project,
        "deploy.md",
        "---\r\nname: Deploy checklist\r\ndescription: Steps before a release\r\ntype: project\r\n---\r\n\r\n1. Tag.\r\n2. Ship.\r\n",
    );
    write(
        &project,
        "refs/dashboard.md",
        "\u{feff}---\ntitle: Grafana board\ntype: reference\n---\nhttps://grafana.example/d/api\n",
    );
    write(
        &project,
        "refs/empty.md",
        "---\ntype: reference\n---\n\n_No entries yet._\n",
    );
    write(&project, "drafts/idea.md", "An idea without frontmatter.\n");
    write(
        &project,
        ".memrecall/catalog/x.md",
        topic("user", "hidden", "", ""),
    );
    write(
        &user,
        "user/role.md",
        topic(
            "user",
            "Role",
            "Who the user is",
            "Backend engineer, prefers terse answers.",
        ),
    );
    write(
        &user,
        "feedback/style.md",
        topic("feedback", "Style", "", "No emojis."),
    );
    write(&user, "journal.md", topic("diary", "Journal", "", ""));
}

#[test]
fn fixture_tree_parses_to_pinned_documents_and_report() {
    let tree = Tree::new();
    fixture(&tree);

    let scan = DocumentCache::new().scan_recall(&tree.roots()).unwrap();

    let documents: Vec<DocumentView<'_>> = scan
        .documents
        .iter()
        .map(|d| DocumentView {
            scope: d.scope(),
            relative_path: d.relative_path(),
            memory_type: d.memory_type(),
            title: d.title(),
            description: d.description(),
            body: d.body(),
        })
        .collect();
    insta::assert_json_snapshot!("fixture_documents", documents);

    let base = tree.dir.path();
    let skipped: Vec<SkipView<'_>> = scan
        .report
        .skipped
        .iter()
        .map(|s| SkipView {
            relative_path: slashed(s.path.strip_prefix(base).unwrap()),
            skipped: s,
        })
        .collect();
    insta::assert_json_snapshot!("fixture_skips", skipped, {
        "[].path" => "[absolute path]",
    });
    insta::assert_json_snapshot!(
        "fixture_counts",
        (scan.report.files_seen, scan.report.parsed)
    );
}

/// `path` with `/` between its names, as documents show theirs on every platform.
fn slashed(path: &Path) -> String {
    let names: Vec<_> = path.iter().map(|name| name.to_string_lossy()).collect();
    names.join("/")
}
