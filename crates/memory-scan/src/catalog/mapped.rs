//! A catalog's file mapped into memory, for a cache that makes one recall (see
//! `DocumentCache::for_one_recall`). The one place in this crate that uses `unsafe`.

#![allow(unsafe_code)]

use std::fs::File;
use std::io;

use lexical_score::Bytes;

/// The bytes of `file`, mapped read-only; every slice of them keeps the mapping alive.
pub(super) fn map(file: &File) -> io::Result<Bytes> {
    // SAFETY: a mapping is sound while no one changes the file's bytes or length under it. The
    // file is the catalog, opened in a state directory checked to be this user's and private
    // (mode 0700, the catalog 0600, neither a symlink), so only this user's processes can write
    // it. memrecall never writes a catalog in place: each is written whole to a new temporary
    // file that is renamed over the old one, which leaves the mapped file and its bytes as they
    // were. What is left is another program of the same user truncating or rewriting the file in
    // place while it is mapped; `DocumentCache::for_one_recall` states that cost (the process
    // ends with SIGBUS) and keeps mappings to processes that live for one recall. Bytes changed
    // in place would still only reach the checked decoding, which never trusts them.
    let map = unsafe { memmap2::Mmap::map(file)? };
    Ok(Bytes::from_owner(map))
}
