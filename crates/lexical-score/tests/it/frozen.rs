//! The frozen scorer, the fixed reference the shipped scorer is compared with
//! (`docs/spec.md#the-frozen-scorer`).

use lexical_score::MemoryType;
use lexical_score::measurement::frozen::{FrozenDocument, rank};

fn doc<'a>(memory_type: MemoryType, title: &'a str, body: &'a str) -> FrozenDocument<'a> {
    FrozenDocument {
        memory_type,
        title,
        description: "",
        body,
    }
}

fn scores(query: &str, docs: &[FrozenDocument<'_>]) -> Vec<(usize, u32)> {
    rank(query, docs)
        .iter()
        .map(|r| (r.index, r.score))
        .collect()
}

#[test]
fn frozen_scorer_sees_only_ascii_tokens() {
    let docs = [doc(MemoryType::Project, "记忆检索", "")];
    assert!(scores("记忆检索 Развёртывание", &docs).is_empty());
}

#[test]
fn frozen_scorer_gives_a_point_to_every_non_empty_body_even_without_a_match() {
    let docs = [
        doc(MemoryType::Project, "alpha", "some body"),
        doc(MemoryType::Project, "beta", ""),
    ];
    assert_eq!(scores("unrelated", &docs), [(0, 1)]);
}

#[test]
fn frozen_scorer_adds_two_per_token_found_anywhere_including_the_type_word() {
    let docs = [doc(MemoryType::Project, "deploy", "")];
    // `deploy` in the title, `project` in the type word (+2) and in the keyword list (+1).
    assert_eq!(scores("deploy project", &docs), [(0, 5)]);
}

#[test]
fn frozen_scorer_counts_keywords_without_a_lexical_match() {
    let docs = [doc(MemoryType::User, "editor", "")];
    assert_eq!(scores("preferences", &docs), [(0, 1)]);
}

#[test]
fn frozen_scorer_counts_a_repeated_query_token_once() {
    let docs = [doc(MemoryType::Reference, "deploy", "")];
    assert_eq!(scores("deploy deploy DEPLOY", &docs), [(0, 2)]);
}

#[test]
fn frozen_scorer_ignores_tokens_shorter_than_three_characters() {
    let docs = [doc(MemoryType::Reference, "go v1", "")];
    assert!(scores("go v1", &docs).is_empty());
}

#[test]
fn frozen_scorer_breaks_ties_by_type_name_alphabetically() {
    let docs = [
        doc(MemoryType::User, "deploy", "b"),
        doc(MemoryType::Reference, "deploy", "b"),
        doc(MemoryType::Feedback, "deploy", "b"),
        doc(MemoryType::Project, "deploy", "b"),
        doc(MemoryType::Feedback, "deploy", "b"),
    ];
    let order: Vec<usize> = scores("deploy", &docs).iter().map(|(i, _)| *i).collect();
    assert_eq!(order, [2, 4, 3, 1, 0]);
}
