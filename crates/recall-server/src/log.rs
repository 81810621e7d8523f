//! The bounded log files of the hook and the server: each kept under [`MAX_LOG_BYTES`], with one
//! older copy.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use agent_hooks::files::{open_private, private_dir};

/// A log is moved to `….log.1` once it grows past this.
pub const MAX_LOG_BYTES: u64 = 512 * 1024;

/// A log (`….log`) kept under [`MAX_LOG_BYTES`]: a log over it is moved to `….log.1` before the
/// next line, so at most two logs of that size exist. The file stays open from one line to the
/// next, so a process that has run out of descriptors still logs.
#[derive(Debug)]
pub struct Log {
    path: PathBuf,
    file: Option<std::fs::File>,
}

impl Log {
    /// A log at `path`, opened (and its directory made) at the first line.
    pub const fn new(path: PathBuf) -> Self {
        Self { path, file: None }
    }

    /// Appends one timestamped line.
    pub fn append(&mut self, line: &str) -> std::io::Result<()> {
        let size = match &self.file {
            Some(file) => file.metadata()?.len(),
            None => std::fs::symlink_metadata(&self.path)
                .ok()
                .filter(std::fs::Metadata::is_file)
                .map_or(0, |m| m.len()),
        };
        if size > MAX_LOG_BYTES {
            self.file = None;
            match std::fs::rename(&self.path, rotated(&self.path)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
        let file = if let Some(file) = &mut self.file {
            file
        } else {
            if let Some(dir) = self.path.parent() {
                private_dir(dir)?;
            }
            let opened = open_private(
                std::fs::OpenOptions::new().create(true).append(true),
                &self.path,
            )?;
            self.file.insert(opened)
        };
        let line = line.replace('\n', " ");
        let now = humantime::format_rfc3339_seconds(SystemTime::now());
        // One write per line, so concurrent hooks do not interleave within a line.
        file.write_all(format!("{now} {line}\n").as_bytes())
    }
}

fn rotated(path: &Path) -> PathBuf {
    path.with_extension("log.1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_over_its_bound_moves_aside_and_a_new_one_starts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hook.log");
        std::fs::write(
            &path,
            vec![b'x'; usize::try_from(MAX_LOG_BYTES).unwrap() + 1],
        )
        .unwrap();
        Log::new(path.clone()).append("fresh").unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.ends_with(" fresh\n") && text.lines().count() == 1,
            "{text}"
        );
        assert!(dir.path().join("hook.log.1").is_file());
    }

    #[test]
    fn a_log_kept_open_moves_aside_once_it_grows_past_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("serve.log");
        let mut log = Log::new(path.clone());
        let long = "x".repeat(64 * 1024);
        while !dir.path().join("serve.log.1").exists() {
            log.append(&long).unwrap();
            assert!(std::fs::metadata(&path).unwrap().len() <= MAX_LOG_BYTES + 65 * 1024);
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_log_that_is_a_named_pipe_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hook.log");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let error = Log::new(path).append("a line").unwrap_err();
        assert!(error.to_string().contains("not a regular file"), "{error}");
    }

    #[cfg(unix)]
    #[test]
    fn a_log_that_is_a_symlink_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "keep\n").unwrap();
        let logs = dir.path().join("logs");
        std::fs::create_dir(&logs).unwrap();
        std::os::unix::fs::symlink(&target, logs.join("hook.log")).unwrap();
        assert!(Log::new(logs.join("hook.log")).append("a line").is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep\n");
    }
}
