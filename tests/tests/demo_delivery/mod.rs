//! What the demo tree (`corpus/demo`) delivers through the built binary with no selector: the
//! measured delivery rule keeps the memories a prompt is about and nothing matched only through
//! common words or pieces of longer words.

use std::path::Path;

use serde_json::Value;

use crate::support::{Tree, scan_was_published};

/// A tree holding a copy of the memory files of `corpus/demo`.
fn demo() -> Tree {
    let tree = Tree::new();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/demo");
    for scope in ["project", "user"] {
        copy(&source.join(scope), &tree, scope);
    }
    tree
}

fn copy(dir: &Path, tree: &Tree, relative: &str) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = format!("{relative}/{}", entry.file_name().to_string_lossy());
        if entry.file_type().unwrap().is_dir() {
            copy(&entry.path(), tree, &name);
        } else if entry.path().extension().is_some_and(|e| e == "md") {
            tree.write(&name, &std::fs::read_to_string(entry.path()).unwrap());
        }
    }
}

/// The relative paths the first prompt of a tool-free turn receives for `query` with `extra`
/// arguments, from a run whose scan was published within the initial wait (a stalled machine's
/// run is made again).
fn delivered_with(tree: &Tree, query: &str, extra: &[&str]) -> Vec<String> {
    initial_paths(tree, query, extra).0
}

/// The relative paths the first prompt delivers whole for `query` (run with `extra`), and those
/// it names in a line.
fn initial_paths(tree: &Tree, query: &str, extra: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    let run = tree.run_with_roots_until("recall", query, &args, scan_was_published);
    let value: Value = run.success().json();
    let paths = |key: &str| -> Vec<String> {
        value["initial"][key]
            .as_array()
            .map(|documents| {
                documents
                    .iter()
                    .map(|d| d["relative_path"].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    (paths("documents"), paths("lines"))
}

/// The relative paths the first prompt receives for `query` under the measured rule.
fn delivered(tree: &Tree, query: &str) -> Vec<String> {
    delivered_with(tree, query, &[])
}

#[test]
fn the_rollback_question_delivers_the_runbook_and_nothing_matched_inside_another_word() {
    let tree = demo();
    assert_eq!(
        delivered(&tree, "how do we roll back a release?"),
        ["release-rollback.md"]
    );
}

#[test]
fn a_question_two_memories_answer_delivers_both() {
    let tree = demo();
    assert_eq!(
        delivered(
            &tree,
            "why is the CI pipeline red, and where is the CI health dashboard?"
        ),
        ["ci/pipeline.md", "dashboards.md"]
    );
}

#[test]
fn everyday_prompts_that_share_only_common_words_deliver_nothing() {
    let tree = demo();
    for query in [
        "fix the typo in the README",
        "thanks, looks good",
        "format the code please",
    ] {
        assert_eq!(delivered(&tree, query), Vec::<String>::new(), "{query}");
    }
}

#[test]
fn run_the_tests_again_delivers_the_testing_note_first() {
    let tree = demo();
    let delivered = delivered(&tree, "run the tests again");
    assert_eq!(
        delivered.first().map(String::as_str),
        Some("running-tests.md")
    );
}

#[test]
fn rank_marks_what_is_delivered_and_says_why_a_token_is_uninformative() {
    let tree = demo();
    let run = tree.run_with_roots("rank", "how do we roll back a release?", &[]);
    let text = run.success().stdout.clone();
    assert!(
        text.contains("uninformative: how (function word)"),
        "{text}"
    );
    assert!(
        text.contains(
            "Release rollback runbook — release-rollback.md (project, project scope) · delivered"
        ),
        "{text}"
    );
    assert!(
        !text.contains("role.md (user, user scope) · delivered"),
        "{text}"
    );
}

#[test]
fn rank_leads_with_what_recall_delivers_in_delivery_order() {
    let tree = demo();
    let query = "how do I clear the redis cache?";
    let run = tree.run_with_roots("rank", query, &["--json", "--limit", "0"]);
    let value: Value = run.success().json();
    let rows = value["ranked"].as_array().unwrap();
    let leading: Vec<&str> = rows
        .iter()
        .take_while(|row| row["delivered"] == true)
        .map(|row| row["relative_path"].as_str().unwrap())
        .collect();
    let (whole, lines) = initial_paths(&tree, query, &[]);
    assert_eq!(leading, [whole, lines].concat());
    assert!(
        rows.iter()
            .skip(leading.len())
            .all(|row| row["delivered"] == false),
        "{value}"
    );
}

#[test]
fn rank_marks_a_row_matched_only_by_uninformative_words() {
    let tree = demo();
    let run = tree.run_with_roots("rank", "how do I clear the redis cache?", &[]);
    let text = run.success().stdout.clone();
    let first = text
        .lines()
        .find(|l| l.starts_with("1. "))
        .unwrap_or_else(|| panic!("no first row in\n{text}"));
    assert!(first.ends_with(" · delivered"), "{text}");
    assert!(
        text.contains("Running the tests — running-tests.md (project, project scope) · only uninformative words"),
        "{text}"
    );
}

#[test]
fn rank_json_carries_each_tokens_verdict_and_each_rows_delivery() {
    let tree = demo();
    let run = tree.run_with_roots("rank", "run the tests again", &["--json"]);
    let value: Value = run.success().json();
    let reasons: Vec<(&str, &Value)> = value["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["token"].as_str().unwrap(), &t["uninformative"]))
        .collect();
    assert_eq!(
        reasons[0],
        ("run", &serde_json::json!({"reason": "request"}))
    );
    assert_eq!(reasons[2], ("tests", &Value::Null));
    assert_eq!(value["ranked"][0]["delivered"], true);
}

#[test]
fn a_trim_of_none_delivers_the_designs_top_five() {
    let tree = demo();
    let documents = delivered_with(&tree, "how do we roll back a release?", &["--trim", "none"]);
    assert_eq!(documents.len(), 5, "{documents:?}");
    assert_eq!(documents[0], "release-rollback.md");
}
