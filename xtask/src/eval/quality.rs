//! Recall quality of a scorer over the labeled corpus, and the gates the shipped scorer must pass.
//!
//! A scorer is any function from a query and the corpus documents to a ranked list of document
//! indices; only its first five entries count. That keeps the metrics and the gates independent
//! of the scorer under test, so a deliberately broken scorer can be shown to fail them.
//!
//! No-result precision is the share of silent answers (an empty ranking) that were right, i.e.
//! given to a `no-result` case. It is computed over every case outside `semantic-no-lexical`:
//! those cases are answerable, but no lexical scorer can answer them, so a silent answer there is
//! the measured gap, not a precision error. No-result recall is the share of `no-result` cases
//! answered with silence.

use std::time::SystemTime;

use lexical_score::{
    ActiveToolAliases, CandidateSelection, HEURISTIC_LIMIT, MemoryType, PreparedText, QueryTokens,
    Scorable,
    measurement::{frozen, unsegmented},
};
use memory_scan::ScannedDocument;
use serde::Serialize;

use super::corpus::{
    CHATTER_SLICE, Case, Corpus, ENGLISH_SLICE, MULTI_ANSWER_SLICE, NO_RESULT_SLICE,
    SEMANTIC_SLICE, SLICES,
};

/// A scorer: the ranked document indices (best first) it answers `query` with.
pub type Scorer<'a> = dyn Fn(&str, &[ScannedDocument]) -> Vec<usize> + 'a;

/// The random floor may not exceed this, or the corpus is too small to read the figures against.
pub const MAX_RANDOM_FLOOR: f64 = 0.25;
/// Least Recall@5 of the shipped scorer on every gated answerable slice and on their aggregate.
pub const MIN_RECALL_AT_5: f64 = 0.90;
/// Least top-1 accuracy of the shipped scorer on every gated answerable slice and their aggregate.
pub const MIN_TOP_1: f64 = 0.85;

/// Rounding slack for comparing averages against thresholds.
const EPSILON: f64 = 1e-9;

/// The shipped recall path's ranking: the lexical fallback of the one scoring pass.
pub fn shipped_scorer(query: &str, documents: &[ScannedDocument]) -> Vec<usize> {
    let tokens = QueryTokens::new(query);
    CandidateSelection::select(&tokens, documents, &ActiveToolAliases::default())
        .heuristic()
        .iter()
        .map(|r| r.index)
        .collect()
}

/// The frozen scorer, the fixed reference to measure against (`docs/spec.md#the-frozen-scorer`).
pub fn frozen_scorer(query: &str, documents: &[ScannedDocument]) -> Vec<usize> {
    let frozen_documents: Vec<frozen::FrozenDocument<'_>> = documents
        .iter()
        .map(|d| {
            let document = d.document();
            frozen::FrozenDocument {
                memory_type: document.memory_type(),
                title: document.title(),
                description: document.description(),
                body: document.body(),
            }
        })
        .collect();
    frozen::rank(query, &frozen_documents)
        .into_iter()
        .take(HEURISTIC_LIMIT)
        .map(|r| r.index)
        .collect()
}

/// The unsegmented baseline, the `design` column (`docs/spec.md#the-unsegmented-baseline`): the
/// shipped selection without word segmentation and without the structured fields (documents
/// prepared from title, description and body only).
pub fn unsegmented_scorer(query: &str, documents: &[ScannedDocument]) -> Vec<usize> {
    /// A document prepared without its structured fields.
    struct Plain {
        text: PreparedText,
        memory_type: MemoryType,
        mtime: SystemTime,
    }
    impl Scorable for Plain {
        fn prepared(&self) -> &PreparedText {
            &self.text
        }
        fn memory_type(&self) -> MemoryType {
            self.memory_type
        }
        fn mtime(&self) -> SystemTime {
            self.mtime
        }
    }
    let plain: Vec<Plain> = documents
        .iter()
        .map(|d| {
            let document = d.document();
            Plain {
                text: PreparedText::new(document.title(), document.description(), document.body()),
                memory_type: document.memory_type(),
                mtime: document.mtime(),
            }
        })
        .collect();
    let tokens = unsegmented::query_tokens(query);
    CandidateSelection::select(&tokens, &plain, &ActiveToolAliases::default())
        .heuristic()
        .iter()
        .map(|r| r.index)
        .collect()
}

