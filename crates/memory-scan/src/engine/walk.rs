//! The walk of one root: directory by directory, classifying each entry by the walk rules, and
//! reusing a directory's remembered listing while it still holds.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::access::io_reason;
use super::changes::ChangedPaths;
use super::listing::{Directories, DirectoryListing, EntryKind};
use super::{
    Candidate, EarlyKey, MAX_DEPTH, MAX_ENTRIES_PER_DIRECTORY, MAX_FILES_PER_ROOT, Root,
    is_markdown, join,
};
use crate::document::Scope;
use crate::key::FileKey;
use crate::report::{SkipReason, SkippedFile};

/// One root's walk: what it found and what it remembered of its listings.
pub(super) struct Walk {
    /// The root the candidates are read through.
    pub(super) root: Root,
    pub(super) candidates: Vec<Candidate>,
    pub(super) skipped: Vec<SkippedFile>,
    pub(super) files_seen: usize,
    /// With priors: the listing of every directory the walk could remember.
    pub(super) directories: Directories,
    /// With priors: whether `directories` differs from the remembered listings.
    pub(super) directories_changed: bool,
    /// With priors: directories not listed because their remembered listing held.
    pub(super) listings_reused: usize,
    /// Directories listed from the file system.
    pub(super) directories_listed: usize,
    /// Directories opened to take their key.
    pub(super) directories_stated: usize,
    /// Files whose key was taken ahead of their visit.
    pub(super) keys_taken: usize,
    /// The limits the walk met, each reported once.
    met: LimitsMet,
    /// Past the file limit, the root's own files are still taken (see
    /// `take_the_roots_own_files`).
    taking_the_roots_own_files: bool,
}

/// Which of a walk's limits it met.
#[derive(Debug, Default)]
struct LimitsMet {
    /// A directory deeper than [`MAX_DEPTH`].
    depth: bool,
    /// The root gave [`MAX_FILES_PER_ROOT`] `*.md` entries and had more: the walk stops.
    files: bool,
    /// A directory with more than [`MAX_ENTRIES_PER_DIRECTORY`] entries.
    entries: bool,
}

/// What a walk may reuse: the listings remembered from the last walk of the same root, and the
/// time (epoch nanoseconds) an mtime must be older than for a listing taken now to be stable.
pub(crate) struct PriorListings {
    pub(crate) directories: Directories,
    pub(crate) stable_before: i64,
    /// When the root is watched: the only paths that may have changed since the last walk. A
    /// directory none of them touches is served from its remembered listing without opening it.
    pub(crate) changes: Option<Arc<ChangedPaths>>,
}

/// A directory's entries still to be walked, last name first.
enum Pending {
    Read(Vec<Listed>),
    Remembered(Vec<(OsString, EntryKind)>),
}

impl Pending {
    fn next(&mut self) -> Option<Entry> {
        match self {
            Pending::Read(entries) => entries.pop().map(Entry::Read),
            Pending::Remembered(entries) => entries
                .pop()
                .map(|(name, kind)| Entry::Remembered(name, kind)),
        }
    }
}

/// One entry to classify: as listed now, or as remembered.
#[allow(
    clippy::large_enum_variant,
    reason = "on macOS std's DirEntry holds a whole dirent (over 1 KiB); an Entry lives on the \
              stack one at a time, and boxing it would allocate once per file walked"
)]
enum Entry {
    Read(Listed),
    Remembered(OsString, EntryKind),
}

