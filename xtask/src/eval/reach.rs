//! What reaches the model when a selector answers: every case of the corpus as one turn with a
//! perfect model (it picks exactly the case's relevant documents, nothing for a case with none)
//! at each modelled latency, under each delivery design, with the design's untrimmed delivery
//! and with the shipped delivery rule. Counted per slice: documents per answerable turn,
//! delivered precision, hit rate at the first prompt and at all, relevant recall, and documents
//! on turns with nothing relevant.
//!
//! The model's pick is never trimmed; the rule decides only what of the lexical ranking the fast
//! result and the heuristic settle deliver. With a selector fast enough to land inside the first
//! prompt's wait, the rule must cost nothing ([`reach_gates`]).

use std::time::Duration;

use anyhow::{Context, Result};
use recall_lifecycle::{DeliveryDesign, DeliveryRule};
use serde::Serialize;

use super::corpus::{Corpus, SLICES};
use super::delivery::{DESIGNS, MODELLED_LATENCIES_MS, TurnKind, cases_as_turns, perfect_turn};
use super::figures::{ANSWERABLE, DeliveryFigures};

/// The selector latency at which the shipped rule must deliver at least what the untrimmed
/// delivery does: a model this fast lands inside the first prompt's wait.
pub const UNCHANGED_AT_MS: u64 = 40;

/// The delivery rules compared, as printed.
const RULES: [(&str, DeliveryRule); 2] = [
    ("untrimmed", DeliveryRule::UNTRIMMED),
    ("shipped", DeliveryRule::SHIPPED),
];

/// One scenario's figures.
#[derive(Debug, Clone, Serialize)]
pub struct ReachRow {
    /// The modelled selector latency, in milliseconds.
    pub latency_ms: u64,
    /// `tool-free` or `tool-using`.
    pub turn: &'static str,
    /// The delivery design.
    pub design: &'static str,
    /// `untrimmed` or `shipped`.
    pub rule: &'static str,
    /// Per slice, then over every answerable turn.
    pub figures: Vec<DeliveryFigures>,
}

impl ReachRow {
    /// The figures of one slice, or of every answerable turn ([`ANSWERABLE`]).
    pub fn figures(&self, name: &str) -> Option<&DeliveryFigures> {
        self.figures.iter().find(|f| f.name == name)
    }
}

/// The reach section of the evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct ReachReport {
    /// Every latency × turn × design × rule, in that order.
    pub rows: Vec<ReachRow>,
}

/// Runs every scenario on a paused clock.
pub fn reach_report(corpus: &Corpus) -> Result<ReachReport> {
    reach_report_at(corpus, &MODELLED_LATENCIES_MS)
}

/// Runs every scenario at `latencies_ms` on a paused clock.
fn reach_report_at(corpus: &Corpus, latencies_ms: &[u64]) -> Result<ReachReport> {
    let cases = cases_as_turns(
        corpus,
        corpus
            .cases
            .iter()
            .filter(|c| SLICES.contains(&c.slice.as_str())),
    )?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .context("could not build the paused-clock runtime")?;
    let mut rows = Vec::new();
    for &latency_ms in latencies_ms {
        let latency = Duration::from_millis(latency_ms);
        for kind in [TurnKind::ToolFree, TurnKind::ToolUsing] {
            for design in DESIGNS {
                for (rule_name, rule) in RULES {
                    let counts = runtime.block_on(async {
                        let mut counts = Vec::with_capacity(cases.len());
                        for case in &cases {
                            let turn =
                                perfect_turn(corpus, latency, design, rule, kind, case).await;
                            counts.push(turn.count);
                        }
                        counts
                    });
                    rows.push(ReachRow {
                        latency_ms,
                        turn: kind.as_str(),
                        design: design.as_str(),
                        rule: rule_name,
                        figures: DeliveryFigures::per_slice(&SLICES, &counts),
                    });
                }
            }
        }
    }
    Ok(ReachReport { rows })
}

/// The rows of one scenario: the untrimmed one and the shipped one.
pub fn pairs(report: &ReachReport) -> impl Iterator<Item = (&ReachRow, &ReachRow)> {
    report
        .rows
        .chunks_exact(RULES.len())
        .filter_map(|pair| match pair {
            [untrimmed, shipped] => Some((untrimmed, shipped)),
            _ => None,
        })
}

/// The gate: at [`UNCHANGED_AT_MS`], under every design with a first-prompt delivery and both
/// turn kinds, the shipped rule's hit rates and relevant recall over every answerable turn are
/// at least the untrimmed delivery's.
pub fn reach_gates(report: &ReachReport) -> Vec<String> {
    let mut failures = Vec::new();
    let mut checked = 0;
    for (untrimmed, shipped) in pairs(report).filter(|(u, _)| {
        u.latency_ms == UNCHANGED_AT_MS && u.design != DeliveryDesign::SinglePath.as_str()
    }) {
        let (Some(before), Some(after)) =
            (untrimmed.figures(ANSWERABLE), shipped.figures(ANSWERABLE))
        else {
            continue;
        };
        checked += 1;
        for (what, b, a) in [
            (
                "hit rate at the first prompt",
                before.hit_first_prompt,
                after.hit_first_prompt,
            ),
            ("hit rate at all", before.hit_at_all, after.hit_at_all),
            (
                "relevant recall",
                before.relevant_recall,
                after.relevant_recall,
            ),
        ] {
            if a < b - 1e-9 {
                failures.push(format!(
                    "with a perfect selector at {} ms, {} turn, {}: the shipped delivery rule's \
                     {what} is {:.1}%, below the untrimmed {:.1}%",
                    shipped.latency_ms,
                    shipped.turn,
                    shipped.design,
                    a * 100.0,
                    b * 100.0
                ));
            }
        }
    }
    if checked == 0 {
        failures.push(format!(
            "no scenario with a perfect selector at {UNCHANGED_AT_MS} ms was measured"
        ));
    }
    failures
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;
    use crate::eval::corpus;

    fn at_unchanged_latency() -> ReachReport {
        let corpus = corpus::load(&corpus::corpus_dir().unwrap(), SystemTime::now()).unwrap();
        reach_report_at(&corpus, &[UNCHANGED_AT_MS]).unwrap()
    }

    #[test]
    fn the_shipped_rule_costs_nothing_with_a_perfect_selector_at_40_ms() {
        assert_eq!(reach_gates(&at_unchanged_latency()), Vec::<String>::new());
    }

    #[test]
    fn a_shipped_rule_that_delivers_less_than_untrimmed_at_40_ms_fails_the_gate() {
        let mut report = at_unchanged_latency();
        for pair in report.rows.chunks_exact_mut(RULES.len()) {
            if let [untrimmed, shipped] = pair {
                shipped.figures.clone_from(&untrimmed.figures);
                for figures in &mut shipped.figures {
                    figures.hit_at_all -= 0.01;
                }
            }
        }
        let failures = reach_gates(&report);
        assert!(
            failures.iter().any(|f| f.contains("hit rate at all")),
            "{failures:#?}"
        );
    }

    #[test]
    fn a_report_without_the_40_ms_scenarios_fails_the_gate() {
        let failures = reach_gates(&ReachReport { rows: Vec::new() });
        assert_eq!(failures.len(), 1, "{failures:#?}");
    }
}
