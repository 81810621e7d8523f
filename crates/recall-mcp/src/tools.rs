//! The tools: recall, list, explain and save, with the text each answers.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use memory_scan::{ScannedDocument, Topic};
use recall_facade::{Lines, printable};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{ErrorData, tool, tool_router};

use crate::params::{ExplainParams, ListParams, RecallParams, SaveParams, ScopeArg};
use crate::resources::resource_uri;
use crate::{
    MAX_EXPLAINED, MAX_LISTED, MAX_QUERY_BYTES, MAX_RECALLED, MemoryServer, SECONDS_PER_DAY, save,
};
use agent_hooks::memory_uri::MemoryUri;

/// A value's serialised word (`model`, `heuristic`), `-` when it has none.
fn enum_word<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| "-".to_owned())
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
#[tool_router(vis = "pub(super)")]
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
        let (shown, strategy) = {
            let mut recall = self.state.recall.lock().await;
            // Every call is a fresh question: what earlier calls returned may be returned again.
            recall.reset();
            recall.begin_turn(&params.query, &[]);
            recall
                .wait_settled(selector::SELECTOR_CEILING + Duration::from_secs(1))
                .await;
            let state = recall.latest_recall();
            recall.end_turn();
            let (mut documents, strategy) = match state {
                Some(state) => match (state.settled, state.fast) {
                    (Some(settled), _) => (settled.documents.clone(), enum_word(&settled.strategy)),
                    (None, Some(fast)) => (fast.documents.clone(), "lexical".to_owned()),
                    (None, None) => (Vec::new(), "none".to_owned()),
                },
                None => (Vec::new(), "none".to_owned()),
            };
            documents.truncate(limit);
            (recall.render(documents), strategy)
        };
        let query = one_line(&params.query);
        let documents = &shown.documents;
        if documents.is_empty() {
            return Ok(text_result(format!(
                "No memory matches \"{query}\". Nothing was recalled; answer without memory, or try other words."
            )));
        }
        let mut text = format!(
            "{} memor{} recalled for \"{query}\" ({strategy}):\n",
            documents.len(),
            if documents.len() == 1 { "y" } else { "ies" }
        );
        for (i, doc) in documents.iter().enumerate() {
            let _ = writeln!(text, "{}. {}", i + 1, describe(doc, shown.now));
        }
        text.push('\n');
        text.push_str(&shown.prompt);
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
        Ok(text_result((self.state.explain)(
            &params.query,
            &documents,
            MAX_EXPLAINED,
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
                "Saved \"{}\" as {}.",
                one_line(params.title.trim()),
                MemoryUri::new(scope, &relative)
            ))),
            Err(e) => Ok(refusal(e.to_string())),
        }
    }
}
