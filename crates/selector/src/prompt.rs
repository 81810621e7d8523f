//! The words sent to a model: the system prompt, the user message and the answer schema.

use serde_json::{Value, json};

use crate::SelectionRequest;
use crate::manifest::{ANSWER_KEY, Manifest};

const SYSTEM_PROMPT: &str = "\
You select memories for an AI coding agent. Memories are short Markdown notes the agent saved \
earlier: user preferences, feedback on how to work, project facts and references.

You get the user's query, a manifest of available memories (one line each: type, absolute path, \
last modified time, description) and, when there are any, the tools the agent used recently.

Select at most the number of memories the request allows (never more than 5) that will clearly \
help the agent answer this query. Be selective: a memory that is only loosely related does not \
help. When none clearly helps, select none and return an empty list.

When recently used tools are listed, do not select usage references, API documentation or \
parameter schemas for those tools: the agent is already using them. Do keep memories with durable \
context about them, such as where credentials live, owners, escalation paths, gotchas, known \
issues and workarounds.

Answer with JSON only, exactly in this shape, listing paths copied verbatim from the manifest, \
most helpful first:
{\"selected_memories\": [\"/absolute/path.md\"]}";

/// The instruction given to the model, shared by every implementation that talks to one.
pub fn system_prompt() -> &'static str {
    SYSTEM_PROMPT
}

/// The user message: the query, the limit, the manifest and the recently used tools (that
/// section is left out when there are none).
pub fn user_message(request: &SelectionRequest<'_>, manifest: &Manifest) -> String {
    let mut message = format!(
        "Query: {}\n\nSelect at most {} of these memories:\n{}",
        request.query,
        request.limit,
        manifest.text()
    );
    let tools: Vec<&str> = request
        .recent_tools
        .iter()
        .map(|tool| tool.trim())
        .filter(|tool| !tool.is_empty())
        .collect();
    if !tools.is_empty() {
        message.push_str("\nRecently used tools: ");
        message.push_str(&tools.join(", "));
        message.push('\n');
    }
    message
}

/// The JSON schema of a valid answer, as sent in an OpenAI-compatible `response_format`.
///
/// The limit and manifest membership are not expressed in the schema (servers differ in which
/// keywords they honour); [`validate_answer`](crate::validate_answer) enforces both.
pub fn answer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            ANSWER_KEY: {
                "type": "array",
                "items": { "type": "string" }
            }
        },
        "required": [ANSWER_KEY],
        "additionalProperties": false
    })
}
