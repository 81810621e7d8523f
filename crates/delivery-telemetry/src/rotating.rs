//! A directory of timestamped JSON-lines files that several processes append to at once,
//! bounded in total: [`RotatingSink`].
//!
//! Layout: `<dir>/<YYYY-MM-DD>.<NNNN>.jsonl`, one series per UTC day, the sequence number
//! `NNNN` growing each time the newest file of the day reaches
//! [`RotationPolicy::max_file_bytes`]. Files are never renamed: a writer always appends (one
//! `write` per line, `O_APPEND`) to a file that keeps its name, so writers in other processes
//! never lose a line to a rename, and lines stay whole. After moving to a new file, a writer
//! deletes the oldest files beyond [`RotationPolicy::keep_files`]; a file is only that old once
//! `keep_files - 1` newer files exist, so a writer still appending to it would have to lag that
//! many rotations behind, which the size check before every write prevents in practice.
//!
//! On Unix the directory is private to the user (`0700`, tightened if it is wider) and each file
//! is created `0600`; a directory that is a symbolic link is refused, so no one can redirect the
//! events elsewhere. A sink that cannot write counts the event as dropped
//! ([`RotatingSink::dropped`]) and never fails its caller.
//!
//! Each line is a [`TimedEvent`]: the event's JSON with a `time` field (RFC 3339, UTC,
//! milliseconds) in front, so a reader can select events by time.

use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::num::{NonZeroU64, NonZeroUsize};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::event::TelemetryEvent;
use crate::sink::{DroppedEvents, TelemetrySink};

/// A file is left for the next one once it holds this many bytes (1 MiB).
pub const DEFAULT_MAX_FILE_BYTES: NonZeroU64 = NonZeroU64::new(1024 * 1024).unwrap();
/// How many files the directory keeps (so at most about 16 MiB of events, some 60,000 recalls).
pub const DEFAULT_KEEP_FILES: NonZeroUsize = NonZeroUsize::new(16).unwrap();
/// The extension of every telemetry file.
pub const TELEMETRY_FILE_EXTENSION: &str = "jsonl";

/// How large the files grow and how many of them are kept.
///
/// The directory holds at most `keep_files` files of about `max_file_bytes` each (a file can
/// overshoot by the lines written while several writers notice together that it is full).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RotationPolicy {
    /// A writer moves to a new file once the current one holds at least this many bytes.
    pub max_file_bytes: NonZeroU64,
    /// The newest files kept; older ones are deleted after a rotation.
    pub keep_files: NonZeroUsize,
}

impl Default for RotationPolicy {
    fn default() -> Self {
        Self {
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            keep_files: DEFAULT_KEEP_FILES,
        }
    }
}

/// Why the sink could not record an event.
#[derive(Debug, thiserror::Error)]
pub enum RotatingSinkError {
    /// The directory is a symbolic link; events are never written through one.
    #[error("telemetry directory {} is a symbolic link; refusing to write through it", path.display())]
    SymlinkedDirectory {
        /// The directory.
        path: PathBuf,
    },
    /// Something other than a directory has the directory's name.
    #[error("telemetry directory {} exists but is not a directory", path.display())]
    NotADirectory {
        /// The path.
        path: PathBuf,
    },
    /// The directory could not be created, inspected or made private.
    #[error("cannot prepare telemetry directory {}: {source}", path.display())]
    Directory {
        /// The directory.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: io::Error,
    },
    /// A telemetry file could not be opened or appended to; check free space and permissions.
    #[error("cannot append to telemetry file {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: io::Error,
    },
    /// The event could not be turned into JSON.
    #[error("cannot serialize telemetry event: {0}")]
    Serialize(#[source] serde_json::Error),
    /// The event's time is before 1970 or after 9999, which RFC 3339 cannot write (a clock
    /// set wildly wrong).
    #[error("telemetry event time {seconds_since_epoch} s from 1970 cannot be written")]
    TimeOutOfRange {
        /// Seconds from 1970, negative before it.
        seconds_since_epoch: i128,
    },
}

/// The last second RFC 3339 can write: 9999-12-31T23:59:59Z.
const LAST_WRITABLE_SECOND: u64 = 253_402_300_799;

/// `time`, unless RFC 3339 cannot write it.
fn writable(time: SystemTime) -> Result<SystemTime, RotatingSinkError> {
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(since) if since.as_secs() <= LAST_WRITABLE_SECOND => Ok(time),
        Ok(since) => Err(RotatingSinkError::TimeOutOfRange {
            seconds_since_epoch: i128::from(since.as_secs()),
        }),
        Err(before) => Err(RotatingSinkError::TimeOutOfRange {
            seconds_since_epoch: -i128::from(before.duration().as_secs()),
        }),
    }
}

