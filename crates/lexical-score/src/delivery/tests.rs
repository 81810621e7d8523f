//! The delivery rules as specified: evidence beyond uninformative tokens, then the trim (the trim
//! rules alone are specified in `trim/tests.rs`).

use std::num::NonZeroU32;

use super::*;
use crate::test_support::Doc;
use crate::{MemoryType, QueryTokens, rank};

fn doc(title: &str, description: &str, body: &str) -> Doc {
    Doc::new(MemoryType::Project, title, description, body)
}

fn share(percent: u8) -> Share {
    Share::percent(percent).unwrap()
}

const FUNCTION_WORDS: UninformativeTokens = UninformativeTokens {
    function_words: true,
    requests: false,
    common: None,
    background: None,
};

fn common(percent: u8) -> UninformativeTokens {
    UninformativeTokens {
        common: Some(share(percent)),
        ..UninformativeTokens::NONE
    }
}

fn tokens_rule(uninformative: UninformativeTokens) -> EvidenceRule {
    EvidenceRule {
        uninformative,
        minimum: MinimumEvidence::AnyHit,
        measure: Measure::Substring,
    }
}

#[test]
fn function_words_are_judged_uninformative_and_content_words_are_not() {
    let query = QueryTokens::new("run the tests again please");
    let evidence = QueryEvidence::judge(&query, &tokens_rule(FUNCTION_WORDS), &[] as &[Doc]);
    let judged: Vec<(&str, bool)> = evidence
        .verdicts()
        .iter()
        .map(|v| (v.token.as_str(), v.uninformative.is_some()))
        .collect();
    assert_eq!(
        judged,
        [
            ("run", false),
            ("the", true),
            ("tests", false),
            ("again", true),
            ("please", true)
        ]
    );
    assert_eq!(evidence.informative().as_slice(), ["run", "tests"]);
}

/// Ten documents, `with_word` of which say "widget".
fn tree(with_word: usize) -> Vec<Doc> {
    (0..10)
        .map(|i| {
            let body = if i < with_word {
                "a widget"
            } else {
                "a gadget"
            };
            doc(&format!("note {i}"), "", body)
        })
        .collect()
}

#[test]
fn a_token_in_more_than_the_share_of_the_documents_is_common() {
    let query = QueryTokens::new("widget");
    let evidence = QueryEvidence::judge(&query, &tokens_rule(common(50)), &tree(6));
    assert_eq!(
        evidence.verdicts()[0].uninformative,
        Some(Uninformative::Common {
            in_documents: 6,
            of_documents: 10
        })
    );
}

#[test]
fn a_token_in_at_most_the_share_of_the_documents_is_evidence() {
    let query = QueryTokens::new("widget");
    let evidence = QueryEvidence::judge(&query, &tokens_rule(common(50)), &tree(5));
    assert_eq!(evidence.verdicts()[0].uninformative, None);
}

#[test]
fn a_tree_smaller_than_the_frequency_minimum_judges_no_token_common() {
    let docs: Vec<Doc> = tree(10)
        .into_iter()
        .take(MIN_DOCUMENTS_FOR_FREQUENCY - 1)
        .collect();
    let query = QueryTokens::new("widget");
    let evidence = QueryEvidence::judge(&query, &tokens_rule(common(50)), &docs);
    assert_eq!(evidence.verdicts()[0].uninformative, None);
}

#[test]
fn document_evidence_counts_informative_points_only() {
    let query = QueryTokens::new("the rollback");
    let evidence = QueryEvidence::judge(&query, &tokens_rule(FUNCTION_WORDS), &[] as &[Doc]);
    let runbook = doc("The rollback runbook", "the steps", "");
    assert_eq!(
        evidence.document(&runbook),
        DocumentEvidence {
            points: 4,
            weight: 400,
            whole_word: true,
            rare: false,
            not_alone: true,
            covered: 1,
            informative: 1,
        }
    );
}

