//! Delivery evaluation: does a correct selection actually reach the model, and when?
//!
//! Every answerable case runs one turn through the real recall lifecycle, in a session of its own
//! (so nothing is excluded as delivered earlier). The model is modelled as perfect: after the
//! selector latency it answers exactly the case's relevant documents. What is measured is the
//! delivery design around it.
//!
//! - Tool-free turn: `begin_query` → `consume_initial` → `end_turn`.
//! - Tool-using turn: the same, with a tool result arriving [`TOOL_RESULT_AFTER`] after the query
//!   and consumed with `consume_tool_result` before the turn ends.
//!
//! The modelled scenarios run on a paused tokio clock, so latencies are exact and the run takes
//! no wall time. A smaller set runs the real [`HttpSelector`] against a loopback wiremock server
//! on real time, so the figures also cover the network path.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use delivery_telemetry::{DeliveryPoint, Phase, RecordingSink};
use memory_scan::DocumentCache;
use recall_lifecycle::{DeliveryDesign, FixedClock, RecallSession, SessionConfig};
use selector::{HttpSelector, HttpSelectorConfig, MockSelector, Selector};
use serde::Serialize;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::corpus::Corpus;

/// Modelled selector latencies, in milliseconds (spec §6).
pub const MODELLED_LATENCIES_MS: [u64; 5] = [40, 250, 600, 1_500, 3_000];
/// Selector latencies of the real-network run, in milliseconds.
pub const HTTP_LATENCIES_MS: [u64; 2] = [40, 250];
/// When the tool result of a tool-using turn arrives, after the query.
pub const TOOL_RESULT_AFTER: Duration = Duration::from_secs(5);
/// Gap between the starts of concurrent real-time turns, so their scans do not all compete for
/// the two cores at the same instant and distort the 100 ms initial wait.
const HTTP_STAGGER: Duration = Duration::from_millis(20);

/// Which kind of turn is modelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TurnKind {
    /// The model answers without calling a tool: the initial prompt is the only delivery point.
    ToolFree,
    /// The model calls a tool whose result arrives after [`TOOL_RESULT_AFTER`].
    ToolUsing,
}

impl TurnKind {
    /// The name printed in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnKind::ToolFree => "tool-free",
            TurnKind::ToolUsing => "tool-using",
        }
    }
}

/// The name printed for a delivery design.
pub fn design_name(design: DeliveryDesign) -> &'static str {
    match design {
        DeliveryDesign::FastPath => "fast-path",
        DeliveryDesign::SinglePath => "single-path",
    }
}

/// One scenario's figures over the answerable cases.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioRow {
    /// `mock` (modelled latency, paused clock) or `http` (loopback server, real time).
    pub selector: &'static str,
    /// The selector latency, in milliseconds.
    pub latency_ms: u64,
    /// `tool-free` or `tool-using`.
    pub turn: &'static str,
    /// `single-path` (old) or `fast-path` (shipped).
    pub design: &'static str,
    /// Turns run (answerable cases).
    pub turns: usize,
    /// Share of turns whose initial delivery held at least one relevant document.
    pub first_prompt: f64,
    /// Share of turns where any delivery of the turn held a relevant document.
    pub at_all: f64,
    /// Turns in which some document was delivered twice.
    pub duplicate_turns: usize,
    /// `duplicate_turns / turns`; must be 0.
    pub duplicate_rate: f64,
    /// Turns whose recall did not record exactly one terminal delivery event.
    pub telemetry_violations: usize,
}

/// The delivery section of the evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct DeliveryReport {
    /// When the tool result of a tool-using turn arrives, in milliseconds.
    pub tool_result_after_ms: u64,
    /// Modelled-latency scenarios, both designs.
    pub modelled: Vec<ScenarioRow>,
    /// Real-network scenarios, shipped design only.
    pub http: Vec<ScenarioRow>,
}

/// What one turn delivered.
#[derive(Debug, Clone, Copy, Default)]
struct TurnOutcome {
    first_prompt: bool,
    at_all: bool,
    duplicate: bool,
    terminal_events: usize,
}

/// One answerable case as a turn needs it.
#[derive(Debug, Clone)]
struct TurnCase {
    query: String,
    relevant: HashSet<PathBuf>,
    /// The relevant paths as selector ids, i.e. what a perfect model answers.
    answer: Vec<String>,
}

