//! Behaviour of one recall lifecycle, as `docs/design.md#what-the-lifecycle-tests-check` lists it.
//! Timing runs on tokio's paused clock, so every duration asserted here is exact.

use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use delivery_telemetry::{
    DeliveryEvent, DeliveryPoint, DiscardReason, InitialWait, Phase, RecordingSink, Strategy,
    TelemetrySink,
};
use memory_scan::MemoryRoots;
use recall_lifecycle::{
    CancelReason, Delivery, DeliveryDesign, DeliveryRule, FIRST_PROMPT_CEILING, FastConfidence,
    FixedClock, RecallSession, SessionConfig, render_prompt,
};
use selector::{MockAnswer, MockSelector, MockStep, Selector, SelectorError};
use tempfile::TempDir;
use tokio::time::Instant;

const DAY: Duration = Duration::from_hours(24);

/// A real memory tree in a temporary directory.
struct Tree {
    dir: TempDir,
}

impl Tree {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("project")).unwrap();
        std::fs::create_dir_all(dir.path().join("user")).unwrap();
        Self { dir }
    }

    /// Writes `scope/rel` with the given frontmatter and body; returns its absolute path.
    fn topic(
        &self,
        scope: &str,
        rel: &str,
        kind: &str,
        name: &str,
        description: &str,
        body: &str,
    ) -> PathBuf {
        let path = self.dir.path().join(scope).join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            format!("---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n"),
        )
        .unwrap();
        path
    }

    fn roots(&self) -> MemoryRoots {
        MemoryRoots {
            project: Some(self.dir.path().join("project")),
            user: Some(self.dir.path().join("user")),
        }
    }
}

/// The standard tree: a rollback runbook, a deploy checklist, a terse-answers preference and an
/// unrelated dashboard reference.
struct Fixture {
    tree: Tree,
    rollback: PathBuf,
    checklist: PathBuf,
    terse: PathBuf,
    dashboard: PathBuf,
}

fn fixture() -> Fixture {
    let tree = Tree::new();
    let rollback = tree.topic(
        "project",
        "release-rollback.md",
        "project",
        "Release rollback runbook",
        "How to roll back a bad release",
        "Run `deploy rollback --to previous`, then watch the error budget for ten minutes.",
    );
    let checklist = tree.topic(
        "project",
        "deploy-checklist.md",
        "project",
        "Deploy checklist",
        "Steps before every release",
        "Tag the release, run the smoke suite, announce in #deploys.",
    );
    let terse = tree.topic(
        "user",
        "terse.md",
        "user",
        "Terse answers",
        "The user prefers short answers without preamble",
        "Answer in a few lines; skip the summary at the end.",
    );
    let dashboard = tree.topic(
        "project",
        "grafana.md",
        "reference",
        "Latency dashboard",
        "Where the p99 latency graphs live",
        "https://grafana.example.internal/d/latency",
    );
    set_age(&rollback, 2 * DAY);
    set_age(&checklist, 3 * DAY);
    set_age(&terse, 10 * DAY);
    set_age(&dashboard, DAY / 2);
    Fixture {
        tree,
        rollback,
        checklist,
        terse,
        dashboard,
    }
}

fn set_age(path: &Path, age: Duration) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::now() - age).unwrap();
}

fn id(path: &Path) -> String {
    recall_lifecycle::candidate_id(path)
}

fn session_with(
    roots: MemoryRoots,
    selector: Option<Arc<dyn Selector>>,
    design: DeliveryDesign,
) -> (RecallSession, Arc<RecordingSink>) {
    let sink = Arc::new(RecordingSink::new());
    let mut config = SessionConfig::new(roots, Arc::clone(&sink) as Arc<dyn TelemetrySink>);
    config.selector = selector;
    config.design = design;
    config.clock = Arc::new(FixedClock(SystemTime::now()));
    // These specify the delivery designs over the design's own top five and top two.
    config.delivery_rule = DeliveryRule::UNTRIMMED;
    (RecallSession::new(config), sink)
}

fn mock(ids: &[&Path], after_ms: u64) -> Arc<dyn Selector> {
    Arc::new(MockSelector::answering(
        ids.iter().map(|p| id(p)).collect(),
        Duration::from_millis(after_ms),
    ))
}

fn paths(delivery: &Delivery) -> Vec<PathBuf> {
    delivery
        .delivered()
        .map(|m| m.documents.iter().map(|d| d.path().to_path_buf()).collect())
        .unwrap_or_default()
}

fn terminal_events(sink: &RecordingSink) -> Vec<DeliveryEvent> {
    sink.deliveries()
        .into_iter()
        .filter(|e| e.phase == Phase::Refined)
        .collect()
}

const ROLLBACK_QUERY: &str = "how do we roll back a release?";

#[tokio::test(start_paused = true)]
async fn recall_settling_inside_the_budget_is_delivered_initially() {
    let f = fixture();
    // No lexical match, so no fast result: the model's pick settles at 40 ms, inside the budget.
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse], 40)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn("keep it brief please", &[]);
    let started = Instant::now();
    let delivery = session.initial().await;
    let memory = delivery.delivered().expect("settled recall is delivered");
    assert_eq!(memory.phase, Phase::Refined);
    assert_eq!(memory.strategy, Strategy::Model);
    assert_eq!(paths(&delivery), vec![f.terse.clone()]);
    assert_eq!(started.elapsed(), Duration::from_millis(40));
    assert_eq!(
        terminal_events(&sink)[0].delivery_point,
        DeliveryPoint::Initial
    );
}