/// Lists a root depth-first, each directory's entries in name order, so candidates come out
/// sorted by relative path (component-wise, as `Path` orders them) without a sort over whole
/// paths. Only listing the root itself can fail; a subdirectory that cannot be listed is
/// reported as skipped. Directories deeper than [`MAX_DEPTH`] are not listed, and the walk stops
/// after [`MAX_FILES_PER_ROOT`] `*.md` entries; each limit is reported once.
pub(super) fn walk_root(
    scope: Scope,
    root: &Root,
    mut prior: Option<PriorListings>,
) -> io::Result<Walk> {
    let mut walk = Walk {
        root: Arc::clone(root),
        candidates: Vec::new(),
        skipped: Vec::new(),
        files_seen: 0,
        directories: Directories::new(),
        directories_changed: false,
        listings_reused: 0,
        directories_listed: 0,
        directories_stated: 0,
        keys_taken: 0,
        met: LimitsMet::default(),
        taking_the_roots_own_files: false,
    };
    let top = walk.list(scope, &root.absolute, Path::new(""), prior.as_mut())?;
    // Each frame: a directory's path, its path below the root, and its remaining entries in
    // reverse name order (so the next one is popped from the end).
    let mut stack = vec![(root.absolute.clone(), PathBuf::new(), top)];
    while let Some((directory, relative_dir, entries)) = stack.last_mut() {
        let Some(entry) = entries.next() else {
            stack.pop();
            continue;
        };
        let descend = walk.visit_entry(scope, root, directory, relative_dir, entry);
        if walk.met.files {
            take_the_roots_own_files(&mut walk, scope, root, &mut stack);
            break;
        }
        if let Some((path, relative)) = descend {
            if relative.components().count() > MAX_DEPTH {
                walk.too_deep(scope, path);
                continue;
            }
            match walk.list(scope, &path, &relative, prior.as_mut()) {
                Ok(entries) => stack.push((path, relative, entries)),
                Err(error) => walk.skip(scope, path, io_reason(&error)),
            }
        }
    }
    // Listings of directories that are gone.
    walk.directories_changed |= prior.is_some_and(|prior| !prior.directories.is_empty());
    Ok(walk)
}

/// Once the file limit is met below the root, the root's own `*.md` files after that point are
/// still taken (a folder of thousands of files sorted before a note at the top must not hide
/// it); nothing more is descended into. They come after every candidate so far in path order, so
/// the candidates stay sorted.
fn take_the_roots_own_files(
    walk: &mut Walk,
    scope: Scope,
    root: &Root,
    stack: &mut Vec<(PathBuf, PathBuf, Pending)>,
) {
    if stack.len() < 2 {
        return;
    }
    stack.truncate(1);
    let Some((directory, relative_dir, mut entries)) = stack.pop() else {
        return;
    };
    walk.taking_the_roots_own_files = true;
    while let Some(entry) = entries.next() {
        // A directory is not descended into.
        let _ = walk.visit_entry(scope, root, &directory, &relative_dir, entry);
    }
}

/// A directory entry with its name, or the error reading it.
type Listed = io::Result<(OsString, fs::DirEntry)>;

/// A directory's entries in reverse name order, at most [`MAX_ENTRIES_PER_DIRECTORY`] of them,
/// with whether there were more (then the ones kept are the first the file system gave, the same
/// ones for an unchanged directory); entries that cannot be read are kept as errors. Names are
/// fetched once (each `DirEntry::file_name` call allocates).
fn list_sorted(directory: &Path) -> io::Result<(Vec<Listed>, bool)> {
    let mut entries: Vec<Listed> = fs::read_dir(directory)?
        .take(MAX_ENTRIES_PER_DIRECTORY + 1)
        .map(|entry| entry.map(|entry| (entry.file_name(), entry)))
        .collect();
    let more = entries.len() > MAX_ENTRIES_PER_DIRECTORY;
    entries.truncate(MAX_ENTRIES_PER_DIRECTORY);
    entries.sort_unstable_by(|a, b| match (a, b) {
        (Ok((a, _)), Ok((b, _))) => b.cmp(a),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => std::cmp::Ordering::Equal,
    });
    Ok((entries, more))
}

/// The entries of a fresh listing (in reverse name order) that the walk acts on, in name order,
/// when the listing may be remembered: `None` when an entry could not be read or typed, or a
/// `*.md` name is neither a regular file nor a directory (a symlink, a socket…).
fn remembered_entries(listed: &[Listed]) -> Option<Vec<(OsString, EntryKind)>> {
    let mut entries = Vec::new();
    for listed in listed.iter().rev() {
        let (name, entry) = listed.as_ref().ok()?;
        let file_type = entry.file_type().ok()?;
        // What a symlink resolves to can change without its directory changing.
        if file_type.is_symlink() && EntryKind::Directory.walks(name) {
            return None;
        }
        let kind = if file_type.is_dir() {
            EntryKind::Directory
        } else {
            EntryKind::File
        };
        if !kind.walks(name) {
            continue;
        }
        if !file_type.is_dir() && !file_type.is_file() {
            return None;
        }
        entries.push((name.clone(), kind));
    }
    Some(entries)
}

