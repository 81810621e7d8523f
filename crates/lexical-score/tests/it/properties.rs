//! Invariants over arbitrary input.

use std::collections::HashSet;

use lexical_score::{
    ActiveToolAliases, ByteString, Bytes, CandidateSelection, MAX_CANDIDATES,
    MAX_LEXICAL_CANDIDATES, MAX_QUERY_TOKENS, MemoryType, PreparedText, QueryTokens,
    StoredPreparedText, explain, rank, score, tokenize,
};
use proptest::prelude::*;

use crate::support::Doc;

/// Text drawn from the scripts the tokenizer treats differently, plus separators and marks.
fn mixed_text(max_len: usize) -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            proptest::char::range('a', 'z'),
            proptest::char::range('A', 'Z'),
            proptest::char::range('0', '9'),
            Just(' '),
            Just('-'),
            Just('、'),
            Just('ー'),
            Just('\u{301}'),
            proptest::char::range('α', 'ω'),
            proptest::char::range('а', 'я'),
            proptest::char::range('一', '丗'),
            proptest::char::range('あ', 'ん'),
            proptest::char::range('ア', 'ン'),
            proptest::char::range('가', '갛'),
            proptest::char::range('ก', 'ฮ'),
            proptest::char::range('！', '～'),
        ],
        0..max_len,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

fn memory_type() -> impl Strategy<Value = MemoryType> {
    prop_oneof![
        Just(MemoryType::User),
        Just(MemoryType::Feedback),
        Just(MemoryType::Project),
        Just(MemoryType::Reference),
    ]
}

fn doc() -> impl Strategy<Value = Doc> {
    (
        memory_type(),
        mixed_text(20),
        mixed_text(30),
        mixed_text(200),
        0u64..50,
    )
        .prop_map(|(memory_type, title, description, body, mtime)| {
            Doc::new(memory_type, &title, &description, &body).modified_at(mtime)
        })
}

/// The scoring rule written plainly, without the scorer's signature pre-filter.
fn reference_score(query: &QueryTokens, doc: &Doc) -> u32 {
    let text = &doc.text;
    let mut total = 0;
    for token in query.as_slice() {
        total += 4 * u32::from(text.title().contains(token.as_str()))
            + 3 * u32::from(text.description().contains(token.as_str()))
            + u32::from(text.body_window().contains(token.as_str()));
    }
    if total == 0 {
        return 0;
    }
    let keywords = doc.memory_type.keywords();
    let boost = query
        .as_slice()
        .iter()
        .filter(|t| keywords.contains(&t.as_str()))
        .count();
    total + u32::try_from(boost.min(2)).unwrap()
}

