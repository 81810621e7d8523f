//! The server: accepts connections on the user's socket, keeps one recall session per agent
//! session, and exits after an idle time or on `stop`.
//!
//! Sessions are keyed by agent and the agent's `session_id` and bounded ([`MAX_SESSIONS`]): the
//! least recently used is evicted, its recall cancelled with its terminal telemetry emitted.
//! Each has its own exclusion set (what it delivered), so no session's deliveries change
//! another's. Sessions over the same roots share one document cache; the HTTP selector (and its
//! connections) is shared by all. `config.toml` is checked on every request and reloaded when
//! it changed; a session picks up a new selector at its next prompt.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use memory_scan::MemoryRoots;
use memory_watch::{WatchMode, WatchedCache};
use recall_facade::{Delivery, DeliveryDesign, Phase, TelemetryEvent, TelemetrySink, TracingSink};
use recall_lifecycle::{RecallSession, SessionConfig};
use selector::Selector;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Notify;
use tokio::time::Instant;

use super::protocol::{
    self, DeliveryAnswer, EventRequest, Point, PromptEvent, Request, Response, ResponseLine,
    Status, VERSION,
};
use super::{PrivacyError, ServerPaths, check_private_dir, current_uid, try_lock};
use crate::agent::{Agent, Environment};
use crate::config::{Config, IdleExit};

/// The most agent sessions kept at once.
pub const MAX_SESSIONS: usize = 64;
/// The most document caches kept for roots no session uses any more.
const MAX_IDLE_CACHES: usize = 8;
/// How often the server checks that its socket is still its own.
const SOCKET_CHECK_EVERY: Duration = Duration::from_secs(2);
/// How long a root goes unscanned before its watch is dropped.
const UNWATCH_AFTER: Duration = Duration::from_mins(10);
/// How long an exiting server waits for its catalogs to be written.
const CATALOG_GRACE: Duration = Duration::from_secs(2);

/// Why the server cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Neither `XDG_RUNTIME_DIR`, `MEMRECALL_HOME` nor `HOME` is set.
    #[error("cannot find a run directory: set XDG_RUNTIME_DIR, MEMRECALL_HOME or HOME")]
    NoRunDirectory,
    /// The run directory is not safe to use.
    #[error(transparent)]
    Privacy(#[from] PrivacyError),
    /// Another server holds the lock.
    #[error("a server is already running for this user")]
    AlreadyRunning,
    /// A file operation failed.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was attempted.
        what: &'static str,
        /// On what.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

impl ServeError {
    fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Self + use<> {
        let path = path.to_path_buf();
        move |source| Self::Io { what, path, source }
    }
}

/// What the command line may set.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServeOptions {
    /// The idle time; `None` takes `config.toml`'s, else [`IdleExit::DEFAULT`].
    pub idle_exit: Option<Duration>,
}

/// Runs the server until it is idle for its idle time or asked to stop.
pub fn run(options: ServeOptions, env: &Environment) -> Result<(), ServeError> {
    let paths = ServerPaths::from_env(env).ok_or(ServeError::NoRunDirectory)?;
    if !check_private_dir(&paths.dir)? {
        crate::hook::private_dir(&paths.dir)
            .map_err(ServeError::io("cannot create", &paths.dir))?;
        check_private_dir(&paths.dir)?;
    }
    let lock = crate::hook::private_file(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
    )
    .open(&paths.lock)
    .map_err(ServeError::io("cannot open", &paths.lock))?;
    if !try_lock(&lock).map_err(ServeError::io("cannot lock", &paths.lock))? {
        return Err(ServeError::AlreadyRunning);
    }
    // Holding the lock, any socket left there belongs to a server that is gone.
    match std::fs::remove_file(&paths.socket) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(ServeError::io("cannot remove", &paths.socket)(e));
        }
        _ => {}
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(ServeError::io(
            "cannot start the async runtime for",
            &paths.socket,
        ))?;
    let served = runtime.block_on(async {
        let listener = bind(&paths.socket)?;
        let server = Arc::new(Server::new(env, options));
        log(&format!(
            "serving on {} (pid {}, idle exit {})",
            paths.socket.display(),
            std::process::id(),
            humantime::format_duration(server.idle_exit())
        ));
        server.accept_loop(&listener, &paths.socket).await;
        server.shut_down().await;
        Ok::<_, ServeError>(())
    });
    let _ = std::fs::remove_file(&paths.socket);
    runtime.shutdown_timeout(Duration::from_millis(100));
    drop(lock);
    log("stopped");
    served
}

