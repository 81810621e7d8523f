//! `memrecall mcp` end to end: the real binary as a child process, spoken to over its stdio by
//! the official MCP client (and, for requests no client would send, by raw JSON-RPC lines).

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, JsonObject, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::{ConfigureCommandExt as _, TokioChildProcess};
use rmcp::{ServiceExt as _, model::ErrorCode};
use serde_json::{Value, json};

use crate::support::{Tree, binary};

type Client = RunningService<RoleClient, ()>;

const CHINESE_QUERY: &str = "数据库迁移脚本应该怎么写？";

/// Starts `memrecall mcp` over the tree's roots (plus `extra` arguments) and connects to it.
async fn connect(tree: &Tree, extra: &[&str]) -> Client {
    let home = tree.base().join("home");
    let mut args = vec!["mcp".to_owned()];
    args.extend(tree.root_args());
    args.extend(extra.iter().map(|&a| a.to_owned()));
    let transport =
        TokioChildProcess::builder(tokio::process::Command::new(binary()).configure(|cmd| {
            cmd.args(&args)
                .env("MEMRECALL_HOME", &home)
                .env("HOME", &home)
                .current_dir(tree.base());
        }))
        .stderr(Stdio::null())
        .spawn()
        .expect("memrecall mcp starts")
        .0;
    ().serve(transport).await.expect("the MCP session starts")
}

fn arguments(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, not {other}"),
    }
}

async fn call(client: &Client, tool: &'static str, args: Value) -> CallToolResult {
    client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(arguments(args)))
        .await
        .unwrap_or_else(|e| panic!("{tool} answered with a protocol error: {e}"))
}

/// The result's text, after asserting it is not an error.
fn text(result: &CallToolResult) -> String {
    assert_ne!(result.is_error, Some(true), "{result:?}");
    all_text(result)
}

fn all_text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A tree with a Chinese-titled project memory besides the standard ones.
fn tree_with_chinese_memory() -> Tree {
    let tree = Tree::standard();
    tree.project_topic(
        "db/migrations.md",
        "数据库迁移规范",
        "迁移脚本的写法和评审要求",
        "project",
        "每个迁移脚本都必须可回滚，并在预发环境先执行一次。",
    );
    tree
}

async fn read(client: &Client, uri: &str) -> Result<String, ServiceError> {
    let result = client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await?;
    Ok(result
        .contents
        .iter()
        .filter_map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect())
}

fn assert_protocol_error(outcome: Result<String, ServiceError>) {
    match outcome {
        Err(ServiceError::McpError(_)) => {}
        other => panic!("expected a protocol error, got {other:?}"),
    }
}

