//! The telemetry history under `$MEMRECALL_HOME/telemetry/` and `memrecall stats`, which reads
//! it back.
//!
//! Every recall the binary runs (`memrecall recall`, `memrecall hook`, and the server) records its
//! events through [`telemetry_sink`] into a [`RotatingSink`]: bounded, rotated JSON-lines files
//! private to the user. `[telemetry] record = false` in `config.toml` turns that off.
//!
//! `memrecall stats` reads every `*.jsonl` file there (a malformed line or an unreadable file is
//! skipped and reported, never fatal) and summarises the events since a moment:
//! - recalls counted: each recall has exactly one terminal (`refined`) delivery event;
//! - delivery rate by phase × strategy × delivery point, as a share of those recalls;
//! - discard reasons with their counts;
//! - latency percentiles (nearest rank) of the fast result, of the recall settling with the
//!   heuristic or with the model's answer, and of what was delivered, each with how many met
//!   the 100 ms initial ceiling.
//!
//! `--svg FILE` draws the latencies as cumulative curves with the budget line, and the delivery
//! rates as bars.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use clap::Args;
use delivery_telemetry::{
    DeliveryPoint, DiscardReason, FanOutSink, Phase, RotatingSink, RotationPolicy, Strategy,
    TELEMETRY_FILE_EXTENSION, TelemetryEvent, TelemetrySink, TimedEvent,
};
use line_chart::{
    BUDGET_COLOUR, Bar, BarChart, Level, LineChart, PALETTE, Panel, Reference, Scale, Series,
};
use serde::Serialize;

use crate::commands::{Failure, emit};
use crate::config::Config;

/// The directory under the memrecall home that holds the telemetry history.
pub const TELEMETRY_DIR: &str = "telemetry";
/// The initial point's ceiling, in milliseconds: the budget the latencies are held against.
pub const BUDGET_MS: f64 = 100.0;
/// The most malformed lines listed one by one; the rest are counted.
const LISTED_PROBLEMS: usize = 10;
/// The lowest latency a logarithmic chart axis shows; smaller ones are drawn there.
const CHART_FLOOR_MS: f64 = 0.01;

/// A recall's telemetry: the sinks it emits to, and the history among them (if recorded), whose
/// dropped events its owner reports before exiting.
#[derive(Debug, Clone)]
pub(crate) struct TelemetrySinks {
    /// Everything, fanned out.
    pub sink: Arc<dyn TelemetrySink>,
    /// The history under `$MEMRECALL_HOME/telemetry`, unless turned off or there is no home.
    pub history: Option<Arc<RotatingSink>>,
}

/// The telemetry of the recalls this process runs: the history under `home` (unless
/// `[telemetry] record = false` in its `config.toml`) and every sink of `also`. Never fails: a
/// history that cannot be written counts its dropped events.
pub(crate) fn telemetry_sink(
    home: Option<&Path>,
    also: Vec<Arc<dyn TelemetrySink>>,
) -> TelemetrySinks {
    // A configuration that cannot be read is reported by whoever reads it for the selector;
    // the history goes on as by default.
    let history = home
        .filter(|home| Config::load(home).map_or(true, |c| c.telemetry.record))
        .map(|home| {
            Arc::new(RotatingSink::new(
                home.join(TELEMETRY_DIR),
                RotationPolicy::default(),
            ))
        });
    let mut sinks = also;
    if let Some(history) = &history {
        sinks.push(Arc::clone(history) as Arc<dyn TelemetrySink>);
    }
    TelemetrySinks {
        sink: Arc::new(FanOutSink(sinks)),
        history,
    }
}

