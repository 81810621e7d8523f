//! Every memory as a read-only resource, `memory://<scope>/<percent-encoded path>`, and the
//! server's description of itself.

use agent_hooks::memory_uri::MemoryUri;
use memory_scan::ScannedDocument;
use rmcp::model::{
    Implementation, ListResourcesResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool_handler};

use super::MemoryServer;

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
        let uri = MemoryUri::parse(&request.uri)
            .map_err(|why| ErrorData::invalid_params(format!("{}: {why}", request.uri), None))?;
        let documents = self.scan().await?;
        let doc = documents
            .iter()
            .find(|d| {
                d.scope() == uri.scope()
                    && d.relative_path().as_os_str().as_encoded_bytes() == uri.relative_bytes()
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
    MemoryUri::new(doc.scope(), doc.relative_path()).to_string()
}
