//! Character classes: the questions the normaliser and the scanners ask of every character (is
//! it CJK, may it start or continue a run, can it change under NFKC or lowercasing, is it of a
//! segmented script), answered from the Unicode tables or, for the characters memory notes are
//! mostly written in, from the generated table in `class_table.rs`.

use unicode_normalization::char::{canonical_combining_class, is_combining_mark};
use unicode_normalization::{IsNormalized, is_nfkc_quick};
use unicode_script::{Script, UnicodeScript};

pub(crate) use super::class_table::CLASS_TABLE;

/// Class bit: the character belongs to the CJK class.
pub(crate) const CJK: u8 = 1;
/// Class bit: the character may start a non-CJK run.
pub(crate) const STARTS: u8 = 2;
/// Class bit: the character may continue a non-CJK run.
pub(crate) const CONTINUES: u8 = 4;
/// Class bit: NFKC quick check says yes and the canonical combining class is 0, so the character
/// can neither make a text non-normalised nor take part in reordering.
pub(crate) const NFKC_STARTER: u8 = 8;
/// Class bit: lowercasing leaves the character as it is.
pub(crate) const CASELESS: u8 = 16;
/// Class bit: the character belongs to a script written without spaces between words that the
/// word segmenter splits (Thai, Lao, Khmer, Myanmar). No character of the class table has it.
pub(crate) const SEGMENTED: u8 = 32;

/// The class of every Han ideograph in U+4E00..=U+9FFF and Hangul syllable in U+AC00..=U+D7A3.
pub(crate) const HAN_OR_HANGUL: u8 = CJK | NFKC_STARTER | CASELESS;
/// First code point of the second table range (general punctuation, currency and letterlike
/// symbols, number forms, arrows, mathematical operators: the dashes, curly quotes, ellipses and
/// arrows English notes are full of).
pub(crate) const PUNCTUATION_START: u32 = 0x2000;
pub(crate) const PUNCTUATION_END: u32 = 0x2300;
/// First code point of the third table range (CJK punctuation, Hiragana, Katakana).
pub(crate) const KANA_START: u32 = 0x3000;
/// Code points covered by each of the three table ranges.
pub(crate) const LOW_END: u32 = 0x800;
pub(crate) const KANA_END: u32 = 0x3100;
/// Where the second and third ranges start in the table.
pub(crate) const PUNCTUATION_AT: u32 = LOW_END;
pub(crate) const KANA_AT: u32 = PUNCTUATION_AT + (PUNCTUATION_END - PUNCTUATION_START);

/// Entries of the class table: U+0000..U+07FF, U+2000..U+22FF and U+3000..U+30FF, in that order.
pub(crate) const CLASS_TABLE_LEN: usize =
    (LOW_END + (PUNCTUATION_END - PUNCTUATION_START) + (KANA_END - KANA_START)) as usize;

// The written-out table names its length as a number, so that it needs nothing of this module.
const _: () = assert!(CLASS_TABLE.len() == CLASS_TABLE_LEN);

/// The class table as the Unicode tables give it (see [`CLASS_TABLE`], which is this, written
/// out so that no process spends the half millisecond computing it before its first recall).
#[cfg(any(test, feature = "class-table"))]
fn class_table_from_unicode() -> Vec<u8> {
    (0..LOW_END)
        .chain(PUNCTUATION_START..PUNCTUATION_END)
        .chain(KANA_START..KANA_END)
        .map(|code| char::from_u32(code).map_or(0, class_by_tables))
        .collect()
}

/// The class bits of `c`, from the table where it covers `c`.
pub(crate) fn class_in(table: &[u8], c: char) -> u8 {
    let code = u32::from(c);
    let slot = if code < LOW_END {
        Some(code)
    } else if (PUNCTUATION_START..PUNCTUATION_END).contains(&code) {
        Some(code - PUNCTUATION_START + PUNCTUATION_AT)
    } else if (KANA_START..KANA_END).contains(&code) {
        Some(code - KANA_START + KANA_AT)
    } else if (0x4E00..=0x9FFF).contains(&code) || (0xAC00..=0xD7A3).contains(&code) {
        return HAN_OR_HANGUL;
    } else {
        None
    };
    slot.and_then(|slot| usize::try_from(slot).ok())
        .and_then(|slot| table.get(slot).copied())
        .unwrap_or_else(|| class_by_tables(c))
}

/// The class bits of `c`, straight from the Unicode tables.
pub(crate) fn class_by_tables(c: char) -> u8 {
    let mut class = 0;
    if is_cjk_by_tables(c) {
        class |= CJK;
    }
    if starts_run(c) {
        class |= STARTS;
    }
    if continues_run(c) {
        class |= CONTINUES;
    }
    if c.is_ascii()
        || (canonical_combining_class(c) == 0
            && is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes)
    {
        class |= NFKC_STARTER;
    }
    let mut lower = c.to_lowercase();
    if lower.next() == Some(c) && lower.next().is_none() {
        class |= CASELESS;
    }
    if is_segmented_script(c) {
        class |= SEGMENTED;
    }
    class
}