#[tokio::test]
async fn the_server_introduces_itself_as_memrecall() {
    let tree = Tree::standard();
    let client = connect(&tree, &[]).await;
    let info = client.peer_info().expect("the server sent its information");
    let name = info.server_info.as_ref().map(|i| i.name.as_str());
    assert_eq!(name, Some("memrecall"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_four_tools_are_listed_with_descriptions_and_argument_schemas() {
    let tree = Tree::standard();
    let client = connect(&tree, &[]).await;
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "explain_recall",
            "list_memories",
            "recall_memories",
            "save_memory"
        ]
    );
    let expected: [(&str, &[&str]); 4] = [
        ("recall_memories", &["query", "limit"]),
        ("list_memories", &["scope", "type"]),
        ("explain_recall", &["query"]),
        (
            "save_memory",
            &[
                "title",
                "description",
                "type",
                "body",
                "scope",
                "file",
                "replace",
            ],
        ),
    ];
    for (name, properties) in expected {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        assert!(
            tool.description.as_ref().is_some_and(|d| d.len() > 40),
            "{name}: {:?}",
            tool.description
        );
        let schema = Value::Object((*tool.input_schema).clone());
        for property in properties {
            assert!(
                schema["properties"].get(property).is_some(),
                "{name} has no {property} in {schema}"
            );
        }
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_recall_limit_is_advertised_as_an_integer_from_1_to_5_without_a_format() {
    let tree = Tree::standard();
    let client = connect(&tree, &[]).await;
    let tools = client.list_all_tools().await.unwrap();
    let recall = tools.iter().find(|t| t.name == "recall_memories").unwrap();
    let schema = Value::Object((*recall.input_schema).clone());
    let limit = &schema["properties"]["limit"];
    assert_eq!(limit["type"], "integer", "{limit}");
    assert_eq!(limit["minimum"], 1, "{limit}");
    assert_eq!(limit["maximum"], 5, "{limit}");
    for tool in &tools {
        let schema = Value::Object((*tool.input_schema).clone()).to_string();
        assert!(!schema.contains("\"format\""), "{}: {schema}", tool.name);
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn read_only_offers_no_save_tool() {
    let tree = Tree::standard();
    let client = connect(&tree, &["--read-only"]).await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.name != "save_memory"), "{tools:?}");
    assert_eq!(tools.len(), 3);
    client.cancel().await.unwrap();
}

/// The arguments the README's Claude Code registration line gives `memrecall`.
fn readme_claude_code_mcp_arguments() -> Vec<String> {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md"),
    )
    .unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("| Claude Code | `claude mcp add memrecall -- memrecall "))
        .expect("the README registers memrecall's MCP server with Claude Code");
    let command = line
        .split('`')
        .nth(1)
        .and_then(|c| c.split_once("-- memrecall "))
        .map(|(_, args)| args)
        .unwrap();
    command.split_whitespace().map(str::to_owned).collect()
}

#[tokio::test]
async fn the_readmes_claude_code_registration_never_writes_into_claude_codes_memory() {
    let args = readme_claude_code_mcp_arguments();
    assert!(args.contains(&"--read-only".to_owned()), "{args:?}");
    let tree = Tree::standard();
    let home = tree.base().join("home");
    let transport =
        TokioChildProcess::builder(tokio::process::Command::new(binary()).configure(|cmd| {
            cmd.args(&args)
                .env("MEMRECALL_HOME", &home)
                .env("HOME", &home)
                .current_dir(tree.base());
        }))
        .stderr(Stdio::null())
        .spawn()
        .expect("memrecall mcp starts")
        .0;
    let client = ().serve(transport).await.expect("the MCP session starts");
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.name != "save_memory"), "{tools:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn recall_returns_the_best_memory_first_with_its_text() {
    let tree = Tree::standard();
    let client = connect(&tree, &[]).await;
    let answer = text(
        &call(
            &client,
            "recall_memories",
            json!({"query": "release checklist"}),
        )
        .await,
    );
    let first = answer.lines().nth(1).unwrap_or_default();
    assert!(
        first.starts_with(
            "1. Deploy checklist (project, project scope, memory://project/deploy.md, saved today)"
        ),
        "{answer}"
    );
    assert!(
        answer.contains("Run the smoke tests, then tag the release."),
        "{answer}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn recall_honours_the_limit() {
    let tree = Tree::standard();
    let client = connect(&tree, &[]).await;
    let answer = text(
        &call(
            &client,
            "recall_memories",
            json!({"query": "release checklist", "limit": 1}),
        )
        .await,
    );
    assert!(answer.starts_with("1 memory recalled"), "{answer}");
    assert!(!answer.contains("Rollback procedure"), "{answer}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_chinese_query_recalls_the_chinese_titled_memory() {
    let tree = tree_with_chinese_memory();
    let client = connect(&tree, &[]).await;
    let answer = text(&call(&client, "recall_memories", json!({"query": CHINESE_QUERY})).await);
    let first = answer.lines().nth(1).unwrap_or_default();
    assert!(
        first.starts_with(
            "1. 数据库迁移规范 (project, project scope, memory://project/db/migrations.md"
        ),
        "{answer}"
    );
    assert!(answer.contains("每个迁移脚本都必须可回滚"), "{answer}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_query_nothing_matches_says_so_plainly() {
    let tree = Tree::standard();
    let client = connect(&tree, &[]).await;
    let answer = text(
        &call(
            &client,
            "recall_memories",
            json!({"query": "kubernetes ingress"}),
        )
        .await,
    );
    assert!(answer.starts_with("No memory matches"), "{answer}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn list_shows_the_newest_memory_first() {
    let tree = Tree::standard();
    tree.age_files();
    tree.project_topic("fresh.md", "Fresh note", "Written last", "project", "New.");
    let client = connect(&tree, &[]).await;
    let answer = text(&call(&client, "list_memories", json!({})).await);
    assert!(answer.starts_with("5 memories, newest first:"), "{answer}");
    assert!(
        answer
            .lines()
            .nth(1)
            .unwrap_or_default()
            .starts_with("- Fresh note "),
        "{answer}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn list_keeps_only_the_scope_and_type_asked_for() {
    let tree = Tree::standard();
    let client = connect(&tree, &[]).await;
    let user = text(&call(&client, "list_memories", json!({"scope": "user"})).await);
    assert!(user.starts_with("1 memory"), "{user}");
    assert!(
        user.contains("- Role (user, user scope, memory://user/role.md"),
        "{user}"
    );
    let reference = text(&call(&client, "list_memories", json!({"type": "reference"})).await);
    assert!(reference.starts_with("1 memory"), "{reference}");
    assert!(
        reference.contains("- Checkout dashboard (reference"),
        "{reference}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn explain_shows_each_fields_contribution() {
    let tree = Tree::standard();
    let client = connect(&tree, &[]).await;
    let answer = text(
        &call(
            &client,
            "explain_recall",
            json!({"query": "release checklist"}),
        )
        .await,
    );
    assert!(
        answer.contains("1. score 9 · Deploy checklist — deploy.md (project, project scope)"),
        "{answer}"
    );
    assert!(answer.contains("   title +4 (checklist)"), "{answer}");
    assert!(answer.contains("   description +3 (release)"), "{answer}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_saved_memory_is_recalled_in_the_same_session() {
    let tree = Tree::standard();
    let client = connect(&tree, &[]).await;
    let saved = text(
        &call(
            &client,
            "save_memory",
            json!({
                "title": "Feature flags",
                "description": "How feature flags are named and retired",
                "type": "project",
                "body": "Flags are named team.feature and removed two releases after launch.",
            }),
        )
        .await,
    );
    assert!(
        saved.contains("memory://project/feature-flags.md"),
        "{saved}"
    );
    let answer = text(
        &call(
            &client,
            "recall_memories",
            json!({"query": "how are feature flags named"}),
        )
        .await,
    );
    assert!(
        answer
            .lines()
            .nth(1)
            .unwrap_or_default()
            .starts_with("1. Feature flags "),
        "{answer}"
    );
    assert!(
        answer.contains("removed two releases after launch"),
        "{answer}"
    );
    client.cancel().await.unwrap();
}

#[cfg(unix)]
#[tokio::test]
async fn a_saved_memory_is_a_private_topic_file_in_the_chosen_root() {
    use std::os::unix::fs::PermissionsExt as _;
    let tree = Tree::standard();
    let client = connect(&tree, &[]).await;
    text(
        &call(
            &client,
            "save_memory",
            json!({
                "title": "Answer style",
                "description": "Keep answers short",
                "type": "feedback",
                "body": "No summaries at the end.",
                "scope": "user",
                "file": "style/answers.md",
            }),
        )
        .await,
    );
    let path = tree.user().join("style/answers.md");
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(
        written.starts_with(
            "---\nname: Answer style\ndescription: Keep answers short\ntype: feedback\nmodified: "
        ),
        "{written}"
    );
    assert!(
        written.ends_with("---\n\nNo summaries at the end.\n"),
        "{written}"
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn save_refuses_a_file_that_leaves_the_root_and_writes_nothing() {
    let tree = Tree::standard();
    let client = connect(&tree, &[]).await;
    for file in ["../escaped.md", "/tmp/escaped.md", "a/../../escaped.md"] {
        let result = call(
            &client,
            "save_memory",
            json!({
                "title": "Escape",
                "description": "",
                "type": "project",
                "body": "x",
                "file": file,
            }),
        )
        .await;
        assert_eq!(result.is_error, Some(true), "{file}: {result:?}");
        assert!(all_text(&result).contains("refused"), "{file}: {result:?}");
    }
    assert!(!tree.base().join("escaped.md").exists());
    assert!(!tree.project().join("a").exists());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn save_keeps_an_existing_file_unless_asked_to_replace_it() {
    let tree = Tree::standard();
    let client = connect(&tree, &[]).await;
    let save = |replace: bool| {
        json!({
            "title": "Deploy checklist",
            "description": "Rewritten",
            "type": "project",
            "body": "New steps.",
            "file": "deploy.md",
            "replace": replace,
        })
    };
    let refused = call(&client, "save_memory", save(false)).await;
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    assert!(all_text(&refused).contains("already exists"), "{refused:?}");
    let kept = std::fs::read_to_string(tree.project().join("deploy.md")).unwrap();
    assert!(kept.contains("Run the smoke tests"), "{kept}");

    text(&call(&client, "save_memory", save(true)).await);
    let replaced = std::fs::read_to_string(tree.project().join("deploy.md")).unwrap();
    assert!(replaced.contains("New steps."), "{replaced}");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn every_memory_is_listed_as_a_resource() {
    let tree = tree_with_chinese_memory();
    let client = connect(&tree, &[]).await;
    let mut uris: Vec<String> = client
        .list_all_resources()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.uri.clone())
        .collect();
    uris.sort();
    assert_eq!(
        uris,
        [
            "memory://project/db/migrations.md",
            "memory://project/deploy.md",
            "memory://project/grafana.md",
            "memory://project/ops/rollback.md",
            "memory://user/role.md",
        ]
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_memory_reads_as_its_topic_file() {
    let tree = Tree::standard();
    let client = connect(&tree, &[]).await;
    let text = read(&client, "memory://project/ops/rollback.md")
        .await
        .unwrap();
    assert!(
        text.starts_with("---\nname: Rollback procedure\n"),
        "{text}"
    );
    assert!(
        text.contains("Revert the tag and redeploy the previous release."),
        "{text}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_resource_uri_that_climbs_out_of_the_root_is_a_protocol_error() {
    let tree = Tree::standard();
    tree.write(
        "secret.md",
        "---\nname: Secret\ntype: user\n---\n\nhidden\n",
    );
    let client = connect(&tree, &[]).await;
    for uri in [
        "memory://project/../secret.md",
        "memory://project/%2E%2E/secret.md",
        "memory://user/../project/deploy.md",
    ] {
        assert_protocol_error(read(&client, uri).await);
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn an_absolute_resource_path_is_a_protocol_error() {
    let tree = Tree::standard();
    let client = connect(&tree, &[]).await;
    let uri = format!(
        "memory://project/{}",
        tree.project().join("deploy.md").display()
    );
    assert_protocol_error(read(&client, &uri).await);
    client.cancel().await.unwrap();
}

#[cfg(unix)]
#[tokio::test]
async fn a_symlink_out_of_the_root_is_no_resource() {
    let tree = Tree::standard();
    let outside = tree.write(
        "outside/secret.md",
        "---\nname: Secret\ntype: user\n---\n\nhidden\n",
    );
    std::os::unix::fs::symlink(&outside, tree.project().join("leak.md")).unwrap();
    let client = connect(&tree, &[]).await;
    assert_protocol_error(read(&client, "memory://project/leak.md").await);
    client.cancel().await.unwrap();
}

/// `memrecall mcp` spoken to line by line, for requests the client library never sends.
struct Raw {
    child: std::process::Child,
    /// `None` once closed.
    stdin: Option<std::process::ChildStdin>,
    stdout: BufReader<std::process::ChildStdout>,
    _tree: Tree,
}

impl Raw {
    /// Starts the server and completes the handshake.
    fn start() -> Self {
        let tree = Tree::standard();
        let home = tree.base().join("home");
        let mut child = Command::new(binary())
            .arg("mcp")
            .args(tree.root_args())
            .env("MEMRECALL_HOME", &home)
            .env("HOME", &home)
            .current_dir(tree.base())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut raw = Self {
            child,
            stdin,
            stdout,
            _tree: tree,
        };
        let answer = raw.ask(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }));
        assert!(answer.get("result").is_some(), "{answer}");
        raw.send_line(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        );
        raw
    }

    fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("the input is open");
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message the server sends that is not a notification.
    fn next_answer(&mut self) -> Value {
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line).unwrap();
            assert!(read > 0, "the server closed its output");
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("the server sent a line that is not JSON ({e}): {line}")
            });
            if message.get("method").is_none() {
                return message;
            }
        }
    }

    fn ask(&mut self, request: &Value) -> Value {
        self.send_line(&request.to_string());
        self.next_answer()
    }

    /// Asserts the server still answers a request.
    fn still_serves(&mut self) {
        let answer = self.ask(&json!({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}));
        assert_eq!(answer["id"], 99, "{answer}");
        assert!(answer["result"]["tools"].is_array(), "{answer}");
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_malformed_json_rpc_message_gets_an_invalid_request_error_and_the_server_goes_on() {
    let mut raw = Raw::start();
    let answer = raw.ask(&json!({"jsonrpc": "2.0", "id": 5, "method": 42}));
    assert_eq!(
        answer["error"]["code"],
        ErrorCode::INVALID_REQUEST.0,
        "{answer}"
    );
    raw.still_serves();
}

#[test]
fn a_line_that_is_not_json_gets_a_parse_error_with_a_null_id_and_the_server_goes_on() {
    let mut raw = Raw::start();
    raw.send_line("{this is not json");
    let answer = raw.next_answer();
    assert_eq!(answer["id"], Value::Null, "{answer}");
    assert_eq!(
        answer["error"]["code"],
        ErrorCode::PARSE_ERROR.0,
        "{answer}"
    );
    raw.still_serves();
}

#[test]
fn a_lone_surrogate_gets_an_invalid_params_error_with_the_requests_id_and_the_server_goes_on() {
    let mut raw = Raw::start();
    raw.send_line(
        r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"recall_memories","arguments":{"query":"\ud800"}}}"#,
    );
    let answer = raw.next_answer();
    assert_eq!(answer["id"], 12, "{answer}");
    assert_eq!(
        answer["error"]["code"],
        ErrorCode::INVALID_PARAMS.0,
        "{answer}"
    );
    raw.still_serves();
}

#[test]
fn an_unknown_tool_gets_a_protocol_error_and_the_server_goes_on() {
    let mut raw = Raw::start();
    let answer = raw.ask(&json!({
        "jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "delete_everything", "arguments": {}},
    }));
    assert_eq!(answer["id"], 6, "{answer}");
    assert_eq!(
        answer["error"]["code"],
        ErrorCode::INVALID_PARAMS.0,
        "{answer}"
    );
    raw.still_serves();
}

#[test]
fn a_wrong_typed_argument_gets_an_error_result_and_the_server_goes_on() {
    let mut raw = Raw::start();
    let answer = raw.ask(&json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "recall_memories", "arguments": {"query": 42}},
    }));
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let message = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("invalid type"), "{answer}");
    raw.still_serves();
}

#[test]
fn an_unknown_resource_scheme_gets_a_protocol_error_and_the_server_goes_on() {
    let mut raw = Raw::start();
    let answer = raw.ask(&json!({
        "jsonrpc": "2.0", "id": 8, "method": "resources/read",
        "params": {"uri": "file:///etc/passwd"},
    }));
    assert_eq!(answer["id"], 8, "{answer}");
    assert!(answer["error"]["code"].is_i64(), "{answer}");
    raw.still_serves();
}

#[test]
fn closing_its_input_ends_the_server_successfully() {
    let mut raw = Raw::start();
    raw.still_serves();
    raw.stdin = None;
    let status = raw.child.wait().unwrap();
    assert!(status.success(), "{status}");
}
