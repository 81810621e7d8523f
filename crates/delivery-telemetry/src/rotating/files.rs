//! The names of a sink's files and what the directory says about them.

use std::io;
use std::path::Path;
use std::time::SystemTime;

use super::TELEMETRY_FILE_EXTENSION;

/// A telemetry file's name, parsed: day first, so names sort by age.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct FileKey {
    pub(super) day: String,
    pub(super) sequence: u32,
}

pub(super) fn file_name(day: &str, sequence: u32) -> String {
    format!("{day}.{sequence:04}.{TELEMETRY_FILE_EXTENSION}")
}

/// `YYYY-MM-DD.NNNN.jsonl` parsed, or `None` for any other name (left alone).
pub(super) fn parse_file_name(name: &str) -> Option<FileKey> {
    let stem = name
        .strip_suffix(TELEMETRY_FILE_EXTENSION)?
        .strip_suffix('.')?;
    let (day, sequence) = stem.split_once('.')?;
    let well_formed_day = day.len() == 10
        && day.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    if !well_formed_day || sequence.is_empty() || !sequence.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(FileKey {
        day: day.to_owned(),
        sequence: sequence.parse().ok()?,
    })
}

/// The sink's own files in `dir`, in no particular order.
pub(super) fn telemetry_files(dir: &Path) -> io::Result<Vec<FileKey>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if let Some(key) = entry.file_name().to_str().and_then(parse_file_name) {
            files.push(key);
        }
    }
    Ok(files)
}

/// Whether the file is still in its directory: another writer may have pruned it.
#[cfg(unix)]
pub(super) fn still_linked(meta: &std::fs::Metadata) -> bool {
    std::os::unix::fs::MetadataExt::nlink(meta) > 0
}

#[cfg(not(unix))]
pub(super) fn still_linked(_meta: &std::fs::Metadata) -> bool {
    true
}

/// The UTC calendar day of `time`, `YYYY-MM-DD`.
pub(super) fn utc_day(time: SystemTime) -> String {
    let mut stamp = humantime::format_rfc3339_seconds(time).to_string();
    stamp.truncate(10);
    stamp
}
