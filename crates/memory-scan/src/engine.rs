//! The walk/read/parse engine both scanners share.
//!
//! Walk rules, in the order they apply to each directory entry:
//! - names starting with `.` that are directories are not walked: that is where tooling state
//!   such as a catalog lives, and editors keep their own caches there;
//! - only names ending in `.md` (case-sensitive) are topic candidates, and `MEMORY.md` at any
//!   depth is the human-maintained index, never a topic;
//! - a `*.md` entry that is a directory is walked like any directory and also reported as
//!   `not_a_file`; sockets, FIFOs and devices are reported the same way and never opened;
//! - symlinks are resolved but never walked as directories (their targets inside the root are
//!   walked anyway, so nothing loops and nothing is listed twice through a link); one that leads
//!   to a directory outside the root is reported as `symlink_outside_root`. A symlinked file
//!   counts only if it resolves to a regular file inside the root, and a file reached both by
//!   its own name and through links is one document (see [`drop_duplicate_links`]).
//!
//! When the roots overlap (the same directory given for both scopes, or one inside the other), a
//! file both walks reach is one document, in the project scope: a document's identity is its
//! absolute path. The scan report carries a warning saying how many files that was.
//!
//! Each candidate is read with one `open`, one `fstat` of that descriptor and one read, in
//! parallel across the rayon pool; results are ordered by relative path, never by thread timing.
//! On Unix every file is reached from the root's directory handle without following a symlink,
//! and each thread keeps the directory it is in open and opens and stats files by name in it
//! (see [`OpenParent`] and the `access` module).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rayon::prelude::*;

pub(crate) use crate::access::OpenParent;
use crate::access::{RootDir, io_reason};
use crate::document::Scope;
use crate::key::FileKey;
use crate::report::{ScanError, SkipReason, SkippedFile};
use crate::topic::{ParseError, Topic, parse_topic};

/// The largest topic file read, in bytes. Larger files are skipped and reported, not truncated:
/// a memory that big is not a note a prompt could show, and reading it would stall recall.
pub const MAX_TOPIC_BYTES: u64 = 256 * 1024;

/// The file name of the per-root index, which is never a topic.
pub const INDEX_FILE_NAME: &str = "MEMORY.md";

/// Where recall looks. A `None` root is an empty scope.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryRoots {
    /// The project memory root.
    pub project: Option<PathBuf>,
    /// The user (cross-project) memory root.
    pub user: Option<PathBuf>,
}

/// A `*.md` entry that will be read.
#[derive(Debug)]
pub(crate) struct Candidate {
    pub(crate) relative: PathBuf,
    pub(crate) path: PathBuf,
    /// Whether the entry was listed as a symlink (and resolved to a file inside the root). Any
    /// other candidate is opened without following a symlink, so a symlink that takes its place
    /// after listing, or that a remembered listing calls a file, is never read through.
    pub(crate) symlink: bool,
    /// The file's key when it was taken right after listing (see [`Walked::take_keys`]).
    pub(crate) early_key: EarlyKey,
}

impl Candidate {
    /// Reads and parses the candidate's file (see [`read_topic`]), opened by name in `parent`
    /// (see [`OpenParent::open`]).
    pub(crate) fn read(&self, parent: &mut OpenParent) -> ReadOutcome {
        read_topic(parent.open(&self.relative, self.symlink))
    }

    /// The key of the candidate's file: as taken right after listing, or now (in `parent`).
    pub(crate) fn current_key(&self, parent: &mut OpenParent) -> Option<FileKey> {
        match self.early_key {
            EarlyKey::Taken(key) => Some(key),
            EarlyKey::Unavailable => None,
            EarlyKey::NotTaken => parent.key(&self.relative, self.symlink),
        }
    }
}

/// Whether a candidate's [`FileKey`] was taken ahead of its visit, and what it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EarlyKey {
    /// Not taken: whoever needs it asks the file system.
    NotTaken,
    /// `stat` of the path (following a symlink to its target) gave this key.
    Taken(FileKey),
    /// `stat` failed; reading the file will report why.
    Unavailable,
}