#[tokio::test(start_paused = true)]
async fn budget_expiry_delivers_fast_result_and_keeps_recall_pending() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse], 250)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    let delivery = session.initial().await;
    let memory = delivery.delivered().expect("fast result delivered");
    assert_eq!(memory.phase, Phase::Fast);
    assert_eq!(memory.strategy, Strategy::Heuristic);
    assert!(memory.documents.len() <= 2);
    assert_eq!(paths(&delivery)[0], f.rollback);
    assert!(session.has_pending_recall());
    assert!(matches!(session.after_tool_result(), Delivery::Pending));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let later = session.after_tool_result();
    let refined = later.delivered().expect("model pick lands at tool result");
    assert_eq!(refined.phase, Phase::Refined);
    assert_eq!(refined.strategy, Strategy::Model);
    assert_eq!(sink.deliveries().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_session_without_catalogs_indexes_what_it_read_after_the_fast_result() {
    let f = fixture();
    let sink = Arc::new(RecordingSink::new());
    let mut config =
        SessionConfig::new(f.tree.roots(), Arc::clone(&sink) as Arc<dyn TelemetrySink>);
    config.selector = Some(mock(&[&f.terse], 5_000));
    let cache = Arc::new(memory_scan::DocumentCache::new());
    config.cache = cache.clone();
    let mut session = RecallSession::new(config);
    session.begin_turn(ROLLBACK_QUERY, &[]);
    let delivery = session.initial().await;
    assert_eq!(
        delivery.delivered().expect("fast result").phase,
        Phase::Fast
    );
    // The indexes are built on a blocking thread, in real time; the selector is still pending.
    // They are watched from a blocking thread too, so the session's runtime is never blocked,
    // and the paused clock does not move while blocking work runs. The deadline only bounds a
    // hang.
    let documents = cache.scan_recall(&f.tree.roots()).unwrap().documents;
    assert_eq!(documents.len(), 4);
    let all_indexed = tokio::task::spawn_blocking(move || {
        let all_indexed = || documents.iter().all(|d| d.prepared().has_index());
        let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
        while !all_indexed() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        all_indexed()
    })
    .await
    .unwrap();
    assert!(
        all_indexed,
        "documents still without an index after a minute"
    );
}

#[tokio::test(start_paused = true)]
async fn later_delivery_never_repeats_a_fast_document() {
    let f = fixture();
    // The model re-selects the fast documents plus one more; only the new one is delivered.
    let (mut session, _sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.rollback, &f.checklist, &f.terse], 600)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    let fast = paths(&session.initial().await);
    assert!(fast.contains(&f.rollback));
    tokio::time::sleep(Duration::from_millis(700)).await;
    let refined = session.after_tool_result();
    let refined_paths = paths(&refined);
    assert!(!refined_paths.is_empty());
    assert!(refined_paths.iter().all(|p| !fast.contains(p)));
    let prompt = &refined.delivered().unwrap().prompt;
    assert!(!prompt.contains("Release rollback runbook"));
}

#[tokio::test(start_paused = true)]
async fn cancellation_ends_the_initial_wait_and_prevents_stale_delivery() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse], 3_000)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn("zzqx qqzx wobble", &[]);
    let abort = session.abort_token().unwrap();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        abort.cancel();
    });
    let started = Instant::now();
    let delivery = session.initial().await;
    assert_eq!(started.elapsed(), Duration::from_millis(30));
    assert!(matches!(
        delivery,
        Delivery::Discarded(DiscardReason::Abort)
    ));
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(matches!(session.after_tool_result(), Delivery::Idle));
    assert_eq!(sink.deliveries().len(), 1);
    assert!(
        sink.recalls().is_empty(),
        "an aborted recall emits no memory.recall"
    );
}

#[tokio::test(start_paused = true)]
async fn cancelled_turn_delivers_no_fast_result() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.rollback], 250)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    session.abort_token().unwrap().cancel();
    let delivery = session.initial().await;
    assert!(matches!(
        delivery,
        Delivery::Discarded(DiscardReason::Abort)
    ));
    assert!(sink.deliveries().iter().all(|e| e.phase != Phase::Fast));
}

#[tokio::test(start_paused = true)]
async fn fast_result_never_crosses_a_query_boundary() {
    let f = fixture();
    let selector = Arc::new(MockSelector::new());
    selector.push(MockStep {
        after: Duration::from_secs(2),
        answer: MockAnswer::Ids(vec![id(&f.rollback)]),
    });
    selector.push(MockStep {
        after: Duration::from_secs(2),
        answer: MockAnswer::Ids(vec![]),
    });
    let (mut session, sink) =
        session_with(f.tree.roots(), Some(selector), DeliveryDesign::FastPath);
    session.begin_turn(ROLLBACK_QUERY, &[]);
    // The first query's fast result is published but never consumed before the next query.
    tokio::time::sleep(Duration::from_millis(10)).await;
    session.begin_turn("unrelated words qqzx", &[]);
    let delivery = session.initial().await;
    assert!(matches!(delivery, Delivery::Pending));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(paths(&session.after_tool_result()).is_empty());
    let first = &sink.deliveries()[0];
    assert_eq!(first.discard_reason, Some(DiscardReason::NewQuery));
}

#[tokio::test(start_paused = true)]
async fn no_result_queries_stay_silent_under_both_designs() {
    for design in [DeliveryDesign::FastPath, DeliveryDesign::SinglePath] {
        let f = fixture();
        let (mut session, _sink) = session_with(f.tree.roots(), None, design);
        session.begin_turn("zzqx wobble frobnicate", &[]);
        let initial = session.initial().await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let tool = session.after_tool_result();
        assert!(initial.delivered().is_none(), "{design:?} initial");
        assert!(tool.delivered().is_none(), "{design:?} tool result");
    }
}

#[tokio::test(start_paused = true)]
async fn initial_wait_ends_as_soon_as_the_fast_result_is_published() {
    let f = fixture();
    let (mut session, _sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.rollback], 15)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    let started = Instant::now();
    let delivery = session.initial().await;
    // The scan runs on the blocking pool, which paused time does not advance over; the wait
    // therefore ends at virtual time zero, long before both the 15 ms selector and the ceiling.
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert_eq!(delivery.delivered().unwrap().phase, Phase::Fast);
}

#[tokio::test(start_paused = true)]
async fn wait_with_nothing_to_deliver_runs_to_exactly_the_ceiling() {
    let f = fixture();
    let (mut session, _sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse], 1_500)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn("qqzx nothing lexical", &[]);
    let started = Instant::now();
    let delivery = session.initial().await;
    assert_eq!(started.elapsed(), FIRST_PROMPT_CEILING);
    assert!(matches!(delivery, Delivery::Pending));
    assert!(session.has_pending_recall());
}

