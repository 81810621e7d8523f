//! `save_memory`: one topic file written atomically inside a memory root, and nowhere else.
//!
//! The file name is either given (a relative path of plain names ending in `.md`) or derived
//! from the title. Nothing leaves the root: absolute paths, `.` and `..`, hidden names and
//! symlinks anywhere on the way are refused. An existing file is replaced only when asked, and
//! the new file is never half-written: it is written beside its final name, flushed, then linked
//! (or, to replace, renamed) into place. On Unix every step is taken from directory handles
//! without following a symlink (see [`beneath`]), so a link swapped in during a save cannot lead
//! the write out of the root.

use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use memory_scan::{INDEX_FILE_NAME, MAX_TOPIC_BYTES, Topic, render_topic};

/// The largest body `save_memory` accepts, in bytes: a memory is a note, not a document dump.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// The longest file name (one path segment) accepted, in bytes.
const MAX_NAME_BYTES: usize = 255;
/// The longest title accepted, in characters: a title is one line a person reads in a list.
pub const MAX_TITLE_CHARS: usize = 200;
/// How many characters of the title a derived file name keeps.
const DERIVED_NAME_CHARS: usize = 60;

/// Why a memory was not saved; each message tells the caller what to change.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// The chosen scope has no root.
    #[error("there is no {0} memory root in this server's configuration")]
    NoRoot(&'static str),
    /// The file name is not a plain relative `*.md` path.
    #[error("file {file:?} is refused: {why}")]
    BadName {
        /// The name given.
        file: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A symlink stands on the way to the file, or is the file.
    #[error("{0} is a symlink; memories are only written to plain files inside the root")]
    Symlink(String),
    /// The file exists and replacing was not asked for.
    #[error("{0} already exists; pass replace: true to overwrite it, or choose another file name")]
    Exists(String),
    /// The title is over [`MAX_TITLE_CHARS`].
    #[error("the title is {chars} characters; a memory title may be at most {MAX_TITLE_CHARS}")]
    TitleTooLong {
        /// Its length in characters.
        chars: usize,
    },
    /// The body is over [`MAX_BODY_BYTES`].
    #[error("the body is {size} bytes; a memory body may be at most {MAX_BODY_BYTES} bytes")]
    BodyTooLarge {
        /// Its size.
        size: usize,
    },
    /// The rendered file would be larger than recall reads.
    #[error("the memory would be {size} bytes; recall reads files of at most {MAX_TOPIC_BYTES}")]
    FileTooLarge {
        /// Its size.
        size: usize,
    },
    /// Title or description cannot be stored.
    #[error(transparent)]
    Topic(#[from] memory_scan::TopicError),
    /// The file system refused.
    #[error("cannot write {path}: {source}")]
    Io {
        /// What was being written or created.
        path: PathBuf,
        /// What went wrong.
        source: std::io::Error,
    },
}

/// The path below the root to write: `file` checked, or a name derived from `title`.
pub fn relative_path(file: Option<&str>, title: &str) -> Result<PathBuf, SaveError> {
    match file {
        Some(file) => checked_relative(file),
        None => Ok(PathBuf::from(derived_name(title))),
    }
}

fn checked_relative(file: &str) -> Result<PathBuf, SaveError> {
    let refuse = |why| SaveError::BadName {
        file: file.to_owned(),
        why,
    };
    if file.is_empty() {
        return Err(refuse("it is empty"));
    }
    if file.contains('\0') || file.contains('\\') {
        return Err(refuse("it holds a NUL or a backslash"));
    }
    if file.chars().any(|c| c.is_control() || is_bidi_control(c)) {
        return Err(refuse(
            "it holds a control or bidirectional-formatting character",
        ));
    }
    if file.ends_with('/') {
        return Err(refuse(
            "it ends in `/`, so it names a directory, not a file",
        ));
    }
    let path = Path::new(file);
    if path.has_root() || path.is_absolute() {
        return Err(refuse(
            "absolute paths are not allowed; give a path below the root",
        ));
    }
    let mut names = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(name) => names.push(name),
            Component::ParentDir | Component::CurDir => {
                return Err(refuse("`.` and `..` are not allowed"));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(refuse(
                    "absolute paths are not allowed; give a path below the root",
                ));
            }
        }
    }
    // `components` drops `.` segments inside a path; they are refused all the same.
    if file
        .split('/')
        .any(|segment| segment == "." || segment == "..")
    {
        return Err(refuse("`.` and `..` are not allowed"));
    }
    for name in &names {
        let bytes = name.as_encoded_bytes();
        if bytes.starts_with(b".") {
            return Err(refuse("hidden names (starting with `.`) are not allowed"));
        }
        if bytes.starts_with(b"~") {
            return Err(refuse(
                "a name starting with `~` is not expanded to a home folder; give a path below the root",
            ));
        }
        if let Some(why) = name.to_str().and_then(not_portable) {
            return Err(refuse(why));
        }
        if bytes.len() > MAX_NAME_BYTES {
            return Err(refuse("a name in it is longer than 255 bytes"));
        }
    }
    let Some(last) = names.last() else {
        return Err(refuse("it names no file"));
    };
    if !last.as_encoded_bytes().ends_with(b".md") || last.len() <= 3 {
        return Err(refuse("the file name must end in `.md`"));
    }
    if *last == INDEX_FILE_NAME {
        return Err(refuse("MEMORY.md is the index, not a memory"));
    }
    Ok(names.iter().collect())
}

