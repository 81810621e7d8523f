//! What one client may cost the server: connections open at once, the time to send a request,
//! the bytes of requests held, and how failures to accept are retried. Each kind of trouble is
//! logged once when it begins and once when it ends, never once per event.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::protocol::MAX_LINE_BYTES;

/// The most connections served at once by default; a connection over the bound is closed as
/// soon as it is accepted, and its client recalls in its own process.
pub const MAX_CONNECTIONS: usize = 64;
/// How long a client has by default, from its connection, to send its whole request.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(5);
/// How much one read takes from a connection.
pub(super) const READ_CHUNK: usize = 16 * 1024;
/// The bytes of each request read without drawing on [`REQUEST_BYTES_BUDGET`]: every hook's
/// request fits, so a flood of large requests never holds one back.
pub(super) const FREE_REQUEST_BYTES: usize = 64 * 1024;
/// The bytes of requests past their free part held at once: one request of the largest size.
/// A request that needs more waits for others to end (or for its deadline).
const REQUEST_BYTES_BUDGET: usize = MAX_LINE_BYTES + FREE_REQUEST_BYTES;
/// The first wait after a failed `accept`; each further failure doubles it up to
/// [`MAX_ACCEPT_BACKOFF`].
const FIRST_ACCEPT_BACKOFF: Duration = Duration::from_millis(10);
/// The longest wait between two attempts to accept.
pub(super) const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// The server's bounds and the permits that enforce them.
#[derive(Debug)]
pub(super) struct Limits {
    /// The most connections served at once.
    pub max_connections: usize,
    /// How long a client has to send its request.
    pub deadline: Duration,
    /// One permit per connection served.
    pub connections: Arc<Semaphore>,
    /// One permit per byte of requests held past their free part.
    pub request_bytes: Arc<Semaphore>,
}

impl Limits {
    pub fn new(max_connections: usize, deadline: Duration) -> Self {
        let max_connections = max_connections.max(1);
        Self {
            max_connections,
            deadline,
            connections: Arc::new(Semaphore::new(max_connections)),
            request_bytes: Arc::new(Semaphore::new(REQUEST_BYTES_BUDGET)),
        }
    }
}

/// The events of one burst of trouble, so that the burst is logged when it begins and ends.
#[derive(Debug, Default)]
pub(super) struct Burst {
    count: u64,
}

impl Burst {
    /// Counts one event; `true` for the first of a burst.
    pub fn hit(&mut self) -> bool {
        self.count += 1;
        self.count == 1
    }

    /// Ends the burst: how many events it had, `None` when none happened.
    pub fn end(&mut self) -> Option<u64> {
        (self.count > 0).then(|| std::mem::take(&mut self.count))
    }
}

/// Failed `accept`s in a row and how long to wait before the next attempt.
#[derive(Debug, Default)]
pub(super) struct AcceptBackoff {
    failures: Burst,
    delay: Duration,
}

impl AcceptBackoff {
    /// Counts a failure: the wait before the next attempt, and whether it begins a burst.
    pub fn failed(&mut self) -> (Duration, bool) {
        let first = self.failures.hit();
        self.delay = if first {
            FIRST_ACCEPT_BACKOFF
        } else {
            (self.delay * 2).min(MAX_ACCEPT_BACKOFF)
        };
        (self.delay, first)
    }

    /// An accept succeeded: how many failed before it, `None` after none.
    pub fn succeeded(&mut self) -> Option<u64> {
        self.delay = Duration::ZERO;
        self.failures.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_reports_its_first_event_and_its_size_once() {
        let mut burst = Burst::default();
        assert_eq!(burst.end(), None);
        assert!(burst.hit());
        assert!(!burst.hit());
        assert!(!burst.hit());
        assert_eq!(burst.end(), Some(3));
        assert_eq!(burst.end(), None);
        assert!(burst.hit());
    }

    #[test]
    fn failed_accepts_wait_longer_each_time_up_to_the_ceiling_and_only_the_first_is_reported() {
        let mut backoff = AcceptBackoff::default();
        let waits: Vec<(Duration, bool)> = (0..10).map(|_| backoff.failed()).collect();
        assert_eq!(waits[0], (FIRST_ACCEPT_BACKOFF, true));
        assert!(waits[1..].iter().all(|&(_, first)| !first));
        assert!(waits.windows(2).all(|w| w[0].0 <= w[1].0));
        assert_eq!(waits[9].0, MAX_ACCEPT_BACKOFF);
    }

    #[test]
    fn an_accept_after_failures_reports_them_and_the_next_failure_starts_over() {
        let mut backoff = AcceptBackoff::default();
        backoff.failed();
        backoff.failed();
        assert_eq!(backoff.succeeded(), Some(2));
        assert_eq!(backoff.succeeded(), None);
        assert_eq!(backoff.failed(), (FIRST_ACCEPT_BACKOFF, true));
    }

    #[test]
    fn one_request_of_the_largest_size_fits_the_budget_past_its_free_part() {
        let limits = Limits::new(MAX_CONNECTIONS, REQUEST_DEADLINE);
        assert!(
            limits.request_bytes.available_permits() + FREE_REQUEST_BYTES
                >= MAX_LINE_BYTES + READ_CHUNK
        );
    }
}
