//! One catalog entry and one directory listing as they are stored: their serde forms, and the
//! conversion from and to the cache's entries.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use lexical_score::{
    ByteString, Bytes, MemoryType, QueryTokens, StoredPreparedText, StoredPreparedTextRef,
};
use serde::{Deserialize, Serialize};

use super::relative_path;
use crate::document::{Document, ScannedDocument, Scope};
use crate::engine::EntryKind;
use crate::entry::{CacheEntry, Verdict};
use crate::error::CatalogRejection;
use crate::key::{FileKey, from_epoch_ns, to_epoch_ns};
use crate::report::SkipReason;
use crate::topic::Topic;

/// One directory listing as written (borrowing from the cache).
#[derive(Serialize)]
pub(super) struct DirectoryOut<'a> {
    /// Empty for the root.
    pub(super) relative: &'a [u8],
    pub(super) key: FileKey,
    pub(super) stable: bool,
    pub(super) entries: Vec<(&'a [u8], EntryKind)>,
}

/// One directory listing as read.
#[derive(Deserialize)]
pub(in crate::catalog) struct DirectoryIn<'a> {
    pub(in crate::catalog) relative: &'a [u8],
    pub(in crate::catalog) key: FileKey,
    pub(in crate::catalog) stable: bool,
    #[serde(borrow)]
    pub(in crate::catalog) entries: Vec<(&'a [u8], EntryKind)>,
}

/// A [`FileKey`] as 40 little-endian bytes (see the module documentation).
pub(super) struct FixedKey(pub(super) FileKey);

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
pub(super) struct FixedNanos(pub(super) i64);

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
pub(super) struct EntryOut<'a> {
    relative: &'a [u8],
    key: FixedKey,
    stable: bool,
    verdict: VerdictOut<'a>,
}

/// Variant order and field order match [`VerdictIn`]: postcard encodes positions, not names.
#[derive(Serialize)]
pub(super) enum VerdictOut<'a> {
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
pub(super) struct EntryIn<'a> {
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
pub(super) enum VerdictIn<'a> {
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
pub(super) enum StoredSkip {
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
pub(super) fn entry_out((relative, entry): &(OsString, CacheEntry)) -> Option<EntryOut<'_>> {
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

pub(super) fn decode_entry(
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
