//! The loopback model: one answer per request, in the wire format of the API the agent speaks.
//!
//! The answer is a fixed text, or, when the run is scripted to and the request offers the
//! memory tool but carries no tool result yet, a call of that tool. Side requests (titles,
//! classifiers, the agents' own memory pickers) offer no such tool and get the fixed text.
//! Streamed requests are answered with the whole event stream at once: every client here reads
//! server-sent events as they come, however they are split.

use std::fmt::Write as _;

use std::time::Duration;

use serde_json::{Value, json};
use wiremock::{Request, Respond, ResponseTemplate};

use super::requests::{Api, Tool, offered_tools, tool_results};

/// What every answer that is not a tool call says.
pub const FIXED_TEXT: &str = "Noted; nothing more to add.";

/// memrecall's MCP tool that recalls memories (matched as a suffix of the agent's name for it).
pub const RECALL_TOOL: &str = "recall_memories";
/// memrecall's MCP tool that lists memories: titles and descriptions, never a body.
pub const LIST_TOOL: &str = "list_memories";

/// How the model answers a request in the main conversation.
#[derive(Debug, Clone)]
pub struct Script {
    /// The API to answer in.
    pub api: Api,
    /// When set, the first request offering a tool whose name ends with this gets a call of it
    /// with these arguments; later requests (carrying its result) get the fixed text.
    pub call: Option<(&'static str, Value)>,
    /// How long each answer offering tools takes: a real model's first token is never
    /// instant, and the selector's later pick needs the time a real turn gives it.
    pub latency: Duration,
}

impl Respond for Script {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let path = request.url.path();
        if request.method.as_str() != "POST" {
            return ResponseTemplate::new(200).set_body_json(json!({"object": "list", "data": []}));
        }
        let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
        if path.ends_with("/count_tokens") {
            return ResponseTemplate::new(200).set_body_json(json!({"input_tokens": 100}));
        }
        if path.ends_with(":countTokens") {
            return ResponseTemplate::new(200).set_body_json(json!({"totalTokens": 100}));
        }
        let latency = if offered_tools(self.api, &body).is_empty() {
            Duration::ZERO
        } else {
            self.latency
        };
        let call = self.call.as_ref().and_then(|(suffix, arguments)| {
            let tool = offered_tools(self.api, &body)
                .into_iter()
                .find(|tool| tool.name.ends_with(suffix))?;
            tool_results(self.api, &body).is_empty().then(|| ToolCall {
                tool,
                arguments: arguments.clone(),
            })
        });
        let reply = match (call, wanted_schema(self.api, &body)) {
            (Some(call), _) => Reply::Call(call),
            // Side queries that ask for JSON (a router's classification) get a conforming object.
            (None, Some(schema)) => Reply::Text(sample_of(schema).to_string()),
            (None, None) => Reply::Text(FIXED_TEXT.to_owned()),
        };
        let streamed = match self.api {
            Api::Gemini => path.contains(":streamGenerateContent"),
            _ => body.get("stream").and_then(Value::as_bool) == Some(true),
        };
        let model = body
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or("loopback");
        if streamed {
            let events = match self.api {
                Api::Anthropic => anthropic_events(&reply, model),
                Api::ChatCompletions => chat_events(&reply, model),
                Api::Gemini => gemini_events(&reply),
                Api::Responses => responses_events(&reply, model),
            };
            ResponseTemplate::new(200)
                .set_delay(latency)
                .set_body_raw(sse(&events), "text/event-stream")
        } else {
            let whole = match self.api {
                Api::Anthropic => anthropic_message(&reply, model),
                Api::ChatCompletions => chat_completion(&reply, model),
                Api::Gemini => gemini_response(&reply),
                Api::Responses => responses_response(&reply, model),
            };
            ResponseTemplate::new(200)
                .set_delay(latency)
                .set_body_json(whole)
        }
    }
}

/// A scripted call of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool as the agent offered it.
    pub tool: Tool,
    /// Its arguments.
    pub arguments: Value,
}

/// One answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Plain text, ending the turn.
    Text(String),
    /// A tool call, continuing it.
    Call(ToolCall),
}

const CALL_ID: &str = "call_loopback_1";

/// The JSON schema a request asks its answer to follow, if any.
fn wanted_schema(api: Api, body: &Value) -> Option<&Value> {
    match api {
        Api::Gemini => {
            let config = body.get("generationConfig")?;
            config
                .get("responseJsonSchema")
                .or_else(|| config.get("responseSchema"))
        }
        Api::ChatCompletions => body.pointer("/response_format/json_schema/schema"),
        Api::Anthropic | Api::Responses => None,
    }
}

