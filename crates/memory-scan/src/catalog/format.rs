//! The catalog's byte layout: header, chunk table, and how entries and directory listings are
//! encoded and decoded (see the `catalog` module for the layout itself).

use std::ffi::OsString;
#[cfg(not(unix))]
use std::path::Component;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lexical_score::{
    ByteString, Bytes, MemoryType, PREPARED_TEXT_VERSION, QueryTokens, StoredPreparedText,
    StoredPreparedTextRef,
};
use serde::{Deserialize, Serialize};
use twox_hash::XxHash3_64;

use super::CATALOG_FORMAT_VERSION;
use crate::document::{Document, ScannedDocument, Scope};
use crate::engine::{Directories, EntryKind};
use crate::entry::{CacheEntry, Entries, Verdict};
use crate::error::{CatalogRejection, CatalogWriteError};
use crate::key::{FileKey, from_epoch_ns, to_epoch_ns};
use crate::report::SkipReason;
use crate::topic::Topic;

pub(super) const MAGIC: [u8; 8] = *b"memrcat\0";
pub(super) const FIXED_HEADER_BYTES: usize = 8 + 4 * 4;
pub(super) const CHUNK_RECORD_BYTES: usize = 3 * 8;
/// Small enough that both cores get many chunks, large enough that per-chunk costs vanish.
pub(super) const ENTRIES_PER_CHUNK: usize = 32;

/// Entry chunks encoded at a time while a catalog is written: enough for both cores, few enough
/// that a batch is a few MiB however large the catalog.
const CHUNKS_PER_BATCH: usize = 64;

/// A catalog being encoded. The number of chunks, and so the header's length, is known at once;
/// the chunks are encoded a batch at a time (the directory listings first); the header, which
/// records every chunk's offset, length and checksum, is made last.
pub(super) struct Encoder<'a> {
    storable: Vec<EntryOut<'a>>,
    /// Chunk 0 until it is given.
    listings: Option<Vec<u8>>,
    /// The first storable entry not yet encoded.
    next: usize,
    /// Per chunk given: offset, length, checksum.
    records: Vec<[u64; 3]>,
    /// Where the next chunk starts in the file.
    offset: u64,
}

impl<'a> Encoder<'a> {
    pub(super) fn new(
        entries: &'a [(OsString, CacheEntry)],
        directories: &'a Directories,
    ) -> Result<Self, CatalogWriteError> {
        let storable: Vec<EntryOut<'a>> = entries.iter().filter_map(entry_out).collect();
        let directories: Vec<DirectoryOut<'_>> = directories
            .iter()
            .map(|(relative, listing)| DirectoryOut {
                relative: relative.as_os_str().as_encoded_bytes(),
                key: listing.key,
                stable: listing.stable,
                entries: listing
                    .entries
                    .iter()
                    .map(|(name, kind)| (name.as_encoded_bytes(), *kind))
                    .collect(),
            })
            .collect();
        let listings = postcard::to_stdvec(&directories).map_err(CatalogWriteError::Encode)?;
        let too_many = |_| CatalogWriteError::TooManyEntries;
        u32::try_from(storable.len()).map_err(too_many)?;
        let mut encoder = Self {
            storable,
            listings: Some(listings),
            next: 0,
            records: Vec::new(),
            offset: 0,
        };
        u32::try_from(encoder.chunk_count()).map_err(too_many)?;
        encoder.offset = encoder.header_len() as u64;
        Ok(encoder)
    }

    /// How many entries the catalog stores.
    pub(super) fn entry_count(&self) -> usize {
        self.storable.len()
    }

    /// The directory listings' chunk and the entry chunks.
    fn chunk_count(&self) -> usize {
        1 + self.storable.len().div_ceil(ENTRIES_PER_CHUNK)
    }

    pub(super) fn header_len(&self) -> usize {
        FIXED_HEADER_BYTES + self.chunk_count() * CHUNK_RECORD_BYTES + 8
    }

    /// The next chunks in file order; `None` once every chunk was given.
    pub(super) fn next_batch(&mut self) -> Result<Option<Vec<Vec<u8>>>, CatalogWriteError> {
        let batch = if let Some(listings) = self.listings.take() {
            vec![listings]
        } else if self.next < self.storable.len() {
            let end = self
                .storable
                .len()
                .min(self.next + CHUNKS_PER_BATCH * ENTRIES_PER_CHUNK);
            let entries = &self.storable[self.next..end];
            self.next = end;
            crate::par::map_chunks(entries, ENTRIES_PER_CHUNK, |chunk| {
                chunk
                    .iter()
                    .try_fold(Vec::new(), |out, entry| postcard::to_extend(entry, out))
                    .map_err(CatalogWriteError::Encode)
            })
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?
        } else {
            return Ok(None);
        };
        for chunk in &batch {
            let len = chunk.len() as u64;
            self.records
                .push([self.offset, len, XxHash3_64::oneshot(chunk)]);
            self.offset += len;
        }
        Ok(Some(batch))
    }

