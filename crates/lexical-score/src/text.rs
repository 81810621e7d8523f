//! Text normalisation and the token scanner shared by queries and documents.
//!
//! The scanner walks `char`s of already-normalised text and hands out slices of it, so producing a
//! token never allocates (the tantivy habit of one buffer, many tokens).

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};
use unicode_script::{Script, UnicodeScript};

/// Minimum number of code points of a non-CJK run for it to count as a token.
const MIN_RUN_CHARS: usize = 3;

/// NFKC, then lowercase: the one normal form every comparison in this crate uses.
pub(crate) fn normalize(text: &str) -> String {
    if text.is_ascii() {
        // ASCII is invariant under NFKC, so only case needs folding.
        return text.to_ascii_lowercase();
    }
    if is_nfkc_quick(text.chars()) == IsNormalized::Yes {
        return text.to_lowercase();
    }
    text.nfkc().collect::<String>().to_lowercase()
}

/// Whether `c` belongs to the CJK class: scripts Han, Hiragana, Hangul, or any character whose
/// script extensions include Katakana (which brings in `ー` and CJK punctuation such as `、。「」・`).
pub(crate) fn is_cjk(c: char) -> bool {
    // Below the Hangul Jamo block only two combining marks list Katakana among their script
    // extensions; answering there without table look-ups keeps Latin, Greek and Cyrillic text on a
    // fast path (checked exhaustively by a unit test). NFKC composes these marks with any base
    // letter that has a precomposed form, so they rarely survive inside Latin words.
    if c < '\u{1100}' {
        return matches!(c, '\u{0305}' | '\u{0323}');
    }
    is_cjk_by_tables(c)
}

fn is_cjk_by_tables(c: char) -> bool {
    if matches!(c.script(), Script::Han | Script::Hiragana | Script::Hangul) {
        return true;
    }
    // Common and Inherited extensions report containing every script; only an explicit list that
    // names Katakana counts.
    let extension = c.script_extension();
    !extension.is_common()
        && !extension.is_inherited()
        && extension.contains_script(Script::Katakana)
}

/// Whether `c` is a letter (`\p{L}`).
///
/// `char::is_alphabetic` is the Unicode `Alphabetic` property: letters plus letter numbers, some
/// marks and a few enclosed letters (general category `So`). Marks are handled separately and the
/// enclosed letters are not letters, so both are taken out here.
fn is_letter(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphabetic();
    }
    c.is_alphabetic()
        && !is_combining_mark(c)
        && !matches!(
            c,
            '\u{24B6}'..='\u{24E9}'
                | '\u{1F130}'..='\u{1F149}'
                | '\u{1F150}'..='\u{1F169}'
                | '\u{1F170}'..='\u{1F189}'
        )
}

/// Whether `c` may start a non-CJK run: a letter or a digit (`\p{N}`), never CJK.
fn starts_run(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    !is_cjk(c) && (is_letter(c) || c.is_numeric())
}

/// Whether `c` may continue a non-CJK run: a letter, a mark (`\p{M}`) or a digit, never CJK.
fn continues_run(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    !is_cjk(c) && (is_letter(c) || is_combining_mark(c) || c.is_numeric())
}

/// Whether `c` can be part of an identifier-like word, for whole-word alias matching.
pub(crate) fn is_word_char(c: char) -> bool {
    c == '_' || continues_run(c)
}

/// Calls `emit` with every token of already-normalised text, in text order, duplicates kept.
///
/// CJK runs yield their code-point bigrams (a lone CJK character yields nothing); other runs start
/// with a letter or digit, continue with letters, marks and digits, and count from three code
/// points.
pub(crate) fn for_each_token<'t>(normalized: &'t str, mut emit: impl FnMut(&'t str)) {
    for_each_token_at(normalized, |_, token| emit(token));
}

/// Like [`for_each_token`], also passing each token's byte offset in `normalized`.
pub(crate) fn for_each_token_at<'t>(normalized: &'t str, mut emit: impl FnMut(usize, &'t str)) {
    // Byte offset and code-point length of the non-CJK run in progress.
    let mut run: Option<(usize, usize)> = None;
    // Byte offset of the previous character when it was CJK.
    let mut previous_cjk: Option<usize> = None;

    for (at, c) in normalized.char_indices() {
        if is_cjk(c) {
            finish_run(normalized, run.take(), at, &mut emit);
            if let Some((start, bigram)) = previous_cjk
                .and_then(|start| Some((start, normalized.get(start..at + c.len_utf8())?)))
            {
                emit(start, bigram);
            }
            previous_cjk = Some(at);
            continue;
        }
        previous_cjk = None;
        match &mut run {
            Some((_, chars)) if continues_run(c) => *chars += 1,
            _ => {
                finish_run(normalized, run.take(), at, &mut emit);
                if starts_run(c) {
                    run = Some((at, 1));
                }
            }
        }
    }
    finish_run(normalized, run, normalized.len(), &mut emit);
}

/// Emits the run that ends at byte `end` when it is long enough to be a token.
fn finish_run<'t>(
    normalized: &'t str,
    run: Option<(usize, usize)>,
    end: usize,
    emit: &mut impl FnMut(usize, &'t str),
) {
    if let Some((start, chars)) = run
        && chars >= MIN_RUN_CHARS
        && let Some(token) = normalized.get(start..end)
    {
        emit(start, token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_fast_path_agrees_with_the_script_tables_below_hangul_jamo() {
        let disagreeing: Vec<char> = ('\0'..'\u{1100}')
            .filter(|&c| is_cjk(c) != is_cjk_by_tables(c))
            .collect();
        assert!(disagreeing.is_empty(), "{disagreeing:?}");
    }

    #[test]
    fn enclosed_letters_are_not_letters() {
        assert!(!is_letter('\u{24B6}'));
        assert!(is_letter('é'));
    }

    #[test]
    fn combining_marks_continue_but_do_not_start_a_run() {
        assert!(!starts_run('\u{0301}'));
        assert!(continues_run('\u{0301}'));
    }
}