#[tokio::test(start_paused = true)]
async fn fully_fast_delivered_result_is_already_delivered_at_tool_result() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.rollback], 250)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    assert!(paths(&session.initial().await).contains(&f.rollback));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let delivery = session.after_tool_result();
    assert!(matches!(
        delivery,
        Delivery::Discarded(DiscardReason::AlreadyDelivered)
    ));
    assert_eq!(
        terminal_events(&sink)[0].discard_reason,
        Some(DiscardReason::AlreadyDelivered)
    );
}

#[tokio::test(start_paused = true)]
async fn a_document_over_the_context_budget_is_not_marked_delivered_and_comes_later() {
    let f = fixture();
    let (mut whole, _sink) = session_with(f.tree.roots(), None, DeliveryDesign::FastPath);
    whole.begin_turn(ROLLBACK_QUERY, &[]);
    let unbudgeted = whole.initial().await;
    let fast = paths(&unbudgeted);
    assert_eq!(
        fast.len(),
        2,
        "the fast result holds two documents: {fast:?}"
    );
    let first_alone = {
        let first = &unbudgeted.delivered().unwrap().documents[0];
        render_prompt([first.document()], SystemTime::now())
    };

    let sink = Arc::new(RecordingSink::new());
    let mut config =
        SessionConfig::new(f.tree.roots(), Arc::clone(&sink) as Arc<dyn TelemetrySink>);
    config.selector = Some(mock(&[&fast[0], &fast[1]], 600));
    config.clock = Arc::new(FixedClock(SystemTime::now()));
    config.delivery_rule = DeliveryRule::UNTRIMMED;
    config.context_budget = NonZeroUsize::new(recall_lifecycle::utf16_len(&first_alone) + 10);
    let mut session = RecallSession::new(config);
    session.begin_turn(ROLLBACK_QUERY, &[]);
    let initial = session.initial().await;

    assert_eq!(paths(&initial), vec![fast[0].clone()]);
    assert_eq!(session.delivered().len(), 1);
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(paths(&session.after_tool_result()), vec![fast[1].clone()]);
}

#[tokio::test(start_paused = true)]
async fn a_document_the_model_fetched_meanwhile_is_not_delivered_at_tool_result() {
    let f = fixture();
    let (mut session, _sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.checklist, &f.terse], 600)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    session.initial().await;
    session.note_shown_elsewhere([f.checklist.clone()]);
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(paths(&session.after_tool_result()), vec![f.terse.clone()]);
}

#[tokio::test(start_paused = true)]
async fn a_settled_pick_the_model_fetched_in_full_is_already_delivered() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.checklist], 600)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    session.initial().await;
    session.note_shown_elsewhere([f.checklist.clone()]);
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(matches!(
        session.after_tool_result(),
        Delivery::Discarded(DiscardReason::AlreadyDelivered)
    ));
    assert_eq!(
        terminal_events(&sink)[0].discard_reason,
        Some(DiscardReason::AlreadyDelivered)
    );
}

#[tokio::test(start_paused = true)]
async fn a_document_the_model_fetched_is_left_out_of_the_next_turn() {
    let f = fixture();
    let (mut session, _sink) = session_with(f.tree.roots(), None, DeliveryDesign::FastPath);
    session.note_shown_elsewhere([f.rollback.clone()]);
    session.begin_turn(ROLLBACK_QUERY, &[]);
    let delivered = paths(&session.initial().await);
    assert!(!delivered.is_empty());
    assert!(!delivered.contains(&f.rollback));
}

#[tokio::test(start_paused = true)]
async fn fully_fast_delivered_result_is_already_delivered_at_tool_free_end() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.rollback], 250)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    session.initial().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let delivery = session.end_turn();
    assert!(matches!(
        delivery,
        Delivery::Discarded(DiscardReason::AlreadyDelivered)
    ));
    assert_eq!(
        terminal_events(&sink)[0].discard_reason,
        Some(DiscardReason::AlreadyDelivered)
    );
}

#[tokio::test(start_paused = true)]
async fn partial_overlap_at_tool_free_end_stays_no_safe_delivery_point() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.rollback, &f.terse], 250)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    let initial = session.initial().await;
    assert_eq!(
        initial.delivered().expect("fast delivery").phase,
        Phase::Fast
    );
    let fast = paths(&initial);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Preconditions: the model's pick settled before the turn ends, and it overlaps the fast
    // delivery only in part (the rollback runbook was sent, the preference was not).
    let settled = session
        .latest_recall()
        .and_then(|state| state.settled)
        .expect("the recall settled before end_turn");
    assert_eq!(settled.strategy, Strategy::Model);
    let selected: Vec<PathBuf> = settled
        .documents
        .iter()
        .map(|d| d.path().to_path_buf())
        .collect();
    assert_eq!(selected, vec![f.rollback.clone(), f.terse.clone()]);
    assert!(fast.contains(&f.rollback));
    assert!(!fast.contains(&f.terse));
    assert!(session.has_pending_recall());

    let delivery = session.end_turn();
    assert!(matches!(
        delivery,
        Delivery::Discarded(DiscardReason::NoSafeDeliveryPoint)
    ));
    let terminal = terminal_events(&sink);
    assert_eq!(terminal.len(), 1);
    assert_eq!(terminal[0].delivery_point, DeliveryPoint::Discarded);
    assert_eq!(
        terminal[0].discard_reason,
        Some(DiscardReason::NoSafeDeliveryPoint)
    );
    // A settled recall is discarded with the model's pick; an unsettled one would say `none`, 0.
    assert_eq!(terminal[0].strategy, Strategy::Model);
    assert_eq!(terminal[0].docs_selected, 2);
}

