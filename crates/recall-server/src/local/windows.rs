//! The server's platform on Windows: a named pipe in place of the Unix socket.
//!
//! The pipe's name is derived from the user's SID and the run directory's path
//! (`\\.\pipe\memrecall-<SID>-<hash>`), so each user, and each memrecall home, has its own. The
//! server creates the pipe's first instance with `FILE_FLAG_FIRST_PIPE_INSTANCE`: when any
//! other process already holds the name, the server refuses to serve rather than share it. Each
//! instance carries a protected DACL that grants access to this user's SID alone, so no other
//! user may connect or add an instance, and refuses remote clients
//! (`PIPE_REJECT_REMOTE_CLIENTS`). Both ends check the other: the server that a client's process
//! runs as this user, the client that the pipe's server process does (the peer credentials of
//! the Unix side). The run directory keeps the server's lock; its privacy is the user's profile
//! directory's ACL, under which it is made.

use std::ffi::c_void;
use std::io::ErrorKind;
use std::os::windows::io::AsRawHandle as _;
use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use tokio::net::windows::named_pipe::{
    ClientOptions, NamedPipeClient, NamedPipeServer, ServerOptions,
};
use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_PIPE_BUSY, HANDLE, HANDLE_FLAG_INHERIT, LocalFree, STILL_ACTIVE,
    SetHandleInformation,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    GetTokenInformation, PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER,
    TokenUser,
};
use windows_sys::Win32::System::Pipes::{GetNamedPipeClientProcessId, GetNamedPipeServerProcessId};
use windows_sys::Win32::System::Threading::{
    CREATE_NEW_PROCESS_GROUP, DETACHED_PROCESS, GetCurrentProcess, GetExitCodeProcess, OpenProcess,
    OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

use crate::PrivacyError;

/// How often opening the pipe is tried again while all its instances are busy.
const RETRY_BUSY: Duration = Duration::from_millis(2);

/// Who a process runs as: its user's SID, as text (`S-1-5-21-…`).
pub type User = String;

/// The user this process runs as; empty when it cannot be read (it then matches no peer).
pub fn current_user() -> User {
    static CURRENT: OnceLock<String> = OnceLock::new();
    CURRENT
        .get_or_init(|| {
            // SAFETY: the pseudo-handle of this process needs no closing and is always valid.
            token_user(unsafe { GetCurrentProcess() }).unwrap_or_default()
        })
        .clone()
}

/// The name of the pipe that stands for the socket at `path`: this user's SID and a hash of the
/// path, so two users, or two memrecall homes of one user, never meet at one name.
pub fn pipe_name(path: &Path) -> std::io::Result<String> {
    let user = current_user();
    if user.is_empty() {
        return Err(std::io::Error::other("cannot read this process's user"));
    }
    let hash = twox_hash::XxHash3_64::oneshot(path.as_os_str().as_encoded_bytes());
    Ok(format!(r"\\.\pipe\memrecall-{user}-{hash:016x}"))
}

/// A handle closed when dropped.
struct Owned(HANDLE);

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: the handle was opened by this module and is closed once, here.
        unsafe { CloseHandle(self.0) };
    }
}

/// The user of the process `pid`: `None` when it cannot be opened or read.
fn process_user(pid: u32) -> Option<User> {
    // SAFETY: plain call; a null handle is checked before use.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return None;
    }
    let process = Owned(process);
    token_user(process.0)
}