/// `memrecall stats`.
#[derive(Debug, Args)]
pub(crate) struct StatsArgs {
    /// Only events recorded since then: a duration back from now (7d, 12h, 30min) or a UTC
    /// date or time (2026-12-01, 2026-12-01T08:00:00Z) [default: every event kept].
    #[arg(long, value_name = "D")]
    since: Option<String>,
    /// Print machine-readable JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Also draw the latencies and the delivery rates as an SVG picture into FILE.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// The telemetry directory [default: $MEMRECALL_HOME/telemetry].
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Runs `memrecall stats`.
pub(crate) fn run(args: &StatsArgs) -> Result<(), Failure> {
    let since = args
        .since
        .as_deref()
        .map(|text| parse_since(text, SystemTime::now()))
        .transpose()?;
    let dir = match &args.dir {
        Some(dir) => dir.clone(),
        None => recall_facade::memory_home()
            .map_err(|e| Failure::from(anyhow::anyhow!("{e}")))?
            .join(TELEMETRY_DIR),
    };
    let read = read_dir(&dir, since);
    let summary = Summary::new(&dir, since, &read);
    if args.json {
        let json = serde_json::to_string_pretty(&summary).map_err(anyhow::Error::from)?;
        emit(&format!("{json}\n"))?;
    } else if summary.recalls == 0 && read.events.is_empty() {
        emit(&format!("{}\n", summary.nothing_line()))?;
        emit(&summary.skipped_text())?;
    } else {
        emit(&summary.to_text())?;
    }
    if let Some(path) = &args.svg {
        if read.events.is_empty() {
            eprintln!(
                "memrecall: no events to draw; {} not written",
                path.display()
            );
        } else {
            let svg = chart_svg(&read.events, &summary)
                .map_err(|e| Failure::from(anyhow::anyhow!("cannot draw the chart: {e}")))?;
            std::fs::write(path, svg).map_err(|e| {
                Failure::from(anyhow::anyhow!("cannot write {}: {e}", path.display()))
            })?;
        }
    }
    Ok(())
}

/// `--since`: a duration back from `now`, a date (midnight UTC) or an RFC 3339 time.
fn parse_since(text: &str, now: SystemTime) -> Result<SystemTime, Failure> {
    let text = text.trim();
    if let Ok(back) = humantime::parse_duration(text) {
        // Nothing is recorded before 1970, and times before it cannot be written in RFC 3339.
        return Ok(now
            .checked_sub(back)
            .filter(|since| *since >= SystemTime::UNIX_EPOCH)
            .unwrap_or(SystemTime::UNIX_EPOCH));
    }
    let time = if text.len() == 10 {
        format!("{text}T00:00:00Z")
    } else {
        text.to_owned()
    };
    humantime::parse_rfc3339_weak(&time).map_err(|_| Failure {
        code: 2,
        message: format!(
            "--since takes a duration like 7d or 12h, or a UTC date like 2026-12-01, not {text:?}"
        ),
    })
}

/// A line or file that could not be read.
#[derive(Debug, Clone, Serialize)]
struct Problem {
    /// `file` or `file:line`.
    place: String,
    /// Why.
    error: String,
}

/// Everything read from the directory.
#[derive(Debug, Default)]
struct Read {
    exists: bool,
    files: usize,
    events: Vec<TelemetryEvent>,
    unreadable_files: Vec<Problem>,
    malformed_lines: usize,
    listed_malformed: Vec<Problem>,
}

/// Reads every `*.jsonl` file of `dir`, in name order, keeping the events since `since`.
fn read_dir(dir: &Path, since: Option<SystemTime>) -> Read {
    let mut read = Read::default();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return read,
        Err(e) => {
            read.exists = true;
            read.unreadable_files.push(Problem {
                place: dir.display().to_string(),
                error: e.to_string(),
            });
            return read;
        }
    };
    read.exists = true;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.extension()
                .is_some_and(|ext| ext == TELEMETRY_FILE_EXTENSION)
        })
        .collect();
    paths.sort();
    for path in paths {
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) => {
                read.unreadable_files.push(Problem {
                    place: path.display().to_string(),
                    error: e.to_string(),
                });
                continue;
            }
        };
        read.files += 1;
        for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let parsed = std::str::from_utf8(line)
                .map_err(|e| e.to_string())
                .and_then(|text| TimedEvent::from_line(text).map_err(|e| e.to_string()));
            match parsed {
                Ok(timed) => {
                    if since.is_none_or(|since| timed.time >= since) {
                        read.events.push(timed.event);
                    }
                }
                Err(error) => {
                    read.malformed_lines += 1;
                    if read.listed_malformed.len() < LISTED_PROBLEMS {
                        read.listed_malformed.push(Problem {
                            place: format!("{}:{}", path.display(), index + 1),
                            error,
                        });
                    }
                }
            }
        }
    }
    read
}

/// One phase × strategy × delivery point.
#[derive(Debug, Clone, Serialize)]
struct DeliveryRow {
    phase: Phase,
    strategy: Strategy,
    delivery_point: DeliveryPoint,
    count: usize,
    /// `count` over the recalls counted.
    share: f64,
}

