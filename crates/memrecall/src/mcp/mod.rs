//! `memrecall mcp`: memory recall as a Model Context Protocol server on stdin and stdout.
//!
//! Tools: `recall_memories`, `list_memories`, `explain_recall` and (unless `--read-only`)
//! `save_memory`. Every memory is also a read-only resource, `memory://project/<path>` or
//! `memory://user/<path>`, where `<path>` is its path below the root, percent-encoded. A
//! resource is looked up among the documents a scan of the roots found, never opened by the
//! path in its URI, so nothing outside the roots can be reached through one.
//!
//! A request the server cannot parse or route gets a protocol error; a tool argument the model
//! can fix (a file that exists, a name that leaves the root) gets a tool result marked as an
//! error, whose text says what to change. The server ends when the client closes its input.

mod save;

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use clap::Args;
use memory_scan::{DocumentCache, MemoryRoots, MemoryType, ScannedDocument, Scope, Topic};
use recall_facade::{Lines, MemoryRecall, RecallConfig, SelectorChoice, printable};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt as _, tool, tool_handler, tool_router,
};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::agent::{Agent, Environment, Layout};
use crate::commands::Failure;
use crate::commands::roots::{RootArgs, resolve_roots};
use crate::output::RankRow;

/// Most memories `list_memories` shows.
const MAX_LISTED: usize = 50;
/// Most ranked memories `explain_recall` shows.
const MAX_EXPLAINED: usize = 10;
/// Most memories one recall returns (the selector's limit).
const MAX_RECALLED: usize = 5;
/// The longest query accepted, in bytes.
const MAX_QUERY_BYTES: usize = 16 * 1024;
/// How long the server waits, once the client is gone, to write the catalogs.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
const SECONDS_PER_DAY: u64 = 86_400;
const URI_PREFIX: &str = "memory://";

/// `memrecall mcp`'s command line.
#[derive(Debug, Args)]
pub struct McpArgs {
    /// The agent running the server: its memory layout gives the default roots.
    #[arg(long, value_enum)]
    agent: Option<Agent>,
    /// Whose memory layout gives the default roots [default: the agent's, else memrecall's].
    #[arg(long, value_enum)]
    layout: Option<Layout>,
    /// Project memory root [default: the layout's for the current directory].
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// User memory root [default: the layout's].
    #[arg(long, value_name = "DIR")]
    user: Option<PathBuf>,
    /// Offer no save_memory tool: the server only reads memory.
    #[arg(long)]
    read_only: bool,
}

/// Runs the server until the client closes stdin.
pub fn run(args: &McpArgs) -> Result<(), Failure> {
    let layout = args
        .layout
        .or(args.agent.map(Agent::default_layout))
        .unwrap_or(Layout::Memrecall);
    let roots = resolve_roots(&RootArgs {
        project: args.project.clone(),
        user: args.user.clone(),
        layout,
    })?;
    // Tools wait for the settled recall, so the delivery design does not apply here.
    let (selector, _) = crate::hook::settings_from_config(&Environment::from_process())
        .map_err(Failure::selector)?;
    let runtime = crate::commands::runtime()?;
    let served = runtime.block_on(async {
        let server = MemoryServer::new(roots, selector, args.read_only)?;
        let service = server
            .clone()
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| anyhow::anyhow!("the MCP session did not start: {e}"))?;
        let ended = service.waiting().await;
        server.close().await;
        ended
            .map(|_| ())
            .map_err(|e| Failure::from(anyhow::anyhow!("the MCP session failed: {e}")))
    });
    // Standard input is read on a blocking thread that may still wait for a byte; it must not
    // keep the process alive once the session has ended.
    runtime.shutdown_timeout(Duration::from_millis(100));
    served
}

/// Which memory root.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum ScopeArg {
    /// This project's memory.
    Project,
    /// The user's memory, shared by every project.
    User,
}

impl ScopeArg {
    fn scope(self) -> Scope {
        match self {
            ScopeArg::Project => Scope::Project,
            ScopeArg::User => Scope::User,
        }
    }
}

