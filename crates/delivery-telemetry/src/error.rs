//! Errors of the file-backed sink and reader.

use std::io;
use std::path::PathBuf;

/// Why a telemetry event could not be written or read back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// The event could not be turned into JSON.
    #[error("could not serialize telemetry event: {0}")]
    Serialize(#[source] serde_json::Error),
    /// Appending to the telemetry file failed; check free space and permissions.
    #[error("could not append to telemetry file {}: {source}", path.display())]
    Write {
        /// The telemetry file.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: io::Error,
    },
    /// Reading the telemetry file failed.
    #[error("could not read telemetry file {}: {source}", path.display())]
    Read {
        /// The telemetry file.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: io::Error,
    },
    /// A line of the telemetry file is not a telemetry event.
    #[error("{}:{line}: not a telemetry event: {source}", path.display())]
    Parse {
        /// The telemetry file.
        path: PathBuf,
        /// One-based line number.
        line: usize,
        /// The JSON error.
        #[source]
        source: serde_json::Error,
    },
}
