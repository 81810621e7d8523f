//! How a scan reaches the files of a memory root: from the root's directory handle, one plain
//! name at a time, never following a symlink on the way.
//!
//! The walk classifies each entry (a symlink is accepted only when it ends at a regular file
//! inside the root), but what it saw may change before the file is read: a listed file replaced
//! by a symlink, a directory on its path swapped for a link to elsewhere, a symlink retargeted
//! outside the root. So on Unix nothing is opened by its whole path. Each directory below the root
//! is opened with `openat(…, O_NOFOLLOW | O_DIRECTORY)` from its parent's handle, starting at the
//! root's, and a topic file with `openat(…, O_NOFOLLOW)` in its directory, then checked with
//! `fstat` on the opened handle. A symlinked topic is resolved when it is read, and its target
//! opened the same way through the resolved path below the root: a target outside the root is
//! refused, and one that moves while it is opened is not read at all. Off Unix, files are opened
//! by path and these guarantees do not hold.

#[cfg(unix)]
use std::ffi::OsStr;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::key::FileKey;
use crate::report::SkipReason;

/// A memory root, opened once per scan; the handle every file of the root is reached from.
#[derive(Debug)]
pub(crate) struct RootDir {
    /// The root as given, made absolute.
    pub(crate) absolute: PathBuf,
    /// The root's canonical path: no symlink, `.` or `..` in it.
    pub(crate) canonical: PathBuf,
    #[cfg(unix)]
    fd: rustix::fd::OwnedFd,
}

impl RootDir {
    /// Opens the directory at `canonical`; `absolute` is how the caller named it.
    #[cfg_attr(
        not(unix),
        allow(clippy::unnecessary_wraps, reason = "only the Unix open can fail")
    )]
    pub(crate) fn open(absolute: PathBuf, canonical: PathBuf) -> io::Result<Self> {
        #[cfg(unix)]
        {
            let fd = rustix::fs::open(&canonical, directory_flags(), rustix::fs::Mode::empty())?;
            Ok(Self {
                absolute,
                canonical,
                fd,
            })
        }
        #[cfg(not(unix))]
        Ok(Self {
            absolute,
            canonical,
        })
    }

    /// Opens the directory `relative` (plain names only) below the root without following a
    /// symlink at any step (see [`crate::beneath`]). A component that is no longer a directory
    /// fails with `ELOOP` or `ENOTDIR`.
    #[cfg(unix)]
    fn open_directory(&self, relative: &Path) -> io::Result<rustix::fd::OwnedFd> {
        Ok(crate::beneath::open_below(
            &self.fd,
            relative,
            crate::beneath::Create::No,
        )?)
    }
}

