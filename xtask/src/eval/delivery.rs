//! Delivery evaluation: does a correct selection actually reach the model, and when?
//!
//! Every answerable case runs one turn through the real recall lifecycle, in a session of its own
//! (so nothing is excluded as delivered earlier). The model is modelled as perfect: after the
//! selector latency it answers exactly the case's relevant documents. What is measured is the
//! delivery design around it.
//!
//! - Tool-free turn: `begin_turn` → `initial` → `end_turn`.
//! - Tool-using turn: the same, with a tool result arriving [`TOOL_RESULT_AFTER`] after the query
//!   and consumed with `after_tool_result` before the turn ends.
//!
//! The modelled scenarios run on a paused tokio clock, so latencies are exact and the run takes
//! no wall time. A smaller set runs the real [`HttpSelector`](selector_http::HttpSelector)
//! against a loopback wiremock server on real time, so the figures also cover the network path.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use delivery_telemetry::{DeliveryPoint, InitialWait, Phase, RecordingSink};
use lexical_score::{ActiveToolAliases, CandidateSelection, QueryTokens};
use memory_scan::DocumentCache;
use recall_facade::{MemoryRecall, RecallConfig, ScannerChoice, SelectorChoice};
use recall_lifecycle::{Delivery, DeliveryDesign, DeliveryRule, FixedClock};
use selector::{MockSelector, Selector};
use serde::Serialize;

use super::corpus::{self, Corpus};
use super::figures::TurnCount;

mod gates;
mod http;

pub use gates::delivery_gates;
use http::http_scenarios;

/// Modelled selector latencies, in milliseconds (`docs/spec.md#measurements`).
pub const MODELLED_LATENCIES_MS: [u64; 5] = [40, 250, 600, 1_500, 3_000];
/// Selector latencies of the real-network run, in milliseconds: the same as the modelled ones.
pub const HTTP_LATENCIES_MS: [u64; 5] = MODELLED_LATENCIES_MS;
/// Every delivery design, in report order.
pub const DESIGNS: [DeliveryDesign; 3] = [
    DeliveryDesign::SinglePath,
    DeliveryDesign::FastPath,
    DeliveryDesign::Gated,
];
/// From this selector latency on, the model cannot land inside the initial ceiling, so the gated
/// design may cost wait time but must never deliver less than the fast path.
pub const GATED_NEVER_BELOW_FROM_MS: u64 = 250;
/// The selector latency at which the gated design must deliver the model's answer on the first
/// prompt of every `semantic-noisy` turn (modelled), where the fast path delivers the wrong
/// lexical result.
pub const GATED_WINS_AT_MS: u64 = 40;
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
    design.as_str()
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
    /// `single-path` (the zero-wait baseline), `fast-path` (shipped default) or `gated`.
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
    /// Share of turns whose initial point held a weak fast result (telemetry `initial_wait`
    /// `weak_fast_superseded` or `weak_fast_at_ceiling`); only the gated design holds.
    pub held_rate: f64,
    /// Mean time the initial consume point waited, in milliseconds: where holding weak fast
    /// results shows (a few turns each waiting up to the ceiling).
    pub initial_wait_mean_ms: f64,
    /// Median time the initial consume point waited, in milliseconds.
    pub initial_wait_p50_ms: f64,
    /// 95th-percentile time the initial consume point waited, in milliseconds.
    pub initial_wait_p95_ms: f64,
    /// The same shares per corpus slice, in slice order.
    pub slices: Vec<SliceFigures>,
}

/// One scenario's figures over the answerable cases of one slice.
#[derive(Debug, Clone, Serialize)]
pub struct SliceFigures {
    /// The slice name.
    pub slice: &'static str,
    /// Turns run.
    pub turns: usize,
    /// Share of turns whose initial delivery held at least one relevant document.
    pub first_prompt: f64,
    /// Share of turns where any delivery of the turn held a relevant document.
    pub at_all: f64,
    /// Turns whose scan outlasted the initial ceiling (see [`delivery_gates`]).
    pub late_scans: usize,
}

