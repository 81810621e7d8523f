//! The validation key that says whether a file may have changed since it was last read.

use std::fs::Metadata;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Identity and version of a file as the file system reports it: if any field differs, the file
/// must be read again. Nanosecond times are counted from the Unix epoch.
///
/// `ctime` is part of the key because it moves on every write, rename or permission change even
/// when a tool restores `mtime`; device and inode catch a file replaced by another one.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct FileKey {
    /// Device holding the file.
    pub device: u64,
    /// Inode number on that device.
    pub inode: u64,
    /// Size in bytes.
    pub size: u64,
    /// Last modification time, nanoseconds since the Unix epoch.
    pub mtime_ns: i64,
    /// Last status change time, nanoseconds since the Unix epoch.
    pub ctime_ns: i64,
}

impl FileKey {
    /// Reads the key from metadata (of an open file or a `stat` of a path).
    #[cfg(unix)]
    pub fn from_metadata(metadata: &Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        Self {
            device: metadata.dev(),
            inode: metadata.ino(),
            size: metadata.size(),
            mtime_ns: epoch_ns(metadata.mtime(), metadata.mtime_nsec()),
            ctime_ns: epoch_ns(metadata.ctime(), metadata.ctime_nsec()),
        }
    }

    /// Reads the key from a `stat` result; equal to [`FileKey::from_metadata`] of the same file.
    #[cfg(unix)]
    pub(crate) fn from_stat(stat: &rustix::fs::Stat) -> Self {
        // Field types vary by platform; these are the conversions std's `MetadataExt` makes.
        #[allow(
            clippy::useless_conversion,
            clippy::unnecessary_cast,
            clippy::cast_sign_loss,
            clippy::cast_possible_wrap
        )]
        Self {
            device: stat.st_dev as u64,
            inode: stat.st_ino as u64,
            size: stat.st_size as u64,
            mtime_ns: epoch_ns(stat.st_mtime as i64, stat.st_mtime_nsec as i64),
            ctime_ns: epoch_ns(stat.st_ctime as i64, stat.st_ctime_nsec as i64),
        }
    }

    /// Reads the key from metadata; without inode numbers the key rests on size and times.
    #[cfg(not(unix))]
    pub fn from_metadata(metadata: &Metadata) -> Self {
        let ns = |t: std::io::Result<SystemTime>| t.map_or(0, to_epoch_ns);
        Self {
            device: 0,
            inode: 0,
            size: metadata.len(),
            mtime_ns: ns(metadata.modified()),
            ctime_ns: ns(metadata.created()),
        }
    }
}

#[cfg(unix)]
fn epoch_ns(seconds: i64, nanos: i64) -> i64 {
    seconds.saturating_mul(1_000_000_000).saturating_add(nanos)
}

/// Nanoseconds since the Unix epoch, negative before it, saturating at the `i64` range.
pub(crate) fn to_epoch_ns(time: SystemTime) -> i64 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_nanos()).unwrap_or(i64::MAX),
        Err(before) => i64::try_from(before.duration().as_nanos()).map_or(i64::MIN, |ns| -ns),
    }
}

/// The inverse of [`to_epoch_ns`].
pub(crate) fn from_epoch_ns(ns: i64) -> SystemTime {
    let magnitude = Duration::from_nanos(ns.unsigned_abs());
    if ns >= 0 {
        UNIX_EPOCH + magnitude
    } else {
        UNIX_EPOCH - magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_nanoseconds_round_trip_on_both_sides_of_the_epoch() {
        // Whole 100 ns: the finest time Windows keeps.
        for ns in [0, 100, 1_700_000_000_123_456_700, -500, -1_000_000_000_000] {
            assert_eq!(to_epoch_ns(from_epoch_ns(ns)), ns);
        }
    }
}
