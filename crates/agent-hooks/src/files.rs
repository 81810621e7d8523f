//! Files and directories private to the user: what memrecall keeps under its home is about the
//! user's prompts and memory; and a file replaced by a whole copy of another ([`copy_whole`],
//! [`copy_executable`]), never left half-written.
//!
//! A file memrecall keeps for itself (a log, a lock, a state file) is opened with
//! [`open_private`]: never through a symlink, never waiting (a named pipe put in its place would
//! otherwise block the open, or every write, forever), and only when what was opened is a regular
//! file.

use std::fs::File;
use std::path::{Path, PathBuf};

use memory_scan::foreign::NotRegular;

/// Creates `dir` and its missing parents, each private to this user (0700 on Unix): what
/// memrecall keeps under its home.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// `options` creating a file private to this user (0600 on Unix), refusing a symlink in its
/// place (`O_NOFOLLOW`: the open fails rather than write through a link to another file) and
/// never waiting to open (`O_NONBLOCK`). [`open_private`] also refuses what is not a regular
/// file; a caller opening with these options alone must check that itself.
pub fn private_file(options: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
        options
            .mode(0o600)
            .custom_flags(i32::try_from(flags.bits()).unwrap_or(0));
    }
    options
}

/// Why a private file was not opened.
#[derive(Debug, thiserror::Error)]
pub enum PrivateFileError {
    /// Something other than a regular file is at the path; it is left alone.
    #[error("{} is {} and not a regular file", path.display(), kind.as_str())]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: NotRegular,
    },
    /// The open failed otherwise.
    #[error("cannot open {}: {source}", path.display())]
    Open {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl From<PrivateFileError> for std::io::Error {
    fn from(error: PrivateFileError) -> Self {
        let kind = match &error {
            PrivateFileError::NotRegular { .. } => std::io::ErrorKind::InvalidInput,
            PrivateFileError::Open { source, .. } => source.kind(),
        };
        Self::new(kind, error)
    }
}

/// Opens the file at `path` with `options` made [`private_file`], and keeps it only if it is a
/// regular file; the handle returned blocks as usual.
pub fn open_private(
    options: &mut std::fs::OpenOptions,
    path: &Path,
) -> Result<File, PrivateFileError> {
    let not_regular = |kind| PrivateFileError::NotRegular {
        path: path.to_path_buf(),
        kind,
    };
    let failed = |source| PrivateFileError::Open {
        path: path.to_path_buf(),
        source,
    };
    let file = match private_file(options).open(path) {
        Ok(file) => file,
        // Opened for writing, a named pipe nobody reads fails with ENXIO, and a symlink with
        // ELOOP: say what is there rather than the error's name.
        Err(source) => {
            return Err(std::fs::symlink_metadata(path)
                .ok()
                .filter(|meta| !meta.is_file())
                .map_or_else(|| failed(source), |meta| not_regular(kind(&meta))));
        }
    };
    let meta = file.metadata().map_err(failed)?;
    if !meta.is_file() {
        return Err(not_regular(kind(&meta)));
    }
    #[cfg(unix)]
    {
        use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
        let flags = fcntl_getfl(&file).map_err(|e| failed(e.into()))?;
        fcntl_setfl(&file, flags - OFlags::NONBLOCK).map_err(|e| failed(e.into()))?;
    }
    Ok(file)
}

/// What a file that is not a regular file is.
fn kind(meta: &std::fs::Metadata) -> NotRegular {
    let file_type = meta.file_type();
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt as _;
        if file_type.is_fifo() {
            return NotRegular::Fifo;
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return NotRegular::Device;
        }
        if file_type.is_socket() {
            return NotRegular::Socket;
        }
    }
    if file_type.is_dir() {
        NotRegular::Directory
    } else if file_type.is_symlink() {
        NotRegular::Symlink
    } else {
        NotRegular::Other
    }
}

/// Copies `from` to `to` through a temporary file beside `to` that is flushed to disk and then
/// renamed over it, so that `to` is either left as it was or holds the whole copy: a full disk
/// fails the copy and leaves no partial file behind. `to`'s directory must exist.
pub fn copy_whole(from: &Path, to: &Path) -> std::io::Result<()> {
    copy_through_temporary(from, to, false)
}

