//! Injected I/O faults in catalog writes: every step of a write is made to fail in turn (and
//! writes made short), and after each failure the previous catalog is still whole or absent, no
//! temporary file is left, and a recall from the catalog finds exactly what a recall without one
//! finds.

use std::fs;
use std::io;
use std::path::Path;

use rustix::fd::{BorrowedFd, OwnedFd};

use crate::catalog::{self, CATALOG_DIR_NAME};
use crate::engine::MemoryRoots;
use crate::state_dir::{SystemSteps, TEMPORARY_PREFIX, WriteSteps};
use crate::{DocumentCache, RecallScan};

/// Which step fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Create,
    /// The `n`th write call (from 0): the header's room, the directory listings, the entry
    /// chunks, then the header itself.
    Write(usize),
    Sync,
    Rename,
    SyncDirectory,
    /// Every write takes at most this many bytes, and none fails.
    ShortWrites(usize),
    /// Writes take at most 7 bytes, and the `n`th fails.
    ShortThenFail(usize),
}

/// Real system calls, but for the one [`Fault`].
struct Faulty {
    fault: Fault,
    writes: usize,
}

impl Faulty {
    /// Counts a write or positioned write call: how many of `bytes` it may take, or its fault.
    fn next_write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let call = self.writes;
        self.writes += 1;
        let limit = match self.fault {
            Fault::Write(n) if n == call => return Err(injected()),
            Fault::ShortThenFail(n) if n == call => return Err(injected()),
            Fault::ShortThenFail(_) => 7,
            Fault::ShortWrites(max) => max,
            _ => bytes.len(),
        };
        Ok(bytes.len().min(limit))
    }
}

fn injected() -> io::Error {
    io::Error::other("injected fault")
}

impl WriteSteps for Faulty {
    fn create(&mut self, dir: BorrowedFd<'_>, name: &str) -> io::Result<OwnedFd> {
        if self.fault == Fault::Create {
            return Err(injected());
        }
        SystemSteps.create(dir, name)
    }

    fn write(&mut self, file: BorrowedFd<'_>, bytes: &[u8]) -> io::Result<usize> {
        let limit = self.next_write(bytes)?;
        SystemSteps.write(file, &bytes[..limit])
    }

    fn write_at(&mut self, file: BorrowedFd<'_>, bytes: &[u8], offset: u64) -> io::Result<usize> {
        let limit = self.next_write(bytes)?;
        SystemSteps.write_at(file, &bytes[..limit], offset)
    }

    fn sync(&mut self, file: BorrowedFd<'_>) -> io::Result<()> {
        if self.fault == Fault::Sync {
            return Err(injected());
        }
        SystemSteps.sync(file)
    }

    fn rename(&mut self, dir: BorrowedFd<'_>, from: &str, to: &str) -> io::Result<()> {
        if self.fault == Fault::Rename {
            return Err(injected());
        }
        SystemSteps.rename(dir, from, to)
    }

    fn sync_directory(&mut self, dir: BorrowedFd<'_>) -> io::Result<()> {
        if self.fault == Fault::SyncDirectory {
            return Err(injected());
        }
        SystemSteps.sync_directory(dir)
    }
}

fn write_topic(root: &Path, name: &str, title: &str) {
    let text = format!(
        "---\nname: {title}\ndescription: about {title}\ntype: project\n---\n\n{title} body\n"
    );
    fs::write(root.join(name), text).unwrap();
}

/// What a recall sees: each document's path and title, in pool order.
fn seen(scan: &RecallScan) -> Vec<(String, String)> {
    scan.documents
        .iter()
        .map(|d| {
            (
                d.relative_path().display().to_string(),
                d.title().to_owned(),
            )
        })
        .collect()
}

fn temporaries(root: &Path) -> Vec<String> {
    fs::read_dir(root.join(CATALOG_DIR_NAME))
        .map(|listing| {
            listing
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with(TEMPORARY_PREFIX))
                .collect()
        })
        .unwrap_or_default()
}