#[cfg(unix)]
#[tokio::test(start_paused = true)]
async fn names_differing_only_in_a_non_utf8_byte_deliver_the_document_whose_line_was_picked() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let tree = Tree::new();
    let project = tree.dir.path().join("project");
    let espresso = project.join(OsStr::from_bytes(b"caf\xe9.md"));
    let filter = project.join(OsStr::from_bytes(b"caf\xe8.md"));
    for (path, name) in [(&espresso, "Espresso machine"), (&filter, "Filter coffee")] {
        std::fs::write(
            path,
            format!(
                "---\nname: {name}\ndescription: How the office {name} works\ntype: reference\n---\n\nDescale it monthly.\n"
            ),
        )
        .unwrap();
    }
    // Each file in turn is the model's pick; no lexical match, so the pick settles and is
    // delivered at the initial consume.
    for (picked, other) in [(&espresso, &filter), (&filter, &espresso)] {
        let selector = Arc::new(MockSelector::answering(
            vec![id(picked)],
            Duration::from_millis(40),
        ));
        let (mut session, _sink) = session_with(
            tree.roots(),
            Some(Arc::clone(&selector) as Arc<dyn Selector>),
            DeliveryDesign::FastPath,
        );
        session.begin_turn("keep it brief please", &[]);
        let delivery = session.initial().await;
        let memory = delivery.delivered().expect("the model's pick is delivered");
        assert_eq!(memory.strategy, Strategy::Model);
        assert_eq!(paths(&delivery), vec![picked.clone()]);
        // Both files have a line of their own, and the answered id is on the picked one's.
        let manifest = &selector.calls()[0].manifest;
        let lines_naming = |path: &Path| {
            let shown = format!(" {} (", id(path));
            manifest
                .lines()
                .filter(|line| line.contains(&shown))
                .count()
        };
        assert_eq!(lines_naming(picked), 1);
        assert_eq!(lines_naming(other), 1);
        assert_ne!(id(picked), id(other));
    }
}

#[tokio::test(start_paused = true)]
async fn selector_returning_nothing_is_no_relevant_results() {
    let f = fixture();
    let (mut session, _sink) = session_with(
        f.tree.roots(),
        Some(mock(&[], 250)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    session.initial().await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(matches!(
        session.after_tool_result(),
        Delivery::Discarded(DiscardReason::NoRelevantResults)
    ));
}

#[tokio::test(start_paused = true)]
async fn selector_failure_falls_back_to_at_most_five_documents() {
    let tree = Tree::new();
    for i in 0..8 {
        tree.topic(
            "project",
            &format!("incident-{i}.md"),
            "project",
            &format!("Incident {i} postmortem"),
            "Database failover incident",
            "Failover took four minutes.",
        );
    }
    let selector: Arc<dyn Selector> = Arc::new(MockSelector::failing(
        SelectorError::Http { status: 500 },
        Duration::from_millis(80),
    ));
    let (mut session, sink) = session_with(tree.roots(), Some(selector), DeliveryDesign::FastPath);
    session.begin_turn("database failover incident", &[]);
    assert_eq!(paths(&session.initial().await).len(), 2);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let delivery = session.after_tool_result();
    let refined = delivery.delivered().expect("fallback delivered");
    assert_eq!(refined.strategy, Strategy::Heuristic);
    // Five fallback documents minus the two the fast phase already sent.
    assert_eq!(refined.documents.len(), 3);
    let recall = &sink.recalls()[0];
    assert_eq!(recall.strategy, Strategy::Heuristic);
    assert_eq!(recall.docs_selected, 5);
}

#[tokio::test(start_paused = true)]
async fn a_recall_settling_after_a_selector_failure_records_one_selector_error_event() {
    let f = fixture();
    let selector: Arc<dyn Selector> = Arc::new(MockSelector::failing(
        SelectorError::Http { status: 503 },
        Duration::from_millis(80),
    ));
    let (mut session, sink) =
        session_with(f.tree.roots(), Some(selector), DeliveryDesign::FastPath);
    session.begin_turn(ROLLBACK_QUERY, &[]);
    session.initial().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    session.after_tool_result();
    session.end_turn();

    let failures = sink.selector_errors();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].kind, "http_503");
    let settled = session.latest_recall().and_then(|state| state.settled);
    assert_eq!(
        settled.and_then(|s| s.selector_failure.clone()).as_ref(),
        Some(&failures[0])
    );
}

#[tokio::test(start_paused = true)]
async fn a_selector_cancelled_by_the_turns_end_records_no_selector_error_event() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.rollback], 500)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    session.initial().await;
    session.end_turn();
    tokio::time::sleep(Duration::from_secs(1)).await;

    assert!(sink.selector_errors().is_empty(), "{:?}", sink.events());
}

#[tokio::test(start_paused = true)]
async fn settled_recall_without_selector_is_delivered_initially_as_refined_heuristic() {
    let f = fixture();
    let (mut session, sink) = session_with(f.tree.roots(), None, DeliveryDesign::FastPath);
    session.begin_turn(ROLLBACK_QUERY, &[]);
    let delivery = session.initial().await;
    let memory = delivery.delivered().expect("delivered");
    assert_eq!(memory.phase, Phase::Refined);
    assert_eq!(memory.strategy, Strategy::Heuristic);
    assert_eq!(paths(&delivery)[0], f.rollback);
    assert_eq!(sink.deliveries().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn single_path_design_delivers_nothing_at_a_zero_wait_initial_consume() {
    let f = fixture();
    let (mut session, _sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.rollback], 40)),
        DeliveryDesign::SinglePath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    let started = Instant::now();
    assert!(matches!(session.initial().await, Delivery::Pending));
    assert_eq!(started.elapsed(), Duration::ZERO);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        paths(&session.after_tool_result()),
        vec![f.rollback.clone()]
    );
}

#[tokio::test(start_paused = true)]
async fn documents_delivered_earlier_are_excluded_from_later_recalls_until_reset() {
    let f = fixture();
    let (mut session, _sink) = session_with(f.tree.roots(), None, DeliveryDesign::FastPath);
    session.begin_turn(ROLLBACK_QUERY, &[]);
    let first = paths(&session.initial().await);
    assert!(first.contains(&f.rollback));
    session.end_turn();
    session.begin_turn(ROLLBACK_QUERY, &[]);
    let second = paths(&session.initial().await);
    assert!(second.iter().all(|p| !first.contains(p)));
    session.reset();
    session.begin_turn(ROLLBACK_QUERY, &[]);
    assert!(paths(&session.initial().await).contains(&f.rollback));
}

#[tokio::test(start_paused = true)]
async fn active_tool_noise_is_filtered_on_the_deterministic_path() {
    let f = fixture();
    let noisy = f.tree.topic(
        "project",
        "deploy-tool-usage.md",
        "reference",
        "deploy tool usage reference",
        "Parameter schema for the deploy tool: how to roll back a release",
        "Call deploy with --to.",
    );
    let (mut session, _sink) = session_with(f.tree.roots(), None, DeliveryDesign::FastPath);
    session.begin_turn(ROLLBACK_QUERY, &["mcp__ops__deploy".to_owned()]);
    let delivered = paths(&session.initial().await);
    assert!(!delivered.contains(&noisy));
    assert!(delivered.contains(&f.rollback));
}

