//! Reading a file memrecall does not own (an agent's settings, a `.git` file, `config.toml`,
//! telemetry written by an earlier run) without letting that file hang or exhaust the process.
//!
//! A repository the user clones decides what sits at such a path: a symlink to `/dev/zero`, a
//! FIFO no one writes, a socket, a directory, a file of gigabytes. So a foreign file is:
//! - opened without blocking (`O_NONBLOCK`: opening a FIFO that has no writer would otherwise
//!   wait forever), and, with [`Links::Refuse`], without following a symlink in its place;
//! - checked on the opened handle: anything but a regular file is refused with what it is;
//! - read to at most its [`ByteLimit`] (one byte more is read to tell "too large" apart from
//!   "exactly at the limit"); a longer file is refused as too large, never truncated.
//!
//! Off Unix the open follows the platform's rules and the same checks apply after it.
//!
//! # Example
//!
//! ```
//! use memory_scan::foreign::{ByteLimit, ForeignFileError, Links, read_to_string};
//!
//! let dir = tempfile::tempdir()?;
//! let settings = dir.path().join("settings.json");
//! std::fs::write(&settings, r#"{"hooks":{}}"#)?;
//!
//! let text = read_to_string(&settings, ByteLimit::SETTINGS, Links::Follow)?;
//! assert_eq!(text, r#"{"hooks":{}}"#);
//!
//! let missing = read_to_string(&dir.path().join("none"), ByteLimit::SETTINGS, Links::Follow);
//! assert!(matches!(missing, Err(ForeignFileError::NotFound { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::File;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

/// The most bytes a read of one kind of foreign file takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteLimit(u64);

impl ByteLimit {
    /// An agent's settings file, or memrecall's `config.toml`: hand-edited JSON or TOML.
    pub const SETTINGS: Self = Self(4 * 1024 * 1024);
    /// A `.git` file or one of git's small pointer files (`commondir`, `gitdir`): one line.
    pub const GIT_POINTER: Self = Self(64 * 1024);
    /// One telemetry file; the writer rotates its files long before this.
    pub const TELEMETRY: Self = Self(256 * 1024 * 1024);
    /// A small state file memrecall keeps for itself (a fingerprint, a pid).
    pub const STATE: Self = Self(64 * 1024);

    /// A limit of `bytes`.
    pub const fn bytes(bytes: u64) -> Self {
        Self(bytes)
    }

    /// The limit in bytes.
    pub const fn get(self) -> u64 {
        self.0
    }
}

/// Whether a symlink at the path itself is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Followed, as the agent that owns the file follows it (its target is still checked).
    Follow,
    /// Refused: for files in memrecall's own private directories, where a link is never ours.
    Refuse,
}

/// What a foreign file is when it is not a regular file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotRegular {
    /// A directory.
    Directory,
    /// A named pipe.
    Fifo,
    /// A character or block device (`/dev/zero`, a disk).
    Device,
    /// A Unix socket.
    Socket,
    /// A symbolic link where none is followed.
    Symlink,
    /// Anything else the platform has.
    Other,
}

impl NotRegular {
    /// The kind in words.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Directory => "a directory",
            Self::Fifo => "a named pipe",
            Self::Device => "a device",
            Self::Socket => "a socket",
            Self::Symlink => "a symbolic link",
            Self::Other => "not a regular file",
        }
    }

    fn of(file_type: std::fs::FileType) -> Self {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt as _;
            if file_type.is_fifo() {
                return Self::Fifo;
            }
            if file_type.is_char_device() || file_type.is_block_device() {
                return Self::Device;
            }
            if file_type.is_socket() {
                return Self::Socket;
            }
        }
        if file_type.is_dir() {
            Self::Directory
        } else if file_type.is_symlink() {
            Self::Symlink
        } else {
            Self::Other
        }
    }
}

/// Why a foreign file was not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ForeignFileError {
    /// Nothing is at the path.
    #[error("{path} does not exist")]
    NotFound {
        /// The path.
        path: PathBuf,
    },
    /// Something other than a regular file is at the path; it is never read.
    #[error("{path} is {} and not a regular file; it is not read", kind.as_str())]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: NotRegular,
    },
    /// The file is longer than its kind's limit; it is not read (not even in part).
    #[error("{path} is larger than {limit} bytes; it is not read")]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },
    /// The file is not UTF-8 text (only from [`read_to_string`]).
    #[error("{path} is not UTF-8 text")]
    NotUtf8 {
        /// The path.
        path: PathBuf,
    },
    /// Opening or reading failed.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

impl ForeignFileError {
    /// Whether nothing was at the path (a missing file is often simply "no settings").
    pub fn is_not_found(&self) -> bool {
        matches!(self, Self::NotFound { .. })
    }
}