impl ScenarioRow {
    /// The figures of one slice, when it has turns.
    pub fn slice(&self, name: &str) -> Option<&SliceFigures> {
        self.slices.iter().find(|s| s.slice == name)
    }
}

/// The delivery section of the evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct DeliveryReport {
    /// When the tool result of a tool-using turn arrives, in milliseconds.
    pub tool_result_after_ms: u64,
    /// Modelled-latency scenarios, every design.
    pub modelled: Vec<ScenarioRow>,
    /// Real-network scenarios, every design.
    pub http: Vec<ScenarioRow>,
}

/// What one turn delivered.
#[derive(Debug, Clone, Copy, Default)]
#[allow(
    clippy::struct_excessive_bools,
    reason = "independent facts of one turn, each counted on its own"
)]
pub(super) struct TurnOutcome {
    slice: &'static str,
    /// What the turn delivered, counted against the case's labels.
    pub(super) count: TurnCount,
    first_prompt: bool,
    at_all: bool,
    duplicate: bool,
    terminal_events: usize,
    /// The initial point held a weak fast result, as its telemetry says.
    held: bool,
    /// The query matches lexically, yet the initial point of a design with a fast result
    /// delivered nothing: the scan itself outlasted the ceiling (real time only).
    late_scan: bool,
    /// How long the initial consume point waited.
    waited: Duration,
}

/// One case as a turn needs it.
#[derive(Debug, Clone)]
pub(super) struct TurnCase {
    /// The case's slice, as named in [`corpus::SLICES`].
    slice: &'static str,
    /// The query matches some document lexically, so the designs with a fast result have one
    /// to deliver once the scan is done.
    lexical: bool,
    query: String,
    relevant: HashSet<PathBuf>,
    /// The relevant paths as selector ids, i.e. what a perfect model answers.
    answer: Vec<String>,
}

/// The answerable cases, as turns.
fn turn_cases(corpus: &Corpus) -> Result<Vec<TurnCase>> {
    cases_as_turns(corpus, corpus.answerable())
}

