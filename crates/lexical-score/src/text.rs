//! Text normalisation and the token scanner shared by queries and documents.
//!
//! The scanner walks already-normalised text and hands out slices of it, so producing a token
//! never allocates (the tantivy habit of one buffer, many tokens).
//!
//! Both normalisation and scanning ask the same questions of every character (is it CJK, may it
//! start or continue a run, can it change under NFKC or lowercasing). The answers come from the
//! Unicode tables, but for the characters memory notes are mostly written in (ASCII, the other
//! two-byte UTF-8 scripts, general punctuation and arrows, CJK punctuation and kana, Han and
//! Hangul syllables) they are looked up in one small table of those same answers, written out in
//! `class_table.rs` (no process computes it) and checked exhaustively by unit tests. ASCII text skips all of it: it is lowercased bytewise and tokenized
//! as runs of `[a-z0-9]`, and so are the ASCII stretches of other text, found eight bytes at a
//! time.

use unicode_normalization::char::{canonical_combining_class, is_combining_mark};
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};
use unicode_script::{Script, UnicodeScript};

use crate::class_table::CLASS_TABLE;

/// Minimum number of code points of a non-CJK run for it to count as a token.
const MIN_RUN_CHARS: usize = 3;

/// Class bit: the character belongs to the CJK class.
const CJK: u8 = 1;
/// Class bit: the character may start a non-CJK run.
const STARTS: u8 = 2;
/// Class bit: the character may continue a non-CJK run.
const CONTINUES: u8 = 4;
/// Class bit: NFKC quick check says yes and the canonical combining class is 0, so the character
/// can neither make a text non-normalised nor take part in reordering.
const NFKC_STARTER: u8 = 8;
/// Class bit: lowercasing leaves the character as it is.
const CASELESS: u8 = 16;
/// Class bit: the character belongs to a script written without spaces between words that the
/// word segmenter splits (Thai, Lao, Khmer, Myanmar). No character of the class table has it.
const SEGMENTED: u8 = 32;

/// Minimum number of code points of a segmented word for it to count as a token.
const MIN_SEGMENTED_WORD_CHARS: usize = 2;

/// The class of every Han ideograph in U+4E00..=U+9FFF and Hangul syllable in U+AC00..=U+D7A3.
const HAN_OR_HANGUL: u8 = CJK | NFKC_STARTER | CASELESS;
/// First code point of the second table range (general punctuation, currency and letterlike
/// symbols, number forms, arrows, mathematical operators: the dashes, curly quotes, ellipses and
/// arrows English notes are full of).
const PUNCTUATION_START: u32 = 0x2000;
const PUNCTUATION_END: u32 = 0x2300;
/// First code point of the third table range (CJK punctuation, Hiragana, Katakana).
const KANA_START: u32 = 0x3000;
/// Code points covered by each of the three table ranges.
const LOW_END: u32 = 0x800;
const KANA_END: u32 = 0x3100;
/// Where the second and third ranges start in the table.
const PUNCTUATION_AT: u32 = LOW_END;
const KANA_AT: u32 = PUNCTUATION_AT + (PUNCTUATION_END - PUNCTUATION_START);

/// Entries of the class table: U+0000..U+07FF, U+2000..U+22FF and U+3000..U+30FF, in that order.
pub(crate) const CLASS_TABLE_LEN: usize =
    (LOW_END + (PUNCTUATION_END - PUNCTUATION_START) + (KANA_END - KANA_START)) as usize;

/// The class table as the Unicode tables give it (see [`CLASS_TABLE`], which is this, written
/// out so that no process spends the half millisecond computing it before its first recall).
#[cfg(test)]
fn class_table_from_unicode() -> Vec<u8> {
    (0..LOW_END)
        .chain(PUNCTUATION_START..PUNCTUATION_END)
        .chain(KANA_START..KANA_END)
        .map(|code| char::from_u32(code).map_or(0, class_by_tables))
        .collect()
}

