//! One watcher for many caches: a long-lived process that keeps a cache per project shares one
//! watcher (on Linux one inotify instance and one thread) between them, with a watch per root.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use notify::{Config, RecursiveMode, Watcher as _};

use crate::FallbackReason;
use crate::events::{Barrier, Shared, Subscriber};
use crate::lock;

/// A file-system watcher that several [`WatchedCache`](crate::WatchedCache)s share (see
/// [`WatchedCache::sharing`](crate::WatchedCache::sharing)): one watch per root, however many
/// caches scan it, and every cache gets every event of the roots it scans.
///
/// A watcher that cannot be made (no inotify instance left, no thread) is not an error: every
/// root of its caches is then given a full scan, and [`WatchHub::error`] says why.
pub struct WatchHub {
    pub(crate) shared: Arc<Shared>,
    state: Mutex<HubState>,
    next_subscriber: AtomicU64,
}

struct HubState {
    /// `None` when no watcher could be made.
    watcher: Option<notify::RecommendedWatcher>,
    /// Why there is no watcher (or no barrier).
    error: Option<Arc<notify::Error>>,
    barrier: Option<Barrier>,
    /// How many caches hold a watch on each root.
    holders: HashMap<PathBuf, usize>,
}

impl Default for WatchHub {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for WatchHub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = lock(&self.state);
        f.debug_struct("WatchHub")
            .field("watching", &state.holders.len())
            .field("error", &state.error)
            .finish_non_exhaustive()
    }
}

impl WatchHub {
    /// Starts the watcher (and its private barrier directory).
    pub fn new() -> Self {
        let shared = Arc::new(Shared::default());
        let handler = {
            let shared = Arc::clone(&shared);
            move |event| shared.handle(event)
        };
        let config = Config::default().with_follow_symlinks(false);
        let (mut watcher, mut error) = match started(handler, config) {
            Ok(watcher) => (Some(watcher), None),
            Err(error) => {
                tracing::warn!(%error, "cannot watch memory roots; scanning them in full");
                (None, Some(Arc::new(error)))
            }
        };
        let barrier = watcher.as_mut().and_then(|watcher| {
            Barrier::new(watcher, &shared)
                .inspect_err(|barrier_error| {
                    tracing::warn!(%barrier_error, "cannot set up the watch barrier; scanning in full");
                    error = Some(Arc::new(notify::Error::generic(&barrier_error.to_string())));
                })
                .ok()
        });
        Self {
            shared,
            state: Mutex::new(HubState {
                watcher,
                error,
                barrier,
                holders: HashMap::new(),
            }),
            next_subscriber: AtomicU64::new(0),
        }
    }

    /// Why roots cannot be watched at all, if that is so.
    pub fn error(&self) -> Option<Arc<notify::Error>> {
        let state = lock(&self.state);
        match (&state.watcher, &state.barrier) {
            (Some(_), Some(_)) => None,
            _ => Some(
                state
                    .error
                    .clone()
                    .unwrap_or_else(|| Arc::new(notify::Error::generic("no watcher"))),
            ),
        }
    }

    /// How many roots are watched.
    pub fn watched_roots(&self) -> usize {
        lock(&self.state).holders.len()
    }

    /// A new cache's name among this watcher's subscribers.
    pub(crate) fn subscriber(&self) -> Subscriber {
        self.next_subscriber.fetch_add(1, Ordering::Relaxed)
    }