/// The result of reading one candidate.
pub(crate) enum ReadOutcome {
    Parsed {
        topic: Topic,
        mtime: SystemTime,
        key: FileKey,
    },
    /// `key` is known when the file could be opened, so a cache may remember the verdict.
    Skipped {
        reason: SkipReason,
        key: Option<FileKey>,
    },
}

/// One scope's entries, sorted by relative path, each with what the caller made of it.
pub(crate) struct ScopeListing<T> {
    pub(crate) scope: Scope,
    /// What the visit made of each candidate, in listing order.
    pub(crate) entries: Vec<T>,
    pub(crate) skipped: Vec<SkippedFile>,
    pub(crate) files_seen: usize,
}

/// Both scopes' listings (project first) and the user-scope warnings.
pub(crate) struct Listings<T> {
    pub(crate) scopes: Vec<ScopeListing<T>>,
    pub(crate) warnings: Vec<String>,
}

/// A root opened for a walk; its candidates are read through it.
type Root = Arc<RootDir>;

/// Both roots listed (project first), not yet visited.
pub(crate) struct Walked {
    scopes: Vec<(Scope, Walk)>,
    warnings: Vec<String>,
}

/// One scope's directory listings after a walk with priors.
pub(crate) struct WalkedDirectories {
    pub(crate) scope: Scope,
    /// The listings the next walk may reuse.
    pub(crate) directories: Directories,
    /// Whether they differ from the remembered ones.
    pub(crate) changed: bool,
    /// How many directories were not listed because their remembered listing held.
    pub(crate) reused: usize,
}

/// Walks every configured root and runs `visit` on each candidate in parallel.
pub(crate) fn scan_scopes<T, F>(
    roots: &MemoryRoots,
    visit: F,
) -> Result<Listings<(Candidate, T)>, ScanError>
where
    T: Send,
    F: Fn(Scope, &Candidate, &mut OpenParent) -> T + Sync,
{
    Ok(visit_scopes(
        list_scopes(roots, [None, None])?,
        |_, candidates| vec![(); candidates.len()],
        |scope, candidate, (), parent| {
            let visited = visit(scope, &candidate, parent);
            (candidate, visited)
        },
    ))
}

/// Lists every configured root. With `priors` (project, user), a directory whose remembered
/// listing still holds (see [`PriorListings`]) is not listed again, and the walk records the
/// listings it used for the next scan ([`Walked::take_directories`]).
///
/// A missing root is an empty scope; a project root that cannot be listed is an error, a user
/// root that cannot be listed is a warning.
pub(crate) fn list_scopes(
    roots: &MemoryRoots,
    priors: [Option<PriorListings>; 2],
) -> Result<Walked, ScanError> {
    let mut walked_scopes = Walked {
        scopes: Vec::with_capacity(2),
        warnings: Vec::new(),
    };
    let [project_prior, user_prior] = priors;
    let mut project_root = None;
    for (scope, root, prior) in [
        (Scope::Project, &roots.project, project_prior),
        (Scope::User, &roots.user, user_prior),
    ] {
        let Some(root) = root else { continue };
        let walked = open_root(root).and_then(|opened| match opened {
            Some(opened) => walk(scope, &opened, prior).map(|walked| Some((opened, walked))),
            None => Ok(None),
        });
        match walked {
            Ok(Some((opened, mut walked))) => {
                match (scope, &project_root) {
                    (Scope::Project, _) => project_root = Some(opened),
                    (Scope::User, Some(project)) => {
                        if let Some(warning) =
                            drop_files_of_the_project(project, &opened, &mut walked, &walked_scopes)
                        {
                            walked_scopes.warnings.push(warning);
                        }
                    }
                    (Scope::User, None) => {}
                }
                walked_scopes.scopes.push((scope, walked));
            }
            Ok(None) => {}
            Err(source) if scope == Scope::Project => {
                return Err(ScanError::ProjectRoot {
                    path: root.clone(),
                    source,
                });
            }
            Err(error) => walked_scopes.warnings.push(format!(
                "cannot read user memory root {}: {error}; recalling from the project scope only",
                root.display()
            )),
        }
    }
    Ok(walked_scopes)
}

