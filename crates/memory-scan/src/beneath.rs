//! Reaching a directory below a root the way a scan, a catalog write and a save must: from the
//! root's directory handle, one plain name at a time, with `openat(…, O_NOFOLLOW | O_DIRECTORY)`,
//! so a symlink swapped in anywhere on the way is never followed out of the root.
//!
//! This is the one place that walk is written; the scanner, the catalog's state directory and
//! `memrecall`'s `save_memory` all reach their directories through [`open_below`]. Unix only: the
//! `*at` calls it needs have no portable equivalent.
//!
//! # Example
//!
//! ```
//! # #[cfg(unix)] {
//! use std::path::Path;
//! use memory_scan::beneath::{Create, open_below, open_root};
//!
//! let root = tempfile::tempdir()?;
//! let fd = open_root(root.path())?;
//! open_below(&fd, Path::new("a/b"), Create::Private)?;
//! assert!(root.path().join("a/b").is_dir());
//!
//! std::os::unix::fs::symlink("/", root.path().join("out"))?;
//! let refused = open_below(&fd, Path::new("out/etc"), Create::No).unwrap_err();
//! assert!(refused.is_symlink());
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::ffi::OsStr;
use std::io;
use std::path::Path;

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// Whether a missing directory on the way is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Create {
    /// A missing directory is an error (`ENOENT`).
    No,
    /// A missing directory is made, private to the user (mode 0700).
    Private,
}

/// Why a directory below a root could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("{}: {kind}", shown(*.depth, .relative))]
pub struct BelowError {
    /// How many names of the relative path were opened before the one that failed.
    pub depth: usize,
    /// The relative path asked for.
    pub relative: std::path::PathBuf,
    /// What was wrong with the name at `depth`.
    pub kind: BelowErrorKind,
}

/// What was wrong with one name on the way.
#[derive(Debug, thiserror::Error)]
pub enum BelowErrorKind {
    /// It is a symbolic link, which is never followed.
    #[error("a symbolic link, never followed")]
    Symlink,
    /// It is something other than a directory.
    #[error("not a directory")]
    NotADirectory,
    /// A system call failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

fn shown(depth: usize, relative: &Path) -> String {
    relative
        .iter()
        .take(depth + 1)
        .collect::<std::path::PathBuf>()
        .display()
        .to_string()
}

impl BelowError {
    /// Whether the name that failed is a symbolic link.
    pub fn is_symlink(&self) -> bool {
        matches!(self.kind, BelowErrorKind::Symlink)
    }

    /// The error as an `io::Error`: `ELOOP` for a symlink, `ENOTDIR` for a non-directory.
    pub fn into_io(self) -> io::Error {
        match self.kind {
            BelowErrorKind::Symlink => Errno::LOOP.into(),
            BelowErrorKind::NotADirectory => Errno::NOTDIR.into(),
            BelowErrorKind::Io(error) => error,
        }
    }
}

impl From<BelowError> for io::Error {
    fn from(error: BelowError) -> Self {
        error.into_io()
    }
}

/// How directories are opened on the way.
fn directory_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// Opens a root directory (a symlink naming the root itself is followed: the root is what the
/// caller chose).
pub fn open_root(root: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Opens the directory `relative` (plain names only; an empty path gives a new handle on `dir`)
/// below `dir`, one name at a time, never following a symlink; with [`Create::Private`], a
/// missing directory is made on the way.
pub fn open_below(dir: &impl AsFd, relative: &Path, create: Create) -> Result<OwnedFd, BelowError> {
    let mut current: Option<OwnedFd> = None;
    for (depth, name) in relative.iter().enumerate() {
        let at = current.as_ref().map_or(dir.as_fd(), AsFd::as_fd);
        let next = open_child(at, name, create).map_err(|kind| BelowError {
            depth,
            relative: relative.to_path_buf(),
            kind,
        })?;
        current = Some(next);
    }
    match current {
        Some(fd) => Ok(fd),
        None => rustix::io::fcntl_dupfd_cloexec(dir, 0).map_err(|errno| BelowError {
            depth: 0,
            relative: relative.to_path_buf(),
            kind: BelowErrorKind::Io(errno.into()),
        }),
    }
}

/// Opens the directory `name` in `dir`, never through a symlink; makes it first when asked.
fn open_child(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    create: Create,
) -> Result<OwnedFd, BelowErrorKind> {
    if create == Create::Private {
        match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700)) {
            Ok(()) | Err(Errno::EXIST) => {}
            Err(errno) => return Err(BelowErrorKind::Io(errno.into())),
        }
    }
    match rustix::fs::openat(dir, name, directory_flags(), Mode::empty()) {
        Ok(fd) => Ok(fd),
        // Whatever the platform's errno for "a link where O_NOFOLLOW forbids one" (ELOOP on Linux
        // and macOS, EMLINK on FreeBSD), the entry itself says what it is.
        Err(errno @ (Errno::LOOP | Errno::NOTDIR | Errno::MLINK)) => {
            match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink => {
                    Err(BelowErrorKind::Symlink)
                }
                Ok(_) => Err(BelowErrorKind::NotADirectory),
                Err(_) => Err(BelowErrorKind::Io(errno.into())),
            }
        }
        Err(errno) => Err(BelowErrorKind::Io(errno.into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_on_the_way_is_not_a_directory() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("f"), "x").unwrap();
        let fd = open_root(root.path()).unwrap();
        let error = open_below(&fd, Path::new("f/g"), Create::No).unwrap_err();
        assert!(matches!(error.kind, BelowErrorKind::NotADirectory));
        assert_eq!(error.depth, 0);
    }

    #[test]
    fn a_symlinked_directory_deeper_down_is_refused_with_its_depth() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("a")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("a/link")).unwrap();
        let fd = open_root(root.path()).unwrap();
        let error = open_below(&fd, Path::new("a/link/x"), Create::Private).unwrap_err();
        assert!(error.is_symlink());
        assert_eq!(error.depth, 1);
        assert_eq!(error.to_string(), "a/link: a symbolic link, never followed");
        assert!(!outside.path().join("x").exists());
    }

    #[test]
    fn made_directories_are_private_to_the_user() {
        use std::os::unix::fs::PermissionsExt as _;
        let root = tempfile::tempdir().unwrap();
        let fd = open_root(root.path()).unwrap();
        open_below(&fd, Path::new("new"), Create::Private).unwrap();
        let mode = std::fs::metadata(root.path().join("new"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