#[tokio::test(start_paused = true)]
async fn every_cancel_reason_is_recorded_on_the_terminal_event() {
    for reason in [
        CancelReason::NoSafeDeliveryPoint,
        CancelReason::NewQuery,
        CancelReason::Reset,
        CancelReason::Abort,
        CancelReason::Shutdown,
    ] {
        let f = fixture();
        let (mut session, sink) = session_with(
            f.tree.roots(),
            Some(mock(&[&f.dashboard], 5_000)),
            DeliveryDesign::FastPath,
        );
        session.begin_turn("qqzx nothing", &[]);
        session.cancel(reason);
        let events = terminal_events(&sink);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].discard_reason, Some(reason.into()));
        assert_eq!(events[0].delivery_point, DeliveryPoint::Discarded);
    }
}

#[tokio::test(start_paused = true)]
async fn shutdown_discards_the_pending_recall() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.rollback], 5_000)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    session.initial().await;
    session.shutdown();
    let terminal = terminal_events(&sink);
    assert_eq!(terminal.len(), 1);
    assert_eq!(terminal[0].discard_reason, Some(DiscardReason::Shutdown));
}

#[tokio::test(start_paused = true)]
async fn dropping_the_session_cancels_the_recall_and_records_only_an_abort() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse], 3_000)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn("qqzx nothing lexical", &[]);
    tokio::time::sleep(Duration::from_millis(10)).await;
    drop(session);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(
        sink.recalls().is_empty(),
        "a recall dropped with its session emits no memory.recall"
    );
    let events = sink.deliveries();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].phase, Phase::Refined);
    assert_eq!(events[0].delivery_point, DeliveryPoint::Discarded);
    assert_eq!(events[0].discard_reason, Some(DiscardReason::Abort));
}

#[tokio::test(start_paused = true)]
async fn abort_event_of_a_dropped_session_carries_the_elapsed_latency() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse], 3_000)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn("qqzx nothing lexical", &[]);
    tokio::time::sleep(Duration::from_millis(250)).await;
    drop(session);
    let terminal = terminal_events(&sink);
    assert_eq!(terminal[0].discard_reason, Some(DiscardReason::Abort));
    assert!((terminal[0].latency_ms - 250.0).abs() < f64::EPSILON);
}

#[tokio::test(start_paused = true)]
async fn abort_event_of_a_dropped_session_carries_the_settled_selection() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse, &f.dashboard], 40)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn("qqzx nothing lexical", &[]);
    assert!(session.wait_settled(Duration::from_secs(1)).await);
    drop(session);
    let terminal = terminal_events(&sink);
    assert_eq!(terminal[0].discard_reason, Some(DiscardReason::Abort));
    assert_eq!(terminal[0].strategy, Strategy::Model);
    assert_eq!(terminal[0].docs_selected, 2);
}

#[tokio::test(start_paused = true)]
async fn abort_token_fired_before_end_turn_is_recorded_as_abort() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse], 5_000)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn("qqzx nothing lexical", &[]);
    session.abort_token().unwrap().cancel();
    assert!(matches!(
        session.end_turn(),
        Delivery::Discarded(DiscardReason::Abort)
    ));
    assert_eq!(
        terminal_events(&sink)[0].discard_reason,
        Some(DiscardReason::Abort)
    );
}

#[tokio::test(start_paused = true)]
async fn abort_token_fired_before_the_next_query_is_recorded_as_abort() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse], 5_000)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn("qqzx nothing lexical", &[]);
    session.abort_token().unwrap().cancel();
    session.begin_turn(ROLLBACK_QUERY, &[]);
    let terminal = terminal_events(&sink);
    assert_eq!(terminal.len(), 1);
    assert_eq!(terminal[0].discard_reason, Some(DiscardReason::Abort));
}

#[tokio::test(start_paused = true)]
async fn fully_fast_delivered_result_stays_already_delivered_when_the_turn_is_aborted() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.rollback], 250)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    assert!(paths(&session.initial().await).contains(&f.rollback));
    assert!(session.wait_settled(Duration::from_secs(1)).await);
    session.abort_token().unwrap().cancel();
    assert!(matches!(
        session.end_turn(),
        Delivery::Discarded(DiscardReason::AlreadyDelivered)
    ));
    assert_eq!(
        terminal_events(&sink)[0].discard_reason,
        Some(DiscardReason::AlreadyDelivered)
    );
}

#[tokio::test(start_paused = true)]
async fn initial_consume_dropped_mid_wait_still_delivers_the_fast_result_on_the_next_call() {
    let f = fixture();
    let (mut session, _sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse], 3_000)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    // A zero timeout polls the wait once, before the recall task has run, then drops it.
    let dropped = tokio::time::timeout(Duration::ZERO, session.initial()).await;
    assert!(dropped.is_err(), "the first wait was dropped mid-wait");
    let delivery = session.initial().await;
    let memory = delivery
        .delivered()
        .expect("the fast result is still delivered");
    assert_eq!(memory.phase, Phase::Fast);
    assert_eq!(paths(&delivery)[0], f.rollback);
}

#[tokio::test(start_paused = true)]
async fn unreadable_project_root_settles_with_nothing_and_says_why() {
    let tree = Tree::new();
    let file_root = tree.dir.path().join("not-a-dir");
    std::fs::write(&file_root, "x").unwrap();
    let roots = MemoryRoots {
        project: Some(file_root),
        user: None,
    };
    let (mut session, _sink) = session_with(roots, None, DeliveryDesign::FastPath);
    session.begin_turn(ROLLBACK_QUERY, &[]);
    assert!(session.initial().await.delivered().is_none());
    let settled = session.latest_recall().unwrap().settled.unwrap();
    assert!(settled.scan_error.is_some());
    assert_eq!(settled.strategy, Strategy::None);
}