/// A document's identity is its absolute path, so a file both roots reach (the same root given
/// twice, or one root inside the other) is one document, in the project scope: drops from the
/// user scope's `walk` every file the project's walk (in `walked`) already holds, and says so.
fn drop_files_of_the_project(
    project: &Root,
    user: &Root,
    walk: &mut Walk,
    walked: &Walked,
) -> Option<String> {
    let overlapping = project.canonical.starts_with(&user.canonical)
        || user.canonical.starts_with(&project.canonical);
    if !overlapping {
        return None;
    }
    let (_, project_walk) = walked
        .scopes
        .iter()
        .find(|(scope, _)| *scope == Scope::Project)?;
    let in_project: std::collections::HashSet<PathBuf> = project_walk
        .candidates
        .iter()
        .map(|candidate| project.canonical.join(&candidate.relative))
        .chain(project_walk.skipped.iter().filter_map(|skipped| {
            let relative = skipped.path.strip_prefix(&project.absolute).ok()?;
            Some(project.canonical.join(relative))
        }))
        .collect();
    let candidates_before = walk.candidates.len();
    walk.candidates
        .retain(|candidate| !in_project.contains(&user.canonical.join(&candidate.relative)));
    // `files_seen` counts `*.md` entries, each once; a skipped directory that could not be listed
    // is reported but was not counted, unless its name made it a `*.md` entry too (reported then
    // twice under one path).
    let mut dropped_skips = std::collections::HashSet::new();
    walk.skipped.retain(|skipped| {
        let shared = skipped
            .path
            .strip_prefix(&user.absolute)
            .is_ok_and(|relative| in_project.contains(&user.canonical.join(relative)));
        if shared && skipped.path.file_name().is_some_and(is_markdown) {
            dropped_skips.insert(skipped.path.clone());
        }
        !shared
    });
    let dropped = candidates_before - walk.candidates.len() + dropped_skips.len();
    if dropped == 0 {
        return None;
    }
    walk.files_seen = walk.files_seen.saturating_sub(dropped);
    Some(format!(
        "the user memory root {} and the project memory root {} overlap; {dropped} file(s) under both are recalled once, in the project scope",
        user.absolute.display(),
        project.absolute.display()
    ))
}

impl Walked {
    /// What each scope's walk recorded of its directory listings (nothing for a walk without
    /// priors); the walk keeps its candidates.
    pub(crate) fn take_directories(&mut self) -> Vec<WalkedDirectories> {
        self.scopes
            .iter_mut()
            .map(|(scope, walk)| WalkedDirectories {
                scope: *scope,
                directories: std::mem::take(&mut walk.directories),
                changed: walk.directories_changed,
                reused: walk.listings_reused,
            })
            .collect()
    }

    /// Takes the [`FileKey`] of every candidate of the scopes `wanted` picks, now, in parallel.
    /// Worth it only for a scope whose visit will compare most keys with remembered ones while the
    /// CPU has other work (its catalog being decoded): otherwise the visit takes them itself,
    /// where they are needed, and a file read anyway needs none.
    ///
    /// Each thread keeps the directory it is in open (see [`OpenParent`]).
    pub(crate) fn take_keys(&mut self, wanted: impl Fn(Scope) -> bool) {
        for (_, walk) in self.scopes.iter_mut().filter(|(scope, _)| wanted(*scope)) {
            walk.candidates.par_iter_mut().for_each_init(
                || OpenParent::new(Arc::clone(&walk.root)),
                |parent, candidate| {
                    candidate.early_key = parent
                        .key(&candidate.relative, candidate.symlink)
                        .map_or(EarlyKey::Unavailable, EarlyKey::Taken);
                },
            );
        }
    }
}

