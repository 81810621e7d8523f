//! `memrecall stats --svg`: the latencies as cumulative curves against the budget, and the
//! delivery rates as bars.

use delivery_telemetry::{DeliveryPoint, Phase, TelemetryEvent};
use line_chart::{
    BUDGET_COLOUR, Bar, BarChart, Level, LineChart, PALETTE, Panel, Reference, Scale, Series,
};

use super::BUDGET_MS;
use super::summary::{Summary, latencies, sorted};

/// The lowest latency a logarithmic chart axis shows; smaller ones are drawn there.
const CHART_FLOOR_MS: f64 = 0.01;

/// The picture: each latency's cumulative curve against the budget, then the delivery rates.
pub(super) fn chart_svg(
    events: &[TelemetryEvent],
    summary: &Summary,
) -> Result<String, line_chart::ChartError> {
    let series: Vec<Series> =
        latencies(events)
            .into_iter()
            .zip(PALETTE)
            .filter(|((_, values), _)| !values.is_empty())
            .map(|((name, values), colour)| {
                let sorted = sorted(&values);
                let n = sorted.len() as f64;
                // The curve starts from 0% at the fastest value, so it reads as a distribution.
                let start = (sorted[0].max(CHART_FLOOR_MS), 0.0);
                Series {
                    label: name.to_owned(),
                    colour,
                    dashed: false,
                    points: std::iter::once(start)
                        .chain((1..).zip(&sorted).map(|(rank, &ms)| {
                            (ms.max(CHART_FLOOR_MS), f64::from(rank) * 100.0 / n)
                        }))
                        .collect(),
                }
            })
            .collect();
    let lines = LineChart {
        title: format!("Time to result, cumulative ({} recalls)", summary.recalls),
        x_title: "milliseconds since the recall started (log scale)".to_owned(),
        y_title: "% at or under".to_owned(),
        x_scale: Scale::Logarithmic,
        y_scale: Scale::Linear,
        series,
        references: vec![Reference {
            label: format!("budget: {BUDGET_MS} ms"),
            colour: BUDGET_COLOUR,
            at: Level::X(BUDGET_MS),
        }],
    };
    let mut bars: Vec<Bar> = summary
        .deliveries
        .iter()
        .map(|row| Bar {
            label: format!(
                "{} · {} · {}",
                row.phase.as_str(),
                row.strategy.as_str(),
                row.delivery_point.as_str()
            ),
            value: row.share,
            note: format!("{:.1}% ({})", row.share * 100.0, row.count),
            colour: if row.delivery_point == DeliveryPoint::Discarded {
                BUDGET_COLOUR
            } else if row.phase == Phase::Fast {
                PALETTE[0]
            } else {
                PALETTE[2]
            },
        })
        .collect();
    let recalls = summary.recalls.max(1) as f64;
    bars.extend(summary.discard_reasons.iter().map(|row| Bar {
        label: format!("discarded: {}", row.reason.as_str()),
        value: row.count as f64 / recalls,
        note: format!("{:.1}% ({})", row.count as f64 * 100.0 / recalls, row.count),
        colour: PALETTE[1],
    }));
    let bar_chart = BarChart {
        title: format!("Delivery per recall ({} recalls)", summary.recalls),
        full_scale: 1.0,
        bars,
    };
    let mut panels = Vec::new();
    if !lines.series.is_empty() {
        panels.push(Panel::Lines(&lines));
    }
    if !bar_chart.bars.is_empty() {
        panels.push(Panel::Bars(&bar_chart));
    }
    line_chart::stack_svg(&panels)
}
