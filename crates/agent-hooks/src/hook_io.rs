//! What each agent's hook writes to memrecall's stdin and reads from its stdout.
//!
//! Input: one JSON object; every field is read only if present and unknown fields are ignored.
//! `hook_event_name` picks the delivery point:
//!
//! | agent | initial point | tool-result point | turn end | session end |
//! |---|---|---|---|---|
//! | Claude Code | `UserPromptSubmit` (`prompt`) | `PostToolUse` | `Stop` | `SessionEnd` |
//! | Qwen Code | `UserPromptSubmit` (`submitted_prompt`, else `prompt`) | `PostToolUse`, and the continuation's `UserPromptSubmit` | `Stop` | `SessionEnd` |
//! | Gemini CLI | `BeforeAgent` (`prompt`) | `AfterTool` | `AfterAgent` | `SessionEnd` |
//! | Codex | `UserPromptSubmit` (`prompt`) | `PostToolUse` | `Stop` | `SessionEnd` |
//!
//! Qwen Code fires its prompt event before each tool-result continuation as well, with the same
//! `session_id` and `prompt_id` (0.24.4 sends `"prompt": ""`). The text the user typed is
//! `submitted_prompt` when the event carries it. A prompt event with an empty prompt is the
//! tool-result point; one whose query repeats the last one recalled in the same turn is taken as
//! a continuation too, and never starts a new recall (see
//! [`HookEvent::Prompt::repeat_is_continuation`]).
//!
//! Output: `{"hookSpecificOutput":{"hookEventName":"<event>","additionalContext":"<memory>"}}`
//! for every agent (Claude Code, Qwen Code and Codex also take plain text, Gemini CLI takes JSON
//! only). Nothing to add prints nothing, except for Gemini CLI, which gets `{}`.

use std::path::PathBuf;

use serde_json::Value;

use crate::Agent;
use crate::memory_uri::MemoryUri;

/// The name of the memory tool whose result holds the memories it recalled; agents prefix an
/// MCP tool's name with their own namespace (`mcp__memrecall__recall_memories`).
pub const RECALL_TOOL: &str = "recall_memories";

/// The most UTF-16 units of context one delivery carries. Claude Code moves context over 10,000
/// characters to a file and shows the model a 2,000-character preview; Qwen Code wraps it in its
/// own tag; this leaves room for both.
pub const MAX_CONTEXT_UTF16: usize = 9_000;

/// What one hook call asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookEvent {
    /// The initial point: recall for this query.
    Prompt {
        /// The text to recall for.
        query: String,
        /// Whether a query equal to the session's last one is a continuation (Qwen Code).
        repeat_is_continuation: bool,
    },
    /// The tool-result point.
    ToolResult {
        /// The memories the tool showed the model: the memory URIs in the result of memrecall's
        /// `recall_memories` tool (none for any other tool). They count as delivered.
        fetched: Vec<MemoryUri>,
    },
    /// The agent's turn is over (its stop event).
    TurnEnd,
    /// The agent's session is over.
    SessionEnd,
    /// An event memrecall does nothing for.
    Other,
}

/// One parsed hook input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookInput {
    /// The event's name as the agent sent it (echoed in the output).
    pub event_name: String,
    /// What to do.
    pub event: HookEvent,
    /// The agent's working directory, when given.
    pub cwd: Option<PathBuf>,
    /// The agent's session, when given.
    pub session_id: Option<String>,
}

/// Why stdin is not a hook input.
#[derive(Debug, thiserror::Error)]
pub enum HookInputError {
    /// Nothing was written to stdin.
    #[error("stdin is empty")]
    Empty,
    /// Stdin is not JSON.
    #[error("stdin is not JSON: {0}")]
    NotJson(#[from] serde_json::Error),
    /// Stdin is JSON but not an object.
    #[error("stdin is JSON but not an object")]
    NotAnObject,
}

/// The event names of an agent's two delivery points.
pub const fn event_names(agent: Agent) -> (&'static str, &'static str) {
    let events = &agent.conventions().events;
    (events.prompt, events.tool_result)
}

/// The event name of an agent's turn end.
pub const fn turn_end_event(agent: Agent) -> &'static str {
    agent.conventions().events.turn_end
}

/// The event name of a session's end, for the agents that have one (all four do).
pub const fn session_end_event(agent: Agent) -> Option<&'static str> {
    agent.conventions().events.session_end
}