fn turn_cases(corpus: &Corpus) -> Result<Vec<TurnCase>> {
    corpus
        .answerable()
        .map(|case| {
            let paths = case
                .relevant
                .iter()
                .map(|&i| {
                    corpus
                        .path(i)
                        .map(std::path::Path::to_path_buf)
                        .with_context(|| format!("case {} names a missing document", case.id))
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(TurnCase {
                query: case.query.clone(),
                answer: paths
                    .iter()
                    .map(|p| recall_lifecycle::candidate_id(p))
                    .collect(),
                relevant: paths.into_iter().collect(),
            })
        })
        .collect()
}

/// Runs every modelled and real-network scenario.
pub fn delivery_report(corpus: &Corpus) -> Result<DeliveryReport> {
    let cases = turn_cases(corpus)?;
    ensure!(!cases.is_empty(), "the corpus has no answerable case");
    Ok(DeliveryReport {
        tool_result_after_ms: millis(TOOL_RESULT_AFTER),
        modelled: modelled_scenarios(corpus, &cases)?,
        http: http_scenarios(corpus, &cases)?,
    })
}

fn modelled_scenarios(corpus: &Corpus, cases: &[TurnCase]) -> Result<Vec<ScenarioRow>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .context("could not build the paused-clock runtime")?;
    let mut rows = Vec::new();
    for latency_ms in MODELLED_LATENCIES_MS {
        let latency = Duration::from_millis(latency_ms);
        for kind in [TurnKind::ToolFree, TurnKind::ToolUsing] {
            for design in [DeliveryDesign::SinglePath, DeliveryDesign::FastPath] {
                let outcomes = runtime.block_on(async {
                    let mut outcomes = Vec::with_capacity(cases.len());
                    for case in cases {
                        let selector: Arc<dyn Selector> =
                            Arc::new(MockSelector::answering(case.answer.clone(), latency));
                        outcomes.push(run_turn(corpus, selector, design, kind, case).await);
                    }
                    outcomes
                });
                rows.push(row("mock", latency_ms, kind, design, &outcomes));
            }
        }
    }
    Ok(rows)
}

fn http_scenarios(corpus: &Corpus, cases: &[TurnCase]) -> Result<Vec<ScenarioRow>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("could not build the real-time runtime")?;
    runtime.block_on(async {
        let answers: HashMap<String, Vec<String>> = cases
            .iter()
            .map(|c| (c.query.clone(), c.answer.clone()))
            .collect();
        let mut rows = Vec::new();
        // The servers must outlive every turn that talks to them.
        let mut servers = Vec::with_capacity(HTTP_LATENCIES_MS.len());
        let mut selectors: Vec<(u64, Arc<dyn Selector>)> = Vec::new();
        for latency_ms in HTTP_LATENCIES_MS {
            let server = MockServer::start().await;
            Mock::given(method("POST"))
                .and(path("/v1/chat/completions"))
                .respond_with(PerfectModel {
                    answers: answers.clone(),
                    latency: Duration::from_millis(latency_ms),
                })
                .mount(&server)
                .await;
            let selector: Arc<dyn Selector> = Arc::new(
                HttpSelector::with_api_key(HttpSelectorConfig::new(server.uri(), "eval"), None)
                    .context("could not build the HTTP selector")?,
            );
            servers.push(server);

            // A tool-free turn ends within the 100 ms initial wait, so these simply run in turn.
            let mut outcomes = Vec::with_capacity(cases.len());
            for case in cases {
                let selector = Arc::clone(&selector);
                let turn = run_turn(
                    corpus,
                    selector,
                    DeliveryDesign::FastPath,
                    TurnKind::ToolFree,
                    case,
                );
                outcomes.push(turn.await);
            }
            rows.push(row(
                "http",
                latency_ms,
                TurnKind::ToolFree,
                DeliveryDesign::FastPath,
                &outcomes,
            ));
            selectors.push((latency_ms, selector));
        }

        // Every tool-using turn waits 5 s for its tool result: run them all side by side.
        let mut turns = tokio::task::JoinSet::new();
        let scheduled = selectors.iter().flat_map(|(latency_ms, selector)| {
            cases.iter().map(move |case| (*latency_ms, selector, case))
        });
        for (i, (latency_ms, selector, case)) in scheduled.enumerate() {
            let handle = CorpusHandle::of(corpus);
            let selector = Arc::clone(selector);
            let case = case.clone();
            let start = HTTP_STAGGER.saturating_mul(u32::try_from(i).unwrap_or(u32::MAX));
            turns.spawn(async move {
                tokio::time::sleep(start).await;
                let design = DeliveryDesign::FastPath;
                let outcome =
                    run_turn_with(&handle, selector, design, TurnKind::ToolUsing, &case).await;
                (latency_ms, outcome)
            });
        }
        let mut by_latency: HashMap<u64, Vec<TurnOutcome>> = HashMap::new();
        while let Some(joined) = turns.join_next().await {
            let (latency_ms, outcome) = joined.context("a tool-using turn panicked")?;
            by_latency.entry(latency_ms).or_default().push(outcome);
        }
        for latency_ms in HTTP_LATENCIES_MS {
            let outcomes = by_latency.remove(&latency_ms).unwrap_or_default();
            rows.push(row(
                "http",
                latency_ms,
                TurnKind::ToolUsing,
                DeliveryDesign::FastPath,
                &outcomes,
            ));
        }
        drop(servers);
        rows.sort_by_key(|r| (r.latency_ms, r.turn));
        Ok(rows)
    })
}

