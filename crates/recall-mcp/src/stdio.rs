//! The server's standard input and output, with a line filter in front of rmcp's transport so
//! that every request gets an answer.
//!
//! rmcp passes over a line that is not JSON without a word, and a string that is not Unicode
//! (a lone surrogate escape such as `"\ud800"`, a byte that is not UTF-8) makes the whole line
//! unreadable to it, so the request is never answered. The filter reads each line first: a
//! line that is JSON goes on to rmcp unchanged (but for a request of a method this server serves
//! whose params that method cannot take, which gets an invalid-params error with its id: rmcp
//! would answer it as a method it does not know); a line that is JSON but for such a string gets
//! an invalid-params error with its request's id (a notification gets nothing, as JSON-RPC
//! wants); any other line a parse error with a null id; a line over [`MAX_LINE_BYTES`] an
//! invalid-request error with a null id. The filter's answers and rmcp's share standard output
//! a whole line at a time.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWrite, AsyncWriteExt as _, BufReader, DuplexStream};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use line_frame::FrameDecoder;

/// The longest line read, rmcp's own bound.
pub const MAX_LINE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;
/// The buffer between the filter and rmcp, each way.
const PIPE_BYTES: usize = 64 * 1024;
const PARSE_ERROR: i64 = -32_700;
const INVALID_REQUEST: i64 = -32_600;
const INVALID_PARAMS: i64 = -32_602;
const UTF8_BOM: &[u8] = b"\xef\xbb\xbf";

/// What to do with one line.
#[derive(Debug, PartialEq)]
pub(super) enum Verdict {
    /// Hand it to rmcp.
    Pass,
    /// Answer it with this message.
    Answer(Value),
    /// Nothing: an empty line, or a notification nobody waits on.
    Skip,
}

/// The transport to give rmcp (its input, its output), and the task that copies its output to
/// standard output, which ends once rmcp has closed its output and all of it is written.
pub(crate) fn transport() -> ((DuplexStream, DuplexStream), JoinHandle<()>) {
    let stdout = Arc::new(Mutex::new(tokio::io::stdout()));
    let (filtered, rmcp_input) = tokio::io::duplex(PIPE_BYTES);
    let (rmcp_output, answers) = tokio::io::duplex(PIPE_BYTES);
    tokio::spawn(filter(tokio::io::stdin(), filtered, Arc::clone(&stdout)));
    let copied = tokio::spawn(copy_lines(answers, stdout));
    ((rmcp_input, rmcp_output), copied)
}

/// Reads `input` line by line, handing rmcp what it can read and answering the rest.
async fn filter(
    input: impl tokio::io::AsyncRead + Unpin,
    mut rmcp: DuplexStream,
    out: Arc<Mutex<impl AsyncWrite + Unpin>>,
) {
    let mut input = BufReader::new(input);
    let mut decoder = FrameDecoder::new(MAX_LINE_BYTES);
    // Whether the rest of an over-long line is being skipped.
    let mut skipping = false;
    loop {
        let Ok(bytes) = input.fill_buf().await else {
            return;
        };
        if bytes.is_empty() {
            if !skipping && let Ok(line) = decoder.finish_bytes() {
                let _ = deliver(&line, &mut rmcp, &out).await;
            }
            return;
        }
        if skipping {
            let newline = bytes.iter().position(|&b| b == b'\n');
            skipping = newline.is_none();
            let taken = newline.map_or(bytes.len(), |at| at + 1);
            input.consume(taken);
            continue;
        }
        let Ok(taken) = decoder.push(bytes) else {
            skipping = true;
            decoder = FrameDecoder::new(MAX_LINE_BYTES);
            let answer = error(
                Value::Null,
                INVALID_REQUEST,
                &format!("Invalid Request: the line is over {MAX_LINE_BYTES} bytes"),
            );
            if write_line(&out, &answer).await.is_err() {
                return;
            }
            continue;
        };
        input.consume(taken);
        if decoder.is_complete() {
            let line = std::mem::replace(&mut decoder, FrameDecoder::new(MAX_LINE_BYTES))
                .finish_bytes()
                .unwrap_or_default();
            if deliver(&line, &mut rmcp, &out).await.is_err() {
                return;
            }
        }
    }
}

/// Hands `line` to rmcp or answers it.
async fn deliver(
    line: &[u8],
    rmcp: &mut DuplexStream,
    out: &Mutex<impl AsyncWrite + Unpin>,
) -> std::io::Result<()> {
    match judge(line) {
        Verdict::Pass => {
            rmcp.write_all(line).await?;
            rmcp.write_all(b"\n").await
        }
        Verdict::Answer(answer) => write_line(out, &answer).await,
        Verdict::Skip => Ok(()),
    }
}

