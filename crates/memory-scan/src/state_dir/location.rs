//! Where a root's catalog is kept: inside the root, or in a directory of the caller's.

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
    /// ([`CatalogStore::catalog_path`]): for roots whose place memrecall reads but must not
    /// write in (a directory a repository's own settings chose). The directory is created,
    /// private to the user, when the first catalog is written.
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
