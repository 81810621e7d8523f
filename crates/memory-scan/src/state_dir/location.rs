//! Where a root's catalog is kept: inside the root, or in a directory of the caller's.

use std::io;
use std::path::{Path, PathBuf};

/// The hidden directory under a memory root that holds the catalog.
pub const CATALOG_DIR_NAME: &str = ".memrecall";
/// The catalog's file name inside [`CATALOG_DIR_NAME`].
pub const CATALOG_FILE_NAME: &str = "catalog";
/// Where the catalog of a memory root lives.
pub fn catalog_path(root: &Path) -> PathBuf {
    root.join(CATALOG_DIR_NAME).join(CATALOG_FILE_NAME)
}

/// Where a cache keeps the catalogs of its roots.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum CatalogStore {
    /// Inside each root, at [`catalog_path`]: the catalog lives and dies with its tree.
    #[default]
    InRoot,
    /// In a directory of the caller's, one state directory per root named by the root's path
    /// ([`CatalogStore::catalog_path`]): nothing is written inside the roots. The directory is
    /// created, private to the user, when the first catalog is written; then the catalog an
    /// earlier writer kept inside the root, if any, is removed ([`remove_in_root_catalog`]).
    Under(PathBuf),
}

impl CatalogStore {
    /// Where the catalog of `root` is kept.
    pub fn catalog_path(&self, root: &Path) -> PathBuf {
        self.location(root).path().join(CATALOG_FILE_NAME)
    }

    /// The state directory of `root`.
    pub(crate) fn location(&self, root: &Path) -> StateLocation {
        match self {
            Self::InRoot => StateLocation::in_root(root),
            Self::Under(dir) => StateLocation {
                parent: dir.clone(),
                name: root_key(root),
                create_parent: true,
            },
        }
    }
}

/// Removes the catalog kept inside `root` ([`catalog_path`]) and its writers' temporary files,
/// then the [`CATALOG_DIR_NAME`] directory if nothing else is in it. Anything else there, and a
/// `.memrecall` that is a symlink or not a directory, is left alone. Returns whether a file was
/// removed.
///
/// # Errors
///
/// When the directory cannot be listed or a file in it removed.
pub fn remove_in_root_catalog(root: &Path) -> io::Result<bool> {
    let dir = root.join(CATALOG_DIR_NAME);
    match std::fs::symlink_metadata(&dir) {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => return Ok(false),
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(error) => return Err(error),
    }
    let temporary = |name: &str| name.starts_with(super::TEMPORARY_PREFIX);
    let mut removed = false;
    for entry in std::fs::read_dir(&dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let ours = name == CATALOG_FILE_NAME || name.to_str().is_some_and(temporary);
        if ours && entry.file_type()?.is_file() {
            std::fs::remove_file(entry.path())?;
            removed = true;
        }
    }
    if removed {
        // Only when empty: a file of someone else's keeps the directory.
        let _ = std::fs::remove_dir(&dir);
    }
    Ok(removed)
}

/// The name of a root's state directory in a [`CatalogStore::Under`] directory: its last name
/// (for a person looking) and a hash of its whole path (so two roots never share one).
fn root_key(root: &Path) -> String {
    let last: String = root
        .file_name()
        .map(|name| name.to_string_lossy())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(32)
        .collect();
    let hash = twox_hash::XxHash3_64::oneshot(root.as_os_str().as_encoded_bytes());
    format!("{last}-{hash:016x}")
}

/// Where one root's state directory is: the entry `name` of the directory `parent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StateLocation {
    pub(super) parent: PathBuf,
    pub(super) name: String,
    /// Whether `parent` is created (privately) when missing; a memory root never is.
    pub(super) create_parent: bool,
}

impl StateLocation {
    /// `<root>/.memrecall`.
    pub(crate) fn in_root(root: &Path) -> Self {
        Self {
            parent: root.to_path_buf(),
            name: CATALOG_DIR_NAME.to_owned(),
            create_parent: false,
        }
    }

    /// The state directory's path.
    pub(crate) fn path(&self) -> PathBuf {
        self.parent.join(&self.name)
    }
}
