//! The message a server gives with an error status (`{"error":{"message":…}}` from an
//! OpenAI-compatible server), kept in the error because it says what to fix ("Incorrect API key
//! provided"): bounded, on one line, and with the key and anything that looks like one redacted,
//! since servers echo keys back.

use serde_json::Value;

/// At most this much of an error body is read.
pub(crate) const MAX_ERROR_BODY_BYTES: usize = 8 * 1024;

/// At most this many characters of the server's message are kept.
const MAX_MESSAGE_CHARS: usize = 200;

/// What replaces a key, or a word that looks like one.
const REDACTED: &str = "[redacted]";

/// The server's message in an error body, redacted (`key` is the key sent, if any); `None` when
/// the body holds none.
pub(crate) fn server_message(body: &[u8], key: Option<&str>) -> Option<String> {
    let text = String::from_utf8_lossy(body);
    let message = match serde_json::from_str::<Value>(&text) {
        Ok(value) => json_message(&value)?,
        // A plain-text body (a proxy's page) says something too; JSON that is cut short does not.
        Err(_) if !text.trim_start().starts_with(['{', '[', '<']) => text.into_owned(),
        Err(_) => return None,
    };
    let message = match key.filter(|k| !k.is_empty()) {
        Some(key) => message.replace(key, REDACTED),
        None => message,
    };
    let words: Vec<&str> = message
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| !w.is_empty())
        .map(|w| if looks_like_a_key(w) { REDACTED } else { w })
        .collect();
    let line = words.join(" ");
    if line.is_empty() {
        return None;
    }
    let mut kept: String = line.chars().take(MAX_MESSAGE_CHARS).collect();
    if kept.len() < line.len() {
        kept.push('…');
    }
    Some(kept)
}

/// `error.message`, `error` as a string, or `message`: where OpenAI-compatible servers put it.
fn json_message(value: &Value) -> Option<String> {
    let error = value.get("error");
    error
        .and_then(|e| e.get("message"))
        .or(error.filter(|e| e.is_string()))
        .or_else(|| value.get("message"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// A masked key (`sk-ab***yz`), a word starting like a key, or a long run of letters and digits
/// holding both.
fn looks_like_a_key(word: &str) -> bool {
    let word =
        word.trim_matches(|c: char| matches!(c, '.' | ',' | ':' | ';' | '"' | '\'' | '(' | ')'));
    if word.contains('*') || word.starts_with("sk-") || word.starts_with("Bearer") {
        return true;
    }
    word.len() >= 20
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        && word.chars().any(|c| c.is_ascii_digit())
        && word.chars().any(|c| c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openais_message_is_kept_with_the_echoed_key_redacted() {
        let body = br#"{"error":{"message":"Incorrect API key provided: sk-abc1***wxyz. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error"}}"#;
        let message = server_message(body, Some("sk-abc1234567890wxyz")).unwrap();
        assert!(
            message.starts_with("Incorrect API key provided: [redacted]"),
            "{message}"
        );
        assert!(!message.contains("abc1"), "{message}");
    }

    #[test]
    fn the_key_sent_is_redacted_wherever_it_appears() {
        let body = br#"{"error":"key secretkey rejected"}"#;
        assert_eq!(
            server_message(body, Some("secretkey")).unwrap(),
            "key [redacted] rejected"
        );
    }

    #[test]
    fn a_long_message_is_cut_to_one_bounded_line() {
        let body = format!(
            r#"{{"message":"line one\nline two {}"}}"#,
            "word ".repeat(100)
        );
        let message = server_message(body.as_bytes(), None).unwrap();
        assert!(!message.contains('\n'));
        assert!(message.chars().count() <= MAX_MESSAGE_CHARS + 1);
        assert!(message.starts_with("line one line two"));
    }

    #[test]
    fn a_body_without_a_message_gives_none() {
        assert_eq!(server_message(br#"{"detail":1}"#, None), None);
        assert_eq!(server_message(b"", None), None);
        assert_eq!(server_message(b"<html>", None), None);
    }
}