/// How one scorer did on one case.
#[derive(Debug, Clone, Serialize)]
pub struct CaseOutcome {
    /// The case id.
    pub id: String,
    /// The case's slice.
    pub slice: String,
    /// The corpus ids of the top five, best first.
    pub top: Vec<String>,
    /// |relevant ∩ top 5| / |relevant|; `None` for a no-result case.
    pub recall_at_5: Option<f64>,
    /// Whether the first result is right; `None` for a no-result case.
    pub top_1: Option<bool>,
    /// Whether the scorer answered with nothing.
    pub silent: bool,
}

/// A scorer's figures over a group of cases.
#[derive(Debug, Clone, Serialize)]
pub struct GroupMetrics {
    /// The slice name, or a name for an aggregate.
    pub name: String,
    /// Cases in the group.
    pub cases: usize,
    /// Answerable cases in the group.
    pub answerable: usize,
    /// Mean Recall@5 over the answerable cases; `None` when there are none.
    pub recall_at_5: Option<f64>,
    /// Top-1 accuracy over the answerable cases; `None` when there are none.
    pub top_1: Option<f64>,
    /// Cases answered with silence.
    pub silent: usize,
}

/// A scorer's figures over the whole corpus.
#[derive(Debug, Clone, Serialize)]
pub struct ScorerMetrics {
    /// Which scorer.
    pub scorer: String,
    /// One entry per slice that has cases, in report order.
    pub slices: Vec<GroupMetrics>,
    /// Every answerable case outside `semantic-no-lexical` (the gated aggregate).
    pub gated_answerable: GroupMetrics,
    /// Silent answers that were right / all silent answers, outside `semantic-no-lexical`;
    /// `None` when the scorer was never silent there.
    pub no_result_precision: Option<f64>,
    /// `no-result` cases answered with silence / all `no-result` cases.
    pub no_result_recall: Option<f64>,
    /// Every case's outcome, in corpus order.
    pub outcomes: Vec<CaseOutcome>,
}

impl ScorerMetrics {
    /// The figures of one slice, if it has cases.
    pub fn slice(&self, name: &str) -> Option<&GroupMetrics> {
        self.slices.iter().find(|s| s.name == name)
    }
}

/// The quality section of the evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct QualityReport {
    /// Topic documents in the corpus.
    pub documents: usize,
    /// Labeled cases.
    pub cases: usize,
    /// Recall@5 of a query-blind scorer: 5 / documents.
    pub random_floor: f64,
    /// The shipped scorer.
    pub shipped: ScorerMetrics,
    /// The frozen scorer.
    pub frozen: ScorerMetrics,
    /// The unsegmented baseline (see [`unsegmented_scorer`]).
    pub unsegmented: ScorerMetrics,
}

/// Runs both scorers over the corpus.
pub fn quality_report(corpus: &Corpus, shipped: &Scorer<'_>, frozen: &Scorer<'_>) -> QualityReport {
    let documents = corpus.documents.len();
    QualityReport {
        documents,
        cases: corpus.cases.len(),
        random_floor: random_floor(documents),
        shipped: evaluate(corpus, "shipped", shipped),
        frozen: evaluate(corpus, "frozen", frozen),
        unsegmented: evaluate(corpus, "unsegmented", &unsegmented_scorer),
    }
}

/// Recall@5 of a scorer that ignores the query: five of the documents, at best all of them.
pub fn random_floor(documents: usize) -> f64 {
    if documents == 0 {
        return 1.0;
    }
    (HEURISTIC_LIMIT as f64 / documents as f64).min(1.0)
}

