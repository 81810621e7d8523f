//! The state directory and its catalog on Windows, reached by path: std has no open below a
//! directory handle there. What stands in for the Unix side's guarantees:
//! - a symbolic link or junction (any name-surrogate reparse point) in the place of the state
//!   directory or the catalog is refused, never followed, and the catalog is opened with
//!   `FILE_FLAG_OPEN_REPARSE_POINT`, so one put there between the check and the open is opened
//!   as itself and refused as not a regular file;
//! - privacy is the ACL the directory inherits: the catalog store is under the memrecall home in
//!   the user's profile directory, whose ACL admits the user (and the system's administrators)
//!   alone; there are no modes to narrow;
//! - the catalog is written to a temporary file created new (never an existing one), flushed,
//!   and renamed over the catalog (`MoveFileExW` with `MOVEFILE_REPLACE_EXISTING`, which std's
//!   rename uses): a reader sees the old catalog or the new one, never a part. A failed write
//!   removes its temporary file; one left by a writer that was killed is removed by the next
//!   write once it is older than a write ever takes.

use std::fs::File;
use std::io::{self, Seek as _, Write as _};
use std::os::windows::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use super::{
    CATALOG_FILE_NAME, CatalogParts, Kind, StateDirError, StateLocation, TEMPORARY_PREFIX,
};

/// `FILE_FLAG_OPEN_REPARSE_POINT`: a reparse point is opened as itself, not followed.
const OPEN_REPARSE_POINT: u32 = 0x0020_0000;

/// Temporary files older than this are removed whoever wrote them: no write takes that long.
const STALE_TEMPORARY: Duration = Duration::from_mins(10);

/// Whether something is at `path`: a `kind` is, nothing is, or something else is in its place
/// (a link, never followed, or another type) and refused.
fn is_there(path: &Path, kind: Kind) -> Result<bool, StateDirError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(StateDirError::Symlink {
            path: path.to_path_buf(),
        }),
        Ok(meta) => {
            let right = match kind {
                Kind::Directory => meta.is_dir(),
                Kind::File => meta.is_file(),
            };
            if right {
                Ok(true)
            } else {
                Err(wrong_type(path, kind))
            }
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(StateDirError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn wrong_type(path: &Path, kind: Kind) -> StateDirError {
    StateDirError::WrongType {
        path: path.to_path_buf(),
        expected: kind.name(),
    }
}

/// The state directory at `location`, created when `create` says; `None` when there is none.
pub(super) fn open_dir(
    location: &StateLocation,
    create: bool,
) -> Result<Option<PathBuf>, StateDirError> {
    let root = location.parent.as_path();
    let io_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StateDirError::Io { path, source }
    };
    if create && location.create_parent {
        std::fs::create_dir_all(root).map_err(io_error(root))?;
    }
    if !is_there(root, Kind::Directory)? {
        // A store's directory is made with the first catalog written into it.
        if location.create_parent && !create {
            return Ok(None);
        }
        return Err(StateDirError::Io {
            path: root.to_path_buf(),
            source: io::ErrorKind::NotFound.into(),
        });
    }
    let path = location.path();
    if !is_there(&path, Kind::Directory)? {
        if !create {
            return Ok(None);
        }
        match std::fs::create_dir(&path) {
            Ok(()) => {}
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            Err(source) => return Err(StateDirError::Io { path, source }),
        }
        is_there(&path, Kind::Directory)?;
    }
    Ok(Some(path))
}

/// The catalog in the state directory `dir`, opened for reading as itself; `None` when there
/// is none.
pub(super) fn open_catalog(dir: &Path) -> Result<Option<File>, StateDirError> {
    let path = dir.join(CATALOG_FILE_NAME);
    if !is_there(&path, Kind::File)? {
        return Ok(None);
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(OPEN_REPARSE_POINT)
        .open(&path);
    let file = match file {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(StateDirError::Io { path, source }),
    };
    let meta = file.metadata().map_err(|source| StateDirError::Io {
        path: path.clone(),
        source,
    })?;
    if meta.is_symlink() {
        return Err(StateDirError::Symlink { path });
    }
    if !meta.is_file() {
        return Err(wrong_type(&path, Kind::File));
    }
    Ok(Some(file))
}

/// A temporary file being written, removed when dropped unless it was renamed away.
struct Temporary {
    path: PathBuf,
    renamed: bool,
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Replaces the catalog in `dir` with `parts`: the room for their header first, then each batch
/// of parts, then the header at the start, flushed, renamed over the catalog.
pub(super) fn replace_catalog(dir: &Path, parts: &mut dyn CatalogParts) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    remove_stale(dir);
    let (mut temporary, mut file) = loop {
        let name = format!(
            "{TEMPORARY_PREFIX}{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = dir.join(name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => {
                break (
                    Temporary {
                        path,
                        renamed: false,
                    },
                    file,
                );
            }
            // Left by an earlier process with the same id; take the next name.
            Err(error) if error.kind() == io::ErrorKind::AlreadyExists => {}
            Err(error) => return Err(error),
        }
    };
    file.write_all(&vec![0; parts.header_len()])?;
    while let Some(batch) = parts.next_parts()? {
        for part in batch {
            file.write_all(&part)?;
        }
    }
    let header = parts.header()?;
    if header.len() != parts.header_len() {
        return Err(io::Error::other(
            "the catalog's header is not of the length its room was made for",
        ));
    }
    file.rewind()?;
    file.write_all(&header)?;
    file.sync_all()?;
    drop(file);
    rename_over(&temporary.path, &dir.join(CATALOG_FILE_NAME))?;
    temporary.renamed = true;
    Ok(())
}

/// Renames `from` over `to`. Where the file system replaces only a file no one has open
/// (without POSIX rename semantics), a reader of the old catalog makes the rename fail with
/// access denied for as long as it reads: it is tried again, a few times over some
/// milliseconds, before the write gives up (the previous catalog stays).
fn rename_over(from: &Path, to: &Path) -> io::Result<()> {
    const ATTEMPTS: u32 = 20;
    let mut attempt = 1;
    loop {
        match std::fs::rename(from, to) {
            Err(error) if error.kind() == io::ErrorKind::PermissionDenied && attempt < ATTEMPTS => {
                std::thread::sleep(Duration::from_millis(u64::from(attempt)));
                attempt += 1;
            }
            renamed => return renamed,
        }
    }
}

/// Removes the temporary files in `dir` older than [`STALE_TEMPORARY`].
fn remove_stale(dir: &Path) {
    let Ok(listing) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in listing.flatten() {
        let temporary = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(TEMPORARY_PREFIX));
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|modified| now.duration_since(modified).ok())
            .is_some_and(|age| age > STALE_TEMPORARY);
        if temporary && meta.is_file() && old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
