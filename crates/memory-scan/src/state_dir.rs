//! A memory root's state directory ([`CATALOG_DIR_NAME`]) and the catalog file in it, reached
//! only through directory handles and never through a symlink.
//!
//! A catalog holds the parsed bodies of the memories it describes, so it must be exactly as
//! private as the most private of them, and it must never land anywhere but under its root:
//! - the directory is opened with `openat(root, ".memrecall", O_NOFOLLOW | O_DIRECTORY)` and
//!   created with `mkdirat(…, 0700)`; a symlink or a non-directory in its place is refused, and so
//!   is a directory owned by another user (its catalog could feed another user's text into this
//!   user's prompts);
//! - the directory is kept at mode 0700 and the catalog at 0600: an existing wider one is
//!   tightened when it is opened;
//! - the catalog is written to a temporary file created with mode 0600 before any byte is
//!   written, synced, renamed over the catalog in the same directory, and the directory synced.
//!   Every step goes through [`WriteSteps`], so tests can make each one fail in turn; after any
//!   failure the previous catalog is intact (or there is none) and no temporary file is left.
//!   A writer killed mid-write leaves its temporary file: the next write in the directory removes
//!   it (see the `temporaries` module).
//!
//! On Windows, where std opens nothing below a directory handle, the same is done by path with
//! the guarantees restated there (see the `windows` module): links refused and never followed,
//! privacy through the ACL of the user's profile directory, an atomic replace by rename.

use std::fs::File;
use std::io;
#[cfg(unix)]
use std::path::Path;
use std::path::PathBuf;
#[cfg(unix)]
use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(unix)]
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};

mod location;
#[cfg(unix)]
mod temporaries;
#[cfg(windows)]
mod windows;

pub(crate) use location::StateLocation;
pub use location::{
    CATALOG_DIR_NAME, CATALOG_FILE_NAME, CatalogStore, catalog_path, remove_in_root_catalog,
};

/// The name prefix of a catalog being written: `catalog.tmp-<pid>-<n>`.
pub(crate) const TEMPORARY_PREFIX: &str = "catalog.tmp-";

/// The mode of the catalog and of its temporary files.
#[cfg(unix)]
const FILE_MODE: u32 = 0o600;

/// What a state path must be, and the widest mode it may keep (Unix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The state directory: 0700.
    Directory,
    /// The catalog: 0600.
    File,
}

impl Kind {
    #[cfg(unix)]
    fn mode(self) -> u32 {
        match self {
            Self::Directory => 0o700,
            Self::File => FILE_MODE,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Directory => "directory",
            Self::File => "regular file",
        }
    }

    #[cfg(unix)]
    fn file_type(self) -> rustix::fs::FileType {
        match self {
            Self::Directory => rustix::fs::FileType::Directory,
            Self::File => rustix::fs::FileType::RegularFile,
        }
    }
}

