//! Where events go: the [`TelemetrySink`] trait and its implementations.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::error::TelemetryError;
use crate::event::{DeliveryEvent, RecallEvent, SelectorErrorEvent, TelemetryEvent};

/// Receives telemetry events. Emitting never fails from the caller's point of view: a sink that
/// cannot record an event reports the problem itself (telemetry must not break recall).
///
/// `emit` runs on recall's own path: the session's calls, a dropped session, and the recall task
/// while it holds the lock on the recall's state (`memory.recall` is emitted in the same step
/// that publishes the settled result, so no reader sees one without the other). An
/// implementation must therefore return promptly and must not call back into a recall session
/// or wait on anything that does; a sink with slow I/O should hand events to a thread of its own.
pub trait TelemetrySink: Send + Sync + fmt::Debug {
    /// Records one event.
    fn emit(&self, event: &TelemetryEvent);
}

impl<S: TelemetrySink + ?Sized> TelemetrySink for Arc<S> {
    fn emit(&self, event: &TelemetryEvent) {
        (**self).emit(event);
    }
}

impl<S: TelemetrySink + ?Sized> TelemetrySink for &S {
    fn emit(&self, event: &TelemetryEvent) {
        (**self).emit(event);
    }
}

/// Wraps a recall event and hands it to `sink`.
pub fn emit_recall(sink: &dyn TelemetrySink, event: RecallEvent) {
    sink.emit(&TelemetryEvent::Recall(event));
}

// A poisoned lock only means another thread panicked mid-emit; the data (a Vec or a file handle)
// is still usable, and telemetry must never turn that panic into a second one.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Counts `event` as dropped in `dropped` (keeping the first failure's sentence) and says so on
/// `tracing`: what a file sink does with an event it could not write.
pub(crate) fn record_drop(
    dropped: &Mutex<Option<DroppedEvents>>,
    event: &TelemetryEvent,
    error: &dyn std::fmt::Display,
) {
    lock(dropped)
        .get_or_insert_with(|| DroppedEvents {
            count: 0,
            first_error: error.to_string(),
        })
        .count += 1;
    tracing::warn!(
        target: "memory_recall",
        { event.name = event.name(), %error },
        "telemetry event dropped"
    );
}

/// Drops every event; for callers that want no telemetry.
#[derive(Debug, Clone, Copy, Default)]
pub struct NullSink;

impl TelemetrySink for NullSink {
    fn emit(&self, _event: &TelemetryEvent) {}
}

/// Emits each event as a `tracing` event at INFO level with target `memory_recall`.
///
/// The event name is both the message and the `event.name` field; every event field becomes a
/// structured field of the same name (enums as their wire strings, absent optionals omitted).
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingSink;

impl TelemetrySink for TracingSink {
    fn emit(&self, event: &TelemetryEvent) {
        match event {
            TelemetryEvent::Recall(e) => tracing::info!(
                target: "memory_recall",
                {
                event.name = TelemetryEvent::RECALL,
                query_length = e.query_length,
                docs_scanned = e.docs_scanned,
                docs_selected = e.docs_selected,
                docs_trimmed = e.docs_trimmed,
                strategy = e.strategy.as_str(),
                duration_ms = e.duration_ms,
                scan_duration_ms = e.scan_duration_ms,
                fast_duration_ms = e.fast_duration_ms,
                selector_duration_ms = e.selector_duration_ms,
                },
                "memory.recall"
            ),
            TelemetryEvent::Delivery(e) => tracing::info!(
                target: "memory_recall",
                {
                event.name = TelemetryEvent::DELIVERY,
                phase = e.phase.as_str(),
                delivery_point = e.delivery_point.as_str(),
                discard_reason = e.discard_reason.map(crate::event::DiscardReason::as_str),
                strategy = e.strategy.as_str(),
                docs_selected = e.docs_selected,
                latency_ms = e.latency_ms,
                },
                "memory.recall.delivery"
            ),
            TelemetryEvent::SelectorError(e) => tracing::info!(
                target: "memory_recall",
                {
                event.name = TelemetryEvent::SELECTOR_ERROR,
                kind = e.kind.as_str(),
                message = e.message.as_str(),
                note = e.note.as_deref(),
                },
                "memory.selector.error"
            ),
        }
    }
}

/// Keeps every event in memory, in emission order; for tests and evaluations.
#[derive(Debug, Default)]
pub struct RecordingSink {
    events: Mutex<Vec<TelemetryEvent>>,
}

