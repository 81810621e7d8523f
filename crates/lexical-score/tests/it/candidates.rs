//! The one scoring pass per recall: candidates, fallback and fast result.

use lexical_score::{
    ActiveToolAliases, CandidateSelection, FAST_LIMIT, MAX_CANDIDATES, MAX_LEXICAL_CANDIDATES,
    MIN_RECENT_SLOTS, QueryTokens,
};

use crate::support::Doc;

fn no_tools() -> ActiveToolAliases {
    ActiveToolAliases::default()
}

fn select(query: &str, docs: &[Doc]) -> CandidateSelection {
    CandidateSelection::select(&QueryTokens::new(query), docs, &no_tools())
}

/// The target (best match), 200 weaker matches, then 20 non-matching documents that are newer
/// than every match.
fn crowded_pool() -> Vec<Doc> {
    let mut docs = vec![Doc::plain("codeword", "", "").modified_at(1)];
    docs.extend((0..200).map(|i| Doc::plain("", "", "codeword").modified_at(10 + i)));
    docs.extend((0..20).map(|i| Doc::plain("unrelated", "", "").modified_at(1_000 + i)));
    docs
}

#[test]
fn a_full_lexical_list_leaves_twenty_recent_slots() {
    let docs = crowded_pool();
    let selection = select("codeword", &docs);
    let candidates = selection.candidates();
    assert_eq!(candidates.len(), MAX_CANDIDATES);
    assert_eq!(candidates.first(), Some(&0), "the target leads");
    // The newest non-matching document is the first recent one, right after the target.
    assert_eq!(candidates.get(1), Some(&220));
    for recent in 201..221 {
        assert!(
            candidates.contains(&recent),
            "recent document {recent} is missing"
        );
    }
    assert_eq!(
        candidates.iter().filter(|&&i| i >= 201).count(),
        MIN_RECENT_SLOTS
    );
}

#[test]
fn a_full_lexical_list_is_interleaved_with_recent_documents_then_continues() {
    let docs = crowded_pool();
    let selection = select("codeword", &docs);
    let ranked: Vec<usize> = selection.ranked().iter().map(|r| r.index).collect();
    let candidates = selection.candidates();
    assert_eq!(&candidates[..4], [ranked[0], 220, ranked[1], 219]);
    assert_eq!(&candidates[40..42], [ranked[20], ranked[21]]);
}

#[test]
fn a_sparse_lexical_list_keeps_every_match_and_recency_fills_the_rest() {
    let mut docs: Vec<Doc> = (0..250)
        .map(|i| Doc::plain("unrelated", "", "").modified_at(i))
        .collect();
    docs.extend((0..3).map(|_| Doc::plain("codeword", "", "").modified_at(0)));
    let selection = select("codeword", &docs);
    let candidates = selection.candidates();
    assert_eq!(candidates.len(), MAX_CANDIDATES);
    for lexical in 250..253 {
        assert!(
            candidates.contains(&lexical),
            "lexical match {lexical} is missing"
        );
    }
    // l0, r0, l1, r1, l2, r2, then the next most recent documents.
    assert_eq!(&candidates[..7], [250, 249, 251, 248, 252, 247, 246]);
    assert_eq!(candidates.last(), Some(&53));
}

#[test]
fn without_matches_the_candidates_are_the_most_recent_documents() {
    let docs: Vec<Doc> = (0..5)
        .map(|i| Doc::plain("unrelated", "", "").modified_at(i))
        .collect();
    let selection = select("codeword", &docs);
    assert_eq!(selection.candidates(), [4, 3, 2, 1, 0]);
    assert!(selection.fast().is_empty());
    assert!(selection.heuristic().is_empty());
}

#[test]
fn recent_documents_with_equal_mtime_follow_input_order() {
    let docs: Vec<Doc> = (0..3).map(|_| Doc::plain("unrelated", "", "")).collect();
    assert_eq!(select("codeword", &docs).candidates(), [0, 1, 2]);
}