/// One line of a telemetry file: when the event was recorded, and the event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimedEvent {
    /// When the sink wrote the event (RFC 3339 in JSON).
    #[serde(serialize_with = "write_time", deserialize_with = "read_time")]
    pub time: SystemTime,
    /// The event, its fields beside `time`.
    #[serde(flatten)]
    pub event: TelemetryEvent,
}

fn write_time<S: Serializer>(time: &SystemTime, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&humantime::format_rfc3339_millis(*time))
}

fn read_time<'de, D: Deserializer<'de>>(deserializer: D) -> Result<SystemTime, D::Error> {
    let text = String::deserialize(deserializer)?;
    humantime::parse_rfc3339_weak(&text).map_err(serde::de::Error::custom)
}

impl TimedEvent {
    /// Parses one line of a telemetry file.
    pub fn from_line(line: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(line)
    }
}

/// The file a writer is appending to.
#[derive(Debug)]
struct Current {
    day: String,
    sequence: u32,
    path: PathBuf,
    file: File,
}

/// Appends events to a bounded, rotated directory of JSON-lines files (see the module docs).
#[derive(Debug)]
pub struct RotatingSink {
    dir: PathBuf,
    policy: RotationPolicy,
    current: Mutex<Option<Current>>,
    dropped: Mutex<Option<DroppedEvents>>,
}

// A poisoned lock only means another thread panicked mid-emit; the state is still usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl RotatingSink {
    /// A sink writing under `dir`; nothing is touched until the first event.
    pub fn new(dir: impl Into<PathBuf>, policy: RotationPolicy) -> Self {
        Self {
            dir: dir.into(),
            policy,
            current: Mutex::new(None),
            dropped: Mutex::new(None),
        }
    }

    /// The directory this sink writes to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The events [`TelemetrySink::emit`] could not write so far, if any.
    pub fn dropped(&self) -> Option<DroppedEvents> {
        lock(&self.dropped).clone()
    }

    /// Appends `event`, stamped `time`, reporting failure instead of counting it.
    pub fn try_emit_at(
        &self,
        event: &TelemetryEvent,
        time: SystemTime,
    ) -> Result<(), RotatingSinkError> {
        let time = writable(time)?;
        let mut line = serde_json::to_vec(&TimedEventRef { time, event })
            .map_err(RotatingSinkError::Serialize)?;
        line.push(b'\n');
        let day = utc_day(time);
        let mut current = lock(&self.current);
        let open = match current.take() {
            Some(open) if !self.is_stale(&open, &day) => current.insert(open),
            previous => current.insert(self.advance(&day, previous)?),
        };
        // One `write` call per line on an `O_APPEND` file: the kernel places each line whole at
        // the end, whatever other processes append at the same time.
        open.file
            .write_all(&line)
            .map_err(|source| RotatingSinkError::Write {
                path: open.path.clone(),
                source,
            })
    }

    /// Whether `open` is of another day than `day`, or full (or gone from under us).
    fn is_stale(&self, open: &Current, day: &str) -> bool {
        open.day != day
            || !open
                .file
                .metadata()
                .is_ok_and(|m| m.len() < self.policy.max_file_bytes.get() && still_linked(&m))
    }

    /// The file to append to now: the newest of `day` unless it is full, else a new one; then
    /// the oldest files beyond the policy are deleted.
    fn advance(&self, day: &str, previous: Option<Current>) -> Result<Current, RotatingSinkError> {
        self.prepare_dir()?;
        let files = telemetry_files(&self.dir).map_err(|source| RotatingSinkError::Directory {
            path: self.dir.clone(),
            source,
        })?;
        let newest_today = files
            .iter()
            .filter(|f| f.day == day)
            .map(|f| f.sequence)
            .max();
        let mut sequence = newest_today.unwrap_or(0);
        // The previous file may be newer than what the listing saw (another writer may have
        // pruned it); never go back to an older sequence.
        if let Some(previous) = previous.filter(|p| p.day == day) {
            sequence = sequence.max(previous.sequence);
        }
        let mut current = self.open(day, sequence)?;
        if current
            .file
            .metadata()
            .is_ok_and(|m| m.len() >= self.policy.max_file_bytes.get())
        {
            current = self.open(day, sequence + 1)?;
        }
        self.prune();
        Ok(current)
    }

    /// Creates the directory private to the user, or checks and tightens an existing one.
    fn prepare_dir(&self) -> Result<(), RotatingSinkError> {
        let directory = |source| RotatingSinkError::Directory {
            path: self.dir.clone(),
            source,
        };
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match std::fs::symlink_metadata(&self.dir) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(RotatingSinkError::SymlinkedDirectory {
                    path: self.dir.clone(),
                });
            }
            Ok(meta) if !meta.is_dir() => {
                return Err(RotatingSinkError::NotADirectory {
                    path: self.dir.clone(),
                });
            }
            Ok(meta) => {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt as _;
                    if meta.permissions().mode() & 0o077 != 0 {
                        std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))
                            .map_err(directory)?;
                    }
                }
                #[cfg(not(unix))]
                let _ = meta;
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                builder.create(&self.dir).map_err(directory)?;
            }
            Err(e) => return Err(directory(e)),
        }
        Ok(())
    }

    fn open(&self, day: &str, sequence: u32) -> Result<Current, RotatingSinkError> {
        let path = self.dir.join(file_name(day, sequence));
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options
            .open(&path)
            .map_err(|source| RotatingSinkError::Write {
                path: path.clone(),
                source,
            })?;
        Ok(Current {
            day: day.to_owned(),
            sequence,
            path,
            file,
        })
    }

    /// Deletes the oldest files beyond the policy; best effort (another writer may be doing
    /// the same, and a file that cannot be deleted is retried on the next rotation).
    fn prune(&self) {
        let Ok(mut files) = telemetry_files(&self.dir) else {
            return;
        };
        let keep = self.policy.keep_files.get();
        if files.len() <= keep {
            return;
        }
        files.sort();
        let excess = files.len() - keep;
        for old in &files[..excess] {
            let _ = std::fs::remove_file(self.dir.join(file_name(&old.day, old.sequence)));
        }
    }
}

