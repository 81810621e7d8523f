//! Reading and replacing a settings file: atomically, keeping its permissions, through a
//! dotfiles manager's symlink, with a backup of the user's own file beside it.

use std::path::{Path, PathBuf};

use super::SettingsError;

/// Reads a settings file: its text (empty when the file is missing) and whether it exists.
/// Nothing that cannot be read as text is touched.
pub fn read(path: &Path) -> Result<(String, bool), SettingsError> {
    use memory_scan::foreign::{self, ByteLimit, Links};
    match foreign::read_to_string(path, ByteLimit::SETTINGS, Links::Follow) {
        Ok(text) => Ok((text, true)),
        Err(e) if e.is_not_found() => Ok((String::new(), false)),
        Err(e) => Err(SettingsError::Read(e)),
    }
}

/// The backup `write` keeps of the user's file when asked to.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".memrecall-backup");
    path.with_file_name(name)
}

/// Replaces `path` with `text` atomically (a temporary file renamed over it), keeping the
/// original's permissions and, with `backup`, a copy of it beside it ([`backup_path`]). When
/// `path` is a symlink (a dotfiles manager's), the file it leads to is replaced, in that file's
/// directory, and the link is kept.
pub fn write(path: &Path, text: &str, existed: bool, backup: bool) -> Result<(), SettingsError> {
    use std::io::Write as _;
    let link = path;
    let failed = |source| SettingsError::Write {
        path: link.to_path_buf(),
        source,
    };
    let target = link_target(link).map_err(failed)?;
    let path = target.as_path();
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(failed)?;
    let permissions = if existed {
        if backup {
            crate::files::copy_whole(path, &backup_path(link)).map_err(failed)?;
        }
        Some(std::fs::metadata(path).map_err(failed)?.permissions())
    } else {
        None
    };
    let mut temp_name = path.file_name().unwrap_or_default().to_os_string();
    temp_name.push(format!(".memrecall-{}.tmp", std::process::id()));
    let temp = dir.join(temp_name);
    let written = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(text.as_bytes())?;
        if let Some(permissions) = permissions {
            file.set_permissions(permissions)?;
        }
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map_err(failed)
}

/// Removes a settings file `install` created (the file a symlink leads to, when it is one).
pub fn remove_created(path: &Path) -> Result<(), SettingsError> {
    let failed = |source| SettingsError::Write {
        path: path.to_path_buf(),
        source,
    };
    let target = link_target(path).map_err(failed)?;
    std::fs::remove_file(target).map_err(failed)
}

/// The file `path` leads to: itself, or the end of its chain of symlinks (which need not exist
/// yet). A chain longer than the kernel's own limit is an error, as it is for an open.
fn link_target(path: &Path) -> std::io::Result<PathBuf> {
    /// Linux's limit on symlinks followed in one lookup.
    const MAX_HOPS: usize = 40;
    let mut current = path.to_path_buf();
    for _ in 0..MAX_HOPS {
        match std::fs::symlink_metadata(&current) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                let next = std::fs::read_link(&current)?;
                current = match current.parent() {
                    Some(parent) => parent.join(next),
                    None => next,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(std::io::Error::other(format!(
        "{} is a chain of more than {MAX_HOPS} symbolic links",
        path.display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backup_is_a_whole_copy_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        std::fs::write(&settings, "{\"model\": \"x\"}").unwrap();
        std::fs::write(backup_path(&settings), "an older backup").unwrap();

        crate::files::copy_whole(&settings, &backup_path(&settings)).unwrap();

        assert_eq!(
            std::fs::read_to_string(backup_path(&settings)).unwrap(),
            "{\"model\": \"x\"}"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn an_existing_settings_file_is_replaced_and_kept_as_its_backup() {
        let dir = tempfile::tempdir().unwrap();
        let settings = dir.path().join("settings.json");
        std::fs::write(&settings, "{\"model\": \"x\"}").unwrap();

        write(&settings, "{\"hooks\": {}}\n", true, true).unwrap();

        assert_eq!(
            std::fs::read_to_string(&settings).unwrap(),
            "{\"hooks\": {}}\n"
        );
        assert_eq!(
            std::fs::read_to_string(backup_path(&settings)).unwrap(),
            "{\"model\": \"x\"}"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }
}

#[cfg(all(test, unix))]
mod unix_tests {
    use super::*;
    use crate::Agent;
    use crate::settings::Document;

    #[test]
    fn writing_a_symlinked_settings_file_replaces_its_target_and_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let dotfiles = dir.path().join("dotfiles");
        std::fs::create_dir_all(&dotfiles).unwrap();
        let real = dotfiles.join("settings.json");
        std::fs::write(&real, "{\"model\": \"x\"}").unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();

        let (text, existed) = read(&link).unwrap();
        let mut document = Document::parse(&text, Agent::ClaudeCode, &link).unwrap();
        document
            .merge(Agent::ClaudeCode, "/bin/memrecall hook --agent claude-code")
            .unwrap();
        write(&link, &document.text(), existed, true).unwrap();

        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::read_to_string(&real)
                .unwrap()
                .contains("memrecall hook")
        );
        assert_eq!(
            std::fs::read_to_string(backup_path(&link)).unwrap(),
            "{\"model\": \"x\"}"
        );
        let leftovers: Vec<_> = std::fs::read_dir(&dotfiles)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "{leftovers:?}");
    }

    /// A tmpfs of `size` mounted on a new directory, unmounted when dropped; `None` where this
    /// process may not mount one (not root, or in a container that forbids it).
    struct TinyDisk {
        dir: tempfile::TempDir,
    }

    impl TinyDisk {
        fn mount(size: &str) -> Option<Self> {
            let dir = tempfile::tempdir().ok()?;
            let mounted = std::process::Command::new("mount")
                .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
                .arg(dir.path())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            mounted.then_some(Self { dir })
        }
    }

    impl Drop for TinyDisk {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount")
                .arg(self.dir.path())
                .status();
        }
    }

    #[test]
    fn a_backup_that_does_not_fit_on_the_disk_leaves_no_partial_file() {
        let Some(disk) = TinyDisk::mount("64k") else {
            eprintln!("skipped: mounting a 64 KiB tmpfs is not permitted here");
            return;
        };
        let settings = disk.dir.path().join("settings.json");
        let original = format!("{{\"notes\": \"{}\"}}", "n".repeat(40 * 1024));
        std::fs::write(&settings, &original).unwrap();

        let error = write(&settings, "{}\n", true, true)
            .unwrap_err()
            .to_string();

        assert!(error.contains("cannot write"), "{error}");
        assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);
        let names: Vec<_> = std::fs::read_dir(disk.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["settings.json"], "a partial file was left");
    }

    #[test]
    fn a_settings_file_that_is_a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        crate::test_support::make_fifo(&path);
        let error = read(&path).unwrap_err().to_string();
        assert!(error.contains("named pipe"), "{error}");
    }
}
