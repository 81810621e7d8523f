//! The persistent catalog: what a recall scan learned about one memory root, kept on disk so the
//! next process starts with a warm cache instead of reading and preparing every topic file.
//!
//! Location: `<root>/.memrecall/catalog`. The walk never enters hidden directories, so the catalog
//! is never a topic, and it lives and dies with the tree it describes.
//!
//! Content: for every file the cache remembers, its path below the root, its [`FileKey`], whether
//! it was settled when read (see the cache's racy-timestamp rule), and either the parsed document
//! with its prepared scoring text (normalised fields that are the lowercase of an ASCII source are
//! left out: scoring searches the source's lowercase instead) or the reason it is not a document.
//! Transient failures (`unreadable`, `vanished`) are not stored. Beside the files, the listing of
//! every directory the walk may skip listing next time (see the engine's `DirectoryListing`): its
//! key, whether it was settled, and the names of its subdirectories and topic files.
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
//! others have been read again since. A file that is missing is `missing`; one that cannot be
//! read, has another magic or version, fails a checksum or does not decode is `rejected`
//! and simply rewritten after the next scan. Recall never fails because of a catalog.
//!
//! Writes go to a temporary file in the same directory that is then renamed over the catalog, so
//! readers, including other processes, see the old or the new catalog whole, never a mix. Writes
//! of one cache are serialised; between processes the last rename wins, and either catalog is
//! correct because every entry is checked against its file before it is trusted.
//!
//! The first write of a root creates [`CATALOG_DIR_NAME`] in it, which changes the root's key
//! after the walk took it: the next recall lists the root again and writes the catalog once more
//! (twice when it comes within the racy margin, once to record the new listing and once more
//! when that listing has settled). From then on, only changes to the tree cause writes.

