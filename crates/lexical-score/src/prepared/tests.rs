use super::*;

fn text() -> PreparedText {
    PreparedText::new(
        "Deploy checklist",
        "how we ship",
        "run the migrations first",
    )
}

/// Hits worth 99 points, for telling points scored ahead from points computed now.
fn ninety_nine() -> LexicalHits {
    LexicalHits {
        points: 99,
        tokens: 1,
    }
}

#[test]
fn points_scored_ahead_equal_the_points_computed_on_demand() {
    let (ahead, on_demand) = (text(), text());
    let query = QueryTokens::new("deploy migrations");
    ahead.score_ahead(&query);
    assert_eq!(
        ahead.ahead.get().map(|&(id, hits)| (id, hits.points)),
        Some((query.id(), 5))
    );
    assert_eq!(ahead.points_for(&query), on_demand.points_for(&query));
}

#[test]
fn ranking_reads_the_points_scored_ahead_for_the_same_query() {
    let text = text();
    let query = QueryTokens::new("deploy");
    // Points no real computation gives, to see which path answered.
    text.ahead.set((query.id(), ninety_nine())).unwrap();
    assert_eq!(text.points_for(&query), 99);
    assert_eq!(text.points_for(&query.clone()), 99);
}

#[test]
fn points_scored_ahead_for_one_query_are_not_taken_for_another_with_the_same_words() {
    let text = text();
    let first = QueryTokens::new("deploy");
    text.ahead.set((first.id(), ninety_nine())).unwrap();
    let second = QueryTokens::new("deploy");
    assert_eq!(first, second);
    assert_eq!(text.points_for(&second), 4);
}

#[test]
fn the_first_score_of_a_text_searches_its_fields_without_building_an_index() {
    let text = text();
    text.score_ahead(&QueryTokens::new("deploy migrations"));
    assert!(text.index.get().is_none());
}

#[test]
fn scoring_a_text_for_a_query_it_was_not_scored_ahead_for_builds_its_index() {
    let text = text();
    text.score_ahead(&QueryTokens::new("deploy"));
    assert_eq!(text.points_for(&QueryTokens::new("migrations ship")), 4);
    assert!(text.index.get().is_some());
}

#[test]
fn a_text_scored_with_its_index_scores_as_it_did_by_search() {
    let (searched, indexed) = (text(), text());
    let query = QueryTokens::new("deploy checklist ship migrations first run");
    searched.score_ahead(&query);
    let _ = indexed.index();
    indexed.score_ahead(&query);
    assert_eq!(searched.ahead.get(), indexed.ahead.get());
    assert!(searched.index.get().is_none());
}

/// The same text with every field held as a normalised copy.
fn with_copied_fields(text: &PreparedText) -> PreparedText {
    let copy = |field: &Normalized| Normalized::Text(field.get().into());
    PreparedText {
        title: copy(&text.title),
        description: copy(&text.description),
        body: copy(&text.body),
        index: OnceLock::new(),
        markers: OnceLock::new(),
        ahead: OnceLock::new(),
        ..text.clone()
    }
}

#[test]
fn an_ascii_body_is_shared_with_its_source_and_stays_uncopied_through_indexing_and_scoring() {
    let body = ByteString::from("Run the Migrations first, then restart the API pods.");
    let text = PreparedText::sharing(&"Deploy".into(), "", &"How we ship".into(), "", &body);
    text.score_ahead(&QueryTokens::new("migrations restart"));
    text.build_index();
    let _ = text.noise_markers();
    let _ = text.stored("Deploy", "How we ship", &body);

    match &text.body {
        Normalized::LowercaseOf(source, lowered) => {
            assert_eq!(source.as_ptr(), body.as_ptr());
            assert!(lowered.get().is_none());
        }
        Normalized::Text(_) => panic!("an ASCII body was copied"),
    }
}

#[test]
fn a_body_with_non_ascii_text_is_held_normalised() {
    let text = PreparedText::sharing(&"T".into(), "", &"".into(), "", &"Ｆｕｌｌ width".into());
    assert!(matches!(text.body, Normalized::Text(_)));
    assert_eq!(text.body(), "full width");
}

proptest::proptest! {
    #[test]
    fn a_text_sharing_its_sources_scores_indexes_and_finds_markers_as_normalised_copies_do(
        title in "[A-Za-z ]{1,20}",
        description in "[A-Za-z .]{0,40}",
        body in "[A-Za-z .,ÉéΣ]{0,1500}",
        query in "[A-Za-z ]{1,30}",
    ) {
        let shared = PreparedText::sharing(&title.into(), "", &description.into(), "", &body.into());
        let copied = with_copied_fields(&shared);
        let query = QueryTokens::new(&query);
        proptest::prop_assert_eq!(
            lexical_hits(&query, &shared, Lookup::Once).points,
            lexical_hits(&query, &copied, Lookup::Once).points
        );
        proptest::prop_assert_eq!(
            lexical_hits(&query, &shared, Lookup::Indexed).points,
            lexical_hits(&query, &copied, Lookup::Indexed).points
        );
        proptest::prop_assert_eq!(shared.noise_markers(), copied.noise_markers());
        proptest::prop_assert!(shared == copied);
    }
}

#[test]
fn the_empty_default_query_is_never_scored_ahead() {
    let text = text();
    text.score_ahead(&QueryTokens::default());
    assert_eq!(text.ahead.get(), None);
}

#[test]
fn ascii_fields_shared_with_their_source_add_nothing_to_the_footprint() {
    let text = PreparedText::new("Deploy", "how we ship", "run the migrations first");
    assert_eq!(text.footprint(), TextFootprint::default());
}

#[test]
fn a_normalised_field_counts_its_own_bytes_in_the_footprint() {
    let text = PreparedText::new("Café", "how we ship", "run the migrations first");
    assert_eq!(text.footprint().normalized, "café".len());
}

#[test]
fn a_built_index_counts_its_signature_and_table_in_the_footprint() {
    let text = text();
    text.build_index();
    let index = text.index.get().expect("built");
    assert_eq!(text.footprint().index, index.bytes());
    assert!(index.bytes() > 0);
}

#[test]
fn a_lowercase_derived_from_an_ascii_source_counts_once_read_whole() {
    let text = PreparedText::new("Deploy", "", "");
    assert_eq!(text.title(), "deploy");
    assert_eq!(text.footprint().normalized, "deploy".len());
}
