//! Selector failures and configuration errors the server meets: each is said once per kind in
//! its own log and, through the answer's notices, in the hook's log, until `config.toml` changes
//! (a new configuration generation); the last selector failure is kept for `status`.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::SystemTime;

use delivery_telemetry::SelectorErrorEvent;
use recall_facade::MemoryRecall;

use super::sessions::Entry;
use super::{Server, lock, log};
use crate::protocol::SelectorFailure;

#[derive(Debug, Default)]
pub(super) struct Problems {
    /// The selector failure kinds already said in this generation.
    told: HashSet<String>,
    /// This generation's configuration error, until a hook has been told.
    config_error: Option<String>,
    /// The last selector failure, for `status`.
    pub(super) last_selector_error: Option<SelectorFailure>,
}

impl Problems {
    /// `config.toml` changed: every problem may be said again.
    pub(super) fn new_generation(&mut self) {
        self.told.clear();
        self.config_error = None;
    }

    /// The selector got a key from a hook's environment: a failure may be said again (its note
    /// no longer says that no key was sent).
    pub(super) fn key_arrived(&mut self) {
        self.told.clear();
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
        self.told.insert(failure.kind.clone()).then(|| {
            format!(
                "the selector failed ({}): {}{}; the lexical result stands in (said once per kind until config.toml changes)",
                failure.kind,
                failure.message,
                note_of(failure)
            )
        })
    }
}

/// The selector's note on a failure, ready to follow its message in a log line.
pub(crate) fn note_of(failure: &SelectorErrorEvent) -> String {
    failure
        .note
        .as_ref()
        .map(|note| format!("; {note}"))
        .unwrap_or_default()
}

impl Server {
    /// What the hook should log after this event: the configuration error of this generation
    /// (once), and the session's latest recall's selector failure when its kind is new in this
    /// generation. Each failed recall is recorded once for `status` (its lifecycle recorded its
    /// telemetry event when it settled).
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
        let Some(failure) = &settled.selector_failure else {
            return notices;
        };
        if let Some(line) = lock(&self.problems).selector_failed(failure) {
            log(&line);
            notices.push(line);
        }
        notices
    }
}