/// The class bits of `c`, from the table where it covers `c`.
fn class_in(table: &[u8], c: char) -> u8 {
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
fn class_by_tables(c: char) -> u8 {
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
fn is_segmented_script(c: char) -> bool {
    // Every character of these scripts lies above U+0E00; below it, no script look-up.
    c >= '\u{E00}'
        && matches!(
            c.script(),
            Script::Thai | Script::Lao | Script::Khmer | Script::Myanmar
        )
}

/// NFKC, then lowercase: the one normal form every comparison in this crate uses.
pub(crate) fn normalize(text: &str) -> String {
    let mut normalized = String::with_capacity(text.len());
    normalize_into(text, &mut normalized);
    normalized
}

/// Appends the normal form of `text` (see [`normalize`]) to `out`.
pub(crate) fn normalize_into(text: &str, out: &mut String) {
    let start = out.len();
    if text.is_ascii() {
        // ASCII is invariant under NFKC, so only case needs folding.
        out.push_str(text);
        if let Some(appended) = out.get_mut(start..) {
            appended.make_ascii_lowercase();
        }
        return;
    }
    if lowercase_if_nfkc(text, out) {
        return;
    }
    out.truncate(start);
    if is_nfkc_quick(text.chars()) == IsNormalized::Yes {
        out.push_str(&text.to_lowercase());
    } else {
        out.push_str(&text.nfkc().collect::<String>().to_lowercase());
    }
}

/// One pass doing the NFKC quick check and lowercasing: appends `text` lowercased and returns
/// true when the quick check says `text` is already NFKC; returns false (with `out` partly
/// written) when it is not or may not be, or when a capital sigma needs `str::to_lowercase`'s
/// word-final rule.
///
/// ASCII stretches are copied whole and lowercased in place: no character is decoded there.
fn lowercase_if_nfkc(text: &str, out: &mut String) -> bool {
    let table: &[u8] = &CLASS_TABLE;
    let mut last_class = 0u8;
    let mut rest = text;
    while !rest.is_empty() {
        let ascii = ascii_prefix_len(rest.as_bytes());
        // An ASCII stretch ends at a character boundary, so the split always succeeds.
        if ascii > 0
            && let Some((stretch, after)) = rest.split_at_checked(ascii)
        {
            let start = out.len();
            out.push_str(stretch);
            if let Some(appended) = out.get_mut(start..) {
                appended.make_ascii_lowercase();
            }
            last_class = 0;
            rest = after;
        }
        let mut chars = rest.chars();
        let Some(c) = chars.next() else {
            break;
        };
        rest = chars.as_str();
        let class = class_in(table, c);
        if class & NFKC_STARTER == 0 {
            // The quick check of UAX #15, as `is_nfkc_quick` runs it.
            let combining = canonical_combining_class(c);
            if (last_class > combining && combining != 0)
                || is_nfkc_quick(std::iter::once(c)) != IsNormalized::Yes
            {
                return false;
            }
            last_class = combining;
        } else {
            last_class = 0;
        }
        if class & CASELESS != 0 {
            out.push(c);
        } else if c == '\u{3A3}' {
            return false;
        } else {
            out.extend(c.to_lowercase());
        }
    }
    true
}

/// Whether `c` belongs to the CJK class: scripts Han, Hiragana, Hangul, or any character whose
/// script extensions include Katakana (which brings in `ー` and CJK punctuation such as `、。「」・`).
pub(crate) fn is_cjk(c: char) -> bool {
    class_in(&CLASS_TABLE, c) & CJK != 0
}

/// [`is_cjk`] without the class table.
fn is_cjk_without_table(c: char) -> bool {
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
    !is_cjk_without_table(c) && (is_letter(c) || c.is_numeric())
}

/// Whether `c` may continue a non-CJK run: a letter, a mark (`\p{M}`) or a digit, never CJK.
fn continues_run(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric();
    }
    !is_cjk_without_table(c) && (is_letter(c) || is_combining_mark(c) || c.is_numeric())
}

/// Whether `c` can be part of an identifier-like word, for whole-word alias matching.
pub(crate) fn is_word_char(c: char) -> bool {
    c == '_' || class_in(&CLASS_TABLE, c) & CONTINUES != 0
}

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
    /// The tokens under the previous release's rules: runs of the segmented scripts are whole
    /// tokens like any other run.
    Unsegmented,
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

/// The tokens of ASCII text: runs of ASCII letters and digits of at least three bytes, which is
/// what the general scanner yields on ASCII (no ASCII character is CJK or a mark).
///
/// Works on 64 bytes at a time: one bit mask of the letters and digits, then one step per run
/// start and run end, so there is no branch per byte to mispredict at every word boundary.
pub(crate) fn for_each_ascii_token<'t>(text: &'t str, emit: &mut impl FnMut(usize, &'t str)) {
    // Start of the run in progress, possibly begun in an earlier block.
    let mut open: Option<usize> = None;
    for (block_index, block) in text.as_bytes().chunks(64).enumerate() {
        let base = block_index * 64;
        let mut mask = 0u64;
        // Whole words are plain loads; only a partial last word is copied into a zeroed one.
        let mut words = block.chunks_exact(8);
        let mut shift = 0;
        for word in &mut words {
            let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
            mask |= alphanumeric_bits(word) << shift;
            shift += 8;
        }
        if !words.remainder().is_empty() {
            let mut last = [0u8; 8];
            if let Some(head) = last.get_mut(..words.remainder().len()) {
                head.copy_from_slice(words.remainder());
            }
            mask |= alphanumeric_bits(u64::from_le_bytes(last)) << shift;
        }
        let before = (mask << 1) | u64::from(open.is_some());
        let mut starts = mask & !before;
        // Bits past a short final block are clear, so a run reaching the end of the text ends
        // there; a run reaching the end of a full block carries over to the next.
        let mut ends = !mask & before;
        loop {
            if let Some(start) = open {
                if ends == 0 {
                    break;
                }
                let end = base + ends.trailing_zeros() as usize;
                ends &= ends - 1;
                open = None;
                if end - start >= MIN_RUN_CHARS
                    && let Some(token) = text.get(start..end)
                {
                    emit(start, token);
                }
            } else {
                if starts == 0 {
                    break;
                }
                open = Some(base + starts.trailing_zeros() as usize);
                starts &= starts - 1;
            }
        }
    }
    if let Some(start) = open
        && text.len() - start >= MIN_RUN_CHARS
        && let Some(token) = text.get(start..)
    {
        emit(start, token);
    }
}

/// A one in every byte of a word.
const ONES: u64 = 0x0101_0101_0101_0101;
/// The high bit of every byte of a word: set in a byte exactly when it is not ASCII.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The eight bytes of `bytes` from `at` as a little-endian word, if there are eight.
fn word_at(bytes: &[u8], at: usize) -> Option<u64> {
    let word: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(word))
}

