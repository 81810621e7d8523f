//! The text tables of the delivery-precision sections.

use std::fmt::Write as _;

use super::corpus::{CHATTER_SLICE, NO_RESULT_SLICE};
use super::figures::{ANSWERABLE, DeliveryFigures, KEPT_RECALL};
use super::quality::{optional_percent, percent};
use super::reach::{self, ReachReport, UNCHANGED_AT_MS};
use super::trim::{self, MAX_CHATTER_DOCS, RuleRow, TrimReport};

fn docs(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{v:.2}"))
}

/// The header of a row of figures.
pub fn figures_header(out: &mut String, first: &str, width: usize) {
    let _ = writeln!(
        out,
        "{first:<width$} {:>7} {:>9} {:>9} {:>8} {:>8} {:>8} {:>9}",
        "docs/ans", "precision", "hit first", "hit all", "recall", "no-res", "chatter0"
    );
}

/// One row of figures: `answerable` figures, then documents per no-result and per chatter turn
/// with nothing relevant.
pub fn figures_row(
    out: &mut String,
    first: &str,
    width: usize,
    all: &[DeliveryFigures],
    name: &str,
) {
    let find = |n: &str| all.iter().find(|f| f.name == n);
    let Some(f) = find(name) else {
        return;
    };
    let _ = writeln!(
        out,
        "{first:<width$} {:>7.2} {:>9} {:>9} {:>8} {:>8} {:>8} {:>9}",
        f.delivered_per_turn,
        optional_percent(f.precision),
        percent(f.hit_first_prompt),
        percent(f.hit_at_all),
        percent(f.relevant_recall),
        docs(find(NO_RESULT_SLICE).and_then(|f| f.delivered_per_nothing_relevant_turn)),
        docs(find(CHATTER_SLICE).and_then(|f| f.delivered_per_nothing_relevant_turn)),
    );
}

fn rule_rows(out: &mut String, rows: &[RuleRow]) {
    for row in rows {
        let mark = match (row.shipped, row.admissible) {
            (true, _) => "* ",
            (false, true) => "  ",
            (false, false) => "x ",
        };
        figures_row(
            out,
            &format!("{mark}{}", row.rule),
            48,
            &row.figures,
            ANSWERABLE,
        );
        if !row.loses_on.is_empty() {
            out.pop();
            let _ = writeln!(out, "  loses: {}", row.loses_on.join(", "));
        }
    }
}

/// The trim-rule comparison.
pub fn trim(out: &mut String, report: &TrimReport) {
    let _ = writeln!(
        out,
        "Delivery rules on the corpus, no selector (the lexical top 5, then the rule; every turn):\n\
         docs/ans = documents per answerable turn; precision = relevant delivered / delivered; hit = \
         turns with a relevant document delivered; recall = share of each turn's relevant documents \
         delivered; no-res / chatter0 = documents per no-result turn / per chatter turn with nothing \
         relevant.\nx = keeps less than {:.0}% of the untrimmed relevant recall on some slice with \
         answers; * = shipped (gated: admissible, chatter0 <= {MAX_CHATTER_DOCS})",
        KEPT_RECALL * 100.0
    );
    figures_header(out, "trim (every token counts)", 48);
    rule_rows(out, &report.trims);
    out.push('\n');
    figures_header(out, "uninformative tokens, minimum evidence, trim", 48);
    rule_rows(out, &report.evidence);
    if let Some(best) = trim::best_rule(report) {
        let _ = writeln!(
            out,
            "best admissible rule with chatter0 <= {MAX_CHATTER_DOCS}: {} (precision {})",
            best.rule,
            percent(trim::precision(best))
        );
    }
    let (Some(untrimmed), Some(shipped)) =
        (report.trims.first(), report.rows().find(|r| r.shipped))
    else {
        return;
    };
    let _ = writeln!(
        out,
        "\nPer slice, no selector: untrimmed -> shipped ({})",
        shipped.rule
    );
    slice_comparison(out, &untrimmed.figures, &shipped.figures);
    tiered(out, report);
}

/// The shipped rule with its tiering, per slice: what is shown whole, and what also reaches the
/// model when it reads the lines.
fn tiered(out: &mut String, report: &TrimReport) {
    let _ = writeln!(
        out,
        "\nShipped rule, tiered (a note holding fewer than half of the informative words is named \
         in a line), no selector: slice, docs/ans shown whole, precision of the notes shown \
         whole, recall of notes shown whole -> whole or named in a line"
    );
    for (whole, named) in report.tiered_whole.iter().zip(&report.tiered_named) {
        if whole.answerable_turns == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "{:<22} {:>5.2} {:>9} {:>9} -> {}",
            whole.name,
            whole.delivered_per_turn,
            optional_percent(whole.precision),
            percent(whole.relevant_recall),
            percent(named.relevant_recall)
        );
    }
}

/// Per slice, `untrimmed -> shipped`.
fn slice_comparison(out: &mut String, untrimmed: &[DeliveryFigures], shipped: &[DeliveryFigures]) {
    let _ = writeln!(
        out,
        "{:<22} {:>5} {:>15} {:>19} {:>17} {:>17}",
        "slice", "turns", "docs/ans", "precision", "hit", "recall"
    );
    for u in untrimmed {
        let Some(s) = shipped.iter().find(|s| s.name == u.name) else {
            continue;
        };
        if u.answerable_turns == 0 {
            let _ = writeln!(
                out,
                "{:<22} {:>5} {:>15}   (nothing relevant: documents per turn)",
                u.name,
                u.nothing_relevant_turns,
                format!(
                    "{} -> {}",
                    docs(u.delivered_per_nothing_relevant_turn),
                    docs(s.delivered_per_nothing_relevant_turn)
                )
            );
            continue;
        }
        let _ = writeln!(
            out,
            "{:<22} {:>5} {:>15} {:>19} {:>17} {:>17}",
            u.name,
            u.answerable_turns,
            format!("{:.2} -> {:.2}", u.delivered_per_turn, s.delivered_per_turn),
            format!(
                "{} -> {}",
                optional_percent(u.precision),
                optional_percent(s.precision)
            ),
            format!("{} -> {}", percent(u.hit_at_all), percent(s.hit_at_all)),
            format!(
                "{} -> {}",
                percent(u.relevant_recall),
                percent(s.relevant_recall)
            ),
        );
    }
}

/// What reaches the model with a perfect selector, untrimmed and with the shipped rule.
pub fn reach(out: &mut String, report: &ReachReport) {
    let _ = writeln!(
        out,
        "What reaches the model with a perfect selector (mock, paused clock; every case, the \
         turn's deliveries together; hit first = at the first prompt), untrimmed and with the \
         shipped delivery rule:"
    );
    figures_header(out, "latency turn       design      rule", 40);
    for row in &report.rows {
        figures_row(
            out,
            &format!(
                "{:>5} ms {:<10} {:<11} {}",
                row.latency_ms, row.turn, row.design, row.rule
            ),
            40,
            &row.figures,
            ANSWERABLE,
        );
    }
    for (untrimmed, shipped) in reach::pairs(report).filter(|(u, _)| {
        u.latency_ms == UNCHANGED_AT_MS && u.turn == "tool-free" && u.design != "single-path"
    }) {
        let _ = writeln!(
            out,
            "\nPer slice, perfect selector at {} ms, {} turn, {}: untrimmed -> shipped",
            untrimmed.latency_ms, untrimmed.turn, untrimmed.design
        );
        slice_comparison(out, &untrimmed.figures, &shipped.figures);
    }
}