#[test]
fn a_token_found_only_inside_a_longer_word_is_not_whole_word_evidence() {
    let query = QueryTokens::new("how");
    let evidence = QueryEvidence::judge(&query, &EvidenceRule::ANY_MATCH, &[] as &[Doc]);
    let showcase = doc("Showcase", "", "");
    assert_eq!(
        evidence.document(&showcase),
        DocumentEvidence {
            points: 4,
            weight: 400,
            whole_word: false,
            rare: false,
            not_alone: true,
            covered: 0,
            informative: 1,
        }
    );
}

#[test]
fn the_untrimmed_rule_delivers_the_whole_ranking() {
    let docs = [
        doc("the", "", ""),
        doc("rollback", "", ""),
        doc("", "", "the"),
    ];
    let query = QueryTokens::new("the rollback");
    let ranked = rank(&query, &docs);
    let evidence = QueryEvidence::judge(&query, &EvidenceRule::ANY_MATCH, &docs);
    assert_eq!(
        DeliveryRule::UNTRIMMED.deliver(&evidence, &ranked, &docs),
        ranked
    );
}

#[test]
fn a_document_matching_only_function_words_is_not_delivered() {
    let docs = [doc("The team", "the rules", ""), doc("Rollback", "", "")];
    let query = QueryTokens::new("the rollback");
    let ranked = rank(&query, &docs);
    let rule = DeliveryRule {
        evidence: EvidenceRule {
            uninformative: FUNCTION_WORDS,
            minimum: MinimumEvidence::AnyHit,
            measure: Measure::Substring,
        },
        trim: TrimRule::Untrimmed,
    };
    let evidence = QueryEvidence::judge(&query, &rule.evidence, &docs);
    let delivered: Vec<usize> = rule
        .deliver(&evidence, &ranked, &docs)
        .iter()
        .map(|r| r.index)
        .collect();
    assert_eq!(delivered, [1]);
}

#[test]
fn a_single_body_hit_falls_short_of_a_two_point_minimum() {
    let docs = [doc("Release", "", "a forward fix"), doc("Typo", "", "")];
    let query = QueryTokens::new("fix the typo");
    let ranked = rank(&query, &docs);
    let rule = DeliveryRule {
        evidence: EvidenceRule {
            uninformative: FUNCTION_WORDS,
            minimum: MinimumEvidence::Points(NonZeroU32::new(2).unwrap()),
            measure: Measure::Substring,
        },
        trim: TrimRule::Untrimmed,
    };
    let evidence = QueryEvidence::judge(&query, &rule.evidence, &docs);
    let delivered: Vec<usize> = rule
        .deliver(&evidence, &ranked, &docs)
        .iter()
        .map(|r| r.index)
        .collect();
    assert_eq!(delivered, [1]);
}

#[test]
fn the_lead_share_is_measured_from_the_first_document_with_enough_evidence() {
    let docs = [
        doc("The the the", "the", "the"),
        doc("Rollback steps", "", ""),
        doc("", "", "rollback"),
    ];
    let query = QueryTokens::new("the rollback steps");
    let ranked = rank(&query, &docs);
    let rule = DeliveryRule {
        evidence: EvidenceRule {
            uninformative: FUNCTION_WORDS,
            minimum: MinimumEvidence::AnyHit,
            measure: Measure::Substring,
        },
        trim: TrimRule::LeadShare(share(50)),
    };
    let evidence = QueryEvidence::judge(&query, &rule.evidence, &docs);
    let delivered: Vec<usize> = rule
        .deliver(&evidence, &ranked, &docs)
        .iter()
        .map(|r| r.index)
        .collect();
    assert_eq!(delivered, [1]);
}

fn corroborated() -> EvidenceRule {
    EvidenceRule {
        uninformative: FUNCTION_WORDS,
        minimum: MinimumEvidence::WholeWordAndPointsOrRare(NonZeroU32::new(2).unwrap()),
        measure: Measure::Substring,
    }
}

