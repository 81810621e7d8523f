//! Workspace-level end-to-end tests live in `tests/`; this library holds only what several of
//! them read the workspace with.
//!
//! The tests of the `memrecall` binary (`tests/cli.rs` and its modules) are declared as test
//! targets of `crates/memrecall`, so that cargo builds the binary for them; this package runs the
//! README test (`tests/readme.rs`), the links test (`tests/links.rs`: every link and repository
//! path the documentation and the comments cite exists), the layering test (`tests/layering.rs`)
//! and the architecture test (`tests/architecture.rs`: every test ARCHITECTURE.md names exists).

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

/// The workspace's root directory.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every `.rs` file below `path`, in no particular order.
///
/// # Panics
///
/// When a directory below `path` cannot be read: a test's workspace is readable.
pub fn rust_files(path: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
    files
}