#[test]
fn rendered_prompt_with_old_fresh_truncated_and_empty_documents() {
    let tree = Tree::new();
    let old = tree.topic(
        "project",
        "auth/token-rotation.md",
        "project",
        "Token rotation",
        "Service tokens rotate every 30 days",
        "Rotation runs from the `rotate-tokens` job; the vault path is ops/tokens.",
    );
    let fresh = tree.topic(
        "user",
        "terse.md",
        "user",
        "Terse answers",
        "The user prefers short answers",
        "Keep answers under ten lines.",
    );
    let long = tree.topic(
        "project",
        "runbook.md",
        "reference",
        "Long runbook",
        "",
        &"step ".repeat(400),
    );
    let empty = tree.topic(
        "user",
        "placeholder.md",
        "feedback",
        "Review style",
        "How to review",
        "_No entries yet._",
    );
    let now = SystemTime::now();
    for (path, age) in [
        (&old, 47 * DAY),
        (&fresh, DAY / 4),
        (&long, DAY + DAY / 2),
        (&empty, 2 * DAY),
    ] {
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(now - age)
            .unwrap();
    }
    let cache = memory_scan::DocumentCache::new();
    let scan = cache.scan_recall(&tree.roots()).unwrap();
    let by_path = |p: &Path| {
        scan.documents
            .iter()
            .find(|d| d.path() == p)
            .map(|d| d.document().clone())
            .unwrap()
    };
    let docs = [
        by_path(&old),
        by_path(&fresh),
        by_path(&long),
        by_path(&empty),
    ];
    insta::assert_snapshot!(render_prompt(docs.iter(), now));
}

mod interleavings {
    //! Random interleavings of publication, settling, selector outcomes, delivery points and
    //! cancellations; the session's guarantees must hold in every one.

    use super::*;
    use proptest::prelude::{Just, ProptestConfig, prop_assert, prop_oneof, proptest};
    use proptest::strategy::Strategy as ValueStrategy;

    #[derive(Debug, Clone)]
    enum Op {
        Begin {
            query: usize,
            latency_ms: u64,
            answer: Option<Vec<usize>>,
        },
        ConsumeInitial,
        ConsumeToolResult,
        Advance(u64),
        EndTurn,
        Cancel(usize),
        Reset,
    }

    const QUERIES: [&str; 4] = [
        ROLLBACK_QUERY,
        "deploy checklist before the release",
        "terse answers latency dashboard release",
        "qqzx nothing matches",
    ];
    const REASONS: [CancelReason; 5] = [
        CancelReason::NoSafeDeliveryPoint,
        CancelReason::NewQuery,
        CancelReason::Reset,
        CancelReason::Abort,
        CancelReason::Shutdown,
    ];

    fn op() -> impl ValueStrategy<Value = Op> {
        prop_oneof![
            (
                0..QUERIES.len(),
                prop_oneof![Just(5_u64), Just(40), Just(250), Just(600), Just(3_000)],
                proptest::option::weighted(0.8, proptest::collection::vec(0..4_usize, 0..4)),
            )
                .prop_map(|(query, latency_ms, answer)| Op::Begin {
                    query,
                    latency_ms,
                    answer
                }),
            Just(Op::ConsumeInitial),
            Just(Op::ConsumeToolResult),
            prop_oneof![Just(1_u64), Just(50), Just(120), Just(700), Just(4_000)]
                .prop_map(Op::Advance),
            Just(Op::EndTurn),
            (0..REASONS.len()).prop_map(Op::Cancel),
            Just(Op::Reset),
        ]
    }

    /// Applies the ops and checks every invariant; returns an error message on the first breach.
    async fn run(ops: Vec<Op>) -> Result<(), String> {
        let f = fixture();
        let docs = [&f.rollback, &f.checklist, &f.terse, &f.dashboard];
        let selector = Arc::new(MockSelector::new());
        let (mut session, sink) = session_with(
            f.tree.roots(),
            Some(Arc::clone(&selector) as Arc<dyn Selector>),
            DeliveryDesign::FastPath,
        );
        let mut delivered_since_reset = std::collections::HashSet::new();
        let mut recall_open = false;
        let mut segments: Vec<usize> = Vec::new();
        for op in ops {
            let delivery = match op {
                Op::Begin {
                    query,
                    latency_ms,
                    answer,
                } => {
                    selector.push(MockStep {
                        after: Duration::from_millis(latency_ms),
                        answer: match answer {
                            Some(picks) => {
                                MockAnswer::Ids(picks.iter().map(|&i| id(docs[i])).collect())
                            }
                            None => MockAnswer::Error(SelectorError::Http { status: 503 }),
                        },
                    });
                    // The previous recall's terminal event is emitted inside `begin_turn`.
                    session.begin_turn(QUERIES[query], &[]);
                    segments.push(sink.deliveries().len());
                    recall_open = true;
                    None
                }
                Op::ConsumeInitial => Some(session.initial().await),
                Op::ConsumeToolResult => Some(session.after_tool_result()),
                Op::Advance(ms) => {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    None
                }
                Op::EndTurn => {
                    session.end_turn();
                    recall_open = false;
                    None
                }
                Op::Cancel(i) => {
                    session.cancel(REASONS[i]);
                    recall_open = false;
                    None
                }
                Op::Reset => {
                    session.reset();
                    delivered_since_reset.clear();
                    recall_open = false;
                    None
                }
            };
            let Some(delivery) = delivery else { continue };
            check_delivery(&delivery, &mut recall_open, &mut delivered_since_reset)?;
        }
        session.shutdown();
        let events = sink.deliveries();
        segments.push(events.len());
        for (n, window) in segments.windows(2).enumerate() {
            let recall_events = &events[window[0]..window[1]];
            let fast = recall_events
                .iter()
                .filter(|e| e.phase == Phase::Fast)
                .count();
            let terminal = recall_events
                .iter()
                .filter(|e| e.phase == Phase::Refined)
                .count();
            if fast > 1 || terminal != 1 {
                return Err(format!(
                    "recall {n}: {fast} fast and {terminal} terminal events"
                ));
            }
        }
        Ok(())
    }