/// The length of the ASCII prefix of `bytes`, found eight bytes at a time.
fn ascii_prefix_len(bytes: &[u8]) -> usize {
    let mut len = 0;
    while let Some(word) = word_at(bytes, len) {
        let high = word & HIGH;
        if high != 0 {
            return len + high.trailing_zeros() as usize / 8;
        }
        len += 8;
    }
    len + bytes
        .get(len..)
        .unwrap_or_default()
        .iter()
        .take_while(|byte| byte.is_ascii())
        .count()
}

/// The length of the prefix of `bytes` made of ASCII letters and digits, found eight bytes at a
/// time.
fn alphanumeric_prefix_len(bytes: &[u8]) -> usize {
    let mut len = 0;
    while let Some(word) = word_at(bytes, len) {
        // Bytes from the first non-ASCII one on are cleared: they are neither letters nor digits,
        // and cleared, they cannot make `alphanumeric_bits`'s sums carry.
        let high = word & HIGH;
        let ascii = if high == 0 {
            word
        } else {
            word & ((1u64 << (high.trailing_zeros() - 7)) - 1)
        };
        let run = alphanumeric_bits(ascii).trailing_ones() as usize;
        len += run;
        if run < 8 {
            return len;
        }
    }
    len + bytes
        .get(len..)
        .unwrap_or_default()
        .iter()
        .take_while(|byte| byte.is_ascii_alphanumeric())
        .count()
}

