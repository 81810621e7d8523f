//! The delivery rules side by side on the corpus, as the lexical delivery sends them without a
//! selector (the lexical top five, then the rule): delivered precision, hit rate and relevant
//! recall per slice, and what reaches the model on turns where nothing is relevant.
//!
//! The untrimmed delivery is the reference: a rule is admissible when it keeps at least
//! [`KEPT_RECALL`] of its relevant recall on every slice with answers. The shipped rule
//! ([`DeliveryRule::SHIPPED`]) is gated to be admissible, and to deliver at most
//! [`MAX_CHATTER_DOCS`] documents per chatter turn with nothing relevant.

use std::num::{NonZeroU32, NonZeroUsize};

use lexical_score::delivery::{
    Background, DeliveryRule, EvidenceRule, GapFactor, Measure, MinimumEvidence, QueryEvidence,
    Share, Tier, Tiering, TrimRule, UninformativeTokens,
};
use lexical_score::{ActiveToolAliases, CandidateSelection, QueryTokens};
use serde::Serialize;

use super::corpus::{CHATTER_SLICE, Corpus, SLICES};
use super::figures::{ANSWERABLE, DeliveryFigures, KEPT_RECALL, TurnCount, recall_losses};

/// The most documents the shipped rule may deliver per chatter turn with nothing relevant.
pub const MAX_CHATTER_DOCS: f64 = 0.2;

/// The shipped rule's delivered precision over every answerable turn with no selector, as
/// measured and published when the rule was chosen (`docs/measurements.md`, "What reaches the model").
pub const PUBLISHED_PRECISION: f64 = 0.791;

/// How far below [`PUBLISHED_PRECISION`] the shipped rule may fall before the gate fails.
pub const PRECISION_SLACK: f64 = 0.05;

/// One rule's figures.
#[derive(Debug, Clone, Serialize)]
pub struct RuleRow {
    /// The rule, as printed.
    pub rule: String,
    /// Whether it is [`DeliveryRule::SHIPPED`].
    pub shipped: bool,
    /// Whether it keeps [`KEPT_RECALL`] of the untrimmed relevant recall on every slice with
    /// answers.
    pub admissible: bool,
    /// The answerable slices where it keeps less than that.
    pub loses_on: Vec<String>,
    /// Per slice, then over every answerable turn.
    pub figures: Vec<DeliveryFigures>,
}

impl RuleRow {
    /// The figures of one slice, or of every answerable turn ([`ANSWERABLE`]).
    pub fn figures(&self, name: &str) -> Option<&DeliveryFigures> {
        self.figures.iter().find(|f| f.name == name)
    }
}

/// The comparison section of the evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct TrimReport {
    /// The trims of the ranking, every token counting (the first table).
    pub trims: Vec<RuleRow>,
    /// The rules for uninformative tokens and minimum evidence, each with the trims that keep
    /// the most (the second table).
    pub evidence: Vec<RuleRow>,
    /// The shipped rule with the shipped tiering, per slice, counting the notes delivered whole.
    pub tiered_whole: Vec<DeliveryFigures>,
    /// The same, counting a note named in a line as delivered (the model reads the lines).
    pub tiered_named: Vec<DeliveryFigures>,
}

impl TrimReport {
    /// Every row, untrimmed first.
    pub fn rows(&self) -> impl Iterator<Item = &RuleRow> {
        self.trims.iter().chain(&self.evidence)
    }
}

fn share(percent: u8) -> Share {
    Share::percent(percent).unwrap_or_else(|| unreachable!("{percent}% is a share"))
}

/// The trims the first table compares.
pub fn compared_trims() -> Vec<TrimRule> {
    let top = |k| TrimRule::TopK(NonZeroUsize::new(k).unwrap_or(NonZeroUsize::MIN));
    let gap = |tenths| {
        TrimRule::Gap(GapFactor::tenths(tenths).unwrap_or_else(|| unreachable!("{tenths} > 10")))
    };
    vec![
        TrimRule::Untrimmed,
        top(1),
        top(2),
        top(3),
        TrimRule::LeadShare(share(30)),
        TrimRule::LeadShare(share(40)),
        TrimRule::LeadShare(share(50)),
        TrimRule::LeadShare(share(70)),
        TrimRule::WholeWordAfterFirst,
        gap(15),
        gap(20),
    ]
}