    /// Checks one delivery point's result against the session guarantees.
    fn check_delivery(
        delivery: &Delivery,
        recall_open: &mut bool,
        delivered_since_reset: &mut std::collections::HashSet<PathBuf>,
    ) -> Result<(), String> {
        if let Delivery::Delivered(memory) = delivery {
            if !*recall_open {
                return Err("delivered after the recall was cancelled or ended".into());
            }
            let bound = if memory.phase == Phase::Fast { 2 } else { 5 };
            if memory.documents.is_empty() || memory.documents.len() > bound {
                return Err(format!(
                    "{:?} delivery of {} documents",
                    memory.phase,
                    memory.documents.len()
                ));
            }
            for doc in &memory.documents {
                if !delivered_since_reset.insert(doc.path().to_path_buf()) {
                    return Err(format!("{} delivered twice", doc.path().display()));
                }
            }
            if memory.phase == Phase::Refined {
                *recall_open = false;
            }
        }
        if matches!(delivery, Delivery::Discarded(_) | Delivery::Idle) {
            *recall_open = false;
        }
        Ok(())
    }

    /// 64 cases in every test run; `PROPTEST_CASES` asks for more (`cargo xtask fuzz` runs
    /// 10,000).
    fn cases() -> u32 {
        std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|cases| cases.parse().ok())
            .unwrap_or(64)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

        #[test]
        fn session_guarantees_hold_under_any_interleaving(ops in proptest::collection::vec(op(), 1..24)) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .start_paused(true)
                .build()
                .unwrap();
            let outcome = runtime.block_on(run(ops));
            prop_assert!(outcome.is_ok(), "{}", outcome.unwrap_err());
        }
    }
}

// ---- the confidence-gated design --------------------------------------------------------------

/// Shares no whole word with any document of the fixture, but `ease` occurs inside "release" in
/// the rollback runbook's title and description and in the checklist's description, so the fast
/// result is the runbook: a weak one. The terse-answers preference is what it asks about.
const NOISY_QUERY: &str = "ease up, less length";

fn initial_waits(sink: &RecordingSink) -> Vec<Option<InitialWait>> {
    sink.deliveries().iter().map(|e| e.initial_wait).collect()
}

#[tokio::test(start_paused = true)]
async fn gated_confident_fast_result_ends_the_initial_wait_at_once() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.checklist], 40)),
        DeliveryDesign::Gated,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    let started = Instant::now();
    let delivery = session.initial().await;
    assert_eq!(started.elapsed(), Duration::ZERO);
    let memory = delivery
        .delivered()
        .expect("confident fast result delivered");
    assert_eq!(memory.phase, Phase::Fast);
    assert_eq!(paths(&delivery)[0], f.rollback);
    assert_eq!(initial_waits(&sink), vec![Some(InitialWait::ConfidentFast)]);
}

#[tokio::test(start_paused = true)]
async fn gated_weak_fast_result_is_held_and_a_settle_at_40_ms_is_delivered_instead() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse], 40)),
        DeliveryDesign::Gated,
    );
    session.begin_turn(NOISY_QUERY, &[]);
    let fast = {
        assert!(session.wait_published(FIRST_PROMPT_CEILING).await);
        session
            .latest_recall()
            .and_then(|s| s.fast)
            .expect("a fast result")
    };
    assert_eq!(fast.confidence, FastConfidence::Weak);
    assert_eq!(fast.documents[0].path(), f.rollback);
    let started = Instant::now();
    let delivery = session.initial().await;
    assert_eq!(started.elapsed(), Duration::from_millis(40));
    let memory = delivery.delivered().expect("settled result delivered");
    assert_eq!(memory.phase, Phase::Refined);
    assert_eq!(memory.strategy, Strategy::Model);
    assert_eq!(paths(&delivery), vec![f.terse.clone()]);
    let events = sink.deliveries();
    assert_eq!(events.len(), 1, "no fast event: {events:?}");
    assert_eq!(events[0].delivery_point, DeliveryPoint::Initial);
    assert_eq!(
        events[0].initial_wait,
        Some(InitialWait::WeakFastSuperseded)
    );
}

#[tokio::test(start_paused = true)]
async fn gated_weak_fast_result_with_a_slow_selector_is_delivered_at_exactly_the_ceiling() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.rollback, &f.terse], 600)),
        DeliveryDesign::Gated,
    );
    session.begin_turn(NOISY_QUERY, &[]);
    let started = Instant::now();
    let initial = session.initial().await;
    assert_eq!(started.elapsed(), FIRST_PROMPT_CEILING);
    let memory = initial
        .delivered()
        .expect("weak fast result delivered at the ceiling");
    assert_eq!(memory.phase, Phase::Fast);
    let fast = paths(&initial);
    assert_eq!(fast[0], f.rollback);
    assert!(session.has_pending_recall());
    tokio::time::sleep(Duration::from_millis(600)).await;
    let later = session.after_tool_result();
    let refined = paths(&later);
    // The model picked the runbook again and the preference: only the preference is new.
    assert_eq!(refined, vec![f.terse.clone()]);
    assert!(refined.iter().all(|p| !fast.contains(p)));
    assert_eq!(later.delivered().unwrap().strategy, Strategy::Model);
    assert_eq!(
        initial_waits(&sink),
        vec![
            Some(InitialWait::WeakFastAtCeiling),
            Some(InitialWait::WeakFastAtCeiling)
        ]
    );
    assert_eq!(terminal_events(&sink).len(), 1);
}

#[tokio::test(start_paused = true)]
async fn fast_path_delivers_the_weak_fast_result_at_once_where_gated_waits() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse], 40)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(NOISY_QUERY, &[]);
    let started = Instant::now();
    let delivery = session.initial().await;
    assert_eq!(started.elapsed(), Duration::ZERO);
    assert_eq!(paths(&delivery)[0], f.rollback);
    assert_eq!(initial_waits(&sink), vec![Some(InitialWait::Fast)]);
}

#[tokio::test(start_paused = true)]
async fn gated_turn_ending_after_a_weak_fast_delivery_records_one_terminal_event() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse], 3_000)),
        DeliveryDesign::Gated,
    );
    session.begin_turn(NOISY_QUERY, &[]);
    session.initial().await;
    session.end_turn();
    let terminal = terminal_events(&sink);
    assert_eq!(terminal.len(), 1);
    assert_eq!(
        terminal[0].discard_reason,
        Some(DiscardReason::NoSafeDeliveryPoint)
    );
    assert_eq!(
        terminal[0].initial_wait,
        Some(InitialWait::WeakFastAtCeiling)
    );
}

