//! Chatter on trees the delivery rule was not chosen on: the prompts of `corpus/chatter` run
//! against `corpus/demo`, `corpus/recall-eval` and `corpus/payments-team`, each pair of a tree
//! and a case in a tuning or a test part fixed by [`split`].
//!
//! Each turn is delivered as the lexical delivery sends it without a selector: the lexical top
//! five, then the rule (as in [`trim`](super::trim)). Per tree and per language, tuning and test
//! part side by side: notes delivered per turn with nothing relevant, the share of those turns
//! that delivered anything, and delivered precision and relevant recall on the answerable
//! turns. The shipped rule, the untrimmed reference and the rule before background frequencies
//! are measured on both parts, candidates on the tuning part only. Gated on the test part: at
//! most [`TARGET_NOTES_PER_NOTHING_TURN`] notes per nothing-relevant turn, at least
//! [`TARGET_PRECISION`] delivered precision, and [`KEPT_RECALL`] of the untrimmed recall on
//! every tree and language with answers (a note named in a line counting as reached).

mod candidates;
pub mod figures;
pub mod load;
mod render;
pub mod split;

use std::time::SystemTime;

use anyhow::Result;
use lexical_score::delivery::{
    Background, DeliveryRule, QueryEvidence, Share, Tier, Tiering, UninformativeTokens, Zipf,
};
use lexical_score::{ActiveToolAliases, CandidateSelection, QueryTokens};
use memory_scan::{Document, ScannedDocument};
use recall_lifecycle::render_tiered_prompt;
use serde::Serialize;

use self::candidates::Condition;
use self::figures::{Cell, TurnDelivery};
use self::load::{LANGS, Tree, Turn};
use self::split::Part;
use super::figures::KEPT_RECALL;
use super::trim::rule_name;

pub use render::render;

/// The most notes per turn with nothing relevant the shipped rule may send on the test part;
/// gated.
pub const TARGET_NOTES_PER_NOTHING_TURN: f64 = 0.2;

/// The least delivered precision (of the notes delivered whole) on the answerable turns of the
/// test part; gated.
pub const TARGET_PRECISION: f64 = 0.9;

/// The name of the rows summing every tree or every language.
pub const ALL: &str = "all";

/// A rule the chatter evaluation measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChatterRule {
    /// A [`DeliveryRule`] of the lexical delivery.
    Delivery(DeliveryRule),
    /// A [`DeliveryRule`], then a condition on each note it delivers.
    And(DeliveryRule, Condition),
    /// A [`DeliveryRule`], each note it delivers shown whole or named in a line by a
    /// [`Tiering`].
    Tiered(DeliveryRule, Tiering),
}

impl ChatterRule {
    fn name(self) -> String {
        match self {
            Self::Delivery(rule) if rule == DeliveryRule::SHIPPED => {
                format!("shipped rule, every note whole ({})", rule_name(&rule))
            }
            Self::Delivery(rule) if rule.is_untrimmed() => "untrimmed (lexical top 5)".to_owned(),
            Self::Delivery(rule) if rule == with_tokens(|t| t.background = None) => {
                format!("before background frequencies ({})", rule_name(&rule))
            }
            Self::Delivery(rule) => rule_name(&rule),
            Self::And(rule, condition) if rule == DeliveryRule::SHIPPED => {
                format!("shipped, and {}", condition.name())
            }
            Self::And(rule, condition) => format!("{}, and {}", rule_name(&rule), condition.name()),
            Self::Tiered(rule, tiering) => {
                let base = rule_name(&rule);
                match tiering {
                    Tiering::Off => base,
                    Tiering::Coverage(share)
                        if tiering == Tiering::SHIPPED && rule == DeliveryRule::SHIPPED =>
                    {
                        format!(
                            "shipped ({base}; whole when it holds ≥{}% of the informative words, else a line)",
                            share.as_percent()
                        )
                    }
                    Tiering::Coverage(share) => format!(
                        "{base}, whole when it holds ≥{}% of the informative words, else a line",
                        share.as_percent()
                    ),
                }
            }
        }
    }

