//! The text a delivery puts in front of the model.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use memory_scan::{Document, ScannedDocument};

// A prompt shows a body's first `BODY_WINDOW_CHARS` characters, the scorer's body window, so a
// body match is always a match on text the model can see.
use lexical_score::BODY_WINDOW_CHARS;

const HEADER: &str = "## Relevant memory\n\nUse the following memories only when they are directly relevant to the current request. Verify file/function claims before relying on them.\n\n";
/// Ends a text that had to be cut: a body longer than the prompt shows, or a prompt longer than
/// the agent takes.
pub const TRUNCATED_NOTE: &str = "> NOTE: Relevant memory truncated for prompt budget.";
/// Introduces the documents given as one line each: weak matches the model can read if the
/// request needs them.
pub const LINES_HEADER: &str = "## Possibly relevant memory\n\nNot shown here. Read one only if the current request needs it: with the `recall_memories` tool, or from its file.\n\n";
const EMPTY_BODY: &str = "_No detailed entries yet._";
const SECONDS_PER_DAY: u64 = 86_400;

/// The source of "now" for age and freshness text, injectable so prompts are testable.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current wall-clock time.
    fn now(&self) -> SystemTime;
}

/// The real wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock stopped at one instant, for tests and reproducible output.
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub SystemTime);

impl Clock for FixedClock {
    fn now(&self) -> SystemTime {
        self.0
    }
}

/// Whole days between `mtime` and `now`; a modification time in the future counts as today.
pub fn age_in_days(mtime: SystemTime, now: SystemTime) -> u64 {
    now.duration_since(mtime)
        .unwrap_or(Duration::ZERO)
        .as_secs()
        / SECONDS_PER_DAY
}

fn age_text(days: u64) -> String {
    match days {
        0 => "today".to_owned(),
        1 => "yesterday".to_owned(),
        n => format!("{n} days ago"),
    }
}

/// Renders the prompt for `documents`; no documents render as the empty string (nothing is
/// delivered).
pub fn render_prompt<'a, I>(documents: I, now: SystemTime) -> String
where
    I: IntoIterator<Item = &'a Document>,
{
    let mut sections = documents
        .into_iter()
        .map(|doc| render_document(doc, now))
        .peekable();
    if sections.peek().is_none() {
        return String::new();
    }
    let mut prompt = String::from(HEADER);
    let body = sections.collect::<Vec<_>>().join("\n\n");
    prompt.push_str(&body);
    prompt.push('\n');
    prompt
}

/// Renders `whole` as [`render_prompt`] does, then `lines` as one line each (title and file)
/// under [`LINES_HEADER`]; nothing at all renders as the empty string.
pub fn render_tiered_prompt<'a, I, J>(whole: I, lines: J, now: SystemTime) -> String
where
    I: IntoIterator<Item = &'a Document>,
    J: IntoIterator<Item = &'a Document>,
{
    let mut prompt = render_prompt(whole, now);
    let lines: String = lines.into_iter().map(render_line).collect();
    if lines.is_empty() {
        return prompt;
    }
    if !prompt.is_empty() {
        prompt.push('\n');
    }
    prompt.push_str(LINES_HEADER);
    prompt.push_str(&lines);
    prompt
}

fn render_line(doc: &Document) -> String {
    format!(
        "- {} ({})\n",
        printable(doc.title(), Lines::Escaped),
        printable(&doc.path().display().to_string(), Lines::Escaped)
    )
}

/// As [`render_prompt_within`], with `lines` given as one line each after the whole documents:
/// lines are dropped from the last before any whole document is. Returns how many of `whole`
/// and of `lines` the prompt holds.
pub(crate) fn render_tiered_within(
    whole: &[&Document],
    lines: &[&Document],
    now: SystemTime,
    budget: usize,
) -> (usize, usize, String) {
    for keep in (0..=lines.len()).rev() {
        let prompt =
            render_tiered_prompt(whole.iter().copied(), lines[..keep].iter().copied(), now);
        if utf16_len(&prompt) <= budget {
            return (whole.len(), keep, prompt);
        }
    }
    let (kept, prompt) = render_prompt_within(whole, now, budget);
    (kept, 0, prompt)
}

