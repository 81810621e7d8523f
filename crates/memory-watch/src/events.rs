//! What the watcher's thread reports, gathered per root until a scan takes it, and the barrier
//! that tells a scan every event queued before it has been gathered.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use memory_scan::ChangedPaths;
use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind};
use notify::{Event, EventKind, RecursiveMode, Watcher};

use crate::FallbackReason;
use crate::lock;

/// How long a directory that appeared (created, or renamed into place) is walked again by every
/// scan. The watcher adds its watch on the new directory only after it has reported it, so a file
/// created in it in between has no event of its own; walking the directory again until the
/// watch is surely in place finds such a file.
const NEW_DIRECTORY_WINDOW: Duration = Duration::from_secs(2);

/// The file name prefix of barrier files.
const BARRIER_PREFIX: &str = "barrier-";

/// State shared with the watcher's thread.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    events: Mutex<Events>,
    /// Signalled when a barrier event comes through.
    barrier_seen: Condvar,
}

#[derive(Debug, Default)]
struct Events {
    /// Per root, what each cache tracking it has not taken yet: caches sharing a watcher each
    /// get every event of the roots they track.
    roots: HashMap<PathBuf, HashMap<Subscriber, RootEvents>>,
    /// Roots whose watch was left pointing at a directory that is no longer there (the root was
    /// removed or renamed): the next cache to watch one sets its watch up again.
    replaced: HashSet<PathBuf>,
    /// The private directory barrier files are created in.
    barrier_dir: Option<PathBuf>,
    /// The highest barrier number seen.
    barrier: u64,
}

/// Which cache of a shared watcher a root's events are gathered for.
pub(crate) type Subscriber = u64;

/// What happened under one root since a scan last took it.
#[derive(Debug, Default)]
struct RootEvents {
    changed: ChangedPaths,
    /// Directories that appeared, with when their event came.
    new_directories: Vec<(PathBuf, Instant)>,
    /// Why the events cannot be relied on, if something went wrong.
    fallback: Option<FallbackReason>,
}

impl Shared {
    /// Starts gathering events of `root` for `subscriber` from now on (nothing known before).
    pub(crate) fn track(&self, root: &Path, subscriber: Subscriber) {
        lock(&self.events)
            .roots
            .entry(root.to_path_buf())
            .or_default()
            .insert(subscriber, RootEvents::default());
    }

    /// Stops gathering events of `root` for `subscriber`.
    pub(crate) fn forget(&self, root: &Path, subscriber: Subscriber) {
        let mut events = lock(&self.events);
        if let Some(subscribers) = events.roots.get_mut(root) {
            subscribers.remove(&subscriber);
            if subscribers.is_empty() {
                events.roots.remove(root);
            }
        }
    }

    /// Whether the watch of `root` was left behind by the root's removal or renaming (and
    /// forgets that it was).
    pub(crate) fn take_replaced(&self, root: &Path) -> bool {
        lock(&self.events).replaced.remove(root)
    }

    /// The paths changed under `root` since the last call, and why they cannot be relied on, if
    /// that is so; `None` for a root not tracked.
    pub(crate) fn take(
        &self,
        root: &Path,
        subscriber: Subscriber,
        now: Instant,
    ) -> (Option<ChangedPaths>, Option<FallbackReason>) {
        let mut events = lock(&self.events);
        let Some(root) = events
            .roots
            .get_mut(root)
            .and_then(|subscribers| subscribers.get_mut(&subscriber))
        else {
            return (None, None);
        };
        let mut changed = std::mem::take(&mut root.changed);
        root.new_directories
            .retain(|(_, at)| now.saturating_duration_since(*at) < NEW_DIRECTORY_WINDOW);
        for (directory, _) in &root.new_directories {
            changed.insert(directory.clone());
        }
        (Some(changed), root.fallback.take())
    }

    /// Why the events of `root` gathered so far cannot be relied on, if that is so.
    pub(crate) fn pending_fallback(
        &self,
        root: &Path,
        subscriber: Subscriber,
    ) -> Option<FallbackReason> {
        lock(&self.events)
            .roots
            .get(root)
            .and_then(|subscribers| subscribers.get(&subscriber))
            .and_then(|root| root.fallback.clone())
    }

    /// Takes in one report of the watcher.
    pub(crate) fn handle(&self, event: notify::Result<Event>) {
        let now = Instant::now();
        let mut events = lock(&self.events);
        let event = match event {
            Ok(event) => event,
            Err(error) => {
                tracing::debug!(%error, "watcher error");
                let reason = match error.kind {
                    notify::ErrorKind::MaxFilesWatch => FallbackReason::WatchLimit,
                    _ => FallbackReason::WatcherFailed(Arc::new(error)),
                };
                for root in events.roots.values_mut().flat_map(HashMap::values_mut) {
                    root.fallback = Some(reason.clone());
                }
                return;
            }
        };
        if event.need_rescan() {
            for root in events.roots.values_mut().flat_map(HashMap::values_mut) {
                root.fallback.get_or_insert(FallbackReason::Overflow);
            }
            return;
        }
        if let Some(seen) = barrier_number(&events, &event) {
            events.barrier = events.barrier.max(seen);
            self.barrier_seen.notify_all();
            return;
        }
        let Some(change) = Change::of(event.kind) else {
            return;
        };
        let Events {
            roots, replaced, ..
        } = &mut *events;
        for path in &event.paths {
            for (root_path, subscribers) in roots.iter_mut() {
                let Ok(relative) = path.strip_prefix(root_path) else {
                    continue;
                };
                let root_itself = relative.as_os_str().is_empty();
                if root_itself && change != Change::Edit {
                    replaced.insert(root_path.clone());
                }
                for root in subscribers.values_mut() {
                    root.record(relative, change, now);
                }
            }
        }
    }
}

