//! The summary `memrecall stats` computes from the events read: recalls, delivery rates,
//! discard reasons and latency percentiles.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use delivery_telemetry::{DeliveryPoint, DiscardReason, Phase, Strategy, TelemetryEvent};
use serde::Serialize;

use super::BUDGET_MS;
use super::read::{Problem, Read};

/// One phase × strategy × delivery point.
#[derive(Debug, Clone, Serialize)]
pub(super) struct DeliveryRow {
    pub(super) phase: Phase,
    pub(super) strategy: Strategy,
    pub(super) delivery_point: DeliveryPoint,
    pub(super) count: usize,
    /// `count` over the recalls counted.
    pub(super) share: f64,
}

/// One discard reason.
#[derive(Debug, Clone, Serialize)]
pub(super) struct DiscardRow {
    pub(super) reason: DiscardReason,
    pub(super) count: usize,
}

/// Percentiles of one latency.
#[derive(Debug, Clone, Serialize)]
pub(super) struct LatencyRow {
    /// What is timed.
    pub(super) name: &'static str,
    pub(super) count: usize,
    pub(super) p50_ms: Option<f64>,
    pub(super) p90_ms: Option<f64>,
    pub(super) p99_ms: Option<f64>,
    /// How many took at most [`BUDGET_MS`].
    pub(super) within_budget: usize,
}

/// How many selector failures of one kind were recorded.
#[derive(Debug, Clone, Serialize)]
pub(super) struct SelectorErrorRow {
    pub(super) kind: String,
    pub(super) count: usize,
}

/// What was skipped while reading.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Skipped {
    pub(super) unreadable_files: Vec<Problem>,
    pub(super) malformed_lines: usize,
    /// The first malformed lines, at most ten.
    pub(super) first_malformed: Vec<Problem>,
}

/// What `memrecall stats` prints.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Summary {
    pub(super) directory: PathBuf,
    /// Whether the directory exists at all.
    pub(super) directory_exists: bool,
    /// RFC 3339, when `--since` was given.
    pub(super) since: Option<String>,
    pub(super) files_read: usize,
    pub(super) events: usize,
    /// Recalls counted: terminal delivery events, one per recall.
    pub(super) recalls: usize,
    /// `memory.recall` events (none for a recall aborted by its caller).
    pub(super) recall_events: usize,
    pub(super) deliveries: Vec<DeliveryRow>,
    pub(super) discard_reasons: Vec<DiscardRow>,
    /// `memory.selector.error` events by kind, most frequent first.
    pub(super) selector_errors: Vec<SelectorErrorRow>,
    pub(super) budget_ms: f64,
    pub(super) latency: Vec<LatencyRow>,
    pub(super) skipped: Skipped,
}

/// The latencies summarised and drawn, by name: the fast result's publication, the recall
/// settling with the heuristic result or with the model's answer, and every delivery.
pub(super) fn latencies(events: &[TelemetryEvent]) -> [(&'static str, Vec<f64>); 4] {
    let recalls = || {
        events.iter().filter_map(|e| {
            if let TelemetryEvent::Recall(r) = e {
                Some(r)
            } else {
                None
            }
        })
    };
    let settled = |strategy| {
        recalls()
            .filter(|r| r.strategy == strategy)
            .map(|r| r.duration_ms)
            .collect()
    };
    let delivered = events
        .iter()
        .filter_map(|e| match e {
            TelemetryEvent::Delivery(d) if d.delivery_point != DeliveryPoint::Discarded => {
                Some(d.latency_ms)
            }
            _ => None,
        })
        .collect();
    [
        (
            "fast result",
            recalls().filter_map(|r| r.fast_duration_ms).collect(),
        ),
        ("heuristic result", settled(Strategy::Heuristic)),
        ("model answer", settled(Strategy::Model)),
        ("delivered", delivered),
    ]
}

/// The `memory.selector.error` events counted by kind, most frequent first.
fn selector_errors(events: &[TelemetryEvent]) -> Vec<SelectorErrorRow> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for event in events {
        if let TelemetryEvent::SelectorError(e) = event {
            *counts.entry(e.kind.as_str()).or_default() += 1;
        }
    }
    let mut rows: Vec<SelectorErrorRow> = counts
        .into_iter()
        .map(|(kind, count)| SelectorErrorRow {
            kind: kind.to_owned(),
            count,
        })
        .collect();
    rows.sort_by_key(|row| std::cmp::Reverse(row.count));
    rows
}

