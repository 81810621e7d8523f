//! The telemetry history under `$MEMRECALL_HOME/telemetry/` and `memrecall stats`, which reads
//! it back.
//!
//! Every recall the binary runs (`memrecall recall`, `memrecall hook`, and the server) records its
//! events through [`telemetry_sink`] into a [`RotatingSink`](delivery_telemetry::RotatingSink): bounded, rotated JSON-lines files
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

mod chart;
mod read;
mod sink;
mod summary;
mod text;

use std::path::PathBuf;
use std::time::SystemTime;

use clap::Args;

pub(crate) use self::sink::{TelemetrySinks, telemetry_sink};
use crate::output::{Failure, emit};

/// The directory under the memrecall home that holds the telemetry history.
pub const TELEMETRY_DIR: &str = "telemetry";
/// The first-prompt ceiling in milliseconds, the latencies' reference.
pub const BUDGET_MS: f64 = recall_facade::FIRST_PROMPT_CEILING.as_millis() as f64;

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
        None => agent_hooks::Environment::from_process()
            .memrecall_home()
            .ok_or_else(|| {
                Failure::from(anyhow::anyhow!(
                    "cannot find the memrecall home: set MEMRECALL_HOME or HOME, or pass --dir"
                ))
            })?
            .join(TELEMETRY_DIR),
    };
    let read = read::read_dir(&dir, since);
    let summary = summary::Summary::new(&dir, since, &read);
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
            let svg = chart::chart_svg(&read.events, &summary)
                .map_err(|e| Failure::from(anyhow::anyhow!("cannot draw the chart: {e}")))?;
            std::fs::write(path, svg).map_err(|e| {
                Failure::from(anyhow::anyhow!("cannot write {}: {e}", path.display()))
            })?;
            let line = format!("wrote the chart to {}", path.display());
            // Standard output holds only the JSON when JSON was asked for.
            if args.json {
                eprintln!("memrecall: {line}");
            } else {
                emit(&format!("\n{line}\n"))?;
            }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
