//! A lexical result's weak matches are given as one line each, not delivered, so the model's
//! pick or a later turn can still deliver them whole.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use delivery_telemetry::{RecordingSink, TelemetrySink};
use memory_scan::MemoryRoots;
use recall_lifecycle::{
    Delivery, DeliveryRule, FixedClock, LINES_HEADER, RecallSession, SessionConfig, Tiering,
    candidate_id,
};
use selector::{MockSelector, Selector};
use tempfile::TempDir;

/// A tree where "rollback staging database migration" matches the migration runbook on three of
/// its four words (a strong match) and the staging note on one (a weak one).
struct Tree {
    _dir: TempDir,
    roots: MemoryRoots,
    runbook: PathBuf,
    staging: PathBuf,
}

const QUERY: &str = "rollback staging database migration";

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let write = |name: &str, title: &str, description: &str, body: &str| {
        let path = project.join(name);
        std::fs::write(
            &path,
            format!(
                "---\nname: {title}\ndescription: {description}\ntype: project\n---\n\n{body}\n"
            ),
        )
        .unwrap();
        path
    };
    let runbook = write(
        "migration-rollback.md",
        "Database migration rollback",
        "Undoing a schema change",
        "Run the down script, then verify the row counts.",
    );
    let staging = write(
        "staging.md",
        "Staging hosts",
        "Where the staging machines live",
        "Two hosts behind the internal load balancer.",
    );
    write(
        "coffee.md",
        "Coffee order",
        "The team's usual order",
        "Flat white, oat milk.",
    );
    Tree {
        roots: MemoryRoots {
            project: Some(project),
            user: None,
        },
        _dir: dir,
        runbook,
        staging,
    }
}

fn session(tree: &Tree, tiering: Tiering, selector: Option<Arc<dyn Selector>>) -> RecallSession {
    let sink = Arc::new(RecordingSink::new());
    let mut config = SessionConfig::new(tree.roots.clone(), sink as Arc<dyn TelemetrySink>);
    config.clock = Arc::new(FixedClock(SystemTime::now()));
    config.delivery_rule = DeliveryRule::SHIPPED;
    config.tiering = tiering;
    config.selector = selector;
    RecallSession::new(config)
}

fn whole(delivery: &Delivery) -> Vec<PathBuf> {
    delivery.delivered().map_or_else(Vec::new, |m| {
        m.documents.iter().map(|d| d.path().to_path_buf()).collect()
    })
}

fn lines(delivery: &Delivery) -> Vec<PathBuf> {
    delivery.delivered().map_or_else(Vec::new, |m| {
        m.lines.iter().map(|d| d.path().to_path_buf()).collect()
    })
}

#[tokio::test(start_paused = true)]
async fn a_weak_match_is_given_as_one_line_and_not_marked_delivered() {
    let tree = tree();
    let mut session = session(&tree, Tiering::SHIPPED, None);
    session.begin_turn(QUERY, &[]);
    let delivery = session.initial().await;
    assert_eq!(whole(&delivery), vec![tree.runbook.clone()]);
    assert_eq!(lines(&delivery), vec![tree.staging.clone()]);
    let prompt = &delivery.delivered().unwrap().prompt;
    assert!(prompt.contains(LINES_HEADER), "{prompt}");
    assert!(
        prompt.contains(&format!("- Staging hosts ({})", tree.staging.display())),
        "{prompt}"
    );
    assert!(!prompt.contains("load balancer"), "{prompt}");
    assert!(session.delivered().contains(&tree.runbook));
    assert!(!session.delivered().contains(&tree.staging));
}

#[tokio::test(start_paused = true)]
async fn a_document_given_as_a_line_is_delivered_whole_when_the_model_picks_it() {
    let tree = tree();
    let selector: Arc<dyn Selector> = Arc::new(MockSelector::answering(
        vec![candidate_id(&tree.staging)],
        Duration::from_millis(500),
    ));
    let mut session = session(&tree, Tiering::SHIPPED, Some(selector));
    session.begin_turn(QUERY, &[]);
    let fast = session.initial().await;
    assert_eq!(lines(&fast), vec![tree.staging.clone()]);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let refined = session.after_tool_result();
    assert_eq!(whole(&refined), vec![tree.staging.clone()]);
    assert!(lines(&refined).is_empty());
}

#[tokio::test(start_paused = true)]
async fn without_tiering_every_delivered_document_is_shown_whole() {
    let tree = tree();
    let mut session = session(&tree, Tiering::Off, None);
    session.begin_turn(QUERY, &[]);
    let delivery = session.initial().await;
    assert_eq!(
        whole(&delivery),
        vec![tree.runbook.clone(), tree.staging.clone()]
    );
    assert!(lines(&delivery).is_empty());
}
