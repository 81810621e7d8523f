//! Normalisation and both scanners checked against their specification: reference versions
//! without fast paths, straight from the Unicode tables.

use unicode_normalization::UnicodeNormalization;

use super::class::{CJK, CONTINUES, STARTS, class_by_tables, is_segmented_script};
use super::{MIN_RUN_CHARS, Scan, for_each_token_at, normalize, scan};

/// ASCII text with, here and there, the non-ASCII characters English notes carry (dashes,
/// curly quotes, accented letters, a combining accent after an ASCII letter, a ligature that
/// NFKC expands, Greek capitals including sigma) and a little CJK and kana.
const MOSTLY_ASCII: &str =
    "([ -~\\t\\n]|[ -~]{1,12}|—|’|é|É|ñ|\u{301}|ﬁ|Σ|ΟΔΟΣ|ß|İ|日本語|カタカナ|ー|한국어|Ⅻ|①){0,80}";

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
