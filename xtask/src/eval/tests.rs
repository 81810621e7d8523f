use std::time::SystemTime;

use memory_scan::ScannedDocument;

use super::corpus::{self, Corpus};
use super::quality::{self, frozen_scorer, quality_gates, quality_report, shipped_scorer};

fn real_corpus() -> Corpus {
    corpus::load(&corpus::corpus_dir().unwrap(), SystemTime::now()).unwrap()
}

/// The shipped scorer blind to Chinese, Japanese and Korean: it ranks the query with every
/// CJK character removed, so no CJK bigram can ever match.
fn scorer_without_cjk(query: &str, documents: &[ScannedDocument]) -> Vec<usize> {
    let stripped: String = query
        .chars()
        .filter(|&c| !matches!(c, '\u{3000}'..='\u{9fff}' | '\u{ac00}'..='\u{d7af}' | '\u{ff65}'..='\u{ff9f}'))
        .collect();
    shipped_scorer(&stripped, documents)
}

#[test]
fn shipped_scorer_passes_every_quality_gate_on_the_corpus() {
    let corpus = real_corpus();
    let report = quality_report(&corpus, &shipped_scorer, &frozen_scorer);
    assert_eq!(quality_gates(&report), Vec::<String>::new());
}

#[test]
fn scorer_that_drops_cjk_bigrams_fails_the_quality_gates_of_the_cjk_slices() {
    let corpus = real_corpus();
    let report = quality_report(&corpus, &scorer_without_cjk, &frozen_scorer);
    let failures = quality_gates(&report);
    for slice in ["chinese", "japanese", "korean"] {
        assert!(
            failures
                .iter()
                .any(|f| f.contains(&format!("Recall@5 on {slice} "))),
            "no Recall@5 failure for {slice}: {failures:#?}"
        );
    }
}

#[test]
fn random_floor_is_five_over_the_corpus_size_and_gated_above_a_quarter() {
    let corpus = real_corpus();
    let mut report = quality_report(&corpus, &shipped_scorer, &frozen_scorer);
    assert!((report.random_floor - 5.0 / corpus.documents.len() as f64).abs() < 1e-12);
    report.random_floor = quality::random_floor(19);
    assert!(
        quality_gates(&report)
            .iter()
            .any(|f| f.starts_with("random floor"))
    );
}

#[test]
fn scorer_that_answers_every_query_fails_the_no_result_gates() {
    let corpus = real_corpus();
    let never_silent = |query: &str, docs: &[ScannedDocument]| {
        let mut top = shipped_scorer(query, docs);
        if top.is_empty() {
            top.push(0);
        }
        top
    };
    let failures = quality_gates(&quality_report(&corpus, &never_silent, &frozen_scorer));
    assert!(
        failures
            .iter()
            .any(|f| f.starts_with("shipped no-result precision"))
    );
    assert!(
        failures
            .iter()
            .any(|f| f.starts_with("shipped no-result recall"))
    );
}

#[test]
fn a_lexical_hit_on_the_semantic_slice_asks_to_raise_the_gate() {
    let corpus = real_corpus();
    let oracle = |query: &str, docs: &[ScannedDocument]| {
        let case = corpus.cases.iter().find(|c| c.query == query).unwrap();
        if case.slice == corpus::SEMANTIC_SLICE {
            case.relevant.clone()
        } else {
            shipped_scorer(query, docs)
        }
    };
    let failures = quality_gates(&quality_report(&corpus, &oracle, &frozen_scorer));
    assert!(
        failures.iter().any(|f| f.contains("raise this gate")),
        "{failures:#?}"
    );
}

#[test]
fn corpus_maps_every_document_to_its_scope_relative_id_with_its_age() {
    let now = SystemTime::now();
    let corpus = corpus::load(&corpus::corpus_dir().unwrap(), now).unwrap();
    let rollback = corpus
        .ids
        .iter()
        .position(|id| id == "project/deploy/rollback.md")
        .unwrap();
    let age = now
        .duration_since(corpus.documents[rollback].document().mtime())
        .unwrap();
    assert_eq!(age.as_secs(), 3 * 86_400);
    assert!(corpus.ids.iter().any(|id| id == "user/terse.md"));
}

#[test]
fn corpus_with_a_case_naming_an_unknown_document_fails_to_load() {
    let source = copy_of_corpus();
    let cases = source.path().join("cases.toml");
    let text = std::fs::read_to_string(&cases).unwrap();
    std::fs::write(
        &cases,
        text.replacen("project/deploy/rollback.md", "project/nope.md", 1),
    )
    .unwrap();
    let error = corpus::load(source.path(), SystemTime::now()).unwrap_err();
    assert!(
        format!("{error:#}").contains("unknown document project/nope.md"),
        "{error:#}"
    );
}

#[test]
fn corpus_with_a_noisy_case_sharing_a_whole_word_fails_to_load() {
    let source = copy_of_corpus();
    let cases = source.path().join("cases.toml");
    let text = std::fs::read_to_string(&cases).unwrap();
    std::fs::write(
        &cases,
        text.replacen(
            "query = \"pls answer in nihongo\"",
            "query = \"pls answers in nihongo\"",
            1,
        ),
    )
    .unwrap();
    let error = corpus::load(source.path(), SystemTime::now()).unwrap_err();
    assert!(
        format!("{error:#}").contains("noisy-nihongo shares the word \"answers\""),
        "{error:#}"
    );
}

#[test]
fn corpus_with_a_noisy_case_matching_its_own_answer_fails_to_load() {
    let source = copy_of_corpus();
    let cases = source.path().join("cases.toml");
    let text = std::fs::read_to_string(&cases).unwrap();
    std::fs::write(
        &cases,
        text.replacen(
            "query = \"pls answer in nihongo\"\nrelevant = [\"user/language-ja.md\"]",
            "query = \"pls answer in nihongo\"\nrelevant = [\"user/language-ja.md\", \"user/terse.md\"]",
            1,
        ),
    )
    .unwrap();
    let error = corpus::load(source.path(), SystemTime::now()).unwrap_err();
    assert!(
        format!("{error:#}").contains("matches its own answer user/terse.md"),
        "{error:#}"
    );
}

#[test]
fn corpus_with_a_document_lacking_an_age_fails_to_load() {
    let source = copy_of_corpus();
    std::fs::copy(
        source.path().join("user/terse.md"),
        source.path().join("user/extra.md"),
    )
    .unwrap();
    let error = corpus::load(source.path(), SystemTime::now()).unwrap_err();
    assert!(
        format!("{error:#}").contains("user/extra.md has no age_days"),
        "{error:#}"
    );
}

fn copy_of_corpus() -> tempfile::TempDir {
    let source = corpus::corpus_dir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for scope in ["project", "user"] {
        corpus::copy_tree(&source.join(scope), &dir.path().join(scope)).unwrap();
    }
    for file in ["documents.toml", "cases.toml"] {
        std::fs::copy(source.join(file), dir.path().join(file)).unwrap();
    }
    dir
}