    /// The notes of `tree` delivered for `query`, as indices into its documents, each with how
    /// it is shown.
    fn deliver(self, tree: &Tree, query: &str) -> Vec<(usize, Tier)> {
        let (rule, condition, tiering) = match self {
            Self::Delivery(rule) => (rule, None, Tiering::Off),
            Self::And(rule, condition) => (rule, Some(condition), Tiering::Off),
            Self::Tiered(rule, tiering) => (rule, None, tiering),
        };
        let tokens = QueryTokens::new(query);
        let selection =
            CandidateSelection::select(&tokens, &tree.documents, &ActiveToolAliases::default());
        let evidence = QueryEvidence::judge(&tokens, &rule.evidence, &tree.documents);
        rule.deliver_judged(&evidence, selection.heuristic(), &tree.documents)
            .iter()
            .map(|judged| (judged.ranked.index, tiering.tier(judged.evidence)))
            .filter(|&(index, _)| {
                condition.is_none_or(|c| {
                    tree.documents
                        .get(index)
                        .is_some_and(|d| c.admits(&evidence, d.prepared()))
                })
            })
            .collect()
    }
}

/// One tree, as the report names it.
#[derive(Debug, Clone, Serialize)]
pub struct TreeInfo {
    /// The tree's name.
    pub name: &'static str,
    /// Documents scanned.
    pub documents: usize,
    /// Files the scanner left out.
    pub skipped: usize,
}

/// One row: a tree (or [`ALL`]) and a language (or [`ALL`]), both parts.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The tree, or [`ALL`].
    pub tree: &'static str,
    /// The language, or [`ALL`].
    pub lang: &'static str,
    /// The tuning part.
    pub tune: Cell,
    /// The test part; `None` for a rule compared on the tuning part only.
    pub test: Option<Cell>,
}

/// One rule's figures.
#[derive(Debug, Clone, Serialize)]
pub struct RuleReport {
    /// The rule, as printed.
    pub rule: String,
    /// Whether the test part was measured (only for the shipped rule and the reference).
    pub judged_on_test: bool,
    /// Per tree and language, then per tree, then every tree per language, then everything.
    pub rows: Vec<Row>,
}

impl RuleReport {
    /// The row of `tree` and `lang`.
    pub fn row(&self, tree: &str, lang: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.tree == tree && r.lang == lang)
    }
}

/// The chatter section of the evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct ChatterReport {
    /// The trees, in report order.
    pub trees: Vec<TreeInfo>,
    /// Cases in `corpus/chatter/cases.toml`.
    pub cases: usize,
    /// Turns (pairs of a case and a tree) per part.
    pub tune_turns: usize,
    /// Turns of the test part.
    pub test_turns: usize,
    /// The shipped rule, the untrimmed reference, then the candidates (tuning part only).
    pub rules: Vec<RuleReport>,
    /// [`TARGET_NOTES_PER_NOTHING_TURN`].
    pub target_notes_per_nothing_turn: f64,
    /// Whether the shipped rule meets it on the test part.
    pub shipped_meets_target: bool,
}

/// Whether `rule` sends at most [`TARGET_NOTES_PER_NOTHING_TURN`] notes per nothing-relevant
/// turn over the whole test part.
fn meets_target(rule: &RuleReport) -> bool {
    rule.row(ALL, ALL)
        .and_then(|r| r.test)
        .and_then(|c| c.notes_per_nothing_turn())
        .is_some_and(|n| n <= TARGET_NOTES_PER_NOTHING_TURN + 1e-9)
}

