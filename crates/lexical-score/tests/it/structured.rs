//! The structured fields some agents write: keywords scored as the title, usage scenarios as the
//! description.

use lexical_score::Bytes;
use lexical_score::{PreparedText, QueryTokens, Scorable, StoredPreparedText, explain, score};

use crate::support::Doc;

fn structured(title: &str, keywords: &str, description: &str, usage: &str, body: &str) -> Doc {
    let mut doc = Doc::plain(title, description, body);
    doc.text = PreparedText::structured(title, keywords, description, usage, body);
    doc
}

#[test]
fn a_token_found_only_in_the_keywords_earns_the_titles_points() {
    let doc = structured("Release notes", "rollback\nhotfix", "", "", "");
    assert_eq!(score(&QueryTokens::new("hotfix"), &doc), 4);
}

#[test]
fn a_token_found_only_in_the_usage_scenarios_earns_the_descriptions_points() {
    let doc = structured(
        "Release notes",
        "",
        "how we ship",
        "when production is on fire",
        "",
    );
    assert_eq!(score(&QueryTokens::new("production"), &doc), 3);
}

#[test]
fn a_token_in_both_the_title_and_the_keywords_earns_the_titles_points_once() {
    let doc = structured("Rollback steps", "rollback", "", "", "");
    assert_eq!(score(&QueryTokens::new("rollback"), &doc), 4);
}

#[test]
fn empty_structured_fields_prepare_exactly_the_plain_text() {
    let plain = PreparedText::new("Deploy", "how we ship", "run migrations");
    let structured = PreparedText::structured("Deploy", "", "how we ship", "", "run migrations");
    assert_eq!(plain, structured);
}

#[test]
fn a_token_does_not_match_across_the_title_and_the_keywords() {
    let doc = structured("部署", "手順", "", "", "");
    assert_eq!(score(&QueryTokens::new("署手"), &doc), 0);
}

#[test]
fn explain_lists_keyword_and_usage_scenario_hits_apart_from_title_and_description() {
    let doc = structured(
        "Deploy",
        "rollback",
        "how we ship",
        "outage night",
        "deploy",
    );
    let query = QueryTokens::new("deploy rollback ship outage");
    let breakdown = explain(&query, &doc);
    assert_eq!(breakdown.title_hits, ["deploy"]);
    assert_eq!(breakdown.keyword_hits, ["rollback"]);
    assert_eq!(breakdown.description_hits, ["ship"]);
    assert_eq!(breakdown.usage_scenario_hits, ["outage"]);
    assert_eq!(breakdown.body_hits, ["deploy"]);
    assert_eq!(breakdown.type_boost, 0);
    assert_eq!(breakdown.total, 4 + 4 + 3 + 3 + 1);
    assert_eq!(breakdown.total, score(&query, &doc));
}

#[test]
fn a_stored_structured_text_restores_with_its_keywords_and_usage_scenarios() {
    let text = PreparedText::structured("Deploy", "rollback", "how we ship", "outage", "body");
    let bytes =
        Bytes::from(postcard::to_stdvec(&text.stored("Deploy", "how we ship", "body")).unwrap());
    let stored: StoredPreparedText<'_> = postcard::from_bytes(&bytes).unwrap();
    let restored = stored
        .restore(
            &bytes,
            &"Deploy".into(),
            &"how we ship".into(),
            &"body".into(),
        )
        .unwrap();
    assert_eq!(
        (restored.keywords(), restored.usage_scenarios()),
        ("rollback", "outage")
    );
    assert_eq!(restored, text);
}

#[test]
fn keywords_are_normalised_like_any_field() {
    let doc = structured("Notes", "ＲＯＬＬＢＡＣＫ", "", "", "");
    assert_eq!(doc.prepared().keywords(), "rollback");
}
