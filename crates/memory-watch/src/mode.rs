//! How a root is scanned, why it is not watched, and which file systems deliver no events.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// How a root is scanned.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum WatchMode {
    /// Watched: a scan lists and reads only what changed.
    Watching,
    /// A full scan: every directory's key and every file's key is checked.
    FullScan {
        /// Why.
        reason: FallbackReason,
    },
}

/// Why a root is given a full scan.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum FallbackReason {
    /// The watcher lost events (the kernel's queue overflowed); the next scan is a full one, and
    /// the root is watched again after it.
    Overflow,
    /// The system's limit on watches was reached (on Linux, `fs.inotify.max_user_watches`).
    WatchLimit,
    /// The root could not be watched (it does not exist, is not a directory, or cannot be read).
    Unwatchable(Arc<notify::Error>),
    /// The root itself was removed or renamed; it is watched again at its next scan.
    RootReplaced,
    /// The watcher failed or stopped delivering events.
    WatcherFailed(Arc<notify::Error>),
    /// The root is on a file system that reports no events for changes made elsewhere (a
    /// network or FUSE file system).
    NoEvents,
    /// The barrier event of a scan did not come through in time, so the events so far may be
    /// incomplete; the next scan is a full one.
    BarrierTimedOut,
}

impl fmt::Display for FallbackReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Overflow => f.write_str("the watcher lost events (queue overflow)"),
            Self::WatchLimit => f.write_str("the system's watch limit is reached"),
            Self::Unwatchable(error) => write!(f, "the root cannot be watched: {error}"),
            Self::RootReplaced => f.write_str("the root itself was removed or renamed"),
            Self::WatcherFailed(error) => write!(f, "the watcher failed: {error}"),
            Self::NoEvents => f.write_str("the root's file system reports no events"),
            Self::BarrierTimedOut => f.write_str("the watcher did not deliver events in time"),
        }
    }
}

/// Whether a root that could not be watched for `reason` is tried again at its next scan: one
/// that was missing or was replaced, not one that hit a limit or broke the watcher.
pub(crate) fn retried(reason: &FallbackReason) -> bool {
    match reason {
        FallbackReason::RootReplaced => true,
        FallbackReason::Unwatchable(error) => match &error.kind {
            notify::ErrorKind::PathNotFound => true,
            notify::ErrorKind::Io(io) => io.kind() == std::io::ErrorKind::NotFound,
            _ => false,
        },
        _ => false,
    }
}

/// Whether `path` is on a file system whose events miss changes made by other machines or by a
/// user-space server: NFS, SMB/CIFS, FUSE, 9P, Ceph, AFS.
#[cfg(target_os = "linux")]
pub(crate) fn without_events(path: &Path) -> bool {
    rustix::fs::statfs(path).is_ok_and(|stat| remote_file_system(stat.f_type))
}

/// Elsewhere the watcher is trusted.
#[cfg(not(target_os = "linux"))]
pub(crate) fn without_events(_path: &Path) -> bool {
    false
}

/// Whether a Linux file system magic number (`statfs`'s `f_type`) names a network or FUSE file
/// system.
#[cfg(target_os = "linux")]
pub(crate) fn remote_file_system(magic: rustix::fs::FsWord) -> bool {
    const REMOTE: [u64; 9] = [
        0x6969,      // NFS
        0x517B,      // SMB
        0xFF53_4D42, // CIFS
        0xFE53_4D42, // SMB2
        0x6573_5546, // FUSE
        0x0102_1997, // 9P
        0x00C3_6400, // Ceph
        0x5346_414F, // AFS
        0x6B41_4653, // kAFS
    ];
    // `f_type` is signed on some targets; the magic numbers are its low 32 bits.
    #[allow(
        clippy::cast_sign_loss,
        clippy::cast_possible_truncation,
        clippy::useless_conversion
    )]
    let magic = u64::from(magic as u32);
    REMOTE.contains(&magic)
}
