//! The ids under which documents are listed in the selector's manifest.

use std::path::Path;

/// The id under which a document is listed in the selector's manifest and named in its answer:
/// the absolute path, readable and distinct for every distinct path.
///
/// A path that is valid UTF-8 and holds no `%` is its own id. Otherwise each byte that is not
/// part of valid UTF-8 is written `%XX` (two upper-case hex digits) and every `%` of the path is
/// written `%25`, so the mapping is lossless: `caf\xE9.md` is `caf%E9.md`, `caf\xE8.md` is
/// `caf%E8.md`, and a file literally named `caf%E9.md` is `caf%25E9.md`. (A lossy conversion
/// would give both non-UTF-8 names the same id, and the model's pick could name either file.)
/// On Windows the bytes are the platform's encoding of the path, a superset of UTF-8, so a
/// lone surrogate is written as the `%XX` of its bytes.
pub fn candidate_id(path: &Path) -> String {
    let bytes = path.as_os_str().as_encoded_bytes();
    if let Ok(text) = std::str::from_utf8(bytes)
        && !text.contains('%')
    {
        return text.to_owned();
    }
    let mut id = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        for (n, part) in chunk.valid().split('%').enumerate() {
            if n > 0 {
                id.push_str("%25");
            }
            id.push_str(part);
        }
        for &byte in chunk.invalid() {
            push_percent_encoded(&mut id, byte);
        }
    }
    id
}

fn push_percent_encoded(id: &mut String, byte: u8) {
    const HEX: [char; 16] = [
        '0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'A', 'B', 'C', 'D', 'E', 'F',
    ];
    id.push('%');
    id.push(HEX[usize::from(byte >> 4)]);
    id.push(HEX[usize::from(byte & 0x0F)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_path_without_percent_is_its_own_id() {
        let path = Path::new("/home/me/.memory/project/記憶-deploy.md");
        assert_eq!(
            candidate_id(path),
            "/home/me/.memory/project/記憶-deploy.md"
        );
    }

    #[test]
    fn percent_in_a_path_is_written_as_percent_25() {
        assert_eq!(candidate_id(Path::new("/m/100%.md")), "/m/100%25.md");
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_bytes_are_percent_encoded_and_the_rest_kept() {
        use std::os::unix::ffi::OsStrExt;
        let path = Path::new(std::ffi::OsStr::from_bytes(b"/m/caf\xe9-\xff\xfe.md"));
        assert_eq!(candidate_id(path), "/m/caf%E9-%FF%FE.md");
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_name_and_a_file_named_like_its_encoding_get_different_ids() {
        use std::os::unix::ffi::OsStrExt;
        let raw = Path::new(std::ffi::OsStr::from_bytes(b"/m/caf\xe9.md"));
        let literal = Path::new("/m/caf%E9.md");
        assert_ne!(candidate_id(raw), candidate_id(literal));
    }
}
