//! The text `memrecall stats` prints (its JSON is the summary serialised as is).

use super::BUDGET_MS;
use super::summary::Summary;

impl Summary {
    /// The one line said when there is nothing to summarise.
    pub(super) fn nothing_line(&self) -> String {
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

    pub(super) fn to_text(&self) -> String {
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
    pub(super) fn skipped_text(&self) -> String {
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
            // A bad line may hold anything, terminal escapes included: shown escaped.
            let _ = writeln!(
                out,
                "  {}: {}",
                crate::output::one_line(&problem.place),
                crate::output::one_line(&problem.error)
            );
        }
        let unlisted = skipped.malformed_lines - skipped.first_malformed.len();
        if unlisted > 0 {
            let _ = writeln!(out, "  and {unlisted} more malformed line(s)");
        }
        out
    }
}
