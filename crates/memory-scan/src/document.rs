//! Documents found on disk: a parsed topic plus where it lives and when it last changed.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use lexical_score::{MemoryType, PreparedText, Scorable};

use crate::topic::Topic;

/// Which memory root a document comes from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The current project's memory root; recalled first.
    Project,
    /// The user's cross-project memory root.
    User,
}

impl Scope {
    /// The lowercase scope name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::User => "user",
        }
    }
}

/// Why a [`Document`] cannot be built from the given parts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DocumentError {
    /// The identity path must be absolute.
    #[error("document path {0} is not absolute")]
    PathNotAbsolute(PathBuf),
    /// The relative path must be non-empty, made of names only and a suffix of the absolute
    /// path.
    #[error("{relative} is not a relative path ending {path}")]
    RelativePathMismatch {
        /// The absolute path given.
        path: PathBuf,
        /// The relative path given.
        relative: PathBuf,
    },
}

/// A topic document found on disk: identity = absolute path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    scope: Scope,
    path: PathBuf,
    relative_path: PathBuf,
    topic: Topic,
    mtime: SystemTime,
}

impl Document {
    /// Builds a document (saved at the topic's `modified` time when it has one, else at `mtime`);
    /// `path` must be absolute and end with the non-empty relative
    /// `relative_path` (the path below its memory root), whose components are all names (no
    /// `.` or `..`, which no walk of a root produces).
    pub fn new(
        scope: Scope,
        path: PathBuf,
        relative_path: PathBuf,
        topic: Topic,
        mtime: SystemTime,
    ) -> Result<Self, DocumentError> {
        if !path.is_absolute() {
            return Err(DocumentError::PathNotAbsolute(path));
        }
        let relative_ok = relative_path.components().next().is_some()
            && relative_path
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)))
            && path.ends_with(&relative_path);
        if !relative_ok {
            return Err(DocumentError::RelativePathMismatch {
                path,
                relative: relative_path,
            });
        }
        Ok(Self::from_scan(scope, path, relative_path, topic, mtime))
    }

    /// The scanner's constructor: the walk guarantees the path invariants.
    ///
    /// A topic with a `modified` time gives the document that saved time instead of `mtime`, and
    /// is kept without it, so a document read from a file and one loaded from a catalog (which
    /// stores only the saved time) are equal.
    pub(crate) fn from_scan(
        scope: Scope,
        path: PathBuf,
        relative_path: PathBuf,
        mut topic: Topic,
        mtime: SystemTime,
    ) -> Self {
        let mtime = topic.take_modified().unwrap_or(mtime);
        Self {
            scope,
            path,
            relative_path: with_forward_slashes(relative_path),
            topic,
            mtime,
        }
    }

    /// The root the document was found under.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// The absolute path, the document's identity.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path below its memory root, as shown to people.
    pub fn relative_path(&self) -> &Path {
        &self.relative_path
    }

    /// The parsed frontmatter and body.
    pub fn topic(&self) -> &Topic {
        &self.topic
    }

    /// The memory type.
    pub fn memory_type(&self) -> MemoryType {
        self.topic.memory_type()
    }

    /// The title (`name`, else `title`, else the type word).
    pub fn title(&self) -> &str {
        self.topic.title()
    }

    /// The description, possibly empty.
    pub fn description(&self) -> &str {
        self.topic.description()
    }

    /// The trimmed body, possibly empty.
    pub fn body(&self) -> &str {
        self.topic.body()
    }

    /// The saved time, which drives recency and the age a prompt shows: the frontmatter's
    /// `modified` time when the topic has one, else the file's modification time.
    pub fn mtime(&self) -> SystemTime {
        self.mtime
    }

    /// The file name, the capped scanner's tie-break after recency.
    pub fn file_name(&self) -> &std::ffi::OsStr {
        self.path.file_name().unwrap_or_default()
    }
}

/// A document with its prepared scoring text, as the recall path keeps it.
#[derive(Debug, Clone)]
pub struct ScannedDocument {
    document: Document,
    prepared: PreparedText,
}

impl ScannedDocument {
    /// Prepares the document's scoring text once.
    pub fn new(document: Document) -> Self {
        let topic = document.topic();
        let (title, description, body) = topic.shared_texts();
        let prepared = PreparedText::sharing(
            title,
            topic.keywords(),
            description,
            topic.usage_scenarios(),
            body,
        );
        Self { document, prepared }
    }

    /// Pairs a document with scoring text prepared from it earlier (a catalog entry).
    pub(crate) fn with_prepared(document: Document, prepared: PreparedText) -> Self {
        Self { document, prepared }
    }

    /// The document.
    pub fn document(&self) -> &Document {
        &self.document
    }

    /// The normalised scoring text, computed once per file version.
    pub fn prepared(&self) -> &PreparedText {
        &self.prepared
    }

    /// Gives the document back, dropping the prepared text.
    pub fn into_document(self) -> Document {
        self.document
    }
}

impl Scorable for ScannedDocument {
    fn prepared(&self) -> &PreparedText {
        &self.prepared
    }

    fn memory_type(&self) -> MemoryType {
        self.document.memory_type()
    }

    fn mtime(&self) -> SystemTime {
        self.document.mtime()
    }
}

impl std::ops::Deref for ScannedDocument {
    type Target = Document;

    fn deref(&self) -> &Document {
        &self.document
    }
}

/// `relative` with `/` between its names on every platform, as prompts, JSON and memory URIs
/// show it (Windows accepts `/` in a path as it accepts `\`).
#[cfg(windows)]
#[allow(
    clippy::needless_pass_by_value,
    reason = "the signature the Unix version has"
)]
fn with_forward_slashes(relative: PathBuf) -> PathBuf {
    let mut joined = std::ffi::OsString::new();
    for (i, name) in relative.iter().enumerate() {
        if i > 0 {
            joined.push("/");
        }
        joined.push(name);
    }
    PathBuf::from(joined)
}

/// `relative` as it is: `/` already separates its names.
#[cfg(not(windows))]
#[allow(
    clippy::missing_const_for_fn,
    reason = "the Windows version is not const"
)]
fn with_forward_slashes(relative: PathBuf) -> PathBuf {
    relative
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(path: &str, relative: &str) -> Result<Document, DocumentError> {
        let topic = Topic::new(MemoryType::User, "Title", "", "").unwrap();
        Document::new(
            Scope::Project,
            PathBuf::from(path),
            PathBuf::from(relative),
            topic,
            SystemTime::UNIX_EPOCH,
        )
    }

    #[test]
    fn a_document_needs_an_absolute_path_ending_with_a_plain_relative_path() {
        let absolute = if cfg!(windows) {
            "C:/memory/notes/a.md"
        } else {
            "/memory/notes/a.md"
        };
        assert!(document(absolute, "notes/a.md").is_ok());
        let root = absolute.trim_end_matches("/memory/notes/a.md");
        assert!(matches!(
            document("memory/a.md", "a.md"),
            Err(DocumentError::PathNotAbsolute(_))
        ));
        for (path, relative) in [
            ("/memory/a.md", ""),
            ("/memory/a.md", "b.md"),
            ("/memory/a.md", "/memory/a.md"),
            ("/memory/../a.md", "../a.md"),
            ("/memory/./a.md", "./a.md"),
        ] {
            let path = &format!("{root}{path}");
            assert!(
                matches!(
                    document(path, relative),
                    Err(DocumentError::RelativePathMismatch { .. })
                ),
                "{path} {relative}"
            );
        }
    }
}
