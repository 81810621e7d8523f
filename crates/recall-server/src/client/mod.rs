//! The client side: reach the user's server within a budget, starting it when it is not
//! running, and exchange one request for one answer.
//!
//! A missing socket, or one nobody listens on (connection refused), is noticed at once. A run
//! directory or socket that is not this user's, or that others may open, is refused without
//! connecting. Starting a server spawns `memrecall serve` in its own process group with its
//! output in the server log; the lock the running server holds keeps a second one from serving
//! when two clients race to start one.

use std::io::BufReader;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::local::{self, Stream};
use crate::protocol::{self, Request, RequestLine, Response, VERSION, WireError};
use crate::{PrivacyError, ServerPaths, check_private_dir, check_socket, try_lock};

/// How often a client retries connecting to a server it has just started.
const RETRY_EVERY: Duration = Duration::from_millis(2);

mod stop;

pub use stop::{Stopped, stop};

/// Whether a client starts a server that is not running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Autostart {
    /// Start one and wait for it within the connect budget.
    Yes,
    /// Report that none is running.
    No,
}

/// The time a client gives the server.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// When connecting (including starting a server) gives up.
    pub connect_by: Instant,
    /// How long the answer may take once the request is sent.
    pub answer_within: Duration,
}

/// What was wrong with a server's answer.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// The server refused the request, saying why.
    #[error("{0}")]
    Refused(String),
    /// The server answered something other than what the request asks for.
    #[error("unexpected answer to {request}: {answer:?}")]
    Unexpected {
        /// The request's kind.
        request: &'static str,
        /// What the server answered.
        answer: Box<Response>,
    },
}

/// Why no answer came from a server.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No server is running (and none was to be started).
    #[error("no server is running")]
    NotRunning,
    /// The run directory or socket is not safe to use.
    #[error("refusing the server socket: {0}")]
    Refused(#[from] PrivacyError),
    /// A server could not be started.
    #[error("cannot start a server: {0}")]
    Start(std::io::Error),
    /// No server answered the connection within the budget.
    #[error("no server answered within the budget")]
    Timeout,
    /// Connecting failed otherwise.
    #[error("cannot connect to the server: {0}")]
    Connect(std::io::Error),
    /// The exchange failed.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The server's answer was an error, or not an answer to the request.
    #[error("the server answered: {0}")]
    Server(#[from] AnswerError),
    /// What answered on the server's socket could not be confirmed to be the server it said.
    #[error("the server did not confirm: {0}")]
    NotConfirmed(String),
}

/// Sends `request` to the server at `paths` and returns its answer (never an `error` answer:
/// that is [`ClientError::Server`]). Connecting ends by `budget.connect_by`; sending the request
/// and reading the whole answer take at most `budget.answer_within` after that, however slowly
/// the server trickles its bytes.
pub fn exchange(
    paths: &ServerPaths,
    request: Request,
    autostart: Autostart,
    budget: Budget,
) -> Result<Response, ClientError> {
    let stream = connect(paths, autostart, budget.connect_by)?;
    exchange_on(&stream, request, Instant::now() + budget.answer_within)
}

/// Sends `request` on `stream` and reads the answer, all by `answer_by`.
fn exchange_on(
    stream: &Stream,
    request: Request,
    answer_by: Instant,
) -> Result<Response, ClientError> {
    let line = RequestLine {
        v: VERSION,
        request,
    };
    let bounded = Bounded {
        stream,
        by: answer_by,
    };
    let timeout_or_wire = |e| match e {
        WireError::Io(io) if is_timeout(&io) => ClientError::Timeout,
        other => ClientError::Wire(other),
    };
    protocol::write_line(&mut &bounded, &line).map_err(timeout_or_wire)?;
    let answer = protocol::read_line(BufReader::new(&bounded)).map_err(timeout_or_wire)?;
    match protocol::parse_response(&answer)? {
        Response::Error { message } => Err(AnswerError::Refused(message).into()),
        response => Ok(response),
    }
}

fn is_timeout(error: &std::io::Error) -> bool {
    matches!(
        error.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// A stream whose every read and write ends by `by`: each is given what is left of the time.
struct Bounded<'a> {
    stream: &'a Stream,
    by: Instant,
}

impl Bounded<'_> {
    /// What is left of the time; an error once none is.
    fn left(&self) -> std::io::Result<Duration> {
        let left = self.by.saturating_duration_since(Instant::now());
        if left.is_zero() {
            Err(std::io::ErrorKind::TimedOut.into())
        } else {
            Ok(left)
        }
    }
}

impl std::io::Read for &Bounded<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.stream.set_read_timeout(Some(self.left()?))?;
        let mut stream = self.stream;
        stream.read(buf)
    }
}

