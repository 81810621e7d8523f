//! Query tokens: unique, bounded, both ends kept.

use lexical_score::{MAX_QUERY_TOKENS, QueryTokens};

fn words(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("word{i:03}")).collect()
}

#[test]
fn query_tokens_are_unique_in_order_of_first_appearance() {
    let query = QueryTokens::new("deploy staging deploy rollback staging");
    assert_eq!(query.as_slice(), ["deploy", "staging", "rollback"]);
    assert_eq!(query.len(), 3);
}

#[test]
fn a_query_without_tokens_is_empty() {
    let query = QueryTokens::new("a, b? 猫");
    assert!(query.is_empty());
    assert_eq!(query.len(), 0);
}

#[test]
fn a_long_query_keeps_the_first_32_and_the_last_32_distinct_tokens() {
    let query = QueryTokens::new(&words(0..100).join(" "));
    let expected: Vec<String> = words(0..32).into_iter().chain(words(68..100)).collect();
    assert_eq!(query.len(), MAX_QUERY_TOKENS);
    assert_eq!(query.as_slice(), expected.as_slice());
}

#[test]
fn a_token_seen_again_in_the_tail_moves_to_the_newest_tail_position() {
    let mut text = words(0..70);
    text.push("word040".to_owned());
    let query = QueryTokens::new(&text.join(" "));
    let expected: Vec<String> = words(0..32)
        .into_iter()
        .chain(words(38..40))
        .chain(words(41..70))
        .chain(["word040".to_owned()])
        .collect();
    assert_eq!(query.as_slice(), expected.as_slice());
}

#[test]
fn a_head_token_seen_again_later_stays_in_the_head_only() {
    let mut text = words(0..40);
    text.push("word000".to_owned());
    let query = QueryTokens::new(&text.join(" "));
    assert_eq!(query.len(), 40);
    assert_eq!(
        query.as_slice().iter().filter(|t| *t == "word000").count(),
        1
    );
    assert_eq!(
        query.as_slice().first().map(String::as_str),
        Some("word000")
    );
}

#[test]
fn a_long_cjk_query_keeps_bigrams_from_both_ends() {
    // 300 distinct characters give 299 distinct bigrams, far beyond the bound.
    let text: String = (0..300u32)
        .filter_map(|i| char::from_u32(0x4E00 + i * 7))
        .collect();
    let query = QueryTokens::new(&text);
    let chars: Vec<char> = text.chars().collect();
    let first: String = chars[..2].iter().collect();
    let last: String = chars[chars.len() - 2..].iter().collect();
    assert_eq!(query.len(), MAX_QUERY_TOKENS);
    assert_eq!(query.as_slice().first(), Some(&first));
    assert_eq!(query.as_slice().last(), Some(&last));
}

#[test]
fn unsegmented_rules_keep_a_thai_run_whole_where_the_shipped_rules_segment_it() {
    assert_eq!(
        lexical_score::measurement::unsegmented::query_tokens("การปรับใช้ระบบ").as_slice(),
        ["การปรับใช้ระบบ"]
    );
    assert_eq!(
        QueryTokens::new("การปรับใช้ระบบ").as_slice(),
        ["การ", "ปรับ", "ใช้", "ระบบ"]
    );
}