fn bind(socket: &Path) -> Result<UnixListener, ServeError> {
    use std::os::unix::fs::PermissionsExt as _;
    let listener =
        UnixListener::bind(socket).map_err(ServeError::io("cannot listen on", socket))?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
        .map_err(ServeError::io("cannot restrict", socket))?;
    Ok(listener)
}

/// One line on the server's standard error, which a started server sends to its log.
fn log(line: &str) {
    let now = humantime::format_rfc3339_seconds(SystemTime::now());
    eprintln!("{now} serve: {line}");
}

/// The sink every recall's telemetry goes to: the history under `$MEMRECALL_HOME/telemetry`
/// (what `memrecall stats` reads; unless `[telemetry] record = false` when the server starts)
/// and `tracing`.
fn telemetry_sink(home: Option<&Path>) -> Arc<dyn TelemetrySink> {
    crate::stats::telemetry_sink(home, vec![Arc::new(TracingSink)]).sink
}

/// The document cache for one pair of roots: catalogs kept, roots watched, so a warm recall
/// re-reads only what changed instead of checking every file.
fn document_cache() -> Arc<WatchedCache> {
    Arc::new(WatchedCache::with_catalog())
}

/// Counts terminal delivery events on their way to the real sink, for `status`.
#[derive(Debug)]
struct CountingSink {
    inner: Arc<dyn TelemetrySink>,
    ended: AtomicU64,
}

impl TelemetrySink for CountingSink {
    fn emit(&self, event: &TelemetryEvent) {
        // A recall's last event is its one `refined`-phase delivery event (delivered or
        // discarded); the `fast` event never ends a recall.
        if let TelemetryEvent::Delivery(delivery) = event
            && delivery.phase == Phase::Refined
        {
            self.ended.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.emit(event);
    }
}

/// The configuration the sessions are built with, and how to tell it changed.
struct Settings {
    stamp: Option<(SystemTime, u64)>,
    generation: u64,
    selector: Option<Arc<dyn Selector>>,
    design: DeliveryDesign,
    idle_exit: Duration,
}

type RootsKey = (Option<PathBuf>, Option<PathBuf>);
type SessionKey = (Agent, String);

/// One agent session.
struct Entry {
    recall: Option<RecallSession>,
    roots: RootsKey,
    generation: u64,
    /// The query of the open turn, until the turn ends.
    turn: Option<String>,
}

impl Entry {
    fn new() -> Self {
        Self {
            recall: None,
            roots: (None, None),
            generation: 0,
            turn: None,
        }
    }
}

struct Slot {
    used: u64,
    entry: Arc<tokio::sync::Mutex<Entry>>,
}

#[derive(Default)]
struct Sessions {
    slots: HashMap<SessionKey, Slot>,
    clock: u64,
}

struct Server {
    home: Option<PathBuf>,
    options: ServeOptions,
    started: Instant,
    settings: Mutex<Settings>,
    sessions: Mutex<Sessions>,
    caches: Mutex<HashMap<RootsKey, Arc<WatchedCache>>>,
    sink: Arc<CountingSink>,
    served: AtomicU64,
    last_request: Mutex<Instant>,
    stop: Notify,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

impl Server {
    fn new(env: &Environment, options: ServeOptions) -> Self {
        let home = env.memrecall_home();
        let server = Self {
            sink: Arc::new(CountingSink {
                inner: telemetry_sink(home.as_deref()),
                ended: AtomicU64::new(0),
            }),
            home,
            options,
            started: Instant::now(),
            settings: Mutex::new(Settings {
                stamp: None,
                generation: 0,
                selector: None,
                design: DeliveryDesign::FastPath,
                idle_exit: IdleExit::DEFAULT.duration(),
            }),
            sessions: Mutex::new(Sessions::default()),
            caches: Mutex::new(HashMap::new()),
            served: AtomicU64::new(0),
            last_request: Mutex::new(Instant::now()),
            stop: Notify::new(),
        };
        server.reload_if_changed(true);
        server
    }

