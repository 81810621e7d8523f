//! The delivery evaluation's gates: what the report must show for CI to pass.

use recall_lifecycle::DeliveryDesign;

use super::super::corpus;
use super::super::quality::percent;
use super::{
    DeliveryReport, GATED_NEVER_BELOW_FROM_MS, GATED_WINS_AT_MS, ScenarioRow, TurnKind, design_name,
};

/// Every delivery gate the report fails:
/// - a document delivered twice in a turn, or a recall without exactly one terminal delivery
///   event (every row);
/// - at [`GATED_WINS_AT_MS`] on tool-free turns, the gated design not delivering the model's
///   answer on the first prompt of every `semantic-noisy` turn (modelled, exact), or not doing
///   better there than the fast path (real network, where the timing is not exact);
/// - from [`GATED_NEVER_BELOW_FROM_MS`] on, the gated design below the fast path on any slice,
///   turn kind or selector, on the first prompt or at all. A real-time turn whose scan outlasted
///   the ceiling (a loaded machine; never on the paused clock) delivers nothing under either
///   design, so the gated design's late scans are forgiven, turn for turn, and no more.
pub fn delivery_gates(report: &DeliveryReport) -> Vec<String> {
    let mut failures = hygiene_gates(report);
    failures.extend(gated_design_gates(report));
    failures
}

/// The gates every design must pass: no document delivered twice in a turn, exactly one
/// terminal delivery event per recall.
pub fn hygiene_gates(report: &DeliveryReport) -> Vec<String> {
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

/// The claims of the gated design (see [`delivery_gates`]), checked for each selector that has
/// rows in the report.
pub fn gated_design_gates(report: &DeliveryReport) -> Vec<String> {
    let mut failures = Vec::new();
    let rows = || report.modelled.iter().chain(&report.http);
    let find = |selector: &str, latency_ms: u64, turn: &str, design: DeliveryDesign| {
        rows().find(|r| {
            r.selector == selector
                && r.latency_ms == latency_ms
                && r.turn == turn
                && r.design == design_name(design)
        })
    };
    let tool_free = TurnKind::ToolFree.as_str();
    let selectors = ["mock", "http"]
        .into_iter()
        .filter(|&selector| rows().any(|r| r.selector == selector));
    for selector in selectors {
        let gated = find(selector, GATED_WINS_AT_MS, tool_free, DeliveryDesign::Gated);
        let fast = find(
            selector,
            GATED_WINS_AT_MS,
            tool_free,
            DeliveryDesign::FastPath,
        );
        let noisy = |row: Option<&ScenarioRow>| {
            row.and_then(|r| r.slice(corpus::NOISY_SLICE))
                .map(|s| s.first_prompt)
        };
        let (Some(gated), Some(fast)) = (noisy(gated), noisy(fast)) else {
            failures.push(format!(
                "{selector} selector, {GATED_WINS_AT_MS} ms: no tool-free {} figures for the gated \
                 and fast-path designs",
                corpus::NOISY_SLICE
            ));
            continue;
        };
        let wins = if selector == "mock" {
            gated >= 1.0 - 1e-9
        } else {
            gated > fast + 1e-9
        };
        if !wins {
            failures.push(format!(
                "{selector} selector, {GATED_WINS_AT_MS} ms, tool-free turn: the gated design \
                 delivers the model's answer on the first prompt of {} of {} turns (fast path: {})",
                percent(gated),
                corpus::NOISY_SLICE,
                percent(fast)
            ));
        }
    }
    for gated in rows().filter(|r| {
        r.design == design_name(DeliveryDesign::Gated) && r.latency_ms >= GATED_NEVER_BELOW_FROM_MS
    }) {
        let Some(fast) = find(
            gated.selector,
            gated.latency_ms,
            gated.turn,
            DeliveryDesign::FastPath,
        ) else {
            failures.push(format!(
                "{} selector, {} ms, {} turn: no fast-path row to compare the gated design with",
                gated.selector, gated.latency_ms, gated.turn
            ));
            continue;
        };
        for slice in &gated.slices {
            let Some(fast_slice) = fast.slice(slice.slice) else {
                continue;
            };
            let slack = slice.late_scans as f64 / slice.turns.max(1) as f64;
            for (what, g, f) in [
                (
                    "on the first prompt",
                    slice.first_prompt,
                    fast_slice.first_prompt,
                ),
                ("at all", slice.at_all, fast_slice.at_all),
            ] {
                if g + slack < f - 1e-9 {
                    failures.push(format!(
                        "{} selector, {} ms, {} turn, {}: the gated design delivers {what} in {} \
                         of turns, below the fast path's {}",
                        gated.selector,
                        gated.latency_ms,
                        gated.turn,
                        slice.slice,
                        percent(g),
                        percent(f)
                    ));
                }
            }
        }
    }
    failures
}
