use proptest::prelude::*;
use selector::{AnswerError, Manifest, validate_answer};
use serde_json::{Value, json};

use crate::support::{candidate, ids, sample_candidates};

const DEPLOY: &str = "/work/app/.memory/project/deploy-checklist.md";
const ROLE: &str = "/home/dev/.memory/user/role.md";
const GRAFANA: &str = "/work/app/.memory/reference/grafana.md";

fn manifest() -> Manifest {
    Manifest::build(&sample_candidates())
}

fn rejected(answer: &Value, limit: usize) -> bool {
    validate_answer(answer, &manifest(), limit).is_err()
}

#[test]
fn a_valid_answer_returns_the_ids_in_answer_order() {
    let answer = json!({ "selected_memories": [GRAFANA, DEPLOY] });
    assert_eq!(
        validate_answer(&answer, &manifest(), 5).unwrap(),
        ids(&[GRAFANA, DEPLOY])
    );
}

#[test]
fn an_empty_list_is_a_valid_answer() {
    let answer = json!({ "selected_memories": [] });
    assert_eq!(
        validate_answer(&answer, &manifest(), 5).unwrap(),
        Vec::<String>::new()
    );
}

#[test]
fn extra_members_beside_the_answer_are_ignored() {
    let answer = json!({ "selected_memories": [ROLE], "reasoning": "the user asked" });
    assert_eq!(
        validate_answer(&answer, &manifest(), 5).unwrap(),
        ids(&[ROLE])
    );
}

#[test]
fn a_bare_array_is_rejected() {
    assert!(rejected(&json!([DEPLOY]), 5));
}

#[test]
fn an_object_without_the_answer_member_is_rejected() {
    assert!(rejected(&json!({ "memories": [DEPLOY] }), 5));
}

#[test]
fn a_non_array_answer_member_is_rejected() {
    assert!(rejected(&json!({ "selected_memories": DEPLOY }), 5));
}

#[test]
fn a_non_string_item_is_rejected() {
    assert!(rejected(&json!({ "selected_memories": [DEPLOY, 3] }), 5));
}

#[test]
fn more_ids_than_the_limit_are_rejected() {
    assert!(rejected(
        &json!({ "selected_memories": [DEPLOY, ROLE, GRAFANA] }),
        2
    ));
}

#[test]
fn an_id_outside_the_manifest_is_rejected() {
    assert!(rejected(
        &json!({ "selected_memories": [DEPLOY, "/etc/passwd"] }),
        5
    ));
}

#[test]
fn a_candidate_left_out_by_the_byte_cap_is_outside_the_manifest() {
    let big = "x".repeat(511);
    let mut candidates: Vec<_> = (0..60)
        .map(|i| candidate(&format!("/m/long-{i:02}.md"), "project", &big))
        .collect();
    candidates.push(candidate("/m/also-long.md", "project", &big));
    let manifest = Manifest::build(&candidates);
    assert!(!manifest.contains("/m/also-long.md"));

    let answer = json!({ "selected_memories": ["/m/also-long.md"] });
    assert_eq!(
        validate_answer(&answer, &manifest, 5),
        Err(AnswerError::NotInManifest { position: 0 })
    );
}

#[test]
fn repeated_ids_collapse_to_their_first_occurrence() {
    let answer = json!({ "selected_memories": [ROLE, DEPLOY, ROLE, DEPLOY] });
    assert_eq!(
        validate_answer(&answer, &manifest(), 5).unwrap(),
        ids(&[ROLE, DEPLOY])
    );
}

#[test]
fn repeated_ids_count_once_against_the_limit() {
    let answer = json!({ "selected_memories": [ROLE, ROLE, ROLE] });
    assert_eq!(
        validate_answer(&answer, &manifest(), 1).unwrap(),
        ids(&[ROLE])
    );
}

#[test]
fn a_rejection_does_not_quote_the_unknown_id() {
    let error = validate_answer(
        &json!({ "selected_memories": ["/secret/echo.md"] }),
        &manifest(),
        5,
    )
    .unwrap_err()
    .to_string();
    assert!(!error.contains("/secret/echo.md"), "{error}");
}

/// Strings that are sometimes manifest ids, so that generated answers hit both paths.
fn id_like() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(DEPLOY.to_owned()),
        Just(ROLE.to_owned()),
        Just(GRAFANA.to_owned()),
        Just("selected_memories".to_owned()),
        ".*",
    ]
}

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        id_like().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((id_like(), inner), 0..6)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

/// Well-shaped answers, so the membership and limit rules are exercised, not only the shape.
fn shaped_answer() -> impl Strategy<Value = Value> {
    prop::collection::vec(id_like(), 0..10)
        .prop_map(|listed| json!({ "selected_memories": listed }))
}

proptest! {
    #[test]
    fn the_validator_never_panics_and_rejects_only_by_its_own_rules(answer in arbitrary_json(), limit in 0usize..8) {
        let outcome = validate_answer(&answer, &manifest(), limit);
        let by_a_validation_rule = !matches!(outcome, Err(AnswerError::NoJsonObject | AnswerError::Reply(_)));
        prop_assert!(by_a_validation_rule, "unexpected outcome {:?}", outcome);
    }

    #[test]
    fn the_validator_only_returns_unique_manifest_ids_within_the_limit(
        answer in prop_oneof![arbitrary_json(), shaped_answer()],
        limit in 0usize..8,
    ) {
        let manifest = manifest();
        if let Ok(selected) = validate_answer(&answer, &manifest, limit) {
            prop_assert!(selected.len() <= limit);
            for (position, id) in selected.iter().enumerate() {
                prop_assert!(manifest.contains(id), "{id} is not in the manifest");
                prop_assert!(!selected[..position].contains(id), "{id} repeated");
            }
        }
    }
}
