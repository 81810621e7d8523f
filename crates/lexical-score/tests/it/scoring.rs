//! Scoring one document and ranking many.

use lexical_score::{
    BODY_WINDOW_CHARS, Bytes, InvalidPreparedText, MemoryType, PreparedText, QueryTokens, Ranked,
    StoredPreparedText, explain, rank, score,
};

use crate::support::Doc;

fn q(text: &str) -> QueryTokens {
    QueryTokens::new(text)
}

#[test]
fn a_title_match_scores_four() {
    assert_eq!(
        score(&q("deploy"), &Doc::plain("Deploy checklist", "", "")),
        4
    );
}

#[test]
fn documents_shared_through_an_arc_rank_as_the_documents_do() {
    let docs = [
        Doc::plain("", "", "we deploy on fridays"),
        Doc::plain("Deploy checklist", "", "").modified_at(5),
    ];
    let shared: Vec<std::sync::Arc<Doc>> = docs.iter().cloned().map(std::sync::Arc::new).collect();
    assert_eq!(score(&q("deploy"), &shared[1]), 4);
    assert_eq!(rank(&q("deploy"), &shared), rank(&q("deploy"), &docs));
}

#[test]
fn a_description_match_scores_three() {
    assert_eq!(score(&q("deploy"), &Doc::plain("", "how we deploy", "")), 3);
}

#[test]
fn a_body_match_scores_one() {
    assert_eq!(
        score(&q("deploy"), &Doc::plain("", "", "we deploy on fridays")),
        1
    );
}

#[test]
fn each_field_adds_its_points_for_the_same_token() {
    assert_eq!(
        score(&q("deploy"), &Doc::plain("deploy", "deploy", "deploy")),
        8
    );
}

#[test]
fn a_title_or_description_match_outranks_a_body_match() {
    let docs = [
        Doc::plain("notes", "", "rollback steps for staging"),
        Doc::plain("rollback", "", "steps"),
        Doc::plain("notes", "rollback", "steps"),
    ];
    let ranked = rank(&q("rollback"), &docs);
    let order: Vec<usize> = ranked.iter().map(|r| r.index).collect();
    assert_eq!(order, [1, 2, 0]);
}

#[test]
fn matching_is_by_substring_so_a_token_matches_inside_a_longer_word() {
    assert_eq!(score(&q("owner"), &Doc::plain("ownership", "", "")), 4);
}

#[test]
fn nfkc_makes_full_width_queries_match_ascii_documents() {
    assert_eq!(score(&q("ＤＥＰＬＯＹ"), &Doc::plain("deploy", "", "")), 4);
}

#[test]
fn cjk_queries_match_cjk_documents_by_bigrams() {
    let doc = Doc::plain("记忆检索", "", "");
    // 记忆 and 检索 both occur; 忆检 does not appear in the query.
    assert_eq!(score(&q("记忆 检索"), &doc), 8);
}

#[test]
fn a_cyrillic_query_matches_a_cyrillic_document() {
    assert_eq!(
        score(
            &q("РАЗВЁРТЫВАНИЕ"),
            &Doc::plain("развёртывание сервиса", "", "")
        ),
        4
    );
}

#[test]
fn only_the_body_window_is_scored() {
    let inside = format!("{} needle", "x".repeat(BODY_WINDOW_CHARS - 7));
    let outside = format!("{} needle", "x".repeat(BODY_WINDOW_CHARS));
    assert_eq!(score(&q("needle"), &Doc::plain("", "", &inside)), 1);
    assert_eq!(score(&q("needle"), &Doc::plain("", "", &outside)), 0);
}

#[test]
fn a_token_found_only_after_the_window_scores_nothing_even_when_its_trigrams_sit_inside_it() {
    // The window holds `abc` and `bcd`, every trigram of `abcd`, so its signature lets the token
    // through and only the search of the window itself can refuse it.
    let body = format!("abcx xbcd {} abcd", "y".repeat(BODY_WINDOW_CHARS - 10));
    let fresh = PreparedText::new("", "", &body);
    let stored = serde_json::to_string(&fresh.stored("", "", &body)).unwrap();
    let restored = serde_json::from_str::<StoredPreparedText<'_>>(&stored)
        .unwrap()
        .restore(&Bytes::new(), &"".into(), &"".into(), &body.as_str().into())
        .unwrap();
    for text in [fresh, restored] {
        let doc = Doc {
            text,
            ..Doc::plain("", "", "")
        };
        assert_eq!(score(&q("abcd"), &doc), 0);
        assert_eq!(score(&q("xbcd"), &doc), 1);
    }
}

#[test]
fn the_body_window_counts_characters_not_bytes() {
    let body = format!("{}検索", "猫".repeat(BODY_WINDOW_CHARS - 2));
    let text = PreparedText::new("", "", &body);
    assert_eq!(text.body_window().chars().count(), BODY_WINDOW_CHARS);
    assert_eq!(score(&q("検索"), &Doc::plain("", "", &body)), 1);
}