impl std::io::Write for &Bounded<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.stream.set_write_timeout(Some(self.left()?))?;
        let mut stream = self.stream;
        stream.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let mut stream = self.stream;
        stream.flush()
    }
}

/// A connected stream to this user's server.
fn connect(
    paths: &ServerPaths,
    autostart: Autostart,
    connect_by: Instant,
) -> Result<Stream, ClientError> {
    if let Some(stream) = try_connect(paths, connect_by)? {
        return Ok(stream);
    }
    if autostart == Autostart::No {
        return Err(ClientError::NotRunning);
    }
    start(paths)?;
    loop {
        if let Some(stream) = try_connect(paths, connect_by)? {
            return Ok(stream);
        }
        if Instant::now() + RETRY_EVERY > connect_by {
            return Err(ClientError::Timeout);
        }
        std::thread::sleep(RETRY_EVERY);
    }
}

/// Connects, by `connect_by`, when a server of this user listens; `None` when none does.
fn try_connect(paths: &ServerPaths, connect_by: Instant) -> Result<Option<Stream>, ClientError> {
    if !check_private_dir(&paths.dir)? || !check_socket(&paths.socket)? {
        return Ok(None);
    }
    match local::connect(&paths.socket, connect_by) {
        Ok(stream) => Ok(Some(stream)),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound
            ) =>
        {
            Ok(None)
        }
        Err(e) if e.kind() == std::io::ErrorKind::TimedOut => Err(ClientError::Timeout),
        Err(e) => Err(ClientError::Connect(e)),
    }
}

/// Whether a server holds the lock (running, or starting and not yet listening). A lock file
/// that is not a regular file (a named pipe in its place) is held by no server.
pub(crate) fn server_holds_lock(paths: &ServerPaths) -> bool {
    lock_held(paths).is_ok_and(|held| held)
}

