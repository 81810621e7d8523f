//! The chatter section as printed by `cargo xtask eval`.

use std::fmt::Write as _;

use super::figures::Cell;
use super::split::Part;
use super::{ALL, ChatterReport, Row, RuleReport, TARGET_PRECISION};
use crate::eval::figures::KEPT_RECALL;
use crate::eval::quality::optional_percent;

fn notes(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"))
}

/// Nothing-relevant turns, notes per such turn, share of them delivering anything.
fn chatter_cells(cell: Option<&Cell>) -> String {
    cell.map_or_else(
        || format!("{:>5} {:>6} {:>6}", "", "", ""),
        |c| {
            format!(
                "{:>5} {:>6} {:>6}",
                c.nothing_turns,
                notes(c.notes_per_nothing_turn()),
                optional_percent(c.delivering_share())
            )
        },
    )
}

/// Answerable turns, precision, recall (whole, then whole or named in a line), and the
/// untrimmed recall beside it.
fn answer_cells(cell: Option<&Cell>, untrimmed: Option<&Cell>) -> String {
    cell.map_or_else(
        || format!("{:>5} {:>6} {:>6} {:>6} {:>6}", "", "", "", "", ""),
        |c| {
            format!(
                "{:>5} {:>6} {:>6} {:>6} {:>6}",
                c.answerable_turns,
                optional_percent(c.precision()),
                optional_percent(c.recall()),
                optional_percent(c.followed_recall()),
                optional_percent(untrimmed.and_then(Cell::recall))
            )
        },
    )
}

