//! What the commands print: a stable JSON form and a readable text form of the same facts, and
//! a failure with its exit code ([`Failure`]).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use delivery_telemetry::TelemetryEvent;
use memory_scan::{MemoryRoots, ScanReport, ScannedDocument};
use recall_facade::{Delivery, Lines, RecallState, printable};
use serde::Serialize;

mod failure;
mod rank;

pub(crate) use failure::{Failure, emit};
pub use rank::{RankRow, ScanOutput, token_verdicts};

/// Whether the modelled turn calls a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TurnKind {
    /// No tool call: only the initial point can deliver.
    ToolFree,
    /// A tool call whose result arrives once the recall settles.
    ToolUsing,
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1_000_000.0).round() / 1_000.0
}

/// A path in JSON: a string, or the array of its bytes when it is not UTF-8 (see
/// [`memory_scan::serialize_path`]).
#[derive(Debug, Clone)]
pub struct JsonPath(PathBuf);

impl Serialize for JsonPath {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        memory_scan::serialize_path(&self.0, serializer)
    }
}

impl JsonPath {
    /// The path as one printable line of text (lossy where it is not UTF-8).
    fn text(&self) -> String {
        one_line(&self.0.display().to_string())
    }
}

/// `text` safe to print on one line (see [`printable`]): control and bidirectional characters
/// become visible escapes. Every text output and log line that shows something memrecall did not
/// write itself (a path, a file's line, a peer's message) goes through it.
pub(crate) fn one_line(text: &str) -> String {
    printable(text, Lines::Escaped).into_owned()
}

/// A path as one printable line (lossy where it is not UTF-8; see [`one_line`]).
pub(crate) fn escaped_path(path: &std::path::Path) -> String {
    one_line(&path.display().to_string())
}

/// One document as printed.
#[derive(Debug, Serialize)]
pub struct DocumentOut {
    path: JsonPath,
    relative_path: JsonPath,
    scope: memory_scan::Scope,
    #[serde(rename = "type")]
    memory_type: lexical_score::MemoryType,
    title: String,
}

impl DocumentOut {
    /// `Title — relative/path.md (type, scope scope)`.
    fn describe(&self) -> String {
        format!(
            "{} — {} ({}, {} scope)",
            one_line(&self.title),
            self.relative_path.text(),
            enum_word(Some(&self.memory_type)),
            enum_word(Some(&self.scope))
        )
    }

    fn new(doc: &ScannedDocument) -> Self {
        Self {
            path: JsonPath(doc.path().to_path_buf()),
            relative_path: JsonPath(doc.relative_path().to_path_buf()),
            scope: doc.scope(),
            memory_type: doc.memory_type(),
            title: doc.title().to_owned(),
        }
    }
}

/// What one delivery point produced.
#[derive(Debug, Serialize)]
pub struct PointOut {
    /// `delivered`, `pending`, `discarded` or `idle`.
    outcome: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    phase: Option<delivery_telemetry::Phase>,
    #[serde(skip_serializing_if = "Option::is_none")]
    strategy: Option<delivery_telemetry::Strategy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    discard_reason: Option<delivery_telemetry::DiscardReason>,
    documents: Vec<DocumentOut>,
    /// Weak matches named in one line each, not delivered.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    lines: Vec<DocumentOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt: Option<String>,
}

impl PointOut {
    fn new(delivery: &Delivery) -> Self {
        let mut out = Self {
            outcome: "idle",
            phase: None,
            strategy: None,
            discard_reason: None,
            documents: Vec::new(),
            lines: Vec::new(),
            latency_ms: None,
            prompt: None,
        };
        match delivery {
            Delivery::Delivered(memory) => {
                out.outcome = "delivered";
                out.phase = Some(memory.phase);
                out.strategy = Some(memory.strategy);
                out.documents = memory
                    .documents
                    .iter()
                    .map(|d| DocumentOut::new(d))
                    .collect();
                out.lines = memory.lines.iter().map(|d| DocumentOut::new(d)).collect();
                out.latency_ms = Some(ms(memory.latency));
                out.prompt = Some(memory.prompt.clone());
            }
            Delivery::Pending => out.outcome = "pending",
            Delivery::Discarded(reason) => {
                out.outcome = "discarded";
                out.discard_reason = Some(*reason);
            }
            Delivery::Idle => {}
        }
        out
    }

