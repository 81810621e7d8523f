//! A whole agent session through the facade, over a real temporary memory tree.

use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use recall_facade::{
    Delivery, DiscardReason, MemoryRecall, RecallConfig, ScannerChoice, SelectorChoice,
};
use selector::MockSelector;

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

// The paused clock does not move while the scan runs on a blocking thread, so the first prompt's
// 100 ms wait always sees the scan's result, however slow the machine.
#[tokio::test(start_paused = true)]
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
        "No release on Fridays, only a rollback",
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

/// A process that ends its turn while the first scan still runs (a tool-free turn whose scan
/// outlasts the first prompt's wait) and then exits still leaves a catalog for the next one.
#[test]
fn turn_ended_during_the_scan_of_an_exiting_process_still_writes_the_catalog() {
    let (_dir, project) = thousand_topics();
    let runtime = one_thread_runtime();

    runtime.block_on(async {
        let mut recall = one_ms_into_a_scan(&project).await;
        recall.end_turn();
        recall.shutdown();
    });
    // As the command-line tool exits: the recall task is dropped, blocking work gets a grace.
    runtime.shutdown_timeout(std::time::Duration::from_secs(30));

    assert!(project.join(".memrecall").join("catalog").is_file());
}

#[test]
fn write_catalogs_waits_for_the_running_scan_and_leaves_its_catalog_on_disk() {
    let (_dir, project) = thousand_topics();
    let runtime = one_thread_runtime();

    let writes = runtime.block_on(async {
        let recall = one_ms_into_a_scan(&project).await;
        recall.write_catalogs().await
    });

    // The write may be this call's or the recall's own, started when its fast result was out.
    assert!(project.join(".memrecall").join("catalog").is_file());
    assert!(
        writes.iter().all(|write| write.outcome.is_ok()),
        "{writes:?}"
    );
}

/// A project root of 1,000 topics: enough that a scan takes tens of milliseconds in a test build.
fn thousand_topics() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    for i in 0..1_000 {
        write_topic(
            &project,
            &format!("topic-{i}.md"),
            "project",
            &format!("Topic {i}"),
            "Something worth remembering",
        );
    }
    (dir, project)
}

/// One thread: a recall task starts its scan as soon as the test's future waits.
fn one_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A session keeping catalogs, a millisecond into the first scan of `project` (which takes tens
/// of milliseconds for [`thousand_topics`]).
async fn one_ms_into_a_scan(project: &Path) -> MemoryRecall {
    let mut config = RecallConfig::with_roots(Some(project.to_path_buf()), None);
    config.scanner = ScannerChoice::Catalog(recall_facade::CatalogStore::InRoot);
    let mut recall = MemoryRecall::new(config).unwrap();
    recall.begin_turn("something worth remembering", &[]);
    tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    recall
}

/// Four project memories: two match "release rollback" lexically, the model picks the other
/// two after 250 ms.
fn four_memories_and_a_model(dir: &Path, turn_cap: Option<usize>) -> RecallConfig {
    let project = dir.join("project");
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
        "No release on Fridays, only a rollback",
    );
    write_topic(&project, "oncall.md", "project", "On-call", "Who to page");
    write_topic(
        &project,
        "budget.md",
        "project",
        "Error budget",
        "When to stop",
    );
    let picks = ["oncall.md", "budget.md"]
        .map(|rel| project.join(rel).to_str().unwrap().to_owned())
        .to_vec();
    let mut config = RecallConfig::with_roots(Some(project), None);
    config.scanner = ScannerChoice::Uncatalogued;
    config.options.selector = SelectorChoice::Custom(Arc::new(MockSelector::answering(
        picks,
        Duration::from_millis(250),
    )));
    config.options.turn_cap = turn_cap.map(|cap| NonZeroUsize::new(cap).unwrap());
    config
}

/// The titles one turn delivers at its two points, the recall settling in between.
async fn one_turn(config: RecallConfig) -> (Vec<String>, Delivery) {
    let mut recall = MemoryRecall::new(config).unwrap();
    recall.begin_turn("release rollback", &[]);
    let mut delivered = titles(&recall.initial().await);
    assert!(recall.wait_settled(Duration::from_secs(1)).await);
    let after_tool = recall.after_tool_result();
    delivered.extend(titles(&after_tool));
    recall.end_turn();
    (delivered, after_tool)
}

#[tokio::test(start_paused = true)]
async fn without_a_turn_cap_one_turn_delivers_the_fast_and_the_refined_documents() {
    let dir = tempfile::tempdir().unwrap();
    let (delivered, _) = one_turn(four_memories_and_a_model(dir.path(), None)).await;
    assert_eq!(
        delivered,
        [
            "Release rollback",
            "Release freeze",
            "On-call",
            "Error budget"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_turn_cap_limits_what_one_turn_delivers_in_all() {
    let dir = tempfile::tempdir().unwrap();
    let (delivered, _) = one_turn(four_memories_and_a_model(dir.path(), Some(3))).await;
    assert_eq!(delivered, ["Release rollback", "Release freeze", "On-call"]);
}

#[tokio::test(start_paused = true)]
async fn a_turn_cap_reached_by_the_fast_delivery_discards_the_refined_result() {
    let dir = tempfile::tempdir().unwrap();
    let (delivered, after_tool) = one_turn(four_memories_and_a_model(dir.path(), Some(2))).await;
    assert_eq!(delivered, ["Release rollback", "Release freeze"]);
    assert!(
        matches!(
            after_tool,
            Delivery::Discarded(DiscardReason::TurnCapReached)
        ),
        "{after_tool:?}"
    );
}
