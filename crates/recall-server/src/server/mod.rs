//! The server: accepts connections on the user's socket, keeps one recall session per agent
//! session, and exits after an idle time or on `stop`.
//!
//! Sessions are keyed by agent and the agent's `session_id` and bounded (`MAX_SESSIONS`, 64): the
//! least recently used is evicted, its recall cancelled with its terminal telemetry emitted.
//! Each has its own exclusion set (what it delivered), so no session's deliveries change
//! another's. Sessions over the same roots share one document cache; the HTTP selector (and its
//! connections) is shared by all. `config.toml` is checked on every request and reloaded when
//! it changed; a session picks up a new selector at its next prompt.
//!
//! This module starts and stops the server and holds its configuration; `connection` answers
//! requests within the bounds of `limits`, `sessions` keeps the session table and its document
//! caches, `status` reports. The log (`serve.log`) is kept under the hook log's bound, with one
//! older copy (`serve.log.1`).

mod connection;
mod limits;
mod problems;
mod selector_key;
mod sessions;
mod status;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, SystemTime};

use memory_watch::{WatchHub, WatchedCache};
use recall_facade::{Phase, RecallOptions, TelemetryEvent, TelemetrySink};
use tokio::sync::Notify;
use tokio::time::Instant;

use self::limits::{Burst, Limits};
pub use self::limits::{MAX_CONNECTIONS, REQUEST_DEADLINE};
pub(crate) use self::problems::note_of;
pub(crate) use self::sessions::walk_limits;
use self::sessions::{RootsKey, Sessions, Slot};
use crate::PrivacyError;
use crate::{CONFIG_FILE_NAME, Program};
use crate::{ServerPaths, check_private_dir, try_lock};
use agent_hooks::Environment;

/// The most agent sessions kept at once.
pub(crate) const MAX_SESSIONS: usize = 64;
/// How long the server waits without a request before it exits, unless the configuration says.
pub const DEFAULT_IDLE_EXIT: Duration = Duration::from_mins(30);
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
    /// The idle time; `None` takes `config.toml`'s, else [`DEFAULT_IDLE_EXIT`].
    pub idle_exit: Option<Duration>,
    /// The most connections served at once; `None` takes [`MAX_CONNECTIONS`].
    pub max_connections: Option<usize>,
    /// How long a client has to send its request; `None` takes [`REQUEST_DEADLINE`].
    pub request_deadline: Option<Duration>,
}

/// Why a configuration generation's settings cannot be used: the file, or the selector it
/// chooses.
#[derive(Debug, thiserror::Error)]
enum SettingsError {
    /// The program cannot use its configuration file.
    #[error(transparent)]
    Config(#[from] crate::ConfigError),
    /// The selector it chooses cannot be built.
    #[error(transparent)]
    Selector(#[from] recall_facade::FacadeError),
}

/// Runs the server on the user's socket (Windows: named pipe) until it is idle for its idle
/// time or asked to stop.
pub fn run(
    options: ServeOptions,
    env: &Environment,
    program: &'static dyn Program,
) -> Result<(), ServeError> {
    let paths = ServerPaths::from_env(env).ok_or(ServeError::NoRunDirectory)?;
    let _ = LOG.set(Mutex::new(crate::log::Log::new(paths.log.clone())));
    if let Some(log) = LOG.get() {
        program.trace_to(log);
    }
    if !check_private_dir(&paths.dir)? {
        agent_hooks::files::private_dir(&paths.dir)
            .map_err(ServeError::io("cannot create", &paths.dir))?;
        check_private_dir(&paths.dir)?;
    }
    let lock = agent_hooks::files::open_private(
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
        &paths.lock,
    )
    .map_err(|e| ServeError::io("cannot open", &paths.lock)(e.into()))?;
    if !try_lock(&lock).map_err(ServeError::io("cannot lock", &paths.lock))? {
        return Err(ServeError::AlreadyRunning);
    }
    // Holding the lock, any socket left there belongs to a server that is gone (Windows has no
    // socket file: nothing is there).
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
        let mut listener = crate::local::Listener::bind(&paths.socket)
            .map_err(ServeError::io("cannot listen on", &paths.socket))?;
        let server = Arc::new(Server::new(env, options, program));
        log(&format!(
            "serving on {} (pid {}, idle exit {})",
            listener.address(),
            std::process::id(),
            humantime::format_duration(server.idle_exit())
        ));
        server.accept_loop(&mut listener).await;
        server.shut_down().await;
        Ok::<_, ServeError>(())
    });
    let _ = std::fs::remove_file(&paths.socket);
    runtime.shutdown_timeout(Duration::from_millis(100));
    drop(lock);
    log("stopped");
    served
}