use std::ffi::OsString;
use std::fs::File;
use std::io;
#[cfg(not(unix))]
use std::path::Component;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lexical_score::{
    ByteString, Bytes, MemoryType, PREPARED_TEXT_VERSION, QueryTokens, StoredPreparedText,
    StoredPreparedTextRef,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use twox_hash::XxHash3_64;

use crate::cache::{CacheEntry, Verdict};
use crate::document::{Document, ScannedDocument, Scope};
use crate::engine::{Directories, DirectoryListing, EntryKind};
use crate::key::{FileKey, from_epoch_ns, to_epoch_ns};
use crate::report::SkipReason;
use crate::state_dir::{StateDir, StateDirError};
#[cfg(unix)]
use crate::state_dir::{SystemSteps, WriteSteps};
use crate::topic::Topic;

/// The hidden directory under a memory root that holds the catalog.
pub const CATALOG_DIR_NAME: &str = ".memrecall";
/// The catalog's file name inside [`CATALOG_DIR_NAME`].
pub const CATALOG_FILE_NAME: &str = "catalog";
/// The version of the catalog layout and of the walk rules its directory listings follow; a
/// catalog of another version is rebuilt.
pub const CATALOG_FORMAT_VERSION: u32 = 5;

const MAGIC: [u8; 8] = *b"memrcat\0";
const FIXED_HEADER_BYTES: usize = 8 + 4 * 4;
const CHUNK_RECORD_BYTES: usize = 3 * 8;
/// Small enough that both cores get many chunks, large enough that per-chunk costs vanish.
const ENTRIES_PER_CHUNK: usize = 32;

/// Where the catalog of a memory root lives.
pub fn catalog_path(root: &Path) -> PathBuf {
    root.join(CATALOG_DIR_NAME).join(CATALOG_FILE_NAME)
}

/// Why a catalog file was not used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Rejection {
    #[error("cannot read it: {0}")]
    Unreadable(#[from] io::Error),
    #[error("{0}")]
    UnsafeState(#[from] StateDirError),
    #[error("it is not a catalog file")]
    NotACatalog,
    #[error(
        "it has format {format} and prepared-text version {prepared}; this build writes {CATALOG_FORMAT_VERSION} and {PREPARED_TEXT_VERSION}"
    )]
    OtherVersion { format: u32, prepared: u32 },
    #[error("it is truncated or damaged: {0}")]
    Damaged(&'static str),
    #[error("an entry does not decode: {0}")]
    Undecodable(String),
}

/// A loaded catalog: entries keyed by the path below the root.
pub(crate) type Entries = Vec<(OsString, CacheEntry)>;

/// Where a catalog's bytes are read from: its file (each part read by the thread that decodes
/// it), or a buffer already in memory.
pub(crate) enum Source {
    #[cfg(unix)]
    File { file: File, len: u64 },
    // Built off Unix, and on Unix by the fuzzing entry point and the tests.
    #[cfg_attr(all(unix, not(any(test, feature = "fuzzing"))), allow(dead_code))]
    Memory(Bytes),
}

impl Source {
    fn len(&self) -> u64 {
        match self {
            #[cfg(unix)]
            Self::File { len, .. } => *len,
            Self::Memory(bytes) => bytes.len() as u64,
        }
    }

    /// The `len` bytes at `offset`; a part past the end is damage, never a short read.
    fn read_at(&self, offset: u64, len: usize) -> Result<Bytes, Rejection> {
        let end = offset.checked_add(len as u64);
        if end.is_none_or(|end| end > self.len()) {
            return Err(Rejection::Damaged("a part lies past the end of the file"));
        }
        match self {
            #[cfg(unix)]
            Self::File { file, .. } => Ok(Bytes::from(read_exact_at(file, len, offset)?)),
            Self::Memory(bytes) => {
                let start = usize::try_from(offset)
                    .map_err(|_| Rejection::Damaged("a part lies past the end of the file"))?;
                Ok(bytes.slice(start..start + len))
            }
        }
    }
}

/// A catalog whose header and chunk table checked out; its parts are read on demand, the small
/// directory listings first (a walk can use them while the entries decode).
pub(crate) struct Opened {
    source: Source,
    entry_count: u32,
    /// Offset, length and checksum of the directory chunk.
    directories: (u64, usize, u64),
    /// The same for each entry chunk.
    chunks: Vec<(u64, usize, u64)>,
}

/// Opens the catalog of `root` and checks its header; `Ok(None)` when there is none.
pub(crate) fn open(root: &Path) -> Result<Option<Opened>, Rejection> {
    let Some(dir) = StateDir::open(root)? else {
        return Ok(None);
    };
    let Some(file) = dir.open_catalog()? else {
        return Ok(None);
    };
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(Rejection::NotACatalog);
    }
    #[cfg(unix)]
    let source = Source::File {
        file,
        len: metadata.len(),
    };
    #[cfg(not(unix))]
    let source = Source::Memory(Bytes::from(std::fs::read(dir.path_of(CATALOG_FILE_NAME))?));
    open_source(source).map(Some)
}

/// Decodes a whole catalog held in memory (see [`crate::fuzzing`]).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn decode_bytes(bytes: &[u8]) -> Result<usize, Rejection> {
    let opened = open_source(Source::Memory(Bytes::copy_from_slice(bytes)))?;
    opened.directories()?;
    let entries = opened.entries(Path::new("/memory"), Scope::Project, None)?;
    Ok(entries.len())
}

