//! Where the product's own lines and the libraries' `tracing` events go: a log file bounded by
//! size for the hook and the server (which have no terminal; the file is a
//! [`recall_server::log::Log`]), standard error for the commands a user runs. `MEMRECALL_LOG` chooses what is recorded: a level (`error`, `warn`, `info`,
//! `debug`, `trace`, `off`) or `target=level` directives separated by commas
//! (`memory_watch=debug,warn`). The default is `warn` in the log files and `error` on standard
//! error, where the commands say their own warnings (a telemetry file that could not be written
//! is one line of the command's, not a warning per event).

use std::sync::{Mutex, PoisonError};

use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

use recall_server::log::Log;

/// The environment variable that chooses what is logged.
pub(crate) const LOG_ENV: &str = "MEMRECALL_LOG";

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