/// What a turn needs from the corpus, owned so that a turn can run on a spawned task.
#[derive(Debug, Clone)]
struct CorpusHandle {
    roots: memory_scan::MemoryRoots,
    now: std::time::SystemTime,
    /// Shared by every session: the files never change during the evaluation, so later scans
    /// only check file keys instead of parsing every document again. Exclusion of delivered
    /// documents is per session and unaffected.
    cache: Arc<DocumentCache>,
}

impl CorpusHandle {
    fn of(corpus: &Corpus) -> Self {
        Self {
            roots: corpus.roots(),
            now: corpus.now,
            cache: Arc::clone(&corpus.cache),
        }
    }
}

async fn run_turn(
    corpus: &Corpus,
    selector: Arc<dyn Selector>,
    design: DeliveryDesign,
    kind: TurnKind,
    case: &TurnCase,
) -> TurnOutcome {
    run_turn_with(&CorpusHandle::of(corpus), selector, design, kind, case).await
}

async fn run_turn_with(
    corpus: &CorpusHandle,
    selector: Arc<dyn Selector>,
    design: DeliveryDesign,
    kind: TurnKind,
    case: &TurnCase,
) -> TurnOutcome {
    let sink = Arc::new(RecordingSink::new());
    let mut config = SessionConfig::new(corpus.roots.clone(), sink.clone());
    config.selector = Some(selector);
    config.clock = Arc::new(FixedClock(corpus.now));
    config.design = design;
    config.cache = Arc::clone(&corpus.cache);
    let mut session = RecallSession::new(config);

    session.begin_query(&case.query, &[]);
    let initial = session.consume_initial().await;
    let mut deliveries = vec![initial];
    if kind == TurnKind::ToolUsing {
        tokio::time::sleep(TOOL_RESULT_AFTER).await;
        deliveries.push(session.consume_tool_result());
    }
    deliveries.push(session.end_turn());

    let mut seen = HashSet::new();
    let mut outcome = TurnOutcome::default();
    for (i, delivery) in deliveries.iter().enumerate() {
        let Some(memory) = delivery.delivered() else {
            continue;
        };
        for document in &memory.documents {
            let path = document.document().path();
            let relevant = case.relevant.contains(path);
            outcome.first_prompt |= i == 0 && relevant;
            outcome.at_all |= relevant;
            outcome.duplicate |= !seen.insert(path.to_path_buf());
        }
    }
    outcome.terminal_events = sink
        .deliveries()
        .iter()
        .filter(|e| e.phase == Phase::Refined || e.delivery_point == DeliveryPoint::Discarded)
        .count();
    outcome
}

fn row(
    selector: &'static str,
    latency_ms: u64,
    kind: TurnKind,
    design: DeliveryDesign,
    outcomes: &[TurnOutcome],
) -> ScenarioRow {
    let turns = outcomes.len();
    let share = |count: usize| {
        if turns == 0 {
            0.0
        } else {
            count as f64 / turns as f64
        }
    };
    let duplicate_turns = outcomes.iter().filter(|o| o.duplicate).count();
    ScenarioRow {
        selector,
        latency_ms,
        turn: kind.as_str(),
        design: design_name(design),
        turns,
        first_prompt: share(outcomes.iter().filter(|o| o.first_prompt).count()),
        at_all: share(outcomes.iter().filter(|o| o.at_all).count()),
        duplicate_turns,
        duplicate_rate: share(duplicate_turns),
        telemetry_violations: outcomes.iter().filter(|o| o.terminal_events != 1).count(),
    }
}

/// Every delivery gate the report fails: a document delivered twice in a turn, or a recall
/// without exactly one terminal delivery event.
pub fn delivery_gates(report: &DeliveryReport) -> Vec<String> {
    let mut failures = Vec::new();
    for row in report.modelled.iter().chain(&report.http) {
        let scenario = format!(
            "{} selector, {} ms, {} turn, {}",
            row.selector, row.latency_ms, row.turn, row.design
        );
        if row.duplicate_turns > 0 {
            failures.push(format!(
                "{scenario}: a document was delivered twice in {} of {} turns",
                row.duplicate_turns, row.turns
            ));
        }
        if row.telemetry_violations > 0 {
            failures.push(format!(
                "{scenario}: {} of {} recalls did not record exactly one terminal delivery event",
                row.telemetry_violations, row.turns
            ));
        }
    }
    failures
}