/// Checks the header and chunk table of the catalog in `source`.
pub(crate) fn open_source(source: Source) -> Result<Opened, Rejection> {
    let file_len = source.len();
    let available =
        usize::try_from(file_len).map_or(FIXED_HEADER_BYTES, |len| len.min(FIXED_HEADER_BYTES));
    let fixed = source.read_at(0, available)?;
    if !fixed.starts_with(&MAGIC) {
        return Err(Rejection::NotACatalog);
    }
    let mut header = Reader(&fixed[MAGIC.len()..]);
    let (format, prepared) = (header.u32(), header.u32());
    if (format, prepared) != (Some(CATALOG_FORMAT_VERSION), Some(PREPARED_TEXT_VERSION)) {
        return Err(Rejection::OtherVersion {
            format: format.unwrap_or(0),
            prepared: prepared.unwrap_or(0),
        });
    }
    let (Some(chunk_count), Some(entry_count)) = (header.u32(), header.u32()) else {
        return Err(Rejection::Damaged("short header"));
    };
    let table_len = usize::try_from(chunk_count)
        .ok()
        .and_then(|n| n.checked_mul(CHUNK_RECORD_BYTES))
        .filter(|&n| n as u64 <= file_len)
        .ok_or(Rejection::Damaged("impossible chunk count"))?;
    let table = source.read_at(FIXED_HEADER_BYTES as u64, table_len + 8)?;
    let (table, table_sum) = table.split_at(table_len);
    let expected = u64::from_le_bytes(table_sum.try_into().unwrap_or_default());
    if XxHash3_64::oneshot(&[&fixed[..], table].concat()) != expected {
        return Err(Rejection::Damaged("header checksum mismatch"));
    }
    let mut records = Reader(table);
    let mut chunks: Vec<(u64, usize, u64)> = (0..chunk_count)
        .map(|_| {
            let offset = records.u64()?;
            let len = usize::try_from(records.u64()?).ok()?;
            Some((offset, len, records.u64()?))
        })
        .collect::<Option<_>>()
        .ok_or(Rejection::Damaged("short chunk table"))?;
    if chunks.is_empty() {
        return Err(Rejection::Damaged("no directory chunk"));
    }
    let directories = chunks.remove(0);
    Ok(Opened {
        source,
        entry_count,
        directories,
        chunks,
    })
}

impl Opened {
    /// The remembered directory listings (see [`DirectoryListing`]).
    pub(crate) fn directories(&self) -> Result<Directories, Rejection> {
        let (offset, len, sum) = self.directories;
        let bytes = self.source.read_at(offset, len)?;
        if XxHash3_64::oneshot(&bytes) != sum {
            return Err(Rejection::Damaged("chunk checksum mismatch"));
        }
        let stored: Vec<DirectoryIn<'_>> =
            postcard::from_bytes(&bytes).map_err(|e| Rejection::Undecodable(e.to_string()))?;
        let undecodable = || {
            Rejection::Undecodable("a directory listing holds an entry the walk never keeps".into())
        };
        stored
            .into_iter()
            .map(|directory| {
                let relative = if directory.relative.is_empty() {
                    PathBuf::new()
                } else {
                    PathBuf::from(relative_path(directory.relative).ok_or_else(undecodable)?)
                };
                let entries = directory
                    .entries
                    .into_iter()
                    .map(|(name, kind)| {
                        plain_name(name)
                            .filter(|name| kind.walks(name))
                            .map(|name| (name, kind))
                    })
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(undecodable)?;
                let in_order = entries.is_sorted_by(|a, b| a.0 < b.0);
                if !in_order {
                    return Err(Rejection::Damaged("a directory listing is out of order"));
                }
                let listing = DirectoryListing {
                    key: directory.key,
                    settled: directory.settled,
                    entries,
                };
                Ok((relative, listing))
            })
            .collect()
    }

    /// The entries, read and decoded chunk by chunk in parallel; each document is scored ahead
    /// for `query`, if given, as it is decoded.
    pub(crate) fn entries(
        &self,
        root: &Path,
        scope: Scope,
        query: Option<&QueryTokens>,
    ) -> Result<Entries, Rejection> {
        // A file's parts are each read by the thread that decodes it, into a buffer of its own:
        // reading overlaps decoding, and the documents of a part share only that part's buffer.
        let part = |offset: u64, len: usize| self.source.read_at(offset, len);
        let decoded: Vec<Entries> = self
            .chunks
            .par_iter()
            .map(|&(offset, len, sum)| {
                let bytes = part(offset, len)?;
                if XxHash3_64::oneshot(&bytes) != sum {
                    return Err(Rejection::Damaged("chunk checksum mismatch"));
                }
                decode_chunk(&bytes, root, scope, query)
            })
            .collect::<Result<_, _>>()?;
        let mut entries = Entries::with_capacity(decoded.iter().map(Vec::len).sum());
        for chunk in decoded {
            entries.extend(chunk);
        }
        if entries.len() as u64 != u64::from(self.entry_count) {
            return Err(Rejection::Damaged("entry count mismatch"));
        }
        Ok(entries)
    }
}