/// The gates of the chatter section, all on the test part: the shipped rule sends at most
/// [`TARGET_NOTES_PER_NOTHING_TURN`] notes whole per turn with nothing relevant, reaches
/// [`TARGET_PRECISION`] delivered precision on the answerable turns, and keeps [`KEPT_RECALL`]
/// of the untrimmed delivery's relevant recall on every tree and language with answerable
/// turns, counting a note named in a line as reaching the model.
pub fn chatter_gates(report: &ChatterReport) -> Vec<String> {
    let (Some(shipped), Some(untrimmed)) = (report.rules.first(), report.rules.get(1)) else {
        return vec!["the chatter rules were not measured".to_owned()];
    };
    let mut failures = Vec::new();
    if !meets_target(shipped) {
        failures.push(format!(
            "the shipped rule sends more than {TARGET_NOTES_PER_NOTHING_TURN} notes per \
             nothing-relevant chatter turn on the test part"
        ));
    }
    if let Some(precision) = shipped_precision(shipped)
        && precision < TARGET_PRECISION - 1e-9
    {
        failures.push(format!(
            "the shipped rule's delivered precision on the answerable turns of the test part is \
             {:.1}%, below {:.0}%",
            precision * 100.0,
            TARGET_PRECISION * 100.0
        ));
    }
    for row in &shipped.rows {
        let Some(test) = row.test.filter(|c| c.answerable_turns > 0) else {
            continue;
        };
        let reference = untrimmed
            .row(row.tree, row.lang)
            .and_then(|r| r.test)
            .and_then(|c| c.recall());
        if let (Some(kept), Some(before)) = (test.followed_recall(), reference)
            && kept < before * KEPT_RECALL - 1e-9
        {
            failures.push(format!(
                "the shipped rule keeps {:.1}% relevant recall on {}/{} (test part), below \
                 {:.0}% of the untrimmed {:.1}%",
                kept * 100.0,
                row.tree,
                row.lang,
                KEPT_RECALL * 100.0,
                before * 100.0
            ));
        }
    }
    failures
}

/// The delivered precision of `rule` over every answerable turn of the test part.
pub fn shipped_precision(rule: &RuleReport) -> Option<f64> {
    rule.row(ALL, ALL)
        .and_then(|r| r.test)
        .and_then(|c| c.precision())
}