    /// Starts gathering the events of `root` for `subscriber`, watching it unless another cache
    /// does already.
    pub(crate) fn watch(&self, root: &Path, subscriber: Subscriber) -> Result<(), FallbackReason> {
        let mut guard = lock(&self.state);
        let state = &mut *guard;
        let (Some(watcher), Some(_)) = (state.watcher.as_mut(), state.barrier.as_ref()) else {
            return Err(FallbackReason::WatcherFailed(
                state
                    .error
                    .clone()
                    .unwrap_or_else(|| Arc::new(notify::Error::generic("no watch barrier"))),
            ));
        };
        self.shared.track(root, subscriber);
        let holders = state.holders.get(root).copied().unwrap_or(0);
        let replaced = self.shared.take_replaced(root);
        if holders > 0 && !replaced {
            state.holders.insert(root.to_path_buf(), holders + 1);
            return Ok(());
        }
        if holders > 0 && guarded(|| watcher.unwatch(root)).is_none() {
            // The watch pointed at the directory that was removed or renamed; setting it up
            // again found the watcher's thread gone.
            let error = state.fail();
            self.shared.forget(root, subscriber);
            return Err(FallbackReason::WatcherFailed(error));
        }
        let Some(watched) = guarded(|| watcher.watch(root, RecursiveMode::Recursive)) else {
            let error = state.fail();
            self.shared.forget(root, subscriber);
            return Err(FallbackReason::WatcherFailed(error));
        };
        match watched {
            Ok(()) => {
                state.holders.insert(root.to_path_buf(), holders + 1);
                Ok(())
            }
            Err(error) => {
                // A recursive watch that failed half-way may hold some of its watches.
                if guarded(|| watcher.unwatch(root)).is_none() {
                    state.fail();
                }
                state.holders.remove(root);
                self.shared.forget(root, subscriber);
                Err(match error.kind {
                    notify::ErrorKind::MaxFilesWatch => FallbackReason::WatchLimit,
                    _ => FallbackReason::Unwatchable(Arc::new(error)),
                })
            }
        }
    }

    /// Stops gathering the events of `root` for `subscriber`; `held` says whether it held a
    /// watch on it, which is dropped when no other cache holds one.
    pub(crate) fn release(&self, root: &Path, subscriber: Subscriber, held: bool) {
        self.shared.forget(root, subscriber);
        if !held {
            return;
        }
        let mut guard = lock(&self.state);
        let state = &mut *guard;
        let Some(holders) = state.holders.get_mut(root) else {
            return;
        };
        *holders = holders.saturating_sub(1);
        if *holders == 0 {
            state.holders.remove(root);
            let Some(watcher) = state.watcher.as_mut() else {
                return;
            };
            match guarded(|| watcher.unwatch(root)) {
                Some(Ok(())) => {}
                Some(Err(error)) => {
                    tracing::debug!(root = %root.display(), %error, "unwatching a root failed");
                }
                None => {
                    state.fail();
                }
            }
        }
    }

    /// Waits until every event queued before now has been taken in; `false` when that could not
    /// be made sure of within `timeout`.
    pub(crate) fn barrier(&self, timeout: Duration) -> bool {
        let passage = {
            let mut state = lock(&self.state);
            let Some(barrier) = state.barrier.as_mut() else {
                return false;
            };
            barrier.post(&self.shared)
        };
        passage.is_some_and(|passage| passage.wait(&self.shared, timeout))
    }

    /// As when the watcher's thread is found gone.
    #[cfg(test)]
    pub(crate) fn fail_for_test(&self) {
        lock(&self.state).fail();
    }
}

impl HubState {
    /// Gives up the watcher whose thread is gone, and returns why: its roots are scanned in
    /// full from now on. The watcher is leaked, not dropped: dropping one whose thread is gone
    /// panics inside the watch library.
    fn fail(&mut self) -> Arc<notify::Error> {
        let error = Arc::new(notify::Error::generic(
            "the watcher's thread stopped; scanning in full",
        ));
        tracing::warn!(%error, "memory roots are no longer watched");
        std::mem::forget(self.watcher.take());
        self.barrier = None;
        self.holders.clear();
        self.error = Some(Arc::clone(&error));
        error
    }
}

impl Drop for HubState {
    fn drop(&mut self) {
        if let Some(watcher) = self.watcher.take()
            && guarded(move || drop(watcher)).is_none()
        {
            tracing::debug!("the watcher's thread was gone when it was dropped");
        }
    }
}

/// A watcher whose thread runs: the watch library reports a watcher made although its thread
/// could not be started (no address space or thread left), and panics when it is used. A
/// configuration request, which its thread answers, tells.
fn started(
    handler: impl notify::EventHandler,
    config: Config,
) -> notify::Result<notify::RecommendedWatcher> {
    let mut watcher = notify::RecommendedWatcher::new(handler, config)?;
    match guarded(|| watcher.configure(config)) {
        Some(Ok(_)) => Ok(watcher),
        Some(Err(error)) => {
            std::mem::forget(watcher);
            Err(error)
        }
        None => {
            std::mem::forget(watcher);
            Err(notify::Error::generic("the watcher's thread did not start"))
        }
    }
}

/// Runs a call into the watch library, which panics when its thread is gone: `None` then.
fn guarded<T>(call: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).ok()
}