/// Runs `visit` on each listed candidate in parallel, with what `prior` says about it; results
/// keep the listing order.
///
/// `prior` gets each scope's candidates in listing order (sorted by relative path) and returns
/// one value per candidate, in the same order; each value is moved into its candidate's visit.
/// Each thread keeps the directory it is in open for its visits (see [`OpenParent`]).
pub(crate) fn visit_scopes<P, T, F>(
    walked: Walked,
    mut prior: impl FnMut(Scope, &[Candidate]) -> Vec<P>,
    visit: F,
) -> Listings<T>
where
    P: Send,
    T: Send,
    F: Fn(Scope, Candidate, P, &mut OpenParent) -> T + Sync,
{
    let scopes = walked
        .scopes
        .into_iter()
        .map(|(scope, walk)| {
            let Walk {
                root,
                candidates,
                skipped,
                files_seen,
                ..
            } = walk;
            debug_assert!(candidates.is_sorted_by(|a, b| a.relative <= b.relative));
            let priors = prior(scope, &candidates);
            assert_eq!(priors.len(), candidates.len(), "one prior per candidate");
            let entries = candidates
                .into_par_iter()
                .zip(priors)
                .map_init(
                    || OpenParent::new(Arc::clone(&root)),
                    |parent, (candidate, prior)| visit(scope, candidate, prior, parent),
                )
                .collect();
            ScopeListing {
                scope,
                entries,
                skipped,
                files_seen,
            }
        })
        .collect();
    Listings {
        scopes,
        warnings: walked.warnings,
    }
}

/// `None` when the root does not exist.
fn open_root(root: &Path) -> io::Result<Option<Root>> {
    let absolute = std::path::absolute(root)?;
    match fs::metadata(&absolute) {
        Err(error) if error.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error),
        Ok(metadata) if !metadata.is_dir() => Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            "the memory root is not a directory",
        )),
        Ok(_) => {
            let canonical = fs::canonicalize(&absolute)?;
            Ok(Some(Arc::new(RootDir::open(absolute, canonical)?)))
        }
    }
}

struct Walk {
    /// The root the candidates are read through.
    root: Root,
    candidates: Vec<Candidate>,
    skipped: Vec<SkippedFile>,
    files_seen: usize,
    /// With priors: the listing of every directory the walk could remember.
    directories: Directories,
    /// With priors: whether `directories` differs from the remembered listings.
    directories_changed: bool,
    /// With priors: directories not listed because their remembered listing held.
    listings_reused: usize,
}

/// The kind of a remembered directory entry the walk acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) enum EntryKind {
    /// A regular `*.md` file other than the index.
    File,
    /// A directory not hidden (a `*.md` one is also reported as `not_a_file`).
    Directory,
}

impl EntryKind {
    /// Whether the walk acts on an entry of this kind with this name (see the walk rules at the
    /// top of this module): a directory unless hidden; a file named `*.md` other than the index.
    pub(crate) fn walks(self, name: &std::ffi::OsStr) -> bool {
        let bytes = name.as_encoded_bytes();
        match self {
            EntryKind::File => is_markdown(name) && bytes != INDEX_FILE_NAME.as_bytes(),
            EntryKind::Directory => !bytes.starts_with(b"."),
        }
    }
}

/// One directory's listing as a walk used it, kept so the next walk can skip listing it.
///
/// A directory gains or loses an entry only by a create, unlink or rename in it, each of which
/// moves its mtime and ctime, so a listing holds while the directory's [`FileKey`] (taken just
/// before listing) is unchanged, provided its mtime was settled (older than the racy margin)
/// when it was listed: a change in the same clock tick after the listing would keep the key.
/// Only directories whose relevant entries are all regular files and directories are
/// remembered; one holding a symlink (other than a hidden one), an odd file type or an unreadable
/// entry is listed every time, since what those resolve to can change without the directory
/// changing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DirectoryListing {
    pub(crate) key: FileKey,
    pub(crate) settled: bool,
    /// The entries the walk acts on, in name order; names ignored by the walk are left out.
    pub(crate) entries: Vec<(OsString, EntryKind)>,
}

