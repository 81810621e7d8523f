//! Watches memory roots so that a long-lived process scans only what changed.
//!
//! [`WatchedCache`] wraps a [`DocumentCache`] and offers the same scans. The first time a root is
//! scanned it starts watching it (recursively, through the `notify` crate: inotify on Linux), and
//! that first scan is a full one. From then on each scan hands the cache the paths the watcher
//! reported since the previous scan began ([`RootChanges::Only`]), so the cache neither lists
//! the root's directories nor `stat`s its unchanged files; changed files are read again whatever
//! their key says, so an edit that keeps a file's size and times is seen.
//!
//! A change whose write completed before a scan began is seen by that scan: events reach this
//! crate on the watcher's own thread, so before each scan a barrier file is created in a private
//! directory the same watcher watches, and the scan waits until its event has come through.
//! The kernel queues events in the order they happen, so every earlier one has been taken in by
//! then.
//!
//! A root falls back to a full scan (as without a watcher), visibly in
//! [`WatchedCache::roots`], when the watcher lost events (a queue overflow: until the next scan,
//! which is a full one, re-establishes a clean state), when the system's watch limit is reached,
//! when the root cannot be watched (it does not exist, for one), or when the watcher fails.
//! [`WatchedCache::unwatch_idle`] drops the watches of roots not scanned lately.
//!
//! With the default `parallel` feature, scans and scoring use the rayon thread pool (the
//! `parallel` features of `memory-scan` and `lexical-score`); without it they run on the calling
//! thread, with the same results.
//!
//! # Example
//!
//! ```
//! use memory_scan::MemoryRoots;
//! use memory_watch::{WatchMode, WatchedCache};
//!
//! let root = tempfile::tempdir()?;
//! std::fs::write(
//!     root.path().join("deploys.md"),
//!     "---\nname: Deploys\ntype: project\n---\nRun the rollback script first.\n",
//! )?;
//! let roots = MemoryRoots {
//!     project: Some(root.path().to_path_buf()),
//!     user: None,
//! };
//!
//! let cache = WatchedCache::new();
//! let scan = cache.scan_recall(&roots)?;
//!
//! assert_eq!(scan.documents[0].title(), "Deploys");
//! assert!(matches!(cache.roots()[0].mode, WatchMode::Watching));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

mod events;
mod hub;
mod mode;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use events::Subscriber;
pub use hub::WatchHub;
use lexical_score::QueryTokens;
use memory_scan::{
    CacheFootprint, CatalogWrite, DocumentCache, KnownChanges, MemoryRoots, RecallScan,
    RootChanges, ScanError,
};
pub use mode::{FallbackReason, WatchMode};
use mode::{retried, without_events};

/// How long a scan waits for its barrier event before it scans every root in full.
const BARRIER_TIMEOUT: Duration = Duration::from_secs(5);

/// One root a [`WatchedCache`] has scanned, as a status command shows it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WatchedRoot {
    /// The root, made absolute.
    pub path: PathBuf,
    /// How its scans go.
    pub mode: WatchMode,
    /// When it was last scanned.
    pub last_scanned: Instant,
}

/// A [`DocumentCache`] whose roots are watched (see the crate documentation). Shareable across
/// threads; scans take turns.
pub struct WatchedCache {
    cache: DocumentCache,
    /// The watcher, this cache's own or one shared with other caches.
    hub: Arc<WatchHub>,
    /// This cache's name among the watcher's subscribers.
    subscriber: Subscriber,
    /// What this cache knows of each root; held for a whole scan.
    state: Mutex<State>,
}

/// The roots, behind [`WatchedCache::state`].
struct State {
    roots: HashMap<PathBuf, RootState>,
}

/// What this cache knows of one root besides its events.
struct RootState {
    /// Whether the watcher holds a watch on the root.
    watched: bool,
    /// Why its next scan is a stat scan; `None` once a full scan has made its events reliable.
    fallback: Option<FallbackReason>,
    /// Whether its next scan must be a full one although the root is watched.
    rescan: bool,
    last_scanned: Instant,
}

impl Default for WatchedCache {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for WatchedCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WatchedCache")
            .field("cache", &self.cache)
            .finish_non_exhaustive()
    }
}

impl memory_scan::RecallScanner for WatchedCache {
    fn scan_recall_for(
        &self,
        roots: &MemoryRoots,
        query: &QueryTokens,
    ) -> Result<RecallScan, ScanError> {
        WatchedCache::scan_recall_for(self, roots, query)
    }

    fn persist_catalogs(&self) -> Vec<CatalogWrite> {
        WatchedCache::persist_catalogs(self)
    }