/// The server's log, once [`run`] knows where it is.
static LOG: OnceLock<Mutex<crate::log::Log>> = OnceLock::new();

/// One line in the server's log, else (no log known, or it cannot be written) on its standard
/// error.
fn log(line: &str) {
    let line = format!("serve: {line}");
    if let Some(log) = LOG.get()
        && lock(log).append(&line).is_ok()
    {
        return;
    }
    let now = humantime::format_rfc3339_seconds(SystemTime::now());
    eprintln!("{now} {line}");
}

/// The sink every recall's telemetry goes to: the history under `$MEMRECALL_HOME/telemetry`
/// (what `memrecall stats` reads; unless `[telemetry] record = false` when the server starts)
/// and `tracing`.
fn telemetry_sink(program: &dyn Program, home: Option<&Path>) -> Arc<dyn TelemetrySink> {
    program.telemetry(home).sink
}

/// The document cache for one pair of roots: catalogs kept (where `catalogs` says; none without
/// a place), roots watched through the server's one watcher, so a warm recall re-reads only what
/// changed instead of checking every file.
fn document_cache(
    catalogs: Option<memory_scan::CatalogStore>,
    watcher: &Arc<WatchHub>,
) -> Arc<WatchedCache> {
    let cache = match catalogs {
        Some(store) => memory_scan::DocumentCache::with_catalog_store(store),
        None => memory_scan::DocumentCache::new(),
    };
    Arc::new(WatchedCache::sharing(cache, watcher))
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
    /// What `config.toml` chooses, its selector built once per generation and shared by the
    /// sessions.
    options: RecallOptions,
    /// That selector, when it is the HTTP one: the key it sends follows the hooks' environment.
    keyed: Option<Arc<selector_key::KeyedSelector>>,
    idle_exit: Duration,
}

