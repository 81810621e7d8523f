//! Selector failures and configuration errors the server meets: each is said once per kind in
//! its own log and, through the answer's notices, in the hook's log, until `config.toml` changes
//! (a new configuration generation); the last selector failure is kept for `status`.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::SystemTime;

use delivery_telemetry::{SelectorErrorEvent, TelemetryEvent, TelemetrySink as _};
use recall_facade::MemoryRecall;
use recall_facade::SettledRecall;

use super::sessions::Entry;
use super::{Server, lock, log};
use crate::protocol::SelectorFailure;

#[derive(Debug, Default)]
pub(super) struct Problems {
    /// The selector failure kinds already said in this generation.
    told: HashSet<String>,
    /// This generation's configuration error, until a hook has been told.
    config_error: Option<String>,
    /// Said with a failure: the configured key variable is not set (see [`unset_key_note`]).
    key_note: Option<String>,
    /// The last selector failure, for `status`.
    pub(super) last_selector_error: Option<SelectorFailure>,
}

impl Problems {
    /// `config.toml` changed: every problem may be said again; `key_note` is said with each
    /// selector failure of the new configuration.
    pub(super) fn new_generation(&mut self, key_note: Option<String>) {
        self.told.clear();
        self.config_error = None;
        self.key_note = key_note;
    }

    /// The selector got a key from a hook's environment: a failure may be said again, and no
    /// longer with the note that no key was sent.
    pub(super) fn key_arrived(&mut self) {
        self.told.clear();
        self.key_note = None;
    }

    /// The configuration of this generation cannot be used, for the next hook to log.
    pub(super) fn config_error(&mut self, line: String) {
        self.config_error = Some(line);
    }

    /// Records a selector failure; the line to log when its kind is new in this generation.
    fn selector_failed(&mut self, failure: &SelectorErrorEvent) -> Option<String> {
        self.last_selector_error = Some(SelectorFailure {
            at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            kind: failure.kind.clone(),
            message: failure.message.clone(),
        });
        let key_note = self
            .key_note
            .as_ref()
            .map(|note| format!("; {note}"))
            .unwrap_or_default();
        self.told.insert(failure.kind.clone()).then(|| {
            format!(
                "the selector failed ({}): {}{key_note}; the lexical result stands in (said once per kind until config.toml changes)",
                failure.kind, failure.message
            )
        })
    }
}

/// A word for the logs when the HTTP selector's `api_key_env` names a variable this process
/// does not have: then no key is sent, which a failure may well be about.
pub fn unset_key_note(choice: &recall_facade::SelectorChoice) -> Option<String> {
    let recall_facade::SelectorChoice::Http(http) = choice else {
        return None;
    };
    std::env::var_os(&http.api_key_env)
        .is_none_or(|value| value.is_empty())
        .then(|| {
            format!(
                "api_key_env names {}, which is not set, so no API key was sent",
                http.api_key_env
            )
        })
}

/// The selector failure a settled recall carries, as its telemetry event; `None` when the
/// selector answered, was not asked, or was cancelled by the turn's end (not a failure).
pub fn selector_failure(settled: &SettledRecall) -> Option<SelectorErrorEvent> {
    let error = settled.selector_error.as_ref()?;
    if matches!(error, selector::SelectorError::Cancelled) {
        return None;
    }
    Some(SelectorErrorEvent {
        kind: error.kind(),
        message: recall_facade::printable(&error.to_string(), recall_facade::Lines::Escaped)
            .into_owned(),
    })
}

impl Server {
    /// What the hook should log after this event: the configuration error of this generation
    /// (once), and the session's latest recall's selector failure when its kind is new in this
    /// generation. Each failed recall is recorded once, in telemetry and for `status`.
    pub(super) fn notices(&self, entry: &mut Entry) -> Vec<String> {
        let mut notices = Vec::new();
        if let Some(line) = lock(&self.problems).config_error.take() {
            notices.push(line);
        }
        let settled = entry
            .recall
            .as_ref()
            .and_then(MemoryRecall::latest_recall)
            .and_then(|state| state.settled);
        let Some(settled) = settled else {
            return notices;
        };
        if entry
            .reported
            .as_ref()
            .is_some_and(|seen| Arc::ptr_eq(seen, &settled))
        {
            return notices;
        }
        entry.reported = Some(Arc::clone(&settled));
        let Some(failure) = selector_failure(&settled) else {
            return notices;
        };
        self.sink
            .emit(&TelemetryEvent::SelectorError(failure.clone()));
        if let Some(line) = lock(&self.problems).selector_failed(&failure) {
            log(&line);
            notices.push(line);
        }
        notices
    }
}
