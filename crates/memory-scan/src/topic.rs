//! The topic file format: frontmatter plus a Markdown body, parsed from text alone.

use std::borrow::Cow;
use std::time::SystemTime;

use lexical_score::{ByteString, MemoryType};

use crate::timestamp::{format_iso8601, parse_iso8601};

/// The body a freshly created topic file carries before anything is written into it.
pub const EMPTY_BODY_PLACEHOLDER: &str = "_No entries yet._";

const UTF8_BOM: char = '\u{feff}';
const FENCE: &str = "---";

/// Frontmatter + body of a topic file, parsed from text only.
///
/// Invariants (upheld by [`Topic::new`] and [`parse_topic`]): the title is non-empty, and title
/// and description are trimmed single lines; the body is trimmed, holds no CRLF, and is never the
/// empty-body placeholder. Every such topic survives [`render_topic`] followed by [`parse_topic`].
///
/// The texts are shared byte strings, so a topic loaded from a catalog points into the catalog's
/// buffer and cloning one copies no text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Topic {
    memory_type: MemoryType,
    title: ByteString,
    description: ByteString,
    body: ByteString,
    modified: Option<SystemTime>,
}

/// Why a value cannot become a [`Topic`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopicError {
    /// The title is empty after trimming.
    #[error("a topic title cannot be empty")]
    EmptyTitle,
    /// The title spans more than one line, which frontmatter cannot hold.
    #[error("a topic title must be a single line")]
    MultiLineTitle,
    /// The description spans more than one line, which frontmatter cannot hold.
    #[error("a topic description must be a single line")]
    MultiLineDescription,
}

/// Why a text is not a topic document.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The text does not open with a `---` line.
    #[error("the file does not start with a `---` frontmatter block")]
    NoFrontmatter,
    /// The opening `---` has no closing `---` line.
    #[error("the frontmatter block opened by `---` is never closed")]
    UnterminatedFrontmatter,
    /// The frontmatter names no `type`.
    #[error("the frontmatter has no `type` field")]
    MissingType,
    /// The `type` is not one of `user`, `feedback`, `project`, `reference`.
    #[error("unknown memory type {value:?} (expected user, feedback, project or reference)")]
    UnknownType {
        /// The value found in the file.
        value: String,
    },
}

impl Topic {
    /// Builds a topic, trimming title and description and normalising the body exactly as
    /// [`parse_topic`] would, so that the result round-trips through [`render_topic`].
    pub fn new(
        memory_type: MemoryType,
        title: &str,
        description: &str,
        body: &str,
    ) -> Result<Self, TopicError> {
        let title = title.trim();
        if title.is_empty() {
            return Err(TopicError::EmptyTitle);
        }
        if title.contains('\n') {
            return Err(TopicError::MultiLineTitle);
        }
        let description = description.trim();
        if description.contains('\n') {
            return Err(TopicError::MultiLineDescription);
        }
        Ok(Self {
            memory_type,
            title: title.into(),
            description: description.into(),
            body: normalise_body(&normalise_newlines(body)).into(),
            modified: None,
        })
    }

    /// The same topic saved at `modified`, which then stands for the document's saved time
    /// (see [`Topic::modified`]).
    #[must_use]
    pub fn with_modified(mut self, modified: Option<SystemTime>) -> Self {
        self.modified = modified;
        self
    }

    /// Rebuilds a topic from fields stored by this crate, checking the invariants instead of
    /// re-normalising (no copy); `None` when stored data breaks them.
    pub(crate) fn from_stored(
        memory_type: MemoryType,
        title: ByteString,
        description: ByteString,
        body: ByteString,
    ) -> Option<Self> {
        let single_trimmed_line = |s: &str| s.trim().len() == s.len() && !s.contains('\n');
        let valid = !title.is_empty()
            && single_trimmed_line(&title)
            && single_trimmed_line(&description)
            && body.trim().len() == body.len()
            // Most bodies hold no carriage return at all, which one byte search settles.
            && (memchr::memchr(b'\r', body.as_bytes()).is_none()
                || memchr::memmem::find(body.as_bytes(), b"\r\n").is_none())
            && &*body != EMPTY_BODY_PLACEHOLDER;
        valid.then_some(Self {
            memory_type,
            title,
            description,
            body,
            modified: None,
        })
    }

    /// The memory type from the `type` field.
    pub fn memory_type(&self) -> MemoryType {
        self.memory_type
    }

    /// `name`, else `title`, else the type word.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The `description` field, empty when absent.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The trimmed body; empty for the placeholder body.
    pub fn body(&self) -> &str {
        &self.body
    }

    /// The `modified` field: when the memory was last saved, as its writer recorded it. A
    /// [`crate::Document`] built from the topic takes it as its saved time (its `mtime`) instead
    /// of the file's modification time, and keeps the topic without it.
    pub fn modified(&self) -> Option<SystemTime> {
        self.modified
    }

    /// Moves the `modified` time out of the topic.
    pub(crate) fn take_modified(&mut self) -> Option<SystemTime> {
        self.modified.take()
    }
}

