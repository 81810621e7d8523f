//! Reading the logged model requests: which tools a request offers the model and what the tool
//! results it carries say, in each of the four APIs.

use serde_json::Value;

/// The model APIs the agents speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Anthropic Messages (Claude Code).
    Anthropic,
    /// `OpenAI` chat completions (Qwen Code).
    ChatCompletions,
    /// Gemini `generateContent` (Gemini CLI).
    Gemini,
    /// `OpenAI` Responses (Codex).
    Responses,
}

/// A tool offered to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tool {
    /// The group it is offered in (Responses API namespaces), if any.
    pub namespace: Option<String>,
    /// Its name (within the namespace).
    pub name: String,
}

impl Tool {
    /// A tool outside any namespace.
    pub fn plain(name: &str) -> Self {
        Self {
            namespace: None,
            name: name.to_owned(),
        }
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{namespace}.{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

/// The tools a request offers the model.
pub fn offered_tools(api: Api, body: &Value) -> Vec<Tool> {
    let name = |value: Option<&Value>| value.and_then(Value::as_str).map(Tool::plain);
    let tools = body.get("tools").and_then(Value::as_array);
    tools
        .into_iter()
        .flatten()
        .flat_map(|tool| match api {
            Api::Anthropic => name(tool.get("name")).into_iter().collect(),
            Api::ChatCompletions => name(tool.pointer("/function/name")).into_iter().collect(),
            // Responses tools are flat (`{"type": "function", "name": …}`), or grouped in a
            // namespace whose members are called with its name beside theirs.
            Api::Responses => match tool.get("tools").and_then(Value::as_array) {
                Some(members) => {
                    let namespace = tool.get("name").and_then(Value::as_str);
                    members
                        .iter()
                        .filter_map(|member| name(member.get("name")))
                        .map(|member| Tool {
                            namespace: namespace.map(str::to_owned),
                            ..member
                        })
                        .collect()
                }
                None => name(tool.get("name")).into_iter().collect(),
            },
            Api::Gemini => tool
                .get("functionDeclarations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|declaration| name(declaration.get("name")))
                .collect::<Vec<_>>(),
        })
        .collect()
}

/// The tools' names as shown in the report.
pub fn tool_names(api: Api, body: &Value) -> Vec<String> {
    offered_tools(api, body)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// The text of every tool result a request carries back to the model.
pub fn tool_results(api: Api, body: &Value) -> Vec<String> {
    match api {
        Api::Anthropic => messages(body, "messages")
            .filter_map(|m| m.get("content").and_then(Value::as_array))
            .flatten()
            .filter(|block| kind(block) == Some("tool_result"))
            .map(|block| text_of(block.get("content")))
            .collect(),
        Api::ChatCompletions => messages(body, "messages")
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
            .map(|m| text_of(m.get("content")))
            .collect(),
        Api::Gemini => messages(body, "contents")
            .filter_map(|c| c.get("parts").and_then(Value::as_array))
            .flatten()
            .filter_map(|part| part.get("functionResponse"))
            .map(|response| text_of(response.get("response")))
            .collect(),
        Api::Responses => messages(body, "input")
            .filter(|item| kind(item) == Some("function_call_output"))
            .map(|item| text_of(item.get("output")))
            .collect(),
    }
}

fn messages<'a>(body: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    body.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

fn kind(value: &Value) -> Option<&str> {
    value.get("type").and_then(Value::as_str)
}

/// All the text in a value: a string as it is, the `text` of content blocks, anything else
/// as its JSON.
fn text_of(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|block| match block.get("text") {
                Some(Value::String(text)) => text.clone(),
                _ => text_of(Some(block)),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => other.to_string(),
    }
}

/// The request bodies in the order they arrived, parsed (a body that is not JSON is `Null`).
pub fn parse_bodies(bodies: &[Vec<u8>]) -> Vec<Value> {
    bodies
        .iter()
        .map(|body| serde_json::from_slice(body).unwrap_or(Value::Null))
        .collect()
}

/// Whether `needle` occurs in the body once its JSON string escapes are undone (a marker with
/// non-ASCII characters may be sent as `\uXXXX`).
pub fn mentions(body: &Value, needle: &str) -> bool {
    match body {
        Value::String(text) => text.contains(needle),
        Value::Array(items) => items.iter().any(|item| mentions(item, needle)),
        Value::Object(map) => map
            .iter()
            .any(|(key, value)| key.contains(needle) || mentions(value, needle)),
        _ => false,
    }
}

/// How many times `needle` occurs in the body's strings.
pub fn occurrences(body: &Value, needle: &str) -> usize {
    match body {
        Value::String(text) => text.matches(needle).count(),
        Value::Array(items) => items.iter().map(|item| occurrences(item, needle)).sum(),
        Value::Object(map) => map.values().map(|value| occurrences(value, needle)).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn anthropic_tools_and_results_are_read_from_blocks() {
        let body = json!({
            "tools": [{"name": "Bash"}, {"name": "mcp__memrecall__recall_memories"}],
            "messages": [
                {"role": "user", "content": "q"},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x",
                    "content": [{"type": "text", "text": "MARK-1"}]}]},
            ],
        });
        assert_eq!(
            tool_names(Api::Anthropic, &body),
            ["Bash", "mcp__memrecall__recall_memories"]
        );
        assert_eq!(tool_results(Api::Anthropic, &body), ["MARK-1"]);
    }

    #[test]
    fn chat_completion_results_are_tool_role_messages() {
        let body = json!({
            "tools": [{"type": "function", "function": {"name": "recall_memories"}}],
            "messages": [{"role": "user", "content": "q"}, {"role": "tool", "content": "MARK"}],
        });
        assert_eq!(tool_names(Api::ChatCompletions, &body), ["recall_memories"]);
        assert_eq!(tool_results(Api::ChatCompletions, &body), ["MARK"]);
    }

    #[test]
    fn gemini_results_are_function_responses() {
        let body = json!({
            "tools": [{"functionDeclarations": [{"name": "a"}, {"name": "b"}]}],
            "contents": [{"role": "user", "parts": [{"functionResponse": {"name": "b",
                "response": {"output": "MARK"}}}]}],
        });
        assert_eq!(tool_names(Api::Gemini, &body), ["a", "b"]);
        assert_eq!(tool_results(Api::Gemini, &body), ["{\"output\":\"MARK\"}"]);
    }

    #[test]
    fn responses_results_are_function_call_outputs_and_namespaces_are_opened() {
        let body = json!({
            "tools": [{"type": "function", "name": "shell"},
                      {"type": "namespace", "name": "mcp", "tools": [{"name": "recall_memories"}]}],
            "input": [{"type": "function_call_output", "call_id": "c", "output": "MARK"}],
        });
        assert_eq!(
            tool_names(Api::Responses, &body),
            ["shell", "mcp.recall_memories"]
        );
        assert_eq!(tool_results(Api::Responses, &body), ["MARK"]);
    }

    #[test]
    fn mentions_finds_text_sent_with_unicode_escapes() {
        let body = serde_json::from_str::<Value>(r#"{"a": ["\u6570\u636e MARK"]}"#).unwrap();
        assert!(mentions(&body, "数据 MARK"));
        assert!(!mentions(&body, "absent"));
    }

    #[test]
    fn occurrences_counts_across_nested_strings() {
        let body = json!({"a": "MARK and MARK", "b": [{"c": "MARK"}], "d": 1});
        assert_eq!(occurrences(&body, "MARK"), 3);
    }
}