/// Scores every case of the corpus with `scorer`.
pub fn evaluate(corpus: &Corpus, name: &str, scorer: &Scorer<'_>) -> ScorerMetrics {
    let outcomes: Vec<CaseOutcome> = corpus
        .cases
        .iter()
        .map(|case| {
            let mut top = scorer(&case.query, &corpus.documents);
            top.truncate(HEURISTIC_LIMIT);
            outcome(corpus, case, &top)
        })
        .collect();

    let slices = SLICES
        .iter()
        .map(|slice| group(slice, outcomes.iter().filter(|o| o.slice == *slice)))
        .filter(|g| g.cases > 0)
        .collect();
    let gated_answerable = group(
        "answerable (gated)",
        outcomes
            .iter()
            .filter(|o| o.recall_at_5.is_some() && !is_lexical_gap(&o.slice)),
    );

    // The delivery slices measure what is sent, not the scorer's silence.
    let outside_semantic = || {
        outcomes.iter().filter(|o| {
            o.slice != SEMANTIC_SLICE && o.slice != MULTI_ANSWER_SLICE && o.slice != CHATTER_SLICE
        })
    };
    let silent = outside_semantic().filter(|o| o.silent).count();
    let silent_right = outside_semantic()
        .filter(|o| o.silent && o.slice == NO_RESULT_SLICE)
        .count();
    let no_result_cases = outcomes
        .iter()
        .filter(|o| o.slice == NO_RESULT_SLICE)
        .count();
    ScorerMetrics {
        scorer: name.to_owned(),
        slices,
        gated_answerable,
        no_result_precision: ratio(silent_right, silent),
        no_result_recall: ratio(silent_right, no_result_cases),
        outcomes,
    }
}

fn outcome(corpus: &Corpus, case: &Case, top: &[usize]) -> CaseOutcome {
    let ids = top
        .iter()
        .map(|&i| {
            corpus
                .ids
                .get(i)
                .cloned()
                .unwrap_or_else(|| format!("<index {i}>"))
        })
        .collect();
    let (recall_at_5, top_1) = if case.is_answerable() {
        let found = case.relevant.iter().filter(|r| top.contains(r)).count();
        let first = top.first();
        let right = match case.expect_top {
            Some(expected) => first == Some(&expected),
            None => first.is_some_and(|f| case.relevant.contains(f)),
        };
        (Some(found as f64 / case.relevant.len() as f64), Some(right))
    } else {
        (None, None)
    };
    CaseOutcome {
        id: case.id.clone(),
        slice: case.slice.clone(),
        top: ids,
        recall_at_5,
        top_1,
        silent: top.is_empty(),
    }
}

fn group<'a>(name: &str, outcomes: impl Iterator<Item = &'a CaseOutcome>) -> GroupMetrics {
    let mut cases = 0;
    let mut answerable = 0;
    let mut recall_sum = 0.0;
    let mut top_1 = 0;
    let mut silent = 0;
    for outcome in outcomes {
        cases += 1;
        silent += usize::from(outcome.silent);
        if let (Some(recall), Some(right)) = (outcome.recall_at_5, outcome.top_1) {
            answerable += 1;
            recall_sum += recall;
            top_1 += usize::from(right);
        }
    }
    GroupMetrics {
        name: name.to_owned(),
        cases,
        answerable,
        recall_at_5: (answerable > 0).then(|| recall_sum / answerable as f64),
        top_1: ratio(top_1, answerable),
        silent,
    }
}