/// The nearest-rank percentile `percent` of ascending `sorted`: the smallest value with at
/// least `percent`% of the values at or below it.
fn percentile(sorted: &[f64], percent: usize) -> Option<f64> {
    let rank = (percent * sorted.len()).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

pub(super) fn sorted(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}
impl Summary {
    pub(super) fn new(dir: &Path, since: Option<SystemTime>, read: &Read) -> Self {
        let mut deliveries: BTreeMap<(&'static str, &'static str, &'static str), DeliveryRow> =
            BTreeMap::new();
        let mut discards: BTreeMap<&'static str, (DiscardReason, usize)> = BTreeMap::new();
        let (mut recalls, mut recall_events) = (0, 0);
        for event in &read.events {
            if let TelemetryEvent::Recall(_) = event {
                recall_events += 1;
            }
            if let TelemetryEvent::Delivery(d) = event {
                if d.phase == Phase::Refined {
                    recalls += 1;
                }
                let key = (
                    d.phase.as_str(),
                    d.delivery_point.as_str(),
                    d.strategy.as_str(),
                );
                deliveries
                    .entry(key)
                    .or_insert(DeliveryRow {
                        phase: d.phase,
                        strategy: d.strategy,
                        delivery_point: d.delivery_point,
                        count: 0,
                        share: 0.0,
                    })
                    .count += 1;
                if let Some(reason) = d.discard_reason {
                    discards.entry(reason.as_str()).or_insert((reason, 0)).1 += 1;
                }
            }
        }
        let share = |count: usize| {
            if recalls == 0 {
                0.0
            } else {
                count as f64 / recalls as f64
            }
        };
        let mut deliveries: Vec<DeliveryRow> = deliveries.into_values().collect();
        // Fast before refined, delivered before discarded, the initial point first.
        deliveries.sort_by_key(|row| {
            (
                row.phase != Phase::Fast,
                row.delivery_point == DeliveryPoint::Discarded,
                row.delivery_point != DeliveryPoint::Initial,
            )
        });
        let mut discard_reasons: Vec<DiscardRow> = discards
            .into_values()
            .map(|(reason, count)| DiscardRow { reason, count })
            .collect();
        discard_reasons.sort_by_key(|row| std::cmp::Reverse(row.count));
        let latency = latencies(&read.events)
            .into_iter()
            .map(|(name, values)| {
                let sorted = sorted(&values);
                LatencyRow {
                    name,
                    count: sorted.len(),
                    p50_ms: percentile(&sorted, 50),
                    p90_ms: percentile(&sorted, 90),
                    p99_ms: percentile(&sorted, 99),
                    within_budget: sorted.iter().filter(|&&v| v <= BUDGET_MS).count(),
                }
            })
            .collect();
        Self {
            directory: dir.to_path_buf(),
            directory_exists: read.exists,
            since: since.map(|t| humantime::format_rfc3339_seconds(t).to_string()),
            files_read: read.files,
            events: read.events.len(),
            recalls,
            recall_events,
            deliveries: deliveries
                .into_iter()
                .map(|row| DeliveryRow {
                    share: share(row.count),
                    ..row
                })
                .collect(),
            discard_reasons,
            selector_errors: selector_errors(&read.events),
            budget_ms: BUDGET_MS,
            latency,
            skipped: Skipped {
                unreadable_files: read.unreadable_files.clone(),
                malformed_lines: read.malformed_lines,
                first_malformed: read.listed_malformed.clone(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_rank_percentile_is_the_smallest_value_covering_the_share() {
        let values: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&values, 50), Some(5.0));
        assert_eq!(percentile(&values, 90), Some(9.0));
        assert_eq!(percentile(&values, 99), Some(10.0));
        assert_eq!(percentile(&[7.0], 50), Some(7.0));
        assert_eq!(percentile(&[], 50), None);
    }
}