/// Parses an agent's hook input.
pub fn parse(agent: Agent, stdin: &str) -> Result<HookInput, HookInputError> {
    if stdin.trim().is_empty() {
        return Err(HookInputError::Empty);
    }
    let value: Value = serde_json::from_str(stdin)?;
    let object = value.as_object().ok_or(HookInputError::NotAnObject)?;
    let text = |key: &str| object.get(key).and_then(Value::as_str);
    let event_name = text("hook_event_name").unwrap_or_default().to_owned();
    let (initial, tool_result) = event_names(agent);
    let conventions = agent.conventions();
    let event = if event_name == initial {
        let query = conventions
            .prompt_fields
            .iter()
            .find_map(|&field| text(field));
        match query {
            // Qwen Code's continuation after a tool result carries an empty prompt.
            Some(query) if conventions.prompt_event_continues && query.trim().is_empty() => {
                HookEvent::ToolResult {
                    fetched: Vec::new(),
                }
            }
            Some(query) => HookEvent::Prompt {
                query: query.to_owned(),
                repeat_is_continuation: conventions.prompt_event_continues,
            },
            None => HookEvent::Other,
        }
    } else if event_name == tool_result {
        let fetched = match (text("tool_name"), object.get("tool_response")) {
            (Some(tool), Some(response)) if tool.ends_with(RECALL_TOOL) => uris_in(response),
            _ => Vec::new(),
        };
        HookEvent::ToolResult { fetched }
    } else if event_name == turn_end_event(agent) {
        HookEvent::TurnEnd
    } else if session_end_event(agent) == Some(event_name.as_str()) {
        HookEvent::SessionEnd
    } else {
        HookEvent::Other
    };
    Ok(HookInput {
        event_name,
        event,
        cwd: text("cwd").filter(|c| !c.is_empty()).map(PathBuf::from),
        session_id: text("session_id").map(str::to_owned),
    })
}

/// Every memory URI in the strings of a tool's response, whatever its shape (a string, MCP
/// content blocks, an agent's own wrapper object), each once.
fn uris_in(response: &Value) -> Vec<MemoryUri> {
    let mut found = Vec::new();
    let mut pending = vec![response];
    while let Some(value) = pending.pop() {
        match value {
            Value::String(text) => {
                for uri in MemoryUri::find_all(text) {
                    if !found.contains(&uri) {
                        found.push(uri);
                    }
                }
            }
            Value::Array(items) => pending.extend(items.iter().rev()),
            Value::Object(fields) => pending.extend(fields.values().rev()),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
    found
}

/// What stdout carries when there is nothing to add.
pub const fn nothing(agent: Agent) -> &'static str {
    agent.conventions().nothing
}

/// The stdout that adds `context` to the model's input at `event_name`.
pub fn render(agent: Agent, event_name: &str, context: &str) -> String {
    if context.is_empty() {
        return nothing(agent).to_owned();
    }
    let value = serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": event_name,
            "additionalContext": context,
        }
    });
    format!("{value}\n")
}