/// Bidirectional formatting characters, which can make a name read otherwise than it is.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Why `name` cannot be a file or folder name on Windows, where a memory tree may be synced.
fn not_portable(name: &str) -> Option<&'static str> {
    const RESERVED: [&str; 4] = ["CON", "PRN", "AUX", "NUL"];
    let stem = name.split('.').next().unwrap_or(name).trim_end();
    let upper = stem.to_ascii_uppercase();
    let numbered = ["COM", "LPT"].iter().any(|device| {
        upper
            .strip_prefix(device)
            .is_some_and(|n| n.len() == 1 && n.as_bytes()[0].is_ascii_digit() && n != "0")
    });
    if RESERVED.contains(&upper.as_str()) || numbered {
        return Some("it uses a device name Windows reserves (CON, PRN, AUX, NUL, COM1-9, LPT1-9)");
    }
    if name.contains(['<', '>', ':', '"', '|', '?', '*']) {
        return Some("it holds a character Windows does not allow in names (< > : \" | ? *)");
    }
    if name.ends_with(['.', ' ']) {
        return Some("a name in it ends with a dot or a space, which Windows drops");
    }
    None
}

/// A file name from a title: letters and digits of any script kept (lowercased), every run of
/// anything else one `-`, at most [`DERIVED_NAME_CHARS`] characters, then `.md`.
pub fn derived_name(title: &str) -> String {
    let mut name = String::new();
    for c in title.chars() {
        if name.chars().count() >= DERIVED_NAME_CHARS {
            break;
        }
        if c.is_alphanumeric() {
            name.extend(c.to_lowercase());
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let name = name.trim_end_matches('-');
    if name.is_empty() {
        "memory.md".to_owned()
    } else {
        format!("{name}.md")
    }
}

/// Writes `topic` at `relative` below `root`, creating `root` and the directories between them
/// (private to the user) when missing. Returns the file's full path.
pub fn write(
    root: &Path,
    relative: &Path,
    topic: &Topic,
    replace: bool,
) -> Result<PathBuf, SaveError> {
    let title_chars = topic.title().chars().count();
    if title_chars > MAX_TITLE_CHARS {
        return Err(SaveError::TitleTooLong { chars: title_chars });
    }
    if topic.body().len() > MAX_BODY_BYTES {
        return Err(SaveError::BodyTooLarge {
            size: topic.body().len(),
        });
    }
    let text = render_topic(topic);
    if u64::try_from(text.len()).unwrap_or(u64::MAX) > MAX_TOPIC_BYTES {
        return Err(SaveError::FileTooLarge { size: text.len() });
    }
    if !root.exists() {
        private_dir_builder(true)
            .create(root)
            .map_err(|source| SaveError::Io {
                path: root.to_path_buf(),
                source,
            })?;
    }
    beneath::write(root, relative, text.as_bytes(), replace)
}

/// The file system steps of a save on Unix: every directory below the root is created with
/// `mkdirat` and opened with `openat(…, O_NOFOLLOW)` from its parent's handle, and the file is
/// written, linked and renamed by name in its directory's handle, so a symlink swapped in while
/// a save runs is never followed out of the root.
#[cfg(unix)]
mod beneath {
    use std::ffi::OsStr;
    use std::path::{Path, PathBuf};

    use memory_scan::beneath::{self, BelowErrorKind};
    use rustix::fd::{AsFd, OwnedFd};
    use rustix::fs::{AtFlags, FileType, Mode, OFlags};
    use rustix::io::Errno;

    use super::{SaveError, shown_below, temporary_name};

    pub(super) fn write(
        root: &Path,
        relative: &Path,
        bytes: &[u8],
        replace: bool,
    ) -> Result<PathBuf, SaveError> {
        let shown = relative.display().to_string();
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |errno: Errno| SaveError::Io {
                path,
                source: errno.into(),
            }
        };
        let names: Vec<&OsStr> = relative.iter().collect();
        let Some((file_name, parents)) = names.split_last() else {
            return Err(SaveError::BadName {
                file: shown,
                why: "it names no file",
            });
        };
        let root_fd = beneath::open_root(root).map_err(|source| SaveError::Io {
            path: root.to_path_buf(),
            source,
        })?;
        let parents: PathBuf = parents.iter().collect();
        let dir =
            beneath::open_below(&root_fd, &parents, beneath::Create::Private).map_err(|error| {
                let failed: PathBuf = parents.iter().take(error.depth + 1).collect();
                match error.kind {
                    BelowErrorKind::Symlink => {
                        SaveError::Symlink(shown_below(root, &root.join(&failed)))
                    }
                    BelowErrorKind::NotADirectory => SaveError::BadName {
                        file: shown.clone(),
                        why: "a part of it is a file, not a directory",
                    },
                    BelowErrorKind::Io(source) => SaveError::Io {
                        path: root.join(&failed),
                        source,
                    },
                }
            })?;
        let dir_path = root.join(&parents);
        let target = dir_path.join(file_name);
        match kind(&dir, file_name) {
            Some(FileType::Symlink) => return Err(SaveError::Symlink(shown)),
            Some(FileType::RegularFile) if !replace => return Err(SaveError::Exists(shown)),
            Some(FileType::RegularFile) | None => {}
            Some(_) => {
                return Err(SaveError::BadName {
                    file: shown,
                    why: "it is not a regular file",
                });
            }
        }
        let temporary = temporary_name(file_name);
        let written = write_new(&dir, &temporary, bytes).and_then(|()| {
            if replace {
                // A rename replaces the name itself: a symlink put there since is replaced, not
                // followed.
                rustix::fs::renameat(&dir, &temporary, &dir, *file_name)
            } else {
                // A link never replaces an existing name: a file that appeared since the check
                // above is kept, and this save fails.
                rustix::fs::linkat(&dir, &temporary, &dir, *file_name, AtFlags::empty())
            }
        });
        let _ = rustix::fs::unlinkat(&dir, &temporary, AtFlags::empty());
        match written {
            Ok(()) => Ok(target),
            Err(Errno::EXIST) => Err(SaveError::Exists(shown)),
            Err(errno) => Err(io(&target)(errno)),
        }
    }

    /// What `name` in `dir` is, without following a symlink; `None` when there is nothing.
    fn kind(dir: &OwnedFd, name: &OsStr) -> Option<FileType> {
        rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .map(|stat| FileType::from_raw_mode(stat.st_mode))
    }

    /// Creates `name` in `dir` (it must not exist), private to the user, with `bytes`, flushed
    /// to disk.
    fn write_new(dir: &OwnedFd, name: &OsStr, mut bytes: &[u8]) -> Result<(), Errno> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let file = rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o600))?;
        while !bytes.is_empty() {
            match rustix::io::write(&file, bytes) {
                Ok(0) => return Err(Errno::IO),
                Ok(written) => bytes = bytes.get(written..).unwrap_or_default(),
                Err(Errno::INTR) => {}
                Err(errno) => return Err(errno),
            }
        }
        rustix::fs::fsync(file.as_fd())
    }
}

