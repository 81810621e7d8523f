//! The scan-latency report as a table and as a chart.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use line_chart::{BUDGET_COLOUR, Level, LineChart, PALETTE, Reference, Scale, Series};

use super::LatencyReport;

/// The readable table.
pub fn table(report: &LatencyReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "scan latency, {} build: recall call → fast result (budget {} ms)",
        report.profile, report.budget_ms
    );
    let _ = writeln!(
        out,
        "{:>8}  {:<8}  {:>5}  {:>10}  {:>10}  {:>12}  {:>9}  {:>14}  {:>13}",
        "topics",
        "mode",
        "runs",
        "median ms",
        "worst ms",
        "budget share",
        "floor ms",
        "new process ms",
        "peak RSS MiB"
    );
    let or_dash = |value: Option<f64>, decimals: usize| {
        value.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"))
    };
    for row in &report.results {
        let _ = writeln!(
            out,
            "{:>8}  {:<8}  {:>5}  {:>10.2}  {:>10.2}  {:>11.1}%  {:>9}  {:>14}  {:>13}",
            row.topics,
            row.mode,
            row.runs_ms.len(),
            row.median_ms,
            row.worst_ms,
            row.median_ms / report.budget_ms * 100.0,
            or_dash(row.floor_ms, 2),
            or_dash(row.new_process_ms, 2),
            or_dash(row.peak_rss_mib, 0),
        );
    }
    out
}

/// Writes the chart of [`chart`] to `target/scan-latency.svg`.
pub(super) fn write_chart(report: &LatencyReport) -> Result<PathBuf> {
    let path = crate::workspace_root()?.join("target/scan-latency.svg");
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::write(&path, chart(report).to_svg()?)?;
    Ok(path)
}

/// Median latency against topics on a logarithmic axis: per mode, in the order the modes were
/// measured, a solid line of the medians and a dashed line of the floors in the same colour; the
/// budget as a dashed line across.
pub(super) fn chart(report: &LatencyReport) -> LineChart {
    let mut modes: Vec<&str> = Vec::new();
    for row in &report.results {
        if !modes.contains(&row.mode) {
            modes.push(row.mode);
        }
    }
    let mut series = Vec::new();
    for (mode, colour) in modes.into_iter().zip(PALETTE.into_iter().cycle()) {
        let rows = || report.results.iter().filter(move |row| row.mode == mode);
        series.push(Series {
            label: format!("{mode}: median"),
            colour,
            dashed: false,
            points: rows()
                .map(|row| (row.topics as f64, row.median_ms))
                .collect(),
        });
        let floors: Vec<(f64, f64)> = rows()
            .filter_map(|row| Some((row.topics as f64, row.floor_ms?)))
            .collect();
        if !floors.is_empty() {
            series.push(Series {
                label: format!("{mode}: floor"),
                colour,
                dashed: true,
                points: floors,
            });
        }
    }
    LineChart {
        title: format!("Recall call to fast result, {} build", report.profile),
        x_title: "topics in the tree (log scale)".to_owned(),
        y_title: "milliseconds, median of runs (log scale)".to_owned(),
        x_scale: Scale::Logarithmic,
        y_scale: Scale::Logarithmic,
        series,
        references: vec![Reference {
            label: format!("budget: {} ms", report.budget_ms),
            colour: BUDGET_COLOUR,
            at: Level::Y(report.budget_ms),
        }],
    }
}