/// Copies rmcp's output to `out` a line at a time, until rmcp closes it.
async fn copy_lines(answers: DuplexStream, out: Arc<Mutex<impl AsyncWrite + Unpin>>) {
    let mut answers = BufReader::new(answers);
    let mut line = Vec::new();
    loop {
        line.clear();
        match answers.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let mut out = out.lock().await;
                if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
                    return;
                }
            }
        }
    }
}

async fn write_line(out: &Mutex<impl AsyncWrite + Unpin>, message: &Value) -> std::io::Result<()> {
    let mut line = message.to_string().into_bytes();
    line.push(b'\n');
    let mut out = out.lock().await;
    out.write_all(&line).await?;
    out.flush().await
}

/// What to do with `line` (without its newline).
pub(super) fn judge(line: &[u8]) -> Verdict {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(UTF8_BOM).unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    if let Ok(message) = serde_json::from_slice::<Value>(line) {
        return malformed_params(&message).map_or(Verdict::Pass, Verdict::Answer);
    }
    let repaired = without_lone_surrogates(&String::from_utf8_lossy(line));
    match serde_json::from_str::<Value>(&repaired) {
        Ok(message) => {
            let id = message
                .get("id")
                .filter(|id| id.is_string() || id.is_number());
            if id.is_none() && message.get("method").is_some() {
                return Verdict::Skip;
            }
            Verdict::Answer(error(
                id.cloned().unwrap_or(Value::Null),
                INVALID_PARAMS,
                "Invalid params: a string is not valid Unicode (a lone surrogate escape or a byte that is not UTF-8)",
            ))
        }
        Err(_) => Verdict::Answer(error(
            Value::Null,
            PARSE_ERROR,
            "Parse error: the line is not JSON",
        )),
    }
}

/// The invalid-params error for a request of a method this server serves whose params are not
/// what the method takes (`arguments` that are a string, not an object, for one): rmcp would
/// take such a request for one of a method it does not know.
fn malformed_params(message: &Value) -> Option<Value> {
    fn refused<T: serde::de::DeserializeOwned>(params: &Value) -> Option<String> {
        serde_json::from_value::<T>(params.clone())
            .err()
            .map(|e| e.to_string())
    }
    let id = message
        .get("id")
        .filter(|id| id.is_string() || id.is_number())?;
    let method = message.get("method")?.as_str()?;
    let params = message.get("params").unwrap_or(&Value::Null);
    let why = match method {
        "tools/call" => refused::<rmcp::model::CallToolRequestParams>(params),
        "resources/read" => refused::<rmcp::model::ReadResourceRequestParams>(params),
        "initialize" => refused::<rmcp::model::InitializeRequestParams>(params),
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list"
            if !params.is_null() =>
        {
            refused::<rmcp::model::PaginatedRequestParams>(params)
        }
        _ => None,
    }?;
    Some(error(
        id.clone(),
        INVALID_PARAMS,
        &format!("Invalid params for {method}: {why}"),
    ))
}

fn error(id: Value, code: i64, message: &str) -> Value {
    let mut answer = json!({"jsonrpc": "2.0", "error": {"code": code, "message": message}});
    answer["id"] = id;
    answer
}

/// `text` with each `\u` escape of a surrogate that is not half of a pair replaced by the
/// escape of U+FFFD; every other character, escaped or not, is kept.
fn without_lone_surrogates(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(unit) = escaped_unit(rest) else {
            // Another escape: keep the backslash and the character it escapes.
            let escape_len = rest[1..].chars().next().map_or(1, |c| 1 + c.len_utf8());
            out.push_str(&rest[..escape_len]);
            rest = &rest[escape_len..];
            continue;
        };
        let high = (0xD800..0xDC00).contains(&unit);
        let low_follows = escaped_unit(&rest[6..]).is_some_and(|u| (0xDC00..0xE000).contains(&u));
        if high && low_follows {
            out.push_str(&rest[..12]);
            rest = &rest[12..];
        } else if (0xD800..0xE000).contains(&unit) {
            out.push_str("\\ufffd");
            rest = &rest[6..];
        } else {
            out.push_str(&rest[..6]);
            rest = &rest[6..];
        }
    }
    out.push_str(rest);
    out
}

