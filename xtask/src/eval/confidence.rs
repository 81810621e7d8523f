//! Which fast results deserve to end the initial wait at once: the shipped confidence rule of
//! the gated design beside the alternatives it was chosen over, on the labeled corpus.
//!
//! For every case whose query matches something lexically there is a fast result (the lexical
//! top two). A rule calls it confident or weak from what the scorer knows of its lead document.
//! What matters:
//! - **confident but wrong** (no relevant document in the fast result): the gated design ends
//!   the wait on it and a fast model's correct answer misses the first prompt, the loss the
//!   gated design exists to avoid;
//! - **weak but right**: the result is held and the turn waits for the model or the ceiling; it
//!   costs wait time, not the answer (the same documents go at the ceiling);
//! - no-result cases with a fast result called confident: lexical noise delivered at once where
//!   a model would have stayed silent.

use lexical_score::{ActiveToolAliases, CandidateSelection, QueryTokens, explain};
use recall_lifecycle::{FastConfidence, judge_fast};
use serde::Serialize;

use super::corpus::{self, Corpus};

/// The rules measured, the shipped one first.
pub const RULES: [Rule; 5] = [
    Rule::WholeWord,
    Rule::TitleOrDescription,
    Rule::TwoTokens,
    Rule::Margin,
    Rule::MinScore,
];

/// One way to call a fast result confident, from what the scorer knows of its lead document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Shipped: some matched query token is a whole token of the field it matched in.
    WholeWord,
    /// A query token matched in the title or the description.
    TitleOrDescription,
    /// At least two distinct query tokens matched.
    TwoTokens,
    /// The lead scores at least [`MARGIN`] points above the runner-up (or has none).
    Margin,
    /// The lead scores at least [`MIN_SCORE`] (a title hit alone reaches it).
    MinScore,
}

/// Points the lead must lead the runner-up by under [`Rule::Margin`].
pub const MARGIN: u32 = 3;
/// Least lead score under [`Rule::MinScore`].
pub const MIN_SCORE: u32 = 4;

impl Rule {
    /// The name printed in the report.
    pub fn name(self) -> &'static str {
        match self {
            Self::WholeWord => "whole-word (shipped)",
            Self::TitleOrDescription => "title-or-description",
            Self::TwoTokens => "two-tokens",
            Self::Margin => "margin>=3",
            Self::MinScore => "score>=4",
        }
    }
}

/// One rule's counts over the corpus.
#[derive(Debug, Clone, Serialize)]
pub struct RuleRow {
    /// The rule's name.
    pub rule: &'static str,
    /// Answerable cases with a fast result.
    pub answerable_with_fast: usize,
    /// Confident, and the fast result holds a relevant document.
    pub confident_right: usize,
    /// Confident, and the fast result holds no relevant document: the model's answer is lost
    /// on a tool-free turn with a fast model.
    pub confident_wrong: usize,
    /// Weak, though the fast result holds a relevant document: the turn waits for nothing.
    pub weak_right: usize,
    /// Weak, and the fast result holds no relevant document: held, as it should be.
    pub weak_wrong: usize,
    /// Confident-but-wrong cases of the `semantic-noisy` slice.
    pub noisy_confident: usize,
    /// No-result cases with a fast result called confident.
    pub no_result_confident: usize,
}

/// The confidence section of the evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct ConfidenceReport {
    /// One row per rule, the shipped one first.
    pub rules: Vec<RuleRow>,
}

/// Measures every rule over the corpus.
pub fn confidence_report(corpus: &Corpus) -> ConfidenceReport {
    // The delivery slices (answers labelled by meaning, everyday chatter) are measured by the
    // delivery-rule comparison; this one keeps to the scorer's slices it was chosen on.
    let judged: Vec<Judged> = corpus
        .cases
        .iter()
        .filter(|c| c.slice != corpus::MULTI_ANSWER_SLICE && c.slice != corpus::CHATTER_SLICE)
        .filter_map(|c| judge_case(corpus, c))
        .collect();
    let rules = RULES
        .iter()
        .map(|&rule| {
            let mut row = RuleRow {
                rule: rule.name(),
                answerable_with_fast: 0,
                confident_right: 0,
                confident_wrong: 0,
                weak_right: 0,
                weak_wrong: 0,
                noisy_confident: 0,
                no_result_confident: 0,
            };
            for case in &judged {
                let confident = case.confident(rule);
                if case.kind == CaseKind::NoResult {
                    row.no_result_confident += usize::from(confident);
                    continue;
                }
                row.answerable_with_fast += 1;
                match (confident, case.right) {
                    (true, true) => row.confident_right += 1,
                    (true, false) => {
                        row.confident_wrong += 1;
                        row.noisy_confident += usize::from(case.kind == CaseKind::Noisy);
                    }
                    (false, true) => row.weak_right += 1,
                    (false, false) => row.weak_wrong += 1,
                }
            }
            row
        })
        .collect();
    ConfidenceReport { rules }
}

