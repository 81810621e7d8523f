//! Reading the telemetry directory back: its events, and the files and lines skipped.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use delivery_telemetry::{TELEMETRY_FILE_EXTENSION, TelemetryEvent, TimedEvent};
use serde::Serialize;

/// The most malformed lines listed one by one; the rest are counted.
const LISTED_PROBLEMS: usize = 10;

/// A line or file that could not be read.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Problem {
    /// `file` or `file:line`.
    pub(super) place: String,
    /// Why.
    pub(super) error: String,
}

/// Everything read from the directory.
#[derive(Debug, Default)]
pub(super) struct Read {
    pub(super) exists: bool,
    pub(super) files: usize,
    pub(super) events: Vec<TelemetryEvent>,
    pub(super) unreadable_files: Vec<Problem>,
    pub(super) malformed_lines: usize,
    pub(super) listed_malformed: Vec<Problem>,
}

/// Reads every `*.jsonl` file of `dir`, in name order, keeping the events since `since`.
pub(super) fn read_dir(dir: &Path, since: Option<SystemTime>) -> Read {
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
        // Never blocks on a FIFO nor reads a device or an oversized file in a file's place.
        let bytes = match memory_scan::foreign::read(
            &path,
            memory_scan::foreign::ByteLimit::TELEMETRY,
            memory_scan::foreign::Links::Follow,
        ) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_fifo_named_like_a_telemetry_file_is_reported_unreadable_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        crate::test_support::make_fifo(&dir.path().join("2026-12-05.0000.jsonl"));
        let read = read_dir(dir.path(), None);
        assert_eq!(read.files, 0);
        assert_eq!(read.unreadable_files.len(), 1);
        assert!(
            read.unreadable_files[0].error.contains("named pipe"),
            "{:?}",
            read.unreadable_files
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
