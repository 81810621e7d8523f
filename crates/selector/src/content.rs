//! Reading the JSON answer out of a chat model's message text.

use serde_json::Value;

use crate::error::AnswerError;
use crate::manifest::ANSWER_KEY;

/// How many `{` positions the plain-text fallback tries before giving up, bounding its work on
/// long prose answers.
const MAX_OBJECT_STARTS: usize = 16;

/// Reads the JSON answer out of a message's content.
///
/// Content that is JSON as a whole is returned as is. Otherwise, for models that do not honour a
/// response format, the first JSON object embedded in the text (after prose, inside a
/// ```` ```json ```` fence) is used, preferring one that has a `selected_memories` member. Shape
/// checks are left to [`validate_answer`](crate::validate_answer).
pub fn parse_answer_content(content: &str) -> Result<Value, AnswerError> {
    if let Ok(value) = serde_json::from_str::<Value>(content.trim()) {
        return Ok(value);
    }
    let mut first_object = None;
    for (start, _) in content.match_indices('{').take(MAX_OBJECT_STARTS) {
        let Some(rest) = content.get(start..) else {
            continue;
        };
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        if let Some(Ok(Value::Object(object))) = values.next() {
            if object.contains_key(ANSWER_KEY) {
                return Ok(Value::Object(object));
            }
            first_object.get_or_insert(Value::Object(object));
        }
    }
    first_object.ok_or(AnswerError::NoJsonObject)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn content_wrapped_in_a_json_fence_is_parsed() {
        let content = "Here you go:\n```json\n{\"selected_memories\": [\"/a.md\"]}\n```\n";
        let value = parse_answer_content(content).unwrap();
        assert_eq!(value, json!({ "selected_memories": ["/a.md"] }));
    }

    #[test]
    fn an_object_with_the_answer_key_is_preferred_over_an_earlier_one() {
        let content = "I considered {\"note\": 1} and chose {\"selected_memories\": []}.";
        let value = parse_answer_content(content).unwrap();
        assert_eq!(value, json!({ "selected_memories": [] }));
    }

    #[test]
    fn content_without_an_object_is_an_invalid_answer() {
        let error = parse_answer_content("I cannot decide.").unwrap_err();
        assert_eq!(error, AnswerError::NoJsonObject);
    }
}