/// `cases` of `corpus` as turns; a case with nothing relevant is answered with nothing by the
/// perfect model.
pub(super) fn cases_as_turns<'a>(
    corpus: &Corpus,
    cases: impl Iterator<Item = &'a corpus::Case>,
) -> Result<Vec<TurnCase>> {
    cases
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
            let slice = corpus::SLICES
                .iter()
                .copied()
                .find(|s| *s == case.slice)
                .with_context(|| format!("case {} has an unknown slice", case.id))?;
            let lexical = !CandidateSelection::select(
                &QueryTokens::new(&case.query),
                &corpus.documents,
                &ActiveToolAliases::default(),
            )
            .fast()
            .is_empty();
            Ok(TurnCase {
                slice,
                lexical,
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
            for design in DESIGNS {
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
    // The designs are compared over the design's own top five and top two; what the delivery
    // rule keeps of them is measured apart (the delivery-rule comparison, and the reach tables).
    let rule = DeliveryRule::UNTRIMMED;
    run_turn_with(
        &CorpusHandle::of(corpus),
        selector,
        design,
        rule,
        kind,
        case,
    )
    .await
}

/// One turn of `case` with a perfect model answering after `latency`, under `design` and
/// `rule`, on a paused clock's runtime or a real one.
pub(super) async fn perfect_turn(
    corpus: &Corpus,
    latency: Duration,
    design: DeliveryDesign,
    rule: DeliveryRule,
    kind: TurnKind,
    case: &TurnCase,
) -> TurnOutcome {
    let selector: Arc<dyn Selector> =
        Arc::new(MockSelector::answering(case.answer.clone(), latency));
    run_turn_with(
        &CorpusHandle::of(corpus),
        selector,
        design,
        rule,
        kind,
        case,
    )
    .await
}

async fn run_turn_with(
    corpus: &CorpusHandle,
    selector: Arc<dyn Selector>,
    design: DeliveryDesign,
    rule: DeliveryRule,
    kind: TurnKind,
    case: &TurnCase,
) -> TurnOutcome {
    let sink = Arc::new(RecordingSink::new());
    let mut config = RecallConfig::new(corpus.roots.clone());
    config.options.selector = SelectorChoice::Custom(selector);
    config.options.design = design;
    config.options.rule = rule;
    config.telemetry = sink.clone();
    config.clock = Arc::new(FixedClock(corpus.now));
    config.scanner = ScannerChoice::Shared(corpus.cache.clone());
    let mut session = MemoryRecall::new(config).expect("the evaluation's options are valid");

    session.begin_turn(&case.query, &[]);
    let asked = tokio::time::Instant::now();
    let initial = session.initial().await;
    let waited = asked.elapsed();
    let mut deliveries = vec![initial];
    if kind == TurnKind::ToolUsing {
        tokio::time::sleep(TOOL_RESULT_AFTER).await;
        deliveries.push(session.after_tool_result());
    }
    deliveries.push(session.end_turn());

    let mut seen = HashSet::new();
    let late_scan = case.lexical
        && design != DeliveryDesign::SinglePath
        && deliveries.first().and_then(Delivery::delivered).is_none();
    let mut outcome = TurnOutcome {
        slice: case.slice,
        count: TurnCount {
            slice: case.slice,
            relevant: case.relevant.len(),
            ..TurnCount::default()
        },
        waited,
        late_scan,
        ..TurnOutcome::default()
    };
    // A note named in a line reaches the model as it reads the line: it counts as delivered
    // once, and its whole delivery later in the turn (the model's pick) is no repeat.
    let mut named = HashSet::new();
    for (i, delivery) in deliveries.iter().enumerate() {
        let Some(memory) = delivery.delivered() else {
            continue;
        };
        for document in &memory.documents {
            outcome.duplicate |= !seen.insert(document.document().path().to_path_buf());
        }
        for document in memory.documents.iter().chain(&memory.lines) {
            let path = document.document().path();
            if !named.insert(path.to_path_buf()) {
                continue;
            }
            let relevant = case.relevant.contains(path);
            outcome.first_prompt |= i == 0 && relevant;
            outcome.at_all |= relevant;
            outcome.count.delivered += 1;
            outcome.count.relevant_delivered += usize::from(relevant);
            outcome.count.first_relevant += usize::from(i == 0 && relevant);
        }
    }
    outcome.held = sink.deliveries().iter().any(|e| {
        matches!(
            e.initial_wait,
            Some(InitialWait::WeakFastSuperseded | InitialWait::WeakFastAtCeiling)
        )
    });
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
    let mut waits: Vec<Duration> = outcomes.iter().map(|o| o.waited).collect();
    waits.sort_unstable();
    let slices = corpus::SLICES
        .iter()
        .filter_map(|&slice| {
            let of_slice: Vec<&TurnOutcome> =
                outcomes.iter().filter(|o| o.slice == slice).collect();
            let turns = of_slice.len();
            (turns > 0).then(|| SliceFigures {
                slice,
                turns,
                first_prompt: of_slice.iter().filter(|o| o.first_prompt).count() as f64
                    / turns as f64,
                at_all: of_slice.iter().filter(|o| o.at_all).count() as f64 / turns as f64,
                late_scans: of_slice.iter().filter(|o| o.late_scan).count(),
            })
        })
        .collect();
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
        held_rate: share(outcomes.iter().filter(|o| o.held).count()),
        initial_wait_mean_ms: if waits.is_empty() {
            0.0
        } else {
            waits.iter().map(Duration::as_secs_f64).sum::<f64>() * 1_000.0 / waits.len() as f64
        },
        initial_wait_p50_ms: percentile_ms(&waits, 50),
        initial_wait_p95_ms: percentile_ms(&waits, 95),
        slices,
    }
}

/// The nearest-rank `p`th percentile of sorted durations, in milliseconds; 0 when empty.
fn percentile_ms(sorted: &[Duration], p: usize) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted
        .get(rank - 1)
        .map_or(0.0, |d| d.as_secs_f64() * 1_000.0)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests;
