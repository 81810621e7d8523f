//! The outcome a cache remembers for one file, shared by the cache and the catalog, and the order
//! entries are kept in.

use std::cmp::Ordering;
use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;

#[cfg(doc)]
use crate::RACY_MARGIN;
use crate::document::ScannedDocument;
use crate::key::FileKey;
use crate::report::SkipReason;

/// What a cache remembers of one file.
#[derive(Debug, Clone)]
pub(crate) struct CacheEntry {
    pub(crate) key: FileKey,
    /// Whether the file was older than [`RACY_MARGIN`] before the scan that read it started.
    pub(crate) stable: bool,
    pub(crate) verdict: Verdict,
}

#[derive(Debug, Clone)]
pub(crate) enum Verdict {
    Document(Arc<ScannedDocument>),
    Skipped(SkipReason),
}

/// Remembered entries keyed by the path below the root, in listing order (see [`listing_order`]).
pub(crate) type Entries = Vec<(OsString, CacheEntry)>;

/// The order of relative paths in a listing: component by component, as `Path` compares.
pub(crate) fn path_order(a: &(OsString, CacheEntry), b: &(OsString, CacheEntry)) -> Ordering {
    listing_order(Path::new(&a.0), Path::new(&b.0))
}

/// Component-by-component order of two plain relative paths (no empty, `.` or `..` component;
/// the walk builds no other, and the catalog accepts no other), as `Path` compares them. On Unix
/// that is byte order with the separator ranked below every other byte, which is compared here
/// without splitting either path into components.
pub(crate) fn listing_order(a: &Path, b: &Path) -> Ordering {
    #[cfg(unix)]
    {
        let (a, b) = (
            a.as_os_str().as_encoded_bytes(),
            b.as_os_str().as_encoded_bytes(),
        );
        let common = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        let rank = |byte: &u8| {
            if *byte == b'/' {
                0
            } else {
                u16::from(*byte) + 1
            }
        };
        match (a.get(common), b.get(common)) {
            (Some(x), Some(y)) => rank(x).cmp(&rank(y)),
            (x, y) => x.is_some().cmp(&y.is_some()),
        }
    }
    #[cfg(not(unix))]
    {
        a.cmp(b)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    proptest::proptest! {
        /// Names drawn from bytes around the separator (`-` and `.` sort below `/`, `0` above).
        #[test]
        fn listing_order_is_the_component_order_of_paths(
            a in proptest::collection::vec("[-.0a]{1,3}", 1..4),
            b in proptest::collection::vec("[-.0a]{1,3}", 1..4),
        ) {
            let plain = |names: &[String]| names.iter().all(|n| n != "." && n != "..");
            proptest::prop_assume!(plain(&a) && plain(&b));
            let (a, b) = (PathBuf::from(a.join("/")), PathBuf::from(b.join("/")));
            proptest::prop_assert_eq!(listing_order(&a, &b), a.cmp(&b));
        }
    }
}
