//! Where the product's own lines and the libraries' `tracing` events go: a log file bounded by
//! size for the hook and the server (which have no terminal), standard error for the commands a
//! user runs. `MEMRECALL_LOG` chooses what is recorded: a level (`error`, `warn`, `info`,
//! `debug`, `trace`, `off`) or `target=level` directives separated by commas
//! (`memory_watch=debug,warn`). The default is `warn` in the log files and `error` on standard
//! error, where the commands say their own warnings (a telemetry file that could not be written
//! is one line of the command's, not a warning per event).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::SystemTime;

use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use agent_hooks::files::{private_dir, private_file};

/// The environment variable that chooses what is logged.
pub(crate) const LOG_ENV: &str = "MEMRECALL_LOG";

/// The log is moved to `hook.log.1` once it grows past this.
const MAX_LOG_BYTES: u64 = 512 * 1024;

/// A log (`….log`) kept under [`MAX_LOG_BYTES`]: a log over it is moved to `….log.1` before the
/// next line, so at most two logs of that size exist. The file stays open from one line to the
/// next, so a process that has run out of descriptors still logs.
#[derive(Debug)]
pub(crate) struct Log {
    path: PathBuf,
    file: Option<std::fs::File>,
}

impl Log {
    pub(crate) const fn new(path: PathBuf) -> Self {
        Self { path, file: None }
    }

    /// Appends one timestamped line.
    pub(crate) fn append(&mut self, line: &str) -> std::io::Result<()> {
        let size = match &self.file {
            Some(file) => file.metadata()?.len(),
            None => std::fs::symlink_metadata(&self.path)
                .ok()
                .filter(std::fs::Metadata::is_file)
                .map_or(0, |m| m.len()),
        };
        if size > MAX_LOG_BYTES {
            self.file = None;
            match std::fs::rename(&self.path, rotated(&self.path)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        let file = if let Some(file) = &mut self.file {
            file
        } else {
            if let Some(dir) = self.path.parent() {
                private_dir(dir)?;
            }
            let opened = private_file(std::fs::OpenOptions::new().create(true).append(true))
                .open(&self.path)?;
            self.file.insert(opened)
        };
        let line = line.replace('\n', " ");
        let now = humantime::format_rfc3339_seconds(SystemTime::now());
        // One write per line, so concurrent hooks do not interleave within a line.
        file.write_all(format!("{now} {line}\n").as_bytes())
    }
}

fn rotated(path: &Path) -> PathBuf {
    path.with_extension("log.1")
}

/// What `MEMRECALL_LOG`'s value records, or why it cannot be read. Unset or empty: `default`
/// and above.
fn filter(value: Option<&str>, default: LevelFilter) -> Result<Targets, String> {
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(Targets::new().with_default(default)),
        Some(value) => value.parse::<Targets>().map_err(|e| {
            format!(
                "{LOG_ENV}={value:?} is not a level or target=level list ({e}); logging at {default}"
            )
        }),
    }
}

/// Sends the libraries' events to standard error (for the commands a user runs).
pub(crate) fn to_stderr() {
    install(std::io::stderr, LevelFilter::ERROR);
}

/// Sends the libraries' events to `log`, one timestamped line each (for the hook and the
/// server).
pub(crate) fn to_file(log: &'static Mutex<Log>) {
    install(FileWriter(log), LevelFilter::WARN);
}

fn install<W>(writer: W, default: LevelFilter)
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let value = std::env::var(LOG_ENV).ok();
    let (targets, problem) = match filter(value.as_deref(), default) {
        Ok(targets) => (targets, None),
        Err(problem) => (Targets::new().with_default(default), Some(problem)),
    };
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(writer)
        .without_time()
        .with_ansi(false);
    // A subscriber set already (a second call in one process) keeps the first.
    if tracing_subscriber::registry()
        .with(layer.with_filter(targets))
        .try_init()
        .is_ok()
        && let Some(problem) = problem
    {
        tracing::error!("{problem}");
    }
}