    fn build_indexes(&self, stop: &(dyn Fn() -> bool + Sync)) -> usize {
        WatchedCache::build_indexes(self, stop)
    }

    fn uses_catalogs(&self) -> bool {
        self.cache.uses_catalogs()
    }
}

impl WatchedCache {
    /// A watched cache over an empty [`DocumentCache`] without persistence.
    pub fn new() -> Self {
        Self::wrapping(DocumentCache::new())
    }

    /// A watched cache over an empty [`DocumentCache`] that starts each root from its persistent
    /// catalog (see [`DocumentCache::with_catalog`]).
    pub fn with_catalog() -> Self {
        Self::wrapping(DocumentCache::with_catalog())
    }

    /// Watches the roots `cache` will scan, with a watcher of its own. The cache should not have
    /// been scanned yet: a root it already knows is scanned in full once anyway, when its watch
    /// starts.
    pub fn wrapping(cache: DocumentCache) -> Self {
        Self::sharing(cache, &Arc::new(WatchHub::new()))
    }

    /// Watches the roots `cache` will scan through `hub`, a watcher other caches may share: a
    /// process with a cache per project keeps one watcher (on Linux, one inotify instance and
    /// one thread) whatever the number of projects.
    pub fn sharing(cache: DocumentCache, hub: &Arc<WatchHub>) -> Self {
        Self {
            cache,
            subscriber: hub.subscriber(),
            hub: Arc::clone(hub),
            state: Mutex::new(State {
                roots: HashMap::new(),
            }),
        }
    }

    /// The wrapped cache (for [`DocumentCache::len`] and the like).
    pub fn cache(&self) -> &DocumentCache {
        &self.cache
    }

    /// [`DocumentCache::scan_recall`], watching the roots.
    ///
    /// Blocking; call from `spawn_blocking` in async code.
    pub fn scan_recall(&self, roots: &MemoryRoots) -> Result<RecallScan, ScanError> {
        self.scan(roots, None)
    }

    /// [`DocumentCache::scan_recall_for`], watching the roots.
    pub fn scan_recall_for(
        &self,
        roots: &MemoryRoots,
        query: &QueryTokens,
    ) -> Result<RecallScan, ScanError> {
        self.scan(roots, Some(query))
    }

    /// [`DocumentCache::persist_catalogs`].
    pub fn persist_catalogs(&self) -> Vec<CatalogWrite> {
        self.cache.persist_catalogs()
    }

    /// [`DocumentCache::build_indexes`].
    pub fn build_indexes(&self, stop: &(dyn Fn() -> bool + Sync)) -> usize {
        self.cache.build_indexes(stop)
    }

    /// [`DocumentCache::footprint`]: the bytes the cache holds, by part. (What the watcher keeps
    /// per watched directory is the watch library's and the kernel's, not counted here.)
    pub fn footprint(&self) -> CacheFootprint {
        self.cache.footprint()
    }

    /// Every root scanned so far and not dropped, with how its scans go, in path order.
    pub fn roots(&self) -> Vec<WatchedRoot> {
        let state = lock(&self.state);
        let mut roots: Vec<WatchedRoot> = state
            .roots
            .iter()
            .map(|(path, root)| WatchedRoot {
                path: path.clone(),
                mode: self.mode_of(path, root),
                last_scanned: root.last_scanned,
            })
            .collect();
        roots.sort_by(|a, b| a.path.cmp(&b.path));
        roots
    }

    /// Stops watching the roots not scanned for `older_than`, and forgets them; returns them. A
    /// root scanned again later is watched again, starting with a full scan.
    pub fn unwatch_idle(&self, older_than: Duration) -> Vec<PathBuf> {
        self.unwatch_idle_at(Instant::now(), older_than)
    }

    /// [`WatchedCache::unwatch_idle`] as of `now`.
    fn unwatch_idle_at(&self, now: Instant, older_than: Duration) -> Vec<PathBuf> {
        let mut guard = lock(&self.state);
        let state = &mut *guard;
        let idle: Vec<PathBuf> = state
            .roots
            .iter()
            .filter(|(_, root)| now.saturating_duration_since(root.last_scanned) > older_than)
            .map(|(path, _)| path.clone())
            .collect();
        for path in &idle {
            let held = state.roots.remove(path).is_some_and(|root| root.watched);
            self.hub.release(path, self.subscriber, held);
        }
        idle
    }