/// Length of `text` in UTF-16 units, as the agents (JavaScript and TypeScript programs) count
/// what they accept.
pub fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// The prompt for the longest run of `documents`' first ones that fit `budget` UTF-16 units,
/// with how many it holds; when not even the first fits, its prompt cut to the budget (one
/// document). No documents: `(0, "")`.
fn render_prompt_within(
    documents: &[&Document],
    now: SystemTime,
    budget: usize,
) -> (usize, String) {
    for keep in (1..=documents.len()).rev() {
        let prompt = render_prompt(documents[..keep].iter().copied(), now);
        if utf16_len(&prompt) <= budget {
            return (keep, prompt);
        }
    }
    match documents.first() {
        Some(first) => (1, fit_context(&render_prompt([*first], now), budget)),
        None => (0, String::new()),
    }
}

/// `text` as it is when it fits `budget` UTF-16 units; else its beginning, cut to fit with
/// [`TRUNCATED_NOTE`] after it. The one cut of a context: a delivery whose first document alone
/// is over the budget is cut by it, and so is a text rendered elsewhere whose documents are not
/// at hand (a server's answer, which a hook must not print past what its agent takes).
pub fn fit_context(text: &str, budget: usize) -> String {
    if utf16_len(text) <= budget {
        return text.to_owned();
    }
    let ending = format!("\n\n{TRUNCATED_NOTE}\n");
    let room = budget.saturating_sub(utf16_len(&ending));
    let mut used = 0;
    let end = text
        .char_indices()
        .find(|(_, c)| {
            used += c.len_utf16();
            used > room
        })
        .map_or(text.len(), |(at, _)| at);
    format!("{}{ending}", text[..end].trim_end())
}

/// Documents and the one prompt that shows them, rendered with one clock's "now" and within a
/// context budget: built only by the lifecycle, so what a caller lists is what the prompt holds.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Rendered {
    /// The documents the prompt holds whole, in order: the first of those given that fit the
    /// budget.
    pub documents: Vec<Arc<ScannedDocument>>,
    /// The documents it names in one line each, after them (weak lexical matches): named, not
    /// delivered.
    pub lines: Vec<Arc<ScannedDocument>>,
    /// The prompt; empty when no document was given.
    pub prompt: String,
    /// The instant the documents' ages were counted from.
    pub now: SystemTime,
}

impl Rendered {
    /// `documents` whole and `lines` as one line each, as many as fit `budget` (all of them
    /// without one), rendered at `now`: over the budget, lines go first, then the last whole
    /// documents.
    pub(crate) fn within(
        mut documents: Vec<Arc<ScannedDocument>>,
        mut lines: Vec<Arc<ScannedDocument>>,
        now: SystemTime,
        budget: Option<NonZeroUsize>,
    ) -> Self {
        let whole: Vec<&Document> = documents.iter().map(|d| d.document()).collect();
        let weak: Vec<&Document> = lines.iter().map(|d| d.document()).collect();
        let prompt = match budget {
            None => render_tiered_prompt(whole, weak, now),
            Some(budget) => {
                let (kept, kept_lines, prompt) =
                    render_tiered_within(&whole, &weak, now, budget.get());
                documents.truncate(kept);
                lines.truncate(kept_lines);
                prompt
            }
        };
        Self {
            documents,
            lines,
            prompt,
            now,
        }
    }

    /// Documents the prompt shows, whole or in a line.
    pub(crate) fn count(&self) -> usize {
        self.documents.len() + self.lines.len()
    }
}