/// What kind of memory.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum TypeArg {
    /// Who the user is and how they like to work.
    User,
    /// Guidance the user gave about how to work (do this, never do that).
    Feedback,
    /// Facts about the project: decisions, incidents, deadlines, releases.
    Project,
    /// Pointers to outside material: dashboards, tickets, documents.
    Reference,
}

impl TypeArg {
    fn memory_type(self) -> MemoryType {
        match self {
            TypeArg::User => MemoryType::User,
            TypeArg::Feedback => MemoryType::Feedback,
            TypeArg::Project => MemoryType::Project,
            TypeArg::Reference => MemoryType::Reference,
        }
    }
}

/// `recall_memories` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RecallParams {
    /// What to look up, in the user's own words; any language.
    query: String,
    /// Most memories to return, 1 to 5 (default 5).
    #[serde(default)]
    limit: Option<usize>,
}

/// `list_memories` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListParams {
    /// Only this root's memories (default: both).
    #[serde(default)]
    scope: Option<ScopeArg>,
    /// Only memories of this type (default: every type).
    #[serde(default, rename = "type")]
    memory_type: Option<TypeArg>,
}

/// `explain_recall` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ExplainParams {
    /// The query to explain the ranking for.
    query: String,
}

/// `save_memory` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SaveParams {
    /// A short title, one line; recall weighs its words most.
    title: String,
    /// One line saying what the memory is about and when it matters.
    description: String,
    /// The kind of memory.
    #[serde(rename = "type")]
    memory_type: TypeArg,
    /// The memory itself, in Markdown (at most 64 KiB).
    body: String,
    /// Where to save it (default: project).
    #[serde(default)]
    scope: Option<ScopeArg>,
    /// The file's path below the root, ending in `.md` (default: a name made from the title).
    #[serde(default)]
    file: Option<String>,
    /// Overwrite the file when it exists (default: false, and an existing file is an error).
    #[serde(default)]
    replace: bool,
}

/// The server: the roots, one recall session and one scan cache shared by every request.
#[derive(Debug, Clone)]
pub struct MemoryServer {
    state: Arc<State>,
    tool_router: ToolRouter<Self>,
}

#[derive(Debug)]
struct State {
    roots: MemoryRoots,
    /// Recalls run one at a time: the session's turns are sequential.
    recall: tokio::sync::Mutex<MemoryRecall>,
    /// For listing, explaining and resources.
    cache: DocumentCache,
}

impl MemoryServer {
    /// Builds the server; must be called inside the runtime.
    fn new(roots: MemoryRoots, selector: SelectorChoice, read_only: bool) -> Result<Self, Failure> {
        let mut config = RecallConfig::with_roots(roots.project.clone(), roots.user.clone());
        config.selector = selector;
        let recall = MemoryRecall::new(config).map_err(|e| Failure::selector(e.to_string()))?;
        let mut tool_router = Self::tool_router();
        if read_only {
            tool_router.remove_route("save_memory");
        }
        Ok(Self {
            state: Arc::new(State {
                roots,
                recall: tokio::sync::Mutex::new(recall),
                cache: DocumentCache::new(),
            }),
            tool_router,
        })
    }

    /// Writes the catalogs the recalls brought up to date, within a grace period.
    async fn close(&self) {
        let recall = self.state.recall.lock().await;
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, recall.write_catalogs()).await;
    }

    /// Every document of both roots, project first, each scope by relative path.
    async fn scan(&self) -> Result<Vec<Arc<ScannedDocument>>, ErrorData> {
        let state = Arc::clone(&self.state);
        tokio::task::spawn_blocking(move || state.cache.scan_recall(&state.roots))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the scan stopped: {e}"), None))?
            .map(|scan| scan.documents)
            .map_err(|e| ErrorData::internal_error(format!("cannot scan memory: {e}"), None))
    }

    fn root(&self, scope: Scope) -> Option<&PathBuf> {
        match scope {
            Scope::Project => self.state.roots.project.as_ref(),
            Scope::User => self.state.roots.user.as_ref(),
        }
    }
}

