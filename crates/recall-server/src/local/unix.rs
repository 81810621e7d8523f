//! The server's platform on Unix: a Unix socket in a directory only its user may open, the
//! peer's credentials, and a process group of its own for a started server.

use std::io::ErrorKind;
use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};

use crate::PrivacyError;

/// The client's connection to the server.
pub type Stream = std::os::unix::net::UnixStream;

/// How often connecting is tried again while the server's backlog is full.
const RETRY_FULL_BACKLOG: Duration = Duration::from_millis(2);

/// Connects to the server's socket at `path`, giving up with [`ErrorKind::TimedOut`] at
/// `deadline`. The socket connects without blocking: a listener whose backlog is full (a
/// stopped server, one that never accepts) is tried again until the deadline, never waited
/// on. The stream returned blocks, with no timeout of its own.
pub fn connect(path: &Path, deadline: Instant) -> std::io::Result<Stream> {
    let address = SocketAddrUnix::new(path)?;
    // Apple's systems have no SOCK_CLOEXEC: the flag is set on the descriptor instead.
    #[cfg(not(target_vendor = "apple"))]
    let flags = SocketFlags::CLOEXEC;
    #[cfg(target_vendor = "apple")]
    let flags = SocketFlags::empty();
    loop {
        let fd = rustix::net::socket_with(AddressFamily::UNIX, SocketType::STREAM, flags, None)?;
        #[cfg(target_vendor = "apple")]
        rustix::io::fcntl_setfd(&fd, rustix::io::FdFlags::CLOEXEC)?;
        let socket = Stream::from(fd);
        socket.set_nonblocking(true)?;
        match rustix::net::connect(&socket, &address) {
            Ok(()) => {}
            // Linux: the listener's backlog is full.
            Err(Errno::AGAIN) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(ErrorKind::TimedOut.into());
                }
                std::thread::sleep(left.min(RETRY_FULL_BACKLOG));
                continue;
            }
            // Elsewhere the connection may complete later: wait for it until the deadline.
            Err(Errno::INPROGRESS | Errno::INTR) => wait_connected(&socket, deadline)?,
            Err(errno) => return Err(errno.into()),
        }
        socket.set_nonblocking(false)?;
        return Ok(socket);
    }
}

/// Waits until the connection under way on `socket` completes, or `deadline`.
fn wait_connected(socket: &Stream, deadline: Instant) -> std::io::Result<()> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ErrorKind::TimedOut.into());
        }
        let timeout = Timespec::try_from(left).map_err(|_| ErrorKind::InvalidInput)?;
        let mut fds = [PollFd::new(socket, PollFlags::OUT)];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) | Err(Errno::INTR) => {}
            Ok(_) => return Ok(rustix::net::sockopt::socket_error(socket)??),
            Err(errno) => return Err(errno.into()),
        }
    }
}

/// Who a process runs as: its user id.
pub type User = u32;

/// The process at the other end of a connection, as the kernel saw it when it connected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// Its process id.
    pub pid: u32,
    /// Its user.
    pub user: User,
}

/// The process listening at the other end of `stream` (Linux: `SO_PEERCRED`); `None` where
/// the platform does not say.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn peer(stream: &Stream) -> Option<Peer> {
    let cred = rustix::net::sockopt::socket_peercred(stream).ok()?;
    Some(Peer {
        pid: u32::try_from(cred.pid.as_raw_nonzero().get()).ok()?,
        user: cred.uid.as_raw(),
    })
}

/// The process listening at the other end of `stream`: not said on this platform.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn peer(_: &Stream) -> Option<Peer> {
    None
}

/// Whether a process of id `pid` exists (a process of another user counts).
pub fn process_exists(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    !matches!(rustix::process::test_kill_process(pid), Err(Errno::SRCH))
}

/// Puts the started server in its own process group: the agent's signals to the hook's group
/// do not reach it.
pub fn detach(command: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt as _;
    command.process_group(0)
}

/// This process's real user id.
pub fn current_user() -> User {
    rustix::process::getuid().as_raw()
}

/// The command that removes the run directory `dir`, for a fix to print.
pub fn remove_dir_command(dir: &Path) -> String {
    format!("rm -rf {}", dir.display())
}