fn delivered_indices(rule: &EvidenceRule, query: &str, docs: &[Doc]) -> Vec<usize> {
    let rule = DeliveryRule {
        evidence: *rule,
        trim: TrimRule::Untrimmed,
    };
    let query = QueryTokens::new(query);
    let evidence = QueryEvidence::judge(&query, &rule.evidence, docs);
    rule.deliver(&evidence, &rank(&query, docs), docs)
        .iter()
        .map(|r| r.index)
        .collect()
}

#[test]
fn one_body_mention_of_a_word_other_documents_share_is_not_enough_evidence() {
    let docs = [
        doc("Release", "", "a forward fix"),
        doc("Patch", "", "the fix"),
    ];
    assert!(delivered_indices(&corroborated(), "fix", &docs).is_empty());
}

#[test]
fn one_body_mention_of_a_word_no_other_document_holds_is_enough_evidence() {
    let docs = [
        doc("Migrations", "", "use pg_repack"),
        doc("Patch", "", "the fix"),
    ];
    assert_eq!(delivered_indices(&corroborated(), "repack", &docs), [0]);
}

#[test]
fn two_points_found_only_inside_longer_words_are_not_enough_evidence() {
    let docs = [
        doc("Owners", "", "CODEOWNERS file"),
        doc("Other", "", "code"),
    ];
    let delivered = delivered_indices(&corroborated(), "codeowner", &docs);
    assert!(delivered.is_empty(), "{delivered:?}");
    assert_eq!(delivered_indices(&corroborated(), "owners", &docs), [0]);
}

#[test]
fn requests_to_the_agent_are_judged_uninformative_apart_from_function_words() {
    let rule = tokens_rule(UninformativeTokens {
        requests: true,
        ..FUNCTION_WORDS
    });
    let evidence = QueryEvidence::judge(&QueryTokens::new("fix the typo"), &rule, &[] as &[Doc]);
    let reasons: Vec<Option<Uninformative>> = evidence
        .verdicts()
        .iter()
        .map(|v| v.uninformative)
        .collect();
    assert_eq!(
        reasons,
        [
            Some(Uninformative::Request),
            Some(Uninformative::FunctionWord),
            None
        ]
    );
}

fn measured(measure: Measure) -> EvidenceRule {
    EvidenceRule {
        measure,
        ..EvidenceRule::ANY_MATCH
    }
}

fn evidence_of(measure: Measure, query: &str, target: &Doc, docs: &[Doc]) -> DocumentEvidence {
    QueryEvidence::judge(&QueryTokens::new(query), &measured(measure), docs).document(target)
}

#[test]
fn a_token_found_only_inside_a_longer_word_earns_no_points_when_words_are_measured() {
    let showcase = doc("Showcase", "", "how to");
    let evidence = evidence_of(Measure::Words, "how", &showcase, &[]);
    assert_eq!((evidence.points, evidence.weight), (1, 100));
}

#[test]
fn a_word_with_a_short_ending_counts_as_the_same_word() {
    let suites = doc("Running the test suites", "", "");
    assert_eq!(evidence_of(Measure::Words, "tests", &suites, &[]).points, 4);
    let deployed = doc("Deployed on Fridays", "", "");
    assert_eq!(
        evidence_of(Measure::Words, "deploy", &deployed, &[]).points,
        4
    );
}

#[test]
fn a_longer_ending_makes_a_different_word() {
    let runbook = doc("Release runbook", "", "");
    assert_eq!(evidence_of(Measure::Words, "run", &runbook, &[]).points, 0);
}

#[test]
fn a_cjk_bigram_counts_only_when_it_is_the_same_bigram() {
    let migrations = doc("数据库迁移规范", "", "");
    assert_eq!(
        evidence_of(Measure::Words, "迁移", &migrations, &[]).points,
        4
    );
    let kana = doc("リセット", "", "");
    assert_eq!(evidence_of(Measure::Words, "セッ", &kana, &[]).points, 4);
}