/// A [`MakeWriter`] appending each event to a [`Log`] as one line.
#[derive(Clone, Copy)]
struct FileWriter(&'static Mutex<Log>);

impl<'a> MakeWriter<'a> for FileWriter {
    type Writer = EventLine;

    fn make_writer(&'a self) -> EventLine {
        EventLine {
            log: self.0,
            text: Vec::new(),
        }
    }
}

/// One event's text, appended to the log when the formatter is done with it.
struct EventLine {
    log: &'static Mutex<Log>,
    text: Vec<u8>,
}

impl std::io::Write for EventLine {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.text.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for EventLine {
    fn drop(&mut self) {
        let text = String::from_utf8_lossy(&self.text);
        let text = text.trim_end();
        if !text.is_empty() {
            // Failing to log is silent: there is nowhere else to say it.
            let _ = self
                .log
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .append(text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_over_its_bound_moves_aside_and_a_new_one_starts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hook.log");
        std::fs::write(
            &path,
            vec![b'x'; usize::try_from(MAX_LOG_BYTES).unwrap() + 1],
        )
        .unwrap();
        Log::new(path.clone()).append("fresh").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.ends_with(" fresh\n") && text.lines().count() == 1,
            "{text}"
        );
        assert!(dir.path().join("hook.log.1").is_file());
    }

    #[test]
    fn a_log_kept_open_moves_aside_once_it_grows_past_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.log");
        let mut log = Log::new(path.clone());
        let long = "x".repeat(64 * 1024);
        while !dir.path().join("serve.log.1").exists() {
            log.append(&long).unwrap();
            assert!(std::fs::metadata(&path).unwrap().len() <= MAX_LOG_BYTES + 65 * 1024);
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_log_that_is_a_symlink_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "keep\n").unwrap();
        let logs = dir.path().join("logs");
        std::fs::create_dir(&logs).unwrap();
        std::os::unix::fs::symlink(&target, logs.join("hook.log")).unwrap();
        assert!(Log::new(logs.join("hook.log")).append("a line").is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    }

    #[test]
    fn an_unset_log_variable_records_the_default_level_and_not_below() {
        let targets = filter(None, LevelFilter::WARN).unwrap();
        assert!(targets.would_enable("memory_watch", &tracing::Level::WARN));
        assert!(!targets.would_enable("memory_watch", &tracing::Level::INFO));
    }

    #[test]
    fn a_level_in_the_log_variable_records_that_level_from_every_library() {
        let targets = filter(Some("debug"), LevelFilter::WARN).unwrap();
        assert!(targets.would_enable("recall_lifecycle::recall", &tracing::Level::DEBUG));
        assert!(!targets.would_enable("recall_lifecycle::recall", &tracing::Level::TRACE));
    }

    #[test]
    fn target_directives_in_the_log_variable_choose_per_library() {
        let targets = filter(Some("memory_watch=debug,warn"), LevelFilter::WARN).unwrap();
        assert!(targets.would_enable("memory_watch", &tracing::Level::DEBUG));
        assert!(!targets.would_enable("memory_scan", &tracing::Level::DEBUG));
    }

    #[test]
    fn an_unreadable_log_variable_is_said_with_its_value() {
        let problem = filter(Some("loud=very"), LevelFilter::WARN).unwrap_err();
        assert!(problem.contains("MEMRECALL_LOG=\"loud=very\""), "{problem}");
    }

    #[test]
    fn an_event_becomes_one_line_of_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let log: &'static Mutex<Log> =
            Box::leak(Box::new(Mutex::new(Log::new(dir.path().join("serve.log")))));
        let subscriber = tracing_subscriber::registry().with(
            tracing_subscriber::fmt::layer()
                .with_writer(FileWriter(log))
                .without_time()
                .with_ansi(false),
        );
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(root = "/m", "cannot watch memory roots");
        });
        let text = std::fs::read_to_string(dir.path().join("serve.log")).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.contains("WARN") && text.contains("cannot watch memory roots root=\"/m\""),
            "{text}"
        );
    }
}