/// The server's end of a client's connection.
pub type Connection = tokio::net::UnixStream;

/// The server's listening socket.
#[derive(Debug)]
pub struct Listener {
    socket: tokio::net::UnixListener,
    path: PathBuf,
    identity: Option<(u64, u64)>,
}

impl Listener {
    /// Listens at `path`, the socket made mode 0600. The caller holds the server's lock, and
    /// has removed a socket a gone server left there.
    pub fn bind(path: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::PermissionsExt as _;
        let listener = tokio::net::UnixListener::bind(path)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        Ok(Self {
            socket: listener,
            path: path.to_path_buf(),
            identity: socket_identity(path),
        })
    }

    /// The next client's connection.
    pub async fn accept(&mut self) -> std::io::Result<Connection> {
        self.socket.accept().await.map(|(stream, _)| stream)
    }

    /// Whether the socket at the path is still this listener's (not removed or replaced).
    pub fn still_ours(&self) -> bool {
        socket_identity(&self.path) == self.identity
    }

    /// Where clients connect, for the log.
    pub fn address(&self) -> String {
        self.path.display().to_string()
    }
}

/// The socket's device and inode, to notice it being removed or replaced.
fn socket_identity(socket: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(socket)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// Checks that the client at the other end of `connection` runs as this user (its peer
/// credentials); why not, for the log.
pub fn check_peer(connection: &Connection) -> Result<(), String> {
    let uid = current_user();
    match connection.peer_cred() {
        Ok(cred) if cred.uid() == uid => Ok(()),
        Ok(cred) => Err(format!(
            "refused a peer of uid {} (serving uid {uid})",
            cred.uid()
        )),
        Err(e) => Err(format!(
            "refused a peer whose credentials cannot be read: {e}"
        )),
    }
}

/// Checks that `path`, when it exists, is a directory of this user that no one else may open;
/// `false` when it does not exist.
pub fn check_private_dir(path: &Path) -> Result<bool, PrivacyError> {
    let Some(meta) = metadata(path)? else {
        return Ok(false);
    };
    if !meta.file_type().is_dir() {
        return Err(PrivacyError::WrongType {
            path: path.to_path_buf(),
            expected: "directory",
        });
    }
    check_owner(path, &meta)?;
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(PrivacyError::OpenToOthers {
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(true)
}

/// Checks that `path`, when it exists, is a socket of this user; `false` when it does not exist.
pub fn check_socket(path: &Path) -> Result<bool, PrivacyError> {
    let Some(meta) = metadata(path)? else {
        return Ok(false);
    };
    if !meta.file_type().is_socket() {
        return Err(PrivacyError::WrongType {
            path: path.to_path_buf(),
            expected: "socket",
        });
    }
    check_owner(path, &meta)?;
    Ok(true)
}

fn metadata(path: &Path) -> Result<Option<std::fs::Metadata>, PrivacyError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => Ok(Some(meta)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(PrivacyError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn check_owner(path: &Path, meta: &std::fs::Metadata) -> Result<(), PrivacyError> {
    let uid = current_user();
    if meta.uid() == uid {
        Ok(())
    } else {
        Err(PrivacyError::ForeignOwner {
            path: path.to_path_buf(),
            owner: meta.uid(),
            uid,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[test]
    fn a_run_directory_others_may_open_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let error = check_private_dir(dir.path()).unwrap_err();
        assert!(
            matches!(error, PrivacyError::OpenToOthers { mode: 0o755, .. }),
            "{error}"
        );
    }

    #[test]
    fn a_private_run_directory_is_accepted_and_a_missing_one_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(check_private_dir(dir.path()).unwrap());
        assert!(!check_private_dir(&dir.path().join("missing")).unwrap());
    }

    #[test]
    fn a_regular_file_in_place_of_the_socket_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.sock");
        std::fs::write(&path, "").unwrap();
        let error = check_socket(&path).unwrap_err();
        assert!(
            matches!(
                error,
                PrivacyError::WrongType {
                    expected: "socket",
                    ..
                }
            ),
            "{error}"
        );
    }
}
