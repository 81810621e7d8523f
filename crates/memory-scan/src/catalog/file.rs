//! Reading a catalog from its file, part by part, and writing one atomically.

use std::ffi::OsString;
use std::fs::File;
use std::io;
#[cfg(not(unix))]
use std::io::Read;
use std::path::{Path, PathBuf};

use lexical_score::{Bytes, PREPARED_TEXT_VERSION, QueryTokens};
use twox_hash::XxHash3_64;

use super::CATALOG_FILE_NAME;
use super::format::Encoder;
use super::format::{
    CHUNK_RECORD_BYTES, DirectoryIn, FIXED_HEADER_BYTES, MAGIC, Reader, decode_chunk, plain_name,
    relative_path,
};
use super::{CATALOG_FORMAT_VERSION, CatalogRead, MAX_CATALOG_BYTES};
use crate::document::Scope;
use crate::engine::{Directories, DirectoryListing};
use crate::entry::{CacheEntry, Entries};
use crate::error::{CatalogRejection, CatalogWriteError};
use crate::state_dir::CatalogParts;
use crate::state_dir::{StateDir, StateLocation};
#[cfg(unix)]
use crate::state_dir::{SystemSteps, WriteSteps};

/// Where a catalog's bytes are read from: its file (each part read by the thread that decodes
/// it), or bytes already in memory (the whole file, read at once).
pub(crate) enum Source {
    #[cfg(unix)]
    File {
        file: File,
        len: u64,
    },
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
    fn read_at(&self, offset: u64, len: usize) -> Result<Bytes, CatalogRejection> {
        let end = offset.checked_add(len as u64);
        if end.is_none_or(|end| end > self.len()) {
            return Err(CatalogRejection::Damaged {
                what: "a part lies past the end of the file",
            });
        }
        match self {
            #[cfg(unix)]
            Self::File { file, .. } => Ok(Bytes::from(read_exact_at(file, len, offset)?)),
            Self::Memory(bytes) => {
                let start = usize::try_from(offset).map_err(|_| CatalogRejection::Damaged {
                    what: "a part lies past the end of the file",
                })?;
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

/// Opens the catalog in the state directory at `location`, to be read as `read` says, and checks
/// its header; `Ok(None)` when there is none.
pub(crate) fn open(
    location: &StateLocation,
    read: CatalogRead,
) -> Result<Option<Opened>, CatalogRejection> {
    let Some(dir) = StateDir::open(location)? else {
        return Ok(None);
    };
    let Some(file) = dir.open_catalog()? else {
        return Ok(None);
    };
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(CatalogRejection::NotACatalog);
    }
    let len = metadata.len();
    if len > MAX_CATALOG_BYTES {
        return Err(CatalogRejection::TooLarge {
            size_bytes: len,
            limit_bytes: MAX_CATALOG_BYTES,
        });
    }
    #[cfg(unix)]
    let source = match read {
        CatalogRead::PerPart => Source::File { file, len },
        CatalogRead::Whole => Source::Memory(read_whole(&file, len)?),
    };
    #[cfg(not(unix))]
    let source = {
        let _ = read;
        Source::Memory(read_whole(&file, len)?)
    };
    open_source(source).map(Some)
}

/// Decodes a whole catalog held in memory (see [`crate::fuzzing`]).
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn decode_bytes(bytes: &[u8]) -> Result<usize, CatalogRejection> {
    let opened = open_source(Source::Memory(Bytes::copy_from_slice(bytes)))?;
    opened.directories()?;
    let entries = opened.entries(Path::new("/memory"), Scope::Project, None)?;
    Ok(entries.len())
}

/// Checks the header and chunk table of the catalog in `source`.
pub(crate) fn open_source(source: Source) -> Result<Opened, CatalogRejection> {
    let file_len = source.len();
    let available =
        usize::try_from(file_len).map_or(FIXED_HEADER_BYTES, |len| len.min(FIXED_HEADER_BYTES));
    let fixed = source.read_at(0, available)?;
    if !fixed.starts_with(&MAGIC) {
        return Err(CatalogRejection::NotACatalog);
    }
    let mut header = Reader(&fixed[MAGIC.len()..]);
    let (format, prepared) = (header.u32(), header.u32());
    if (format, prepared) != (Some(CATALOG_FORMAT_VERSION), Some(PREPARED_TEXT_VERSION)) {
        return Err(CatalogRejection::OtherVersion {
            format: format.unwrap_or(0),
            prepared: prepared.unwrap_or(0),
            expected_format: CATALOG_FORMAT_VERSION,
            expected_prepared: PREPARED_TEXT_VERSION,
        });
    }
    let (Some(chunk_count), Some(entry_count)) = (header.u32(), header.u32()) else {
        return Err(CatalogRejection::Damaged {
            what: "short header",
        });
    };
    let table_len = usize::try_from(chunk_count)
        .ok()
        .and_then(|n| n.checked_mul(CHUNK_RECORD_BYTES))
        .filter(|&n| n as u64 <= file_len)
        .ok_or(CatalogRejection::Damaged {
            what: "impossible chunk count",
        })?;
    let table = source.read_at(FIXED_HEADER_BYTES as u64, table_len + 8)?;
    let (table, table_sum) = table.split_at(table_len);
    let expected = u64::from_le_bytes(table_sum.try_into().unwrap_or_default());
    if XxHash3_64::oneshot(&[&fixed[..], table].concat()) != expected {
        return Err(CatalogRejection::Damaged {
            what: "header checksum mismatch",
        });
    }
    let mut records = Reader(table);
    let mut chunks: Vec<(u64, usize, u64)> = (0..chunk_count)
        .map(|_| {
            let offset = records.u64()?;
            let len = usize::try_from(records.u64()?).ok()?;
            Some((offset, len, records.u64()?))
        })
        .collect::<Option<_>>()
        .ok_or(CatalogRejection::Damaged {
            what: "short chunk table",
        })?;
    if chunks.is_empty() {
        return Err(CatalogRejection::Damaged {
            what: "no directory chunk",
        });
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
    pub(crate) fn directories(&self) -> Result<Directories, CatalogRejection> {
        let (offset, len, sum) = self.directories;
        let bytes = self.source.read_at(offset, len)?;
        if XxHash3_64::oneshot(&bytes) != sum {
            return Err(CatalogRejection::Damaged {
                what: "chunk checksum mismatch",
            });
        }
        let stored: Vec<DirectoryIn<'_>> =
            postcard::from_bytes(&bytes).map_err(CatalogRejection::Undecodable)?;
        let undecodable = || CatalogRejection::InvalidEntry {
            what: "a directory listing holds an entry the walk never keeps",
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
                    return Err(CatalogRejection::Damaged {
                        what: "a directory listing is out of order",
                    });
                }
                let listing = DirectoryListing {
                    key: directory.key,
                    stable: directory.stable,
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
    ) -> Result<Entries, CatalogRejection> {
        // A file's parts are each read by the thread that decodes it, into a buffer of its own:
        // reading overlaps decoding, and the documents of a part share only that part's buffer.
        let part = |offset: u64, len: usize| self.source.read_at(offset, len);
        let decoded: Vec<Entries> = crate::par::map(&self.chunks, |&(offset, len, sum)| {
            let bytes = part(offset, len)?;
            if XxHash3_64::oneshot(&bytes) != sum {
                return Err(CatalogRejection::Damaged {
                    what: "chunk checksum mismatch",
                });
            }
            decode_chunk(&bytes, root, scope, query)
        })
        .into_iter()
        .collect::<Result<_, _>>()?;
        let mut entries = Entries::with_capacity(decoded.iter().map(Vec::len).sum());
        for chunk in decoded {
            entries.extend(chunk);
        }
        if entries.len() as u64 != u64::from(self.entry_count) {
            return Err(CatalogRejection::Damaged {
                what: "entry count mismatch",
            });
        }
        Ok(entries)
    }
}

/// Writes the catalog of `root` atomically (see the `state_dir` module) and returns how many
/// entries it holds (transient skip verdicts are left out). Fails without touching an existing
/// catalog when the root's state directory cannot be created, is not safe to use, or cannot be
/// written (a read-only tree, for one).
pub(crate) fn save(
    location: &StateLocation,
    entries: &[(OsString, CacheEntry)],
    directories: &Directories,
) -> Result<usize, CatalogWriteError> {
    #[cfg(unix)]
    {
        save_with(location, entries, directories, &mut SystemSteps)
    }
    #[cfg(windows)]
    {
        save_by(location, entries, directories, |dir, parts| {
            dir.replace_catalog(parts)
        })
    }
}

/// How a cache writes one root's catalog: [`save`], or [`save_with`] in tests.
pub(crate) type SaveFn<'a> = dyn FnMut(
        &StateLocation,
        &[(OsString, CacheEntry)],
        &Directories,
    ) -> Result<usize, CatalogWriteError>
    + 'a;

/// [`save`] through the given write steps.
#[cfg(unix)]
pub(crate) fn save_with(
    location: &StateLocation,
    entries: &[(OsString, CacheEntry)],
    directories: &Directories,
    steps: &mut dyn WriteSteps,
) -> Result<usize, CatalogWriteError> {
    save_by(location, entries, directories, |dir, parts| {
        dir.replace_catalog(steps, parts)
    })
}

/// [`save`] with `replace` putting the encoded parts in place of the state directory's catalog.
fn save_by(
    location: &StateLocation,
    entries: &[(OsString, CacheEntry)],
    directories: &Directories,
    replace: impl FnOnce(&StateDir, &mut dyn CatalogParts) -> io::Result<()>,
) -> Result<usize, CatalogWriteError> {
    let dir = StateDir::open_or_create(location)?;
    let mut parts = Parts {
        encoder: Encoder::new(entries, directories)?,
        failed: None,
    };
    let written = replace(&dir, &mut parts);
    if let Some(error) = parts.failed {
        return Err(error);
    }
    written.map_err(|source| CatalogWriteError::Write {
        path: dir.path_of(CATALOG_FILE_NAME),
        source,
    })?;
    Ok(parts.encoder.entry_count())
}

/// A catalog's encoder as the parts a state directory writes; an encoding failure is kept aside
/// to be reported as itself rather than as a failed write.
struct Parts<'a> {
    encoder: Encoder<'a>,
    failed: Option<CatalogWriteError>,
}

impl CatalogParts for Parts<'_> {
    fn header_len(&self) -> usize {
        self.encoder.header_len()
    }

    fn next_parts(&mut self) -> io::Result<Option<Vec<Vec<u8>>>> {
        self.encoder.next_batch().map_err(|error| {
            self.failed = Some(error);
            io::Error::other("the catalog could not be encoded")
        })
    }

    fn header(&mut self) -> io::Result<Vec<u8>> {
        Ok(self.encoder.header())
    }
}

/// The whole of `file`, which its metadata said is `len` bytes long, read into one buffer (on
/// Unix with one `pread`, repeated only if the system returns less). The file may change while it
/// is read (another program of the same user can rewrite or truncate it in place): a file that
/// ends before `len` bytes or goes on past them is damage. Bytes changed in place at the same
/// length are caught by the checksums, which are computed over this buffer, never over the file.
fn read_whole(file: &File, len: u64) -> Result<Bytes, CatalogRejection> {
    let changed = || CatalogRejection::Damaged {
        what: "the file changed length while it was read",
    };
    let size = usize::try_from(len).map_err(|_| CatalogRejection::TooLarge {
        size_bytes: len,
        limit_bytes: MAX_CATALOG_BYTES,
    })?;
    #[cfg(unix)]
    let bytes = {
        let bytes = read_exact_at(file, size, 0).map_err(|error| {
            if error.kind() == io::ErrorKind::UnexpectedEof {
                changed()
            } else {
                error.into()
            }
        })?;
        let mut past_end = [0u8; 1];
        if rustix::io::pread(file, &mut past_end, len).map_err(io::Error::from)? != 0 {
            return Err(changed());
        }
        bytes
    };
    #[cfg(not(unix))]
    let bytes = {
        // One byte of room past the end, so that a file that grew is seen.
        let mut bytes = Vec::with_capacity(size.saturating_add(1));
        file.take(len.saturating_add(1)).read_to_end(&mut bytes)?;
        if bytes.len() != size {
            return Err(changed());
        }
        bytes
    };
    Ok(Bytes::from(bytes))
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
