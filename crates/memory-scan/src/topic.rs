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
    /// The `keywords` field, one keyword per line; empty when absent.
    keywords: ByteString,
    /// The `usage_scenarios` field, one scenario per line; empty when absent.
    usage_scenarios: ByteString,
    modified: Option<SystemTime>,
}

/// Why a value cannot become a [`Topic`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
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
#[non_exhaustive]
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
            keywords: ByteString::new(),
            usage_scenarios: ByteString::new(),
            modified: None,
        })
    }

    /// The same topic with `keywords` and `usage_scenarios` (see [`Topic::keywords`]); items are
    /// trimmed, and empty items and line breaks inside an item are dropped.
    #[must_use]
    pub fn with_structured_fields<'a>(
        mut self,
        keywords: impl IntoIterator<Item = &'a str>,
        usage_scenarios: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        self.keywords = join_items(keywords).into();
        self.usage_scenarios = join_items(usage_scenarios).into();
        self
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
        keywords: ByteString,
        usage_scenarios: ByteString,
    ) -> Option<Self> {
        let single_trimmed_line = |s: &str| s.trim().len() == s.len() && !s.contains('\n');
        let valid = !title.is_empty()
            && single_trimmed_line(&title)
            && single_trimmed_line(&description)
            && body.trim().len() == body.len()
            // Most bodies hold no carriage return at all, which one byte search decides.
            && (memchr::memchr(b'\r', body.as_bytes()).is_none()
                || memchr::memmem::find(body.as_bytes(), b"\r\n").is_none())
            && &*body != EMPTY_BODY_PLACEHOLDER
            && valid_items(&keywords)
            && valid_items(&usage_scenarios);
        valid.then_some(Self {
            memory_type,
            title,
            description,
            body,
            keywords,
            usage_scenarios,
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

    /// The title, description and body as the shared byte strings the topic holds, for a
    /// prepared text that shares them instead of copying.
    pub(crate) fn shared_texts(&self) -> (&ByteString, &ByteString, &ByteString) {
        (&self.title, &self.description, &self.body)
    }

    /// The trimmed body; empty for the placeholder body.
    pub fn body(&self) -> &str {
        &self.body
    }

    /// The `keywords` field, one keyword per line (empty when absent): an inline list
    /// (`[a, b]`), a block list (`- a` lines under the key) or a comma-separated string.
    pub fn keywords(&self) -> &str {
        &self.keywords
    }

    /// The `usage_scenarios` field, one scenario per line (empty when absent), written in the
    /// same forms as [`Topic::keywords`].
    pub fn usage_scenarios(&self) -> &str {
        &self.usage_scenarios
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
/// Keys read: `name`, `title` (the title when `name` is absent), `description`, `type`,
/// `modified` (an ISO-8601 timestamp, `2026-11-30T12:00:00.000Z`; a time without an offset is
/// UTC, and a value that is not a timestamp counts as absent), and the lists `keywords` and
/// `usage_scenarios` that Qwen Code's structured mode writes. A list is an inline list
/// (`[a, "b"]`), a block list (an empty value, then `- item` lines) or a comma-separated string;
/// items lose one pair of quotes and empty items are dropped. A malformed list (an unclosed `[`,
/// a `{` mapping) counts as absent: the field is skipped, never the document. Any other key, such
/// as `category`, is ignored without a skip.
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
    let mut keywords: Option<Vec<&str>> = None;
    let mut usage_scenarios: Option<Vec<&str>> = None;
    // Whether the block items (`- item` lines) being read are keywords (or usage scenarios).
    let mut block: Option<bool> = None;
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
        if let Some(is_keywords) = block {
            if let Some(item) = line.trim_start().strip_prefix('-') {
                let list = if is_keywords {
                    &mut keywords
                } else {
                    &mut usage_scenarios
                };
                if let Some(items) = list {
                    push_item(items, item);
                }
                continue;
            }
            block = None;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let list = match key.trim() {
            "keywords" => Some((true, &mut keywords)),
            "usage_scenarios" => Some((false, &mut usage_scenarios)),
            _ => None,
        };
        if let Some((is_keywords, list)) = list {
            if list.is_none() {
                if value.trim().is_empty() {
                    *list = Some(Vec::new());
                    block = Some(is_keywords);
                } else {
                    *list = parse_list(value.trim());
                }
            }
            continue;
        }
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
        keywords: join_items(keywords.unwrap_or_default()).into(),
        usage_scenarios: join_items(usage_scenarios.unwrap_or_default()).into(),
        modified: modified.and_then(parse_iso8601),
    })
}

/// The items of a list value written on the key's line: an inline list or a comma-separated
/// string; `None` when it is malformed (an unclosed or stray bracket, a mapping).
fn parse_list(value: &str) -> Option<Vec<&str>> {
    let inner = match value.strip_prefix('[') {
        Some(rest) => rest.strip_suffix(']')?,
        None if value.starts_with('{') || value.ends_with(']') => return None,
        None => unquote(value),
    };
    if inner.contains(['[', ']']) {
        return None;
    }
    let mut items = Vec::new();
    for item in inner.split(',') {
        push_item(&mut items, item);
    }
    Some(items)
}

/// Adds one list item, trimmed and without one pair of quotes, unless it is empty.
fn push_item<'a>(items: &mut Vec<&'a str>, item: &'a str) {
    let item = unquote(item.trim()).trim();
    if !item.is_empty() {
        items.push(item);
    }
}

/// List items as the topic keeps them: one per line, each trimmed, empty ones dropped.
fn join_items<'a>(items: impl IntoIterator<Item = &'a str>) -> String {
    let mut joined = String::new();
    for item in items {
        for line in item.split(['\n', '\r']) {
            let line = line.trim();
            if !line.is_empty() {
                if !joined.is_empty() {
                    joined.push('\n');
                }
                joined.push_str(line);
            }
        }
    }
    joined
}

/// Whether stored list items are as [`join_items`] writes them.
fn valid_items(items: &str) -> bool {
    items.is_empty()
        || items
            .split('\n')
            .all(|item| !item.is_empty() && item.trim() == item && !item.contains('\r'))
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
    for (key, items) in [
        ("keywords", &topic.keywords),
        ("usage_scenarios", &topic.usage_scenarios),
    ] {
        if !items.is_empty() {
            out.push('\n');
            out.push_str(key);
            out.push(':');
            for item in items.split('\n') {
                out.push_str("\n  - ");
                push_value(&mut out, item);
            }
        }
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
            ByteString::new(),
            ByteString::new(),
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