/// One discard reason.
#[derive(Debug, Clone, Serialize)]
struct DiscardRow {
    reason: DiscardReason,
    count: usize,
}

/// Percentiles of one latency.
#[derive(Debug, Clone, Serialize)]
struct LatencyRow {
    /// What is timed.
    name: &'static str,
    count: usize,
    p50_ms: Option<f64>,
    p90_ms: Option<f64>,
    p99_ms: Option<f64>,
    /// How many took at most [`BUDGET_MS`].
    within_budget: usize,
}

/// What was skipped while reading.
#[derive(Debug, Clone, Serialize)]
struct Skipped {
    unreadable_files: Vec<Problem>,
    malformed_lines: usize,
    /// The first malformed lines, at most ten.
    first_malformed: Vec<Problem>,
}

/// What `memrecall stats` prints.
#[derive(Debug, Clone, Serialize)]
struct Summary {
    directory: PathBuf,
    /// Whether the directory exists at all.
    directory_exists: bool,
    /// RFC 3339, when `--since` was given.
    since: Option<String>,
    files_read: usize,
    events: usize,
    /// Recalls counted: terminal delivery events, one per recall.
    recalls: usize,
    /// `memory.recall` events (none for a recall aborted by its caller).
    recall_events: usize,
    deliveries: Vec<DeliveryRow>,
    discard_reasons: Vec<DiscardRow>,
    budget_ms: f64,
    latency: Vec<LatencyRow>,
    skipped: Skipped,
}