/// Length of `text` in UTF-16 units, as the agents (JavaScript and TypeScript programs) count.
pub fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_code_prompt_event_asks_for_recall_of_its_prompt() {
        let input = parse(
            Agent::ClaudeCode,
            r#"{"session_id":"s","cwd":"/r","hook_event_name":"UserPromptSubmit","prompt":"hi there","extra":1}"#,
        )
        .unwrap();
        assert_eq!(
            input.event,
            HookEvent::Prompt {
                query: "hi there".into(),
                repeat_is_continuation: false
            }
        );
        assert_eq!(input.cwd, Some(PathBuf::from("/r")));
    }

    #[test]
    fn qwen_code_recalls_for_the_submitted_prompt_when_present() {
        let input = parse(
            Agent::QwenCode,
            r#"{"hook_event_name":"UserPromptSubmit","prompt":"expanded @file text","submitted_prompt":"typed"}"#,
        )
        .unwrap();
        assert_eq!(
            input.event,
            HookEvent::Prompt {
                query: "typed".into(),
                repeat_is_continuation: true
            }
        );
    }

    fn no_fetch() -> HookEvent {
        HookEvent::ToolResult {
            fetched: Vec::new(),
        }
    }

    fn fetched(event: &HookEvent) -> Vec<String> {
        match event {
            HookEvent::ToolResult { fetched } => fetched.iter().map(ToString::to_string).collect(),
            other => panic!("not the tool-result point: {other:?}"),
        }
    }

    #[test]
    fn the_memories_a_claude_code_recall_tool_returned_are_fetched() {
        let input = parse(
            Agent::ClaudeCode,
            r#"{"hook_event_name":"PostToolUse","tool_name":"mcp__plugin_memrecall_memrecall__recall_memories",
                "tool_input":{"query":"deploy"},
                "tool_response":[{"type":"text","text":"1 memory recalled for \"deploy\" (lexical):\n1. Deploy runbook (project, project scope, memory://project/ops/deploy%20runbook.md, saved today)\n"}]}"#,
        )
        .unwrap();
        assert_eq!(
            fetched(&input.event),
            ["memory://project/ops/deploy%20runbook.md"]
        );
    }

    #[test]
    fn a_gemini_cli_recall_tool_result_wrapped_in_an_object_is_read_too() {
        let input = parse(
            Agent::GeminiCli,
            r#"{"hook_event_name":"AfterTool","tool_name":"recall_memories",
                "tool_response":{"llmContent":[{"text":"2. Terse (user, user scope, memory://user/terse.md, saved today)"}],"returnDisplay":"memory://user/terse.md"}}"#,
        )
        .unwrap();
        assert_eq!(fetched(&input.event), ["memory://user/terse.md"]);
    }

    #[test]
    fn memory_uris_in_another_tools_result_are_not_fetched() {
        let input = parse(
            Agent::Codex,
            r#"{"hook_event_name":"PostToolUse","tool_name":"mcp__memrecall__list_memories",
                "tool_response":"1. Deploy runbook (project, memory://project/deploy.md)"}"#,
        )
        .unwrap();
        assert_eq!(input.event, no_fetch());
    }

    #[test]
    fn gemini_cli_before_agent_is_the_prompt_and_after_tool_the_tool_result() {
        let prompt = parse(
            Agent::GeminiCli,
            r#"{"hook_event_name":"BeforeAgent","prompt":"q"}"#,
        );
        assert!(matches!(prompt.unwrap().event, HookEvent::Prompt { .. }));
        let tool = parse(Agent::GeminiCli, r#"{"hook_event_name":"AfterTool"}"#);
        assert_eq!(tool.unwrap().event, no_fetch());
    }

    #[test]
    fn an_unknown_event_or_a_prompt_event_without_prompt_does_nothing() {
        let unknown = parse(
            Agent::Codex,
            r#"{"hook_event_name":"SessionStart","prompt":"q"}"#,
        );
        assert_eq!(unknown.unwrap().event, HookEvent::Other);
        let bare = parse(Agent::Codex, r#"{"hook_event_name":"UserPromptSubmit"}"#);
        assert_eq!(bare.unwrap().event, HookEvent::Other);
    }

    #[test]
    fn each_agents_stop_event_ends_the_turn() {
        for (agent, name) in [
            (Agent::ClaudeCode, "Stop"),
            (Agent::QwenCode, "Stop"),
            (Agent::GeminiCli, "AfterAgent"),
            (Agent::Codex, "Stop"),
        ] {
            let input = parse(agent, &format!(r#"{{"hook_event_name":"{name}"}}"#)).unwrap();
            assert_eq!(input.event, HookEvent::TurnEnd, "{agent:?}");
        }
    }

    #[test]
    fn session_end_ends_the_session_for_every_agent() {
        for agent in Agent::ALL {
            let input = parse(agent, r#"{"hook_event_name":"SessionEnd"}"#).unwrap();
            assert_eq!(input.event, HookEvent::SessionEnd, "{agent:?}");
        }
    }

    #[test]
    fn a_qwen_code_prompt_event_with_an_empty_prompt_is_the_tool_result_point() {
        let input = parse(
            Agent::QwenCode,
            r#"{"session_id":"q","prompt_id":"q########1","hook_event_name":"UserPromptSubmit","prompt":""}"#,
        )
        .unwrap();
        assert_eq!(input.event, no_fetch());
        assert_eq!(input.event_name, "UserPromptSubmit");
    }

    #[test]
    fn qwen_code_post_tool_use_is_the_tool_result_point() {
        let input = parse(Agent::QwenCode, r#"{"hook_event_name":"PostToolUse"}"#).unwrap();
        assert_eq!(input.event, no_fetch());
    }

    #[test]
    fn empty_and_malformed_stdin_are_errors() {
        assert!(matches!(
            parse(Agent::Codex, " \n"),
            Err(HookInputError::Empty)
        ));
        assert!(matches!(
            parse(Agent::Codex, "{"),
            Err(HookInputError::NotJson(_))
        ));
        assert!(matches!(
            parse(Agent::Codex, "[1]"),
            Err(HookInputError::NotAnObject)
        ));
    }

    #[test]
    fn output_carries_the_context_under_hook_specific_output() {
        let out = render(Agent::ClaudeCode, "UserPromptSubmit", "memo \"x\"");
        let value: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"memo \"x\""}})
        );
    }

    #[test]
    fn nothing_to_add_is_empty_output_except_for_gemini_cli() {
        assert_eq!(render(Agent::ClaudeCode, "UserPromptSubmit", ""), "");
        assert_eq!(render(Agent::GeminiCli, "BeforeAgent", ""), "{}\n");
    }
}