proptest! {
    #[test]
    fn prepared_text_round_trips_through_postcard(
        title in mixed_text(40),
        description in mixed_text(80),
        body in mixed_text(1_600),
    ) {
        let text = PreparedText::new(&title, &description, &body);
        let bytes = Bytes::from(postcard::to_stdvec(&text.stored(&title, &description, &body)).unwrap());
        let stored: StoredPreparedText<'_> = postcard::from_bytes(&bytes).unwrap();
        let source = |text: &str| ByteString::from(text);
        let restored = stored.restore(&bytes, &source(&title), &source(&description), &source(&body));
        prop_assert_eq!(restored.unwrap(), text);
    }

    #[test]
    fn a_restored_text_whose_fields_were_left_out_scores_as_the_text_it_was_stored_from(
        title in "[a-dA-D -]{0,20}",
        description in "[a-dA-D -]{0,30}",
        body in "[a-dA-D -]{0,1400}",
        query in "[a-dA-D ]{1,20}",
    ) {
        let text = PreparedText::new(&title, &description, &body);
        let bytes = Bytes::from(postcard::to_stdvec(&text.stored(&title, &description, &body)).unwrap());
        let stored: StoredPreparedText<'_> = postcard::from_bytes(&bytes).unwrap();
        let source = |text: &str| ByteString::from(text);
        let restored = stored
            .restore(&bytes, &source(&title), &source(&description), &source(&body))
            .unwrap();
        let as_doc = |text: PreparedText| Doc { text, ..Doc::plain("", "", "") };
        let (fresh, restored) = (as_doc(text), as_doc(restored));
        let query = QueryTokens::new(&query);
        // Scored before anything reads the restored fields, so no field has been derived yet.
        prop_assert_eq!(score(&query, &restored), score(&query, &fresh));
        prop_assert_eq!(score(&query, &fresh), reference_score(&query, &fresh));
    }

    #[test]
    fn a_damaged_stored_prepared_text_never_panics(
        body in mixed_text(400),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), 1u8..), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let text = PreparedText::new("title", "description", &body);
        let mut bytes = postcard::to_stdvec(&text.stored("title", "description", &body)).unwrap();
        for (at, mask) in flips {
            let at = at.index(bytes.len());
            bytes[at] ^= mask;
        }
        // Either result is fine; decoding and restoring must only not panic.
        let body = ByteString::from(body);
        let restore = |bytes: Bytes| {
            postcard::from_bytes::<StoredPreparedText<'_>>(&bytes)
                .map(|stored| stored.restore(&bytes, &"title".into(), &"description".into(), &body))
                .map(|text| text.map(|text| (text.title().len(), text.body_window().len())))
        };
        let cut = cut.index(bytes.len());
        let _ = restore(Bytes::from(bytes[..cut].to_vec()));
        let _ = restore(Bytes::from(bytes));
    }

    #[test]
    fn tokenizing_any_string_never_panics(text in any::<String>()) {
        let tokens = tokenize(&text);
        let query = QueryTokens::new(&text);
        let prepared = PreparedText::new(&text, &text, &text);
        prop_assert!(tokens.iter().all(|t| !t.is_empty()));
        prop_assert!(query.len() <= tokens.len());
        prop_assert!(prepared.body_window().len() <= prepared.body().len());
    }

    #[test]
    fn query_tokens_are_at_most_64_and_unique(text in mixed_text(2_000)) {
        let query = QueryTokens::new(&text);
        prop_assert!(query.len() <= MAX_QUERY_TOKENS);
        let unique: HashSet<&String> = query.as_slice().iter().collect();
        prop_assert_eq!(unique.len(), query.len());
    }

    #[test]
    fn tokenizing_and_scoring_are_deterministic(text in mixed_text(300), d in doc()) {
        prop_assert_eq!(tokenize(&text), tokenize(&text));
        prop_assert_eq!(QueryTokens::new(&text), QueryTokens::new(&text));
        let query = QueryTokens::new(&text);
        prop_assert_eq!(score(&query, &d), score(&query, &d));
    }

    #[test]
    fn a_long_cjk_query_keeps_tokens_from_both_ends(
        chars in proptest::collection::vec(proptest::char::range('一', '龥'), 100..600)
    ) {
        let text: String = chars.iter().collect();
        let query = QueryTokens::new(&text);
        let first: String = chars[..2].iter().collect();
        let last: String = chars[chars.len() - 2..].iter().collect();
        prop_assert!(query.as_slice().contains(&first));
        prop_assert!(query.as_slice().contains(&last));
    }

    #[test]
    fn adding_a_matching_token_never_lowers_a_score(
        words in proptest::collection::vec("[a-z]{3,8}", 0..20),
        d in doc(),
        pick in any::<proptest::sample::Index>(),
    ) {
        let doc_tokens = tokenize(&format!("{} {} {}", d.text.title(), d.text.description(), d.text.body_window()));
        prop_assume!(!doc_tokens.is_empty());
        let extra = pick.get(&doc_tokens);
        let before = QueryTokens::new(&words.join(" "));
        let after = QueryTokens::new(&format!("{} {extra}", words.join(" ")));
        prop_assert!(score(&after, &d) >= score(&before, &d));
        prop_assert!(score(&after, &d) > 0);
    }

    #[test]
    fn the_signature_filter_never_changes_a_score(text in mixed_text(80), d in doc()) {
        let query = QueryTokens::new(&text);
        prop_assert_eq!(score(&query, &d), reference_score(&query, &d));
    }

    #[test]
    fn explain_total_always_equals_score(text in mixed_text(80), d in doc()) {
        let query = QueryTokens::new(&text);
        prop_assert_eq!(explain(&query, &d).total, score(&query, &d));
    }

    #[test]
    fn candidates_are_bounded_unique_and_hold_the_lexical_head(
        text in mixed_text(40),
        docs in proptest::collection::vec(doc(), 0..60),
    ) {
        let query = QueryTokens::new(&text);
        let selection = CandidateSelection::select(&query, &docs, &ActiveToolAliases::default());
        let candidates = selection.candidates();
        prop_assert!(candidates.len() <= MAX_CANDIDATES);
        prop_assert_eq!(candidates.len(), docs.len().min(MAX_CANDIDATES));
        let unique: HashSet<&usize> = candidates.iter().collect();
        prop_assert_eq!(unique.len(), candidates.len());
        for r in selection.ranked().iter().take(MAX_LEXICAL_CANDIDATES) {
            prop_assert!(candidates.contains(&r.index));
        }
        let ranked = rank(&query, &docs);
        prop_assert_eq!(selection.matched(), ranked.len());
        prop_assert_eq!(selection.ranked(), ranked.get(..MAX_LEXICAL_CANDIDATES).unwrap_or(&ranked));
    }

    #[test]
    fn scoring_ahead_never_changes_a_selection(
        text in mixed_text(40),
        docs in proptest::collection::vec(doc(), 0..40),
    ) {
        let query = QueryTokens::new(&text);
        let tools = ActiveToolAliases::default();
        // Cloned before anything scores them, so the texts scored ahead have no index yet and
        // are scored by searching their fields.
        let ahead = docs.clone();
        for d in &ahead {
            d.text.score_ahead(&query);
            prop_assert!(!d.text.has_index());
        }
        let plain = CandidateSelection::select(&query, &docs, &tools);
        prop_assert_eq!(CandidateSelection::select(&query, &ahead, &tools), plain);
    }

    #[test]
    fn searching_the_fields_scores_a_text_as_its_index_does(
        text in mixed_text(80),
        title in mixed_text(20),
        description in mixed_text(30),
        body in mixed_text(1_600),
    ) {
        // Bodies longer than the 1,200-character window, so the window's end is crossed.
        let query = QueryTokens::new(&text);
        let searched = Doc::new(MemoryType::Project, &title, &description, &body);
        let indexed = searched.clone();
        indexed.text.build_index();
        // `explain` searches a text without an index; `score` of an indexed one looks there.
        prop_assert_eq!(explain(&query, &searched).total, score(&query, &indexed));
        prop_assert_eq!(explain(&query, &searched), explain(&query, &indexed));
        prop_assert!(!searched.text.has_index());
    }
}
