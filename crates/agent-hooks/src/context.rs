//! The memory a hook adds, cut to what an agent accepts.

use std::sync::Arc;
use std::time::SystemTime;

use crate::hook_io::{MAX_CONTEXT_UTF16, utf16_len};
use memory_scan::ScannedDocument;

/// Ends a prompt that had to be cut.
const TRUNCATED_NOTE: &str = "\n\n> NOTE: Relevant memory truncated for prompt budget.\n";

/// The prompt, or the longest run of its first documents whose prompt fits the budget, or the
/// first document's prompt cut to it.
pub fn fit(documents: &[Arc<ScannedDocument>], prompt: &str, now: SystemTime) -> String {
    if utf16_len(prompt) <= MAX_CONTEXT_UTF16 {
        return prompt.to_owned();
    }
    for keep in (1..documents.len()).rev() {
        let shorter =
            recall_facade::render_prompt(documents[..keep].iter().map(|d| d.document()), now);
        if utf16_len(&shorter) <= MAX_CONTEXT_UTF16 {
            return shorter;
        }
    }
    let one = recall_facade::render_prompt(documents.iter().take(1).map(|d| d.document()), now);
    cut(&one)
}

/// `context` as it is when it fits the budget; else its beginning, cut to fit with a note
/// saying so (for a context whose documents are not at hand, such as a server's answer).
pub fn cut(context: &str) -> String {
    if utf16_len(context) <= MAX_CONTEXT_UTF16 {
        return context.to_owned();
    }
    let budget = MAX_CONTEXT_UTF16 - utf16_len(TRUNCATED_NOTE);
    let mut used = 0;
    let end = context
        .char_indices()
        .find(|(_, c)| {
            used += c.len_utf16();
            used > budget
        })
        .map_or(context.len(), |(at, _)| at);
    format!("{}{TRUNCATED_NOTE}", context[..end].trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_context_within_the_budget_is_kept_as_it_is() {
        assert_eq!(cut("# Memory\n\nshort"), "# Memory\n\nshort");
    }

    #[test]
    fn a_context_over_the_budget_is_cut_to_it_with_a_note() {
        let long = "é".repeat(MAX_CONTEXT_UTF16 * 3);
        let cut = cut(&long);
        assert!(utf16_len(&cut) <= MAX_CONTEXT_UTF16, "{}", utf16_len(&cut));
        assert!(cut.starts_with("éé"));
        assert!(cut.ends_with(TRUNCATED_NOTE));
    }
}
