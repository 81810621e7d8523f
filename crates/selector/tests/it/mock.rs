use std::sync::Arc;
use std::time::Duration;

use selector::{
    CancellationToken, MockSelector, MockStep, RecordedCall, SELECTOR_CEILING, SelectionRequest,
    Selector, SelectorError,
};
use tokio::time::Instant;

use crate::support::{ids, sample_candidates};

const DEPLOY: &str = "/work/app/.memory/project/deploy-checklist.md";
const ROLE: &str = "/home/dev/.memory/user/role.md";

async fn ask(selector: &dyn Selector) -> Result<Vec<String>, SelectorError> {
    let candidates = sample_candidates();
    let request = SelectionRequest::new("how do we deploy?", &candidates, 5);
    selector.select(request, CancellationToken::new()).await
}

#[tokio::test(start_paused = true)]
async fn an_unscripted_mock_answers_an_empty_list_immediately() {
    let started = Instant::now();
    assert_eq!(
        ask(&MockSelector::new()).await.unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(started.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn the_answer_arrives_exactly_after_the_scripted_latency() {
    let mock = MockSelector::answering(ids(&[DEPLOY]), Duration::from_millis(250));
    let started = Instant::now();
    assert_eq!(ask(&mock).await.unwrap(), ids(&[DEPLOY]));
    assert_eq!(started.elapsed(), Duration::from_millis(250));
}

#[tokio::test(start_paused = true)]
async fn scripted_steps_play_in_order_then_the_default_repeats() {
    let mock = MockSelector::answering(ids(&[ROLE]), Duration::ZERO);
    mock.push(MockStep::ids(ids(&[DEPLOY]), Duration::ZERO))
        .push(MockStep::error(
            SelectorError::Http { status: 500 },
            Duration::ZERO,
        ));

    assert_eq!(ask(&mock).await.unwrap(), ids(&[DEPLOY]));
    assert_eq!(ask(&mock).await, Err(SelectorError::Http { status: 500 }));
    assert_eq!(ask(&mock).await.unwrap(), ids(&[ROLE]));
    assert_eq!(ask(&mock).await.unwrap(), ids(&[ROLE]));
}

#[tokio::test(start_paused = true)]
async fn a_failing_mock_returns_its_error_after_the_latency() {
    let mock = MockSelector::failing(SelectorError::Http { status: 429 }, Duration::from_secs(2));
    let started = Instant::now();
    assert_eq!(ask(&mock).await, Err(SelectorError::Http { status: 429 }));
    assert_eq!(started.elapsed(), Duration::from_secs(2));
}

#[tokio::test(start_paused = true)]
async fn cancellation_during_the_latency_returns_cancelled_at_once() {
    let mock = MockSelector::answering(ids(&[DEPLOY]), Duration::from_secs(5));
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(40)).await;
        canceller.cancel();
    });
    let candidates = sample_candidates();
    let request = SelectionRequest::new("q", &candidates, 5);

    let started = Instant::now();
    assert_eq!(
        mock.select(request, cancel).await,
        Err(SelectorError::Cancelled)
    );
    assert_eq!(started.elapsed(), Duration::from_millis(40));
}

#[tokio::test(start_paused = true)]
async fn a_latency_beyond_the_ceiling_times_out_at_the_ceiling() {
    let mock = MockSelector::answering(ids(&[DEPLOY]), SELECTOR_CEILING * 2);
    let started = Instant::now();
    assert_eq!(
        ask(&mock).await,
        Err(SelectorError::Timeout(SELECTOR_CEILING))
    );
    assert_eq!(started.elapsed(), SELECTOR_CEILING);
}

#[tokio::test(start_paused = true)]
async fn scripted_ids_outside_the_manifest_are_an_invalid_answer() {
    let mock = MockSelector::answering(ids(&["/not/offered.md"]), Duration::ZERO);
    assert!(matches!(
        ask(&mock).await,
        Err(SelectorError::InvalidAnswer(_))
    ));
}

#[tokio::test(start_paused = true)]
async fn scripted_ids_beyond_the_limit_are_an_invalid_answer() {
    let mock = MockSelector::answering(ids(&[DEPLOY, ROLE]), Duration::ZERO);
    let candidates = sample_candidates();
    let request = SelectionRequest::new("q", &candidates, 1);
    assert!(matches!(
        mock.select(request, CancellationToken::new()).await,
        Err(SelectorError::InvalidAnswer(_))
    ));
}

#[tokio::test(start_paused = true)]
async fn calls_record_the_query_candidates_manifest_limit_and_tools() {
    let mock = MockSelector::new();
    let candidates = sample_candidates();
    let tools = ids(&["mcp__github__create_issue"]);
    let request = SelectionRequest::new("open an issue", &candidates, 3).with_recent_tools(&tools);
    mock.select(request, CancellationToken::new())
        .await
        .unwrap();

    let expected = RecordedCall {
        query: "open an issue".to_owned(),
        candidate_ids: candidates.iter().map(|c| c.id.clone()).collect(),
        manifest: selector::Manifest::build(&candidates).text().to_owned(),
        limit: 3,
        recent_tools: tools,
    };
    assert_eq!(mock.calls(), vec![expected]);
}

#[tokio::test(start_paused = true)]
async fn the_mock_works_behind_a_shared_trait_object() {
    let shared: Arc<dyn Selector> = Arc::new(MockSelector::answering(ids(&[ROLE]), Duration::ZERO));
    let worker = Arc::clone(&shared);
    let picked = tokio::spawn(async move { ask(worker.as_ref()).await })
        .await
        .unwrap();
    assert_eq!(picked.unwrap(), ids(&[ROLE]));
}