/// Parses a topic file's text: frontmatter between `---` lines, then the body.
///
/// Rules: a leading UTF-8 BOM is ignored and CRLF reads as LF; the first line must be `---` and
/// the block ends at the next line that is `---` (surrounding spaces allowed). Inside it every
/// `key: value` line counts, splitting at the first colon; keys are case-sensitive, the first
/// occurrence of a key wins, other lines are ignored, and a value wrapped in one pair of matching
/// single or double quotes loses them. An empty value counts as absent.
///
/// Keys read: `name`, `title` (the title when `name` is absent), `description`, `type` and
/// `modified` (an ISO-8601 timestamp, `2026-11-30T12:00:00.000Z`; a time without an offset is
/// UTC, and a value that is not a timestamp counts as absent). Any other key, such as the
/// `category`, `keywords` or `usage_scenarios` some agents write, is ignored without a skip.
pub fn parse_topic(text: &str) -> Result<Topic, ParseError> {
    let text = text.strip_prefix(UTF8_BOM).unwrap_or(text);
    let text = normalise_newlines(text);
    let mut lines = text.split('\n');
    let opens = lines.next().is_some_and(|first| first.trim_end() == FENCE);
    if !opens {
        return Err(ParseError::NoFrontmatter);
    }

    let mut name = None;
    let mut title = None;
    let mut description = None;
    let mut type_value = None;
    let mut modified = None;
    let mut body_start = None;
    // Offset of the line after the opening fence; `split` yields slices of `text`, so each line's
    // end is tracked by length rather than by searching again.
    let mut offset = text.find('\n').map_or(text.len(), |i| i + 1);
    for line in lines {
        let next = offset + line.len() + 1;
        if line.trim() == FENCE {
            body_start = Some(next.min(text.len()));
            break;
        }
        offset = next;
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let slot = match key.trim() {
            "name" => &mut name,
            "title" => &mut title,
            "description" => &mut description,
            "type" => &mut type_value,
            "modified" => &mut modified,
            _ => continue,
        };
        if slot.is_none() {
            let value = unquote(value.trim()).trim();
            if !value.is_empty() {
                *slot = Some(value);
            }
        }
    }
    let Some(body_start) = body_start else {
        return Err(ParseError::UnterminatedFrontmatter);
    };
    let type_value = type_value.ok_or(ParseError::MissingType)?;
    let memory_type: MemoryType = type_value.parse().map_err(|_| ParseError::UnknownType {
        value: type_value.to_owned(),
    })?;
    let title = name.or(title).unwrap_or(memory_type.as_str());
    let body = text.get(body_start..).unwrap_or_default();
    Ok(Topic {
        memory_type,
        title: title.into(),
        description: description.unwrap_or_default().into(),
        body: normalise_body(body).into(),
        modified: modified.and_then(parse_iso8601),
    })
}

/// Writes a topic in the file format [`parse_topic`] reads back to an equal [`Topic`].
pub fn render_topic(topic: &Topic) -> String {
    let mut out =
        String::with_capacity(64 + topic.title.len() + topic.description.len() + topic.body.len());
    out.push_str("---\nname: ");
    push_value(&mut out, &topic.title);
    out.push_str("\ndescription:");
    if !topic.description.is_empty() {
        out.push(' ');
        push_value(&mut out, &topic.description);
    }
    out.push_str("\ntype: ");
    out.push_str(topic.memory_type.as_str());
    if let Some(modified) = topic.modified {
        out.push_str("\nmodified: ");
        out.push_str(&format_iso8601(modified));
    }
    out.push_str("\n---\n");
    if !topic.body.is_empty() {
        out.push('\n');
        out.push_str(&topic.body);
        out.push('\n');
    }
    out
}

/// Quotes a value only when reading it back would otherwise strip quotes it really has.
fn push_value(out: &mut String, value: &str) {
    if unquote(value).len() == value.len() {
        out.push_str(value);
    } else {
        out.push('"');
        out.push_str(value);
        out.push('"');
    }
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|rest| rest.strip_suffix(quote))
        {
            return inner;
        }
    }
    value
}

/// Reads CRLF as LF. A run of CRs before a LF collapses too, so the result never contains CRLF
/// and normalising twice changes nothing.
fn normalise_newlines(text: &str) -> Cow<'_, str> {
    if !text.contains("\r\n") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut pending_cr = 0usize;
    for c in text.chars() {
        match c {
            '\r' => pending_cr += 1,
            '\n' => {
                pending_cr = 0;
                out.push('\n');
            }
            other => {
                out.extend(std::iter::repeat_n('\r', pending_cr));
                pending_cr = 0;
                out.push(other);
            }
        }
    }
    out.extend(std::iter::repeat_n('\r', pending_cr));
    Cow::Owned(out)
}

fn normalise_body(body: &str) -> String {
    let body = body.trim();
    if body == EMPTY_BODY_PLACEHOLDER {
        String::new()
    } else {
        body.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(body: &str) -> Option<Topic> {
        Topic::from_stored(
            MemoryType::Project,
            ByteString::from_static("Title"),
            ByteString::from_static("description"),
            ByteString::from(body),
        )
    }

    #[test]
    fn a_stored_body_is_accepted_only_without_a_crlf() {
        assert!(stored("one\ntwo").is_some());
        assert!(stored("a lone \r stays").is_some());
        assert!(stored("one\r\ntwo").is_none());
        assert!(stored("a lone \r then one\r\ntwo").is_none());
    }
}