/// Off Unix, the same steps by path: checked, then used.
#[cfg(not(unix))]
mod beneath {
    use std::io::Write as _;
    use std::path::{Path, PathBuf};

    use super::{SaveError, shown_below, temporary_name};

    pub(super) fn write(
        root: &Path,
        relative: &Path,
        bytes: &[u8],
        replace: bool,
    ) -> Result<PathBuf, SaveError> {
        let shown = relative.display().to_string();
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| SaveError::Io { path, source }
        };
        let mut dir = root.to_path_buf();
        let names: Vec<_> = relative.iter().collect();
        let Some((file_name, parents)) = names.split_last() else {
            return Err(SaveError::BadName {
                file: shown,
                why: "it names no file",
            });
        };
        for name in parents {
            dir.push(name);
            match std::fs::symlink_metadata(&dir) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(SaveError::Symlink(shown_below(root, &dir)));
                }
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => {
                    return Err(SaveError::BadName {
                        file: shown,
                        why: "a part of it is a file, not a directory",
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    std::fs::create_dir(&dir).map_err(io(&dir))?;
                }
                Err(source) => return Err(SaveError::Io { path: dir, source }),
            }
        }
        let target = dir.join(file_name);
        match std::fs::symlink_metadata(&target) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(SaveError::Symlink(shown)),
            Ok(meta) if !meta.is_file() => {
                return Err(SaveError::BadName {
                    file: shown,
                    why: "it is not a regular file",
                });
            }
            Ok(_) if !replace => return Err(SaveError::Exists(shown)),
            _ => {}
        }
        let temporary = dir.join(temporary_name(file_name));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)
            .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
            .and_then(|()| {
                if replace {
                    std::fs::rename(&temporary, &target)
                } else {
                    std::fs::hard_link(&temporary, &target)
                }
            });
        let _ = std::fs::remove_file(&temporary);
        match written {
            Ok(()) => Ok(target),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Err(SaveError::Exists(shown))
            }
            Err(source) => Err(SaveError::Io {
                path: target,
                source,
            }),
        }
    }
}

fn shown_below(root: &Path, path: &Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// A hidden name beside the file that the scan never takes for a topic (it does not end in
/// `.md`), unique within this process and across processes.
fn temporary_name(file_name: &std::ffi::OsStr) -> std::ffi::OsString {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut name = std::ffi::OsString::from(".");
    name.push(file_name);
    name.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    name
}

fn private_dir_builder(recursive: bool) -> std::fs::DirBuilder {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(recursive);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
}

#[cfg(test)]
mod tests;
