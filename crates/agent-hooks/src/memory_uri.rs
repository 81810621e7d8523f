//! How a memory is named to an agent: `memory://<scope>/<percent-encoded path below the root>`.
//!
//! The MCP server hands these out (each recalled memory's resource) and reads them back; the
//! hook finds them in a memory tool's result, so that a note the model fetched is not delivered
//! again. A URI names a document below a root, never a place: a path that is not plain names
//! below the root is refused, whatever its encoding.
//!
//! # Example
//!
//! ```
//! use std::path::Path;
//!
//! use agent_hooks::memory_uri::MemoryUri;
//! use memory_scan::Scope;
//!
//! let uri = MemoryUri::new(Scope::User, Path::new("db/迁移 plan.md"));
//! assert_eq!(uri.to_string(), "memory://user/db/%E8%BF%81%E7%A7%BB%20plan.md");
//! assert_eq!(MemoryUri::parse(&uri.to_string())?, uri);
//! assert_eq!(
//!     uri.path_under(Path::new("/home/ana/memories")),
//!     Some(Path::new("/home/ana/memories/db/迁移 plan.md").to_path_buf())
//! );
//! # Ok::<(), agent_hooks::memory_uri::UriError>(())
//! ```

use std::fmt;
use std::path::{Path, PathBuf};

use memory_scan::Scope;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, percent_encode};

/// What every memory URI starts with.
pub const URI_PREFIX: &str = "memory://";

/// What a URI keeps as it is: the unreserved characters of RFC 3986 and the path's `/`.
const KEPT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// One memory's name: its root's scope and its path's bytes below the root, `/`-separated,
/// every segment a plain name (no `.`, `..`, empty segment, NUL or backslash).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MemoryUri {
    scope: Scope,
    path: Vec<u8>,
}

/// Why a text is not a memory URI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum UriError {
    /// It does not start with `memory://`.
    #[error("not a memory:// URI")]
    NotMemory,
    /// No `/` after the scope.
    #[error("expected memory://project/<path> or memory://user/<path>")]
    NoPath,
    /// The scope is neither `project` nor `user`.
    #[error("the scope must be project or user")]
    Scope,
    /// A `%` not followed by two hex digits.
    #[error("malformed percent-encoding")]
    Encoding,
    /// Nothing after the scope.
    #[error("no path after the scope")]
    Empty,
    /// A NUL or a backslash in the path.
    #[error("NUL and backslash are refused")]
    Forbidden,
    /// The path starts with `/`.
    #[error("absolute paths are refused: resources are only the memories inside the roots")]
    Absolute,
    /// A `.`, `..` or empty segment.
    #[error(
        "`.`, `..` and empty segments are refused: resources are only the memories inside the roots"
    )]
    Traversal,
}

impl MemoryUri {
    /// The URI of the document at `relative` below the root of `scope` (`/` or the platform's
    /// separator between names).
    pub fn new(scope: Scope, relative: &Path) -> Self {
        let bytes = relative.as_os_str().as_encoded_bytes();
        let path = if std::path::MAIN_SEPARATOR == '/' {
            bytes.to_vec()
        } else {
            bytes
                .iter()
                .map(|&b| if b == b'\\' { b'/' } else { b })
                .collect()
        };
        Self { scope, path }
    }

    /// The URI `text` is, checked.
    pub fn parse(text: &str) -> Result<Self, UriError> {
        let rest = text.strip_prefix(URI_PREFIX).ok_or(UriError::NotMemory)?;
        let (scope, path) = rest.split_once('/').ok_or(UriError::NoPath)?;
        let scope = match scope {
            "project" => Scope::Project,
            "user" => Scope::User,
            _ => return Err(UriError::Scope),
        };
        let path = percent_decode(path).ok_or(UriError::Encoding)?;
        if path.is_empty() {
            return Err(UriError::Empty);
        }
        if path.contains(&0) || path.contains(&b'\\') {
            return Err(UriError::Forbidden);
        }
        if path.starts_with(b"/") {
            return Err(UriError::Absolute);
        }
        if path
            .split(|&b| b == b'/')
            .any(|segment| segment.is_empty() || segment == b"." || segment == b"..")
        {
            return Err(UriError::Traversal);
        }
        Ok(Self { scope, path })
    }

    /// Every memory URI in `text`, in order, each once; text that only looks like one is
    /// skipped. A URI ends at the first character a URI of this form never holds (whitespace,
    /// quotes, brackets, a closing parenthesis), and a trailing `.` or `,` is punctuation.
    pub fn find_all(text: &str) -> Vec<Self> {
        let mut found: Vec<Self> = Vec::new();
        for (start, _) in text.match_indices(URI_PREFIX) {
            let candidate = &text[start..];
            let end = candidate
                .find(|c: char| !(c.is_ascii_alphanumeric() || "-._~/%:".contains(c)))
                .unwrap_or(candidate.len());
            let candidate = candidate[..end].trim_end_matches(['.', ',', ':']);
            if let Ok(uri) = Self::parse(candidate)
                && !found.contains(&uri)
            {
                found.push(uri);
            }
        }
        found
    }

    /// The scope of the root the document is under.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// The path's bytes below the root, `/`-separated: what
    /// [`memory_scan::Document::relative_path`] holds, as encoded bytes.
    pub fn relative_bytes(&self) -> &[u8] {
        &self.path
    }

    /// The document's path under `root`, joined name by name with the platform's separator;
    /// `None` when a name is not Unicode on a platform whose names must be.
    pub fn path_under(&self, root: &Path) -> Option<PathBuf> {
        let mut path = root.to_path_buf();
        for segment in self.path.split(|&b| b == b'/') {
            path.push(name(segment)?);
        }
        Some(path)
    }
}