    fn scan(
        &self,
        roots: &MemoryRoots,
        query: Option<&QueryTokens>,
    ) -> Result<RecallScan, ScanError> {
        let mut guard = lock(&self.state);
        let state = &mut *guard;
        let now = Instant::now();
        let paths = [&roots.project, &roots.user]
            .map(|root| root.as_deref().and_then(|r| std::path::absolute(r).ok()));
        for path in paths.iter().flatten() {
            self.start_watching(state, path, now);
        }
        let delivered = self.barrier(state);
        // Why the events cannot be trusted when the barrier did not come through.
        let undelivered = match self.hub.error() {
            Some(error) => FallbackReason::WatcherFailed(error),
            None => FallbackReason::BarrierTimedOut,
        };
        // Events up to the barrier are this scan's, whether it relies on them or not; taken once
        // per root, so the same root given for both scopes gets them for both.
        let mut taken = HashMap::new();
        for path in paths.iter().flatten() {
            if !taken.contains_key(path) {
                taken.insert(
                    path.clone(),
                    self.hub.shared.take(path, self.subscriber, now),
                );
            }
        }
        let changes = paths.clone().map(|path| {
            let Some(path) = path else {
                return RootChanges::Unknown;
            };
            let (changed, event_fallback) = taken.get(&path).cloned().unwrap_or_default();
            let root = state.roots.get_mut(&path).expect("started above");
            if let Some(reason) = event_fallback {
                root.rescan = true;
                if matches!(reason, FallbackReason::RootReplaced) && root.watched {
                    root.watched = false;
                    self.hub.release(&path, self.subscriber, true);
                }
                if matches!(
                    reason,
                    FallbackReason::RootReplaced | FallbackReason::WatchLimit
                ) {
                    root.fallback = Some(reason);
                } else {
                    root.fallback.get_or_insert(reason);
                }
            }
            if !delivered {
                root.rescan = true;
                root.fallback.get_or_insert(undelivered.clone());
            }
            match changed {
                Some(changed) if root.watched && !root.rescan && root.fallback.is_none() => {
                    RootChanges::Only(changed)
                }
                _ => RootChanges::Unknown,
            }
        });
        let [project, user] = changes;
        let known = KnownChanges { project, user };
        let scanned = self.cache.scan_recall_knowing(roots, &known, query);
        for path in paths.iter().flatten() {
            let Some(root) = state.roots.get_mut(path) else {
                continue;
            };
            root.last_scanned = now;
            if scanned.is_ok() && root.watched && delivered {
                // A full scan of a watched root re-establishes a clean state, except for reasons
                // that stay until the root is watched again.
                root.rescan = false;
                if matches!(
                    root.fallback,
                    Some(FallbackReason::Overflow | FallbackReason::BarrierTimedOut)
                ) {
                    root.fallback = None;
                }
            } else {
                root.rescan = true;
            }
        }
        scanned
    }

    /// Watches `path` unless it is watched already (or cannot be, for a reason that a retry
    /// would not change).
    fn start_watching(&self, state: &mut State, path: &Path, now: Instant) {
        let retry = match state.roots.get(path) {
            None => true,
            Some(root) => !root.watched && root.fallback.as_ref().is_some_and(retried),
        };
        if !retry {
            return;
        }
        let outcome = if without_events(path) {
            Err(FallbackReason::NoEvents)
        } else {
            self.hub.watch(path, self.subscriber)
        };
        let watched = outcome.is_ok();
        if let Err(reason) = &outcome {
            tracing::debug!(root = %path.display(), %reason, "root scanned in full");
        }
        state.roots.insert(
            path.to_path_buf(),
            RootState {
                watched,
                fallback: outcome.err(),
                rescan: true,
                last_scanned: now,
            },
        );
    }

    /// Waits until every event queued before now has been taken in; `false` when that could not
    /// be made sure of (every root is then scanned in full).
    fn barrier(&self, state: &mut State) -> bool {
        if !state.roots.values().any(|root| root.watched) {
            return true;
        }
        self.hub.barrier(BARRIER_TIMEOUT)
    }

    fn mode_of(&self, path: &Path, root: &RootState) -> WatchMode {
        let pending = self.hub.shared.pending_fallback(path, self.subscriber);
        match root.fallback.clone().or(pending) {
            Some(reason) => WatchMode::FullScan { reason },
            None => WatchMode::Watching,
        }
    }
}

/// Locks `mutex`, going on with its data when another thread panicked while holding it, so that
/// one panic does not become a panic in every thread that shares the watcher.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Drop for WatchedCache {
    /// Gives back the watches this cache holds, so that a shared watcher drops a root no cache
    /// scans any more.
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(PoisonError::into_inner);
        for (path, root) in state.roots.drain() {
            self.hub.release(&path, self.subscriber, root.watched);
        }
    }
}
