//! What `install` changed in a settings file, kept under memrecall's home so that `uninstall`
//! gives the user back the exact bytes they had: the original text (or that there was no file),
//! and a hash of the text `install` wrote. When the file still holds exactly that text, the
//! original is put back; when it changed since (the user or the agent edited it), only
//! memrecall's entries are taken out and the rest stays as it now is.
//!
//! One file per settings file, `$MEMRECALL_HOME/installs/<hash of the settings path>.json`,
//! private to the user.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What one `install` changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstallRecord {
    /// The settings file.
    pub settings: PathBuf,
    /// The file's text before the first install; `None` when install created it.
    pub original: Option<String>,
    /// The hash ([`fingerprint`]) of the text install last wrote.
    pub installed: String,
}

/// A text's hash, as records keep it.
pub fn fingerprint(text: &str) -> String {
    format!("{:016x}", twox_hash::XxHash3_64::oneshot(text.as_bytes()))
}

fn record_path(home: &Path, settings: &Path) -> PathBuf {
    let key = twox_hash::XxHash3_64::oneshot(settings.as_os_str().as_encoded_bytes());
    home.join("installs").join(format!("{key:016x}.json"))
}

/// The record of `settings`, when there is a readable one for it.
pub fn load(home: &Path, settings: &Path) -> Option<InstallRecord> {
    let text = memory_scan::foreign::read_to_string(
        &record_path(home, settings),
        memory_scan::foreign::ByteLimit::SETTINGS,
        memory_scan::foreign::Links::Refuse,
    )
    .ok()?;
    serde_json::from_str::<InstallRecord>(&text)
        .ok()
        .filter(|record| record.settings == settings)
}

/// Every readable record under `home`, in no particular order.
pub fn all(home: &Path) -> Vec<InstallRecord> {
    let Ok(entries) = std::fs::read_dir(home.join("installs")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| {
            let text = memory_scan::foreign::read_to_string(
                &entry.path(),
                memory_scan::foreign::ByteLimit::SETTINGS,
                memory_scan::foreign::Links::Refuse,
            )
            .ok()?;
            serde_json::from_str(&text).ok()
        })
        .collect()
}

/// Keeps `record`, replacing an earlier one of the same file.
pub fn save(home: &Path, record: &InstallRecord) -> std::io::Result<()> {
    let path = record_path(home, &record.settings);
    let dir = path.parent().unwrap_or(home);
    crate::files::private_dir(dir)?;
    let text = serde_json::to_string(record).map_err(std::io::Error::other)?;
    let mut temp_name = path.file_name().unwrap_or_default().to_os_string();
    temp_name.push(format!(".{}.tmp", std::process::id()));
    let temp = dir.join(temp_name);
    let written = (|| {
        let mut file = crate::files::private_file(
            std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true),
        )
        .open(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temp, &path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// Forgets the record of `settings`.
pub fn forget(home: &Path, settings: &Path) {
    let _ = std::fs::remove_file(record_path(home, settings));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_for_its_settings_file_only() {
        let home = tempfile::tempdir().unwrap();
        let record = InstallRecord {
            settings: PathBuf::from("/h/.codex/hooks.json"),
            original: Some("{ }\n".to_owned()),
            installed: fingerprint("x"),
        };
        save(home.path(), &record).unwrap();
        assert_eq!(load(home.path(), &record.settings), Some(record.clone()));
        assert_eq!(load(home.path(), Path::new("/h/.qwen/settings.json")), None);
        assert_eq!(all(home.path()), std::slice::from_ref(&record));
        forget(home.path(), &record.settings);
        assert_eq!(load(home.path(), &record.settings), None);
        assert_eq!(all(home.path()), []);
    }
}
