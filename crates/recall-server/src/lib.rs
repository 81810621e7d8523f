// Unsafe code is denied but for the Win32 calls of the Windows platform module (`local`).
#![deny(unsafe_code)]
//! The per-user recall server's wire side: where one user's server lives ([`ServerPaths`]), the
//! socket protocol ([`protocol`]: one JSON line each way, framed by [`frame::FrameDecoder`], the
//! one framing both sides use) and the client ([`client::exchange`]) an agent's hook asks it
//! through, starting it when none runs; the server itself ([`server::run`]: sessions,
//! connections, limits, status, problems); one hook call ([`hook::run`]: parse the agent's stdin,
//! ask the server or recall in this process, print the agent's stdout); and the bounded log files
//! both write ([`log::Log`]). What the program running them reads from its configuration file
//! and where its telemetry goes come through a [`Program`].
//!
//! The server keeps each agent session's recall alive between the prompt event and the tool
//! events, so the model's choice can land at the tool-result point without repeating the fast
//! documents. Where it lives: the run directory `$XDG_RUNTIME_DIR/memrecall/`, else
//! `$MEMRECALL_HOME/run/` (mode 0700), holding the socket `serve.sock` (mode 0600) and the lock
//! `serve.lock` the server holds for its whole life, so two servers never serve one user. Its log
//! is `$MEMRECALL_HOME/logs/serve.log`. Both sides refuse a run directory or socket that another
//! user owns or that others may open, and the server refuses a peer of another uid (checked with
//! the peer's credentials). There is no TCP. On Windows the socket is a named pipe whose name is
//! derived from the user's SID and the socket's path, created first-instance-only with a DACL
//! admitting this user alone and refusing remote clients; each end checks that the other's
//! process runs as this user.
//!
//! # Example
//!
//! ```
//! use agent_hooks::Environment;
//! use recall_server::ServerPaths;
//! use recall_server::protocol::{self, Request, Response};
//!
//! let env = Environment::from_pairs([("MEMRECALL_HOME", "/home/ana/.memrecall")]);
//! let paths = ServerPaths::from_env(&env).expect("a memrecall home");
//! assert!(paths.socket.ends_with("run/serve.sock"));
//!
//! let request = protocol::parse_request(r#"{"v":3,"kind":"status"}"#)?;
//! assert_eq!(request, Request::Status);
//! let answer = protocol::parse_response(r#"{"v":3,"kind":"stopping","pid":42}"#)?;
//! assert_eq!(answer, Response::Stopping { pid: 42 });
//! # Ok::<(), protocol::WireError>(())
//! ```

pub mod client;
/// The socket's framing: one line of UTF-8 per message ([`line_frame`]).
pub use line_frame as frame;
pub mod hook;
mod local;
pub mod log;
pub mod protocol;
pub mod server;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use delivery_telemetry::RotatingSink;
use recall_facade::{RecallOptions, TelemetrySink};

pub use local::remove_dir_command;
use local::{check_private_dir, check_socket};

use std::fs::File;
use std::path::PathBuf;

use agent_hooks::Environment;

/// The configuration file under the memrecall home: the server reloads it when it changes, and
/// the hook says a selector failure again once it changed.
pub const CONFIG_FILE_NAME: &str = "config.toml";