    fn idle_exit(&self) -> Duration {
        lock(&self.settings).idle_exit
    }

    /// Reloads `config.toml` when its modification time or size changed (or when `force`).
    fn reload_if_changed(&self, force: bool) {
        let Some(home) = &self.home else {
            return;
        };
        let path = home.join(crate::config::CONFIG_FILE_NAME);
        let stamp = std::fs::metadata(&path)
            .ok()
            .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
        let mut settings = lock(&self.settings);
        if !force && settings.stamp == stamp {
            return;
        }
        settings.stamp = stamp;
        settings.generation += 1;
        let loaded = Config::load(home)
            .map_err(|e| e.to_string())
            .and_then(|config| {
                let idle = config
                    .serve
                    .idle_exit
                    .unwrap_or(IdleExit::DEFAULT)
                    .duration();
                let (choice, design) = crate::hook::selector_settings(config);
                let selector = choice.build().map_err(|e| e.to_string())?;
                Ok((selector, design, idle))
            });
        match loaded {
            Ok((selector, design, idle)) => {
                settings.selector = selector;
                settings.design = design;
                settings.idle_exit = self.options.idle_exit.unwrap_or(idle);
            }
            Err(message) => {
                log(&format!("{message}; recalling without a selector"));
                settings.selector = None;
                settings.design = DeliveryDesign::FastPath;
                settings.idle_exit = self
                    .options
                    .idle_exit
                    .unwrap_or(IdleExit::DEFAULT.duration());
            }
        }
    }