/// The user of the process whose handle is `process`.
fn token_user(process: HANDLE) -> Option<User> {
    let mut token: HANDLE = std::ptr::null_mut();
    // SAFETY: `token` is a valid place for the handle written.
    if unsafe { OpenProcessToken(process, TOKEN_QUERY, &raw mut token) } == 0 {
        return None;
    }
    let token = Owned(token);
    let mut len = 0u32;
    // SAFETY: asking for the size only, with no buffer.
    unsafe { GetTokenInformation(token.0, TokenUser, std::ptr::null_mut(), 0, &raw mut len) };
    // u64s: the buffer is aligned for the TOKEN_USER written at its start.
    let mut buffer = vec![0u64; (len as usize).div_ceil(8).max(1)];
    let size = u32::try_from(buffer.len() * 8).ok()?;
    // SAFETY: `buffer` holds `size` writable bytes.
    let read = unsafe {
        GetTokenInformation(
            token.0,
            TokenUser,
            buffer.as_mut_ptr().cast::<c_void>(),
            size,
            &raw mut len,
        )
    };
    if read == 0 {
        return None;
    }
    // SAFETY: on success the buffer starts with an aligned TOKEN_USER.
    let sid = unsafe { (*buffer.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    let mut text: *mut u16 = std::ptr::null_mut();
    // SAFETY: `sid` points into `buffer`, alive here; `text` receives a LocalAlloc'd string.
    if unsafe { ConvertSidToStringSidW(sid, &raw mut text) } == 0 {
        return None;
    }
    // SAFETY: `text` is a NUL-terminated wide string, freed once after being copied.
    let user = unsafe {
        let mut len = 0;
        while *text.add(len) != 0 {
            len += 1;
        }
        let user = String::from_utf16_lossy(std::slice::from_raw_parts(text, len));
        LocalFree(text.cast());
        user
    };
    Some(user)
}

/// The client's connection to the server: the pipe, and the single-threaded runtime its reads
/// and writes wait in, each within its timeout.
#[derive(Debug)]
pub struct Stream {
    pipe: NamedPipeClient,
    runtime: tokio::runtime::Runtime,
    read_timeout: std::cell::Cell<Option<Duration>>,
    write_timeout: std::cell::Cell<Option<Duration>>,
}

impl Stream {
    /// Bounds each later read; `None`: unbounded.
    #[allow(clippy::unnecessary_wraps, reason = "the signature std's streams have")]
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        self.read_timeout.set(timeout);
        Ok(())
    }

    /// Bounds each later write; `None`: unbounded.
    #[allow(clippy::unnecessary_wraps, reason = "the signature std's streams have")]
    pub fn set_write_timeout(&self, timeout: Option<Duration>) -> std::io::Result<()> {
        self.write_timeout.set(timeout);
        Ok(())
    }

    /// Runs `io` in the stream's runtime, within `timeout`.
    fn within<T>(
        &self,
        timeout: Option<Duration>,
        io: impl Future<Output = std::io::Result<T>>,
    ) -> std::io::Result<T> {
        self.runtime.block_on(async {
            match timeout {
                Some(timeout) => tokio::time::timeout(timeout, io)
                    .await
                    .map_err(|_| std::io::Error::from(ErrorKind::TimedOut))?,
                None => io.await,
            }
        })
    }
}

impl std::io::Read for &Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let pipe = &self.pipe;
        self.within(self.read_timeout.get(), async {
            loop {
                pipe.readable().await?;
                match pipe.try_read(buf) {
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    read => return read,
                }
            }
        })
    }
}

impl std::io::Write for &Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let pipe = &self.pipe;
        self.within(self.write_timeout.get(), async {
            loop {
                pipe.writable().await?;
                match pipe.try_write(buf) {
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    written => return written,
                }
            }
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Opens the server's pipe for the socket path `path`, giving up with [`ErrorKind::TimedOut`]
/// at `deadline`: while every instance is busy it is tried again, never waited on. No server:
/// [`ErrorKind::NotFound`]. A pipe whose server process does not run as this user is refused
/// ([`ErrorKind::PermissionDenied`]) before anything is written to it.
pub fn connect(path: &Path, deadline: Instant) -> std::io::Result<Stream> {
    let name = pipe_name(path)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    let pipe = loop {
        let opened = {
            let _entered = runtime.enter();
            ClientOptions::new().open(&name)
        };
        match opened {
            Ok(pipe) => break pipe,
            Err(e) if e.raw_os_error() == Some(ERROR_PIPE_BUSY.cast_signed()) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(ErrorKind::TimedOut.into());
                }
                std::thread::sleep(left.min(RETRY_BUSY));
            }
            Err(e) => return Err(e),
        }
    };
    let stream = Stream {
        pipe,
        runtime,
        read_timeout: std::cell::Cell::new(None),
        write_timeout: std::cell::Cell::new(None),
    };
    match peer(&stream) {
        Some(server) if server.user == current_user() => Ok(stream),
        Some(server) => Err(std::io::Error::new(
            ErrorKind::PermissionDenied,
            format!(
                "the process serving {name} (pid {}) runs as {}, not as this user ({})",
                server.pid,
                server.user,
                current_user()
            ),
        )),
        None => Err(std::io::Error::new(
            ErrorKind::PermissionDenied,
            format!("the process serving {name} cannot be told"),
        )),
    }
}