/// One bit per byte of eight ASCII bytes (lowest byte, lowest bit): whether it is an ASCII letter
/// or digit. Zero bytes (padding) are neither.
fn alphanumeric_bits(word: u64) -> u64 {
    // With every byte below 0x80, adding 0x80 - c sets a byte's high bit exactly when the byte
    // is at least c, and no sum carries into the next byte.
    let at_least = |word: u64, c: u8| word + ONES * u64::from(0x80 - c);
    let digit = at_least(word, b'0') & !at_least(word, b'9' + 1);
    let folded = word | (ONES * 0x20);
    let letter = at_least(folded, b'a') & !at_least(folded, b'z' + 1);
    // Gather the eight high bits into the top byte, then bring them down.
    (((digit | letter) & HIGH) >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

/// The scanner for any normalised text; see [`for_each_token`]. Text that is not all ASCII is
/// mostly ASCII still (an English note with one dash or accented name), so ASCII bytes take a
/// path of their own: no decoding and no class look-up, a whole stretch of letters and digits at
/// a time. Other characters are decoded and classed through the class table.
pub(crate) fn for_each_general_token<'t>(
    normalized: &'t str,
    mode: Scan,
    emit: &mut impl FnMut(usize, &'t str),
) {
    let table: &[u8] = &CLASS_TABLE;
    let bytes = normalized.as_bytes();
    // The non-CJK run (or the stretch of one) in progress.
    let mut run: Option<Run> = None;
    // Byte offset of the previous character when it was CJK.
    let mut previous_cjk: Option<usize> = None;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        if byte.is_ascii() {
            // Never CJK; a letter or digit starts or continues a run, anything else ends it.
            previous_cjk = None;
            if byte.is_ascii_alphanumeric() {
                let stretch = alphanumeric_prefix_len(bytes.get(at..).unwrap_or_default());
                match &mut run {
                    Some(open) if !open.segmented => open.chars += stretch,
                    _ => {
                        finish_run(normalized, run.take(), at, mode, emit);
                        run = Some(Run::new(at, stretch, false));
                    }
                }
                at += stretch;
            } else {
                finish_run(normalized, run.take(), at, mode, emit);
                at += 1;
            }
            continue;
        }
        let Some(c) = normalized.get(at..).and_then(|rest| rest.chars().next()) else {
            break;
        };
        let class = class_in(table, c);
        let next = at + c.len_utf8();
        if class & CJK != 0 {
            finish_run(normalized, run.take(), at, mode, emit);
            if let Some((start, bigram)) =
                previous_cjk.and_then(|start| Some((start, normalized.get(start..next)?)))
            {
                emit(start, bigram);
            }
            previous_cjk = Some(at);
        } else {
            previous_cjk = None;
            let segmented = mode != Scan::Unsegmented && class & SEGMENTED != 0;
            match &mut run {
                // A letter or digit of another kind of script starts a stretch of its own.
                Some(open)
                    if class & CONTINUES != 0
                        && (open.segmented == segmented || class & STARTS == 0) =>
                {
                    open.chars += 1;
                }
                _ => {
                    finish_run(normalized, run.take(), at, mode, emit);
                    if class & STARTS != 0 {
                        run = Some(Run::new(at, 1, segmented));
                    }
                }
            }
        }
        at = next;
    }
    finish_run(normalized, run, normalized.len(), mode, emit);
}

/// A run of the general scanner in progress: where it starts, its length in code points, and
/// whether it is a stretch of a segmented script.
#[derive(Debug, Clone, Copy)]
struct Run {
    start: usize,
    chars: usize,
    segmented: bool,
}

impl Run {
    fn new(start: usize, chars: usize, segmented: bool) -> Self {
        Self {
            start,
            chars,
            segmented,
        }
    }
}

/// Emits what the run that ends at byte `end` yields: itself when it is long enough to be a
/// token, or, for a stretch of a segmented script, its words (see [`for_each_token`]).
fn finish_run<'t>(
    normalized: &'t str,
    run: Option<Run>,
    end: usize,
    mode: Scan,
    emit: &mut impl FnMut(usize, &'t str),
) {
    let Some(run) = run else {
        return;
    };
    if run.segmented {
        finish_segmented_run(normalized, run.start, end, mode, emit);
    } else if run.chars >= MIN_RUN_CHARS
        && let Some(text) = normalized.get(run.start..end)
    {
        emit(run.start, text);
    }
}

/// [`finish_run`] for a stretch of a segmented script: the stretch itself when `mode` asks for
/// index terms, then its words of at least two code points. Kept out of line, so that the scan
/// of other scripts stays as tight as before segmentation.
#[inline(never)]
fn finish_segmented_run<'t>(
    normalized: &'t str,
    start: usize,
    end: usize,
    mode: Scan,
    emit: &mut impl FnMut(usize, &'t str),
) {
    let Some(text) = normalized.get(start..end) else {
        return;
    };
    if mode == Scan::IndexTerms {
        emit(start, text);
    }
    for_each_segmented_word(text, |offset, word| {
        if word.chars().nth(MIN_SEGMENTED_WORD_CHARS - 1).is_some() {
            emit(start + offset, word);
        }
    });
}

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
fn for_each_segmented_word<'t>(text: &'t str, mut emit: impl FnMut(usize, &'t str)) {
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
             `cargo test -p lexical-score --lib -- --ignored write_the_class_table`"
        );
    }

    /// Writes `class_table.rs` from the Unicode tables (see the test above).
    #[test]
    #[ignore = "rewrites a source file; run by hand after a Unicode update"]
    fn write_the_class_table() {
        use std::fmt::Write as _;
        let mut source = String::from(CLASS_TABLE_HEADER);
        source.push_str("#[rustfmt::skip]\n");
        source.push_str("pub(crate) static CLASS_TABLE: [u8; crate::text::CLASS_TABLE_LEN] = [\n");
        for line in class_table_from_unicode().chunks(16) {
            let entries: Vec<String> = line.iter().map(|class| format!("{class:>2},")).collect();
            writeln!(source, "    {}", entries.join(" ")).unwrap();
        }
        source.push_str("];\n");
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/class_table.rs");
        std::fs::write(path, source).unwrap();
    }

    const CLASS_TABLE_HEADER: &str = "\
//! The class table of the `text` module, written out: the class bits of U+0000..U+07FF,
//! U+2000..U+22FF and U+3000..U+30FF, in that order. Generated from the Unicode tables by
//! `cargo test -p lexical-score --lib -- --ignored write_the_class_table`; a unit test checks
//! that it is still what they give.