/// Reads the whole catalog of `root`: its entries and directory listings; `Ok(None)` when there
/// is none.
#[cfg(test)]
pub(crate) fn load(root: &Path, scope: Scope) -> Result<Option<(Entries, Directories)>, Rejection> {
    let Some(opened) = open(root)? else {
        return Ok(None);
    };
    let directories = opened.directories()?;
    Ok(Some((opened.entries(root, scope, None)?, directories)))
}

/// Writes the catalog of `root` atomically (see the `state_dir` module) and returns how many
/// entries it holds (transient skip verdicts are left out). Fails without touching an existing
/// catalog when the root's state directory cannot be created, is not safe to use, or cannot be
/// written (a read-only tree, for one).
pub(crate) fn save(
    root: &Path,
    entries: &[(OsString, CacheEntry)],
    directories: &Directories,
) -> Result<usize, SaveError> {
    #[cfg(unix)]
    {
        save_with(root, entries, directories, &mut SystemSteps)
    }
    #[cfg(not(unix))]
    {
        let _ = (entries, directories, StateDir::open_or_create(root)?);
        Err(SaveError::State(StateDirError::Unsupported))
    }
}

/// How a cache writes one root's catalog: [`save`], or [`save_with`] in tests.
pub(crate) type SaveFn<'a> =
    dyn FnMut(&Path, &[(OsString, CacheEntry)], &Directories) -> Result<usize, SaveError> + 'a;

/// [`save`] through the given write steps.
#[cfg(unix)]
pub(crate) fn save_with(
    root: &Path,
    entries: &[(OsString, CacheEntry)],
    directories: &Directories,
    steps: &mut dyn WriteSteps,
) -> Result<usize, SaveError> {
    let dir = StateDir::open_or_create(root)?;
    let (parts, count) = encode(entries, directories)?;
    let parts: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    dir.replace_catalog(steps, &parts)
        .map_err(|source| SaveError::Write {
            path: dir.path_of(CATALOG_FILE_NAME),
            source,
        })?;
    Ok(count)
}