/// The process at the other end of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// Its process id.
    pub pid: u32,
    /// Its user.
    pub user: User,
}

/// The process serving the pipe `stream` is connected to; `None` when it cannot be told.
pub fn peer(stream: &Stream) -> Option<Peer> {
    let mut pid = 0u32;
    // SAFETY: the handle is the open pipe's; `pid` is a valid place for the id.
    let told =
        unsafe { GetNamedPipeServerProcessId(stream.pipe.as_raw_handle(), &raw mut pid) } != 0;
    let user = process_user(pid).filter(|_| told)?;
    Some(Peer { pid, user })
}

/// Whether a process of id `pid` exists and has not exited.
pub fn process_exists(pid: u32) -> bool {
    // SAFETY: plain call; a null handle is checked before use.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return false;
    }
    let process = Owned(process);
    let mut code = 0u32;
    // SAFETY: the handle is open; `code` is a valid place for the exit code.
    let read = unsafe { GetExitCodeProcess(process.0, &raw mut code) } != 0;
    !read || code == STILL_ACTIVE.cast_unsigned()
}

/// Starts the server without a console and in its own process group: the agent's console and
/// its Ctrl+C do not reach it. This process's own standard handles are made non-inheritable
/// first: a child on Windows inherits every inheritable handle, and a server holding the write
/// end of the agent's pipe to the hook would keep the agent waiting for the hook's output to
/// end until the server exits.
pub fn detach(command: &mut Command) -> &mut Command {
    use std::os::windows::process::CommandExt as _;
    let handles = [
        std::io::stdin().as_raw_handle(),
        std::io::stdout().as_raw_handle(),
        std::io::stderr().as_raw_handle(),
    ];
    for handle in handles.into_iter().filter(|handle| !handle.is_null()) {
        // SAFETY: a standard handle of this process, or an invalid one the call refuses.
        unsafe { SetHandleInformation(handle, HANDLE_FLAG_INHERIT, 0) };
    }
    command.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP)
}

/// Checks that `path`, when it exists, is a directory (not a link to one); `false` when it does
/// not exist. Who may open it is the ACL it inherits from the user's profile directory.
pub fn check_private_dir(path: &Path) -> Result<bool, PrivacyError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_dir() => Ok(true),
        Ok(_) => Err(PrivacyError::WrongType {
            path: path.to_path_buf(),
            expected: "directory",
        }),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(false),
        Err(source) => Err(PrivacyError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// There is no socket file: whose the pipe is, is checked when connecting.
#[allow(clippy::unnecessary_wraps, reason = "the signature the Unix side has")]
pub fn check_socket(_: &Path) -> Result<bool, PrivacyError> {
    Ok(true)
}

/// The command that removes the run directory `dir`, for a fix to print (PowerShell's).
pub fn remove_dir_command(dir: &Path) -> String {
    format!("Remove-Item -Recurse -Force '{}'", dir.display())
}

/// A security descriptor made from SDDL, freed when dropped.
struct Descriptor(PSECURITY_DESCRIPTOR);

impl Descriptor {
    /// The descriptor whose protected DACL allows `user` everything and no one else anything.
    fn only(user: &str) -> std::io::Result<Self> {
        let sddl: Vec<u16> = format!("D:P(A;;GA;;;{user})")
            .encode_utf16()
            .chain([0])
            .collect();
        let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: `sddl` is NUL-terminated; `descriptor` receives a LocalAlloc'd descriptor.
        let made = unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                sddl.as_ptr(),
                SDDL_REVISION_1,
                &raw mut descriptor,
                std::ptr::null_mut(),
            )
        };
        if made == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Self(descriptor))
    }
}