/// Whether a server holds the lock; an error when the lock file is there and cannot be opened
/// (not a regular file, say), which no server could lock either.
fn lock_held(paths: &ServerPaths) -> Result<bool, agent_hooks::files::PrivateFileError> {
    use agent_hooks::files::{PrivateFileError, open_private};
    let file = match open_private(std::fs::OpenOptions::new().read(true), &paths.lock) {
        Ok(file) => file,
        Err(PrivateFileError::Open { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            return Ok(false);
        }
        Err(error) => return Err(error),
    };
    Ok(try_lock(&file).is_ok_and(|free| !free))
}

/// Starts `memrecall serve` detached, unless a server already holds the lock.
fn start(paths: &ServerPaths) -> Result<(), ClientError> {
    // A lock file no server could open (a named pipe in its place) is said now, rather than
    // left to the server's log.
    if lock_held(paths).map_err(|e| ClientError::Start(e.into()))? {
        return Ok(());
    }
    let log_dir = paths.log.parent().unwrap_or(&paths.dir);
    agent_hooks::files::private_dir(log_dir).map_err(ClientError::Start)?;
    let log = agent_hooks::files::open_private(
        std::fs::OpenOptions::new().create(true).append(true),
        &paths.log,
    )
    .map_err(|e| ClientError::Start(e.into()))?;
    let err = log.try_clone().map_err(ClientError::Start)?;
    let exe = std::env::current_exe().map_err(ClientError::Start)?;
    // The child is not waited for; it outlives this process and is adopted by init.
    local::detach(Command::new(exe).arg("serve"))
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .spawn()
        .map_err(ClientError::Start)?;
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    pub(super) fn paths_in(dir: &std::path::Path) -> ServerPaths {
        let run = dir.join("run");
        std::fs::create_dir(&run).unwrap();
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
        ServerPaths {
            socket: run.join("serve.sock"),
            lock: run.join("serve.lock"),
            log: dir.join("serve.log"),
            dir: run,
        }
    }

    fn budget() -> Budget {
        Budget {
            connect_by: Instant::now() + Duration::from_secs(30),
            answer_within: Duration::from_secs(30),
        }
    }

    #[test]
    fn a_missing_socket_without_autostart_is_not_running() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        let error = exchange(&paths, Request::Status, Autostart::No, budget()).unwrap_err();
        assert!(matches!(error, ClientError::NotRunning), "{error}");
    }

    #[test]
    fn a_socket_nobody_listens_on_is_not_running() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        drop(std::os::unix::net::UnixListener::bind(&paths.socket).unwrap());
        let error = exchange(&paths, Request::Status, Autostart::No, budget()).unwrap_err();
        assert!(matches!(error, ClientError::NotRunning), "{error}");
    }

    #[test]
    fn an_answer_is_read_back_from_a_listening_socket() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        let listener = std::os::unix::net::UnixListener::bind(&paths.socket).unwrap();
        let server = std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let line = protocol::read_line(BufReader::new(&stream)).unwrap();
            assert_eq!(protocol::parse_request(&line).unwrap(), Request::Stop);
            let answer = protocol::ResponseLine {
                v: VERSION,
                response: Response::Stopping { pid: 9 },
            };
            protocol::write_line(&mut &stream, &answer).unwrap();
        });
        let answer = exchange(&paths, Request::Stop, Autostart::No, budget()).unwrap();
        server.join().unwrap();
        assert_eq!(answer, Response::Stopping { pid: 9 });
    }

    #[test]
    fn a_server_that_never_answers_costs_the_answer_budget_and_is_a_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        let _listener = std::os::unix::net::UnixListener::bind(&paths.socket).unwrap();
        let budget = Budget {
            connect_by: Instant::now() + Duration::from_secs(30),
            answer_within: Duration::from_millis(10),
        };
        let error = exchange(&paths, Request::Status, Autostart::No, budget).unwrap_err();
        assert!(matches!(error, ClientError::Timeout), "{error}");
    }

    #[test]
    fn a_server_that_trickles_its_answer_is_cut_off_at_the_answer_budget() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        let listener = std::os::unix::net::UnixListener::bind(&paths.socket).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopping = std::sync::Arc::clone(&stop);
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            // One byte every 10 ms, never a newline: each read is quick, the answer never ends.
            while !stopping.load(std::sync::atomic::Ordering::Relaxed)
                && std::io::Write::write_all(&mut stream, b" ").is_ok()
            {
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        let budget = Budget {
            connect_by: Instant::now() + Duration::from_secs(30),
            answer_within: Duration::from_millis(200),
        };
        let asked = Instant::now();
        let error = exchange(&paths, Request::Status, Autostart::No, budget).unwrap_err();
        let took = asked.elapsed();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        server.join().unwrap();
        assert!(matches!(error, ClientError::Timeout), "{error}");
        assert!(took < Duration::from_secs(5), "took {took:?}");
    }

    /// A listener at `path` with the smallest backlog, which never accepts.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    fn never_accepting(path: &std::path::Path) -> std::os::fd::OwnedFd {
        use rustix::net::{AddressFamily, SocketAddrUnix, SocketType};
        let socket = rustix::net::socket(AddressFamily::UNIX, SocketType::STREAM, None).unwrap();
        rustix::net::bind(&socket, &SocketAddrUnix::new(path).unwrap()).unwrap();
        rustix::net::listen(&socket, 0).unwrap();
        socket
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_listener_whose_backlog_is_full_costs_the_connect_budget_and_is_a_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        let _listener = never_accepting(&paths.socket);
        // Fill the backlog: connections are queued until one is not.
        let mut queued = Vec::new();
        let full = loop {
            assert!(queued.len() < 1000, "the backlog never filled");
            match local::connect(&paths.socket, Instant::now() + Duration::from_millis(20)) {
                Ok(stream) => queued.push(stream),
                Err(e) => break e,
            }
        };
        assert_eq!(full.kind(), std::io::ErrorKind::TimedOut, "{full}");
        let budget = Budget {
            connect_by: Instant::now() + Duration::from_millis(100),
            answer_within: Duration::from_secs(30),
        };
        let asked = Instant::now();
        let error = exchange(&paths, Request::Status, Autostart::No, budget).unwrap_err();
        let took = asked.elapsed();
        assert!(matches!(error, ClientError::Timeout), "{error}");
        assert!(took < Duration::from_secs(5), "took {took:?}");
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_listener_that_never_accepts_costs_the_answer_budget_and_is_a_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        let _listener = never_accepting(&paths.socket);
        let budget = Budget {
            connect_by: Instant::now() + Duration::from_secs(30),
            answer_within: Duration::from_millis(100),
        };
        let asked = Instant::now();
        let error = exchange(&paths, Request::Status, Autostart::No, budget).unwrap_err();
        let took = asked.elapsed();
        assert!(matches!(error, ClientError::Timeout), "{error}");
        assert!(took < Duration::from_secs(5), "took {took:?}");
    }
}
