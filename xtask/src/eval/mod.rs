//! `cargo xtask eval`: recall quality, delivery and deterministic scoring latency.
//!
//! Measurements over `corpus/recall-eval`, defined in `docs/spec.md#measurements`, each reading
//! the corpus through the real scanner:
//! - [`quality`]: Recall@5, top-1 and no-result handling per slice, shipped scorer beside the
//!   unsegmented baseline (`design`: no word segmentation, no structured fields; see
//!   `docs/spec.md#the-unsegmented-baseline`) and the frozen scorer
//!   (`docs/spec.md#the-frozen-scorer`), with the random floor; gated.
//! - [`delivery`]: how often a perfect selection reaches the model, per selector latency, turn kind,
//!   delivery design (single-path, fast-path, gated) and slice, and how long the first prompt
//!   waited, through the real recall lifecycle; duplicates and the gated design's claims are
//!   gated.
//! - [`confidence`]: the gated design's confidence rule beside the alternatives it was chosen
//!   over, on the corpus.
//! - [`chatter`]: what the delivery sends on everyday prompts over `corpus/demo`,
//!   `corpus/recall-eval` and `corpus/payments-team`, per tree and language, tuning and test
//!   part side by side; notes per nothing-relevant turn and kept recall gated on the test part.
//! - [`latency`]: the scorer's own time per query, as a share of the 100 ms initial ceiling.
//!
//! Then the small scan-latency report. Every failed gate is listed and the command exits non-zero.

mod chatter;
mod confidence;
mod corpus;
mod delivery;
mod figures;
mod latency;
mod quality;
mod reach;
mod render;
mod trim;

use std::fmt::Write as _;
use std::time::SystemTime;

use anyhow::{Result, bail};
use serde::Serialize;

use self::chatter::ChatterReport;
use self::confidence::ConfidenceReport;
use self::delivery::{DeliveryReport, ScenarioRow};
use self::latency::LatencyReport;
use self::quality::{GroupMetrics, QualityReport, optional_percent, percent};
use self::reach::ReachReport;
use self::trim::TrimReport;

/// The options of `cargo xtask eval`.
#[derive(Debug, clap::Parser)]
#[command(args_override_self = true)]
pub struct EvalArgs {
    /// Print the whole report as JSON instead of the tables
    #[arg(long)]
    json: bool,
}

/// Everything `--json` prints.
#[derive(Debug, Serialize)]
struct EvalReport {
    quality: QualityReport,
    delivery: DeliveryReport,
    confidence: ConfidenceReport,
    trim: TrimReport,
    reach: ReachReport,
    chatter: ChatterReport,
    scoring_latency: LatencyReport,
    gates: Gates,
}

#[derive(Debug, Serialize)]
struct Gates {
    passed: bool,
    failures: Vec<String>,
}

/// Entry point of `cargo xtask eval`.
pub fn main(args: &EvalArgs) -> Result<()> {
    let json = args.json;

    let corpus = corpus::load(&corpus::corpus_dir()?, SystemTime::now())?;
    let quality =
        quality::quality_report(&corpus, &quality::shipped_scorer, &quality::frozen_scorer);
    let delivery = delivery::delivery_report(&corpus)?;
    let confidence = confidence::confidence_report(&corpus);
    let trim = trim::trim_report(&corpus);
    let reach = reach::reach_report(&corpus)?;
    let chatter = chatter::chatter_report(corpus.now)?;
    let scoring_latency = latency::latency_report(&corpus);
    let mut failures = quality::quality_gates(&quality);
    failures.extend(delivery::delivery_gates(&delivery));
    failures.extend(confidence::confidence_gates(&confidence));
    failures.extend(trim::trim_gates(&trim));
    failures.extend(reach::reach_gates(&reach));
    failures.extend(chatter::chatter_gates(&chatter));
    let report = EvalReport {
        quality,
        delivery,
        confidence,
        trim,
        reach,
        chatter,
        scoring_latency,
        gates: Gates {
            passed: failures.is_empty(),
            failures,
        },
    };

    if json {
        // The scan-latency report has its own `cargo xtask scan-latency --json`; it is left out
        // here so that stdout stays one JSON object.
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", render(&report));
        crate::scan_latency::run_small_report()?;
    }

    let failures = &report.gates.failures;
    if !failures.is_empty() {
        bail!(
            "{} eval gate(s) failed:\n  - {}",
            failures.len(),
            failures.join("\n  - ")
        );
    }
    Ok(())
}

