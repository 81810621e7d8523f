//! Helpers shared by the crate's unit tests.

/// Makes a named pipe at `path` that no one writes to: opening it for reading would wait
/// forever unless the open does not block.
#[cfg(unix)]
pub(crate) fn make_fifo(path: &std::path::Path) {
    // `mkfifo(1)` exists on every Unix; rustix's `mknodat` does not exist on macOS.
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo can be run");
    assert!(
        made.success(),
        "a FIFO can be made in a temporary directory"
    );
}