/// Every confidence gate the report fails: the shipped rule calling a `semantic-noisy` fast
/// result confident.
pub fn confidence_gates(report: &ConfidenceReport) -> Vec<String> {
    report
        .rules
        .iter()
        .filter(|r| r.rule == Rule::WholeWord.name() && r.noisy_confident > 0)
        .map(|r| {
            format!(
                "the shipped confidence rule calls {} wrong {} fast result(s) confident",
                r.noisy_confident,
                corpus::NOISY_SLICE
            )
        })
        .collect()
}

/// What the rules need to know of one case's fast result.
struct Judged {
    kind: CaseKind,
    /// The fast result holds a relevant document.
    right: bool,
    whole_word: bool,
    title_or_description: bool,
    tokens_matched: usize,
    lead_score: u32,
    runner_up_score: u32,
}

/// What a case asks of the fast result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CaseKind {
    /// Nothing answers it.
    NoResult,
    /// Answerable, outside the `semantic-noisy` slice.
    Answerable,
    /// Answerable, in the `semantic-noisy` slice.
    Noisy,
}

impl Judged {
    fn confident(&self, rule: Rule) -> bool {
        match rule {
            Rule::WholeWord => self.whole_word,
            Rule::TitleOrDescription => self.title_or_description,
            Rule::TwoTokens => self.tokens_matched >= 2,
            Rule::Margin => self.lead_score >= self.runner_up_score + MARGIN,
            Rule::MinScore => self.lead_score >= MIN_SCORE,
        }
    }
}

fn judge_case(corpus: &Corpus, case: &corpus::Case) -> Option<Judged> {
    let tokens = QueryTokens::new(&case.query);
    let selection =
        CandidateSelection::select(&tokens, &corpus.documents, &ActiveToolAliases::default());
    let fast = selection.fast();
    let lead = fast.first()?;
    let document = corpus.documents.get(lead.index)?;
    let breakdown = explain(&tokens, document);
    let mut matched: Vec<&String> = breakdown
        .title_hits
        .iter()
        .chain(&breakdown.description_hits)
        .chain(&breakdown.body_hits)
        .collect();
    matched.sort_unstable();
    matched.dedup();
    Some(Judged {
        kind: match (case.is_answerable(), case.slice == corpus::NOISY_SLICE) {
            (false, _) => CaseKind::NoResult,
            (true, false) => CaseKind::Answerable,
            (true, true) => CaseKind::Noisy,
        },
        right: fast.iter().any(|r| case.relevant.contains(&r.index)),
        whole_word: judge_fast(&tokens, document) == FastConfidence::Confident,
        title_or_description: !breakdown.title_hits.is_empty()
            || !breakdown.description_hits.is_empty(),
        tokens_matched: matched.len(),
        lead_score: lead.score,
        runner_up_score: fast.get(1).map_or(0, |r| r.score),
    })
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;

    fn real_corpus() -> Corpus {
        corpus::load(&corpus::corpus_dir().unwrap(), SystemTime::now()).unwrap()
    }

    fn shipped(report: &ConfidenceReport) -> &RuleRow {
        report
            .rules
            .iter()
            .find(|r| r.rule == Rule::WholeWord.name())
            .unwrap()
    }

    #[test]
    fn the_shipped_rule_calls_no_more_wrong_fast_results_confident_than_any_alternative() {
        let report = confidence_report(&real_corpus());
        let fewest_wrong = report.rules.iter().map(|r| r.confident_wrong).min();
        assert_eq!(Some(shipped(&report).confident_wrong), fewest_wrong);
        // And of the rules that few wrong, it holds back the fewest right ones.
        let held_right = report
            .rules
            .iter()
            .filter(|r| Some(r.confident_wrong) == fewest_wrong)
            .map(|r| r.weak_right)
            .min();
        assert_eq!(Some(shipped(&report).weak_right), held_right);
        assert_eq!(confidence_gates(&report), Vec::<String>::new());
    }

    #[test]
    fn the_gate_fails_when_the_shipped_rule_calls_a_noisy_fast_result_confident() {
        let mut report = confidence_report(&real_corpus());
        report.rules[0].noisy_confident = 2;
        let failures = confidence_gates(&report);
        assert_eq!(failures.len(), 1);
        assert!(
            failures[0].contains("2 wrong semantic-noisy"),
            "{failures:?}"
        );
    }

    #[test]
    fn a_title_or_description_rule_is_fooled_by_pieces_of_words_in_a_title() {
        let report = confidence_report(&real_corpus());
        let title = report
            .rules
            .iter()
            .find(|r| r.rule == Rule::TitleOrDescription.name())
            .unwrap();
        assert!(title.noisy_confident > 0, "{title:?}");
    }
}