fn text_result(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

fn refusal(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

fn one_line(text: &str) -> Cow<'_, str> {
    printable(text, Lines::Escaped)
}

fn age(saved: SystemTime, now: SystemTime) -> String {
    let days = now.duration_since(saved).unwrap_or_default().as_secs() / SECONDS_PER_DAY;
    match days {
        0 => "today".to_owned(),
        1 => "yesterday".to_owned(),
        n => format!("{n} days ago"),
    }
}

/// `Title (type, scope scope, memory://scope/path, saved today)`.
fn describe(doc: &ScannedDocument, now: SystemTime) -> String {
    format!(
        "{} ({}, {} scope, {}, saved {})",
        one_line(doc.title()),
        doc.memory_type().as_str(),
        doc.scope().as_str(),
        resource_uri(doc),
        age(doc.mtime(), now)
    )
}

#[tool_router]
impl MemoryServer {
    #[tool(
        description = "Recall the memories relevant to a question or task: notes saved in earlier sessions about this project and about the user (decisions, conventions, incidents, preferences, pointers). Call it before answering whenever past context could matter. Works in any language. Returns each memory's title, type, scope, resource URI, age and text, best first, or says plainly that nothing matched.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn recall_memories(
        &self,
        Parameters(params): Parameters<RecallParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let limit = params.limit.unwrap_or(MAX_RECALLED);
        if !(1..=MAX_RECALLED).contains(&limit) {
            return Ok(refusal(format!(
                "limit must be 1 to {MAX_RECALLED}, not {limit}"
            )));
        }
        if params.query.len() > MAX_QUERY_BYTES {
            return Ok(refusal(format!(
                "the query is {} bytes; at most {MAX_QUERY_BYTES} are accepted",
                params.query.len()
            )));
        }
        let (documents, strategy) = {
            let mut recall = self.state.recall.lock().await;
            // Every call is a fresh question: what earlier calls returned may be returned again.
            recall.reset();
            recall.begin_turn(&params.query, &[]);
            recall
                .session()
                .wait_settled(selector::SELECTOR_CEILING + Duration::from_secs(1))
                .await;
            let state = recall.session().latest_recall();
            recall.end_turn();
            match state {
                Some(state) => match (state.settled, state.fast) {
                    (Some(settled), _) => (
                        settled.documents.clone(),
                        crate::output::enum_word(Some(&settled.strategy)),
                    ),
                    (None, Some(fast)) => (fast.documents.clone(), "lexical".to_owned()),
                    (None, None) => (Vec::new(), "none".to_owned()),
                },
                None => (Vec::new(), "none".to_owned()),
            }
        };
        let query = one_line(&params.query);
        if documents.is_empty() {
            return Ok(text_result(format!(
                "No memory matches \"{query}\". Nothing was recalled; answer without memory, or try other words."
            )));
        }
        let documents = &documents[..limit.min(documents.len())];
        let now = SystemTime::now();
        let mut text = format!(
            "{} memor{} recalled for \"{query}\" ({strategy}):\n",
            documents.len(),
            if documents.len() == 1 { "y" } else { "ies" }
        );
        for (i, doc) in documents.iter().enumerate() {
            let _ = writeln!(text, "{}. {}", i + 1, describe(doc, now));
        }
        text.push('\n');
        text.push_str(&recall_facade::render_prompt(
            documents.iter().map(|d| d.document()),
            now,
        ));
        Ok(text_result(text))
    }

    #[tool(
        description = "List the saved memories, newest first (at most 50): title, type, scope, resource URI, age and description. Use it to see what is known before saving something new, or to find a memory to read in full as a resource. Optionally only one scope (project or user) or one type.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_memories(
        &self,
        Parameters(params): Parameters<ListParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut documents: Vec<_> = self
            .scan()
            .await?
            .into_iter()
            .filter(|d| params.scope.is_none_or(|s| d.scope() == s.scope()))
            .filter(|d| {
                params
                    .memory_type
                    .is_none_or(|t| d.memory_type() == t.memory_type())
            })
            .collect();
        if documents.is_empty() {
            return Ok(text_result("No memory is saved here yet.".to_owned()));
        }
        documents.sort_by_key(|d| std::cmp::Reverse(d.mtime()));
        let total = documents.len();
        let now = SystemTime::now();
        let mut text = if total > MAX_LISTED {
            format!("{total} memories; the {MAX_LISTED} newest:\n")
        } else {
            format!(
                "{total} memor{}, newest first:\n",
                if total == 1 { "y" } else { "ies" }
            )
        };
        for doc in documents.iter().take(MAX_LISTED) {
            let _ = writeln!(text, "- {}", describe(doc, now));
            if !doc.description().is_empty() {
                let _ = writeln!(text, "  {}", one_line(doc.description()));
            }
        }
        Ok(text_result(text))
    }

    #[tool(
        description = "Explain how memories rank for a query: each matching memory's score and the words that matched in its title, description and body, plus the type boost. For a person debugging why a memory was or was not recalled; not needed for ordinary recall.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn explain_recall(
        &self,
        Parameters(params): Parameters<ExplainParams>,
    ) -> Result<CallToolResult, ErrorData> {
        if params.query.len() > MAX_QUERY_BYTES {
            return Ok(refusal(format!(
                "the query is {} bytes; at most {MAX_QUERY_BYTES} are accepted",
                params.query.len()
            )));
        }
        let documents = self.scan().await?;
        let rows: Vec<RankRow> = RankRow::rank(&params.query, &documents, false)
            .into_iter()
            .take(MAX_EXPLAINED)
            .collect();
        Ok(text_result(RankRow::to_text(
            &params.query,
            &rows,
            documents.len(),
            false,
        )))
    }

    #[tool(
        description = "Save a memory for later sessions: one Markdown topic file in the project's memory (default) or the user's. Save what will still be true and useful later (a decision and its reason, a convention, a preference the user stated, where something lives), not what the code already says. The file name is made from the title unless `file` gives a path below the root ending in .md; an existing file is kept unless `replace` is true. The next recall finds the memory.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn save_memory(
        &self,
        Parameters(params): Parameters<SaveParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let scope = params.scope.unwrap_or(ScopeArg::Project).scope();
        let Some(root) = self.root(scope).cloned() else {
            return Ok(refusal(save::SaveError::NoRoot(scope.as_str()).to_string()));
        };
        if params.body.len() > save::MAX_BODY_BYTES {
            return Ok(refusal(
                save::SaveError::BodyTooLarge {
                    size: params.body.len(),
                }
                .to_string(),
            ));
        }
        let topic = match Topic::new(
            params.memory_type.memory_type(),
            &params.title,
            &params.description,
            &params.body,
        ) {
            Ok(topic) => topic.with_modified(Some(SystemTime::now())),
            Err(e) => return Ok(refusal(e.to_string())),
        };
        let relative = match save::relative_path(params.file.as_deref(), &params.title) {
            Ok(relative) => relative,
            Err(e) => return Ok(refusal(e.to_string())),
        };
        let replace = params.replace;
        let written = tokio::task::spawn_blocking(move || {
            save::write(&root, &relative, &topic, replace).map(|_| relative)
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the save stopped: {e}"), None))?;
        match written {
            Ok(relative) => Ok(text_result(format!(
                "Saved \"{}\" as {}{}/{}.",
                one_line(params.title.trim()),
                URI_PREFIX,
                scope.as_str(),
                encode_path(&relative)
            ))),
            Err(e) => Ok(refusal(e.to_string())),
        }
    }
}

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
fn resource_uri(doc: &ScannedDocument) -> String {
    format!(
        "{URI_PREFIX}{}/{}",
        doc.scope().as_str(),
        encode_path(doc.relative_path())
    )
}

/// The path's bytes with everything but unreserved characters and `/` percent-encoded.
fn encode_path(path: &std::path::Path) -> String {
    let mut out = String::new();
    for &byte in path.as_os_str().as_encoded_bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(byte));
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
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

fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
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
}