#[test]
fn matches_ranked_below_the_lexical_cut_can_return_as_recent_documents() {
    let mut docs: Vec<Doc> = (0..180)
        .map(|i| Doc::plain("codeword", "", "").modified_at(i))
        .collect();
    // A weaker but very recent match misses the lexical cut and is the newest document left.
    docs.push(Doc::plain("", "", "codeword").modified_at(10_000));
    let selection = select("codeword", &docs);
    assert_eq!(selection.matched(), 181);
    assert_eq!(selection.ranked().len(), 180);
    assert_eq!(selection.candidates().get(1), Some(&180));
    assert_eq!(selection.candidates().len(), 181);
}

#[test]
fn the_fallback_is_the_lexical_top_five_and_the_fast_result_its_top_two() {
    let docs: Vec<Doc> = (0..8)
        .map(|i| Doc::plain("codeword", "", "").modified_at(i))
        .collect();
    let selection = select("codeword", &docs);
    let fallback: Vec<usize> = selection.heuristic().iter().map(|r| r.index).collect();
    let fast: Vec<usize> = selection.fast().iter().map(|r| r.index).collect();
    assert_eq!(fallback, [7, 6, 5, 4, 3]);
    assert_eq!(fast, [7, 6]);
    assert_eq!(selection.fast().len(), FAST_LIMIT);
}

#[test]
fn a_single_match_gives_a_one_document_fast_result() {
    let docs = [Doc::plain("codeword", "", ""), Doc::plain("other", "", "")];
    let selection = select("codeword", &docs);
    assert_eq!(selection.fast().len(), 1);
    assert_eq!(selection.heuristic().len(), 1);
}

#[test]
fn active_tool_noise_is_dropped_from_matches_and_from_the_recent_fill() {
    let docs = [
        Doc::plain("jira", "tool usage for the jira tool", "codeword"),
        Doc::plain("codeword", "", ""),
        Doc::plain("jira", "parameter schema", "unrelated").modified_at(100),
        Doc::plain("unrelated", "", "").modified_at(50),
    ];
    let tools = ActiveToolAliases::from_tool_names(&["jira"]);
    let selection = CandidateSelection::select(&QueryTokens::new("codeword"), &docs, &tools);
    assert_eq!(selection.noise_dropped(), 2);
    let ranked: Vec<usize> = selection.ranked().iter().map(|r| r.index).collect();
    assert_eq!(ranked, [1]);
    assert_eq!(selection.candidates(), [1, 3]);
}

#[test]
fn without_active_tools_nothing_is_dropped_as_noise() {
    let docs = [Doc::plain(
        "jira",
        "tool usage for the jira tool",
        "codeword",
    )];
    let selection = select("codeword", &docs);
    assert_eq!(selection.noise_dropped(), 0);
    assert_eq!(selection.ranked().len(), 1);
}

#[test]
fn past_the_lexical_cut_the_ranking_is_the_best_of_a_full_ranking_and_counts_every_match() {
    // 250 matches with scores 1 to 5 and many ties, so the cut falls inside a tie.
    let docs: Vec<Doc> = (0..250)
        .map(|i| {
            let title = if i % 5 == 0 { "codeword" } else { "" };
            let body = if i % 3 == 0 { "codeword" } else { "notes" };
            Doc::plain(title, "", body).modified_at(i % 7)
        })
        .filter(|d| lexical_score::score(&QueryTokens::new("codeword"), d) > 0)
        .chain((0..200).map(|i| Doc::plain("", "codeword", "").modified_at(i % 4)))
        .collect();
    let selection = select("codeword", &docs);
    let full = lexical_score::rank(&QueryTokens::new("codeword"), &docs);
    assert!(full.len() > MAX_LEXICAL_CANDIDATES);
    assert_eq!(selection.matched(), full.len());
    assert_eq!(selection.ranked(), &full[..MAX_LEXICAL_CANDIDATES]);
}
