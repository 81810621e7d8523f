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
use std::sync::Mutex;
use std::time::SystemTime;

use crate::event::TelemetryEvent;
use crate::sink::{DroppedEvents, TelemetrySink, lock, record_drop};

mod files;
mod timed;

use files::{file_name, still_linked, telemetry_files, utc_day};
pub use timed::TimedEvent;
use timed::{TimedEventRef, writable};

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
        // The file is this user's own: a symlink in its place is refused rather than written
        // through (`O_NOFOLLOW`), and a FIFO fails at once rather than block (`O_NONBLOCK`).
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
            options
                .mode(0o600)
                .custom_flags(i32::try_from(flags.bits()).unwrap_or(0));
        }
        let failed = |source| RotatingSinkError::Write {
            path: path.clone(),
            source,
        };
        let file = options.open(&path).map_err(failed)?;
        if !file.metadata().map_err(failed)?.is_file() {
            return Err(failed(io::Error::other("not a regular file")));
        }
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
            record_drop(&self.dropped, event, &error);
        }
    }
}

#[cfg(test)]
mod tests;