fn render_document(doc: &Document, now: SystemTime) -> String {
    let days = age_in_days(doc.mtime(), now);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### {} ({})",
        printable(doc.title(), Lines::Escaped),
        printable(&doc.relative_path().display().to_string(), Lines::Escaped)
    );
    let _ = writeln!(out, "Saved {}.", age_text(days));
    if !doc.description().is_empty() {
        out.push_str(&printable(doc.description(), Lines::Escaped));
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&printable(&body_text(doc.body()), Lines::Kept));
    if days > 1 {
        let _ = write!(
            out,
            "\n\n> NOTE: This memory is {days} days old. Memories are point-in-time observations, not live state — claims about code behavior or file:line citations may be outdated. Verify against current code before asserting as fact."
        );
    }
    out
}

/// Whether [`printable`] keeps line breaks and tabs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// Newlines and tabs stay as they are (a body, a whole text report).
    Kept,
    /// Newlines and tabs are escaped too (a title, a description, a path: one line each).
    Escaped,
}

/// Whether a character must not reach a terminal or a prompt as itself: C0 and C1 controls and
/// DEL (terminal escape sequences, bells, NULs) and the bidirectional embeddings, overrides and
/// isolates that make text read differently from what it holds.
fn is_unprintable(c: char, lines: Lines) -> bool {
    match c {
        '\n' | '\t' => lines == Lines::Escaped,
        // Controls, then the bidirectional embeddings, overrides and isolates.
        '\u{0}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// `text` with every character that could steer a terminal or disguise what a memory says
/// written as a visible escape (`\u{1b}`); text without one is returned as it is. What memory
/// files hold is shown this way in prompts and in printed reports; machine-readable output
/// keeps the exact values.
pub fn printable(text: &str, lines: Lines) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unprintable(c, lines)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if is_unprintable(c, lines) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn body_text(body: &str) -> String {
    if body.is_empty() {
        return EMPTY_BODY.to_owned();
    }
    match body.char_indices().nth(BODY_WINDOW_CHARS) {
        None => body.to_owned(),
        Some((cut, _)) => format!("{}\n\n{TRUNCATED_NOTE}", &body[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(SECONDS_PER_DAY);

    fn doc(title: &str, body: &str) -> Document {
        let topic =
            memory_scan::Topic::new(memory_scan::MemoryType::Project, title, "d", body).unwrap();
        Document::new(
            memory_scan::Scope::Project,
            // Absolute on every platform (a document's path must be).
            std::env::temp_dir().join(format!("{title}.md")),
            std::path::PathBuf::from(format!("{title}.md")),
            topic,
            SystemTime::UNIX_EPOCH,
        )
        .unwrap()
    }

    #[test]
    fn documents_whose_prompt_fits_the_budget_are_all_kept() {
        let (a, b) = (doc("a", "alpha"), doc("b", "beta"));
        let full = render_prompt([&a, &b], SystemTime::UNIX_EPOCH);
        let (kept, prompt) =
            render_prompt_within(&[&a, &b], SystemTime::UNIX_EPOCH, utf16_len(&full));
        assert_eq!((kept, prompt), (2, full));
    }

    #[test]
    fn over_the_budget_the_first_documents_that_fit_are_kept_whole() {
        let (a, b) = (doc("a", "alpha"), doc("b", &"beta ".repeat(200)));
        let one = render_prompt([&a], SystemTime::UNIX_EPOCH);
        let (kept, prompt) =
            render_prompt_within(&[&a, &b], SystemTime::UNIX_EPOCH, utf16_len(&one) + 10);
        assert_eq!((kept, prompt), (1, one));
    }

    #[test]
    fn a_first_document_over_the_budget_is_cut_to_it_with_the_note() {
        let a = doc("a", &"é".repeat(1_000));
        let (kept, prompt) = render_prompt_within(&[&a], SystemTime::UNIX_EPOCH, 300);
        assert_eq!(kept, 1);
        assert!(utf16_len(&prompt) <= 300, "{}", utf16_len(&prompt));
        assert!(prompt.ends_with(&format!("{TRUNCATED_NOTE}\n")), "{prompt}");
    }

    #[test]
    fn weak_matches_follow_the_whole_documents_as_one_line_each() {
        let (a, b) = (doc("a", "alpha"), doc("b", "beta"));
        let prompt = render_tiered_prompt([&a], [&b], SystemTime::UNIX_EPOCH);
        let whole = render_prompt([&a], SystemTime::UNIX_EPOCH);
        let line = format!("- b ({})\n", b.path().display());
        assert_eq!(prompt, format!("{whole}\n{LINES_HEADER}{line}"));
        assert!(!prompt.contains("beta"), "{prompt}");
    }

    #[test]
    fn lines_alone_are_given_without_the_whole_documents_header() {
        let b = doc("b", "beta");
        let prompt = render_tiered_prompt([], [&b], SystemTime::UNIX_EPOCH);
        assert!(prompt.starts_with(LINES_HEADER), "{prompt}");
        assert!(!prompt.contains("## Relevant memory"), "{prompt}");
    }

    #[test]
    fn over_the_budget_lines_are_dropped_before_whole_documents() {
        let (a, b, c) = (doc("a", "alpha"), doc("b", "beta"), doc("c", "gamma"));
        let one_line = render_tiered_prompt([&a], [&b], SystemTime::UNIX_EPOCH);
        let (whole, lines, prompt) = render_tiered_within(
            &[&a],
            &[&b, &c],
            SystemTime::UNIX_EPOCH,
            utf16_len(&one_line),
        );
        assert_eq!((whole, lines, prompt), (1, 1, one_line));
    }

    #[test]
    fn printable_text_is_borrowed_unchanged() {
        let text = "Plain text, accents é, 漢字, tabs\tand\nlines";
        assert!(matches!(printable(text, Lines::Kept), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn controls_and_bidi_overrides_become_visible_escapes() {
        let text = "a\u{1b}[2Jb\u{7}c\u{0}d\u{9b}e\u{202e}f\u{2066}g\u{7f}";
        assert_eq!(
            printable(text, Lines::Kept),
            "a\\u{1b}[2Jb\\u{7}c\\u{0}d\\u{9b}e\\u{202e}f\\u{2066}g\\u{7f}"
        );
    }

    #[test]
    fn newlines_and_tabs_are_kept_in_bodies_and_escaped_on_one_line() {
        assert_eq!(printable("a\n\tb\r", Lines::Kept), "a\n\tb\\u{d}");
        assert_eq!(printable("a\n\tb", Lines::Escaped), "a\\u{a}\\u{9}b");
    }

    #[test]
    fn age_is_whole_days_and_future_mtime_is_today() {
        let now = SystemTime::UNIX_EPOCH + 100 * DAY;
        assert_eq!(age_in_days(now - DAY / 2, now), 0);
        assert_eq!(age_in_days(now - DAY, now), 1);
        assert_eq!(age_in_days(now - 47 * DAY - DAY / 3, now), 47);
        assert_eq!(age_in_days(now + DAY, now), 0);
    }

    #[test]
    fn age_text_reads_today_yesterday_and_days_ago() {
        assert_eq!(age_text(0), "today");
        assert_eq!(age_text(1), "yesterday");
        assert_eq!(age_text(9), "9 days ago");
    }

    #[test]
    fn body_is_cut_on_a_character_boundary_with_a_note() {
        let body = "漢".repeat(BODY_WINDOW_CHARS + 5);
        let text = body_text(&body);
        assert!(text.starts_with(&"漢".repeat(BODY_WINDOW_CHARS)));
        assert!(text.ends_with(&format!("\n\n{TRUNCATED_NOTE}")));
        assert_eq!(
            body_text(&"a".repeat(BODY_WINDOW_CHARS)),
            "a".repeat(BODY_WINDOW_CHARS)
        );
    }
}