    /// The header, once every chunk was given.
    pub(super) fn header(&self) -> Vec<u8> {
        debug_assert_eq!(self.records.len(), self.chunk_count());
        let mut header = Vec::with_capacity(self.header_len());
        header.extend_from_slice(&MAGIC);
        for value in [
            CATALOG_FORMAT_VERSION,
            PREPARED_TEXT_VERSION,
            // Both checked to fit when the encoder was made.
            u32::try_from(self.records.len()).unwrap_or(u32::MAX),
            u32::try_from(self.storable.len()).unwrap_or(u32::MAX),
        ] {
            header.extend_from_slice(&value.to_le_bytes());
        }
        for record in &self.records {
            for value in record {
                header.extend_from_slice(&value.to_le_bytes());
            }
        }
        let header_sum = XxHash3_64::oneshot(&header);
        header.extend_from_slice(&header_sum.to_le_bytes());
        header
    }
}

/// One directory listing as written (borrowing from the cache).
#[derive(Serialize)]
struct DirectoryOut<'a> {
    /// Empty for the root.
    relative: &'a [u8],
    key: FileKey,
    stable: bool,
    entries: Vec<(&'a [u8], EntryKind)>,
}

/// One directory listing as read.
#[derive(Deserialize)]
pub(super) struct DirectoryIn<'a> {
    pub(super) relative: &'a [u8],
    pub(super) key: FileKey,
    pub(super) stable: bool,
    #[serde(borrow)]
    pub(super) entries: Vec<(&'a [u8], EntryKind)>,
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
    stable: bool,
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
    stable: bool,
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
        stable: entry.stable,
        verdict,
    })
}

/// The entries of one chunk, decoded one after another straight into cache entries.
pub(super) fn decode_chunk(
    bytes: &Bytes,
    root: &Path,
    scope: Scope,
    query: Option<&QueryTokens>,
) -> Result<Entries, CatalogRejection> {
    let mut entries = Entries::with_capacity(ENTRIES_PER_CHUNK);
    let mut rest: &[u8] = bytes;
    while !rest.is_empty() {
        let (entry, after) = postcard::take_from_bytes::<EntryIn<'_>>(rest)
            .map_err(CatalogRejection::Undecodable)?;
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
) -> Result<(OsString, CacheEntry), CatalogRejection> {
    let text = |part: &[u8]| {
        ByteString::try_from(bytes.slice_ref(part)).map_err(|_| CatalogRejection::InvalidEntry {
            what: "a text is not UTF-8",
        })
    };
    let relative = relative_path(entry.relative).ok_or(CatalogRejection::InvalidEntry {
        what: "a path is not a plain relative path",
    })?;
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
                .map_err(CatalogRejection::PreparedText)?;
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
            .ok_or(CatalogRejection::InvalidEntry {
                what: "a stored topic breaks its invariants",
            })?;
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
        stable: entry.stable,
        verdict,
    };
    Ok((relative, entry))
}

/// A stored entry name, accepted only when it is one plain path component: not empty, no
/// separator, not `.` or `..`.
pub(super) fn plain_name(bytes: &[u8]) -> Option<OsString> {
    let separator = |byte: &u8| *byte == b'/' || (cfg!(windows) && *byte == b'\\');
    let dots = bytes == b"." || bytes == b"..";
    let plain = !(bytes.is_empty() || bytes.iter().any(separator) || dots);
    plain.then(|| relative_path(bytes)).flatten()
}

/// A stored relative path, accepted only when it is made of plain names (not empty, no root, no
/// empty, `.` or `..` component), so a damaged catalog can never point outside its root. These are
/// the paths the walk builds, and the ones [`crate::entry::listing_order`] orders.
pub(super) fn relative_path(bytes: &[u8]) -> Option<OsString> {
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

/// A little-endian cursor over the header.
pub(super) struct Reader<'a>(pub(super) &'a [u8]);

impl<'a> Reader<'a> {
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    pub(super) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }

    pub(super) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests;