/// The code unit of the `\uXXXX` escape `text` starts with.
fn escaped_unit(text: &str) -> Option<u16> {
    let hex = text.strip_prefix("\\u")?.get(..4)?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(hex, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(line: &[u8]) -> Value {
        match judge(line) {
            Verdict::Answer(answer) => answer,
            other => panic!("{other:?} for {}", String::from_utf8_lossy(line)),
        }
    }

    #[test]
    fn a_json_line_goes_to_rmcp_unchanged() {
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Verdict::Pass
        );
        assert_eq!(judge(br#"{"q":"\ud83d\ude00 \\ud800"}"#), Verdict::Pass);
    }

    #[test]
    fn a_line_that_is_not_json_gets_a_parse_error_with_a_null_id() {
        let answer = answer(b"this is not json");
        assert_eq!(answer["id"], Value::Null);
        assert_eq!(answer["error"]["code"], PARSE_ERROR);
    }

    #[test]
    fn a_request_with_a_lone_surrogate_gets_invalid_params_with_its_id() {
        let line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"recall_memories","arguments":{"query":"\ud800"}}}"#;
        let answer = answer(line);
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["error"]["code"], INVALID_PARAMS);
    }

    #[test]
    fn a_lone_low_surrogate_and_a_high_one_before_a_non_surrogate_are_lone_too() {
        for query in [r"\udc00", r"\ud800\u0041", r"\ud800\ud800"] {
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":"a","method":"m","params":{{"q":"{query}"}}}}"#);
            assert_eq!(answer(line.as_bytes())["id"], "a", "{query}");
        }
    }

    #[test]
    fn a_request_with_a_byte_that_is_not_utf8_gets_invalid_params_with_its_id() {
        let answer =
            answer(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m\",\"params\":{\"q\":\"\xff\"}}");
        assert_eq!(answer["id"], 3);
        assert_eq!(answer["error"]["code"], INVALID_PARAMS);
    }

    #[test]
    fn a_notification_with_a_lone_surrogate_gets_no_answer() {
        let line = br#"{"jsonrpc":"2.0","method":"notifications/x","params":{"q":"\ud800"}}"#;
        assert_eq!(judge(line), Verdict::Skip);
    }

    #[test]
    fn a_tool_call_whose_arguments_are_not_an_object_gets_invalid_params_with_its_id() {
        let line = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"save_memory","arguments":"title=x"}}"#;

        let answer = answer(line);

        assert_eq!(answer["id"], 4);
        assert_eq!(answer["error"]["code"], INVALID_PARAMS);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("tools/call"),
            "{answer}"
        );
    }

    #[test]
    fn a_well_formed_tool_call_and_a_method_this_server_does_not_serve_go_to_rmcp() {
        let call = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"save_memory","arguments":{"title":5}}}"#;
        let other = br#"{"jsonrpc":"2.0","id":6,"method":"x/y","params":"anything"}"#;

        assert_eq!(judge(call), Verdict::Pass);
        assert_eq!(judge(other), Verdict::Pass);
    }

    #[test]
    fn an_empty_line_is_skipped() {
        assert_eq!(judge(b"\r"), Verdict::Skip);
    }

    #[tokio::test]
    async fn the_line_after_an_answered_one_still_reaches_rmcp() {
        let input: &[u8] = b"not json\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n";
        let (filtered, mut rmcp) = tokio::io::duplex(PIPE_BYTES);
        let out = Arc::new(Mutex::new(Vec::new()));
        filter(input, filtered, Arc::clone(&out)).await;
        let mut passed = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut rmcp, &mut passed)
            .await
            .unwrap();
        assert_eq!(
            passed,
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"
        );
        let answered = String::from_utf8(out.lock().await.clone()).unwrap();
        assert_eq!(answered.lines().count(), 1, "{answered}");
        assert!(answered.contains("-32700"), "{answered}");
    }

    #[tokio::test]
    async fn an_over_long_line_is_answered_and_skipped_to_its_end() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.extend_from_slice(b"\n{\"id\":1}\n");
        let (filtered, mut rmcp) = tokio::io::duplex(PIPE_BYTES);
        let out = Arc::new(Mutex::new(Vec::new()));
        filter(&input[..], filtered, Arc::clone(&out)).await;
        let mut passed = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut rmcp, &mut passed)
            .await
            .unwrap();
        assert_eq!(passed, "{\"id\":1}\n");
        let answered = String::from_utf8(out.lock().await.clone()).unwrap();
        assert!(answered.contains("-32600"), "{answered}");
    }
}
