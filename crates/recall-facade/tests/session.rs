//! A whole agent session through the facade, over a real temporary memory tree.

use std::path::Path;

use recall_facade::{Delivery, MemoryRecall, RecallConfig};

fn write_topic(root: &Path, rel: &str, kind: &str, name: &str, description: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!("---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n\nDetails.\n"),
    )
    .unwrap();
}

fn titles(delivery: &Delivery) -> Vec<String> {
    delivery
        .delivered()
        .map(|m| m.documents.iter().map(|d| d.title().to_owned()).collect())
        .unwrap_or_default()
}

#[tokio::test]
async fn second_turn_does_not_redeliver_and_reset_allows_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let user = dir.path().join("user");
    write_topic(
        &project,
        "rollback.md",
        "project",
        "Release rollback",
        "How to roll back a release",
    );
    write_topic(
        &project,
        "freeze.md",
        "project",
        "Release freeze",
        "No release on Fridays",
    );
    write_topic(
        &user,
        "terse.md",
        "user",
        "Terse answers",
        "Keep answers short",
    );
    let mut recall =
        MemoryRecall::new(RecallConfig::with_roots(Some(project), Some(user))).unwrap();

    recall.begin_turn("release rollback", &[]);
    let first = titles(&recall.initial().await);
    recall.end_turn();
    assert_eq!(first, vec!["Release rollback", "Release freeze"]);

    recall.begin_turn("release rollback", &[]);
    let second = recall.initial().await;
    recall.end_turn();
    assert!(
        titles(&second).is_empty(),
        "already delivered: {:?}",
        titles(&second)
    );

    recall.reset();
    recall.begin_turn("release rollback", &[]);
    let third = titles(&recall.initial().await);
    recall.end_turn();
    assert_eq!(third, first);
    recall.shutdown();
}