// The same signature on every platform: elsewhere a name must be Unicode.
#[cfg(unix)]
#[allow(clippy::unnecessary_wraps)]
fn name(bytes: &[u8]) -> Option<&std::ffi::OsStr> {
    use std::os::unix::ffi::OsStrExt as _;
    Some(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn name(bytes: &[u8]) -> Option<&std::ffi::OsStr> {
    std::str::from_utf8(bytes).ok().map(std::ffi::OsStr::new)
}

impl fmt::Display for MemoryUri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{URI_PREFIX}{}/{}",
            self.scope.as_str(),
            percent_encode(&self.path, KEPT)
        )
    }
}

/// Written as its text.
impl serde::Serialize for MemoryUri {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Read from its text, checked as [`MemoryUri::parse`] checks it.
impl<'de> serde::Deserialize<'de> for MemoryUri {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// The bytes `text` encodes; `None` when a `%` is not followed by two hex digits (which the
/// decoder would pass through as it is: no URI memrecall hands out holds one).
fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let well_formed = text.split('%').skip(1).all(|after_percent| {
        after_percent
            .as_bytes()
            .get(..2)
            .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit))
    });
    well_formed.then(|| percent_decode_str(text).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> (Scope, Vec<u8>) {
        let uri = MemoryUri::parse(text).unwrap();
        (uri.scope(), uri.relative_bytes().to_vec())
    }

    #[test]
    fn a_uri_names_its_scope_and_decoded_path() {
        assert_eq!(
            parsed("memory://user/db/%E8%BF%81%E7%A7%BB.md"),
            (Scope::User, "db/迁移.md".as_bytes().to_vec())
        );
    }

    #[test]
    fn traversal_absolute_and_encoded_traversal_uris_are_refused() {
        for uri in [
            "memory://project/../user/x.md",
            "memory://project/a/../../x.md",
            "memory://project//etc/passwd",
            "memory://project/%2e%2e/x.md",
            "memory://project/%2Fetc%2Fpasswd",
            "memory://project/a%00.md",
            "memory://project/a%5Cb.md",
            "memory://other/x.md",
            "memory://project",
            "memory://project/",
            "file:///etc/passwd",
            "memory://project/%zz",
            "memory://project/a%2",
            "memory://project/a%",
            "memory://project/%+1.md",
        ] {
            assert!(MemoryUri::parse(uri).is_err(), "{uri}");
        }
    }

    #[test]
    fn an_encoded_path_decodes_to_the_same_bytes() {
        let path = Path::new("a b/数据库 迁移%.md");
        let uri = MemoryUri::new(Scope::Project, path);
        assert!(!uri.to_string().contains(' '), "{uri}");
        assert_eq!(
            MemoryUri::parse(&uri.to_string()).unwrap().relative_bytes(),
            path.as_os_str().as_encoded_bytes()
        );
    }

    #[test]
    fn unreserved_characters_and_slashes_stay_and_the_rest_is_encoded_in_upper_case() {
        assert_eq!(
            MemoryUri::new(Scope::Project, Path::new("a-b.c_d~e/f g+h%é.md")).to_string(),
            "memory://project/a-b.c_d~e/f%20g%2Bh%25%C3%A9.md"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_path_that_is_not_utf8_round_trips_through_its_uri() {
        use std::os::unix::ffi::OsStrExt as _;
        let path = Path::new(std::ffi::OsStr::from_bytes(b"db/\xff\xfe.md"));
        let uri = MemoryUri::new(Scope::Project, path);
        assert_eq!(uri.to_string(), "memory://project/db/%FF%FE.md");
        assert_eq!(
            parsed(&uri.to_string()),
            (Scope::Project, b"db/\xff\xfe.md".to_vec())
        );
        assert_eq!(
            uri.path_under(Path::new("/m")),
            Some(Path::new("/m").join(path))
        );
    }

    #[test]
    fn a_path_under_a_root_is_joined_name_by_name() {
        let uri = MemoryUri::parse("memory://project/ops/deploy%20runbook.md").unwrap();
        assert_eq!(
            uri.path_under(Path::new("root")),
            Some(Path::new("root").join("ops").join("deploy runbook.md"))
        );
    }

    #[test]
    fn every_uri_in_a_tool_result_is_found_once_in_order() {
        let text = "2 memories recalled for \"deploy\" (model):\n\
                    1. Deploy runbook (project, memory://project/ops/deploy.md, 2 days old)\n\
                    2. Terse \"memory://user/terse.md\".\n\
                    see memory://project/ops/deploy.md, and memory://other/x.md or memory://project/../x";
        let found: Vec<String> = MemoryUri::find_all(text)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            found,
            ["memory://project/ops/deploy.md", "memory://user/terse.md"]
        );
    }

    #[test]
    fn a_uri_is_written_as_its_text_and_a_bad_one_is_not_read() {
        let uri = MemoryUri::parse("memory://user/a%20b.md").unwrap();
        let json = serde_json::to_string(&uri).unwrap();
        assert_eq!(json, r#""memory://user/a%20b.md""#);
        assert_eq!(serde_json::from_str::<MemoryUri>(&json).unwrap(), uri);
        assert!(serde_json::from_str::<MemoryUri>(r#""memory://user/../x""#).is_err());
    }

    #[test]
    fn text_without_a_memory_uri_finds_none() {
        assert!(MemoryUri::find_all("memory:// is the scheme; see memory://").is_empty());
    }
}