// SAFETY: the descriptor is a heap allocation this value owns alone and never changes after it
// is made; the system only reads it, from whichever thread creates a pipe instance.
unsafe impl Send for Descriptor {}
// SAFETY: as above: shared, it is only read.
unsafe impl Sync for Descriptor {}

impl Drop for Descriptor {
    fn drop(&mut self) {
        // SAFETY: allocated by LocalAlloc in `only`, freed once here.
        unsafe { LocalFree(self.0) };
    }
}

/// The server's end of a client's connection.
pub type Connection = NamedPipeServer;

/// The server's pipe: the instance the next client connects to.
pub struct Listener {
    name: String,
    descriptor: Descriptor,
    next: NamedPipeServer,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Listener {
    /// Creates the first instance of the pipe for the socket path `path`; refused when any
    /// process already holds the name.
    pub fn bind(path: &Path) -> std::io::Result<Self> {
        let name = pipe_name(path)?;
        let descriptor = Descriptor::only(&current_user())?;
        let next = instance(&name, &descriptor, true)?;
        Ok(Self {
            name,
            descriptor,
            next,
        })
    }

    /// The next client's connection; a new instance waits for the one after it.
    pub async fn accept(&mut self) -> std::io::Result<Connection> {
        if let Err(e) = self.next.connect().await {
            // The instance is ready for the next client once its failed one is gone.
            let _ = self.next.disconnect();
            return Err(e);
        }
        let fresh = instance(&self.name, &self.descriptor, false)?;
        Ok(std::mem::replace(&mut self.next, fresh))
    }

    /// No other process can take the name while the server holds an instance of it.
    #[allow(clippy::unused_self, reason = "the signature the Unix side has")]
    pub fn still_ours(&self) -> bool {
        true
    }

    /// Where clients connect, for the log.
    pub fn address(&self) -> String {
        self.name.clone()
    }
}

/// One instance of the pipe `name`, open to this user alone, local clients only.
fn instance(name: &str, descriptor: &Descriptor, first: bool) -> std::io::Result<NamedPipeServer> {
    let mut attributes = SECURITY_ATTRIBUTES {
        nLength: u32::try_from(size_of::<SECURITY_ATTRIBUTES>()).unwrap_or(u32::MAX),
        lpSecurityDescriptor: descriptor.0,
        bInheritHandle: 0,
    };
    // SAFETY: `attributes` is a SECURITY_ATTRIBUTES whose descriptor outlives the call.
    unsafe {
        ServerOptions::new()
            .first_pipe_instance(first)
            .reject_remote_clients(true)
            .create_with_security_attributes_raw(name, (&raw mut attributes).cast())
    }
}

/// Checks that the client at the other end of `connection` runs as this user; why not, for the
/// log.
pub fn check_peer(connection: &Connection) -> Result<(), String> {
    let mut pid = 0u32;
    // SAFETY: the handle is the connected instance's; `pid` is a valid place for the id.
    if unsafe { GetNamedPipeClientProcessId(connection.as_raw_handle(), &raw mut pid) } == 0 {
        return Err(format!(
            "refused a client whose process cannot be told: {}",
            std::io::Error::last_os_error()
        ));
    }
    let serving = current_user();
    match process_user(pid) {
        Some(user) if user == serving => Ok(()),
        Some(user) => Err(format!(
            "refused a client of {user} (pid {pid}; serving {serving})"
        )),
        None => Err(format!(
            "refused a client whose user cannot be read (pid {pid})"
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};

    use super::*;

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(10)
    }

    /// A runtime for the server's end, as the server has.
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn the_pipe_name_carries_this_users_sid_and_differs_by_path() {
        let user = current_user();
        assert!(user.starts_with("S-1-"), "{user:?}");
        let one = pipe_name(Path::new(r"C:\a\run\serve.sock")).unwrap();
        let other = pipe_name(Path::new(r"C:\b\run\serve.sock")).unwrap();
        assert!(
            one.starts_with(&format!(r"\\.\pipe\memrecall-{user}-")),
            "{one}"
        );
        assert_ne!(one, other);
    }

    #[test]
    fn without_a_server_connecting_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let error = connect(&dir.path().join("serve.sock"), soon()).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
    }

    #[test]
    fn a_client_and_the_listener_exchange_bytes_and_each_sees_the_other_as_this_user() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.sock");
        let runtime = runtime();
        let mut listener = runtime.block_on(async { Listener::bind(&path) }).unwrap();
        let served = runtime.spawn(async move {
            use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
            let mut connection = listener.accept().await.unwrap();
            let peer = check_peer(&connection);
            let mut asked = [0; 4];
            connection.read_exact(&mut asked).await.unwrap();
            connection.write_all(b"pong").await.unwrap();
            (peer, asked)
        });
        let stream = connect(&path, soon()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        (&stream).write_all(b"ping").unwrap();
        let mut answer = [0; 4];
        (&stream).read_exact(&mut answer).unwrap();
        let (peer, asked) = runtime.block_on(served).unwrap();
        assert_eq!((&asked, &answer), (b"ping", b"pong"));
        assert_eq!(peer, Ok(()));
        let server = super::peer(&stream).unwrap();
        assert_eq!(server.pid, std::process::id());
        assert_eq!(server.user, current_user());
    }

    #[test]
    fn a_server_that_never_answers_is_a_timeout_for_a_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.sock");
        let runtime = runtime();
        let mut listener = runtime.block_on(async { Listener::bind(&path) }).unwrap();
        let _accepted = runtime.spawn(async move {
            let connection = listener.accept().await;
            tokio::time::sleep(Duration::from_secs(30)).await;
            drop(connection);
        });
        let stream = connect(&path, soon()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let error = (&stream).read(&mut [0; 4]).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::TimedOut, "{error}");
    }