/// The evidence rules the second table compares: every choice of uninformative tokens and
/// minimum evidence counted as the shipped rule counts it, then the shipped choice counted each
/// other way.
pub fn evidence_rules() -> Vec<EvidenceRule> {
    let two = NonZeroU32::MIN.saturating_add(1);
    let function_words = UninformativeTokens {
        function_words: true,
        ..UninformativeTokens::NONE
    };
    let requests = UninformativeTokens {
        requests: true,
        ..function_words
    };
    let common = |percent| UninformativeTokens {
        common: Some(share(percent)),
        ..UninformativeTokens::NONE
    };
    let mut rules = Vec::new();
    for uninformative in [
        UninformativeTokens::NONE,
        function_words,
        requests,
        common(30),
        common(50),
        UninformativeTokens {
            common: Some(share(50)),
            ..requests
        },
    ] {
        for minimum in [
            MinimumEvidence::AnyHit,
            MinimumEvidence::Points(two),
            MinimumEvidence::WholeWord,
            MinimumEvidence::WholeWordAndPointsOrRare(two),
        ] {
            rules.push(EvidenceRule {
                uninformative,
                minimum,
                measure: DeliveryRule::SHIPPED.evidence.measure,
            });
        }
    }
    for measure in [Measure::Substring, Measure::Words, Measure::RareWords] {
        let rule = EvidenceRule {
            measure,
            ..DeliveryRule::SHIPPED.evidence
        };
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }
    rules
}

/// A rule as printed.
pub fn rule_name(rule: &DeliveryRule) -> String {
    let tokens = rule.evidence.uninformative;
    let mut out: Vec<String> = Vec::new();
    if tokens.function_words {
        out.push("function".to_owned());
    }
    if tokens.requests {
        out.push("requests".to_owned());
    }
    if let Some(common) = tokens.common {
        out.push(format!("df>{}%", common.as_percent()));
    }
    match tokens.background {
        Some(Background::Uninformative(zipf)) => out.push(format!("Zipf≥{zipf}")),
        Some(Background::NotAlone(zipf)) => out.push(format!("Zipf≥{zipf} alone")),
        None => {}
    }
    let tokens = if out.is_empty() {
        "all tokens".to_owned()
    } else {
        format!("{} out", out.join("+"))
    };
    let measure = match rule.evidence.measure {
        Measure::Substring => "substrings",
        Measure::Words => "words",
        Measure::RareWords => "rare words",
    };
    let minimum = match rule.evidence.minimum {
        MinimumEvidence::AnyHit => "any hit".to_owned(),
        MinimumEvidence::Points(p) => format!("≥{p} pts"),
        MinimumEvidence::WholeWord => "whole word".to_owned(),
        MinimumEvidence::WholeWordAndPointsOrRare(p) => format!("whole & (≥{p} pts|rare)"),
    };
    let trim = match rule.trim {
        TrimRule::Untrimmed => "top 5".to_owned(),
        TrimRule::TopK(k) => format!("top {k}"),
        TrimRule::LeadShare(s) => format!("≥{:.1} lead", f64::from(s.as_percent()) / 100.0),
        TrimRule::WholeWordAfterFirst => "whole word after 1st".to_owned(),
        TrimRule::Gap(f) => format!("gap ×{:.1}", f64::from(f.as_tenths()) / 10.0),
    };
    if rule.evidence == EvidenceRule::ANY_MATCH {
        trim
    } else {
        format!("{measure}: {tokens}, {minimum}, {trim}")
    }
}

/// What `rule` delivers of the lexical top five for each case, counted.
pub fn lexical_turns(corpus: &Corpus, rule: &DeliveryRule) -> Vec<TurnCount> {
    tiered_turns(corpus, rule, Tiering::Off, true)
}