/// What the program running the server or a hook gives them: its reading of the configuration
/// file, its telemetry history and its `tracing` subscriber. Implemented by a `static` of the
/// program's.
pub trait Program: Send + Sync + std::fmt::Debug {
    /// What [`CONFIG_FILE_NAME`] under a memrecall home chooses for the server; why it cannot be
    /// used.
    fn server_config(&self, home: &Path) -> Result<ServerConfig, ConfigError>;
    /// What the configuration under `env`'s memrecall home chooses for a recall (the defaults
    /// without a home); why it cannot be used.
    fn recall_options(&self, env: &Environment) -> Result<RecallOptions, ConfigError>;
    /// The telemetry of the recalls of this process for a memrecall home: the history (unless
    /// the configuration turns it off) and `tracing`.
    fn telemetry(&self, home: Option<&Path>) -> Telemetry;
    /// Sends the libraries' `tracing` events of this process to a log.
    fn trace_to(&self, log: &'static Mutex<log::Log>);
}

/// Why the program's configuration file cannot be used: the program's own error, which names
/// the file and what is wrong with it.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct ConfigError(Box<dyn std::error::Error + Send + Sync>);

impl ConfigError {
    /// The program's error `source`.
    pub fn new(source: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self(Box::new(source))
    }
}

/// What the configuration file chooses for the server.
#[derive(Debug, Default)]
pub struct ServerConfig {
    /// The recall options every session is built with.
    pub options: RecallOptions,
    /// The idle time after which the server exits; `None`: [`server::DEFAULT_IDLE_EXIT`].
    pub idle_exit: Option<Duration>,
}

/// A process's telemetry: the sinks its recalls emit to, and the history among them (if
/// recorded), whose dropped events its owner reports.
#[derive(Debug, Clone)]
pub struct Telemetry {
    /// Everything, fanned out.
    pub sink: Arc<dyn TelemetrySink>,
    /// The history under the memrecall home, unless turned off or there is no home.
    pub history: Option<Arc<RotatingSink>>,
}

/// Where one user's server keeps its socket, lock and log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerPaths {
    /// The private run directory.
    pub dir: PathBuf,
    /// The socket.
    pub socket: PathBuf,
    /// The lock the running server holds.
    pub lock: PathBuf,
    /// The server's log.
    pub log: PathBuf,
}

impl ServerPaths {
    /// The paths for `env`; `None` without `XDG_RUNTIME_DIR`, `MEMRECALL_HOME` and `HOME`.
    pub fn from_env(env: &Environment) -> Option<Self> {
        let home = env.memrecall_home();
        let dir = match env.path("XDG_RUNTIME_DIR") {
            Some(runtime) => runtime.join("memrecall"),
            None => home.as_ref()?.join("run"),
        };
        let log = match &home {
            Some(home) => home.join("logs").join("serve.log"),
            None => dir.join("serve.log"),
        };
        Some(Self {
            socket: dir.join("serve.sock"),
            lock: dir.join("serve.lock"),
            log,
            dir,
        })
    }
}

/// Why a run directory or socket may not be used.
#[derive(Debug, thiserror::Error)]
pub enum PrivacyError {
    /// The path is not what it should be (a directory, a socket).
    #[error("{path} is not a {expected}")]
    WrongType {
        /// The path.
        path: PathBuf,
        /// What it should be.
        expected: &'static str,
    },
    /// Another user owns it.
    #[error("{path} belongs to uid {owner}, not to this user (uid {uid})")]
    ForeignOwner {
        /// The path.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// This process's uid.
        uid: u32,
    },
    /// Others may open it.
    #[error("{path} has mode {mode:o}: others may open it")]
    OpenToOthers {
        /// The path.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// It could not be inspected.
    #[error("cannot inspect {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

/// Tries to take the exclusive lock on `file` without waiting: `Ok(false)` when another process
/// holds it.
pub(crate) fn try_lock(file: &File) -> std::io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn the_run_directory_is_under_xdg_runtime_dir_when_set() {
        let env = Environment::from_pairs([("XDG_RUNTIME_DIR", "/run/user/7"), ("HOME", "/h")]);
        let paths = ServerPaths::from_env(&env).unwrap();
        assert_eq!(paths.socket, Path::new("/run/user/7/memrecall/serve.sock"));
        assert_eq!(paths.log, Path::new("/h/.memrecall/logs/serve.log"));
    }

    #[test]
    fn without_xdg_runtime_dir_the_run_directory_is_in_the_memrecall_home() {
        let env = Environment::from_pairs([("MEMRECALL_HOME", "/m")]);
        let paths = ServerPaths::from_env(&env).unwrap();
        assert_eq!(paths.dir, Path::new("/m/run"));
        assert_eq!(paths.lock, Path::new("/m/run/serve.lock"));
    }

    #[test]
    fn a_second_lock_on_a_held_lock_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.lock");
        let first = File::create(&path).unwrap();
        let second = File::open(&path).unwrap();
        assert!(try_lock(&first).unwrap());
        assert!(!try_lock(&second).unwrap());
        drop(first);
        assert!(try_lock(&second).unwrap());
    }
}