fn render(report: &EvalReport) -> String {
    let mut out = String::new();
    render_quality(&mut out, &report.quality);
    out.push('\n');
    render_delivery(&mut out, &report.delivery);
    out.push('\n');
    render_confidence(&mut out, &report.confidence);
    out.push('\n');
    render::trim(&mut out, &report.trim);
    out.push('\n');
    render::reach(&mut out, &report.reach);
    out.push('\n');
    chatter::render(&mut out, &report.chatter);
    out.push('\n');
    render_latency(&mut out, &report.scoring_latency);
    out.push('\n');
    if report.gates.passed {
        out.push_str("gates: all passed\n\n");
    } else {
        let _ = writeln!(out, "gates: {} failed", report.gates.failures.len());
        for failure in &report.gates.failures {
            let _ = writeln!(out, "  FAILED {failure}");
        }
        out.push('\n');
    }
    out
}

fn render_quality(out: &mut String, q: &QualityReport) {
    let _ = writeln!(
        out,
        "Recall quality: corpus/recall-eval, {} documents, {} cases; random floor Recall@5 = 5/{} = {}",
        q.documents,
        q.cases,
        q.documents,
        percent(q.random_floor)
    );
    let _ = writeln!(
        out,
        "unsegmented: the baseline without word segmentation, keywords or usage scenarios"
    );
    let _ = writeln!(
        out,
        "{:<22} {:>5} | {:>11} {:>7} {:>6} | {:>10} {:>7} {:>6} | {:>10} {:>7} {:>6}",
        "slice",
        "cases",
        "shipped R@5",
        "top-1",
        "silent",
        "unseg. R@5",
        "top-1",
        "silent",
        "frozen R@5",
        "top-1",
        "silent"
    );
    let columns = |f: Option<&GroupMetrics>| {
        format!(
            "{:>10} {:>7} {:>6}",
            optional_percent(f.and_then(|f| f.recall_at_5)),
            optional_percent(f.and_then(|f| f.top_1)),
            f.map_or_else(|| "n/a".to_owned(), |f| f.silent.to_string()),
        )
    };
    let row =
        |out: &mut String, s: &GroupMetrics, d: Option<&GroupMetrics>, f: Option<&GroupMetrics>| {
            let _ = writeln!(
                out,
                "{:<22} {:>5} | {:>11} {:>7} {:>6} | {} | {}",
                s.name,
                s.cases,
                optional_percent(s.recall_at_5),
                optional_percent(s.top_1),
                s.silent,
                columns(d),
                columns(f),
            );
        };
    for slice in &q.shipped.slices {
        row(
            out,
            slice,
            q.unsegmented.slice(&slice.name),
            q.frozen.slice(&slice.name),
        );
    }
    row(
        out,
        &q.shipped.gated_answerable,
        Some(&q.unsegmented.gated_answerable),
        Some(&q.frozen.gated_answerable),
    );
    let _ = writeln!(
        out,
        "no-result precision (silent answers that were right, outside semantic-no-lexical): shipped {}, design {}, frozen {}",
        optional_percent(q.shipped.no_result_precision),
        optional_percent(q.unsegmented.no_result_precision),
        optional_percent(q.frozen.no_result_precision)
    );
    let _ = writeln!(
        out,
        "no-result recall (no-result cases answered with silence): shipped {}, design {}, frozen {}",
        optional_percent(q.shipped.no_result_recall),
        optional_percent(q.unsegmented.no_result_recall),
        optional_percent(q.frozen.no_result_recall)
    );
    let misses: Vec<_> = q
        .shipped
        .outcomes
        .iter()
        .filter(|o| o.top_1 == Some(false) || o.recall_at_5.is_some_and(|r| r < 1.0))
        .collect();
    if !misses.is_empty() {
        out.push_str("shipped misses (top-1 wrong or a relevant document outside the top 5):\n");
        for miss in misses {
            let first = miss.top.first().map_or("(silent)", String::as_str);
            let _ = writeln!(
                out,
                "  {:<30} {:<20} R@5 {:>6}, first {first}",
                miss.id,
                miss.slice,
                optional_percent(miss.recall_at_5)
            );
        }
    }
}