/// The smallest value of a JSON schema's shape: every property filled, the first enum value,
/// the minimum number, empty arrays. Type names are read in any case (Gemini writes `OBJECT`).
pub fn sample_of(schema: &Value) -> Value {
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return first.clone();
    }
    let kind = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("object")
        .to_ascii_lowercase();
    match kind.as_str() {
        "object" => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let filled = properties
                .into_iter()
                .flatten()
                .map(|(name, property)| (name.clone(), sample_of(property)));
            Value::Object(filled.collect())
        }
        "array" => json!([]),
        "string" => json!("loopback"),
        "integer" | "number" => schema.get("minimum").cloned().unwrap_or(json!(1)),
        "boolean" => json!(false),
        _ => Value::Null,
    }
}

/// Server-sent events: each `(event name, data)` as an `event:` line (when named), one `data:`
/// line and a blank line.
pub fn sse(events: &[(Option<&str>, Value)]) -> String {
    let mut out = String::new();
    for (name, data) in events {
        if let Some(name) = name {
            let _ = writeln!(out, "event: {name}");
        }
        let _ = write!(out, "data: {data}\n\n");
    }
    out
}

fn anthropic_message(reply: &Reply, model: &str) -> Value {
    let (content, stop) = match reply {
        Reply::Text(text) => (json!([{"type": "text", "text": text}]), "end_turn"),
        Reply::Call(call) => (
            json!([{"type": "tool_use", "id": CALL_ID, "name": call.tool.name,
                     "input": call.arguments}]),
            "tool_use",
        ),
    };
    json!({
        "id": "msg_loopback", "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 100, "output_tokens": 10},
    })
}

fn anthropic_events(reply: &Reply, model: &str) -> Vec<(Option<&'static str>, Value)> {
    let (block, delta, stop) = match reply {
        Reply::Text(text) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
            "end_turn",
        ),
        Reply::Call(call) => (
            json!({"type": "tool_use", "id": CALL_ID, "name": call.tool.name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": call.arguments.to_string()}),
            "tool_use",
        ),
    };
    let mut start = anthropic_message(reply, model);
    start["content"] = json!([]);
    start["stop_reason"] = Value::Null;
    vec![
        (
            Some("message_start"),
            json!({"type": "message_start", "message": start}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            Some("message_delta"),
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                   "usage": {"output_tokens": 10}}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ]
}

fn chat_completion(reply: &Reply, model: &str) -> Value {
    let (message, finish) = match reply {
        Reply::Text(text) => (json!({"role": "assistant", "content": text}), "stop"),
        Reply::Call(call) => (
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": CALL_ID, "type": "function",
                "function": {"name": call.tool.name, "arguments": call.arguments.to_string()},
            }]}),
            "tool_calls",
        ),
    };
    json!({
        "id": "chatcmpl-loopback", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
    })
}

fn chat_events(reply: &Reply, model: &str) -> Vec<(Option<&'static str>, Value)> {
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": "chatcmpl-loopback", "object": "chat.completion.chunk", "created": 0,
            "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let (delta, finish) = match reply {
        Reply::Text(text) => (json!({"role": "assistant", "content": text}), "stop"),
        Reply::Call(call) => (
            json!({"role": "assistant", "tool_calls": [{
                "index": 0, "id": CALL_ID, "type": "function",
                "function": {"name": call.tool.name, "arguments": call.arguments.to_string()},
            }]}),
            "tool_calls",
        ),
    };
    let mut usage = chunk(json!({}), Value::Null);
    usage["choices"] = json!([]);
    usage["usage"] = json!({"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110});
    vec![
        (None, chunk(delta, Value::Null)),
        (None, chunk(json!({}), json!(finish))),
        (None, usage),
    ]
}

fn gemini_response(reply: &Reply) -> Value {
    let part = match reply {
        Reply::Text(text) => json!({"text": text}),
        Reply::Call(call) => {
            json!({"functionCall": {"name": call.tool.name, "args": call.arguments}})
        }
    };
    json!({
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP",
                        "index": 0}],
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10,
                          "totalTokenCount": 110},
        "modelVersion": "loopback",
    })
}

fn gemini_events(reply: &Reply) -> Vec<(Option<&'static str>, Value)> {
    vec![(None, gemini_response(reply))]
}

