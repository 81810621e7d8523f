//! The word segmenter of Thai, Lao, Khmer and Myanmar, set up on first use.

use super::class::{CLASS_TABLE, STARTS, class_in};

/// The word segmenter, once set up (see [`for_each_segmented_word`]).
static SEGMENTER: std::sync::OnceLock<icu_segmenter::WordSegmenter> = std::sync::OnceLock::new();

/// ICU4X's data for the segmenter, baked into the binary: the word and grapheme cluster break
/// rules and the dictionaries of Thai, Lao, Khmer and Burmese, nothing else (not the Chinese and
/// Japanese dictionary, which Han and kana never reach: they are tokenized as bigrams). The
/// files under `segmenter_data/` are written by `cargo xtask icu-data` from the data ICU4X ships,
/// and an xtask test checks they are what it writes.
///
/// The generated code builds its data from byte strings with ICU4X's unchecked constructors
/// (the exporter checked them), hence the `unsafe` it holds; and like all ICU4X baked data it
/// defines its macros with `#[macro_export]`, so they are hidden macros of this crate too.
/// Each file's macro is invoked below for the provider; the Chinese and Japanese dictionary's
/// and the word-rule overrides' answer "not found" to every request.
#[allow(
    unsafe_code,
    clippy::all,
    clippy::pedantic,
    clippy::undocumented_unsafe_blocks,
    missing_docs,
    unused_imports
)]
mod data {
    /// The segmenter's data provider.
    #[derive(Debug)]
    pub(super) struct SegmenterData;

    // What ICU4X's `make_provider!` declares, which each data file's macro checks for.
    impl SegmenterData {
        const MUST_USE_MAKE_PROVIDER_MACRO: () = ();
    }
    icu_provider::marker::impl_data_provider_never_marker!(SegmenterData);

    include!("segmenter_data/segmenter_break_word_v1.rs.data");
    include!("segmenter_data/segmenter_break_word_override_v1.rs.data");
    include!("segmenter_data/segmenter_break_grapheme_cluster_v1.rs.data");
    include!("segmenter_data/segmenter_dictionary_auto_v2.rs.data");
    include!("segmenter_data/segmenter_dictionary_extended_v2.rs.data");
    impl_segmenter_break_word_v1!(SegmenterData);
    impl_segmenter_break_word_override_v1!(SegmenterData);
    impl_segmenter_break_grapheme_cluster_v1!(SegmenterData);
    impl_segmenter_dictionary_auto_v2!(SegmenterData);
    impl_segmenter_dictionary_extended_v2!(SegmenterData);
}

/// The segmenter with the dictionaries of the four scripts.
fn word_segmenter() -> icu_segmenter::WordSegmenter {
    icu_segmenter::WordSegmenter::try_new_dictionary_unstable(
        &data::SegmenterData,
        icu_segmenter::options::WordBreakOptions::default(),
    )
    .expect("the baked segmentation data holds every marker the word segmenter loads")
}

/// Calls `emit` with every word the word segmenter finds in `text` (a stretch of a segmented
/// script), with its byte offset. Words start with a letter or digit, so that every word lies
/// inside a run wherever its text occurs (the term index relies on it).
///
/// The segmenter (rules plus the dictionaries of Thai, Lao, Khmer and Burmese) is set up the
/// first time a process meets such a stretch, never before: a process that only sees other
/// scripts never touches its data.
pub(crate) fn for_each_segmented_word<'t>(text: &'t str, mut emit: impl FnMut(usize, &'t str)) {
    let segmenter = SEGMENTER.get_or_init(word_segmenter).as_borrowed();
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

#[cfg(test)]
mod tests {
    use unicode_script::{Script, UnicodeScript as _};

    use super::super::class::{CJK, CONTINUES, STARTS, class_by_tables};

    #[test]
    fn han_and_kana_never_reach_the_segmenter() {
        // The data holds no Chinese and Japanese dictionary. A stretch handed to the segmenter
        // is letters of its four scripts plus characters that continue a run without starting
        // one; no such character may be Han or kana (CJK characters end a run).
        let reaching: Vec<char> = ('\0'..=char::MAX)
            .filter(|&c| {
                let class = class_by_tables(c);
                class & CONTINUES != 0 && class & STARTS == 0 && class & CJK == 0
            })
            .filter(|c| {
                matches!(
                    c.script(),
                    Script::Han | Script::Hiragana | Script::Katakana
                )
            })
            .take(10)
            .collect();
        assert!(reaching.is_empty(), "{reaching:?}");
    }
}
