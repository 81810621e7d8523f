//! The loopback model: one answer per request, in the wire format of the API the agent speaks.
//!
//! The answer is a fixed text, or, when the run is scripted to and the request offers the
//! memory tool but carries no tool result yet, a call of that tool. Side requests (titles,
//! classifiers, the agents' own memory pickers) offer no such tool and get the fixed text.
//! Streamed requests are answered with the whole event stream at once: every client here reads
//! server-sent events as they come, however they are split.

use std::fmt::Write as _;

use serde_json::{Value, json};
use wiremock::{Request, Respond, ResponseTemplate};

use super::requests::{Api, offered_tools, tool_results};

/// What every answer that is not a tool call says.
pub const FIXED_TEXT: &str = "Noted; nothing more to add.";

/// The tool the scripted call names (matched as a suffix of the agent's own name for it).
pub const MEMORY_TOOL: &str = "recall_memories";

/// How the model answers a request in the main conversation.
#[derive(Debug, Clone)]
pub struct Script {
    /// The API to answer in.
    pub api: Api,
    /// When set, the first request offering the memory tool gets a call of it with this query.
    pub tool_query: Option<String>,
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
        let call = self.tool_query.as_ref().and_then(|query| {
            let tool = offered_tools(self.api, &body)
                .into_iter()
                .find(|name| name.ends_with(MEMORY_TOOL))?;
            tool_results(self.api, &body).is_empty().then(|| ToolCall {
                name: tool,
                arguments: json!({ "query": query }),
            })
        });
        let reply = call.map_or(Reply::Text(FIXED_TEXT), Reply::Call);
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
            ResponseTemplate::new(200).set_body_raw(sse(&events), "text/event-stream")
        } else {
            let whole = match self.api {
                Api::Anthropic => anthropic_message(&reply, model),
                Api::ChatCompletions => chat_completion(&reply, model),
                Api::Gemini => gemini_response(&reply),
                Api::Responses => responses_response(&reply, model),
            };
            ResponseTemplate::new(200).set_body_json(whole)
        }
    }
}

/// A scripted call of a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The tool's name as the agent offered it.
    pub name: String,
    /// Its arguments.
    pub arguments: Value,
}

/// One answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// Plain text, ending the turn.
    Text(&'static str),
    /// A tool call, continuing it.
    Call(ToolCall),
}

const CALL_ID: &str = "call_loopback_1";

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
            json!([{"type": "tool_use", "id": CALL_ID, "name": call.name, "input": call.arguments}]),
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
            json!({"type": "tool_use", "id": CALL_ID, "name": call.name, "input": {}}),
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
                "function": {"name": call.name, "arguments": call.arguments.to_string()},
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
                "function": {"name": call.name, "arguments": call.arguments.to_string()},
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
        Reply::Call(call) => json!({"functionCall": {"name": call.name, "args": call.arguments}}),
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
        Reply::Call(call) => json!({
            "type": "function_call", "id": "fc_loopback", "status": "completed",
            "call_id": CALL_ID, "name": call.name, "arguments": call.arguments.to_string(),
        }),
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
            name: "mcp__memrecall__recall_memories".into(),
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
        let events = data_lines(&sse(&chat_events(&Reply::Text("hi"), "m")));
        assert_eq!(events[0]["choices"][0]["delta"]["content"], "hi");
        assert_eq!(events[1]["choices"][0]["finish_reason"], "stop");
        assert_eq!(events[2]["usage"]["total_tokens"], 110);
    }

    #[test]
    fn responses_stream_completes_with_the_same_item_it_announced() {
        let events = data_lines(&sse(&responses_events(&Reply::Text("hi"), "m")));
        assert_eq!(events[2]["item"]["content"][0]["text"], "hi");
        assert_eq!(events[3]["response"]["output"][0], events[2]["item"]);
    }

    #[test]
    fn gemini_function_call_keeps_arguments_as_an_object() {
        let call = Reply::Call(ToolCall {
            name: "recall_memories".into(),
            arguments: json!({"query": "q"}),
        });
        let response = gemini_response(&call);
        let part = &response["candidates"][0]["content"]["parts"][0];
        assert_eq!(part["functionCall"]["args"]["query"], "q");
    }
}