fn ratio(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// Every quality gate the report fails, one readable line each; empty when all pass.
pub fn quality_gates(report: &QualityReport) -> Vec<String> {
    let mut failures = Vec::new();
    if report.random_floor > MAX_RANDOM_FLOOR + EPSILON {
        failures.push(format!(
            "random floor {} on {} documents is above {}: add documents so the figures stay readable",
            percent(report.random_floor),
            report.documents,
            percent(MAX_RANDOM_FLOOR)
        ));
    }

    let shipped = &report.shipped;
    let gated = shipped
        .slices
        .iter()
        .filter(|s| s.answerable > 0 && !is_lexical_gap(&s.name))
        .chain(std::iter::once(&shipped.gated_answerable));
    for group in gated {
        let recall = group.recall_at_5.unwrap_or(0.0);
        if recall < MIN_RECALL_AT_5 - EPSILON {
            failures.push(format!(
                "shipped Recall@5 on {} is {}, below {}",
                group.name,
                percent(recall),
                percent(MIN_RECALL_AT_5)
            ));
        }
        let top_1 = group.top_1.unwrap_or(0.0);
        if top_1 < MIN_TOP_1 - EPSILON {
            failures.push(format!(
                "shipped top-1 on {} is {}, below {}",
                group.name,
                percent(top_1),
                percent(MIN_TOP_1)
            ));
        }
    }

    for (what, value) in [
        ("precision", shipped.no_result_precision),
        ("recall", shipped.no_result_recall),
    ] {
        if value.is_none_or(|v| v < 1.0 - EPSILON) {
            failures.push(format!(
                "shipped no-result {what} is {}, not 100%",
                optional_percent(value)
            ));
        }
    }

    let frozen = &report.frozen;
    if let (Some(s), Some(f)) = (shipped.slice(ENGLISH_SLICE), frozen.slice(ENGLISH_SLICE)) {
        for (what, s, f) in [
            ("Recall@5", s.recall_at_5, f.recall_at_5),
            ("top-1", s.top_1, f.top_1),
        ] {
            let (s, f) = (s.unwrap_or(0.0), f.unwrap_or(0.0));
            if s < f - EPSILON {
                failures.push(format!(
                    "shipped {what} on {ENGLISH_SLICE} ({}) is below the frozen scorer's ({})",
                    percent(s),
                    percent(f)
                ));
            }
        }
    }
    for (what, s, f) in [
        (
            "precision",
            shipped.no_result_precision,
            frozen.no_result_precision,
        ),
        ("recall", shipped.no_result_recall, frozen.no_result_recall),
    ] {
        // A scorer that is never silent has no precision to speak of; it counts as 0 here.
        if s.unwrap_or(0.0) < f.unwrap_or(0.0) - EPSILON {
            failures.push(format!(
                "shipped no-result {what} ({}) is below the frozen scorer's ({})",
                optional_percent(s),
                optional_percent(f)
            ));
        }
    }

    // No case the unsegmented baseline answers may be lost: each relevant document the design
    // scorer put in its top five stays there, and a right first answer stays right.
    for (s, d) in shipped.outcomes.iter().zip(&report.unsegmented.outcomes) {
        let lost_recall = s.recall_at_5.unwrap_or(0.0) < d.recall_at_5.unwrap_or(0.0) - EPSILON;
        let lost_top = d.top_1 == Some(true) && s.top_1 != Some(true);
        let lost_silence = d.slice == NO_RESULT_SLICE && d.silent && !s.silent;
        if lost_recall || lost_top || lost_silence {
            failures.push(format!(
                "shipped loses case {} ({}) that the design rules answered",
                s.id, s.slice
            ));
        }
    }

    if let Some(semantic) = shipped.slice(SEMANTIC_SLICE) {
        let recall = semantic.recall_at_5.unwrap_or(0.0);
        if recall > EPSILON {
            failures.push(format!(
                "shipped Recall@5 on {SEMANTIC_SLICE} is {}, not 0: the lexical scorer now closes \
                 part of the measured gap; raise this gate to the new figure, do not delete cases",
                percent(recall)
            ));
        }
    }
    failures
}

/// Whether a slice measures what a lexical scorer cannot answer (no shared token, or only pieces
/// of longer words), so the Recall@5 and top-1 gates leave it out.
fn is_lexical_gap(slice: &str) -> bool {
    super::corpus::is_outside_scorer_gates(slice)
}

/// `0.923` → `92.3%`.
pub fn percent(value: f64) -> String {
    format!("{:.1}%", value * 100.0)
}

/// [`percent`], or `n/a` when there is nothing to measure.
pub fn optional_percent(value: Option<f64>) -> String {
    value.map_or_else(|| "n/a".to_owned(), percent)
}