impl TelemetrySink for RotatingSink {
    fn emit(&self, event: &TelemetryEvent) {
        if let Err(error) = self.try_emit_at(event, SystemTime::now()) {
            lock(&self.dropped)
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
    }
}

/// [`TimedEvent`] borrowing its event, for writing.
#[derive(Serialize)]
struct TimedEventRef<'a> {
    #[serde(serialize_with = "write_time")]
    time: SystemTime,
    #[serde(flatten)]
    event: &'a TelemetryEvent,
}

/// A telemetry file's name, parsed: day first, so names sort by age.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct FileKey {
    day: String,
    sequence: u32,
}

fn file_name(day: &str, sequence: u32) -> String {
    format!("{day}.{sequence:04}.{TELEMETRY_FILE_EXTENSION}")
}

/// `YYYY-MM-DD.NNNN.jsonl` parsed, or `None` for any other name (left alone).
fn parse_file_name(name: &str) -> Option<FileKey> {
    let stem = name
        .strip_suffix(TELEMETRY_FILE_EXTENSION)?
        .strip_suffix('.')?;
    let (day, sequence) = stem.split_once('.')?;
    let well_formed_day = day.len() == 10
        && day.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    if !well_formed_day || sequence.is_empty() || !sequence.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(FileKey {
        day: day.to_owned(),
        sequence: sequence.parse().ok()?,
    })
}

/// The sink's own files in `dir`, in no particular order.
fn telemetry_files(dir: &Path) -> io::Result<Vec<FileKey>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if let Some(key) = entry.file_name().to_str().and_then(parse_file_name) {
            files.push(key);
        }
    }
    Ok(files)
}

/// Whether the file is still in its directory: another writer may have pruned it.
#[cfg(unix)]
fn still_linked(meta: &std::fs::Metadata) -> bool {
    std::os::unix::fs::MetadataExt::nlink(meta) > 0
}

#[cfg(not(unix))]
fn still_linked(_meta: &std::fs::Metadata) -> bool {
    true
}