impl RecordingSink {
    /// An empty recording.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every event so far, in emission order.
    pub fn events(&self) -> Vec<TelemetryEvent> {
        lock(&self.events).clone()
    }

    /// The `memory.recall.delivery` events so far, in emission order.
    pub fn deliveries(&self) -> Vec<DeliveryEvent> {
        lock(&self.events)
            .iter()
            .filter_map(|event| match event {
                TelemetryEvent::Delivery(d) => Some(d.clone()),
                TelemetryEvent::Recall(_) | TelemetryEvent::SelectorError(_) => None,
            })
            .collect()
    }

    /// The `memory.recall` events so far, in emission order.
    pub fn recalls(&self) -> Vec<RecallEvent> {
        lock(&self.events)
            .iter()
            .filter_map(|event| match event {
                TelemetryEvent::Recall(r) => Some(r.clone()),
                TelemetryEvent::Delivery(_) | TelemetryEvent::SelectorError(_) => None,
            })
            .collect()
    }

    /// The `memory.selector.error` events so far, in emission order.
    pub fn selector_errors(&self) -> Vec<SelectorErrorEvent> {
        lock(&self.events)
            .iter()
            .filter_map(|event| match event {
                TelemetryEvent::SelectorError(e) => Some(e.clone()),
                TelemetryEvent::Recall(_) | TelemetryEvent::Delivery(_) => None,
            })
            .collect()
    }

    /// Forgets every recorded event.
    pub fn clear(&self) {
        lock(&self.events).clear();
    }
}

impl TelemetrySink for RecordingSink {
    fn emit(&self, event: &TelemetryEvent) {
        lock(&self.events).push(event.clone());
    }
}

/// Appends each event as one JSON object per line to a file.
///
/// Each line is written with a single `write_all` on a file opened for appending, so lines from
/// several processes sharing the file do not interleave mid-line on local file systems, and a
/// crash loses at most the line being written.
#[derive(Debug)]
pub struct JsonLinesSink {
    path: PathBuf,
    file: Mutex<File>,
    dropped: Mutex<Option<DroppedEvents>>,
}

/// Events a sink could not record, and why the first of them failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedEvents {
    /// How many events were lost.
    pub count: usize,
    /// The first failure, as a sentence.
    pub first_error: String,
}

impl JsonLinesSink {
    /// Opens `path` for appending, creating the file (not its parent directories) if needed.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        Ok(Self {
            path,
            file: Mutex::new(file),
            dropped: Mutex::new(None),
        })
    }

    /// The events [`TelemetrySink::emit`] could not write so far, if any: a caller that owns
    /// the sink checks this before it exits, so lost telemetry is never silent.
    pub fn dropped(&self) -> Option<DroppedEvents> {
        lock(&self.dropped).clone()
    }

    /// The file this sink appends to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event, reporting failure instead of logging it.
    pub fn try_emit(&self, event: &TelemetryEvent) -> Result<(), TelemetryError> {
        let mut line = serde_json::to_vec(event).map_err(TelemetryError::Serialize)?;
        line.push(b'\n');
        let mut file = lock(&self.file);
        file.write_all(&line)
            .and_then(|()| file.flush())
            .map_err(|source| TelemetryError::Write {
                path: self.path.clone(),
                source,
            })
    }
}

impl TelemetrySink for JsonLinesSink {
    fn emit(&self, event: &TelemetryEvent) {
        if let Err(error) = self.try_emit(event) {
            record_drop(&self.dropped, event, &error);
        }
    }
}

/// Reads a JSON-lines telemetry file back into events; blank lines are skipped.
pub fn read_json_lines(path: impl AsRef<Path>) -> Result<Vec<TelemetryEvent>, TelemetryError> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|source| TelemetryError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut events = Vec::new();
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|source| TelemetryError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let event = serde_json::from_str(&line).map_err(|source| TelemetryError::Parse {
            path: path.to_path_buf(),
            line: index + 1,
            source,
        })?;
        events.push(event);
    }
    Ok(events)
}

/// Fan-out to several sinks (e.g. jsonl + recording), in order.
#[derive(Debug, Clone, Default)]
pub struct FanOutSink(pub Vec<Arc<dyn TelemetrySink>>);

impl TelemetrySink for FanOutSink {
    fn emit(&self, event: &TelemetryEvent) {
        for sink in &self.0 {
            sink.emit(event);
        }
    }
}