/// What `rule` delivers of the lexical top five for each case, shown as `tiering` decides,
/// counted: the notes shown whole, and with `named` those named in a line as well.
pub fn tiered_turns(
    corpus: &Corpus,
    rule: &DeliveryRule,
    tiering: Tiering,
    named: bool,
) -> Vec<TurnCount> {
    corpus
        .cases
        .iter()
        .filter_map(|case| {
            let slice = SLICES.iter().copied().find(|s| *s == case.slice)?;
            let query = QueryTokens::new(&case.query);
            let selection = CandidateSelection::select(
                &query,
                &corpus.documents,
                &ActiveToolAliases::default(),
            );
            let evidence = QueryEvidence::judge(&query, &rule.evidence, &corpus.documents);
            let delivered: Vec<usize> = rule
                .deliver_judged(&evidence, selection.heuristic(), &corpus.documents)
                .into_iter()
                .filter(|judged| named || tiering.tier(judged.evidence) == Tier::Whole)
                .map(|judged| judged.ranked.index)
                .collect();
            let relevant_delivered = delivered
                .iter()
                .filter(|index| case.relevant.contains(index))
                .count();
            Some(TurnCount {
                slice,
                relevant: case.relevant.len(),
                first_relevant: relevant_delivered,
                delivered: delivered.len(),
                relevant_delivered,
            })
        })
        .collect()
}

fn row(corpus: &Corpus, rule: DeliveryRule, untrimmed: &[DeliveryFigures]) -> RuleRow {
    let figures = DeliveryFigures::per_slice(&SLICES, &lexical_turns(corpus, &rule));
    let loses_on: Vec<String> = recall_losses(&figures, untrimmed)
        .into_iter()
        .map(|(slice, _, _)| slice.to_owned())
        .collect();
    RuleRow {
        rule: rule_name(&rule),
        shipped: rule == DeliveryRule::SHIPPED,
        admissible: loses_on.is_empty(),
        loses_on,
        figures,
    }
}

/// Measures every trim, then every evidence rule with the untrimmed delivery and with each trim
/// of the first table that was admissible, and the shipped rule.
pub fn trim_report(corpus: &Corpus) -> TrimReport {
    let untrimmed =
        DeliveryFigures::per_slice(&SLICES, &lexical_turns(corpus, &DeliveryRule::UNTRIMMED));
    let trims: Vec<RuleRow> = compared_trims()
        .into_iter()
        .map(|trim| {
            let rule = DeliveryRule {
                evidence: EvidenceRule::ANY_MATCH,
                trim,
            };
            row(corpus, rule, &untrimmed)
        })
        .collect();
    // Every share of the lead is tried with each evidence rule: evidence beyond uninformative
    // tokens changes what the lead holds, so a share too strict on raw scores may not be.
    let kept_trims: Vec<TrimRule> = compared_trims()
        .into_iter()
        .zip(&trims)
        .filter(|(trim, row)| row.admissible || matches!(trim, TrimRule::LeadShare(_)))
        .map(|(trim, _)| trim)
        .collect();
    let mut evidence = Vec::new();
    let mut measured: Vec<DeliveryRule> = Vec::new();
    for rule in evidence_rules()
        .into_iter()
        .filter(|e| *e != EvidenceRule::ANY_MATCH)
        .flat_map(|e| {
            kept_trims
                .iter()
                .map(move |&trim| DeliveryRule { evidence: e, trim })
        })
        .chain(std::iter::once(DeliveryRule::SHIPPED))
    {
        if measured.contains(&rule) {
            continue;
        }
        measured.push(rule);
        evidence.push(row(corpus, rule, &untrimmed));
    }
    let tiered = |named| {
        DeliveryFigures::per_slice(
            &SLICES,
            &tiered_turns(corpus, &DeliveryRule::SHIPPED, Tiering::SHIPPED, named),
        )
    };
    TrimReport {
        trims,
        evidence,
        tiered_whole: tiered(false),
        tiered_named: tiered(true),
    }
}

/// The admissible rule with the highest delivered precision over every answerable turn, among
/// those that deliver at most [`MAX_CHATTER_DOCS`] per chatter turn with nothing relevant.
pub fn best_rule(report: &TrimReport) -> Option<&RuleRow> {
    report
        .rows()
        .filter(|r| r.admissible && chatter_docs(r).is_none_or(|d| d <= MAX_CHATTER_DOCS + 1e-9))
        .max_by(|a, b| precision(a).total_cmp(&precision(b)))
}