/// Loads the trees and cases of the checkout and measures every rule.
pub fn chatter_report(now: SystemTime) -> Result<ChatterReport> {
    let root = crate::workspace_root()?;
    let trees = load::trees(&root, now)?;
    let path = load::cases_path()?;
    let turns = load::turns(&path, &trees)?;
    let cases = {
        let mut ids: Vec<&str> = turns.iter().map(|t| t.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len()
    };
    let judged = [
        ChatterRule::Tiered(DeliveryRule::SHIPPED, Tiering::SHIPPED),
        ChatterRule::Delivery(DeliveryRule::UNTRIMMED),
        ChatterRule::Delivery(with_tokens(|t| t.background = None)),
        ChatterRule::Delivery(DeliveryRule::SHIPPED),
    ];
    let mut rules: Vec<RuleReport> = judged
        .iter()
        .map(|&rule| measure(rule, &trees, &turns, true, now))
        .collect();
    rules.extend(
        candidates()
            .into_iter()
            .map(|rule| measure(rule, &trees, &turns, false, now)),
    );
    let shipped_meets_target = rules.first().is_some_and(meets_target);
    Ok(ChatterReport {
        trees: trees
            .iter()
            .map(|t| TreeInfo {
                name: t.name,
                documents: t.documents.len(),
                skipped: t.skipped,
            })
            .collect(),
        cases,
        tune_turns: turns.iter().filter(|t| t.part == Part::Tune).count(),
        test_turns: turns.iter().filter(|t| t.part == Part::Test).count(),
        rules,
        target_notes_per_nothing_turn: TARGET_NOTES_PER_NOTHING_TURN,
        shipped_meets_target,
    })
}

/// The candidate rules, compared on the tuning part only.
fn candidates() -> Vec<ChatterRule> {
    let background = |tenths| {
        with_tokens(|t| t.background = Some(Background::Uninformative(Zipf::tenths(tenths))))
    };
    let not_alone =
        |tenths| with_tokens(|t| t.background = Some(Background::NotAlone(Zipf::tenths(tenths))));
    let mut rules = vec![
        ChatterRule::And(DeliveryRule::SHIPPED, Condition::AboutFields),
        ChatterRule::And(DeliveryRule::SHIPPED, Condition::Coverage(50)),
        ChatterRule::Delivery(with_tokens(|t| t.common = Share::percent(30))),
        ChatterRule::Delivery(with_tokens(|t| t.common = Share::percent(20))),
    ];
    for tenths in BACKGROUND_CANDIDATES {
        rules.push(ChatterRule::Delivery(background(tenths)));
    }
    for tenths in [48, 50] {
        rules.push(ChatterRule::And(background(tenths), Condition::AboutFields));
        rules.push(ChatterRule::And(
            background(tenths),
            Condition::Coverage(50),
        ));
    }
    for tenths in BACKGROUND_CANDIDATES {
        rules.push(ChatterRule::Delivery(not_alone(tenths)));
    }
    for tenths in [46, 48, 50] {
        rules.push(ChatterRule::And(not_alone(tenths), Condition::AboutFields));
    }
    for percent in TIERING_CANDIDATES {
        if let Some(share) = Share::percent(percent) {
            rules.push(ChatterRule::Tiered(
                DeliveryRule::SHIPPED,
                Tiering::Coverage(share),
            ));
        }
    }
    rules
}

/// The shares of the prompt's informative words a note must hold to be shown whole, as the
/// tiered candidates compare them.
const TIERING_CANDIDATES: [u8; 4] = [34, 50, 67, 100];

/// The background frequencies (Zipf, in tenths) from which a token is judged uninformative, as
/// the candidates compare them.
const BACKGROUND_CANDIDATES: [u8; 6] = [45, 46, 48, 50, 52, 55];

/// The shipped rule with its uninformative tokens changed by `change`.
fn with_tokens(change: impl FnOnce(&mut UninformativeTokens)) -> DeliveryRule {
    let mut rule = DeliveryRule::SHIPPED;
    change(&mut rule.evidence.uninformative);
    rule
}

/// `rule` over every turn (every turn of the tuning part only, unless `judged_on_test`).
fn measure(
    rule: ChatterRule,
    trees: &[Tree],
    turns: &[Turn],
    judged_on_test: bool,
    now: SystemTime,
) -> RuleReport {
    let mut cells: Vec<(usize, &'static str, Part, Cell)> = Vec::new();
    for turn in turns {
        if !judged_on_test && turn.part == Part::Test {
            continue;
        }
        let tree = &trees[turn.tree];
        let delivered = rule.deliver(tree, &turn.query);
        let shown = |tier: Tier| -> Vec<usize> {
            delivered
                .iter()
                .filter(|&&(_, t)| t == tier)
                .map(|&(i, _)| i)
                .collect()
        };
        let (whole, lines) = (shown(Tier::Whole), shown(Tier::Line));
        let notes = |indices: &[usize]| -> Vec<&Document> {
            indices
                .iter()
                .filter_map(|&i| tree.documents.get(i))
                .map(ScannedDocument::document)
                .collect()
        };
        let relevant =
            |indices: &[usize]| indices.iter().filter(|i| turn.relevant.contains(i)).count();
        let all: Vec<usize> = delivered.iter().map(|&(i, _)| i).collect();
        let count = TurnDelivery {
            relevant: turn.relevant.len(),
            delivered: whole.len(),
            relevant_delivered: relevant(&whole),
            lines: lines.len(),
            relevant_lines: relevant(&lines),
            chars: render_tiered_prompt(notes(&whole), notes(&lines), now)
                .chars()
                .count(),
            line_chars: render_tiered_prompt([], notes(&all), now).chars().count(),
        };
        if let Some((_, _, _, cell)) = cells
            .iter_mut()
            .find(|(t, l, p, _)| *t == turn.tree && *l == turn.lang && *p == turn.part)
        {
            cell.add(count);
        } else {
            let mut cell = Cell::default();
            cell.add(count);
            cells.push((turn.tree, turn.lang, turn.part, cell));
        }
    }
    let sum = |tree: Option<usize>, lang: Option<&str>, part: Part| {
        let mut total = Cell::default();
        for (t, l, p, cell) in &cells {
            if tree.is_none_or(|tree| tree == *t)
                && lang.is_none_or(|lang| lang == *l)
                && *p == part
            {
                total.merge(cell);
            }
        }
        total
    };
    let mut rows = Vec::new();
    let tree_choices = (0..trees.len())
        .map(|i| (Some(i), trees[i].name))
        .chain(std::iter::once((None, ALL)));
    for (tree, tree_name) in tree_choices {
        let lang_choices = LANGS
            .iter()
            .map(|&l| (Some(l), l))
            .chain(std::iter::once((None, ALL)));
        for (lang, lang_name) in lang_choices {
            let tune = sum(tree, lang, Part::Tune);
            let test = sum(tree, lang, Part::Test);
            if tune == Cell::default() && test == Cell::default() {
                continue;
            }
            rows.push(Row {
                tree: tree_name,
                lang: lang_name,
                tune,
                test: judged_on_test.then_some(test),
            });
        }
    }
    RuleReport {
        rule: rule.name(),
        judged_on_test,
        rows,
    }
}

#[cfg(test)]
mod tests;
