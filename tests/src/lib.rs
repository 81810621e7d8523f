//! Workspace-level end-to-end tests live in `tests/`; this library is empty on purpose.
//!
//! The tests of the `memrecall` binary (`tests/cli.rs` and its modules) are declared as test
//! targets of `crates/memrecall`, so that cargo builds the binary for them; this package runs the
//! README test (`tests/readme.rs`), the links test (`tests/links.rs`: every link and repository
//! path the documentation and the comments cite exists), the layering test (`tests/layering.rs`)
//! and the architecture test (`tests/architecture.rs`: every test ARCHITECTURE.md names exists).

#![forbid(unsafe_code)]