fn render_delivery(out: &mut String, d: &DeliveryReport) {
    let turns = d.modelled.first().map_or(0, |r| r.turns);
    let _ = writeln!(
        out,
        "Delivery: {turns} answerable cases, one session each, perfect model, tool result at {} ms",
        d.tool_result_after_ms
    );
    out.push_str(
        "(mock = modelled latency on a paused clock; http = HttpSelector against a loopback server, real time;\n \
         held = share of turns whose first prompt held a weak fast result (telemetry initial_wait);
 wait = how long the first prompt waited for memory: mean, median and 95th percentile)\n",
    );
    let _ = writeln!(
        out,
        "{:<8} {:>8}  {:<10}  {:<11}  {:>12}  {:>7}  {:>10}  {:>6}  {:>9}  {:>9}  {:>9}",
        "selector",
        "latency",
        "turn",
        "design",
        "first prompt",
        "at all",
        "duplicates",
        "held",
        "wait mean",
        "wait p50",
        "wait p95"
    );
    let row = |out: &mut String, r: &ScenarioRow| {
        let _ = writeln!(
            out,
            "{:<8} {:>5} ms  {:<10}  {:<11}  {:>12}  {:>7}  {:>10}  {:>6}  {:>6.1} ms  {:>6.1} ms  {:>6.1} ms",
            r.selector,
            r.latency_ms,
            r.turn,
            r.design,
            percent(r.first_prompt),
            percent(r.at_all),
            percent(r.duplicate_rate),
            percent(r.held_rate),
            r.initial_wait_mean_ms,
            r.initial_wait_p50_ms,
            r.initial_wait_p95_ms
        );
    };
    for r in d.modelled.iter().chain(&d.http) {
        row(out, r);
    }
    for (selector, rows) in [("mock", &d.modelled), ("http", &d.http)] {
        render_slices(out, selector, rows);
    }
}

/// First-prompt share per slice on tool-free turns, each latency's designs side by side.
fn render_slices(out: &mut String, selector: &str, rows: &[ScenarioRow]) {
    let tool_free: Vec<&ScenarioRow> = rows.iter().filter(|r| r.turn == "tool-free").collect();
    let mut latencies: Vec<u64> = tool_free.iter().map(|r| r.latency_ms).collect();
    latencies.dedup();
    let designs: Vec<&str> = delivery::DESIGNS
        .iter()
        .map(|&d| delivery::design_name(d))
        .collect();
    let _ = writeln!(
        out,
        "\nFirst prompt by slice, tool-free turns, {selector} selector ({}):",
        designs.join(" / ")
    );
    let _ = write!(out, "{:<22}", "slice");
    for latency in &latencies {
        let _ = write!(out, " {:>16}", format!("{latency} ms"));
    }
    out.push('\n');
    let Some(first) = tool_free.first() else {
        return;
    };
    for slice in first.slices.iter().map(|s| s.slice) {
        let _ = write!(out, "{slice:<22}");
        for &latency in &latencies {
            let cells: Vec<String> = designs
                .iter()
                .map(|design| {
                    tool_free
                        .iter()
                        .find(|r| r.latency_ms == latency && r.design == *design)
                        .and_then(|r| r.slice(slice))
                        .map_or_else(
                            || "-".to_owned(),
                            |s| format!("{:.0}", s.first_prompt * 100.0),
                        )
                })
                .collect();
            let _ = write!(out, " {:>16}", cells.join("/"));
        }
        out.push('\n');
    }
}

fn render_confidence(out: &mut String, c: &ConfidenceReport) {
    out.push_str(
        "Gated design, confidence rules on the corpus (lead document of the fast result; \
         wrong = no relevant document in it):\n",
    );
    let _ = writeln!(
        out,
        "{:<22} {:>9} {:>15} {:>15} {:>10} {:>10} {:>14} {:>19}",
        "rule",
        "with fast",
        "confident-right",
        "confident-wrong",
        "weak-right",
        "weak-wrong",
        "noisy-confident",
        "no-result-confident"
    );
    for r in &c.rules {
        let _ = writeln!(
            out,
            "{:<22} {:>9} {:>15} {:>15} {:>10} {:>10} {:>14} {:>19}",
            r.rule,
            r.answerable_with_fast,
            r.confident_right,
            r.confident_wrong,
            r.weak_right,
            r.weak_wrong,
            r.noisy_confident,
            r.no_result_confident
        );
    }
}

fn render_latency(out: &mut String, l: &LatencyReport) {
    let _ = writeln!(
        out,
        "Scoring latency: QueryTokens::new + CandidateSelection::select over {} prepared documents, {} cases x {} calls ({} build)",
        l.documents, l.cases, l.repetitions, l.profile
    );
    let _ = writeln!(
        out,
        "p50 {:>9.1} us  ({:.3}% of the 100 ms budget)",
        l.p50_us,
        l.p50_budget_share * 100.0
    );
    let _ = writeln!(
        out,
        "p95 {:>9.1} us  ({:.3}% of the 100 ms budget)",
        l.p95_us,
        l.p95_budget_share * 100.0
    );
}

#[cfg(test)]
mod tests;