/// [`copy_whole`], the copy made executable (0755 on Unix) before it is renamed over `to`: a
/// program copied so that nothing ever starts a half-written one.
pub fn copy_executable(from: &Path, to: &Path) -> std::io::Result<()> {
    copy_through_temporary(from, to, true)
}

fn copy_through_temporary(from: &Path, to: &Path, executable: bool) -> std::io::Result<()> {
    let mut temp_name = to.file_name().unwrap_or_default().to_os_string();
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = to.with_file_name(temp_name);
    let copied = (|| {
        std::fs::copy(from, &temp)?;
        #[cfg(unix)]
        if executable {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(0o755))?;
        }
        #[cfg(not(unix))]
        let _ = executable;
        // Opened for writing: Windows flushes only a handle that may write.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&temp)?
            .sync_all()?;
        std::fs::rename(&temp, to)
    })();
    if copied.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    copied
}

#[cfg(test)]
mod tests {
    use std::fs::OpenOptions;
    #[cfg(unix)]
    use std::io::Read as _;
    use std::io::Write as _;

    use super::*;

    fn append() -> OpenOptions {
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        options
    }

    #[test]
    fn a_private_file_is_created_and_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hook.log");
        let mut file = open_private(&mut append(), &path).unwrap();
        file.write_all(b"a line\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a line\n");
    }

    #[test]
    fn a_directory_in_place_of_a_private_file_is_refused_as_not_a_regular_file() {
        let dir = tempfile::tempdir().unwrap();
        let error = open_private(OpenOptions::new().read(true), dir.path()).unwrap_err();
        assert!(
            matches!(
                error,
                PrivateFileError::NotRegular {
                    kind: NotRegular::Directory,
                    ..
                }
            ),
            "{error}"
        );
        assert!(error.to_string().contains("not a regular file"), "{error}");
    }

    #[cfg(unix)]
    fn fifo(path: &Path) {
        // `mkfifo(1)` exists on every Unix.
        let made = std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .unwrap();
        assert!(made.success());
    }

    #[cfg(unix)]
    fn assert_refused_as_a_fifo(opened: Result<std::fs::File, PrivateFileError>) {
        let error = opened.unwrap_err();
        assert!(
            matches!(
                error,
                PrivateFileError::NotRegular {
                    kind: NotRegular::Fifo,
                    ..
                }
            ),
            "{error}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_in_place_of_a_private_file_is_refused_for_writing_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.log");
        fifo(&path);
        assert_refused_as_a_fifo(open_private(&mut append(), &path));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_in_place_of_a_private_file_is_refused_for_reading_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.lock");
        fifo(&path);
        assert_refused_as_a_fifo(open_private(OpenOptions::new().read(true), &path));
    }

    #[cfg(unix)]
    #[test]
    fn a_private_file_opened_is_left_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state");
        std::fs::write(&path, "kept").unwrap();
        let mut file = open_private(OpenOptions::new().read(true), &path).unwrap();
        let flags = rustix::fs::fcntl_getfl(&file).unwrap();
        assert!(!flags.contains(rustix::fs::OFlags::NONBLOCK));
        let mut text = String::new();
        file.read_to_string(&mut text).unwrap();
        assert_eq!(text, "kept");
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_in_place_of_a_private_file_is_refused_and_its_target_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "keep").unwrap();
        let link = dir.path().join("hook.log");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let error = open_private(&mut append(), &link).unwrap_err();
        assert!(
            matches!(
                error,
                PrivateFileError::NotRegular {
                    kind: NotRegular::Symlink,
                    ..
                }
            ),
            "{error}"
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    }

    #[test]
    fn the_copy_is_executable_holds_the_same_bytes_and_leaves_no_partial_file() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("memrecall");
        std::fs::write(&from, b"\x7fELF binary").unwrap();
        let to = dir.path().join("home/bin/memrecall");
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(&to, b"an older copy").unwrap();

        copy_executable(&from, &to).unwrap();

        assert_eq!(std::fs::read(&to).unwrap(), b"\x7fELF binary");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&to).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o755);
        }
        let names: Vec<_> = std::fs::read_dir(to.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["memrecall"]);
    }
}