    fn text(&self, name: &str, show_prompt: bool) -> String {
        let mut s = String::new();
        match self.outcome {
            "delivered" => {
                let _ = writeln!(
                    s,
                    "{name}: delivered {} document(s) · phase {} · strategy {} · after {:.1} ms",
                    self.documents.len(),
                    enum_word(self.phase.as_ref()),
                    enum_word(self.strategy.as_ref()),
                    self.latency_ms.unwrap_or_default()
                );
                for (i, d) in self.documents.iter().enumerate() {
                    let _ = writeln!(s, "  {}. {}", i + 1, d.describe());
                }
                if !self.lines.is_empty() {
                    let _ = writeln!(s, "  named in one line each (weak matches, not delivered):");
                    for d in &self.lines {
                        let _ = writeln!(s, "  - {}", d.describe());
                    }
                }
                if show_prompt && let Some(prompt) = &self.prompt {
                    let _ = writeln!(s, "\n{}\n", prompt.trim_end());
                }
            }
            "pending" => {
                let _ = writeln!(s, "{name}: nothing yet (recall still running)");
            }
            "discarded" => {
                let _ = writeln!(
                    s,
                    "{name}: nothing delivered (discarded: {})",
                    enum_word(self.discard_reason.as_ref())
                );
            }
            _ => {
                let _ = writeln!(s, "{name}: nothing (no recall pending)");
            }
        }
        s
    }
}

pub(crate) fn enum_word<T: Serialize>(value: Option<&T>) -> String {
    value
        .and_then(|v| serde_json::to_value(v).ok())
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "-".to_owned())
}

/// Milliseconds from the recall call to each milestone.
#[derive(Debug, Serialize)]
pub struct TimingsOut {
    scan: Option<f64>,
    fast_published: Option<f64>,
    selector: Option<f64>,
    settled: Option<f64>,
}

/// The `recall` command's result.
#[derive(Debug, Serialize)]
pub struct RecallOutput {
    query: String,
    turn: TurnKind,
    /// The delivery design that ran: `fast-path` or `gated`.
    delivery_design: &'static str,
    roots: RootsOut,
    documents_scanned: Option<usize>,
    scan: Option<ScanReport>,
    catalog_used: bool,
    strategy: Option<delivery_telemetry::Strategy>,
    selector_error: Option<String>,
    /// Whether that error is only the turn ending first (the selector note says so instead).
    #[serde(skip)]
    selector_cancelled: bool,
    /// What the selector did besides failing: skipped, cut short by the turn's end, a stand-in.
    #[serde(skip_serializing_if = "Option::is_none")]
    selector_note: Option<String>,
    scan_error: Option<String>,
    initial: PointOut,
    tool_result: Option<PointOut>,
    end_of_turn: PointOut,
    timings_ms: TimingsOut,
    telemetry: Vec<TelemetryEvent>,
}

#[derive(Debug, Serialize)]
struct RootsOut {
    project: Option<JsonPath>,
    user: Option<JsonPath>,
}

impl RootsOut {
    fn new(roots: &MemoryRoots) -> Self {
        Self {
            project: roots.project.clone().map(JsonPath),
            user: roots.user.clone().map(JsonPath),
        }
    }
}

impl RecallOutput {
    /// Gathers one turn's facts.
    #[allow(clippy::too_many_arguments)] // a flat record of one turn; a builder would only add ceremony
    pub fn build(
        query: &str,
        turn: TurnKind,
        design: recall_facade::DeliveryDesign,
        roots: &MemoryRoots,
        initial: &Delivery,
        tool_result: Option<&Delivery>,
        end: &Delivery,
        state: Option<&RecallState>,
        telemetry: &[TelemetryEvent],
    ) -> Self {
        let settled = state.and_then(|s| s.settled.clone());
        let fast = state.and_then(|s| s.fast.clone());
        // Published before the recall settles, so known even when the turn ended first.
        let scan = state.and_then(|s| s.scanned.clone());
        Self {
            query: query.to_owned(),
            turn,
            delivery_design: design.as_str(),
            roots: RootsOut::new(roots),
            documents_scanned: scan.as_ref().map(|s| s.docs_scanned),
            scan: scan.as_ref().map(|s| (*s.report).clone()),
            catalog_used: scan.as_ref().is_some_and(|s| s.report.catalog_used()),
            strategy: settled.as_ref().map(|s| s.strategy),
            selector_error: settled
                .as_ref()
                .and_then(|s| s.selector_error.as_ref().map(ToString::to_string)),
            selector_cancelled: settled.as_ref().is_some_and(|s| {
                matches!(s.selector_error, Some(selector::SelectorError::Cancelled))
            }),
            selector_note: None,
            scan_error: settled
                .as_ref()
                .and_then(|s| s.scan_error.as_ref().map(ToString::to_string)),
            initial: PointOut::new(initial),
            tool_result: tool_result.map(PointOut::new),
            end_of_turn: PointOut::new(end),
            timings_ms: TimingsOut {
                scan: scan.as_ref().map(|s| ms(s.duration)),
                fast_published: fast.map(|f| ms(f.published_after)),
                selector: settled.as_ref().and_then(|s| s.timings.selector.map(ms)),
                settled: settled.as_ref().map(|s| ms(s.timings.settled)),
            },
            telemetry: telemetry.to_vec(),
        }
    }