/// The chatter section.
pub fn render(out: &mut String, report: &ChatterReport) {
    let trees: Vec<String> = report
        .trees
        .iter()
        .map(|t| format!("{} {} notes", t.name, t.documents))
        .collect();
    let _ = writeln!(
        out,
        "Chatter on trees and prompts the rule was not chosen on: corpus/chatter, {} cases over {} \
         ({} tune / {} test turns; part = fmix64(FNV-1a(\"<tree>/<case id>\")), even = tune)",
        report.cases,
        trees.join(", "),
        report.tune_turns,
        report.test_turns
    );
    let (Some(shipped), Some(untrimmed), Some(before)) = (
        report.rules.first(),
        report.rules.get(1),
        report.rules.get(2),
    ) else {
        return;
    };
    render_judged(out, shipped, untrimmed);
    let untrimmed_all: Vec<String> = untrimmed
        .rows
        .iter()
        .filter(|r| r.lang == ALL)
        .map(|r| {
            format!(
                "{} {}/{}",
                r.tree,
                notes(r.tune.notes_per_nothing_turn()),
                notes(r.test.as_ref().and_then(Cell::notes_per_nothing_turn))
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "untrimmed, notes per nothing-relevant turn (tune/test): {}",
        untrimmed_all.join(", ")
    );
    let test = shipped
        .row(ALL, ALL)
        .and_then(|r| r.test)
        .and_then(|c| c.notes_per_nothing_turn());
    let _ = writeln!(
        out,
        "gated: at most {:.1} notes per nothing-relevant turn on the test part (shipped {}, {}); \
         relevant recall on each tree and language with answers at least {:.0}% of the untrimmed",
        report.target_notes_per_nothing_turn,
        notes(test),
        if report.shipped_meets_target {
            "met"
        } else {
            "missed"
        },
        KEPT_RECALL * 100.0
    );
    let precision = super::shipped_precision(shipped);
    let _ = writeln!(
        out,
        "gated: delivered precision on the answerable turns of the test part {} (target {:.0}%, {})",
        optional_percent(precision),
        TARGET_PRECISION * 100.0,
        if precision.is_some_and(|p| p >= TARGET_PRECISION - 1e-9) {
            "met"
        } else {
            "missed"
        }
    );
    render_judged(out, before, untrimmed);
    if let Some(whole) = report.rules.get(3) {
        render_judged(out, whole, untrimmed);
        render_characters(out, before);
        render_characters(out, whole);
    }
    render_characters(out, shipped);
    render_candidates(out, before, report.rules.get(4..).unwrap_or_default());
}

/// Characters delivered per nothing-relevant turn over every tree, whole notes beside one line
/// per note.
fn render_characters(out: &mut String, rule: &RuleReport) {
    let Some(row) = rule.row(ALL, ALL) else {
        return;
    };
    let cells = |cell: Option<&Cell>| match cell.and_then(Cell::chars_per_nothing_turn) {
        Some((delivered, lines)) => {
            format!("{delivered:.0} as delivered, {lines:.0} were each note one line")
        }
        None => "-".to_owned(),
    };
    let _ = writeln!(
        out,
        "characters per nothing-relevant turn (tune | test), {}: {} | {}",
        rule.rule,
        cells(Some(&row.tune)),
        cells(row.test.as_ref())
    );
}

/// A rule judged on both parts: chatter per tree and language, then the answerable turns.
fn render_judged(out: &mut String, shipped: &RuleReport, untrimmed: &RuleReport) {
    let _ = writeln!(out, "rule: {}", shipped.rule);
    out.push_str(
        "nothing relevant: turns, notes delivered per turn, share of turns delivering any note\n",
    );
    let _ = writeln!(
        out,
        "{:<14} {:<4} | {:>5} {:>6} {:>6} | {:>5} {:>6} {:>6}",
        "tree",
        "lang",
        Part::Tune.as_str(),
        "notes",
        "any",
        Part::Test.as_str(),
        "notes",
        "any"
    );
    for row in shipped
        .rows
        .iter()
        .filter(|r| r.tune.nothing_turns + test_of(r).nothing_turns > 0)
    {
        let _ = writeln!(
            out,
            "{:<14} {:<4} | {} | {}",
            row.tree,
            row.lang,
            chatter_cells(Some(&row.tune)),
            chatter_cells(row.test.as_ref())
        );
    }
    render_answerable(out, shipped, untrimmed);
}

/// Answerable turns of the shipped rule, with the untrimmed recall beside them.
fn render_answerable(out: &mut String, shipped: &RuleReport, untrimmed: &RuleReport) {
    out.push_str(
        "answerable: turns, delivered precision, relevant recall (whole; whole or named in a line), the untrimmed delivery's recall\n",
    );
    let _ = writeln!(
        out,
        "{:<14} {:<4} | {:>5} {:>6} {:>6} {:>6} {:>6} | {:>5} {:>6} {:>6} {:>6} {:>6}",
        "tree",
        "lang",
        Part::Tune.as_str(),
        "prec",
        "recall",
        "+line",
        "untr.",
        Part::Test.as_str(),
        "prec",
        "recall",
        "+line",
        "untr."
    );
    let answers = |r: &&Row| r.tune.answerable_turns + test_of(r).answerable_turns > 0;
    let trees_with_answers = shipped
        .rows
        .iter()
        .filter(|r| r.tree != ALL && r.lang == ALL)
        .filter(answers)
        .count();
    // With answers on one tree only, the rows over every tree repeat that tree's.
    for row in shipped
        .rows
        .iter()
        .filter(answers)
        .filter(|r| r.tree != ALL || trees_with_answers > 1)
    {
        let reference = untrimmed.row(row.tree, row.lang);
        let _ = writeln!(
            out,
            "{:<14} {:<4} | {} | {}",
            row.tree,
            row.lang,
            answer_cells(Some(&row.tune), reference.map(|r| &r.tune)),
            answer_cells(row.test.as_ref(), reference.and_then(|r| r.test.as_ref()))
        );
    }
}

fn test_of(row: &Row) -> Cell {
    row.test.unwrap_or_default()
}

/// Each candidate beside the rule before background frequencies, tuning part only, per tree and over every tree per
/// language.
fn render_candidates(out: &mut String, before: &RuleReport, candidates: &[RuleReport]) {
    for candidate in candidates {
        let _ = writeln!(
            out,
            "candidate, tuning part only: {}\n(before | candidate: notes per nothing-relevant turn, share delivering, precision, recall; then lines per nothing-relevant turn and the recall of notes delivered or named in a line)",
            candidate.rule
        );
        for row in candidate
            .rows
            .iter()
            .filter(|r| r.lang == ALL || r.tree == ALL)
        {
            let Some(base) = before.row(row.tree, row.lang) else {
                continue;
            };
            let cells = |c: &Cell| {
                format!(
                    "{:>5} {:>6} {:>6} {:>6}",
                    notes(c.notes_per_nothing_turn()),
                    optional_percent(c.delivering_share()),
                    optional_percent(c.precision()),
                    optional_percent(c.recall())
                )
            };
            let _ = writeln!(
                out,
                "{:<14} {:<4} | {} | {} | {:>5} {:>6}",
                row.tree,
                row.lang,
                cells(&base.tune),
                cells(&row.tune),
                notes(row.tune.lines_per_nothing_turn()),
                optional_percent(row.tune.followed_recall())
            );
        }
    }
}
