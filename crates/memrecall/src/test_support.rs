//! Helpers shared by the binary's unit tests.

/// Makes a named pipe at `path` that no one writes to: opening it for reading would wait
/// forever unless the open does not block.
#[cfg(unix)]
pub(crate) fn make_fifo(path: &std::path::Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .expect("a FIFO can be made in a temporary directory");
}
