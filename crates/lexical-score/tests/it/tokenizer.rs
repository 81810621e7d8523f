//! The tokenizer shared by queries and documents.

use lexical_score::tokenize;

#[test]
fn nfkc_folds_full_width_letters_and_digits() {
    assert_eq!(tokenize("ＡＰＩ　Ｖ２"), ["api"]);
    assert_eq!(tokenize("Ｒｅｌｅａｓｅ２０２６"), ["release2026"]);
}

#[test]
fn nfkc_expands_compatibility_ligatures() {
    assert_eq!(tokenize("ﬁle"), ["file"]);
}

#[test]
fn text_is_lowercased_after_normalisation() {
    assert_eq!(tokenize("DEPLOY Checklist"), ["deploy", "checklist"]);
}

#[test]
fn cyrillic_greek_and_accented_latin_words_become_tokens() {
    assert_eq!(tokenize("Развёртывание"), ["развёртывание"]);
    assert_eq!(tokenize("Ανάπτυξη"), ["ανάπτυξη"]);
    assert_eq!(tokenize("café déjà"), ["café", "déjà"]);
}

#[test]
fn arabic_words_become_tokens() {
    assert_eq!(tokenize("نشر التطبيق"), ["نشر", "التطبيق"]);
}

#[test]
fn combining_marks_continue_a_run() {
    // q + combining tilde has no precomposed form, so the mark survives NFKC.
    assert_eq!(tokenize("q\u{303}ux"), ["q\u{303}ux"]);
}

#[test]
fn a_latin_run_stops_at_the_first_cjk_character() {
    assert_eq!(tokenize("abc漢字"), ["abc", "漢字"]);
    assert_eq!(tokenize("漢字abc"), ["漢字", "abc"]);
}

#[test]
fn cjk_runs_yield_code_point_bigrams() {
    assert_eq!(tokenize("記憶検索"), ["記憶", "憶検", "検索"]);
}

#[test]
fn hiragana_katakana_and_hangul_runs_yield_bigrams() {
    assert_eq!(tokenize("ひらがな"), ["ひら", "らが", "がな"]);
    assert_eq!(tokenize("カタカナ"), ["カタ", "タカ", "カナ"]);
    assert_eq!(tokenize("한국어"), ["한국", "국어"]);
}

#[test]
fn an_isolated_cjk_character_yields_no_token() {
    assert!(tokenize("猫").is_empty());
    assert!(tokenize("a 猫 b").is_empty());
}

#[test]
fn prolonged_sound_mark_and_cjk_punctuation_join_the_cjk_run() {
    assert_eq!(tokenize("サーバー"), ["サー", "ーバ", "バー"]);
    assert_eq!(tokenize("記憶、検索"), ["記憶", "憶、", "、検", "検索"]);
}

#[test]
fn fullwidth_comma_and_colon_separate_cjk_runs() {
    assert_eq!(tokenize("記憶，検索：設定"), ["記憶", "検索", "設定"]);
}

#[test]
fn half_width_katakana_is_normalised_to_full_width() {
    assert_eq!(tokenize("ｶﾀｶﾅ"), tokenize("カタカナ"));
}

#[test]
fn runs_shorter_than_three_code_points_are_dropped() {
    assert_eq!(
        tokenize("e2e test v1.2.3 foo_bar"),
        ["e2e", "test", "foo", "bar"]
    );
}

#[test]
fn punctuation_and_symbols_separate_runs() {
    assert_eq!(
        tokenize("alpha-beta/gamma✓delta"),
        ["alpha", "beta", "gamma", "delta"]
    );
}

#[test]
fn thai_text_is_split_into_words_of_at_least_two_code_points() {
    assert_eq!(tokenize("การปรับใช้ระบบ"), ["การ", "ปรับ", "ใช้", "ระบบ"]);
}

#[test]
fn duplicates_are_kept_in_text_order() {
    assert_eq!(tokenize("deploy then deploy"), ["deploy", "then", "deploy"]);
}

#[test]
fn empty_and_symbol_only_text_has_no_tokens() {
    assert!(tokenize("").is_empty());
    assert!(tokenize("  -- !! ?? ").is_empty());
}
