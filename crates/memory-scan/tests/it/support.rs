//! Building real memory trees in temporary directories.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use memory_scan::MemoryRoots;
use tempfile::TempDir;

/// A project root and a user root under one temporary directory.
pub struct Tree {
    pub dir: TempDir,
}

impl Tree {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("project")).unwrap();
        fs::create_dir(dir.path().join("user")).unwrap();
        Self { dir }
    }

    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    pub fn user(&self) -> PathBuf {
        self.dir.path().join("user")
    }

    pub fn roots(&self) -> MemoryRoots {
        MemoryRoots {
            project: Some(self.project()),
            user: Some(self.user()),
        }
    }

    pub fn project_only(&self) -> MemoryRoots {
        MemoryRoots {
            project: Some(self.project()),
            user: None,
        }
    }
}

/// Writes `content` at `root/relative`, creating parent directories.
pub fn write(root: &Path, relative: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, content).unwrap();
    path
}

/// A topic file's text.
pub fn topic(memory_type: &str, name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\ntype: {memory_type}\n---\n\n{body}\n")
}

/// Writes a valid topic named after its file.
pub fn write_topic(root: &Path, relative: &str) -> PathBuf {
    write(
        root,
        relative,
        topic("project", relative, "about it", "Body."),
    )
}

pub fn at(seconds: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(seconds)
}

pub fn set_mtime(path: &Path, seconds: u64) {
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(at(seconds))
        .unwrap();
}

/// Moves the mtime of every regular file and directory under `root` (and of `root`) one hour
/// back, keeping their order, so the cache treats them as stable (older than its racy-timestamp
/// margin).
pub fn make_stable(root: &Path) {
    for entry in fs::read_dir(root).unwrap() {
        let entry = entry.unwrap();
        let file_type = entry.file_type().unwrap();
        if file_type.is_dir() {
            make_stable(&entry.path());
        } else if file_type.is_file() {
            backdate(&fs::File::options().write(true).open(entry.path()).unwrap());
        }
    }
    // Directories too, so their listings can be remembered; after the entries, which do not move
    // a directory's mtime anyway.
    backdate(&open_directory(root));
}

/// A directory opened so that its times can be set.
fn open_directory(path: &Path) -> fs::File {
    #[cfg(windows)]
    {
        use std::os::windows::fs::OpenOptionsExt as _;
        // FILE_FLAG_BACKUP_SEMANTICS: Windows opens a directory only with it.
        fs::File::options()
            .write(true)
            .custom_flags(0x0200_0000)
            .open(path)
            .unwrap()
    }
    #[cfg(not(windows))]
    fs::File::open(path).unwrap()
}

/// Moves a file's or directory's mtime an hour back.
fn backdate(file: &fs::File) {
    let mtime = file.metadata().unwrap().modified().unwrap();
    file.set_modified(mtime - Duration::from_hours(1)).unwrap();
}

/// Makes a FIFO (named pipe) at `path`; opening it for reading the usual way waits for a writer.
#[cfg(unix)]
pub fn make_fifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

/// Runs `work` on a thread of its own and returns its result, failing the test if it has not
/// finished within a generous `limit` (a scan that blocks forever would otherwise hang the run).
#[cfg(unix)]
pub fn finishes_within<T: Send + 'static>(
    limit: Duration,
    work: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(work()));
    result
        .recv_timeout(limit)
        .unwrap_or_else(|_| panic!("still running after {limit:?}"))
}

/// `setpriv`, when this process runs as root and has it: what a test needs to run part of itself
/// as a user who may not read or list what root made. `None` elsewhere, where such a test says it
/// was skipped and returns.
#[cfg(unix)]
pub fn setpriv_as_root(tree: &Tree) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let root = fs::metadata(tree.dir.path()).unwrap().uid() == 0;
    let found = ["/usr/bin/setpriv", "/bin/setpriv"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| path.exists())
        .filter(|_| root);
    if found.is_none() {
        eprintln!("skipped: needs root and setpriv to act as another user");
    }
    found
}

/// Set, to the project root to scan, only in a run of one test of this binary that
/// [`passes_as_another_user`] started.
#[cfg(unix)]
const AS_ANOTHER_USER_ENV: &str = "MEMRECALL_TEST_PROJECT_ROOT";

/// The project root to scan when this process is a test re-run as another user by
/// [`passes_as_another_user`]; `None` in an ordinary run.
#[cfg(unix)]
pub fn project_root_as_another_user() -> Option<PathBuf> {
    std::env::var_os(AS_ANOTHER_USER_ENV).map(PathBuf::from)
}

/// Runs the test `name` of this test binary again as the unprivileged user 65534, with
/// [`project_root_as_another_user`] giving `project`; whether it passed. The test does its
/// part as that user when it sees the root.
#[cfg(unix)]
pub fn passes_as_another_user(setpriv: &Path, name: &str, project: &Path) -> bool {
    std::process::Command::new(setpriv)
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture"])
        .env(AS_ANOTHER_USER_ENV, project)
        .status()
        .unwrap()
        .success()
}

/// Sets each path's permission bits.
#[cfg(unix)]
pub fn set_modes(modes: &[(PathBuf, u32)]) {
    use std::os::unix::fs::PermissionsExt;
    for (path, mode) in modes {
        fs::set_permissions(path, fs::Permissions::from_mode(*mode)).unwrap();
    }
}