#[test]
fn the_full_body_keeps_the_text_after_the_window() {
    let body = format!("{}TAIL", "x".repeat(BODY_WINDOW_CHARS));
    let text = PreparedText::new("Title", "Desc", &body);
    assert!(text.body().ends_with("tail"));
    assert!(!text.body_window().contains("tail"));
    assert_eq!((text.title(), text.description()), ("title", "desc"));
}

#[test]
fn a_type_boost_needs_a_lexical_match() {
    let doc = Doc::new(MemoryType::User, "unrelated", "", "nothing here");
    assert_eq!(score(&q("user preferences"), &doc), 0);
}

#[test]
fn a_type_boost_is_added_to_a_matching_document() {
    let doc = Doc::new(MemoryType::User, "editor", "", "");
    // +4 title, +1 for `preference`.
    assert_eq!(score(&q("editor preference"), &doc), 5);
}

#[test]
fn a_type_boost_counts_keywords_of_the_document_type_only() {
    let doc = Doc::new(MemoryType::Project, "editor", "", "");
    assert_eq!(score(&q("editor preference"), &doc), 4);
}

#[test]
fn a_type_boost_is_capped_at_two() {
    let doc = Doc::new(MemoryType::Feedback, "editor", "", "");
    assert_eq!(score(&q("editor feedback rule rules avoid style"), &doc), 6);
}

#[test]
fn a_document_without_any_hit_scores_zero_and_is_not_ranked() {
    let docs = [
        Doc::plain("alpha", "", "body text"),
        Doc::plain("deploy", "", ""),
    ];
    assert_eq!(rank(&q("deploy"), &docs), [Ranked { index: 1, score: 4 }]);
}

#[test]
fn an_empty_query_ranks_nothing() {
    assert!(rank(&q(""), &[Doc::plain("deploy", "", "body")]).is_empty());
}

#[test]
fn explain_itemises_the_score() {
    let doc = Doc::new(
        MemoryType::Reference,
        "deploy dashboard",
        "grafana",
        "deploy graphs",
    );
    let breakdown = explain(&q("deploy grafana dashboard"), &doc);
    assert_eq!(breakdown.title_hits, ["deploy", "dashboard"]);
    assert!(breakdown.keyword_hits.is_empty());
    assert_eq!(breakdown.description_hits, ["grafana"]);
    assert!(breakdown.usage_scenario_hits.is_empty());
    assert_eq!(breakdown.body_hits, ["deploy"]);
    assert_eq!(breakdown.type_boost, 1);
    assert_eq!(breakdown.total, 4 + 4 + 3 + 1 + 1);
    assert_eq!(breakdown.total, score(&q("deploy grafana dashboard"), &doc));
}

#[test]
fn score_ties_are_broken_by_newer_mtime_first() {
    let docs = [
        Doc::plain("deploy", "", "").modified_at(100),
        Doc::plain("deploy", "", "").modified_at(300),
        Doc::plain("deploy", "", "").modified_at(200),
    ];
    let order: Vec<usize> = rank(&q("deploy"), &docs).iter().map(|r| r.index).collect();
    assert_eq!(order, [1, 2, 0]);
}

#[test]
fn score_and_mtime_ties_are_broken_by_input_order() {
    let docs = [
        Doc::new(MemoryType::User, "deploy", "", "").modified_at(5),
        Doc::new(MemoryType::Feedback, "deploy", "", "").modified_at(5),
        Doc::new(MemoryType::Project, "deploy", "", "").modified_at(5),
    ];
    let order: Vec<usize> = rank(&q("deploy"), &docs).iter().map(|r| r.index).collect();
    assert_eq!(order, [0, 1, 2]);
}

#[test]
fn a_user_document_is_not_pushed_out_of_the_top_two_by_tied_documents_of_other_types() {
    // Project scope first, user scope last: the user memory is the newest of four tied matches.
    let docs = [
        Doc::new(MemoryType::Feedback, "terse answers", "", "").modified_at(10),
        Doc::new(MemoryType::Project, "terse answers", "", "").modified_at(10),
        Doc::new(MemoryType::Reference, "terse answers", "", "").modified_at(10),
        Doc::new(MemoryType::User, "terse answers", "", "").modified_at(20),
    ];
    let ranked = rank(&q("answers"), &docs);
    let top_two: Vec<usize> = ranked.iter().take(2).map(|r| r.index).collect();
    assert!(ranked.iter().all(|r| r.score == 4));
    assert_eq!(top_two, [3, 0]);
}

#[test]
fn prepared_text_round_trips_through_its_stored_form() {
    let body = format!("{}tail", "本".repeat(1_300));
    let text = PreparedText::new("Deploy", "Ｄｅｓｃ", &body);
    let stored = serde_json::to_string(&text.stored("Deploy", "Ｄｅｓｃ", &body)).unwrap();
    let loaded = serde_json::from_str::<StoredPreparedText<'_>>(&stored)
        .unwrap()
        .restore(
            &Bytes::new(),
            &"Deploy".into(),
            &"Ｄｅｓｃ".into(),
            &body.as_str().into(),
        )
        .unwrap();
    assert_eq!(loaded, text);
    assert_eq!(loaded.body_window(), text.body_window());
}