/// A model server that always picks exactly the relevant documents of the query it is asked.
struct PerfectModel {
    answers: HashMap<String, Vec<String>>,
    latency: Duration,
}

impl Respond for PerfectModel {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let chosen = query_of(&request.body)
            .and_then(|query| self.answers.get(&query))
            .cloned()
            .unwrap_or_default();
        let content = json!({ "selected_memories": chosen }).to_string();
        ResponseTemplate::new(200)
            .set_delay(self.latency)
            .set_body_json(json!({
                "id": "chatcmpl-eval",
                "object": "chat.completion",
                "choices": [{
                    "index": 0,
                    "message": { "role": "assistant", "content": content },
                    "finish_reason": "stop",
                }],
            }))
    }
}

/// The query of a selector request: the user message opens with `Query: <query>` followed by a
/// blank line (see `selector::user_message`).
fn query_of(body: &[u8]) -> Option<String> {
    let body: Value = serde_json::from_slice(body).ok()?;
    let user = body
        .get("messages")?
        .as_array()?
        .iter()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?
        .get("content")?
        .as_str()?;
    let rest = user.strip_prefix("Query: ")?;
    let end = rest.find("\n\n")?;
    rest.get(..end).map(str::to_owned)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use selector::{Candidate, Manifest, SelectionRequest, user_message};

    use super::*;
    use crate::eval::corpus;

    fn real_corpus() -> Corpus {
        corpus::load(&corpus::corpus_dir().unwrap(), SystemTime::now()).unwrap()
    }

    #[test]
    fn perfect_model_reads_the_query_from_the_selector_user_message() {
        let candidates = [Candidate {
            id: "/memory/deploy.md".to_owned(),
            memory_type: "project".to_owned(),
            mtime: SystemTime::UNIX_EPOCH,
            description: "How to deploy".to_owned(),
            keywords: Vec::new(),
        }];
        let request = SelectionRequest {
            query: "how do I roll back? 回滚",
            candidates: &candidates,
            limit: 5,
            recent_tools: &["Bash".to_owned()],
        };
        let body = json!({
            "messages": [
                { "role": "system", "content": "Query: not this one\n\n" },
                { "role": "user", "content": user_message(&request, &Manifest::build(&candidates)) },
            ],
        });
        let query = query_of(body.to_string().as_bytes());
        assert_eq!(query.as_deref(), Some("how do I roll back? 回滚"));
    }

    #[test]
    fn delivery_gates_name_every_scenario_with_duplicates_or_broken_telemetry() {
        let clean = ScenarioRow {
            selector: "mock",
            latency_ms: 250,
            turn: "tool-using",
            design: "fast-path",
            turns: 10,
            first_prompt: 1.0,
            at_all: 1.0,
            duplicate_turns: 0,
            duplicate_rate: 0.0,
            telemetry_violations: 0,
        };
        let duplicated = ScenarioRow {
            duplicate_turns: 1,
            duplicate_rate: 0.1,
            ..clean.clone()
        };
        let untracked = ScenarioRow {
            selector: "http",
            telemetry_violations: 2,
            ..clean.clone()
        };
        let report = DeliveryReport {
            tool_result_after_ms: 5_000,
            modelled: vec![clean, duplicated],
            http: vec![untracked],
        };
        let failures = delivery_gates(&report);
        assert_eq!(failures.len(), 2, "{failures:#?}");
        assert!(failures[0].contains("delivered twice in 1 of 10 turns"));
        assert!(failures[1].starts_with("http selector"));
    }

    #[test]
    fn modelled_scenarios_cover_every_latency_turn_and_design_without_duplicates() {
        let corpus = real_corpus();
        let cases = turn_cases(&corpus).unwrap();
        let rows = modelled_scenarios(&corpus, &cases).unwrap();
        assert_eq!(rows.len(), MODELLED_LATENCIES_MS.len() * 2 * 2);
        assert!(
            rows.iter()
                .all(|r| r.turns == cases.len() && r.duplicate_turns == 0)
        );
        assert!(rows.iter().all(|r| r.telemetry_violations == 0));
    }

    #[test]
    fn a_perfect_model_reaches_every_tool_using_turn_under_both_designs() {
        let corpus = real_corpus();
        let cases = turn_cases(&corpus).unwrap();
        let rows = modelled_scenarios(&corpus, &cases).unwrap();
        for row in rows.iter().filter(|r| r.turn == "tool-using") {
            assert!((row.at_all - 1.0).abs() < 1e-12, "{row:?}");
        }
    }
}