/// A tree whose catalog was written, then changed (a file added, one edited), scanned by a new
/// cache whose catalog write meets `fault`; returns the tree and what that write reported.
fn write_meeting(
    fault: Fault,
) -> (
    tempfile::TempDir,
    MemoryRoots,
    Result<usize, std::sync::Arc<crate::CatalogWriteError>>,
) {
    let dir = tempfile::tempdir().unwrap();
    let roots = MemoryRoots {
        project: Some(dir.path().to_path_buf()),
        user: None,
    };
    for (name, title) in [("a.md", "Alpha"), ("b.md", "Beta"), ("c.md", "Gamma")] {
        write_topic(dir.path(), name, title);
    }
    let first = DocumentCache::with_catalog();
    first.scan_recall(&roots).unwrap();
    assert!(first.persist_catalogs()[0].outcome.is_ok());
    write_topic(dir.path(), "d.md", "Delta");
    write_topic(dir.path(), "a.md", "Alpha, edited");

    let second = DocumentCache::with_catalog();
    second.scan_recall(&roots).unwrap();
    let mut steps = Faulty { fault, writes: 0 };
    let writes = second.persist_catalogs_with(&mut |location, entries, directories| {
        catalog::save_with(location, entries, directories, &mut steps)
    });
    (dir, roots, writes[0].outcome.clone())
}

fn assert_recall_is_unaffected(dir: &Path, roots: &MemoryRoots, fault: Fault) {
    assert_eq!(temporaries(dir), Vec::<String>::new(), "{fault:?}");
    let loaded = catalog::load(dir, crate::Scope::Project);
    assert!(
        loaded.is_ok(),
        "{fault:?}: the catalog is damaged: {loaded:?}"
    );
    let without = DocumentCache::new().scan_recall(roots).unwrap();
    let with = DocumentCache::with_catalog().scan_recall(roots).unwrap();
    assert_eq!(seen(&with), seen(&without), "{fault:?}");
    assert_eq!(seen(&with).len(), 4);
}

#[test]
fn a_catalog_write_failing_at_any_step_leaves_a_whole_catalog_and_no_temporary_file() {
    for fault in [
        Fault::Create,
        Fault::Write(0),
        Fault::Write(1),
        Fault::Write(2),
        // The header, written last at the start of the file.
        Fault::Write(3),
        Fault::Sync,
        Fault::Rename,
        Fault::SyncDirectory,
        Fault::ShortThenFail(5),
    ] {
        let (dir, roots, outcome) = write_meeting(fault);

        assert!(outcome.is_err(), "{fault:?} was not reported: {outcome:?}");
        assert_recall_is_unaffected(dir.path(), &roots, fault);
    }
}

#[test]
fn a_failed_catalog_write_leaves_the_previous_catalog_in_place() {
    for fault in [Fault::Create, Fault::Write(1), Fault::Sync, Fault::Rename] {
        let (dir, _, _) = write_meeting(fault);

        let (entries, _) = catalog::load(dir.path(), crate::Scope::Project)
            .unwrap()
            .unwrap();
        assert_eq!(entries.len(), 3, "{fault:?}");
    }
}

#[test]
fn short_writes_still_write_the_whole_catalog() {
    let fault = Fault::ShortWrites(5);
    let (dir, roots, outcome) = write_meeting(fault);

    assert_eq!(outcome.ok(), Some(4));
    assert_recall_is_unaffected(dir.path(), &roots, fault);
    let (entries, _) = catalog::load(dir.path(), crate::Scope::Project)
        .unwrap()
        .unwrap();
    assert_eq!(entries.len(), 4);
}

#[test]
fn after_a_failed_catalog_write_the_next_recall_writes_it() {
    let (dir, roots, _) = write_meeting(Fault::Rename);
    let cache = DocumentCache::with_catalog();
    cache.scan_recall(&roots).unwrap();

    let writes = cache.persist_catalogs();

    assert_eq!(writes[0].outcome.as_ref().ok(), Some(&4));
    assert_recall_is_unaffected(dir.path(), &roots, Fault::Rename);
}