    /// The same output with a note on what the selector did (see [`RecallOutput::tail_text`]).
    #[must_use]
    pub fn with_selector_note(mut self, note: Option<String>) -> Self {
        self.selector_note = note;
        self
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> Result<String, Failure> {
        serde_json::to_string_pretty(self).map_err(|e| Failure::from(anyhow::Error::from(e)))
    }

    /// The text known once the initial point is consumed: the query, the roots, the scan when it
    /// is done, and what the initial point delivered.
    pub fn head_text(&self, show_prompt: bool) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "query: {}", one_line(&self.query));
        // Only a default root can be missing here: a root named on the command line must exist.
        let root = |r: &Option<JsonPath>| match r {
            None => "(none)".to_owned(),
            Some(path) if path.0.is_dir() => path.text(),
            Some(path) => format!("{} (does not exist yet)", path.text()),
        };
        let _ = writeln!(
            s,
            "roots: project {} · user {}",
            root(&self.roots.project),
            root(&self.roots.user)
        );
        s.push_str(&self.scan_text());
        s.push('\n');
        s.push_str(&self.initial.text("initial point", show_prompt));
        s
    }

    /// Whether the scan was done when this output was gathered.
    pub fn has_scan(&self) -> bool {
        self.scan.is_some()
    }

    /// The scan's counts and warnings, once it is done.
    fn scan_text(&self) -> String {
        let mut s = String::new();
        if let Some(scan) = &self.scan {
            let _ = writeln!(
                s,
                "scanned {} document(s), {} file(s) skipped, {} file(s) known from the catalog",
                self.documents_scanned.unwrap_or_default(),
                scan.skipped.len(),
                scan.from_catalog
            );
            for warning in &scan.warnings {
                let _ = writeln!(s, "warning: {}", one_line(warning));
            }
            for skip in &scan.skipped {
                if let Some(limit) = skip.reason.limit_text() {
                    let path = one_line(&skip.path.display().to_string());
                    let _ = writeln!(s, "warning: {path}: {limit}");
                }
            }
        }
        s
    }

    /// The rest of the turn after [`RecallOutput::head_text`]; the scan is told here when it was
    /// not done yet then (`scan_shown` false).
    pub fn tail_text(&self, show_prompt: bool, scan_shown: bool) -> String {
        let mut s = String::new();
        if !scan_shown {
            s.push_str(&self.scan_text());
        }
        if let Some(error) = &self.scan_error {
            let _ = writeln!(s, "error: {}", one_line(error));
        }

        match &self.tool_result {
            Some(point) => s.push_str(&point.text("tool-result point", show_prompt)),
            None => s.push_str("tool-result point: not reached (tool-free turn)\n"),
        }
        if self.end_of_turn.outcome == "discarded" {
            s.push_str(&self.end_of_turn.text("end of turn", false));
        }
        if let Some(error) = self
            .selector_error
            .as_ref()
            .filter(|_| !self.selector_cancelled)
        {
            let _ = writeln!(
                s,
                "note: the selector failed ({}); the lexical fallback was used",
                one_line(error)
            );
        }
        if let Some(note) = &self.selector_note {
            let _ = writeln!(s, "note: {}", one_line(note));
        }
        let t = &self.timings_ms;
        let f = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.1} ms"));
        let _ = writeln!(
            s,
            "\nstrategy: {} · timings: scan {}, fast result {}, selector {}, settled {}",
            enum_word(self.strategy.as_ref()),
            f(t.scan),
            f(t.fast_published),
            f(t.selector),
            f(t.settled)
        );
        s
    }
}