    #[test]
    #[ignore = "Wine does not enforce FILE_FLAG_FIRST_PIPE_INSTANCE; the Windows workflow jobs run it"]
    fn a_name_another_process_already_holds_is_not_shared_by_the_server() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.sock");
        let runtime = runtime();
        // Whoever created an instance first (another user's process, a second server of this
        // user's) holds the name.
        let _squatter = runtime
            .block_on(async { ServerOptions::new().create(pipe_name(&path).unwrap()) })
            .unwrap();
        let refused = runtime
            .block_on(async { Listener::bind(&path) })
            .unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::PermissionDenied, "{refused}");
    }

    #[test]
    #[ignore = "Wine does not check a named pipe's DACL; the Windows workflow jobs run it"]
    fn a_pipe_whose_dacl_admits_only_another_user_cannot_be_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.sock");
        let runtime = runtime();
        // LocalSystem's SID: a user this test does not run as.
        let other = Descriptor::only("S-1-5-18").unwrap();
        let _theirs = runtime
            .block_on(async { instance(&pipe_name(&path).unwrap(), &other, true) })
            .unwrap();
        let error = connect(&path, soon()).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::PermissionDenied, "{error}");
    }

    #[test]
    fn this_process_exists_and_an_exited_one_does_not() {
        assert!(process_exists(std::process::id()));
        let mut child = Command::new("cmd").args(["/c", "exit"]).spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        drop(child);
        assert!(!process_exists(pid));
    }

    #[test]
    fn a_file_in_place_of_the_run_directory_is_refused_and_a_missing_one_reported() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("run");
        std::fs::write(&file, "").unwrap();
        assert!(matches!(
            check_private_dir(&file),
            Err(PrivacyError::WrongType { .. })
        ));
        assert!(!check_private_dir(&dir.path().join("missing")).unwrap());
        assert!(check_private_dir(dir.path()).unwrap());
    }
}