/// Restores the stored form of a small text after `edit` changed it.
fn restore_edited(
    body: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> Result<PreparedText, InvalidPreparedText> {
    let text = PreparedText::new("t", "d", body);
    let mut stored = serde_json::to_value(text.stored("t", "d", body)).unwrap();
    edit(&mut stored);
    let stored = stored.to_string();
    serde_json::from_str::<StoredPreparedText<'_>>(&stored)
        .unwrap()
        .restore(&Bytes::new(), &"t".into(), &"d".into(), &body.into())
}

#[test]
fn a_stored_prepared_text_with_a_window_end_inside_a_character_is_rejected() {
    let error = restore_edited("本文", |s| s["body_window_end"] = 1.into()).unwrap_err();
    assert!(
        error.to_string().contains("not a character boundary"),
        "{error}"
    );
}

#[test]
fn a_stored_prepared_text_with_a_window_end_past_the_body_is_rejected() {
    let restored = restore_edited("abc", |s| s["body_window_end"] = 9.into());
    assert!(matches!(
        restored,
        Err(InvalidPreparedText::WindowEnd { .. })
    ));
}

#[test]
fn a_stored_prepared_text_with_a_malformed_index_is_rejected() {
    let restored = restore_edited("some body text", |s| {
        s["signature"] = serde_json::json!([1, 2, 3]);
    });
    assert_eq!(restored, Err(InvalidPreparedText::Index));
}

/// `text`, prepared from `source`, written to postcard and restored against `restore_from`.
fn postcard_round_trip(
    text: &PreparedText,
    source: (&str, &str, &str),
    restore_from: (&str, &str, &str),
) -> Result<PreparedText, InvalidPreparedText> {
    let bytes =
        Bytes::from(postcard::to_stdvec(&text.stored(source.0, source.1, source.2)).unwrap());
    postcard::from_bytes::<StoredPreparedText<'_>>(&bytes)
        .unwrap()
        .restore(
            &bytes,
            &restore_from.0.into(),
            &restore_from.1.into(),
            &restore_from.2.into(),
        )
}

#[test]
fn a_stored_prepared_text_scores_like_the_text_it_was_prepared_from() {
    let source = (
        "Ownership",
        "Who owns the pager",
        "Escalate to the owner on call.",
    );
    let text = PreparedText::new(source.0, source.1, source.2);
    let loaded = postcard_round_trip(&text, source, source).unwrap();
    let doc = |text: PreparedText| Doc {
        text,
        memory_type: MemoryType::Project,
        mtime: std::time::SystemTime::UNIX_EPOCH,
    };
    let query = q("owner pager escalation");
    assert_eq!(
        rank(&query, &[doc(loaded)])[0].score,
        rank(&query, &[doc(text)])[0].score
    );
}

#[test]
fn the_stored_form_leaves_out_normalised_text_derivable_from_an_ascii_source() {
    let source = (
        "Pager Rota",
        "Who Owns The Pager",
        "Escalate To The Owner On Call.",
    );
    let text = PreparedText::new(source.0, source.1, source.2);

    let bytes = postcard::to_stdvec(&text.stored(source.0, source.1, source.2)).unwrap();

    let contains = |needle: &str| bytes.windows(needle.len()).any(|w| w == needle.as_bytes());
    assert!(!contains("pager rota"));
    assert!(!contains("escalate to the owner"));
}

#[test]
fn the_stored_form_keeps_normalised_text_of_a_non_ascii_source() {
    let source = ("Ｐａｇｅｒ", "Ｒｏｔａ", "Éscalade");
    let text = PreparedText::new(source.0, source.1, source.2);

    let loaded = postcard_round_trip(&text, source, source).unwrap();

    assert_eq!(loaded.title(), "pager");
    assert_eq!(loaded, text);
}

#[test]
fn a_stored_form_restored_against_a_non_ascii_source_it_left_out_is_rejected() {
    let source = ("Pager", "Rota", "Escalate");
    let text = PreparedText::new(source.0, source.1, source.2);

    let restored = postcard_round_trip(&text, source, ("Päger", "Rota", "Escalate"));

    assert_eq!(restored, Err(InvalidPreparedText::NotDerivable));
}

#[test]
fn a_restored_prepared_text_shares_the_buffer_it_was_decoded_from() {
    let (title, description, body) = ("Überblick", "Zusammenfassung", "Größe der Einträge");
    let text = PreparedText::new(title, description, body);
    let owner = Bytes::from(postcard::to_stdvec(&text.stored(title, description, body)).unwrap());
    let restored = postcard::from_bytes::<StoredPreparedText<'_>>(&owner)
        .unwrap()
        .restore(&owner, &title.into(), &description.into(), &body.into())
        .unwrap();
    assert!(
        !owner.is_unique(),
        "the restored text holds no share of its buffer"
    );
    drop(restored);
    assert!(owner.is_unique());
}
