//! Where the server's platform shows, in one place: the private run directory, the local
//! connection a client opens and the server listens for, the peer checks on both ends, and how
//! a started server is detached from its hook.
//!
//! On Unix the server listens on a Unix socket in a directory only its user may open
//! ([`unix`]); on Windows on a named pipe only its user may open or create ([`windows`]). Both
//! give the rest of the crate the same items: `connect`, `Stream`, `Listener`, `Connection`,
//! `check_peer`, `peer`, `Peer`, `User`, `current_user`, `process_exists`, `detach`,
//! `check_private_dir`, `check_socket` and `remove_dir_command`.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
#[allow(unsafe_code, reason = "the Win32 calls named pipes' security needs")]
mod windows;
#[cfg(windows)]
pub use windows::*;