/// Why a catalog was not written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SaveError {
    /// The state directory could not be created or is not safe to use.
    #[error(transparent)]
    State(#[from] StateDirError),
    /// The catalog could not be encoded (more entries than its format counts).
    #[error("cannot encode the catalog: {0}")]
    Encode(String),
    /// Writing, syncing or renaming it failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The catalog file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// The catalog's bytes, as its header and then each chunk, and how many entries it stores.
fn encode(
    entries: &[(OsString, CacheEntry)],
    directories: &Directories,
) -> Result<(Vec<Vec<u8>>, usize), SaveError> {
    let encoding = |error: postcard::Error| SaveError::Encode(error.to_string());
    let storable: Vec<EntryOut<'_>> = entries.iter().filter_map(entry_out).collect();
    let directories: Vec<DirectoryOut<'_>> = directories
        .iter()
        .map(|(relative, listing)| DirectoryOut {
            relative: relative.as_os_str().as_encoded_bytes(),
            key: listing.key,
            settled: listing.settled,
            entries: listing
                .entries
                .iter()
                .map(|(name, kind)| (name.as_encoded_bytes(), *kind))
                .collect(),
        })
        .collect();
    let mut parts = vec![
        Vec::new(),
        postcard::to_stdvec(&directories).map_err(encoding)?,
    ];
    parts.extend(
        storable
            .par_chunks(ENTRIES_PER_CHUNK)
            .map(|chunk| {
                chunk
                    .iter()
                    .try_fold(Vec::new(), |out, entry| postcard::to_extend(entry, out))
                    .map_err(encoding)
            })
            .collect::<Result<Vec<_>, _>>()?,
    );
    let chunks = &parts[1..];
    let too_many = |_| SaveError::Encode("too many catalog entries".to_owned());
    let chunk_count = u32::try_from(chunks.len()).map_err(too_many)?;
    let entry_count = u32::try_from(storable.len()).map_err(too_many)?;

    let mut header = Vec::with_capacity(FIXED_HEADER_BYTES + chunks.len() * CHUNK_RECORD_BYTES + 8);
    header.extend_from_slice(&MAGIC);
    for value in [
        CATALOG_FORMAT_VERSION,
        PREPARED_TEXT_VERSION,
        chunk_count,
        entry_count,
    ] {
        header.extend_from_slice(&value.to_le_bytes());
    }
    let mut offset = (FIXED_HEADER_BYTES + chunks.len() * CHUNK_RECORD_BYTES + 8) as u64;
    for chunk in chunks {
        let len = chunk.len() as u64;
        for value in [offset, len, XxHash3_64::oneshot(chunk)] {
            header.extend_from_slice(&value.to_le_bytes());
        }
        offset += len;
    }
    let header_sum = XxHash3_64::oneshot(&header);
    header.extend_from_slice(&header_sum.to_le_bytes());
    parts[0] = header;
    Ok((parts, storable.len()))
}

/// One directory listing as written (borrowing from the cache).
#[derive(Serialize)]
struct DirectoryOut<'a> {
    /// Empty for the root.
    relative: &'a [u8],
    key: FileKey,
    settled: bool,
    entries: Vec<(&'a [u8], EntryKind)>,
}

/// One directory listing as read.
#[derive(Deserialize)]
struct DirectoryIn<'a> {
    relative: &'a [u8],
    key: FileKey,
    settled: bool,
    #[serde(borrow)]
    entries: Vec<(&'a [u8], EntryKind)>,
}

/// A [`FileKey`] as 40 little-endian bytes (see the module documentation).
struct FixedKey(FileKey);

impl Serialize for FixedKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let key = &self.0;
        let mut bytes = [0u8; 40];
        let fields = [
            key.device.to_le_bytes(),
            key.inode.to_le_bytes(),
            key.size.to_le_bytes(),
            key.mtime_ns.to_le_bytes(),
            key.ctime_ns.to_le_bytes(),
        ];
        for (to, from) in bytes.chunks_exact_mut(8).zip(fields) {
            to.copy_from_slice(&from);
        }
        serializer.serialize_bytes(&bytes)
    }
}

impl<'de> Deserialize<'de> for FixedKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let bytes = <&'de [u8]>::deserialize(deserializer)?;
        let fixed = <&[u8; 40]>::try_from(bytes)
            .map_err(|_| serde::de::Error::invalid_length(bytes.len(), &"40 bytes"))?;
        let word = |at: usize| {
            let mut word = [0u8; 8];
            word.copy_from_slice(&fixed[at..at + 8]);
            word
        };
        Ok(Self(FileKey {
            device: u64::from_le_bytes(word(0)),
            inode: u64::from_le_bytes(word(8)),
            size: u64::from_le_bytes(word(16)),
            mtime_ns: i64::from_le_bytes(word(24)),
            ctime_ns: i64::from_le_bytes(word(32)),
        }))
    }
}

/// Nanoseconds since the Unix epoch as 8 little-endian bytes (see the module documentation).
struct FixedNanos(i64);

impl Serialize for FixedNanos {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.0.to_le_bytes())
    }
}

impl<'de> Deserialize<'de> for FixedNanos {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let bytes = <&'de [u8]>::deserialize(deserializer)?;
        let fixed = <[u8; 8]>::try_from(bytes)
            .map_err(|_| serde::de::Error::invalid_length(bytes.len(), &"8 bytes"))?;
        Ok(Self(i64::from_le_bytes(fixed)))
    }
}

/// One catalog entry as written (borrowing from the cache).
#[derive(Serialize)]
struct EntryOut<'a> {
    relative: &'a [u8],
    key: FixedKey,
    settled: bool,
    verdict: VerdictOut<'a>,
}