impl Walk {
    /// A directory's entries: remembered, when `prior` holds a listing that is still good, else
    /// listed now (and remembered for the next walk when that is safe; see [`DirectoryListing`]).
    fn list(
        &mut self,
        scope: Scope,
        directory: &Path,
        relative: &Path,
        prior: Option<&mut PriorListings>,
    ) -> io::Result<Pending> {
        let Some(prior) = prior else {
            self.directories_listed += 1;
            let (listed, more) = list_sorted(directory)?;
            if more {
                self.too_many_entries(scope, directory);
            }
            return Ok(Pending::Read(listed));
        };
        let mut remembered = prior.directories.remove(relative);
        if let Some(changes) = &prior.changes {
            if changes.touches_listing(relative) {
                remembered = None;
            } else if let Some(listing) = remembered.take() {
                return Ok(self.reuse(relative, listing));
            }
        }
        // Taken before listing, so a change while listing moves the key and is seen next time;
        // and from an open handle, because listing needs read permission where a `stat` does
        // not: a directory this process cannot list is never served from a listing made by one
        // that could.
        self.directories_stated += 1;
        let key = File::open(directory)
            .and_then(|handle| handle.metadata())
            .ok()
            .filter(fs::Metadata::is_dir)
            .map(|metadata| FileKey::from_metadata(&metadata));
        let reusable = key.is_some_and(|key| {
            remembered
                .as_ref()
                .is_some_and(|listing| listing.stable && listing.key == key)
        });
        if reusable && let Some(listing) = remembered.take() {
            return Ok(self.reuse(relative, listing));
        }
        self.directories_listed += 1;
        let (listed, more) = list_sorted(directory)?;
        if more {
            self.too_many_entries(scope, directory);
        }
        // A directory read in part is listed again at every walk, never remembered.
        let listing =
            key.filter(|_| !more)
                .zip(remembered_entries(&listed))
                .map(|(key, entries)| DirectoryListing {
                    key,
                    stable: key.mtime_ns < prior.stable_before,
                    entries,
                });
        self.directories_changed |= listing != remembered;
        if let Some(listing) = listing {
            self.directories.insert(relative.to_path_buf(), listing);
        }
        Ok(Pending::Read(listed))
    }

    /// Walks a directory from its remembered listing, which the next walk may reuse again.
    fn reuse(&mut self, relative: &Path, listing: DirectoryListing) -> Pending {
        let entries: Vec<_> = listing.entries.iter().rev().cloned().collect();
        // Most of a remembered listing's entries are topics: room for them at once, rather
        // than doubling a list of tens of thousands of candidates over and over.
        self.candidates.reserve(entries.len());
        self.directories.insert(relative.to_path_buf(), listing);
        self.listings_reused += 1;
        Pending::Remembered(entries)
    }

    /// Classifies one directory entry; returns the subdirectory to descend into, if it is one.
    fn visit_entry(
        &mut self,
        scope: Scope,
        root: &Root,
        directory: &Path,
        relative_dir: &Path,
        entry: Entry,
    ) -> Option<(PathBuf, PathBuf)> {
        let (name, entry) = match entry {
            Entry::Read(Ok(listed)) => listed,
            Entry::Read(Err(error)) => {
                self.skip(scope, directory.to_path_buf(), io_reason(&error));
                return None;
            }
            Entry::Remembered(name, EntryKind::Directory) => {
                return Some(self.enter(scope, directory, relative_dir, &name));
            }
            Entry::Remembered(name, EntryKind::File) => {
                let path = join(directory, &name);
                if self.count_file(scope, &path) {
                    self.add_topic(relative_dir, &name, path, false);
                }
                return None;
            }
        };
        let file_type = match entry.file_type() {
            Ok(file_type) => file_type,
            Err(error) => {
                if is_markdown(&name) && self.count_file(scope, &entry.path()) {
                    self.skip(scope, entry.path(), io_reason(&error));
                }
                return None;
            }
        };
        if file_type.is_dir() {
            return EntryKind::Directory
                .walks(&name)
                .then(|| self.enter(scope, directory, relative_dir, &name));
        }
        if !EntryKind::File.walks(&name) {
            // A symlink to a directory is never walked; one that leads out of the root is said.
            if file_type.is_symlink() && EntryKind::Directory.walks(&name) {
                let path = join(directory, &name);
                if links_to_a_directory_outside(&path, &root.canonical) {
                    self.skip(scope, path, SkipReason::SymlinkOutsideRoot);
                }
            }
            return None;
        }
        let path = join(directory, &name);
        if !self.count_file(scope, &path) {
            return None;
        }
        let verdict = if file_type.is_symlink() {
            resolve_symlink(&path, &root.canonical)
        } else if file_type.is_file() {
            Ok(())
        } else {
            Err(SkipReason::NotAFile)
        };
        match verdict {
            Ok(()) => self.add_topic(relative_dir, &name, path, file_type.is_symlink()),
            Err(reason) => self.skip(scope, path, reason),
        }
        None
    }

