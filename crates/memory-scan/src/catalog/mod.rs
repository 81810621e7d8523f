//! The persistent catalog: what a recall scan learned about one memory root, kept on disk so the
//! next process starts with a warm cache instead of reading and preparing every topic file.
//!
//! Location: where the cache's [`CatalogStore`] says: `<root>/.memrecall/catalog` (the walk never
//! enters hidden directories, so the catalog is never a topic), or a state directory per root
//! under a directory of the caller's, which writes nothing inside the root.
//!
//! Content: for every file the cache remembers, its path below the root, its [`FileKey`], whether
//! it was stable when read (see the cache's racy-timestamp rule), and either the parsed document
//! with its prepared scoring text (normalised fields that are the lowercase of an ASCII source are
//! left out: scoring searches the source's lowercase instead) or the reason it is not a document.
//! Transient failures (`unreadable`, `vanished`) are not stored. Beside the files, the listing of
//! every directory the walk may skip listing next time (see the engine's `DirectoryListing`): its
//! key, whether it was stable, and the names of its subdirectories and topic files.
//!
//! Layout, little-endian:
//!
//! ```text
//! magic "memrcat\0" | format version u32 | prepared-text version u32 | chunk count u32 | entry count u32
//! chunk table: per chunk, offset u64 | length u64 | xxh3-64 of the chunk u64
//! xxh3-64 of every byte above
//! chunk 0: the postcard-encoded list of directory listings
//! chunks 1..: each at most ENTRIES_PER_CHUNK postcard-encoded entries, back to back
//! ```
//!
//! In an entry, the file key (device, inode, size, mtime, ctime) and a document's mtime are
//! fixed-width little-endian bytes rather than postcard's variable-length integers: nanosecond
//! times take nine or ten bytes that way, decoded one at a time, which was about a tenth of the
//! work of loading a catalog.
//!
//! The walk reads the directory listings while, on the other core, the entry chunks are read (on
//! Unix each by the thread that decodes it), checked and decoded in parallel. The two parts are
//! checked independently: listings serve the walk even when an entry chunk is rejected (each still
//! only for a directory whose key matches), and entries load even when the listings are ignored.
//! Decoded documents do not copy their texts or indexes: they share the buffer their chunk was
//! read into (on Unix; elsewhere the one buffer the whole file is read into, see
//! [`lexical_score::Bytes`]), which stays in memory while any of them does, however many of the
//! others have been read again since. A cache for one recall (`CatalogRead::Whole`) reads the
//! whole file into one buffer with one read instead, which every document shares. Either way the
//! bytes are this process's own once read: another program that rewrites or truncates the file
//! meanwhile can make a read short or a checksum fail, never change bytes already checked. A file
//! that is missing is `missing`; one that cannot be read, is over [`MAX_CATALOG_BYTES`], has
//! another magic or version, fails a checksum or does not decode is `rejected` and simply
//! rewritten after the next scan. Recall never fails because of a catalog.
//!
//! Writes go to a temporary file in the same directory that is then renamed over the catalog, so
//! readers, including other processes, see the old or the new catalog whole, never a mix. The
//! entry chunks are encoded and written a batch at a time after room for the header, which is
//! written last, once every chunk's offset, length and checksum is known: a catalog is never
//! whole in memory while it is written. Writes
//! of one cache are serialised; between processes the last rename wins, and either catalog is
//! correct because every entry is checked against its file before it is trusted.
//!
//! The first write of a root creates [`CATALOG_DIR_NAME`] in it, which changes the root's key
//! after the walk took it: the next recall lists the root again and writes the catalog once more
//! (twice when it comes within the racy margin, once to record the new listing and once more
//! when that listing has become stable). From then on, only changes to the tree cause writes.

mod file;
mod format;

#[cfg(test)]
use std::path::Path;

#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use file::decode_bytes;
#[cfg(all(test, unix))]
pub(crate) use file::save_with;
pub(crate) use file::{Opened, SaveFn, open, save};

/// [`save`] into the state directory inside `root`.
#[cfg(test)]
pub(crate) fn save_in_root(
    root: &Path,
    entries: &[(std::ffi::OsString, crate::entry::CacheEntry)],
    directories: &Directories,
) -> Result<usize, crate::CatalogWriteError> {
    save(
        &crate::state_dir::StateLocation::in_root(root),
        entries,
        directories,
    )
}

#[cfg(test)]
use crate::document::Scope;
#[cfg(test)]
use crate::engine::Directories;
#[cfg(test)]
use crate::entry::Entries;
#[cfg(test)]
use crate::error::CatalogRejection;
pub use crate::state_dir::{
    CATALOG_DIR_NAME, CATALOG_FILE_NAME, CatalogStore, catalog_path, remove_in_root_catalog,
};

/// How a catalog's bytes are read (see `DocumentCache::for_one_recall`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CatalogRead {
    /// Each part read, by the thread that decodes it, into a buffer of its own, which the
    /// part's documents share (on Unix; elsewhere the whole file is read into one buffer).
    PerPart,
    /// The whole file read into one buffer with one read, which every document shares.
    Whole,
}

/// The largest catalog file read, in bytes; a larger one is rejected (and rewritten after the
/// scan) rather than read into memory. Far above what a tree within the walk's caps writes.
pub(crate) const MAX_CATALOG_BYTES: u64 = 256 * 1024 * 1024;

/// The version of the catalog layout and of the walk rules its directory listings follow; a
/// catalog of another version is rebuilt.
pub const CATALOG_FORMAT_VERSION: u32 = 5;

/// Reads the whole catalog of `root`: its entries and directory listings; `Ok(None)` when there
/// is none.
#[cfg(test)]
pub(crate) fn load(
    root: &Path,
    scope: Scope,
) -> Result<Option<(Entries, Directories)>, CatalogRejection> {
    let Some(opened) = open(
        &crate::state_dir::StateLocation::in_root(root),
        CatalogRead::PerPart,
    )?
    else {
        return Ok(None);
    };
    let directories = opened.directories()?;
    Ok(Some((opened.entries(root, scope, None)?, directories)))
}
