//! Text normalisation and the token scanners shared by queries and documents.
//!
//! The scanners walk already-normalised text and hand out slices of it, so producing a token
//! never allocates (the tantivy habit of one buffer, many tokens).
//!
//! Both normalisation and scanning ask the same questions of every character (is it CJK, may it
//! start or continue a run, can it change under NFKC or lowercasing). The answers come from the
//! Unicode tables, but for the characters memory notes are mostly written in (ASCII, the other
//! two-byte UTF-8 scripts, general punctuation and arrows, CJK punctuation and kana, Han and
//! Hangul syllables) they are looked up in one small table of those same answers, written out in
//! `class_table.rs` (no process computes it) and checked exhaustively by unit tests. ASCII text
//! skips all of it: it is lowercased bytewise and tokenized as runs of `[a-z0-9]`, and so are the
//! ASCII stretches of other text, found eight bytes at a time.
//!
//! - `class`: the character classes and the generated table behind them;
//! - `normalize`: the normal form (NFKC, then lowercase);
//! - `ascii`: the scanner of all-ASCII text and the byte tests shared with the others;
//! - `general`: the scanner of any text;
//! - `segmenter`: the word segmenter of Thai, Lao, Khmer and Myanmar runs.

mod ascii;
mod class;
mod class_table;
mod general;
mod normalize;
mod segmenter;
#[cfg(test)]
mod tests;

pub(crate) use ascii::for_each_ascii_token;
#[cfg(feature = "class-table")]
pub(crate) use class::class_table_source;
pub(crate) use class::{is_cjk, is_word_char};
pub(crate) use general::for_each_general_token;
pub(crate) use normalize::{normalize, normalize_into};
pub(crate) use segmenter::segmenter_is_set_up;

/// Minimum number of code points of a non-CJK run for it to count as a token.
const MIN_RUN_CHARS: usize = 3;

/// What the general scanner hands out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scan {
    /// The tokens: runs of the segmented scripts split into words by the word segmenter.
    Tokens,
    /// The tokens, and before the words of each run of a segmented script the run itself: what a
    /// document's term index is built from, so that its trigram signature holds every trigram of
    /// such a run and never rules out a word found in the run where a segmenter split it
    /// otherwise (see the `index` module).
    IndexTerms,
    /// The tokens under the unsegmented baseline's rules (see
    /// `docs/spec.md#the-unsegmented-baseline`): runs of the segmented scripts are whole tokens
    /// like any other run.
    #[cfg(any(test, feature = "measurement"))]
    Unsegmented,
}

impl Scan {
    /// Whether runs of the segmented scripts are split into words.
    fn segments(self) -> bool {
        match self {
            Self::Tokens | Self::IndexTerms => true,
            #[cfg(any(test, feature = "measurement"))]
            Self::Unsegmented => false,
        }
    }
}

/// Calls `emit` with every token of already-normalised text, in text order, duplicates kept.
///
/// CJK runs yield their code-point bigrams (a lone CJK character yields nothing); other runs start
/// with a letter or digit, continue with letters, marks and digits, and count from three code
/// points. Within a run, the stretches of Thai, Lao, Khmer and Myanmar letters (each starting at
/// a letter or digit of those scripts and ending before a letter or digit of another script) are
/// split into words by the word segmenter, and each word of at least two code points is a token.
pub(crate) fn for_each_token<'t>(normalized: &'t str, mut emit: impl FnMut(&'t str)) {
    for_each_token_at(normalized, |_, token| emit(token));
}

/// Like [`for_each_token`], also passing each token's byte offset in `normalized`.
pub(crate) fn for_each_token_at<'t>(normalized: &'t str, emit: impl FnMut(usize, &'t str)) {
    scan(normalized, Scan::Tokens, emit);
}

/// Calls `emit` with what `mode` asks for (see [`Scan`]), in text order, with byte offsets.
pub(crate) fn scan<'t>(normalized: &'t str, mode: Scan, mut emit: impl FnMut(usize, &'t str)) {
    if normalized.is_ascii() {
        for_each_ascii_token(normalized, &mut emit);
    } else {
        for_each_general_token(normalized, mode, &mut emit);
    }
}