/// Variant order and field order match [`VerdictIn`]: postcard encodes positions, not names.
#[derive(Serialize)]
enum VerdictOut<'a> {
    Document {
        memory_type: MemoryType,
        title: &'a str,
        description: &'a str,
        body: &'a str,
        keywords: &'a str,
        usage_scenarios: &'a str,
        mtime_ns: FixedNanos,
        prepared: StoredPreparedTextRef<'a>,
    },
    Skipped(StoredSkip),
}

/// One catalog entry as read, borrowing from the chunk's bytes: the texts of a document become
/// shares of the chunk's buffer, not copies.
#[derive(Deserialize)]
struct EntryIn<'a> {
    relative: &'a [u8],
    key: FixedKey,
    settled: bool,
    #[serde(borrow)]
    verdict: VerdictIn<'a>,
}

/// Texts are read as bytes (postcard writes a string and a byte string alike) and checked to be
/// UTF-8 once, as they become shared strings.
// Each entry is decoded into this on the stack and taken apart at once: boxing the large
// variant would allocate once per document for nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Deserialize)]
enum VerdictIn<'a> {
    Document {
        memory_type: MemoryType,
        title: &'a [u8],
        description: &'a [u8],
        body: &'a [u8],
        keywords: &'a [u8],
        usage_scenarios: &'a [u8],
        mtime_ns: FixedNanos,
        #[serde(borrow)]
        prepared: StoredPreparedText<'a>,
    },
    Skipped(StoredSkip),
}

/// The skip verdicts worth keeping across processes: those that depend on the file's content
/// only, so they hold as long as its key does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
enum StoredSkip {
    NotUtf8,
    TooLarge { limit_bytes: u64, size_bytes: u64 },
    NoFrontmatter,
    UnterminatedFrontmatter,
    MissingType,
    UnknownType { value: String },
}

impl StoredSkip {
    fn from_reason(reason: &SkipReason) -> Option<Self> {
        Some(match reason {
            SkipReason::NotUtf8 => Self::NotUtf8,
            SkipReason::TooLarge {
                limit_bytes,
                size_bytes,
            } => Self::TooLarge {
                limit_bytes: *limit_bytes,
                size_bytes: *size_bytes,
            },
            SkipReason::NoFrontmatter => Self::NoFrontmatter,
            SkipReason::UnterminatedFrontmatter => Self::UnterminatedFrontmatter,
            SkipReason::MissingType => Self::MissingType,
            SkipReason::UnknownType { value } => Self::UnknownType {
                value: value.clone(),
            },
            _ => return None,
        })
    }

    fn into_reason(self) -> SkipReason {
        match self {
            Self::NotUtf8 => SkipReason::NotUtf8,
            Self::TooLarge {
                limit_bytes,
                size_bytes,
            } => SkipReason::TooLarge {
                limit_bytes,
                size_bytes,
            },
            Self::NoFrontmatter => SkipReason::NoFrontmatter,
            Self::UnterminatedFrontmatter => SkipReason::UnterminatedFrontmatter,
            Self::MissingType => SkipReason::MissingType,
            Self::UnknownType { value } => SkipReason::UnknownType { value },
        }
    }
}

/// The stored form of one entry; `None` for verdicts not worth keeping across processes.
fn entry_out((relative, entry): &(OsString, CacheEntry)) -> Option<EntryOut<'_>> {
    let verdict = match &entry.verdict {
        Verdict::Document(document) => VerdictOut::Document {
            memory_type: document.memory_type(),
            title: document.title(),
            description: document.description(),
            body: document.body(),
            keywords: document.topic().keywords(),
            usage_scenarios: document.topic().usage_scenarios(),
            mtime_ns: FixedNanos(to_epoch_ns(document.mtime())),
            prepared: document.prepared().stored(
                document.title(),
                document.description(),
                document.body(),
            ),
        },
        Verdict::Skipped(reason) => VerdictOut::Skipped(StoredSkip::from_reason(reason)?),
    };
    Some(EntryOut {
        relative: relative.as_encoded_bytes(),
        key: FixedKey(entry.key),
        settled: entry.settled,
        verdict,
    })
}