    async fn accept_loop(self: &Arc<Self>, listener: &UnixListener, socket: &Path) {
        let ours = socket_identity(socket);
        let mut check = tokio::time::interval(SOCKET_CHECK_EVERY);
        loop {
            let idle_until = *lock(&self.last_request) + self.idle_exit();
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        *lock(&self.last_request) = Instant::now();
                        let server = Arc::clone(self);
                        tokio::spawn(async move { server.serve_connection(stream).await });
                    }
                    Err(e) => log(&format!("accept failed: {e}")),
                },
                () = tokio::time::sleep_until(idle_until) => {
                    if *lock(&self.last_request) + self.idle_exit() <= Instant::now() {
                        log("idle: exiting");
                        return;
                    }
                }
                _ = check.tick() => {
                    if socket_identity(socket) != ours {
                        log("the socket was removed or replaced: exiting");
                        return;
                    }
                    self.unwatch_idle_roots();
                }
                () = self.stop.notified() => return,
            }
        }
    }

    async fn serve_connection(self: Arc<Self>, mut stream: UnixStream) {
        let uid = current_uid();
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == uid => {}
            Ok(cred) => {
                log(&format!(
                    "refused a peer of uid {} (serving uid {uid})",
                    cred.uid()
                ));
                return;
            }
            Err(e) => {
                log(&format!(
                    "refused a peer whose credentials cannot be read: {e}"
                ));
                return;
            }
        }
        let (read, mut write) = stream.split();
        let mut line = String::new();
        let read = BufReader::new(read)
            .take(protocol::MAX_LINE_BYTES + 1)
            .read_line(&mut line)
            .await;
        let response = match read {
            Ok(0) => return,
            Ok(n) if u64::try_from(n).unwrap_or(u64::MAX) > protocol::MAX_LINE_BYTES => {
                Response::Error {
                    message: protocol::WireError::TooLong.to_string(),
                }
            }
            Ok(_) => match protocol::parse_request(&line) {
                Ok(request) => self.handle(request).await,
                Err(e) => Response::Error {
                    message: e.to_string(),
                },
            },
            Err(e) => {
                log(&format!("cannot read a request: {e}"));
                return;
            }
        };
        let stopping = matches!(response, Response::Stopping { .. });
        let mut out = match serde_json::to_vec(&ResponseLine {
            v: VERSION,
            response,
        }) {
            Ok(out) => out,
            Err(e) => {
                log(&format!("cannot encode an answer: {e}"));
                return;
            }
        };
        out.push(b'\n');
        // A client that gave up has closed its end; nothing to do about it.
        let _ = write.write_all(&out).await;
        let _ = write.shutdown().await;
        if stopping {
            self.stop.notify_one();
        }
    }

    async fn handle(&self, request: Request) -> Response {
        match request {
            Request::Event(event) => {
                let started = Instant::now();
                self.reload_if_changed(false);
                let mut answer = self.event(event).await;
                answer.handled_ms = millis(started.elapsed());
                Response::Delivery(answer)
            }
            Request::Status => Response::Status(self.status()),
            Request::Stop => Response::Stopping {
                pid: std::process::id(),
            },
        }
    }

    async fn event(&self, event: EventRequest) -> DeliveryAnswer {
        let Some(session) = event.session else {
            return match event.point {
                Point::Prompt(prompt) => {
                    let mut entry = Entry::new();
                    let answer = self.prompt(&mut entry, prompt).await;
                    if let Some(recall) = entry.recall.take() {
                        recall.shutdown();
                    }
                    answer
                }
                Point::ToolResult | Point::TurnEnd | Point::SessionEnd => DeliveryAnswer::default(),
            };
        };
        let key = (event.agent, session);
        if let Point::SessionEnd = event.point {
            let slot = lock(&self.sessions).slots.remove(&key);
            let Some(slot) = slot else {
                return DeliveryAnswer::default();
            };
            let mut entry = slot.entry.lock().await;
            let ended = end_turn(&mut entry);
            if let Some(recall) = entry.recall.take() {
                recall.shutdown();
            }
            return ended;
        }
        let Some(slot) = self.session(key, matches!(event.point, Point::Prompt(_))) else {
            return DeliveryAnswer::default();
        };
        let mut entry = slot.lock().await;
        match event.point {
            Point::Prompt(prompt) => self.prompt(&mut entry, prompt).await,
            Point::ToolResult => tool_result(&mut entry),
            Point::TurnEnd => end_turn(&mut entry),
            Point::SessionEnd => DeliveryAnswer::default(),
        }
    }

    /// The session's entry, created when `create` (evicting the least recently used one when
    /// full).
    fn session(&self, key: SessionKey, create: bool) -> Option<Arc<tokio::sync::Mutex<Entry>>> {
        let mut sessions = lock(&self.sessions);
        sessions.clock += 1;
        let now = sessions.clock;
        if let Some(slot) = sessions.slots.get_mut(&key) {
            slot.used = now;
            return Some(Arc::clone(&slot.entry));
        }
        if !create {
            return None;
        }
        if sessions.slots.len() >= MAX_SESSIONS {
            let oldest = sessions
                .slots
                .iter()
                .min_by_key(|(_, slot)| slot.used)
                .map(|(key, _)| key.clone());
            if let Some(evicted) = oldest.and_then(|key| sessions.slots.remove(&key)) {
                tokio::spawn(async move {
                    let mut entry = evicted.entry.lock().await;
                    if let Some(recall) = entry.recall.take() {
                        recall.shutdown();
                    }
                });
            }
        }
        let entry = Arc::new(tokio::sync::Mutex::new(Entry::new()));
        sessions.slots.insert(
            key,
            Slot {
                used: now,
                entry: Arc::clone(&entry),
            },
        );
        Some(entry)
    }

    async fn prompt(&self, entry: &mut Entry, prompt: PromptEvent) -> DeliveryAnswer {
        if prompt.query.trim().is_empty() {
            return DeliveryAnswer::default();
        }
        // Qwen Code fires its prompt event before each continuation: inside an open turn, the
        // same query again is the tool-result point, not a new recall.
        if prompt.repeat_is_continuation && entry.turn.as_deref() == Some(prompt.query.as_str()) {
            return tool_result(entry);
        }
        let roots = (prompt.project_root, prompt.user_root);
        let (generation, selector, design) = {
            let settings = lock(&self.settings);
            (
                settings.generation,
                settings.selector.clone(),
                settings.design,
            )
        };
        let rebuild =
            entry.recall.is_none() || entry.roots != roots || entry.generation != generation;
        if rebuild {
            if let Some(old) = entry.recall.take() {
                old.shutdown();
            }
            let mut config = SessionConfig::new(
                MemoryRoots {
                    project: roots.0.clone(),
                    user: roots.1.clone(),
                },
                Arc::clone(&self.sink) as Arc<dyn TelemetrySink>,
            );
            config.selector = selector;
            config.design = design;
            config.cache = self.cache_for(&roots);
            entry.roots = roots;
            entry.generation = generation;
            entry.recall = Some(RecallSession::new(config));
        }
        let Some(recall) = entry.recall.as_mut() else {
            return DeliveryAnswer::default();
        };
        recall.begin_query(&prompt.query, &[]);
        self.served.fetch_add(1, Ordering::Relaxed);
        let delivery = recall.consume_initial().await;
        entry.turn = Some(prompt.query);
        DeliveryAnswer {
            context: context_of(&delivery),
            fast_ms: fast_ms(recall),
            ..DeliveryAnswer::default()
        }
    }

    fn cache_for(&self, roots: &RootsKey) -> Arc<WatchedCache> {
        let mut caches = lock(&self.caches);
        if let Some(cache) = caches.get(roots) {
            return Arc::clone(cache);
        }
        let unused = caches
            .values()
            .filter(|c| Arc::strong_count(c) == 1)
            .count();
        if unused >= MAX_IDLE_CACHES {
            caches.retain(|_, cache| Arc::strong_count(cache) > 1);
        }
        let cache = document_cache();
        caches.insert(roots.clone(), Arc::clone(&cache));
        cache
    }

    /// Stops watching roots no recall has scanned for [`UNWATCH_AFTER`]; a later recall of one
    /// watches it again.
    fn unwatch_idle_roots(&self) {
        let caches: Vec<_> = lock(&self.caches).values().cloned().collect();
        for cache in caches {
            for root in cache.unwatch_idle(UNWATCH_AFTER) {
                log(&format!("stopped watching {} (idle)", root.display()));
            }
        }
    }

    /// How each scanned root's changes are noticed, one `root: mode` per line's worth, in root
    /// order: "watched", or the reason it is checked file by file.
    fn watch_modes(&self) -> String {
        let caches: Vec<_> = lock(&self.caches).values().cloned().collect();
        let mut modes: Vec<String> = caches
            .iter()
            .flat_map(|cache| cache.roots())
            .map(|root| match root.mode {
                WatchMode::Watching => format!("{}: watched", root.path.display()),
                WatchMode::StatFallback { reason } => format!(
                    "{}: every file checked on each recall ({reason})",
                    root.path.display()
                ),
                _ => format!("{}: {:?}", root.path.display(), root.mode),
            })
            .collect();
        modes.sort();
        modes.dedup();
        if modes.is_empty() {
            "no root scanned yet".to_owned()
        } else {
            modes.join("; ")
        }
    }

    fn status(&self) -> Status {
        let entries: Vec<_> = lock(&self.sessions)
            .slots
            .values()
            .map(|slot| Arc::clone(&slot.entry))
            .collect();
        let pending_recalls = entries
            .iter()
            .filter(|entry| {
                entry.try_lock().is_ok_and(|e| {
                    e.recall
                        .as_ref()
                        .is_some_and(RecallSession::has_pending_recall)
                })
            })
            .count();
        let mut roots: Vec<PathBuf> = lock(&self.caches)
            .keys()
            .flat_map(|(project, user)| project.iter().chain(user.iter()).cloned())
            .collect();
        roots.sort();
        roots.dedup();
        let (rss_kib, peak_rss_kib) = memory();
        Status {
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            uptime_s: self.started.elapsed().as_secs_f64(),
            idle_exit_s: self.idle_exit().as_secs_f64(),
            sessions: entries.len(),
            pending_recalls,
            roots,
            watch: self.watch_modes(),
            recalls_served: self.served.load(Ordering::Relaxed),
            recalls_ended: self.sink.ended.load(Ordering::Relaxed),
            rss_kib,
            peak_rss_kib,
        }
    }

    /// Ends every session (each pending recall gets its terminal event) and writes the catalogs.
    async fn shut_down(&self) {
        let slots: Vec<Slot> = lock(&self.sessions).slots.drain().map(|(_, s)| s).collect();
        for slot in slots {
            let mut entry = slot.entry.lock().await;
            if let Some(recall) = entry.recall.take() {
                recall.shutdown();
            }
        }
        let caches: Vec<_> = lock(&self.caches).drain().map(|(_, c)| c).collect();
        let written = tokio::task::spawn_blocking(move || {
            for cache in caches {
                cache.persist_catalogs();
            }
        });
        let _ = tokio::time::timeout(CATALOG_GRACE, written).await;
    }
}

