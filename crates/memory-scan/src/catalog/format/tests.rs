use std::ffi::OsStr;

use super::records::{FixedKey, FixedNanos};
use super::*;
use crate::engine::{EntryKind, INDEX_FILE_NAME};
use crate::entry::Verdict;
use crate::key::FileKey;
use crate::report::SkipReason;

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

// Catalogs are kept on Unix only; their paths are Unix paths.
#[cfg(unix)]
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

#[test]
fn a_catalog_of_more_chunks_than_one_batch_is_written_and_loads_whole() {
    let dir = tempfile::tempdir().unwrap();
    let count = CHUNKS_PER_BATCH * ENTRIES_PER_CHUNK * 2 + 5;
    let entries: Entries = (0..count as u64)
        .map(|i| {
            let entry = CacheEntry {
                key: FileKey {
                    device: 1,
                    inode: i,
                    size: 10,
                    mtime_ns: 1,
                    ctime_ns: 1,
                },
                stable: true,
                verdict: Verdict::Skipped(SkipReason::NoFrontmatter),
            };
            (OsString::from(format!("f{i:06}.md")), entry)
        })
        .collect();

    let written = crate::catalog::save_in_root(dir.path(), &entries, &Directories::new()).unwrap();
    let (loaded, _) = crate::catalog::load(dir.path(), Scope::Project)
        .unwrap()
        .unwrap();

    assert_eq!(written, count);
    let keys = |entries: &Entries| -> Vec<(OsString, FileKey)> {
        entries
            .iter()
            .map(|(name, e)| (name.clone(), e.key))
            .collect()
    };
    assert_eq!(keys(&loaded), keys(&entries));
}