/// Remembered listings by directory path below the root (empty for the root itself).
pub(crate) type Directories = BTreeMap<PathBuf, DirectoryListing>;

/// What a walk may reuse: the listings remembered from the last walk of the same root, and the
/// time (epoch nanoseconds) an mtime must be older than for a listing taken now to be settled.
pub(crate) struct PriorListings {
    pub(crate) directories: Directories,
    pub(crate) settle_before: i64,
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
enum Entry {
    Read(Listed),
    Remembered(OsString, EntryKind),
}

/// Lists a root depth-first, each directory's entries in name order, so candidates come out
/// sorted by relative path (component-wise, as `Path` orders them) without a sort over whole
/// paths. Only listing the root itself can fail; a subdirectory that cannot be listed is
/// reported as skipped.
fn walk(scope: Scope, root: &Root, mut prior: Option<PriorListings>) -> io::Result<Walk> {
    let mut walk = Walk {
        root: Arc::clone(root),
        candidates: Vec::new(),
        skipped: Vec::new(),
        files_seen: 0,
        directories: Directories::new(),
        directories_changed: false,
        listings_reused: 0,
    };
    let top = walk.list(&root.absolute, Path::new(""), prior.as_mut())?;
    // Each frame: a directory's path, its path below the root, and its remaining entries in
    // reverse name order (so the next one is popped from the end).
    let mut stack = vec![(root.absolute.clone(), PathBuf::new(), top)];
    while let Some((directory, relative_dir, entries)) = stack.last_mut() {
        let Some(entry) = entries.next() else {
            stack.pop();
            continue;
        };
        let descend = walk.visit_entry(scope, root, directory, relative_dir, entry);
        if let Some((path, relative)) = descend {
            match walk.list(&path, &relative, prior.as_mut()) {
                Ok(entries) => stack.push((path, relative, entries)),
                Err(error) => walk.skip(scope, path, io_reason(&error)),
            }
        }
    }
    // Listings of directories that are gone.
    walk.directories_changed |= prior.is_some_and(|prior| !prior.directories.is_empty());
    Ok(walk)
}

/// `base/name`, allocated once at its final size (`Path::join` grows the buffer as it appends).
pub(crate) fn join(base: &Path, name: &std::ffi::OsStr) -> PathBuf {
    let mut path = PathBuf::with_capacity(base.as_os_str().len() + 1 + name.len());
    path.push(base);
    path.push(name);
    path
}

/// A directory entry with its name, or the error reading it.
type Listed = io::Result<(OsString, fs::DirEntry)>;

/// A directory's entries in reverse name order; entries that cannot be read are kept as errors.
/// Names are fetched once (each `DirEntry::file_name` call allocates).
fn list_sorted(directory: &Path) -> io::Result<Vec<Listed>> {
    let mut entries: Vec<Listed> = fs::read_dir(directory)?
        .map(|entry| entry.map(|entry| (entry.file_name(), entry)))
        .collect();
    entries.sort_unstable_by(|a, b| match (a, b) {
        (Ok((a, _)), Ok((b, _))) => b.cmp(a),
        (Ok(_), Err(_)) => std::cmp::Ordering::Less,
        (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
        (Err(_), Err(_)) => std::cmp::Ordering::Equal,
    });
    Ok(entries)
}

/// Whether the walk treats a name as a topic name (`*.md`, case-sensitive).
fn is_markdown(name: &std::ffi::OsStr) -> bool {
    name.as_encoded_bytes().ends_with(b".md")
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
        directory: &Path,
        relative: &Path,
        prior: Option<&mut PriorListings>,
    ) -> io::Result<Pending> {
        let Some(prior) = prior else {
            return list_sorted(directory).map(Pending::Read);
        };
        // Taken before listing, so a change while listing moves the key and is seen next time;
        // and from an open handle, because listing needs read permission where a `stat` does
        // not: a directory this process cannot list is never served from a listing made by one
        // that could.
        let key = File::open(directory)
            .and_then(|handle| handle.metadata())
            .ok()
            .filter(fs::Metadata::is_dir)
            .map(|metadata| FileKey::from_metadata(&metadata));
        let mut remembered = prior.directories.remove(relative);
        let reusable = key.is_some_and(|key| {
            remembered
                .as_ref()
                .is_some_and(|listing| listing.settled && listing.key == key)
        });
        if reusable && let Some(listing) = remembered.take() {
            let entries: Vec<_> = listing.entries.iter().rev().cloned().collect();
            // Most of a remembered listing's entries are topics: room for them at once, rather
            // than doubling a list of tens of thousands of candidates over and over.
            self.candidates.reserve(entries.len());
            self.directories.insert(relative.to_path_buf(), listing);
            self.listings_reused += 1;
            return Ok(Pending::Remembered(entries));
        }
        let listed = list_sorted(directory)?;
        let listing = key
            .zip(remembered_entries(&listed))
            .map(|(key, entries)| DirectoryListing {
                key,
                settled: key.mtime_ns < prior.settle_before,
                entries,
            });
        self.directories_changed |= listing != remembered;
        if let Some(listing) = listing {
            self.directories.insert(relative.to_path_buf(), listing);
        }
        Ok(Pending::Read(listed))
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
                self.files_seen += 1;
                self.add_topic(relative_dir, &name, join(directory, &name), false);
                return None;
            }
        };
        let file_type = match entry.file_type() {
            Ok(file_type) => file_type,
            Err(error) => {
                if is_markdown(&name) {
                    self.files_seen += 1;
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
        self.files_seen += 1;
        let path = join(directory, &name);
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
        if is_markdown(name) {
            self.files_seen += 1;
            self.skip(scope, path.clone(), SkipReason::NotAFile);
        }
        (path, join(relative_dir, name))
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

/// One document per file identity: of the documents that are the same file (same device and
/// inode), the file's own entry is kept, or, when only links reach it, the first link in pool
/// order (project before user, then by path). Takes each document's identity and whether it was
/// reached through a symlink, in pool order; returns each dropped document's index with the index
/// of the one kept in its place. Costs nothing without symlinks.
fn dedupe_linked(documents: &[(FileKey, bool)]) -> Vec<(usize, usize)> {
    if !documents.iter().any(|(_, symlink)| *symlink) {
        return Vec::new();
    }
    let identity = |key: &FileKey| (key.device, key.inode);
    let mut kept = std::collections::HashMap::new();
    for (index, (key, _)) in documents.iter().enumerate().filter(|(_, (_, link))| !link) {
        kept.entry(identity(key)).or_insert(index);
    }
    let mut dropped = Vec::new();
    for (index, (key, _)) in documents.iter().enumerate().filter(|(_, (_, link))| *link) {
        match kept.entry(identity(key)) {
            std::collections::hash_map::Entry::Occupied(first) => {
                dropped.push((index, *first.get()));
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(index);
            }
        }
    }
    dropped.sort_unstable();
    dropped
}

/// Removes from `documents` (in pool order, with each one's identity and whether a symlink
/// reached it in `identities`) those [`dedupe_linked`] finds to be another path to a document
/// kept, and reports each as skipped.
pub(crate) fn drop_duplicate_links<D>(
    documents: &mut Vec<D>,
    identities: &[(FileKey, bool)],
    document: impl Fn(&D) -> &crate::document::Document,
    skipped: &mut Vec<SkippedFile>,
) {
    let dropped = dedupe_linked(identities);
    if dropped.is_empty() {
        return;
    }
    for &(index, kept) in &dropped {
        let duplicate = document(&documents[index]);
        skipped.push(SkippedFile {
            scope: duplicate.scope(),
            path: duplicate.path().to_path_buf(),
            reason: SkipReason::DuplicateLink {
                of: document(&documents[kept]).path().to_path_buf(),
            },
        });
    }
    let mut index = 0;
    documents.retain(|_| {
        index += 1;
        dropped
            .binary_search_by_key(&(index - 1), |(at, _)| *at)
            .is_err()
    });
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

/// Reads and parses one topic file, given how opening it went (see [`OpenParent::open`]): then
/// one fstat of the opened handle and one read.
fn read_topic(opened: Result<File, SkipReason>) -> ReadOutcome {
    let skipped = |reason, key| ReadOutcome::Skipped { reason, key };
    let file = match opened {
        Ok(file) => file,
        Err(reason) => return skipped(reason, None),
    };
    let metadata = match file.metadata() {
        Ok(metadata) => metadata,
        Err(error) => return skipped(io_reason(&error), None),
    };
    if !metadata.is_file() {
        return skipped(SkipReason::NotAFile, None);
    }
    let key = FileKey::from_metadata(&metadata);
    if metadata.len() > MAX_TOPIC_BYTES {
        return skipped(too_large(metadata.len()), Some(key));
    }
    // The file is read up to the size its fstat gave, which is what its key describes: one read
    // call, without a second one to find the end. A file written meanwhile has another key at the
    // next scan and is read again then. A size of 0 is not taken at its word (some file systems
    // report 0 for files with content): such a file is read to its end, the cap applying while
    // reading.
    let limit = match metadata.len() {
        0 => MAX_TOPIC_BYTES + 1,
        size => size,
    };
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    if let Err(error) = (&file).take(limit).read_to_end(&mut bytes) {
        return skipped(io_reason(&error), Some(key));
    }
    let read_len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read_len > MAX_TOPIC_BYTES {
        return skipped(too_large(read_len), Some(key));
    }
    let Ok(text) = String::from_utf8(bytes) else {
        return skipped(SkipReason::NotUtf8, Some(key));
    };
    match parse_topic(&text) {
        Ok(topic) => ReadOutcome::Parsed {
            topic,
            mtime: metadata.modified().unwrap_or(UNIX_EPOCH),
            key,
        },
        Err(error) => skipped(parse_reason(error), Some(key)),
    }
}

fn too_large(size_bytes: u64) -> SkipReason {
    SkipReason::TooLarge {
        limit_bytes: MAX_TOPIC_BYTES,
        size_bytes,
    }
}

fn parse_reason(error: ParseError) -> SkipReason {
    match error {
        ParseError::NoFrontmatter => SkipReason::NoFrontmatter,
        ParseError::UnterminatedFrontmatter => SkipReason::UnterminatedFrontmatter,
        ParseError::MissingType => SkipReason::MissingType,
        ParseError::UnknownType { value } => SkipReason::UnknownType { value },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reading_a_file_that_no_longer_exists_reports_it_vanished() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gone.md");
        fs::write(&path, "---\ntype: user\n---\n").unwrap();
        let root = open_root(dir.path()).unwrap().unwrap();
        fs::remove_file(&path).unwrap();

        let outcome = read_topic(OpenParent::new(root).open(Path::new("gone.md"), false));

        assert!(matches!(
            outcome,
            ReadOutcome::Skipped {
                reason: SkipReason::Vanished,
                key: None
            }
        ));
    }

    #[test]
    fn keys_are_taken_early_only_for_the_scopes_asked_for() {
        let (project, user) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for dir in [&project, &user] {
            fs::write(dir.path().join("a.md"), "---\ntype: user\n---\n").unwrap();
        }
        let roots = MemoryRoots {
            project: Some(project.path().to_path_buf()),
            user: Some(user.path().to_path_buf()),
        };
        let mut walked = list_scopes(&roots, [None, None]).unwrap();

        walked.take_keys(|scope| scope == Scope::User);

        let early: Vec<(Scope, bool)> = walked
            .scopes
            .iter()
            .flat_map(|(scope, walk)| {
                walk.candidates
                    .iter()
                    .map(|c| (*scope, matches!(c.early_key, EarlyKey::Taken(_))))
            })
            .collect();
        assert_eq!(early, vec![(Scope::Project, false), (Scope::User, true)]);
    }
}
