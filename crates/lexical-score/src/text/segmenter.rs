//! The word segmenter of Thai, Lao, Khmer and Myanmar, set up on first use.

use super::class::{CLASS_TABLE, STARTS, class_in};

/// The word segmenter, once set up (see [`for_each_segmented_word`]).
static SEGMENTER: std::sync::OnceLock<icu_segmenter::WordSegmenterBorrowed<'static>> =
    std::sync::OnceLock::new();

/// Calls `emit` with every word the word segmenter finds in `text` (a stretch of a segmented
/// script), with its byte offset. Words start with a letter or digit, so that every word lies
/// inside a run wherever its text occurs (the term index relies on it).
///
/// The segmenter (rules plus the compiled dictionaries of Thai, Lao, Khmer and Burmese) is set up
/// the first time a process meets such a stretch, never before: a process that only sees other
/// scripts never touches its data.
pub(crate) fn for_each_segmented_word<'t>(text: &'t str, mut emit: impl FnMut(usize, &'t str)) {
    let segmenter = SEGMENTER.get_or_init(|| {
        icu_segmenter::WordSegmenter::new_dictionary(
            icu_segmenter::options::WordBreakInvariantOptions::default(),
        )
    });
    let mut start = 0;
    for end in segmenter.segment_str(text) {
        // A word starts with a letter or digit, as a run does: a break before a mark (the
        // segmenter's dictionaries may put one before a mark they do not know) is no break.
        let breaks_a_run = text
            .get(end..)
            .and_then(|rest| rest.chars().next())
            .is_none_or(|c| class_in(&CLASS_TABLE, c) & STARTS != 0);
        if end > start
            && breaks_a_run
            && let Some(word) = text.get(start..end)
        {
            emit(start, word);
            start = end;
        }
    }
}

/// Whether the word segmenter has been set up in this process (see [`for_each_segmented_word`]).
pub(crate) fn segmenter_is_set_up() -> bool {
    SEGMENTER.get().is_some()
}
