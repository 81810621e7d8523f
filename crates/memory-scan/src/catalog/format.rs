//! The catalog's byte layout: header, chunk table, and how entries and directory listings are
//! encoded and decoded (see the `catalog` module for the layout itself).

use std::ffi::OsString;
#[cfg(not(unix))]
use std::path::Component;
use std::path::Path;

use lexical_score::{Bytes, PREPARED_TEXT_VERSION, QueryTokens};
use twox_hash::XxHash3_64;

pub(super) use records::DirectoryIn;
use records::{DirectoryOut, EntryIn, EntryOut, decode_entry, entry_out};

use super::CATALOG_FORMAT_VERSION;
use crate::document::Scope;
use crate::engine::Directories;
use crate::entry::{CacheEntry, Entries};
use crate::error::{CatalogRejection, CatalogWriteError};

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

mod records;
#[cfg(test)]
mod tests;