impl RootEvents {
    /// Takes in one change at `relative` below the root.
    fn record(&mut self, relative: &Path, change: Change, now: Instant) {
        if relative.as_os_str().is_empty() {
            // The root itself: a change of its metadata lists it again; one that takes it away
            // leaves its watch pointing nowhere.
            match change {
                Change::Edit => self.changed.insert_edit(PathBuf::new()),
                Change::Entry | Change::NewDirectory => {
                    self.fallback = Some(FallbackReason::RootReplaced);
                }
            }
            return;
        }
        match change {
            Change::Edit => self.changed.insert_edit(relative),
            Change::Entry => self.changed.insert(relative),
            Change::NewDirectory => {
                self.changed.insert(relative);
                self.new_directories.push((relative.to_path_buf(), now));
            }
        }
    }
}

/// What an event means for a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// A path's content or metadata changed.
    Edit,
    /// A path was created, removed or renamed: its directory's entries changed.
    Entry,
    /// A path that may be a directory appeared: walked again for a while (see
    /// [`NEW_DIRECTORY_WINDOW`]).
    NewDirectory,
}

impl Change {
    /// `None` for events that change nothing (a file opened or read, including by the scan).
    fn of(kind: EventKind) -> Option<Self> {
        match kind {
            EventKind::Access(AccessKind::Close(AccessMode::Write))
            | EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Metadata(_)) => Some(Self::Edit),
            EventKind::Access(_) => None,
            EventKind::Create(CreateKind::File) | EventKind::Remove(_) => Some(Self::Entry),
            EventKind::Create(_) | EventKind::Modify(ModifyKind::Name(_)) => {
                Some(Self::NewDirectory)
            }
            EventKind::Modify(_) | EventKind::Any | EventKind::Other => Some(Self::Entry),
        }
    }
}

/// The number of the barrier file `event` created, if it is one.
fn barrier_number(events: &Events, event: &Event) -> Option<u64> {
    let directory = events.barrier_dir.as_deref()?;
    if !matches!(event.kind, EventKind::Create(_)) {
        return None;
    }
    event
        .paths
        .iter()
        .filter(|path| path.parent() == Some(directory))
        .filter_map(|path| path.file_name()?.to_str()?.strip_prefix(BARRIER_PREFIX))
        .filter_map(|number| number.parse().ok())
        .max()
}

/// A private directory, watched by the same watcher as the roots, in which a scan creates a file
/// and waits for its event.
#[derive(Debug)]
pub(crate) struct Barrier {
    /// Removed with the barrier.
    _directory: tempfile::TempDir,
    next: u64,
}

impl Barrier {
    /// Makes the directory and watches it.
    pub(crate) fn new(
        watcher: &mut notify::RecommendedWatcher,
        shared: &Shared,
    ) -> Result<Self, BarrierError> {
        let directory = tempfile::Builder::new()
            .prefix("memrecall-watch-")
            .tempdir()
            .map_err(BarrierError::Directory)?;
        let path = fs::canonicalize(directory.path()).map_err(BarrierError::Directory)?;
        lock(&shared.events).barrier_dir = Some(path.clone());
        watcher
            .watch(&path, RecursiveMode::NonRecursive)
            .map_err(BarrierError::Watch)?;
        Ok(Self {
            _directory: directory,
            next: 0,
        })
    }

    /// Creates the next barrier file; the caller then waits for it with [`Passage::wait`]. Files
    /// are numbered in the order they are created, so the event of a later one tells that an
    /// earlier one's has come through too.
    pub(crate) fn post(&mut self, shared: &Shared) -> Option<Passage> {
        self.next += 1;
        let number = self.next;
        let directory = lock(&shared.events).barrier_dir.clone()?;
        let file = directory.join(format!("{BARRIER_PREFIX}{number}"));
        if let Err(error) = fs::File::create(&file) {
            tracing::debug!(%error, "cannot create a watch barrier file");
            return None;
        }
        Some(Passage { number, file })
    }
}

/// One barrier file created, whose event a scan waits for.
#[derive(Debug)]
pub(crate) struct Passage {
    number: u64,
    file: PathBuf,
}

impl Passage {
    /// Waits, at most `timeout`, for the barrier file's event; `true` once it came.
    pub(crate) fn wait(self, shared: &Shared, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut events = lock(&shared.events);
        let passed = loop {
            if events.barrier >= self.number {
                break true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break false;
            }
            events = shared
                .barrier_seen
                .wait_timeout(events, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        };
        drop(events);
        let _ = fs::remove_file(&self.file);
        passed
    }
}

/// Why the barrier could not be set up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BarrierError {
    /// The private directory could not be made.
    #[error("cannot make the barrier directory: {0}")]
    Directory(#[source] io::Error),
    /// It could not be watched.
    #[error("cannot watch the barrier directory: {0}")]
    Watch(#[source] notify::Error),
}