#[test]
fn a_word_few_documents_hold_weighs_more_than_one_most_hold() {
    let mut docs: Vec<Doc> = (0..12).map(|_| doc("Release notes", "", "")).collect();
    docs.push(doc("Lighthouse release", "", ""));
    let lighthouse = doc("Lighthouse", "", "");
    let release = doc("Release", "", "");
    let rare = evidence_of(Measure::RareWords, "lighthouse release", &lighthouse, &docs);
    let common = evidence_of(Measure::RareWords, "lighthouse release", &release, &docs);
    assert_eq!(rare.points, common.points);
    assert!(rare.weight > 3 * common.weight, "{rare:?} vs {common:?}");
}

#[test]
fn a_small_tree_weighs_every_word_alike() {
    let docs = [doc("Release notes", "", ""), doc("Lighthouse", "", "")];
    let evidence = evidence_of(Measure::RareWords, "lighthouse release", &docs[1], &docs);
    assert_eq!(evidence.weight, 400);
}

fn shipped_delivery(query: &str, docs: &[Doc]) -> Vec<usize> {
    let query = QueryTokens::new(query);
    let rule = DeliveryRule::SHIPPED;
    let evidence = QueryEvidence::judge(&query, &rule.evidence, docs);
    rule.deliver(&evidence, &rank(&query, docs), docs)
        .iter()
        .map(|r| r.index)
        .collect()
}

fn team_notes() -> Vec<Doc> {
    vec![
        doc(
            "Code review rules",
            "Two approvals before merge",
            "Reviewers read every line.",
        ),
        doc(
            "Test conventions",
            "How our test suites are named",
            "Run the tests with make check.",
        ),
        doc(
            "Error budget policy",
            "What happens when the budget is spent",
            "Freeze.",
        ),
    ]
}

#[test]
fn an_everyday_word_alone_delivers_nothing() {
    assert_eq!(
        shipped_delivery("format the code please", &team_notes()),
        [] as [usize; 0]
    );
    assert_eq!(
        shipped_delivery("what does this error mean", &team_notes()),
        [] as [usize; 0]
    );
}

#[test]
fn two_everyday_words_of_one_note_are_evidence() {
    assert_eq!(shipped_delivery("code review", &team_notes()), [0]);
}

#[test]
fn a_word_rarer_than_everyday_is_evidence_alone() {
    assert_eq!(shipped_delivery("run the tests again", &team_notes()), [1]);
}

#[test]
fn a_word_common_in_ordinary_text_can_be_judged_uninformative() {
    let rule = tokens_rule(UninformativeTokens {
        background: Some(Background::Uninformative(Zipf::tenths(50))),
        ..UninformativeTokens::NONE
    });
    let evidence =
        QueryEvidence::judge(&QueryTokens::new("code idempotency"), &rule, &[] as &[Doc]);
    let verdicts = evidence.verdicts();
    assert!(matches!(
        verdicts[0].uninformative,
        Some(Uninformative::Background { zipf }) if zipf >= Zipf::tenths(50)
    ));
    assert_eq!(verdicts[1].uninformative, None);
}

#[test]
fn document_evidence_counts_the_informative_words_a_document_holds() {
    let query = QueryTokens::new("rollback the staging database");
    let evidence = QueryEvidence::judge(&query, &tokens_rule(FUNCTION_WORDS), &[] as &[Doc]);
    let runbook = doc("Rollback runbook", "staging steps", "");
    let found = evidence.document(&runbook);
    assert_eq!((found.covered, found.informative), (2, 3));
}

#[test]
fn a_note_holding_half_the_informative_words_is_shown_whole_and_one_holding_less_as_a_line() {
    let query = QueryTokens::new("rollback the staging database");
    let evidence = QueryEvidence::judge(&query, &tokens_rule(FUNCTION_WORDS), &[] as &[Doc]);
    let strong = doc("Rollback runbook", "staging steps", "");
    let weak = doc("Database notes", "", "");
    assert_eq!(
        Tiering::SHIPPED.tier(evidence.document(&strong)),
        Tier::Whole
    );
    assert_eq!(Tiering::SHIPPED.tier(evidence.document(&weak)), Tier::Line);
    assert_eq!(Tiering::Off.tier(evidence.document(&weak)), Tier::Whole);
}
