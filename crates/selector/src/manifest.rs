//! The manifest the model chooses from, and the validation of its answer.
//!
//! Both are pure functions so that every [`Selector`](crate::Selector) implementation applies the
//! same rules: what the model was shown is exactly what it may answer with.

use std::collections::HashSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::error::{AnswerError, JsonKind};
use crate::{Candidate, DESCRIPTION_MAX_CHARS, KEYWORDS_MAX_CHARS, MANIFEST_MAX_BYTES};

/// The JSON key under which the model lists the ids it selected.
pub const ANSWER_KEY: &str = "selected_memories";

/// The last instant the RFC 3339 formatter can print (the final second of year 9999).
const LAST_PRINTABLE_SECOND: u64 = 253_402_300_799;

/// Manifest lines + the set of ids that made it in.
///
/// One line per candidate, in candidate order:
/// `- [type] /absolute/path.md (2026-11-30T12:00:00.000Z): description`. The whole text, each line
/// counted with its terminating newline, stays within [`MANIFEST_MAX_BYTES`]; a line that does not
/// fit is skipped and later, shorter lines may still go in. A candidate whose id already appeared
/// is skipped too, so every id is listed once, and so is a candidate whose id holds a control
/// character (a line break in a path would forge manifest lines; such an id cannot be shown as is).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Manifest {
    text: String,
    ids: Vec<String>,
    id_set: HashSet<String>,
}

impl Manifest {
    /// Builds the manifest for `candidates`, in their order, within the byte cap.
    pub fn build(candidates: &[Candidate]) -> Self {
        let mut manifest = Self::default();
        for candidate in candidates {
            if manifest.id_set.contains(&candidate.id) || candidate.id.chars().any(char::is_control)
            {
                continue;
            }
            let line = manifest_line(candidate);
            // +1 for the newline that terminates every line.
            if manifest.text.len() + line.len() + 1 > MANIFEST_MAX_BYTES {
                continue;
            }
            manifest.text.push_str(&line);
            manifest.text.push('\n');
            manifest.ids.push(candidate.id.clone());
            manifest.id_set.insert(candidate.id.clone());
        }
        manifest
    }

    /// The manifest text, every line terminated by a newline (empty when no candidate fits).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether `id` is listed in the manifest (exact, case-sensitive match).
    pub fn contains(&self, id: &str) -> bool {
        self.id_set.contains(id)
    }

    /// The listed ids, in manifest order.
    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// The number of listed candidates.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no candidate is listed.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

/// Formats one manifest line (without its newline).
fn manifest_line(candidate: &Candidate) -> String {
    let mut line = format!(
        "- [{}] {} ({})",
        one_line(&candidate.memory_type),
        candidate.id,
        format_timestamp(candidate.mtime)
    );
    let description = one_line(&candidate.description);
    let description = cut_chars(&description, DESCRIPTION_MAX_CHARS).trim_end();
    if !description.is_empty() {
        line.push_str(": ");
        line.push_str(description);
    }
    let keywords = keywords_shown(&candidate.keywords);
    if !keywords.is_empty() {
        line.push_str(" [keywords: ");
        line.push_str(&keywords);
        line.push(']');
    }
    line
}

/// The keywords as the manifest shows them: one line each, joined by `, `, as many whole
/// keywords as fit in [`KEYWORDS_MAX_CHARS`] characters.
fn keywords_shown(keywords: &[String]) -> String {
    let mut shown = String::new();
    let mut chars = 0;
    for keyword in keywords {
        let keyword = one_line(keyword);
        if keyword.is_empty() {
            continue;
        }
        let separator = if shown.is_empty() { 0 } else { 2 };
        let length = keyword.chars().count() + separator;
        if chars + length > KEYWORDS_MAX_CHARS {
            break;
        }
        if separator > 0 {
            shown.push_str(", ");
        }
        shown.push_str(&keyword);
        chars += length;
    }
    shown
}

/// Replaces line breaks with spaces so that one candidate never spans two manifest lines.
fn one_line(text: &str) -> String {
    text.trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The first `max_chars` characters of `text`; cutting on a character index never splits one.
fn cut_chars(text: &str, max_chars: usize) -> &str {
    match text.char_indices().nth(max_chars) {
        Some((byte_index, _)) => text.get(..byte_index).unwrap_or(text),
        None => text,
    }
}

/// ISO-8601 UTC with milliseconds, e.g. `2026-11-30T12:00:00.000Z`.
///
/// Times before 1970 print as the epoch and times after year 9999 as its last millisecond: a
/// file system can report either, and a wrong-but-bounded date beats refusing the candidate.
pub fn format_timestamp(time: SystemTime) -> String {
    let last = UNIX_EPOCH + Duration::from_millis(LAST_PRINTABLE_SECOND * 1000 + 999);
    let clamped = time.clamp(UNIX_EPOCH, last);
    humantime::format_rfc3339_millis(clamped).to_string()
}

/// Checks a model answer against the manifest and returns the selected ids.
///
/// The answer must be an object whose `selected_memories` member is an array of strings (other
/// members are ignored, since some servers add commentary fields). Repeated ids are collapsed,
/// keeping the first occurrence; then the answer is rejected when it names an id that is not in
/// the manifest or more than `limit` ids. The result keeps the answer's order.
pub fn validate_answer(
    answer: &Value,
    manifest: &Manifest,
    limit: usize,
) -> Result<Vec<String>, AnswerError> {
    let Some(object) = answer.as_object() else {
        return Err(AnswerError::NotAnObject {
            found: JsonKind::of(answer),
        });
    };
    let Some(listed) = object.get(ANSWER_KEY) else {
        return Err(AnswerError::MissingMember);
    };
    let Some(listed) = listed.as_array() else {
        return Err(AnswerError::NotAnArray {
            found: JsonKind::of(listed),
        });
    };

    let mut selected: Vec<String> = Vec::new();
    for (position, item) in listed.iter().enumerate() {
        let Some(id) = item.as_str() else {
            return Err(AnswerError::NotAString {
                position,
                found: JsonKind::of(item),
            });
        };
        if !manifest.contains(id) {
            return Err(AnswerError::NotInManifest { position });
        }
        if !selected.iter().any(|seen| seen == id) {
            selected.push(id.to_owned());
        }
    }
    if selected.len() > limit {
        return Err(AnswerError::OverLimit {
            selected: selected.len(),
            limit,
        });
    }
    Ok(selected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_chars_keeps_whole_characters() {
        assert_eq!(cut_chars("記憶検索", 2), "記憶");
        assert_eq!(cut_chars("ab", 5), "ab");
    }

    #[test]
    fn timestamps_before_the_epoch_print_as_the_epoch() {
        let before = UNIX_EPOCH - Duration::from_secs(10);
        assert_eq!(format_timestamp(before), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn timestamps_after_year_9999_print_as_its_last_millisecond() {
        let far = UNIX_EPOCH + Duration::from_secs(LAST_PRINTABLE_SECOND + 1_000_000);
        assert_eq!(format_timestamp(far), "9999-12-31T23:59:59.999Z");
    }
}