/// The UTC calendar day of `time`, `YYYY-MM-DD`.
fn utc_day(time: SystemTime) -> String {
    let mut stamp = humantime::format_rfc3339_seconds(time).to_string();
    stamp.truncate(10);
    stamp
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::event::{DeliveryEvent, DeliveryPoint, Phase, RecallEvent, Strategy};

    fn recall(query_length: usize) -> TelemetryEvent {
        TelemetryEvent::Recall(RecallEvent {
            query_length,
            docs_scanned: 10,
            docs_selected: 2,
            strategy: Strategy::Heuristic,
            duration_ms: 12.5,
            scan_duration_ms: 3.0,
            fast_duration_ms: Some(4.0),
            selector_duration_ms: None,
        })
    }

    fn small(max_file_bytes: u64, keep_files: usize) -> RotationPolicy {
        RotationPolicy {
            max_file_bytes: NonZeroU64::new(max_file_bytes).unwrap(),
            keep_files: NonZeroUsize::new(keep_files).unwrap(),
        }
    }

    /// Every line of every file in `dir`, files in name order.
    fn all_lines(dir: &Path) -> Vec<String> {
        let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        names.sort();
        names
            .iter()
            .flat_map(|p| {
                std::fs::read_to_string(p)
                    .unwrap()
                    .lines()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn a_line_is_the_event_with_its_time_and_reads_back_as_it_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let sink = RotatingSink::new(dir.path().join("telemetry"), RotationPolicy::default());
        let time = humantime::parse_rfc3339("2026-12-04T10:11:12.345Z").unwrap();
        let event = TelemetryEvent::Delivery(DeliveryEvent {
            phase: Phase::Fast,
            delivery_point: DeliveryPoint::Initial,
            discard_reason: None,
            strategy: Strategy::Heuristic,
            docs_selected: 2,
            latency_ms: 8.25,
            initial_wait: Some(crate::event::InitialWait::Fast),
        });
        sink.try_emit_at(&event, time).unwrap();

        let lines = all_lines(&dir.path().join("telemetry"));
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with(
                r#"{"time":"2026-12-04T10:11:12.345Z","event":"memory.recall.delivery","#
            ),
            "{}",
            lines[0]
        );
        let read = TimedEvent::from_line(&lines[0]).unwrap();
        assert_eq!(read, TimedEvent { time, event });
    }

    #[test]
    fn each_utc_day_starts_its_own_file() {
        let dir = tempfile::tempdir().unwrap();
        let sink = RotatingSink::new(dir.path(), RotationPolicy::default());
        let day_one = humantime::parse_rfc3339("2026-12-04T23:59:59Z").unwrap();
        sink.try_emit_at(&recall(1), day_one).unwrap();
        sink.try_emit_at(&recall(2), day_one + Duration::from_secs(2))
            .unwrap();

        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["2026-12-04.0000.jsonl", "2026-12-05.0000.jsonl"]);
    }

    #[test]
    fn rotation_keeps_the_newest_files_and_bounds_the_total_size() {
        let dir = tempfile::tempdir().unwrap();
        let policy = small(1_000, 3);
        let sink = RotatingSink::new(dir.path(), policy);
        let time = humantime::parse_rfc3339("2026-12-04T10:00:00Z").unwrap();
        for n in 0..200 {
            sink.try_emit_at(&recall(n), time).unwrap();
        }
        let line_len = all_lines(dir.path()).iter().map(String::len).max().unwrap() + 1;

        let sizes: Vec<u64> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .collect();
        assert_eq!(sizes.len(), 3, "{sizes:?}");
        let bound = policy.max_file_bytes.get() + line_len as u64;
        assert!(sizes.iter().all(|&s| s <= bound), "{sizes:?} over {bound}");
        // The newest event survived and the oldest did not.
        let lines = all_lines(dir.path());
        let last = TimedEvent::from_line(lines.last().unwrap()).unwrap();
        assert_eq!(last.event, recall(199));
        assert!(
            !lines
                .iter()
                .any(|l| TimedEvent::from_line(l).unwrap().event == recall(0))
        );
    }

    #[test]
    fn files_that_are_not_the_sinks_own_are_never_deleted() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
        std::fs::write(dir.path().join("old.jsonl"), "mine").unwrap();
        let sink = RotatingSink::new(dir.path(), small(100, 1));
        let time = humantime::parse_rfc3339("2026-12-04T10:00:00Z").unwrap();
        for n in 0..20 {
            sink.try_emit_at(&recall(n), time).unwrap();
        }
        assert!(dir.path().join("notes.txt").is_file());
        assert!(dir.path().join("old.jsonl").is_file());
    }

    #[test]
    fn concurrent_writers_rotating_together_keep_every_line_whole_and_lose_none() {
        let dir = tempfile::tempdir().unwrap();
        // Several sinks on one directory stand for several processes: each has its own file
        // handles and its own idea of the current file. Files are kept generously so nothing
        // is pruned and every line can be counted.
        let policy = small(2_000, 10_000);
        let writers = 8;
        let per_writer = 250;
        let time = humantime::parse_rfc3339("2026-12-04T10:00:00Z").unwrap();
        std::thread::scope(|scope| {
            for writer in 0..writers {
                let sink = Arc::new(RotatingSink::new(dir.path(), policy));
                scope.spawn(move || {
                    for n in 0..per_writer {
                        sink.try_emit_at(&recall(writer * 10_000 + n), time)
                            .unwrap();
                    }
                });
            }
        });

        let lines = all_lines(dir.path());
        let mut seen: Vec<usize> = lines
            .iter()
            .map(|l| match TimedEvent::from_line(l) {
                Ok(TimedEvent {
                    event: TelemetryEvent::Recall(r),
                    ..
                }) => r.query_length,
                other => panic!("a torn or foreign line {l:?}: {other:?}"),
            })
            .collect();
        seen.sort_unstable();
        let mut expected: Vec<usize> = (0..writers)
            .flat_map(|w| (0..per_writer).map(move |n| w * 10_000 + n))
            .collect();
        expected.sort_unstable();
        assert_eq!(seen, expected);
        assert!(
            std::fs::read_dir(dir.path()).unwrap().count() > 1,
            "the writers never rotated"
        );
    }

    #[test]
    fn a_full_file_left_by_another_writer_is_not_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("2026-12-04.0003.jsonl"), vec![b'\n'; 500]).unwrap();
        let sink = RotatingSink::new(dir.path(), small(500, 10));
        let time = humantime::parse_rfc3339("2026-12-04T10:00:00Z").unwrap();
        sink.try_emit_at(&recall(1), time).unwrap();
        let written = std::fs::read_to_string(dir.path().join("2026-12-04.0004.jsonl")).unwrap();
        assert_eq!(written.lines().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn the_directory_and_files_are_private_to_the_user() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let telemetry = dir.path().join("home/telemetry");
        let sink = RotatingSink::new(&telemetry, RotationPolicy::default());
        sink.emit(&recall(1));
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&telemetry), 0o700);
        for entry in std::fs::read_dir(&telemetry).unwrap() {
            assert_eq!(mode(&entry.unwrap().path()), 0o600);
        }
        assert_eq!(sink.dropped(), None);
    }

    #[cfg(unix)]
    #[test]
    fn an_existing_directory_open_to_others_is_made_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        RotatingSink::new(dir.path(), RotationPolicy::default()).emit(&recall(1));
        let mode = std::fs::metadata(dir.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlinked_directory_is_refused_and_the_event_counted_as_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        let link = dir.path().join("telemetry");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        let sink = RotatingSink::new(&link, RotationPolicy::default());
        sink.emit(&recall(1));
        sink.emit(&recall(2));

        let dropped = sink.dropped().expect("the events were dropped");
        assert_eq!(dropped.count, 2);
        assert!(dropped.first_error.contains("symbolic link"), "{dropped:?}");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }

    #[test]
    fn a_directory_that_cannot_be_created_counts_drops_without_failing_the_caller() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain-file");
        std::fs::write(&file, "").unwrap();
        let sink = RotatingSink::new(&file, RotationPolicy::default());
        sink.emit(&recall(1));
        assert_eq!(sink.dropped().map(|d| d.count), Some(1));
    }

    #[test]
    fn a_time_rfc_3339_cannot_write_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let sink = RotatingSink::new(dir.path(), RotationPolicy::default());
        let before = SystemTime::UNIX_EPOCH - Duration::from_secs(1);
        let after = SystemTime::UNIX_EPOCH + Duration::from_secs(LAST_WRITABLE_SECOND + 1);
        for time in [before, after] {
            let error = sink.try_emit_at(&recall(1), time).unwrap_err();
            assert!(
                matches!(error, RotatingSinkError::TimeOutOfRange { .. }),
                "{error}"
            );
        }
    }

    #[test]
    fn only_the_sinks_file_names_are_recognised() {
        assert_eq!(
            parse_file_name("2026-12-04.0012.jsonl"),
            Some(FileKey {
                day: "2026-12-04".into(),
                sequence: 12
            })
        );
        for other in [
            "events.jsonl",
            "2026-12-04.jsonl",
            "2026-1a-04.0001.jsonl",
            "x.0001.jsonl",
        ] {
            assert_eq!(parse_file_name(other), None, "{other}");
        }
    }
}