/// The entries of one chunk, decoded one after another straight into cache entries.
fn decode_chunk(
    bytes: &Bytes,
    root: &Path,
    scope: Scope,
    query: Option<&QueryTokens>,
) -> Result<Entries, Rejection> {
    let mut entries = Entries::with_capacity(ENTRIES_PER_CHUNK);
    let mut rest: &[u8] = bytes;
    while !rest.is_empty() {
        let (entry, after) = postcard::take_from_bytes::<EntryIn<'_>>(rest)
            .map_err(|e| Rejection::Undecodable(e.to_string()))?;
        rest = after;
        entries.push(decode_entry(entry, bytes, root, scope, query)?);
    }
    Ok(entries)
}

fn decode_entry(
    entry: EntryIn<'_>,
    bytes: &Bytes,
    root: &Path,
    scope: Scope,
    query: Option<&QueryTokens>,
) -> Result<(OsString, CacheEntry), Rejection> {
    let text = |part: &[u8]| {
        ByteString::try_from(bytes.slice_ref(part))
            .map_err(|_| Rejection::Undecodable("a text is not UTF-8".into()))
    };
    let relative = relative_path(entry.relative)
        .ok_or_else(|| Rejection::Undecodable("a path is not a plain relative path".into()))?;
    let verdict = match entry.verdict {
        VerdictIn::Document {
            memory_type,
            title,
            description,
            body,
            keywords,
            usage_scenarios,
            mtime_ns,
            prepared,
        } => {
            let (title, description, body) = (text(title)?, text(description)?, text(body)?);
            let prepared = prepared
                .restore(bytes, &title, &description, &body)
                .map_err(|e| Rejection::Undecodable(e.to_string()))?;
            if let Some(query) = query {
                prepared.score_ahead(query);
            }
            let (keywords, usage_scenarios) = (text(keywords)?, text(usage_scenarios)?);
            let topic = Topic::from_stored(
                memory_type,
                title,
                description,
                body,
                keywords,
                usage_scenarios,
            )
            .ok_or_else(|| Rejection::Undecodable("a stored topic breaks its invariants".into()))?;
            let path = crate::engine::join(root, &relative);
            let document = Document::from_scan(
                scope,
                path,
                PathBuf::from(relative.clone()),
                topic,
                from_epoch_ns(mtime_ns.0),
            );
            Verdict::Document(Arc::new(ScannedDocument::with_prepared(document, prepared)))
        }
        VerdictIn::Skipped(skip) => Verdict::Skipped(skip.into_reason()),
    };
    let entry = CacheEntry {
        key: entry.key.0,
        settled: entry.settled,
        verdict,
    };
    Ok((relative, entry))
}

/// A stored entry name, accepted only when it is one plain path component: not empty, no
/// separator, not `.` or `..`.
fn plain_name(bytes: &[u8]) -> Option<OsString> {
    let separator = |byte: &u8| *byte == b'/' || (cfg!(windows) && *byte == b'\\');
    let dots = bytes == b"." || bytes == b"..";
    let plain = !(bytes.is_empty() || bytes.iter().any(separator) || dots);
    plain.then(|| relative_path(bytes)).flatten()
}

/// A stored relative path, accepted only when it is made of plain names (not empty, no root, no
/// empty, `.` or `..` component), so a damaged catalog can never point outside its root. These are
/// the paths the walk builds, and the ones [`crate::cache::listing_order`] orders.
fn relative_path(bytes: &[u8]) -> Option<OsString> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let plain = bytes
            .split(|&byte| byte == b'/')
            .all(|name| !(name.is_empty() || name == b"." || name == b".."));
        plain.then(|| std::ffi::OsStr::from_bytes(bytes).to_owned())
    }
    #[cfg(not(unix))]
    {
        let path = OsString::from(std::str::from_utf8(bytes).ok()?);
        let mut components = Path::new(&path).components().peekable();
        let plain =
            components.peek().is_some() && components.all(|c| matches!(c, Component::Normal(_)));
        plain.then_some(path)
    }
}