/// Whether `c` is of the Thai, Lao, Khmer or Myanmar script: the scripts written without spaces
/// between words whose runs the word segmenter splits.
pub(crate) fn is_segmented_script(c: char) -> bool {
    // Every character of these scripts lies above U+0E00; below it, no script look-up.
    c >= '\u{E00}'
        && matches!(
            c.script(),
            Script::Thai | Script::Lao | Script::Khmer | Script::Myanmar
        )
}

/// Whether `c` belongs to the CJK class: scripts Han, Hiragana, Hangul, or any character whose
/// script extensions include Katakana (which brings in `ー` and CJK punctuation such as `、。「」・`).
pub(crate) fn is_cjk(c: char) -> bool {
    class_in(&CLASS_TABLE, c) & CJK != 0
}

/// [`is_cjk`] without the class table.
pub(crate) fn is_cjk_without_table(c: char) -> bool {
    // Below the Hangul Jamo block only two combining marks list Katakana among their script
    // extensions; answering there without table look-ups keeps Latin, Greek and Cyrillic text on a
    // fast path (checked exhaustively by a unit test). NFKC composes these marks with any base
    // letter that has a precomposed form, so they rarely survive inside Latin words.
    if c < '\u{1100}' {
        return matches!(c, '\u{0305}' | '\u{0323}');
    }
    is_cjk_by_tables(c)
}

pub(crate) fn is_cjk_by_tables(c: char) -> bool {
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
pub(crate) fn is_letter(c: char) -> bool {
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
pub(crate) fn starts_run(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    !is_cjk_without_table(c) && (is_letter(c) || c.is_numeric())
}

/// Whether `c` may continue a non-CJK run: a letter, a mark (`\p{M}`) or a digit, never CJK.
pub(crate) fn continues_run(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    !is_cjk_without_table(c) && (is_letter(c) || is_combining_mark(c) || c.is_numeric())
}

/// Whether `c` can be part of an identifier-like word, for whole-word alias matching.
pub(crate) fn is_word_char(c: char) -> bool {
    c == '_' || class_in(&CLASS_TABLE, c) & CONTINUES != 0
}

/// The first lines of `class_table.rs`, before the table itself.
#[cfg(any(test, feature = "class-table"))]
const CLASS_TABLE_HEADER: &str = "\
//! The class table of the `text::class` module, written out: the class bits of U+0000..U+07FF,
//! U+2000..U+22FF and U+3000..U+30FF, in that order. Generated from the Unicode tables by
//! `cargo xtask class-table`; a unit test checks that it is still what they give.

";

/// The source of `class_table.rs` as the Unicode tables of this build give it.
#[cfg(any(test, feature = "class-table"))]
pub(crate) fn class_table_source() -> String {
    use std::fmt::Write as _;
    let mut source = String::from(CLASS_TABLE_HEADER);
    source.push_str("#[rustfmt::skip]\n");
    // Writing to a `String` cannot fail.
    let _ = writeln!(
        source,
        "pub(crate) static CLASS_TABLE: [u8; {CLASS_TABLE_LEN}] = ["
    );
    for line in class_table_from_unicode().chunks(16) {
        let entries: Vec<String> = line.iter().map(|class| format!("{class:>2},")).collect();
        // Writing to a `String` cannot fail.
        let _ = writeln!(source, "    {}", entries.join(" "));
    }
    source.push_str("];\n");
    source
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_fast_path_agrees_with_the_script_tables_below_hangul_jamo() {
        let disagreeing: Vec<char> = ('\0'..'\u{1100}')
            .filter(|&c| is_cjk_without_table(c) != is_cjk_by_tables(c))
            .collect();
        assert!(disagreeing.is_empty(), "{disagreeing:?}");
    }

    #[test]
    fn the_written_out_class_table_is_the_one_the_unicode_tables_give() {
        let differing: Vec<usize> = class_table_from_unicode()
            .iter()
            .zip(CLASS_TABLE.iter())
            .enumerate()
            .filter(|(_, (computed, written))| computed != written)
            .map(|(at, _)| at)
            .take(10)
            .collect();
        assert!(
            differing.is_empty(),
            "entries {differing:?} differ; after a Unicode update, rewrite the table with \
             `cargo xtask class-table`"
        );
    }

    #[test]
    fn the_committed_class_table_file_is_what_the_generator_writes() {
        assert!(
            include_str!("class_table.rs") == class_table_source(),
            "src/text/class_table.rs is stale; rewrite it with `cargo xtask class-table`"
        );
    }

    #[test]
    fn the_class_table_agrees_with_the_unicode_tables_for_every_character() {
        let table: &[u8] = &CLASS_TABLE;
        let disagreeing: Vec<char> = ('\0'..=char::MAX)
            .filter(|&c| class_in(table, c) != class_by_tables(c))
            .take(10)
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
