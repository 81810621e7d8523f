//! The one directory name a project's absolute path is given, for the layouts that keep a
//! project's memory in a folder named after it.

use std::path::Path;

/// The longest directory name [`sanitise_project_path`] returns, in bytes: the file-name limit of
/// ext4, XFS, Btrfs and APFS (NTFS allows 255 UTF-16 units, the same for an ASCII name).
pub const MAX_PROJECT_DIR_NAME_BYTES: usize = 255;

/// Hex digits of the path hash that ends a shortened name.
const PATH_HASH_HEX_DIGITS: usize = 16;

/// Turns an absolute project path into one directory name.
///
/// Every character that is not an ASCII letter or digit becomes `-`, so `/home/ana/shop.v2` gives
/// `-home-ana-shop-v2`. When that name is at most [`MAX_PROJECT_DIR_NAME_BYTES`] (255) bytes it is
/// the answer as it is: the rule every tool that finds memrecall's project roots follows.
///
/// A longer name could not be created (`ENAMETOOLONG`), so it is cut on a character boundary to
/// 238 bytes and followed by `_` and the 16 lowercase hex digits of the XXH3-64 hash (seed 0) of
/// the full path as given (its bytes as `OsStr::as_encoded_bytes` returns them, the raw bytes on
/// Unix). The result is exactly 255 bytes. The hash is a fixed, published algorithm, so a
/// project's directory does not move between builds or Rust versions, and two long paths that
/// share the kept prefix still get different names. `_` never occurs in an unshortened name, so
/// a shortened name cannot be taken by another project's unshortened one.
pub fn sanitise_project_path(path: &Path) -> String {
    let name: String = path
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if name.len() <= MAX_PROJECT_DIR_NAME_BYTES {
        return name;
    }
    let hash = twox_hash::XxHash3_64::oneshot(path.as_os_str().as_encoded_bytes());
    let kept = name.floor_char_boundary(MAX_PROJECT_DIR_NAME_BYTES - 1 - PATH_HASH_HEX_DIGITS);
    format!("{}_{hash:0PATH_HASH_HEX_DIGITS$x}", &name[..kept])
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    /// An absolute path of `len` bytes: `/` then `x`s, ending in `tail`.
    fn long_path(len: usize, tail: &str) -> PathBuf {
        PathBuf::from(format!("/{}{tail}", "x".repeat(len - 1 - tail.len())))
    }

    #[test]
    fn project_paths_sanitise_to_one_directory_name() {
        assert_eq!(
            sanitise_project_path(Path::new("/home/ana/shop.v2")),
            "-home-ana-shop-v2"
        );
    }

    #[test]
    fn a_path_whose_name_fits_in_255_bytes_keeps_its_unshortened_name() {
        let path = long_path(MAX_PROJECT_DIR_NAME_BYTES, "/shop");
        let expected = format!("-{}-shop", "x".repeat(MAX_PROJECT_DIR_NAME_BYTES - 6));
        assert_eq!(sanitise_project_path(&path), expected);
    }

    #[test]
    fn a_long_path_gives_a_name_of_at_most_255_bytes() {
        for len in [MAX_PROJECT_DIR_NAME_BYTES + 1, 382, 4000] {
            let name = sanitise_project_path(&long_path(len, "/shop"));
            assert!(
                name.len() <= MAX_PROJECT_DIR_NAME_BYTES,
                "{len}: {}",
                name.len()
            );
        }
    }

    #[test]
    fn a_long_non_ascii_path_gives_a_name_of_at_most_255_bytes() {
        let path = PathBuf::from(format!("/{}", "é".repeat(300)));
        let name = sanitise_project_path(&path);
        assert!(name.len() <= MAX_PROJECT_DIR_NAME_BYTES, "{}", name.len());
    }

    #[test]
    fn two_long_paths_differing_only_at_the_end_get_different_names() {
        let a = sanitise_project_path(&long_path(382, "/a"));
        let b = sanitise_project_path(&long_path(382, "/b"));
        assert_ne!(a, b);
    }

    #[test]
    fn two_long_paths_differing_only_in_punctuation_get_different_names() {
        let a = sanitise_project_path(&long_path(382, "/a.b"));
        let b = sanitise_project_path(&long_path(382, "/a-b"));
        assert_ne!(a, b);
    }

    #[test]
    fn a_long_path_name_is_stable_across_calls() {
        let path = long_path(382, "/shop");
        assert_eq!(sanitise_project_path(&path), sanitise_project_path(&path));
    }

    #[test]
    fn a_long_path_name_is_the_kept_prefix_then_the_pinned_xxh3_of_the_path() {
        // Pinned so that a change of the rule, which would move existing directories, fails here.
        // 1bd33f972d9e4dfa is XXH3-64 of the path as computed by the reference C library.
        let name = sanitise_project_path(&long_path(382, "/shop"));
        let expected = format!("-{}_1bd33f972d9e4dfa", "x".repeat(237));
        assert_eq!(name, expected);
    }

    #[test]
    fn a_long_project_path_gives_a_memory_directory_that_can_be_created() {
        let home = tempfile::tempdir().unwrap();
        let project = long_path(382, "/shop");
        let root = home
            .path()
            .join("projects")
            .join(sanitise_project_path(&project))
            .join("memory");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("a.md"), "x").unwrap();
    }
}
