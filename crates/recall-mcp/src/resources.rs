//! Every memory as a read-only resource, `memory://<scope>/<percent-encoded path>`, and the
//! server's description of itself.

use memory_scan::{ScannedDocument, Scope};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, percent_encode};
use rmcp::model::{
    Implementation, ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool_handler};

use super::{MemoryServer, URI_PREFIX};

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_instructions(
            "Memory saved across sessions for this project and this user. Call recall_memories with the user's request before answering when earlier decisions, conventions or preferences could matter; each memory is also a resource (memory://project/… or memory://user/…).",
        );
        info.server_info = Implementation::new("memrecall", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = self
            .scan()
            .await?
            .iter()
            .map(|doc| {
                let mut resource =
                    Resource::new(resource_uri(doc), doc.relative_path().display().to_string())
                        .with_title(doc.title())
                        .with_mime_type("text/markdown");
                if !doc.description().is_empty() {
                    resource = resource.with_description(doc.description());
                }
                resource
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let (scope, relative) = parse_uri(&request.uri)
            .map_err(|why| ErrorData::invalid_params(format!("{}: {why}", request.uri), None))?;
        let documents = self.scan().await?;
        let doc = documents
            .iter()
            .find(|d| {
                d.scope() == scope && d.relative_path().as_os_str().as_encoded_bytes() == relative
            })
            .ok_or_else(|| {
                ErrorData::resource_not_found(format!("no memory at {}", request.uri), None)
            })?;
        let topic = doc.topic().clone().with_modified(Some(doc.mtime()));
        let contents = ResourceContents::TextResourceContents {
            uri: request.uri.clone(),
            mime_type: Some("text/markdown".to_owned()),
            text: memory_scan::render_topic(&topic),
            meta: None,
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }
}

/// `memory://<scope>/<percent-encoded relative path>`.
pub(super) fn resource_uri(doc: &ScannedDocument) -> String {
    format!(
        "{URI_PREFIX}{}/{}",
        doc.scope().as_str(),
        encode_path(doc.relative_path())
    )
}

/// What a resource URI keeps as it is: the unreserved characters of RFC 3986 and the path's `/`.
const KEPT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// The path's bytes with everything but unreserved characters and `/` percent-encoded.
pub(super) fn encode_path(path: &std::path::Path) -> String {
    percent_encode(path.as_os_str().as_encoded_bytes(), KEPT).to_string()
}

/// The scope and the relative path's bytes a resource URI names; a path that is not plain
/// names below the root is refused, whatever its encoding.
fn parse_uri(uri: &str) -> Result<(Scope, Vec<u8>), &'static str> {
    let rest = uri.strip_prefix(URI_PREFIX).ok_or("not a memory:// URI")?;
    let (scope, path) = rest
        .split_once('/')
        .ok_or("expected memory://project/<path> or memory://user/<path>")?;
    let scope = match scope {
        "project" => Scope::Project,
        "user" => Scope::User,
        _ => return Err("the scope must be project or user"),
    };
    let path = percent_decode(path).ok_or("malformed percent-encoding")?;
    if path.is_empty() {
        return Err("no path after the scope");
    }
    if path.contains(&0) || path.contains(&b'\\') {
        return Err("NUL and backslash are refused");
    }
    if path.starts_with(b"/") {
        return Err("absolute paths are refused: resources are only the memories inside the roots");
    }
    for segment in path.split(|&b| b == b'/') {
        if segment.is_empty() || segment == b"." || segment == b".." {
            return Err(
                "`.`, `..` and empty segments are refused: resources are only the memories inside the roots",
            );
        }
    }
    Ok((scope, path))
}

/// The bytes `text` encodes; `None` when a `%` is not followed by two hex digits (which the
/// decoder would pass through as it is: no URI this server hands out holds one).
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

    #[test]
    fn a_uri_names_its_scope_and_decoded_path() {
        assert_eq!(
            parse_uri("memory://user/db/%E8%BF%81%E7%A7%BB.md").unwrap(),
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
            "memory://other/x.md",
            "file:///etc/passwd",
            "memory://project/%zz",
            "memory://project/a%2",
            "memory://project/a%",
            "memory://project/%+1.md",
        ] {
            assert!(parse_uri(uri).is_err(), "{uri}");
        }
    }

    #[test]
    fn an_encoded_path_decodes_to_the_same_bytes() {
        let path = std::path::Path::new("a b/数据库 迁移%.md");
        let encoded = encode_path(path);
        assert!(!encoded.contains(' '), "{encoded}");
        assert_eq!(
            percent_decode(&encoded).unwrap(),
            path.as_os_str().as_encoded_bytes()
        );
    }

    #[test]
    fn unreserved_characters_and_slashes_stay_and_the_rest_is_encoded_in_upper_case() {
        assert_eq!(
            encode_path(std::path::Path::new("a-b.c_d~e/f g+h%é.md")),
            "a-b.c_d~e/f%20g%2Bh%25%C3%A9.md"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_path_that_is_not_utf8_round_trips_through_its_uri() {
        use std::os::unix::ffi::OsStrExt as _;
        let path = std::path::Path::new(std::ffi::OsStr::from_bytes(b"db/\xff\xfe.md"));
        let encoded = encode_path(path);
        assert_eq!(encoded, "db/%FF%FE.md");
        assert_eq!(
            parse_uri(&format!("memory://project/{encoded}")).unwrap(),
            (Scope::Project, b"db/\xff\xfe.md".to_vec())
        );
    }
}
