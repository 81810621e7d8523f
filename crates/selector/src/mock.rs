//! A scriptable selector for tests of code that depends on one.

use std::collections::VecDeque;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::json;

use crate::manifest::{ANSWER_KEY, Manifest, validate_answer};
use crate::{CancellationToken, SELECTOR_CEILING, SelectionRequest, Selector, SelectorError};

/// What a scripted call ends with.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum MockAnswer {
    /// The model's answer, validated against the manifest like a real one.
    Ids(Vec<String>),
    /// The error the call returns.
    Error(SelectorError),
}

/// One scripted call: answer after a latency.
#[derive(Debug, Clone)]
pub struct MockStep {
    /// The latency before the answer, measured on tokio time (exact under paused time).
    pub after: Duration,
    /// The answer given once the latency has passed.
    pub answer: MockAnswer,
}

impl MockStep {
    /// A step that answers with `ids` after `after`.
    pub fn ids(ids: Vec<String>, after: Duration) -> Self {
        Self {
            after,
            answer: MockAnswer::Ids(ids),
        }
    }

    /// A step that fails with `error` after `after`.
    pub fn error(error: SelectorError, after: Duration) -> Self {
        Self {
            after,
            answer: MockAnswer::Error(error),
        }
    }
}

/// What the mock was asked in one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedCall {
    /// The query.
    pub query: String,
    /// The candidate ids, in request order (before the manifest cap).
    pub candidate_ids: Vec<String>,
    /// The manifest text a model would have seen.
    pub manifest: String,
    /// The limit.
    pub limit: usize,
    /// The recently used tools.
    pub recent_tools: Vec<String>,
}

/// A selector that plays a script of answers, driven by tokio time.
///
/// Each call takes the next scripted [`MockStep`] (first in, first out); once the script runs
/// out, the default step repeats. Answered ids go through [`validate_answer`], so an id outside
/// the manifest yields [`SelectorError::InvalidAnswer`] as from a real model. A latency longer
/// than [`SELECTOR_CEILING`] ends at the ceiling with [`SelectorError::Timeout`], and
/// cancellation during the latency returns [`SelectorError::Cancelled`] at once.
#[derive(Debug)]
pub struct MockSelector {
    script: Mutex<VecDeque<MockStep>>,
    calls: Mutex<Vec<RecordedCall>>,
    default_step: MockStep,
}

impl Default for MockSelector {
    fn default() -> Self {
        Self::with_default_step(MockStep::ids(Vec::new(), Duration::ZERO))
    }
}

impl MockSelector {
    /// An unscripted mock: every call answers `[]` immediately.
    pub fn new() -> Self {
        Self::default()
    }

    /// A mock that answers `ids` after `after` on every call.
    pub fn answering(ids: Vec<String>, after: Duration) -> Self {
        Self::with_default_step(MockStep::ids(ids, after))
    }

    /// A mock that fails with `error` after `after` on every call.
    pub fn failing(error: SelectorError, after: Duration) -> Self {
        Self::with_default_step(MockStep::error(error, after))
    }

    fn with_default_step(default_step: MockStep) -> Self {
        Self {
            script: Mutex::new(VecDeque::new()),
            calls: Mutex::new(Vec::new()),
            default_step,
        }
    }

    /// Scripts the next unscripted call; steps are played in the order they were pushed.
    pub fn push(&self, step: MockStep) -> &Self {
        lock(&self.script).push_back(step);
        self
    }

    /// Every call so far, oldest first.
    pub fn calls(&self) -> Vec<RecordedCall> {
        lock(&self.calls).clone()
    }

    fn next_step(&self) -> MockStep {
        lock(&self.script)
            .pop_front()
            .unwrap_or_else(|| self.default_step.clone())
    }
}

/// Locks a mutex, recovering the data if another test thread panicked while holding it: the
/// script and the call log stay meaningful either way.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[crate::async_trait]
impl Selector for MockSelector {
    async fn select(
        &self,
        request: SelectionRequest<'_>,
        cancel: CancellationToken,
    ) -> Result<Vec<String>, SelectorError> {
        let manifest = Manifest::build(request.candidates);
        lock(&self.calls).push(RecordedCall {
            query: request.query.to_owned(),
            candidate_ids: request.candidates.iter().map(|c| c.id.clone()).collect(),
            manifest: manifest.text().to_owned(),
            limit: request.limit,
            recent_tools: request.recent_tools.to_vec(),
        });
        let step = self.next_step();

        let timed_out = step.after > SELECTOR_CEILING;
        let latency = step.after.min(SELECTOR_CEILING);
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(SelectorError::Cancelled),
            () = tokio::time::sleep(latency) => {}
        }
        if timed_out {
            return Err(SelectorError::Timeout(SELECTOR_CEILING));
        }
        match step.answer {
            MockAnswer::Ids(ids) => Ok(validate_answer(
                &json!({ ANSWER_KEY: ids }),
                &manifest,
                request.limit,
            )?),
            MockAnswer::Error(error) => Err(error),
        }
    }
}