/// The latencies summarised and drawn, by name: the fast result's publication, the recall
/// settling with the heuristic result or with the model's answer, and every delivery.
fn latencies(events: &[TelemetryEvent]) -> [(&'static str, Vec<f64>); 4] {
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

/// The nearest-rank percentile `percent` of ascending `sorted`: the smallest value with at
/// least `percent`% of the values at or below it.
fn percentile(sorted: &[f64], percent: usize) -> Option<f64> {
    let rank = (percent * sorted.len()).div_ceil(100).max(1);
    sorted.get(rank - 1).copied()
}

fn sorted(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

impl Summary {
    fn new(dir: &Path, since: Option<SystemTime>, read: &Read) -> Self {
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
            budget_ms: BUDGET_MS,
            latency,
            skipped: Skipped {
                unreadable_files: read.unreadable_files.clone(),
                malformed_lines: read.malformed_lines,
                first_malformed: read.listed_malformed.clone(),
            },
        }
    }

    /// The one line said when there is nothing to summarise.
    fn nothing_line(&self) -> String {
        let dir = self.directory.display();
        match &self.since {
            _ if !self.directory_exists => format!(
                "no telemetry recorded yet: {dir} does not exist (recalls record there unless config.toml says [telemetry] record = false)"
            ),
            Some(since) if self.files_read > 0 => {
                format!("no telemetry events since {since} in {dir}")
            }
            _ => format!("no telemetry events in {dir}"),
        }
    }

    fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let since = self
            .since
            .as_ref()
            .map(|s| format!(" since {s}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "telemetry: {} ({} file(s), {} event(s){since})",
            self.directory.display(),
            self.files_read,
            self.events
        );
        let _ = writeln!(
            out,
            "recalls: {} ({} memory.recall event(s))",
            self.recalls, self.recall_events
        );
        let _ = writeln!(out, "\ndelivery per recall");
        let _ = writeln!(
            out,
            "  {:<8} {:<10} {:<12} {:>6} {:>7}",
            "phase", "strategy", "point", "count", "share"
        );
        for row in &self.deliveries {
            let _ = writeln!(
                out,
                "  {:<8} {:<10} {:<12} {:>6} {:>6.1}%",
                row.phase.as_str(),
                row.strategy.as_str(),
                row.delivery_point.as_str(),
                row.count,
                row.share * 100.0
            );
        }
        let _ = writeln!(out, "\ndiscard reasons");
        if self.discard_reasons.is_empty() {
            let _ = writeln!(out, "  none");
        }
        for row in &self.discard_reasons {
            let _ = writeln!(out, "  {:<24} {:>6}", row.reason.as_str(), row.count);
        }
        let _ = writeln!(out, "\nlatency (ms since the recall started)");
        let _ = writeln!(
            out,
            "  {:<22} {:>6} {:>9} {:>9} {:>9}   {}",
            "",
            "count",
            "p50",
            "p90",
            "p99",
            format_args!("<= {BUDGET_MS} ms")
        );
        let ms = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.1}"));
        for row in &self.latency {
            let within = if row.count == 0 {
                "-".to_owned()
            } else {
                format!(
                    "{} ({:.1}%)",
                    row.within_budget,
                    row.within_budget as f64 * 100.0 / row.count as f64
                )
            };
            let _ = writeln!(
                out,
                "  {:<22} {:>6} {:>9} {:>9} {:>9}   {within}",
                row.name,
                row.count,
                ms(row.p50_ms),
                ms(row.p90_ms),
                ms(row.p99_ms),
            );
        }
        out.push_str(&self.skipped_text());
        out
    }

    /// The skipped files and lines, or nothing when none were.
    fn skipped_text(&self) -> String {
        use std::fmt::Write as _;
        let skipped = &self.skipped;
        if skipped.malformed_lines == 0 && skipped.unreadable_files.is_empty() {
            return String::new();
        }
        let mut out = format!(
            "\nskipped: {} malformed line(s), {} unreadable file(s)\n",
            skipped.malformed_lines,
            skipped.unreadable_files.len()
        );
        for problem in skipped
            .unreadable_files
            .iter()
            .chain(&skipped.first_malformed)
        {
            let _ = writeln!(out, "  {}: {}", problem.place, problem.error);
        }
        let unlisted = skipped.malformed_lines - skipped.first_malformed.len();
        if unlisted > 0 {
            let _ = writeln!(out, "  and {unlisted} more malformed line(s)");
        }
        out
    }
}

/// The picture: each latency's cumulative curve against the budget, then the delivery rates.
fn chart_svg(
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

    #[test]
    fn since_takes_a_duration_back_a_date_or_a_time() {
        let now = humantime::parse_rfc3339("2026-12-10T12:00:00Z").unwrap();
        let at = |text| parse_since(text, now).ok();
        assert_eq!(
            at("7d"),
            Some(humantime::parse_rfc3339("2026-12-03T12:00:00Z").unwrap())
        );
        assert_eq!(
            at("2026-12-01"),
            Some(humantime::parse_rfc3339("2026-12-01T00:00:00Z").unwrap())
        );
        assert_eq!(
            at("2026-12-01T08:30:00Z"),
            Some(humantime::parse_rfc3339("2026-12-01T08:30:00Z").unwrap())
        );
        assert!(at("last tuesday").is_none());
        assert_eq!(at("1000000d"), Some(SystemTime::UNIX_EPOCH));
    }

    #[test]
    fn without_a_home_config_the_history_is_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let sinks = telemetry_sink(Some(dir.path()), Vec::new());
        assert_eq!(
            sinks.history.as_ref().map(|h| h.dir().to_path_buf()),
            Some(dir.path().join(TELEMETRY_DIR))
        );
    }

    #[test]
    fn the_config_can_turn_the_history_off() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            "[telemetry]\nrecord = false\n",
        )
        .unwrap();
        assert!(
            telemetry_sink(Some(dir.path()), Vec::new())
                .history
                .is_none()
        );
    }

    #[test]
    fn an_event_older_than_since_is_left_out() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.jsonl"),
            concat!(
                r#"{"time":"2026-11-01T00:00:00Z","event":"memory.recall","query_length":1,"docs_scanned":1,"docs_selected":1,"strategy":"heuristic","duration_ms":5.0,"scan_duration_ms":1.0,"fast_duration_ms":null,"selector_duration_ms":null}"#,
                "\n",
                r#"{"time":"2026-12-05T00:00:00Z","event":"memory.recall","query_length":2,"docs_scanned":1,"docs_selected":1,"strategy":"heuristic","duration_ms":5.0,"scan_duration_ms":1.0,"fast_duration_ms":null,"selector_duration_ms":null}"#,
                "\n"
            ),
        )
        .unwrap();
        let since = humantime::parse_rfc3339("2026-12-01T00:00:00Z").unwrap();
        let read = read_dir(dir.path(), Some(since));
        assert_eq!(read.events.len(), 1);
        assert!(
            matches!(&read.events[0], TelemetryEvent::Recall(r) if r.query_length == 2),
            "{:?}",
            read.events
        );
    }
}