    /// A directory to descend into, as its path and its path below the root; one named like a
    /// topic is also counted and reported as `not_a_file`.
    fn enter(
        &mut self,
        scope: Scope,
        directory: &Path,
        relative_dir: &Path,
        name: &std::ffi::OsStr,
    ) -> (PathBuf, PathBuf) {
        let path = join(directory, name);
        if is_markdown(name) && self.count_file(scope, &path) {
            self.skip(scope, path.clone(), SkipReason::NotAFile);
        }
        (path, join(relative_dir, name))
    }

    /// Counts the `*.md` entry at `path`; `false` when the root already gave
    /// [`MAX_FILES_PER_ROOT`] of them: the entry is left out, the limit reported (once) and the
    /// walk stops.
    fn count_file(&mut self, scope: Scope, path: &Path) -> bool {
        if self.files_seen < MAX_FILES_PER_ROOT || self.taking_the_roots_own_files {
            self.files_seen += 1;
            return true;
        }
        if !self.met.files {
            self.met.files = true;
            let reason = SkipReason::TooManyFiles {
                limit_files: MAX_FILES_PER_ROOT,
            };
            self.skip(scope, path.to_path_buf(), reason);
        }
        false
    }

    /// A directory with more than [`MAX_ENTRIES_PER_DIRECTORY`] entries, read in part; the first
    /// one is reported.
    fn too_many_entries(&mut self, scope: Scope, directory: &Path) {
        if !self.met.entries {
            self.met.entries = true;
            let reason = SkipReason::TooManyEntries {
                limit_entries: MAX_ENTRIES_PER_DIRECTORY,
            };
            self.skip(scope, directory.to_path_buf(), reason);
        }
    }

    /// A directory deeper than [`MAX_DEPTH`], not listed; the first one is reported.
    fn too_deep(&mut self, scope: Scope, path: PathBuf) {
        if !self.met.depth {
            self.met.depth = true;
            let reason = SkipReason::TooDeep {
                limit_depth: MAX_DEPTH,
            };
            self.skip(scope, path, reason);
        }
    }

    /// A topic file to read (see [`Candidate::symlink`]).
    fn add_topic(
        &mut self,
        relative_dir: &Path,
        name: &std::ffi::OsStr,
        path: PathBuf,
        symlink: bool,
    ) {
        self.candidates.push(Candidate {
            relative: join(relative_dir, name),
            path,
            symlink,
            early_key: EarlyKey::NotTaken,
        });
    }

    fn skip(&mut self, scope: Scope, path: PathBuf, reason: SkipReason) {
        self.skipped.push(SkippedFile {
            scope,
            path,
            reason,
        });
    }
}

/// Whether the symlink at `path` ends at a directory outside the root.
fn links_to_a_directory_outside(path: &Path, canonical_root: &Path) -> bool {
    fs::canonicalize(path).is_ok_and(|target| {
        !target.starts_with(canonical_root) && fs::metadata(&target).is_ok_and(|m| m.is_dir())
    })
}

/// Accepts a symlink only when it ends at a regular file inside the root.
fn resolve_symlink(path: &Path, canonical_root: &Path) -> Result<(), SkipReason> {
    let target = fs::canonicalize(path).map_err(|error| match io_reason(&error) {
        SkipReason::Vanished => SkipReason::BrokenSymlink,
        other => other,
    })?;
    if !target.starts_with(canonical_root) {
        return Err(SkipReason::SymlinkOutsideRoot);
    }
    match fs::metadata(&target) {
        Ok(metadata) if metadata.is_file() => Ok(()),
        Ok(_) => Err(SkipReason::NotAFile),
        Err(error) => Err(io_reason(&error)),
    }
}