/// `len` bytes at `offset`, read into a buffer that is not zeroed first.
#[cfg(unix)]
fn read_exact_at(file: &File, len: usize, offset: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(len);
    while bytes.len() < len {
        let at = offset + bytes.len() as u64;
        match rustix::io::pread(file, rustix::buffer::spare_capacity(&mut bytes), at) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(error) => return Err(error.into()),
        }
    }
    // The buffer may have had room for more than was asked.
    bytes.truncate(len);
    Ok(bytes)
}

/// A little-endian cursor over the header.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use super::*;
    use crate::engine::INDEX_FILE_NAME;

    #[cfg(unix)]
    #[test]
    fn a_catalog_decodes_the_same_from_memory_as_from_its_file() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["a.md", "b.md", "notes.md"] {
            let text = format!("---\nname: {name}\ntype: user\n---\n\nbody of {name}\n");
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let roots = crate::MemoryRoots {
            project: Some(dir.path().to_path_buf()),
            user: None,
        };
        let cache = crate::DocumentCache::with_catalog();
        cache.scan_recall(&roots).unwrap();
        cache.persist_catalogs();
        let bytes = std::fs::read(catalog_path(dir.path())).unwrap();

        let from_file = load(dir.path(), Scope::Project).unwrap().unwrap().0.len();

        assert_eq!(decode_bytes(&bytes).unwrap(), from_file);
        assert_eq!(from_file, 3);
        assert!(matches!(
            decode_bytes(&bytes[..bytes.len() - 1]),
            Err(Rejection::Damaged(_))
        ));
    }

    #[test]
    fn fixed_width_keys_and_times_round_trip_and_other_widths_are_rejected() {
        let key = FileKey {
            device: u64::MAX,
            inode: 1 << 40,
            size: 0,
            mtime_ns: -1_000_000_007,
            ctime_ns: i64::MAX,
        };
        let bytes = postcard::to_stdvec(&(FixedKey(key), FixedNanos(i64::MIN))).unwrap();
        // A length byte and the fixed bytes, for each.
        assert_eq!(bytes.len(), 1 + 40 + 1 + 8);
        let (back, nanos): (FixedKey, FixedNanos) = postcard::from_bytes(&bytes).unwrap();
        assert_eq!((back.0, nanos.0), (key, i64::MIN));
        let short = postcard::to_stdvec(&&[0u8; 39][..]).unwrap();
        assert!(postcard::from_bytes::<FixedKey>(&short).is_err());
        let long = postcard::to_stdvec(&&[0u8; 9][..]).unwrap();
        assert!(postcard::from_bytes::<FixedNanos>(&long).is_err());
    }

    #[test]
    fn names_with_a_separator_or_dots_are_not_plain_names() {
        assert!(plain_name(b"a.md").is_some());
        for bad in [&b""[..], b"a/", b"a/.", b"a//", b"a/b", b".", b".."] {
            assert!(
                plain_name(bad).is_none(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn stored_listing_entries_follow_the_walk_rules() {
        let walkable = |name: &str, kind: EntryKind| kind.walks(OsStr::new(name));
        assert!(walkable("a.md", EntryKind::File));
        assert!(walkable("notes", EntryKind::Directory));
        assert!(walkable("x.md", EntryKind::Directory));
        assert!(!walkable("notes.txt", EntryKind::File));
        assert!(!walkable(INDEX_FILE_NAME, EntryKind::File));
        assert!(!walkable(".git", EntryKind::Directory));
    }

    #[test]
    fn only_plain_relative_paths_are_accepted() {
        assert!(relative_path(b"a/b.md").is_some());
        for bad in [
            &b""[..],
            b"/etc/x.md",
            b"../x.md",
            b"a/../../x.md",
            b"./x.md",
            b"a//x.md",
            b"a/./x.md",
            b"a/",
        ] {
            assert!(relative_path(bad).is_none(), "{bad:?}");
        }
    }
}