fn responses_item(reply: &Reply) -> Value {
    match reply {
        Reply::Text(text) => json!({
            "type": "message", "id": "msg_loopback", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }),
        Reply::Call(call) => {
            let mut item = json!({
                "type": "function_call", "id": "fc_loopback", "status": "completed",
                "call_id": CALL_ID, "name": call.tool.name,
                "arguments": call.arguments.to_string(),
            });
            if let Some(namespace) = &call.tool.namespace {
                item["namespace"] = json!(namespace);
            }
            item
        }
    }
}

fn responses_response(reply: &Reply, model: &str) -> Value {
    json!({
        "id": "resp_loopback", "object": "response", "created_at": 0, "status": "completed",
        "model": model, "output": [responses_item(reply)],
        "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 110},
    })
}

fn responses_events(reply: &Reply, model: &str) -> Vec<(Option<&'static str>, Value)> {
    let item = responses_item(reply);
    let mut created = responses_response(reply, model);
    created["status"] = json!("in_progress");
    created["output"] = json!([]);
    vec![
        (
            Some("response.created"),
            json!({"type": "response.created", "response": created}),
        ),
        (
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        ),
        (
            Some("response.output_item.done"),
            json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        ),
        (
            Some("response.completed"),
            json!({"type": "response.completed", "response": responses_response(reply, model)}),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data_lines(stream: &str) -> Vec<Value> {
        stream
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .map(|data| serde_json::from_str(data).unwrap())
            .collect()
    }

    #[test]
    fn sse_frames_each_event_with_its_name_and_a_blank_line() {
        let stream = sse(&[(Some("ping"), json!({"a": 1})), (None, json!(2))]);
        assert_eq!(stream, "event: ping\ndata: {\"a\":1}\n\ndata: 2\n\n");
    }

    #[test]
    fn anthropic_stream_carries_the_tool_call_as_one_json_delta() {
        let call = Reply::Call(ToolCall {
            tool: Tool::plain("mcp__memrecall__recall_memories"),
            arguments: json!({"query": "q"}),
        });
        let events = data_lines(&sse(&anthropic_events(&call, "m")));
        assert_eq!(
            events[1]["content_block"]["name"],
            "mcp__memrecall__recall_memories"
        );
        assert_eq!(events[2]["delta"]["partial_json"], "{\"query\":\"q\"}");
        assert_eq!(events[4]["delta"]["stop_reason"], "tool_use");
    }

    #[test]
    fn chat_stream_ends_with_a_finish_reason_then_usage() {
        let events = data_lines(&sse(&chat_events(&Reply::Text("hi".into()), "m")));
        assert_eq!(events[0]["choices"][0]["delta"]["content"], "hi");
        assert_eq!(events[1]["choices"][0]["finish_reason"], "stop");
        assert_eq!(events[2]["usage"]["total_tokens"], 110);
    }

    #[test]
    fn responses_stream_completes_with_the_same_item_it_announced() {
        let events = data_lines(&sse(&responses_events(&Reply::Text("hi".into()), "m")));
        assert_eq!(events[2]["item"]["content"][0]["text"], "hi");
        assert_eq!(events[3]["response"]["output"][0], events[2]["item"]);
    }

    #[test]
    fn responses_call_of_a_namespaced_tool_names_its_namespace() {
        let tool = Tool {
            namespace: Some("mcp__memrecall".into()),
            name: "recall_memories".into(),
        };
        let item = responses_item(&Reply::Call(ToolCall {
            tool,
            arguments: json!({}),
        }));
        assert_eq!(item["namespace"], "mcp__memrecall");
        assert_eq!(item["name"], "recall_memories");
    }

    #[test]
    fn a_requested_schema_gets_a_conforming_sample() {
        let schema = json!({"type": "OBJECT", "properties": {
            "reasoning": {"type": "STRING"}, "score": {"type": "INTEGER"},
            "kind": {"type": "string", "enum": ["a", "b"]}, "list": {"type": "array"}}});
        assert_eq!(
            sample_of(&schema),
            json!({"reasoning": "loopback", "score": 1, "kind": "a", "list": []})
        );
    }

    #[test]
    fn gemini_function_call_keeps_arguments_as_an_object() {
        let call = Reply::Call(ToolCall {
            tool: Tool::plain("recall_memories"),
            arguments: json!({"query": "q"}),
        });
        let response = gemini_response(&call);
        let part = &response["candidates"][0]["content"]["parts"][0];
        assert_eq!(part["functionCall"]["args"]["query"], "q");
    }
}