/// Why a root's state directory or catalog is not used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateDirError {
    /// A symlink is where the state directory or the catalog should be; it is never followed.
    #[error("{path} is a symbolic link; memrecall never follows one for its own state")]
    Symlink {
        /// The symlink.
        path: PathBuf,
    },
    /// Something other than a directory (or a regular file, for the catalog) is in its place.
    #[error("{path} is not a {expected}")]
    WrongType {
        /// The path.
        path: PathBuf,
        /// `directory` or `regular file`.
        expected: &'static str,
    },
    /// The state directory or the catalog belongs to another user.
    #[error("{path} belongs to user {owner}, not to this user ({user}); it is left alone")]
    ForeignOwner {
        /// The path.
        path: PathBuf,
        /// Its owner's user id.
        owner: u32,
        /// This process's effective user id.
        user: u32,
    },
    /// A system call failed.
    #[error("{path}: {source}")]
    Io {
        /// The path it was about.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// The steps of an atomic catalog write, each one system call; production uses [`SystemSteps`],
/// tests make any step fail or write short.
#[cfg(unix)]
pub(crate) trait WriteSteps {
    /// Creates `name` in `dir`, exclusively, with mode 0600, not following a symlink.
    fn create(&mut self, dir: BorrowedFd<'_>, name: &str) -> io::Result<OwnedFd>;
    /// Writes some of `bytes`; returns how many.
    fn write(&mut self, file: BorrowedFd<'_>, bytes: &[u8]) -> io::Result<usize>;
    /// Writes some of `bytes` at `offset`, leaving the file position where it is; returns how
    /// many.
    fn write_at(&mut self, file: BorrowedFd<'_>, bytes: &[u8], offset: u64) -> io::Result<usize>;
    /// Flushes the file to stable storage.
    fn sync(&mut self, file: BorrowedFd<'_>) -> io::Result<()>;
    /// Renames `from` over `to`, both in `dir`.
    fn rename(&mut self, dir: BorrowedFd<'_>, from: &str, to: &str) -> io::Result<()>;
    /// Flushes the directory, so the rename is durable.
    fn sync_directory(&mut self, dir: BorrowedFd<'_>) -> io::Result<()>;
}

/// What [`StateDir::replace_catalog`] writes: parts that come a batch at a time, so that a large
/// catalog is never whole in memory, after a header of known length that describes them and so
/// is written last.
pub(crate) trait CatalogParts {
    /// The header's length in bytes, known before any part is.
    fn header_len(&self) -> usize;
    /// The next parts in file order; `None` once every part was given.
    fn next_parts(&mut self) -> io::Result<Option<Vec<Vec<u8>>>>;
    /// The header, of [`CatalogParts::header_len`] bytes, once every part was given.
    fn header(&mut self) -> io::Result<Vec<u8>>;
}

/// The real system calls.
#[cfg(unix)]
pub(crate) struct SystemSteps;

#[cfg(unix)]
impl WriteSteps for SystemSteps {
    fn create(&mut self, dir: BorrowedFd<'_>, name: &str) -> io::Result<OwnedFd> {
        use rustix::fs::OFlags;
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        Ok(rustix::fs::openat(
            dir,
            name,
            flags,
            permission_mode(FILE_MODE),
        )?)
    }

    fn write(&mut self, file: BorrowedFd<'_>, bytes: &[u8]) -> io::Result<usize> {
        Ok(rustix::io::write(file, bytes)?)
    }

    fn write_at(&mut self, file: BorrowedFd<'_>, bytes: &[u8], offset: u64) -> io::Result<usize> {
        Ok(rustix::io::pwrite(file, bytes, offset)?)
    }

    fn sync(&mut self, file: BorrowedFd<'_>) -> io::Result<()> {
        Ok(rustix::fs::fsync(file)?)
    }

    fn rename(&mut self, dir: BorrowedFd<'_>, from: &str, to: &str) -> io::Result<()> {
        Ok(rustix::fs::renameat(dir, from, dir, to)?)
    }

    fn sync_directory(&mut self, dir: BorrowedFd<'_>) -> io::Result<()> {
        Ok(rustix::fs::fsync(dir)?)
    }
}

/// A root's state directory, open.
pub(crate) struct StateDir {
    path: PathBuf,
    #[cfg(unix)]
    fd: OwnedFd,
}

impl StateDir {
    /// Opens the state directory at `location`; `Ok(None)` when there is none.
    pub(crate) fn open(location: &StateLocation) -> Result<Option<Self>, StateDirError> {
        Self::open_in(location, false)
    }

    /// Opens the state directory at `location`, creating it (mode 0700) when there is none. A
    /// memory root itself is never created.
    pub(crate) fn open_or_create(location: &StateLocation) -> Result<Self, StateDirError> {
        Self::open_in(location, true)?.ok_or_else(|| StateDirError::Io {
            path: location.path(),
            source: io::ErrorKind::NotFound.into(),
        })
    }

    #[cfg(windows)]
    fn open_in(location: &StateLocation, create: bool) -> Result<Option<Self>, StateDirError> {
        Ok(windows::open_dir(location, create)?.map(|path| Self { path }))
    }

    #[cfg(unix)]
    fn open_in(location: &StateLocation, create: bool) -> Result<Option<Self>, StateDirError> {
        let root = location.parent.as_path();
        let name = location.name.as_str();
        let path = location.path();
        if create && location.create_parent {
            let mut builder = std::fs::DirBuilder::new();
            std::os::unix::fs::DirBuilderExt::mode(builder.recursive(true), 0o700);
            builder.create(root).map_err(|source| StateDirError::Io {
                path: root.to_path_buf(),
                source,
            })?;
        }
        let root_fd = match crate::beneath::open_root(root) {
            Ok(fd) => fd,
            // A store's directory is made with the first catalog written into it.
            Err(error)
                if error.kind() == io::ErrorKind::NotFound && location.create_parent && !create =>
            {
                return Ok(None);
            }
            Err(source) => {
                return Err(StateDirError::Io {
                    path: root.to_path_buf(),
                    source,
                });
            }
        };
        let how = if create {
            crate::beneath::Create::Private
        } else {
            crate::beneath::Create::No
        };
        let fd = match crate::beneath::open_below(&root_fd, Path::new(name), how) {
            Ok(fd) => fd,
            Err(error) => {
                return match error.kind {
                    crate::beneath::BelowErrorKind::Symlink => Err(StateDirError::Symlink { path }),
                    crate::beneath::BelowErrorKind::NotADirectory => {
                        Err(StateDirError::WrongType {
                            path,
                            expected: Kind::Directory.name(),
                        })
                    }
                    crate::beneath::BelowErrorKind::Io(source)
                        if source.kind() == io::ErrorKind::NotFound =>
                    {
                        Ok(None)
                    }
                    crate::beneath::BelowErrorKind::Io(source) => {
                        Err(StateDirError::Io { path, source })
                    }
                };
            }
        };
        make_private(fd.as_fd(), &path, Kind::Directory)?;
        Ok(Some(Self { path, fd }))
    }

    /// The path of a file in the directory.
    pub(crate) fn path_of(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Opens the catalog for reading (never blocking, never through a symlink) and makes it
    /// private; `Ok(None)` when there is none.
    #[cfg(unix)]
    pub(crate) fn open_catalog(&self) -> Result<Option<File>, StateDirError> {
        use rustix::fs::{Mode, OFlags};
        use rustix::io::Errno;
        let path = self.path_of(CATALOG_FILE_NAME);
        // Never blocks: a FIFO in the catalog's place would otherwise wait for a writer forever.
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(&self.fd, CATALOG_FILE_NAME, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP) => return Err(symlink_or_not(&self.fd, path, Kind::File)),
            Err(errno) => {
                return Err(StateDirError::Io {
                    path,
                    source: errno.into(),
                });
            }
        };
        make_private(fd.as_fd(), &path, Kind::File)?;
        Ok(Some(File::from(fd)))
    }

    /// Opens the catalog for reading, as itself (never through a link); `Ok(None)` when there
    /// is none.
    #[cfg(windows)]
    pub(crate) fn open_catalog(&self) -> Result<Option<File>, StateDirError> {
        windows::open_catalog(&self.path)
    }

    /// Replaces the catalog with `parts` (see the `windows` module): on failure the temporary
    /// file is removed and the previous catalog, if any, is untouched.
    #[cfg(windows)]
    pub(crate) fn replace_catalog(&self, parts: &mut dyn CatalogParts) -> io::Result<()> {
        windows::replace_catalog(&self.path, parts)
    }

    /// Replaces the catalog with `parts` through `steps`: the room for their header first, then
    /// each batch of parts as it comes, then the header at the start. On failure the temporary
    /// file is removed and the previous catalog, if any, is untouched. Temporary files of writers
    /// that are gone are removed first.
    #[cfg(unix)]
    pub(crate) fn replace_catalog(
        &self,
        steps: &mut dyn WriteSteps,
        parts: &mut dyn CatalogParts,
    ) -> io::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        temporaries::remove_stale(&self.fd);
        let (mut temporary, file) = loop {
            let name = temporaries::temporary_name(COUNTER.fetch_add(1, Ordering::Relaxed));
            match steps.create(self.fd.as_fd(), &name) {
                Ok(file) => break (temporaries::Temporary::new(self.fd.as_fd(), name), file),
                // Left by an earlier process with the same id; take the next name.
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
                Err(error) => return Err(error),
            }
        };
        write_all(steps, file.as_fd(), &vec![0; parts.header_len()])?;
        while let Some(batch) = parts.next_parts()? {
            for part in batch {
                write_all(steps, file.as_fd(), &part)?;
            }
        }
        let header = parts.header()?;
        if header.len() != parts.header_len() {
            return Err(io::Error::other(
                "the catalog's header is not of the length its room was made for",
            ));
        }
        write_all_at(steps, file.as_fd(), &header, 0)?;
        steps.sync(file.as_fd())?;
        drop(file);
        steps.rename(self.fd.as_fd(), &temporary.name, CATALOG_FILE_NAME)?;
        temporary.renamed();
        steps.sync_directory(self.fd.as_fd())
    }
}

/// Writes all of `bytes` through `steps`, however short each write is.
#[cfg(unix)]
fn write_all(steps: &mut dyn WriteSteps, file: BorrowedFd<'_>, bytes: &[u8]) -> io::Result<()> {
    write_fully(bytes, |rest, _| steps.write(file, rest))
}

/// Writes all of `bytes` at `offset` through `steps`, however short each write is.
#[cfg(unix)]
fn write_all_at(
    steps: &mut dyn WriteSteps,
    file: BorrowedFd<'_>,
    bytes: &[u8],
    offset: u64,
) -> io::Result<()> {
    write_fully(bytes, |rest, done| {
        steps.write_at(file, rest, offset + done as u64)
    })
}

/// Calls `write` with what is left of `bytes` and how much is already written until nothing is
/// left, retrying interrupted calls; a call that writes nothing is an error.
#[cfg(unix)]
fn write_fully(
    bytes: &[u8],
    mut write: impl FnMut(&[u8], usize) -> io::Result<usize>,
) -> io::Result<()> {
    let mut done = 0;
    while done < bytes.len() {
        match write(&bytes[done..], done) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(written) => done += written,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// Checks that the opened `fd` is of `kind` and belongs to this user, and narrows its mode to
/// `kind`'s when it is wider. A mode that cannot be narrowed (a read-only file system) is left as it is: what is in
/// it was written by this user, and nothing is added to it there.
#[cfg(unix)]
fn make_private(fd: BorrowedFd<'_>, path: &Path, kind: Kind) -> Result<(), StateDirError> {
    let stat = rustix::fs::fstat(fd).map_err(|errno| StateDirError::Io {
        path: path.to_path_buf(),
        source: errno.into(),
    })?;
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != kind.file_type() {
        return Err(StateDirError::WrongType {
            path: path.to_path_buf(),
            expected: kind.name(),
        });
    }
    let mode = kind.mode();
    let user = rustix::process::geteuid().as_raw();
    if stat.st_uid != user {
        return Err(StateDirError::ForeignOwner {
            path: path.to_path_buf(),
            owner: stat.st_uid,
            user,
        });
    }
    #[allow(clippy::useless_conversion)] // `st_mode`'s type varies by platform.
    let current = u32::from(stat.st_mode) & 0o7777;
    if current & !mode != 0 {
        let _ = rustix::fs::fchmod(fd, permission_mode(current & mode));
    }
    Ok(())
}

/// What is in the way when an `O_NOFOLLOW` open fails with `ELOOP` or `ENOTDIR`: a symlink, or
/// something of the wrong type.
#[cfg(unix)]
fn symlink_or_not(dir: &OwnedFd, path: PathBuf, kind: Kind) -> StateDirError {
    let name = path.file_name().unwrap_or_default().to_owned();
    match rustix::fs::statat(dir, name.as_os_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat)
            if rustix::fs::FileType::from_raw_mode(stat.st_mode)
                == rustix::fs::FileType::Symlink =>
        {
            StateDirError::Symlink { path }
        }
        _ => StateDirError::WrongType {
            path,
            expected: kind.name(),
        },
    }
}

/// Permission bits as rustix takes them: `mode_t` is 16 bits wide on macOS and 32 on Linux, and
/// the permission bits (`0o7777`) fit either.
#[cfg(unix)]
#[allow(
    clippy::useless_conversion,
    clippy::unnecessary_fallible_conversions,
    reason = "the conversion is the identity where mode_t is 32 bits wide"
)]
fn permission_mode(bits: u32) -> rustix::fs::Mode {
    let raw = rustix::fs::RawMode::try_from(bits & 0o7777).unwrap_or(0);
    rustix::fs::Mode::from_bits_truncate(raw)
}
