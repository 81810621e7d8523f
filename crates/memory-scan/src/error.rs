//! Why a persistent catalog was not loaded or not written.

use std::io;
use std::path::PathBuf;

use lexical_score::InvalidPreparedText;

use crate::state_dir::StateDirError;

/// Why a catalog file was not used. The scan goes on without it, and the catalog is rewritten
/// after the scan.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogRejection {
    /// The file could not be read.
    #[error("cannot read it: {0}")]
    Unreadable(#[source] io::Error),
    /// The state directory or the catalog is not safe to use (see [`StateDirError`]).
    #[error("{0}")]
    UnsafeState(#[source] StateDirError),
    /// The file is larger than any catalog is read (see `DocumentCache::for_one_recall`).
    #[error("it is {size_bytes} bytes long, over the {limit_bytes}-byte limit for a catalog")]
    TooLarge {
        /// The file's size.
        size_bytes: u64,
        /// The limit.
        limit_bytes: u64,
    },
    /// The file does not start like a catalog.
    #[error("it is not a catalog file")]
    NotACatalog,
    /// The file was written by a build with another layout or scoring text preparation.
    #[error(
        "it has format {format} and prepared-text version {prepared}; this build writes {expected_format} and {expected_prepared}"
    )]
    OtherVersion {
        /// The catalog format version found.
        format: u32,
        /// The prepared-text version found.
        prepared: u32,
        /// The catalog format version this build writes.
        expected_format: u32,
        /// The prepared-text version this build writes.
        expected_prepared: u32,
    },
    /// A length, offset, count, order or checksum does not add up.
    #[error("it is truncated or damaged: {what}")]
    Damaged {
        /// What does not add up.
        what: &'static str,
    },
    /// A part passed its checksum but does not decode.
    #[error("a part does not decode: {0}")]
    Undecodable(#[source] postcard::Error),
    /// An entry decodes but breaks a rule every entry the scanner writes keeps.
    #[error("an entry is invalid: {what}")]
    InvalidEntry {
        /// The rule broken.
        what: &'static str,
    },
    /// A document's stored scoring text does not fit its fields.
    #[error("a stored scoring text is invalid: {0}")]
    PreparedText(#[source] InvalidPreparedText),
}

impl From<io::Error> for CatalogRejection {
    fn from(error: io::Error) -> Self {
        Self::Unreadable(error)
    }
}

impl From<StateDirError> for CatalogRejection {
    fn from(error: StateDirError) -> Self {
        Self::UnsafeState(error)
    }
}

/// Why a catalog was not written. The previous catalog, if any, is left whole, and the write is
/// tried again after the next scan.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogWriteError {
    /// The state directory could not be created or is not safe to use.
    #[error(transparent)]
    State(#[from] StateDirError),
    /// An entry or listing could not be encoded.
    #[error("cannot encode the catalog: {0}")]
    Encode(#[source] postcard::Error),
    /// More entries or chunks than the format counts.
    #[error("cannot encode the catalog: too many entries")]
    TooManyEntries,
    /// Writing, syncing or renaming it failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The catalog file.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}