struct Server {
    home: Option<PathBuf>,
    /// What the program running the server reads and records.
    program: &'static dyn Program,
    options: ServeOptions,
    started: Instant,
    settings: Mutex<Settings>,
    sessions: Mutex<Sessions>,
    caches: Mutex<HashMap<RootsKey, Arc<WatchedCache>>>,
    /// The one watcher every cache's roots are watched through (one thread, one inotify
    /// instance, whatever the number of projects).
    watcher: Arc<WatchHub>,
    /// Refusals already logged (see `Server::log_refusal`).
    refusals_logged: Mutex<std::collections::HashSet<String>>,
    /// Selector and configuration problems, for the logs and `status`.
    problems: Mutex<problems::Problems>,
    sink: Arc<CountingSink>,
    served: AtomicU64,
    last_request: Mutex<Instant>,
    stop: Notify,
    limits: Limits,
    /// Connections closed for being over the bound.
    refused: Mutex<Burst>,
    /// Clients dropped for stalling or sending too much.
    drops: Mutex<Burst>,
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
    fn new(env: &Environment, options: ServeOptions, program: &'static dyn Program) -> Self {
        let home = env.memrecall_home();
        let server = Self {
            sink: Arc::new(CountingSink {
                inner: telemetry_sink(program, home.as_deref()),
                ended: AtomicU64::new(0),
            }),
            home,
            program,
            options,
            started: Instant::now(),
            settings: Mutex::new(Settings {
                stamp: None,
                generation: 0,
                options: RecallOptions::default(),
                keyed: None,
                idle_exit: DEFAULT_IDLE_EXIT,
            }),
            sessions: Mutex::new(Sessions::default()),
            caches: Mutex::new(HashMap::new()),
            watcher: Arc::new(WatchHub::new()),
            refusals_logged: Mutex::new(std::collections::HashSet::new()),
            problems: Mutex::new(problems::Problems::default()),
            served: AtomicU64::new(0),
            last_request: Mutex::new(Instant::now()),
            stop: Notify::new(),
            limits: Limits::new(
                options.max_connections.unwrap_or(MAX_CONNECTIONS),
                options.request_deadline.unwrap_or(REQUEST_DEADLINE),
            ),
            refused: Mutex::new(Burst::default()),
            drops: Mutex::new(Burst::default()),
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
        let path = home.join(CONFIG_FILE_NAME);
        let stamp = std::fs::metadata(&path)
            .ok()
            .map(|m| (m.modified().unwrap_or(SystemTime::UNIX_EPOCH), m.len()));
        let mut settings = lock(&self.settings);
        if !force && settings.stamp == stamp {
            return;
        }
        settings.stamp = stamp;
        settings.generation += 1;
        let loaded = self
            .program
            .server_config(home)
            .map_err(SettingsError::from)
            .and_then(|config| {
                let idle = config.idle_exit.unwrap_or(DEFAULT_IDLE_EXIT);
                let mut chosen = config.options;
                lock(&self.problems).new_generation();
                let selector = std::mem::take(&mut chosen.selector);
                let keyed = match selector {
                    recall_facade::SelectorChoice::Http(http) => {
                        let keyed = Arc::new(selector_key::KeyedSelector::new(http)?);
                        chosen.selector = recall_facade::SelectorChoice::Custom(
                            Arc::clone(&keyed) as Arc<dyn recall_facade::Selector>
                        );
                        Some(keyed)
                    }
                    other => {
                        chosen.selector = other.build()?.into();
                        None
                    }
                };
                Ok::<_, SettingsError>((chosen, keyed, idle))
            });
        match loaded {
            Ok((options, keyed, idle)) => {
                settings.options = options;
                settings.keyed = keyed;
                settings.idle_exit = self.options.idle_exit.unwrap_or(idle);
            }
            Err(error) => {
                let line = format!("{error}; recalling without a selector");
                log(&line);
                let mut problems = lock(&self.problems);
                problems.new_generation();
                problems.config_error(line);
                settings.options = RecallOptions::default();
                settings.keyed = None;
                settings.idle_exit = self.options.idle_exit.unwrap_or(DEFAULT_IDLE_EXIT);
            }
        }
    }

    /// Takes the selector key a prompt's hook brought (see [`selector_key`]); a new one is said
    /// in the log, by its variable's name only, and the selector's failures may be said again.
    fn offer_key(&self, key: &crate::protocol::SelectorKey) {
        let Some(keyed) = lock(&self.settings).keyed.clone() else {
            return;
        };
        match keyed.offer(&key.variable, &key.value) {
            Ok(false) => {}
            Ok(true) => {
                lock(&self.problems).key_arrived();
                log(&format!(
                    "the selector now sends the key a hook's environment holds in {}",
                    keyed.variable()
                ));
            }
            Err(why) => self.log_refusal(&format!(
                "not using the key a hook's environment holds in {}: {why}",
                keyed.variable()
            )),
        }
    }

    /// The variable `api_key_env` names when the HTTP selector sends no key.
    fn selector_key_unset(&self) -> Option<String> {
        let keyed = lock(&self.settings).keyed.clone()?;
        (!keyed.has_key()).then(|| keyed.variable().to_owned())
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