fn tool_result(entry: &mut Entry) -> DeliveryAnswer {
    let Some(recall) = entry.recall.as_mut() else {
        return DeliveryAnswer::default();
    };
    DeliveryAnswer {
        context: context_of(&recall.consume_tool_result()),
        fast_ms: fast_ms(recall),
        ..DeliveryAnswer::default()
    }
}

/// When the latest recall had its first result, in milliseconds from its start: its fast
/// result, or its settled one when it settled without publishing one first (no selector). Also
/// after the initial ceiling, which a large cold tree can pass.
fn fast_ms(recall: &RecallSession) -> Option<f64> {
    let state = recall.latest_recall()?;
    if let Some(fast) = &state.fast {
        return Some(millis(fast.published_after));
    }
    state.settled.map(|settled| {
        millis(
            settled
                .timings
                .fast_published
                .unwrap_or(settled.timings.settled),
        )
    })
}

fn end_turn(entry: &mut Entry) -> DeliveryAnswer {
    entry.turn = None;
    let ended = match entry.recall.as_mut().map(RecallSession::end_turn) {
        Some(Delivery::Discarded(reason)) => reason.as_str().to_owned(),
        Some(Delivery::Delivered(_)) => "delivered".to_owned(),
        Some(Delivery::Pending) => "pending".to_owned(),
        Some(Delivery::Idle) | None => "none".to_owned(),
    };
    DeliveryAnswer {
        turn_ended: Some(ended),
        ..DeliveryAnswer::default()
    }
}

