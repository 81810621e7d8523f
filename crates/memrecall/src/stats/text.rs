//! The text `memrecall stats` prints (its JSON is the summary serialised as is).

use delivery_telemetry::{DeliveryPoint, Phase};

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
        let _ = writeln!(out, "{}", self.totals_line());
        let _ = writeln!(out, "{}", self.selector_errors_line());
        let rows = |out: &mut String, phase: Phase| {
            let _ = writeln!(
                out,
                "  {:<8} {:<10} {:<12} {:>6} {:>7}",
                "phase", "strategy", "point", "count", "share"
            );
            for row in self.deliveries.iter().filter(|row| row.phase == phase) {
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
        };
        let _ = writeln!(
            out,
            "\nhow each recall ended (one row each; shares of the {} recalls, summing to 100%)",
            self.recalls
        );
        rows(&mut out, Phase::Refined);
        let _ = writeln!(
            out,
            "\nfast results delivered before their recall ended (shares of the {} recalls)",
            self.recalls
        );
        rows(&mut out, Phase::Fast);
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

    /// The totals anyone can check: every recall ends once, delivered at one point or discarded;
    /// fast results come on top.
    fn totals_line(&self) -> String {
        let ended = |point: DeliveryPoint| -> usize {
            self.deliveries
                .iter()
                .filter(|row| row.phase == Phase::Refined && row.delivery_point == point)
                .map(|row| row.count)
                .sum()
        };
        let fast: usize = self
            .deliveries
            .iter()
            .filter(|row| row.phase == Phase::Fast)
            .map(|row| row.count)
            .sum();
        let unsettled = self.recalls.saturating_sub(self.recall_events);
        let unsettled = if unsettled == 0 {
            String::new()
        } else {
            format!("; {unsettled} ended before settling, so without a memory.recall event")
        };
        format!(
            "recalls: {} = {} delivered at the initial point + {} at the tool-result point + {} discarded; besides, {fast} fast result(s) delivered at the initial point{unsettled}",
            self.recalls,
            ended(DeliveryPoint::Initial),
            ended(DeliveryPoint::ToolResult),
            ended(DeliveryPoint::Discarded),
        )
    }

    /// The selector failures recorded, by kind.
    fn selector_errors_line(&self) -> String {
        if self.selector_errors.is_empty() {
            return "selector errors: none".to_owned();
        }
        let total: usize = self.selector_errors.iter().map(|row| row.count).sum();
        let kinds: Vec<String> = self
            .selector_errors
            .iter()
            .map(|row| format!("{} {}", crate::output::one_line(&row.kind), row.count))
            .collect();
        format!("selector errors: {total} ({})", kinds.join(", "))
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