/// How directories are opened on the way to a file.
#[cfg(unix)]
fn directory_flags() -> rustix::fs::OFlags {
    use rustix::fs::OFlags;
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// How a topic file is opened in its directory. The open never blocks: a FIFO put where a topic
/// file was listed would otherwise wait for a writer forever; it is skipped as not a file once
/// `fstat` says what it is.
#[cfg(unix)]
fn topic_flags() -> rustix::fs::OFlags {
    use rustix::fs::OFlags;
    OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// The directory a thread last worked in, below one root, kept open so that its files are
/// stat'ed and opened by name: the kernel then resolves one name instead of every component.
/// A directory that could not be opened is remembered with its error.
pub(crate) struct OpenParent {
    root: Arc<RootDir>,
    #[cfg(unix)]
    open: Option<(PathBuf, io::Result<rustix::fd::OwnedFd>)>,
}

impl OpenParent {
    /// Nothing open yet below `root`.
    pub(crate) fn new(root: Arc<RootDir>) -> Self {
        Self {
            root,
            #[cfg(unix)]
            open: None,
        }
    }

    /// The open directory of `relative` and the file name in it; opens the directory unless it is
    /// open already.
    #[cfg(unix)]
    fn enter<'p>(
        &mut self,
        relative: &'p Path,
    ) -> io::Result<(rustix::fd::BorrowedFd<'_>, &'p OsStr)> {
        use rustix::fd::AsFd;
        let name = relative
            .file_name()
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        let directory = relative.parent().unwrap_or(Path::new(""));
        let same = |open: &PathBuf| open.as_os_str() == directory.as_os_str();
        if !self.open.as_ref().is_some_and(|(open, _)| same(open)) {
            let fd = self.root.open_directory(directory);
            self.open = Some((directory.to_path_buf(), fd));
        }
        match &self.open {
            Some((_, Ok(fd))) => Ok((fd.as_fd(), name)),
            Some((_, Err(error))) => Err(clone_error(error)),
            None => Err(io::Error::from(io::ErrorKind::NotFound)),
        }
    }

    /// The [`FileKey`] of the file at `relative`; of a symlink's target when `symlink` (the
    /// walk accepted it as a link to a file inside the root), of the entry itself otherwise.
    pub(crate) fn key(&mut self, relative: &Path, symlink: bool) -> Option<FileKey> {
        #[cfg(unix)]
        {
            use rustix::fs::AtFlags;
            let flags = if symlink {
                AtFlags::empty()
            } else {
                AtFlags::SYMLINK_NOFOLLOW
            };
            let (fd, name) = self.enter(relative).ok()?;
            rustix::fs::statat(fd, name, flags)
                .ok()
                .map(|stat| FileKey::from_stat(&stat))
        }
        #[cfg(not(unix))]
        {
            let _ = symlink;
            fs::metadata(self.root.absolute.join(relative))
                .ok()
                .map(|metadata| FileKey::from_metadata(&metadata))
        }
    }

    /// Opens the topic file at `relative` for reading, or says why it is skipped. Unless
    /// `symlink`, the entry itself is opened, and a symlink found in its place is `not_a_file`;
    /// with `symlink`, the link is resolved now and its target opened through its path below the
    /// root (see the module documentation).
    pub(crate) fn open(&mut self, relative: &Path, symlink: bool) -> Result<File, SkipReason> {
        #[cfg(unix)]
        {
            if symlink {
                return self.open_link_target(relative);
            }
            let (fd, name) = self.enter(relative).map_err(|error| moved_reason(&error))?;
            match rustix::fs::openat(fd, name, topic_flags(), rustix::fs::Mode::empty()) {
                Ok(file) => Ok(File::from(file)),
                Err(rustix::io::Errno::LOOP) => Err(SkipReason::NotAFile),
                Err(errno) => Err(io_reason(&io::Error::from(errno))),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = symlink;
            File::open(self.root.absolute.join(relative)).map_err(|error| io_reason(&error))
        }
    }

    /// Resolves the symlink at `relative` and opens its target below the root, never following
    /// a symlink while opening it.
    #[cfg(unix)]
    fn open_link_target(&self, relative: &Path) -> Result<File, SkipReason> {
        use rustix::fd::AsFd;
        let target =
            fs::canonicalize(self.root.absolute.join(relative)).map_err(
                |error| match io_reason(&error) {
                    SkipReason::Vanished => SkipReason::BrokenSymlink,
                    other => other,
                },
            )?;
        let below = target
            .strip_prefix(&self.root.canonical)
            .map_err(|_| SkipReason::SymlinkOutsideRoot)?;
        let name = below.file_name().ok_or(SkipReason::NotAFile)?;
        let directory = self
            .root
            .open_directory(below.parent().unwrap_or(Path::new("")))
            .map_err(|error| moved_reason(&error))?;
        rustix::fs::openat(
            directory.as_fd(),
            name,
            topic_flags(),
            rustix::fs::Mode::empty(),
        )
        .map(File::from)
        .map_err(|errno| moved_reason(&io::Error::from(errno)))
    }
}

/// Why a file could not be reached when a directory on its way (or a resolved link target)
/// failed to open: a component that is now a symlink or no longer a directory was changed after
/// the walk saw it, which the next scan sees afresh, so it counts as vanished.
#[cfg(unix)]
fn moved_reason(error: &io::Error) -> SkipReason {
    match rustix::io::Errno::from_io_error(error) {
        Some(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => SkipReason::Vanished,
        _ => io_reason(error),
    }
}

/// A copy of a remembered error (`io::Error` is not `Clone`).
#[cfg(unix)]
fn clone_error(error: &io::Error) -> io::Error {
    match error.raw_os_error() {
        Some(code) => io::Error::from_raw_os_error(code),
        None => io::Error::new(error.kind(), error.to_string()),
    }
}

/// The skip reason an I/O error stands for.
pub(crate) fn io_reason(error: &io::Error) -> SkipReason {
    if error.kind() == io::ErrorKind::NotFound {
        SkipReason::Vanished
    } else if error.raw_os_error() == Some(ELOOP) {
        SkipReason::SymlinkLoop
    } else {
        SkipReason::Unreadable {
            error: error.to_string(),
        }
    }
}

// `io::ErrorKind::FilesystemLoop` is not stable, so the loop is recognised by its errno.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(crate) const ELOOP: i32 = 40;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) const ELOOP: i32 = 62;

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn root_of(dir: &Path) -> Arc<RootDir> {
        let canonical = fs::canonicalize(dir).unwrap();
        Arc::new(RootDir::open(dir.to_path_buf(), canonical).unwrap())
    }

    fn title_read(
        parent: &mut OpenParent,
        relative: &str,
        link: bool,
    ) -> Result<String, SkipReason> {
        let mut text = String::new();
        let mut file = parent.open(Path::new(relative), link)?;
        io::Read::read_to_string(&mut file, &mut text).unwrap();
        Ok(text)
    }

    #[test]
    fn a_directory_swapped_for_a_symlink_out_of_the_root_is_not_entered() {
        let (inside, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        fs::write(outside.path().join("a.md"), "outside").unwrap();
        symlink(outside.path(), inside.path().join("sub")).unwrap();
        let mut parent = OpenParent::new(root_of(inside.path()));

        assert_eq!(
            title_read(&mut parent, "sub/a.md", false),
            Err(SkipReason::Vanished)
        );
        assert_eq!(parent.key(Path::new("sub/a.md"), false), None);
    }

    #[test]
    fn a_file_swapped_for_a_symlink_is_not_a_file() {
        let (inside, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        fs::write(outside.path().join("a.md"), "outside").unwrap();
        symlink(outside.path().join("a.md"), inside.path().join("a.md")).unwrap();
        let mut parent = OpenParent::new(root_of(inside.path()));

        assert_eq!(
            title_read(&mut parent, "a.md", false),
            Err(SkipReason::NotAFile)
        );
    }

    #[test]
    fn a_symlink_retargeted_outside_the_root_is_refused() {
        let (inside, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        fs::write(outside.path().join("a.md"), "outside").unwrap();
        symlink(outside.path().join("a.md"), inside.path().join("link.md")).unwrap();
        let mut parent = OpenParent::new(root_of(inside.path()));

        assert_eq!(
            title_read(&mut parent, "link.md", true),
            Err(SkipReason::SymlinkOutsideRoot)
        );
    }

    #[test]
    fn a_symlink_inside_the_root_is_read_through_its_target() {
        let inside = tempfile::tempdir().unwrap();
        fs::create_dir(inside.path().join("sub")).unwrap();
        fs::write(inside.path().join("sub/a.md"), "inside").unwrap();
        symlink("sub/a.md", inside.path().join("link.md")).unwrap();
        let mut parent = OpenParent::new(root_of(inside.path()));

        assert_eq!(
            title_read(&mut parent, "link.md", true),
            Ok("inside".to_owned())
        );
        assert_eq!(
            parent.key(Path::new("link.md"), true),
            parent.key(Path::new("sub/a.md"), false)
        );
    }

    #[test]
    fn files_in_nested_directories_are_read_by_name_in_their_open_directory() {
        let inside = tempfile::tempdir().unwrap();
        fs::create_dir_all(inside.path().join("a/b")).unwrap();
        fs::write(inside.path().join("a/b/c.md"), "deep").unwrap();
        fs::write(inside.path().join("top.md"), "top").unwrap();
        let mut parent = OpenParent::new(root_of(inside.path()));

        assert_eq!(
            title_read(&mut parent, "a/b/c.md", false),
            Ok("deep".into())
        );
        assert_eq!(
            parent.open.as_ref().map(|(open, _)| open.clone()),
            Some(PathBuf::from("a/b"))
        );
        assert_eq!(title_read(&mut parent, "top.md", false), Ok("top".into()));
        assert_eq!(
            title_read(&mut parent, "a/missing.md", false),
            Err(SkipReason::Vanished)
        );
    }

    #[test]
    fn loop_errno_is_reported_as_symlink_loop() {
        assert_eq!(
            io_reason(&io::Error::from_raw_os_error(ELOOP)),
            SkipReason::SymlinkLoop
        );
    }

    #[test]
    fn permission_failure_is_reported_as_unreadable_with_the_os_message() {
        let error = io::Error::from(io::ErrorKind::PermissionDenied);
        assert_eq!(
            io_reason(&error),
            SkipReason::Unreadable {
                error: error.to_string()
            }
        );
    }
}