";

    #[test]
    fn the_class_table_agrees_with_the_unicode_tables_for_every_character() {
        let table: &[u8] = &CLASS_TABLE;
        let disagreeing: Vec<char> = ('\0'..=char::MAX)
            .filter(|&c| class_in(table, c) != class_by_tables(c))
            .take(10)
            .collect();
        assert!(disagreeing.is_empty(), "{disagreeing:?}");
    }

    /// ASCII text with, here and there, the non-ASCII characters English notes carry (dashes,
    /// curly quotes, accented letters, a combining accent after an ASCII letter, a ligature that
    /// NFKC expands, Greek capitals including sigma) and a little CJK and kana.
    const MOSTLY_ASCII: &str = "([ -~\\t\\n]|[ -~]{1,12}|—|’|é|É|ñ|\u{301}|ﬁ|Σ|ΟΔΟΣ|ß|İ|日本語|カタカナ|ー|한국어|Ⅻ|①){0,80}";

    /// Normalisation as specified, without fast paths.
    fn reference_normalize(text: &str) -> String {
        text.nfkc().collect::<String>().to_lowercase()
    }

    /// The scanner as specified before word segmentation, one character at a time, straight
    /// from the Unicode tables.
    fn reference_tokens(normalized: &str) -> Vec<(usize, String)> {
        fn finish_run(
            normalized: &str,
            run: Option<(usize, usize)>,
            end: usize,
            emit: &mut impl FnMut(usize, &str),
        ) {
            if let Some((start, chars)) = run
                && chars >= MIN_RUN_CHARS
            {
                emit(start, &normalized[start..end]);
            }
        }
        let mut tokens = Vec::new();
        let mut emit = |at: usize, token: &str| tokens.push((at, token.to_owned()));
        let mut run: Option<(usize, usize)> = None;
        let mut previous_cjk: Option<usize> = None;
        for (at, c) in normalized.char_indices() {
            let class = class_by_tables(c);
            if class & CJK != 0 {
                finish_run(normalized, run.take(), at, &mut emit);
                if let Some(start) = previous_cjk {
                    emit(start, &normalized[start..at + c.len_utf8()]);
                }
                previous_cjk = Some(at);
                continue;
            }
            previous_cjk = None;
            match &mut run {
                Some((_, chars)) if class & CONTINUES != 0 => *chars += 1,
                _ => {
                    finish_run(normalized, run.take(), at, &mut emit);
                    if class & STARTS != 0 {
                        run = Some((at, 1));
                    }
                }
            }
        }
        finish_run(normalized, run, normalized.len(), &mut emit);
        tokens
    }

    fn tokens(normalized: &str) -> Vec<(usize, String)> {
        let mut tokens = Vec::new();
        for_each_token_at(normalized, |at, token| tokens.push((at, token.to_owned())));
        tokens
    }

    fn unsegmented_tokens(normalized: &str) -> Vec<(usize, String)> {
        let mut tokens = Vec::new();
        scan(normalized, Scan::Unsegmented, |at, token| {
            tokens.push((at, token.to_owned()));
        });
        tokens
    }

    /// `text` with every character of a segmented script replaced by a Latin letter.
    fn without_segmented_scripts(text: &str) -> String {
        text.chars()
            .map(|c| if is_segmented_script(c) { 'x' } else { c })
            .collect()
    }

    #[test]
    fn every_single_character_normalises_as_specified() {
        let disagreeing: Vec<char> = ('\0'..=char::MAX)
            .filter(|&c| {
                let text = format!("A{c}Σ{c}");
                normalize(&text) != reference_normalize(&text)
            })
            .take(10)
            .collect();
        assert!(disagreeing.is_empty(), "{disagreeing:?}");
    }

    #[test]
    fn a_word_final_capital_sigma_lowercases_to_final_sigma() {
        assert_eq!(normalize("ΟΔΟΣ ΟΔΟΣ"), "οδο\u{3C2} οδο\u{3C2}");
    }

    proptest::proptest! {
        #[test]
        fn normalisation_fast_paths_agree_with_the_specification(text in "\\PC*") {
            proptest::prop_assert_eq!(normalize(&text), reference_normalize(&text));
        }

        #[test]
        fn normalisation_fast_paths_agree_on_arbitrary_strings(text in proptest::prelude::any::<String>()) {
            proptest::prop_assert_eq!(normalize(&text), reference_normalize(&text));
        }

        #[test]
        fn normalisation_fast_paths_agree_on_mostly_ascii_text(text in MOSTLY_ASCII) {
            proptest::prop_assert_eq!(normalize(&text), reference_normalize(&text));
        }

        #[test]
        fn the_scanner_agrees_with_the_specification_on_mostly_ascii_text(text in MOSTLY_ASCII) {
            let normalized = normalize(&text);
            proptest::prop_assert_eq!(tokens(&normalized), reference_tokens(&normalized));
            proptest::prop_assert_eq!(tokens(&text), reference_tokens(&text));
        }

        #[test]
        fn the_ascii_scanner_agrees_with_the_specification(text in "[ -~\\t\\n]{0,200}") {
            let normalized = normalize(&text);
            proptest::prop_assert_eq!(tokens(&normalized), reference_tokens(&normalized));
            proptest::prop_assert_eq!(tokens(&text), reference_tokens(&text));
        }

        #[test]
        fn text_without_thai_lao_khmer_or_myanmar_tokenizes_as_before_segmentation(text in proptest::prelude::any::<String>()) {
            let text = without_segmented_scripts(&text);
            let normalized = normalize(&text);
            proptest::prop_assume!(!normalized.chars().any(is_segmented_script));
            proptest::prop_assert_eq!(tokens(&normalized), reference_tokens(&normalized));
            proptest::prop_assert_eq!(tokens(&text), reference_tokens(&text));
        }

        #[test]
        fn the_unsegmented_scanner_agrees_with_the_specification_before_segmentation(text in proptest::prelude::any::<String>()) {
            let normalized = normalize(&text);
            proptest::prop_assert_eq!(unsegmented_tokens(&normalized), reference_tokens(&normalized));
        }

        #[test]
        fn every_segmented_token_is_a_slice_of_the_text_at_its_offset(
            text in "([a-z0-9 ]{1,6}|[ก-๙]{1,12}|[ກ-ໝ]{1,8}|[ក-៩]{1,8}|[က-႙]{1,8}|\\u{301}|日本){0,20}"
        ) {
            let normalized = normalize(&text);
            for (at, token) in tokens(&normalized) {
                proptest::prop_assert_eq!(normalized.get(at..at + token.len()), Some(token.as_str()));
            }
        }
    }

    #[test]
    fn alphanumeric_bits_agree_with_the_byte_test_for_every_ascii_byte() {
        for byte in 0..0x80u8 {
            for lane in 0..8 {
                let word =
                    u64::from(byte) << (8 * lane) | 0x2020_2020_2020_2020 & !(0xFF << (8 * lane));
                let expected = u64::from(byte.is_ascii_alphanumeric()) << lane;
                assert_eq!(
                    alphanumeric_bits(word),
                    expected,
                    "byte {byte:#x} in lane {lane}"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn prefix_lengths_found_by_word_equal_those_found_byte_by_byte(
            text in "([a-zA-Z0-9]{1,20}|[ -~]|é|—|日本){0,30}"
        ) {
            let bytes = text.as_bytes();
            for start in 0..bytes.len().min(40) {
                let rest = &bytes[start..];
                proptest::prop_assert_eq!(
                    ascii_prefix_len(rest),
                    rest.iter().take_while(|byte| byte.is_ascii()).count()
                );
                proptest::prop_assert_eq!(
                    alphanumeric_prefix_len(rest),
                    rest.iter().take_while(|byte| byte.is_ascii_alphanumeric()).count()
                );
            }
        }
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
