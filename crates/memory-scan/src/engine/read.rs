//! Reading one candidate: open it, stat the open handle, read and parse it.

use std::fs::File;
use std::io::Read;
use std::time::{SystemTime, UNIX_EPOCH};

use super::access::{OpenParent, io_reason};
use super::{Candidate, EarlyKey, MAX_TOPIC_BYTES};
use crate::key::FileKey;
use crate::report::SkipReason;
use crate::topic::{ParseError, Topic, parse_topic};

impl Candidate {
    /// Reads and parses the candidate's file (see [`read_topic`]), opened by name in `parent`
    /// (see [`OpenParent::open`]).
    pub(crate) fn read(&self, parent: &mut OpenParent) -> ReadOutcome {
        read_topic(parent.open(&self.relative, self.symlink))
    }

    /// The key of the candidate's file: as taken right after listing, or now (in `parent`).
    pub(crate) fn current_key(&self, parent: &mut OpenParent) -> Option<FileKey> {
        match self.early_key {
            EarlyKey::Taken(key) => Some(key),
            EarlyKey::Unavailable => None,
            EarlyKey::NotTaken => parent.key(&self.relative, self.symlink),
        }
    }
}

/// The result of reading one candidate.
pub(crate) enum ReadOutcome {
    Parsed {
        topic: Topic,
        mtime: SystemTime,
        key: FileKey,
    },
    /// `key` is known when the file could be opened, so a cache may remember the verdict.
    Skipped {
        reason: SkipReason,
        key: Option<FileKey>,
    },
}

/// Reads and parses one topic file, given how opening it went (see [`OpenParent::open`]): then
/// one fstat of the opened handle and one read.
fn read_topic(opened: Result<File, SkipReason>) -> ReadOutcome {
    let skipped = |reason, key| ReadOutcome::Skipped { reason, key };
    let file = match opened {
        Ok(file) => file,
        Err(reason) => return skipped(reason, None),
    };
    let metadata = match file.metadata() {
        Ok(metadata) => metadata,
        Err(error) => return skipped(io_reason(&error), None),
    };
    if !metadata.is_file() {
        return skipped(SkipReason::NotAFile, None);
    }
    let key = FileKey::from_metadata(&metadata);
    if metadata.len() > MAX_TOPIC_BYTES {
        return skipped(too_large(metadata.len()), Some(key));
    }
    // The file is read up to the size its fstat gave, which is what its key describes: one read
    // call, without a second one to find the end. A file written meanwhile has another key at the
    // next scan and is read again then. A size of 0 is not taken at its word (some file systems
    // report 0 for files with content): such a file is read to its end, the cap applying while
    // reading.
    let limit = match metadata.len() {
        0 => MAX_TOPIC_BYTES + 1,
        size => size,
    };
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    if let Err(error) = (&file).take(limit).read_to_end(&mut bytes) {
        return skipped(io_reason(&error), Some(key));
    }
    let read_len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    if read_len > MAX_TOPIC_BYTES {
        return skipped(too_large(read_len), Some(key));
    }
    let Ok(text) = String::from_utf8(bytes) else {
        return skipped(SkipReason::NotUtf8, Some(key));
    };
    match parse_topic(&text) {
        Ok(topic) => ReadOutcome::Parsed {
            topic,
            mtime: metadata.modified().unwrap_or(UNIX_EPOCH),
            key,
        },
        Err(error) => skipped(parse_reason(error), Some(key)),
    }
}

fn too_large(size_bytes: u64) -> SkipReason {
    SkipReason::TooLarge {
        limit_bytes: MAX_TOPIC_BYTES,
        size_bytes,
    }
}

fn parse_reason(error: ParseError) -> SkipReason {
    match error {
        ParseError::NoFrontmatter => SkipReason::NoFrontmatter,
        ParseError::UnterminatedFrontmatter => SkipReason::UnterminatedFrontmatter,
        ParseError::MissingType => SkipReason::MissingType,
        ParseError::UnknownType { value } => SkipReason::UnknownType { value },
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::super::roots::open_root;
    use super::*;

    #[test]
    fn reading_a_file_that_no_longer_exists_reports_it_vanished() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gone.md");
        fs::write(&path, "---\ntype: user\n---\n").unwrap();
        let root = open_root(dir.path()).unwrap().unwrap();
        fs::remove_file(&path).unwrap();

        let outcome = read_topic(OpenParent::new(root).open(Path::new("gone.md"), false));

        assert!(matches!(
            outcome,
            ReadOutcome::Skipped {
                reason: SkipReason::Vanished,
                key: None
            }
        ));
    }
}