/// Documents per chatter turn with nothing relevant.
pub fn chatter_docs(row: &RuleRow) -> Option<f64> {
    row.figures(CHATTER_SLICE)
        .and_then(|f| f.delivered_per_nothing_relevant_turn)
}

/// Delivered precision over every answerable turn (0 when nothing is delivered).
pub fn precision(row: &RuleRow) -> f64 {
    row.figures(ANSWERABLE)
        .and_then(|f| f.precision)
        .unwrap_or(0.0)
}

/// The gates of the comparison: the shipped rule keeps [`KEPT_RECALL`] of the untrimmed
/// relevant recall on every slice with answers, its precision stays within
/// [`PRECISION_SLACK`] of [`PUBLISHED_PRECISION`], and it delivers at most [`MAX_CHATTER_DOCS`]
/// per chatter turn with nothing relevant.
pub fn trim_gates(report: &TrimReport) -> Vec<String> {
    let mut failures = Vec::new();
    let Some(shipped) = report.rows().find(|r| r.shipped) else {
        return vec!["the shipped delivery rule was not measured".to_owned()];
    };
    let Some(untrimmed) = report.trims.first() else {
        return vec!["the untrimmed delivery was not measured".to_owned()];
    };
    for (slice, trimmed, before) in recall_losses(&shipped.figures, &untrimmed.figures) {
        failures.push(format!(
            "the shipped delivery rule keeps {:.1}% relevant recall on {slice}, below {:.0}% of \
             the untrimmed {:.1}%",
            trimmed * 100.0,
            KEPT_RECALL * 100.0,
            before * 100.0
        ));
    }
    let measured = precision(shipped);
    if measured < PUBLISHED_PRECISION - PRECISION_SLACK - 1e-9 {
        failures.push(format!(
            "the shipped delivery rule's precision is {:.1}%, more than {:.0} points below the \
             published {:.1}%",
            measured * 100.0,
            PRECISION_SLACK * 100.0,
            PUBLISHED_PRECISION * 100.0
        ));
    }
    if let Some(docs) = chatter_docs(shipped)
        && docs > MAX_CHATTER_DOCS + 1e-9
    {
        failures.push(format!(
            "the shipped delivery rule delivers {docs:.2} documents per {CHATTER_SLICE} turn with \
             nothing relevant, above {MAX_CHATTER_DOCS}"
        ));
    }
    failures
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;
    use crate::eval::corpus;

    fn report() -> TrimReport {
        trim_report(&corpus::load(&corpus::corpus_dir().unwrap(), SystemTime::now()).unwrap())
    }

    #[test]
    fn the_shipped_delivery_rule_passes_its_gates_on_the_corpus() {
        assert_eq!(trim_gates(&report()), Vec::<String>::new());
    }

    #[test]
    fn shipping_the_untrimmed_delivery_fails_the_chatter_gate() {
        let mut report = report();
        let untrimmed = report.trims[0].figures.clone();
        for row in report.evidence.iter_mut().filter(|r| r.shipped) {
            row.figures.clone_from(&untrimmed);
        }
        let failures = trim_gates(&report);
        assert!(
            failures.iter().any(|f| f.contains("per chatter turn")),
            "{failures:#?}"
        );
    }

    #[test]
    fn shipping_a_rule_far_below_the_published_precision_fails_the_precision_gate() {
        let mut report = report();
        // Every token counting, 30% of the lead: admissible, and far less precise.
        let loose = report
            .trims
            .iter()
            .find(|r| r.rule == "≥0.3 lead")
            .unwrap()
            .figures
            .clone();
        for row in report.evidence.iter_mut().filter(|r| r.shipped) {
            row.figures.clone_from(&loose);
        }
        let failures = trim_gates(&report);
        assert!(
            failures.iter().any(|f| f.contains("below the published")),
            "{failures:#?}"
        );
    }

    #[test]
    fn shipping_top_one_fails_the_recall_gate_on_the_multi_answer_slice() {
        let mut report = report();
        let top_one = report.trims[1].figures.clone();
        for row in report.evidence.iter_mut().filter(|r| r.shipped) {
            row.figures.clone_from(&top_one);
        }
        let failures = trim_gates(&report);
        assert!(
            failures.iter().any(|f| f.contains("on multi-answer")),
            "{failures:#?}"
        );
    }
}