#[tokio::test(start_paused = true)]
async fn gated_wait_held_on_a_weak_fast_result_ends_on_cancellation_without_delivery() {
    let f = fixture();
    let (mut session, sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse], 3_000)),
        DeliveryDesign::Gated,
    );
    session.begin_turn(NOISY_QUERY, &[]);
    let abort = session.abort_token().unwrap();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(30)).await;
        abort.cancel();
    });
    let started = Instant::now();
    let delivery = session.initial().await;
    assert_eq!(started.elapsed(), Duration::from_millis(30));
    assert!(matches!(
        delivery,
        Delivery::Discarded(DiscardReason::Abort)
    ));
    assert_eq!(initial_waits(&sink), vec![Some(InitialWait::Cancelled)]);
}

/// A fast-path session over `f` whose model picks the preference and the dashboard after
/// 250 ms, capped at `cap` documents per turn.
fn capped_session(f: &Fixture, cap: usize) -> (RecallSession, Arc<RecordingSink>) {
    let sink = Arc::new(RecordingSink::new());
    let mut config =
        SessionConfig::new(f.tree.roots(), Arc::clone(&sink) as Arc<dyn TelemetrySink>);
    config.selector = Some(mock(&[&f.terse, &f.dashboard], 250));
    config.clock = Arc::new(FixedClock(SystemTime::now()));
    config.turn_cap = Some(std::num::NonZeroUsize::new(cap).unwrap());
    config.delivery_rule = DeliveryRule::UNTRIMMED;
    (RecallSession::new(config), sink)
}

#[tokio::test(start_paused = true)]
async fn a_turn_cap_cuts_the_refined_delivery_to_what_the_fast_one_left() {
    let f = fixture();
    let (mut session, _sink) = capped_session(&f, 3);
    session.begin_turn(ROLLBACK_QUERY, &[]);
    let fast = session.initial().await;
    assert_eq!(
        paths(&fast).len(),
        2,
        "the fast result carries two documents"
    );
    assert!(session.wait_settled(Duration::from_secs(1)).await);

    let refined = session.after_tool_result();

    assert_eq!(paths(&refined), vec![f.terse.clone()]);
    assert!(
        !session.delivered().contains(&f.dashboard),
        "a document cut by the cap is not marked delivered"
    );
}

#[tokio::test(start_paused = true)]
async fn a_turn_cap_the_fast_delivery_filled_discards_the_refined_result() {
    let f = fixture();
    let (mut session, sink) = capped_session(&f, 2);
    session.begin_turn(ROLLBACK_QUERY, &[]);
    assert_eq!(paths(&session.initial().await).len(), 2);
    assert!(session.wait_settled(Duration::from_secs(1)).await);

    let refined = session.after_tool_result();

    assert!(
        matches!(refined, Delivery::Discarded(DiscardReason::TurnCapReached)),
        "{refined:?}"
    );
    assert_eq!(
        terminal_events(&sink)[0].discard_reason,
        Some(DiscardReason::TurnCapReached)
    );
}

#[tokio::test(start_paused = true)]
async fn a_turn_cap_of_one_cuts_the_fast_delivery_too() {
    let f = fixture();
    let (mut session, _sink) = capped_session(&f, 1);
    session.begin_turn(ROLLBACK_QUERY, &[]);

    let fast = session.initial().await;

    assert_eq!(paths(&fast), vec![f.rollback.clone()]);
}

#[tokio::test(start_paused = true)]
async fn without_a_turn_cap_a_turn_delivers_the_fast_and_the_refined_documents() {
    let f = fixture();
    let (mut session, _sink) = session_with(
        f.tree.roots(),
        Some(mock(&[&f.terse, &f.dashboard], 250)),
        DeliveryDesign::FastPath,
    );
    session.begin_turn(ROLLBACK_QUERY, &[]);
    assert_eq!(paths(&session.initial().await).len(), 2);
    assert!(session.wait_settled(Duration::from_secs(1)).await);

    let refined = session.after_tool_result();

    assert_eq!(paths(&refined), vec![f.terse.clone(), f.dashboard.clone()]);
}

/// A session over the fixture with no selector and the given delivery rule.
fn heuristic_session(f: &Fixture, rule: DeliveryRule) -> (RecallSession, Arc<RecordingSink>) {
    let sink = Arc::new(RecordingSink::new());
    let mut config =
        SessionConfig::new(f.tree.roots(), Arc::clone(&sink) as Arc<dyn TelemetrySink>);
    config.clock = Arc::new(FixedClock(SystemTime::now()));
    config.delivery_rule = rule;
    (RecallSession::new(config), sink)
}

#[tokio::test(start_paused = true)]
async fn by_default_a_document_matching_only_function_words_is_not_delivered_and_counted_trimmed() {
    let f = fixture();
    let (mut session, sink) = heuristic_session(&f, DeliveryRule::SHIPPED);
    session.begin_turn("how do we roll back the release?", &[]);
    let delivered = paths(&session.initial().await);
    assert_eq!(delivered.first(), Some(&f.rollback));
    assert!(!delivered.contains(&f.terse), "{delivered:?}");
    session.end_turn();
    let recall = &sink.recalls()[0];
    assert!(recall.docs_trimmed > 0);
    assert_eq!(recall.docs_selected, delivered.len());
}

#[tokio::test(start_paused = true)]
async fn the_untrimmed_rule_delivers_the_design_top_five_with_nothing_trimmed() {
    let f = fixture();
    let (mut session, sink) = heuristic_session(&f, DeliveryRule::UNTRIMMED);
    session.begin_turn("how do we roll back the release?", &[]);
    let delivered = paths(&session.initial().await);
    assert!(delivered.contains(&f.terse), "{delivered:?}");
    session.end_turn();
    assert_eq!(sink.recalls()[0].docs_trimmed, 0);
}

#[test]
fn the_default_delivery_rule_is_the_shipped_one() {
    let config = SessionConfig::new(fixture().tree.roots(), Arc::new(RecordingSink::new()));
    assert_eq!(config.delivery_rule, DeliveryRule::SHIPPED);
}
