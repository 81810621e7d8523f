//! Stopping the user's server, and knowing that it stopped.
//!
//! Any process of this user could listen on the server's socket and answer "stopping". So an
//! answer counts only when the process that answered is memrecall's server: the process the
//! kernel says listens on the socket (its peer credentials, where the platform gives them) is
//! the pid the answer names and of this user, a process held the server's lock (which the
//! server holds for its whole life) when asked, and the lock is released or the process gone
//! within the time given.

use std::time::{Duration, Instant};

use super::{AnswerError, Autostart, ClientError, connect, exchange_on, server_holds_lock};
use crate::ServerPaths;
use crate::local;
use crate::protocol::{Request, Response};

/// How often `stop` looks whether the server has exited.
const EXIT_POLL: Duration = Duration::from_millis(10);

/// What asking the server to stop came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// No server was running.
    NotRunning,
    /// The server of this pid answered, was confirmed, and exited.
    Exited {
        /// Its process id.
        pid: u32,
    },
}

/// Asks the user's server to stop and waits for it to exit: connecting and the answer end by
/// `answer_by`, the wait for the exit by `exit_by`. An answer that cannot be confirmed to come
/// from memrecall's server (see the module docs) is [`ClientError::NotConfirmed`].
pub fn stop(
    paths: &ServerPaths,
    answer_by: Instant,
    exit_by: Instant,
) -> Result<Stopped, ClientError> {
    let held = server_holds_lock(paths);
    let stream = match connect(paths, Autostart::No, answer_by) {
        Ok(stream) => stream,
        Err(ClientError::NotRunning) => return Ok(Stopped::NotRunning),
        Err(error) => return Err(error),
    };
    let peer = local::peer(&stream);
    let response = exchange_on(&stream, Request::Stop, answer_by)?;
    let Response::Stopping { pid } = response else {
        return Err(AnswerError::Unexpected {
            request: "stop",
            answer: Box::new(response),
        }
        .into());
    };
    if let Some(peer) = &peer
        && peer.pid != pid
    {
        return Err(ClientError::NotConfirmed(format!(
            "the answer names pid {pid}, but the process listening on {} is pid {}",
            paths.socket.display(),
            peer.pid
        )));
    }
    if let Some(peer) = &peer
        && peer.user != local::current_user()
    {
        return Err(ClientError::NotConfirmed(format!(
            "the process listening on {} (pid {pid}) is of user {}, not this user's",
            paths.socket.display(),
            peer.user
        )));
    }
    if !held {
        return Err(ClientError::NotConfirmed(format!(
            "pid {pid} answered, but no process held {}, the lock memrecall's server holds",
            paths.lock.display()
        )));
    }
    loop {
        let gone = peer.is_some() && !local::process_exists(pid);
        if gone || !server_holds_lock(paths) {
            return Ok(Stopped::Exited { pid });
        }
        if Instant::now() >= exit_by {
            return Err(ClientError::NotConfirmed(format!(
                "pid {pid} said it was stopping, but {} is still held",
                paths.lock.display()
            )));
        }
        std::thread::sleep(EXIT_POLL);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::io::BufReader;
    use std::os::unix::net::UnixListener;

    use super::*;
    use crate::client::tests::paths_in;
    use crate::protocol::{self, ResponseLine, VERSION};

    /// A listener at the server's socket that answers one request with `stopping` naming `pid`,
    /// then runs `after`.
    fn answer_stopping(
        listener: UnixListener,
        pid: u32,
        after: impl FnOnce() + Send + 'static,
    ) -> std::thread::JoinHandle<()> {
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let _ = protocol::read_line(BufReader::new(&stream)).unwrap();
            let answer = ResponseLine {
                v: VERSION,
                response: Response::Stopping { pid },
            };
            protocol::write_line(&mut &stream, &answer).unwrap();
            after();
        })
    }

    fn lock(paths: &ServerPaths) -> std::fs::File {
        let file = std::fs::File::create(&paths.lock).unwrap();
        assert!(crate::try_lock(&file).unwrap());
        file
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    #[test]
    fn a_listener_answering_stopping_for_another_pid_is_not_confirmed() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        let _lock = lock(&paths);
        let listener = UnixListener::bind(&paths.socket).unwrap();
        let server = answer_stopping(listener, 1, || {});
        let error = stop(&paths, soon(), soon()).unwrap_err();
        server.join().unwrap();
        assert!(matches!(error, ClientError::NotConfirmed(_)), "{error}");
    }

    #[test]
    fn a_listener_while_no_process_holds_the_lock_is_not_confirmed() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        let listener = UnixListener::bind(&paths.socket).unwrap();
        let server = answer_stopping(listener, std::process::id(), || {});
        let error = stop(&paths, soon(), soon()).unwrap_err();
        server.join().unwrap();
        assert!(matches!(error, ClientError::NotConfirmed(_)), "{error}");
    }

    #[test]
    fn a_server_that_answers_and_releases_its_lock_is_stopped() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        let lock = lock(&paths);
        let listener = UnixListener::bind(&paths.socket).unwrap();
        let server = answer_stopping(listener, std::process::id(), move || drop(lock));
        let stopped = stop(&paths, soon(), soon()).unwrap();
        server.join().unwrap();
        assert_eq!(
            stopped,
            Stopped::Exited {
                pid: std::process::id()
            }
        );
    }

    #[test]
    fn a_server_that_keeps_its_lock_past_the_wait_is_not_confirmed() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        let _lock = lock(&paths);
        let listener = UnixListener::bind(&paths.socket).unwrap();
        let server = answer_stopping(listener, std::process::id(), || {});
        let exit_by = Instant::now() + Duration::from_millis(50);
        let error = stop(&paths, soon(), exit_by).unwrap_err();
        server.join().unwrap();
        assert!(matches!(error, ClientError::NotConfirmed(_)), "{error}");
    }

    #[test]
    fn without_a_server_stop_says_none_was_running() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths_in(dir.path());
        assert_eq!(stop(&paths, soon(), soon()).unwrap(), Stopped::NotRunning);
    }
}