fn context_of(delivery: &Delivery) -> String {
    delivery
        .delivered()
        .map(|memory| crate::hook::fit(&memory.documents, &memory.prompt, SystemTime::now()))
        .unwrap_or_default()
}

/// The socket's device and inode, to notice it being removed or replaced.
fn socket_identity(socket: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::symlink_metadata(socket)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// Resident and peak resident memory in KiB, from `/proc/self/status` (Linux).
fn memory() -> (Option<u64>, Option<u64>) {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return (None, None);
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
    };
    (field("VmRSS:"), field("VmHWM:"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use delivery_telemetry::RecordingSink;

    fn counting(recording: &Arc<RecordingSink>) -> CountingSink {
        CountingSink {
            inner: Arc::clone(recording) as Arc<dyn TelemetrySink>,
            ended: AtomicU64::new(0),
        }
    }

    #[tokio::test]
    async fn a_turn_ended_with_its_recall_pending_emits_one_terminal_event() {
        let recording = Arc::new(RecordingSink::new());
        let sink = Arc::new(counting(&recording));
        let dir = tempfile::tempdir().unwrap();
        let config = SessionConfig::new(
            MemoryRoots {
                project: Some(dir.path().to_path_buf()),
                user: None,
            },
            Arc::clone(&sink) as Arc<dyn TelemetrySink>,
        );
        let mut entry = Entry::new();
        let mut recall = RecallSession::new(config);
        recall.begin_query("anything", &[]);
        entry.recall = Some(recall);
        entry.turn = Some("anything".into());
        let answer = end_turn(&mut entry);
        assert!(answer.turn_ended.is_some());
        assert_eq!(entry.turn, None);
        assert_eq!(sink.ended.load(Ordering::Relaxed), 1);
    }

    fn server_in(home: &Path) -> Server {
        let env = Environment::from_pairs([("MEMRECALL_HOME", home.as_os_str().to_owned())]);
        Server::new(&env, ServeOptions::default())
    }

    fn prompt_in(root: &Path, session: &str, query: &str) -> EventRequest {
        EventRequest {
            agent: Agent::QwenCode,
            session: Some(session.to_owned()),
            point: Point::Prompt(PromptEvent {
                query: query.to_owned(),
                repeat_is_continuation: true,
                project_root: Some(root.to_path_buf()),
                user_root: None,
            }),
        }
    }

    #[tokio::test]
    async fn a_full_table_evicts_the_least_recently_used_session() {
        let home = tempfile::tempdir().unwrap();
        let server = server_in(home.path());
        let key = |i: usize| (Agent::ClaudeCode, format!("s{i}"));
        for i in 0..MAX_SESSIONS {
            server.session(key(i), true).unwrap();
        }
        server.session(key(0), false).unwrap();

        server.session(key(MAX_SESSIONS), true).unwrap();

        let sessions = lock(&server.sessions);
        assert_eq!(sessions.slots.len(), MAX_SESSIONS);
        assert!(sessions.slots.contains_key(&key(0)));
        assert!(!sessions.slots.contains_key(&key(1)));
    }

    #[tokio::test]
    async fn a_repeated_qwen_prompt_inside_the_turn_is_no_new_recall_but_after_the_turn_it_is() {
        let home = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        std::fs::write(
            root.path().join("deploy.md"),
            "---\nname: Deploy checklist\ndescription: Steps to ship\ntype: project\n---\n\nBody.\n",
        )
        .unwrap();
        let server = server_in(home.path());

        let first = server
            .event(prompt_in(root.path(), "q", "deploy checklist"))
            .await;
        server
            .event(prompt_in(root.path(), "q", "deploy checklist"))
            .await;
        let served_in_turn = server.served.load(Ordering::Relaxed);
        server
            .event(EventRequest {
                agent: Agent::QwenCode,
                session: Some("q".into()),
                point: Point::TurnEnd,
            })
            .await;
        server
            .event(prompt_in(root.path(), "q", "deploy checklist"))
            .await;

        assert!(first.context.contains("Deploy checklist"), "{first:?}");
        assert_eq!(served_in_turn, 1);
        assert_eq!(server.served.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn a_changed_config_file_is_reloaded() {
        let home = tempfile::tempdir().unwrap();
        let config = home.path().join(crate::config::CONFIG_FILE_NAME);
        std::fs::write(&config, "[serve]\nidle_exit = \"90s\"\n").unwrap();
        let server = server_in(home.path());
        let generation = lock(&server.settings).generation;

        std::fs::write(&config, "[serve]\nidle_exit = \"1h\"\n").unwrap();
        server.reload_if_changed(false);

        assert_eq!(lock(&server.settings).generation, generation + 1);
        assert_eq!(server.idle_exit(), Duration::from_hours(1));
    }

    #[test]
    fn memory_figures_are_read_from_proc_on_linux() {
        let (rss, peak) = memory();
        if !Path::new("/proc/self/status").exists() {
            println!("no /proc here: memory figures are not reported");
            assert_eq!((rss, peak), (None, None));
            return;
        }
        assert!(
            rss.is_some_and(|r| r > 0) && peak >= rss,
            "{rss:?} {peak:?}"
        );
    }
}