/// Reads the foreign file at `path` (see the module docs).
pub fn read(path: &Path, limit: ByteLimit, links: Links) -> Result<Vec<u8>, ForeignFileError> {
    let file = open(path, links)?;
    let io = |source: io::Error| ForeignFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let metadata = file.metadata().map_err(io)?;
    if !metadata.is_file() {
        return Err(ForeignFileError::NotRegular {
            path: path.to_path_buf(),
            kind: NotRegular::of(metadata.file_type()),
        });
    }
    let too_large = || ForeignFileError::TooLarge {
        path: path.to_path_buf(),
        limit: limit.get(),
    };
    if metadata.len() > limit.get() {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    (&file)
        .take(limit.get().saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > limit.get() {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read`], as UTF-8 text.
pub fn read_to_string(
    path: &Path,
    limit: ByteLimit,
    links: Links,
) -> Result<String, ForeignFileError> {
    String::from_utf8(read(path, limit, links)?).map_err(|_| ForeignFileError::NotUtf8 {
        path: path.to_path_buf(),
    })
}

/// Opens `path` for reading without blocking and, with [`Links::Refuse`], without following a
/// symlink at the path itself.
fn open(path: &Path, links: Links) -> Result<File, ForeignFileError> {
    let failed = |source: io::Error| match source.kind() {
        io::ErrorKind::NotFound => ForeignFileError::NotFound {
            path: path.to_path_buf(),
        },
        _ => ForeignFileError::Io {
            path: path.to_path_buf(),
            source,
        },
    };
    #[cfg(unix)]
    {
        use rustix::fs::{Mode, OFlags};
        let mut flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        if links == Links::Refuse {
            flags |= OFlags::NOFOLLOW;
        }
        match rustix::fs::open(path, flags, Mode::empty()) {
            Ok(fd) => Ok(File::from(fd)),
            Err(rustix::io::Errno::LOOP) if links == Links::Refuse => {
                Err(ForeignFileError::NotRegular {
                    path: path.to_path_buf(),
                    kind: NotRegular::Symlink,
                })
            }
            Err(errno) => Err(failed(errno.into())),
        }
    }
    #[cfg(not(unix))]
    {
        if links == Links::Refuse
            && std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(ForeignFileError::NotRegular {
                path: path.to_path_buf(),
                kind: NotRegular::Symlink,
            });
        }
        // Windows opens a directory only when asked with a flag of its own; refused, it is named
        // as what it is.
        File::open(path).map_err(|source| {
            if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
                ForeignFileError::NotRegular {
                    path: path.to_path_buf(),
                    kind: NotRegular::Directory,
                }
            } else {
                failed(source)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_within_its_limit_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a");
        std::fs::write(&path, b"12345").unwrap();
        assert_eq!(
            read(&path, ByteLimit::bytes(5), Links::Follow).unwrap(),
            b"12345"
        );
    }

    #[test]
    fn a_file_one_byte_over_its_limit_is_refused_as_too_large() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a");
        std::fs::write(&path, b"123456").unwrap();
        let error = read(&path, ByteLimit::bytes(5), Links::Follow).unwrap_err();
        assert!(
            matches!(error, ForeignFileError::TooLarge { limit: 5, .. }),
            "{error}"
        );
    }

    #[test]
    fn a_missing_file_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let error = read(&dir.path().join("none"), ByteLimit::STATE, Links::Follow).unwrap_err();
        assert!(error.is_not_found());
    }

    #[test]
    fn a_directory_is_refused_as_not_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let error = read(dir.path(), ByteLimit::STATE, Links::Follow).unwrap_err();
        assert!(matches!(
            error,
            ForeignFileError::NotRegular {
                kind: NotRegular::Directory,
                ..
            }
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_to_dev_zero_is_refused_as_a_device_without_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let error = read(&path, ByteLimit::SETTINGS, Links::Follow).unwrap_err();
        assert!(
            matches!(
                error,
                ForeignFileError::NotRegular {
                    kind: NotRegular::Device,
                    ..
                }
            ),
            "{error}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_without_a_writer_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo");
        // `mkfifo(1)` exists on every Unix; rustix's `mknodat` does not exist on macOS.
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let error = read(&path, ByteLimit::SETTINGS, Links::Follow).unwrap_err();
        assert!(
            matches!(
                error,
                ForeignFileError::NotRegular {
                    kind: NotRegular::Fifo,
                    ..
                }
            ),
            "{error}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_refused_where_links_are_refused_and_its_target_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, b"secret").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let error = read(&link, ByteLimit::STATE, Links::Refuse).unwrap_err();
        assert!(matches!(
            error,
            ForeignFileError::NotRegular {
                kind: NotRegular::Symlink,
                ..
            }
        ));
        assert_eq!(
            read(&link, ByteLimit::STATE, Links::Follow).unwrap(),
            b"secret"
        );
    }

    #[test]
    fn text_that_is_not_utf8_is_refused_by_read_to_string() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a");
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert!(matches!(
            read_to_string(&path, ByteLimit::STATE, Links::Follow),
            Err(ForeignFileError::NotUtf8 { .. })
        ));
    }
}
