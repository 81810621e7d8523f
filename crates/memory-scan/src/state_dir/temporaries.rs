//! The temporary files catalog writes leave while they run: each named after its writer's
//! process, removed by the writer when its write fails, and by the next write in the same state
//! directory when its writer is gone (killed before it could remove it).

use std::time::{Duration, SystemTime};

use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::{AtFlags, FileType};

use super::TEMPORARY_PREFIX;

/// Temporary files older than this are removed whoever wrote them: no write takes that long, and
/// the process that wrote it may live on under the same id, or in another process id namespace.
const STALE_TEMPORARY: Duration = Duration::from_mins(10);

/// The name of this process's temporary file number `n`.
pub(super) fn temporary_name(n: u64) -> String {
    format!("{TEMPORARY_PREFIX}{}-{n}", std::process::id())
}

/// A temporary file being written in a directory, removed when dropped unless it was renamed
/// away: a failed write, and a panicking one, leave nothing behind.
pub(super) struct Temporary<'a> {
    dir: BorrowedFd<'a>,
    pub(super) name: String,
    renamed: bool,
}

impl<'a> Temporary<'a> {
    pub(super) fn new(dir: BorrowedFd<'a>, name: String) -> Self {
        Self {
            dir,
            name,
            renamed: false,
        }
    }

    /// The file was renamed over the catalog: there is nothing left to remove.
    pub(super) fn renamed(&mut self) {
        self.renamed = true;
    }
}

impl Drop for Temporary<'_> {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = rustix::fs::unlinkat(self.dir, self.name.as_str(), AtFlags::empty());
        }
    }
}

/// The process id in a temporary file's name, when it has one.
fn writer_of(name: &[u8]) -> Option<rustix::process::Pid> {
    let rest = name.strip_prefix(TEMPORARY_PREFIX.as_bytes())?;
    let (pid, n) = std::str::from_utf8(rest).ok()?.split_once('-')?;
    n.parse::<u64>().ok()?;
    rustix::process::Pid::from_raw(pid.parse().ok()?)
}

/// Whether no process has the id `pid` (one of another user counts as alive).
fn is_gone(pid: rustix::process::Pid) -> bool {
    rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH)
}

/// Removes the temporary files in `dir` whose writer is gone: no process has the id in its name,
/// or the file is older than [`STALE_TEMPORARY`]. A live writer's file is kept, this process's
/// own included.
pub(super) fn remove_stale(dir: &impl AsFd) {
    let dir = dir.as_fd();
    let Ok(listing) = rustix::fs::Dir::read_from(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in listing.flatten() {
        let name = entry.file_name();
        if entry.file_type() != FileType::RegularFile && entry.file_type() != FileType::Unknown
            || !name.to_bytes().starts_with(TEMPORARY_PREFIX.as_bytes())
        {
            continue;
        }
        let Ok(stat) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            continue;
        }
        let old = u64::try_from(stat.st_mtime)
            .ok()
            .map(|secs| SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age > STALE_TEMPORARY);
        if old || writer_of(name.to_bytes()).is_some_and(is_gone) {
            let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temporary_files_writer_is_the_process_id_in_its_name() {
        let writer = |name: &str| writer_of(name.as_bytes()).map(rustix::process::Pid::as_raw_pid);

        assert_eq!(writer("catalog.tmp-4242-0"), Some(4242));
        assert_eq!(writer("catalog.tmp-4242-17"), Some(4242));
        assert_eq!(writer("catalog.tmp-4242"), None);
        assert_eq!(writer("catalog.tmp-x-0"), None);
        assert_eq!(writer("catalog.tmp-0-0"), None);
        assert_eq!(writer("catalog.tmp--1-0"), None);
        assert_eq!(writer("catalog-4242-0"), None);
    }
}
