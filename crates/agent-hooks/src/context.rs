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
    let budget = MAX_CONTEXT_UTF16 - utf16_len(TRUNCATED_NOTE);
    let mut used = 0;
    let cut = one
        .char_indices()
        .find(|(_, c)| {
            used += c.len_utf16();
            used > budget
        })
        .map_or(one.len(), |(at, _)| at);
    format!("{}{TRUNCATED_NOTE}", one[..cut].trim_end())
}
