//! End-to-end specification of the `memrecall` command: the real binary over real memory trees
//! in temporary directories, with a loopback model server where a selector is needed.

mod catalogs;
mod demo_delivery;
mod hook;
#[cfg(unix)]
mod hostile;
mod logging;
mod mcp;
mod rank_keywords;
mod readme_walkthrough;
mod recall_notes;
mod serve;
mod stats;
mod support;
mod windows_server;

use std::time::Duration;

use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use support::{
    Tree, UNSET_KEY_ENV, assert_json_snapshot_without_timings, initial_was_fast, scan_was_published,
};

const QUERY: &str = "release checklist";

/// The relative paths of the documents a consume point delivered.
fn delivered(point: &Value) -> Vec<&str> {
    point["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["relative_path"].as_str().unwrap())
        .collect()
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

/// Asserts `text` has a line starting with `prefix`.
fn assert_line_starting(text: &str, prefix: &str) {
    assert!(
        text.lines().any(|l| l.starts_with(prefix)),
        "no line starting {prefix:?} in:\n{text}"
    );
}

// ---------------------------------------------------------------------------------------------
// recall, text

#[test]
fn recall_without_selector_delivers_the_lexical_result_at_the_initial_point() {
    let tree = Tree::standard();
    let run = tree.run_with_roots("recall", QUERY, &[]);
    run.success().no_panic();
    let out = &run.stdout;
    let all = lines(out);
    assert!(
        all.contains(&"scanned 4 document(s), 2 file(s) skipped, 0 file(s) known from the catalog"),
        "{out}"
    );
    assert_line_starting(
        out,
        "initial point: delivered 2 document(s) · phase refined · strategy heuristic · after ",
    );
    let first = all
        .iter()
        .position(|l| *l == "  1. Deploy checklist — deploy.md (project, project scope)")
        .unwrap_or_else(|| panic!("{out}"));
    assert_eq!(
        all[first + 1],
        "  2. Rollback procedure — ops/rollback.md (project, project scope)"
    );
    assert!(
        all.contains(&"tool-result point: not reached (tool-free turn)"),
        "{out}"
    );
    assert_line_starting(out, "strategy: heuristic · timings: scan ");
}

#[test]
fn recall_with_a_tool_call_delivers_fast_first_and_reports_the_tool_result_point() {
    let tree = Tree::standard();
    // The stand-in model answers after 150 ms with an empty pick, so the fast result is what
    // the initial point sends (in a run the machine did not stall past the 100 ms initial wait)
    // and the settled recall has nothing left for the tool result.
    let run = tree.run_with_roots_until(
        "recall",
        QUERY,
        &[
            "--selector",
            "mock",
            "--mock-latency-ms",
            "150",
            "--tool-using",
        ],
        |run| {
            run.stdout
                .contains("initial point: delivered 2 document(s) · phase fast")
        },
    );
    run.success().no_panic();
    let out = &run.stdout;
    assert_line_starting(
        out,
        "initial point: delivered 2 document(s) · phase fast · strategy heuristic · after ",
    );
    assert!(
        lines(out).contains(&"  1. Deploy checklist — deploy.md (project, project scope)"),
        "{out}"
    );
    assert!(
        lines(out)
            .contains(&"tool-result point: nothing delivered (discarded: no_relevant_results)"),
        "{out}"
    );
    assert_line_starting(out, "strategy: model · timings: ");
}

// ---------------------------------------------------------------------------------------------
// rank and scan, text

#[test]
fn rank_orders_matches_by_score_and_shows_each_fields_contribution() {
    let tree = Tree::standard();
    let run = tree.run_with_roots("rank", QUERY, &[]);
    run.success().no_panic();
    let expected = "\
query: release checklist
scorer: shipped · 4 document(s) scanned · 2 shown
query tokens: release checklist
evidence only beside another word: release (Zipf 5.1)

1. score 9 · Deploy checklist — deploy.md (project, project scope) · delivered
   title +4 (checklist)
   description +3 (release)
   body +1 (release)
   type boost +1
   evidence: release, checklist (2 of 2 informative words)

2. score 6 · Rollback procedure — ops/rollback.md (project, project scope) · delivered
   description +3 (release)
   body +2 (release, checklist)
   type boost +1
   evidence: release, checklist (2 of 2 informative words)
";
    assert_eq!(run.stdout, expected);
}

#[test]
fn rank_says_so_when_nothing_matches() {
    let tree = Tree::standard();
    let run = tree.run_with_roots("rank", "kubernetes", &[]);
    run.success().no_panic();
    assert!(
        lines(&run.stdout).contains(&"no document matches this query"),
        "{}",
        run.stdout
    );
}

#[test]
fn scan_lists_documents_by_scope_and_skipped_files_with_their_reason() {
    let tree = Tree::standard();
    let mut args = vec!["scan".to_owned()];
    args.extend(tree.root_args());
    let run = tree.run(&args);
    run.success().no_panic();
    let out = &run.stdout;
    let all = lines(out);
    assert!(
        all[0].starts_with("4 document(s) in ")
            && all[0].ends_with(" ms (6 file(s) seen, 2 skipped)"),
        "{out}"
    );
    for line in [
        "  project  project    deploy.md  (Deploy checklist)",
        "  project  reference  grafana.md  (Checkout dashboard)",
        "  project  project    ops/rollback.md  (Rollback procedure)",
        "  user     user       role.md  (Role)",
    ] {
        assert!(all.contains(&line), "missing {line:?} in:\n{out}");
    }
    let project = tree.project();
    let notes = format!(
        "  skipped  {}: no_frontmatter",
        project.join("notes.md").display()
    );
    let draft = format!(
        "  skipped  {}: unknown_type",
        project.join("draft.md").display()
    );
    assert!(all.contains(&notes.as_str()), "{out}");
    assert!(all.contains(&draft.as_str()), "{out}");
}

// ---------------------------------------------------------------------------------------------
// JSON forms

#[test]
fn recall_json_reports_points_strategy_scan_timings_and_telemetry() {
    let tree = Tree::standard();
    let run = tree.run_with_roots("recall", QUERY, &["--json"]);
    run.success().no_panic();
    assert_json_snapshot_without_timings("recall_json_tool_free", &run.json());
}

#[test]
fn recall_json_says_the_fast_path_design_ran_by_default() {
    let tree = Tree::standard();
    let run = tree.run_with_roots("recall", QUERY, &["--json"]);
    run.success().no_panic();
    assert_eq!(run.json()["delivery_design"], "fast-path");
}

#[test]
fn recall_json_says_the_gated_design_ran_when_config_toml_chooses_it() {
    let tree = Tree::standard();
    tree.write("home/config.toml", "[delivery]\ndesign = \"gated\"\n");
    let run = tree.run_with_roots("recall", QUERY, &["--json"]);
    run.success().no_panic();
    assert_eq!(run.json()["delivery_design"], "gated");
}

#[test]
fn the_delivery_flag_wins_over_config_toml() {
    let tree = Tree::standard();
    tree.write("home/config.toml", "[delivery]\ndesign = \"gated\"\n");
    let run = tree.run_with_roots("recall", QUERY, &["--json", "--delivery", "fast-path"]);
    run.success().no_panic();
    assert_eq!(run.json()["delivery_design"], "fast-path");
}

#[test]
fn an_unknown_delivery_design_in_config_toml_exits_with_one_line_naming_the_key() {
    let tree = Tree::standard();
    tree.write("home/config.toml", "[delivery]\ndesign = \"eager\"\n");
    let run = tree.run_with_roots("recall", QUERY, &[]);
    let line = run.one_line_failure(4);
    assert!(line.contains("line 2, key `design`"), "{line}");
    assert!(line.contains("delivery.design"), "{line}");
    assert!(!line.contains("eager"), "the value is never echoed: {line}");
}

#[test]
fn a_secret_under_a_misspelt_config_key_is_never_printed() {
    let tree = Tree::standard();
    tree.write(
        "home/config.toml",
        "[selector]\nkind = \"http\"\napi_key = \"sk-live-abcdef\"\n",
    );
    let run = tree.run_with_roots("recall", QUERY, &["--json"]);
    let line = run.one_line_failure(4);
    assert!(!line.contains("sk-live"), "{line}");
    assert!(line.contains("line 3, key `api_key`"), "{line}");
}

#[test]
fn rank_json_lists_ranked_documents_with_path_scope_type_title_and_score() {
    let tree = Tree::standard();
    let run = tree.run_with_roots("rank", QUERY, &["--json"]);
    run.success().no_panic();
    let value = run.json();
    let ranked = value["ranked"].as_array().unwrap();
    for row in ranked {
        for key in ["path", "relative_path", "scope", "type", "title", "score"] {
            assert!(row.get(key).is_some(), "{key} missing in {row}");
        }
    }
    assert_json_snapshot_without_timings("rank_json", &value);
}

#[test]
fn rank_json_names_the_words_of_the_evidence_and_the_part_of_the_rule_that_decided() {
    let tree = Tree::new();
    tree.project_topic(
        "review.md",
        "Code review rules",
        "Two approvals before a merge",
        "project",
        "Reviewers read every line.",
    );
    tree.project_topic(
        "tests.md",
        "Test conventions",
        "How the test suites are named",
        "project",
        "Run the tests with make check.",
    );
    let chatter = tree.run_with_roots("rank", "format the code please", &["--json"]);
    let value = chatter.success().json();
    let ranked = value["ranked"].as_array().unwrap();
    let row = ranked
        .iter()
        .find(|row| row["title"] == "Code review rules")
        .unwrap();
    assert_eq!(row["decided_by"], "everyday-word-alone");
    assert!(ranked.iter().all(|row| row["decided_by"] != "delivered"));
    assert_eq!(row["evidence"], json!(["code"]));

    let answer = tree.run_with_roots("rank", "run the tests again", &["--json"]);
    let value = answer.success().json();
    let row = &value["ranked"][0];
    assert_eq!(row["title"], "Test conventions");
    assert_eq!(row["decided_by"], "delivered");
    assert_eq!(row["evidence"], json!(["tests"]));
}

#[test]
fn rank_limit_zero_shows_every_match_and_the_default_shows_five() {
    let tree = Tree::new();
    for i in 0..7 {
        tree.project_topic(
            &format!("release-{i}.md"),
            &format!("Release note {i}"),
            "What changed",
            "project",
            "",
        );
    }
    tree.project_topic("other.md", "Other", "Unrelated", "project", "");
    let count = |extra: &[&str]| {
        let mut args = vec!["--json"];
        args.extend_from_slice(extra);
        let run = tree.run_with_roots("rank", "release", &args);
        run.success().no_panic();
        run.json()["ranked"].as_array().unwrap().len()
    };
    assert_eq!(count(&[]), 5);
    assert_eq!(count(&["--limit", "0"]), 7);
    assert_eq!(count(&["--limit", "3"]), 3);
}

// ---------------------------------------------------------------------------------------------
// Failures and their exit codes

#[test]
fn a_missing_project_root_exits_3_with_one_line() {
    let tree = Tree::standard();
    let missing = tree.base().join("nowhere");
    let run = tree.run(&[
        "recall",
        QUERY,
        "--project",
        missing.to_str().unwrap(),
        "--user",
        tree.user().to_str().unwrap(),
    ]);
    let line = run.one_line_failure(3);
    assert!(
        line.contains("project root") && line.contains("does not exist"),
        "{line}"
    );
}

#[test]
fn a_project_root_that_is_a_file_exits_3_with_one_line() {
    let tree = Tree::standard();
    let file = tree.project().join("deploy.md");
    let run = tree.run(&[
        "rank",
        QUERY,
        "--project",
        file.to_str().unwrap(),
        "--user",
        tree.user().to_str().unwrap(),
    ]);
    let line = run.one_line_failure(3);
    assert!(line.contains("project root"), "{line}");
}

#[test]
fn an_unknown_flag_exits_2_with_a_usage_error() {
    let tree = Tree::standard();
    let run = tree.run_with_roots("recall", QUERY, &["--no-such-flag"]);
    assert_eq!(run.code, Some(2));
    run.no_panic();
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    assert!(
        run.stderr
            .starts_with("error: unexpected argument '--no-such-flag'"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("Usage: memrecall recall"),
        "{}",
        run.stderr
    );
}

#[test]
fn http_selector_without_url_exits_4_with_one_line() {
    let tree = Tree::standard();
    let run = tree.run_with_roots("recall", QUERY, &["--selector", "http"]);
    let line = run.one_line_failure(4);
    assert!(line.contains("--selector-url"), "{line}");
}

#[test]
fn an_http_selector_url_that_is_not_http_exits_4_with_one_line() {
    let tree = Tree::standard();
    let run = tree.run_with_roots(
        "recall",
        QUERY,
        &[
            "--selector",
            "http",
            "--selector-url",
            "ftp://127.0.0.1",
            "--selector-model",
            "test-model",
            "--api-key-env",
            UNSET_KEY_ENV,
        ],
    );
    let line = run.one_line_failure(4);
    assert!(line.contains("ftp://127.0.0.1"), "{line}");
}

#[test]
fn telemetry_without_the_jsonl_prefix_exits_2_with_one_line() {
    let tree = Tree::standard();
    let run = tree.run_with_roots("recall", QUERY, &["--telemetry", "events.jsonl"]);
    let line = run.one_line_failure(2);
    assert!(line.contains("jsonl:PATH"), "{line}");
    assert!(!tree.base().join("events.jsonl").exists());
}

#[test]
fn an_unreachable_selector_falls_back_to_the_lexical_result_and_says_so() {
    let tree = Tree::standard();
    // Port 1 on loopback is closed: the connection is refused at once. The tool call keeps the
    // turn open until the recall settles, so the failure is always part of the output.
    let run = tree.run_with_roots(
        "recall",
        QUERY,
        &[
            "--selector",
            "http",
            "--selector-url",
            "http://127.0.0.1:1",
            "--selector-model",
            "test-model",
            "--api-key-env",
            UNSET_KEY_ENV,
            "--tool-using",
        ],
    );
    run.success().no_panic();
    let out = &run.stdout;
    // Whether the initial point sends the fast result or the already settled fallback depends
    // on how quickly the refusal arrives; either way the lexical top two reach the model.
    assert_line_starting(out, "initial point: delivered 2 document(s) · phase ");
    assert!(
        lines(out).contains(&"  1. Deploy checklist — deploy.md (project, project scope)"),
        "{out}"
    );
    let note = out
        .lines()
        .find(|l| l.starts_with("note: the selector failed ("))
        .unwrap_or_else(|| panic!("no selector note in:\n{out}"));
    assert!(note.ends_with("); the lexical fallback was used"), "{note}");
    assert_line_starting(out, "strategy: heuristic · timings: ");
}

// ---------------------------------------------------------------------------------------------
// The HTTP selector against a loopback model server

/// A chat completion whose first message carries `content`.
fn completion(content: &str) -> Value {
    json!({
        "id": "chatcmpl-e2e",
        "object": "chat.completion",
        "created": 1_796_040_000,
        "model": "test-model",
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": content },
            "finish_reason": "stop"
        }]
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_model_refines_the_fast_result_at_the_tool_result_point() {
    let tree = Tree::standard();
    let deploy = tree.project().join("deploy.md");
    let grafana = tree.project().join("grafana.md");
    let server = MockServer::start().await;
    // The model re-picks a fast document and adds one the lexical pass missed.
    let answer = json!({ "selected_memories": [deploy, grafana] }).to_string();
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(completion(&answer))
                .set_delay(Duration::from_millis(250)),
        )
        // One request per run; a run whose initial point came after the model (a stalled
        // machine) is made again.
        .expect(1..)
        .mount(&server)
        .await;
    let url = server.uri();
    let run = tokio::task::spawn_blocking(move || {
        tree.run_with_roots_until(
            "recall",
            QUERY,
            &[
                "--selector",
                "http",
                "--selector-url",
                &url,
                "--selector-model",
                "test-model",
                "--api-key-env",
                UNSET_KEY_ENV,
                "--tool-using",
                "--json",
            ],
            initial_was_fast,
        )
    })
    .await
    .unwrap();
    run.success().no_panic();
    let value = run.json();

    let initial = &value["initial"];
    assert_eq!(initial["outcome"], "delivered");
    assert_eq!(initial["phase"], "fast");
    let fast = delivered(initial);
    assert_eq!(fast, ["deploy.md", "ops/rollback.md"]);

    let tool = &value["tool_result"];
    assert_eq!(tool["outcome"], "delivered");
    assert_eq!(tool["phase"], "refined");
    assert_eq!(tool["strategy"], "model");
    assert_eq!(delivered(tool), ["grafana.md"]);
    assert_eq!(value["strategy"], "model");

    assert!(
        value["timings_ms"]["fast_published"].is_number(),
        "the fast result was published"
    );

    let requests = server.received_requests().await.unwrap();
    let body: Value = requests[0].body_json().unwrap();
    assert_eq!(body["model"], "test-model");

    assert_json_snapshot_without_timings("recall_json_http_tool_using", &value);
}

// ---------------------------------------------------------------------------------------------
// Telemetry

#[test]
fn telemetry_file_in_a_missing_directory_exits_2_with_one_line() {
    let tree = Tree::standard();
    let run = tree.run_with_roots(
        "recall",
        QUERY,
        &["--telemetry", "jsonl:no-such-dir/events.jsonl"],
    );
    let line = run.one_line_failure(2);
    assert!(line.contains("cannot open telemetry file"), "{line}");
}

#[test]
fn telemetry_jsonl_writes_the_turns_events_one_object_per_line() {
    let tree = Tree::standard();
    let events_file = tree.base().join("events.jsonl");
    // A run whose initial point missed the 100 ms wait (a stalled machine) tells other events;
    // its file is removed and the run made again.
    let run = tree.run_with_roots_until(
        "recall",
        QUERY,
        &[
            "--selector",
            "mock",
            "--mock-latency-ms",
            "150",
            "--tool-using",
            "--telemetry",
            "jsonl:events.jsonl",
        ],
        |_| {
            let text = std::fs::read_to_string(&events_file).unwrap_or_default();
            let in_time = text.lines().next().is_some_and(|first| {
                first.contains(r#""delivery_point":"initial""#)
                    && first.contains(r#""phase":"fast""#)
            });
            if !in_time {
                let _ = std::fs::remove_file(&events_file);
            }
            in_time
        },
    );
    run.success().no_panic();
    let text = std::fs::read_to_string(&events_file).unwrap();
    assert!(text.ends_with('\n'), "{text:?}");
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "memory.recall.delivery",
            "memory.recall",
            "memory.recall.delivery"
        ]
    );
    let (fast, recall, terminal) = (&events[0], &events[1], &events[2]);
    assert_eq!(fast["phase"], "fast");
    assert_eq!(fast["delivery_point"], "initial");
    assert_eq!(fast["docs_selected"], 2);
    assert_eq!(recall["docs_scanned"], 4);
    assert_eq!(recall["strategy"], "model");
    assert_eq!(terminal["delivery_point"], "discarded");
    assert_eq!(terminal["discard_reason"], "no_relevant_results");
}

// ---------------------------------------------------------------------------------------------
// persistent catalog

#[test]
fn second_recall_starts_from_the_catalog_and_delivers_the_same_documents() {
    let tree = Tree::standard();
    tree.age_files();

    let first = tree.run_with_roots("recall", QUERY, &["--json"]).json();
    let second = tree.run_with_roots("recall", QUERY, &["--json"]).json();

    assert_eq!(first["catalog_used"], json!(false));
    assert_eq!(first["scan"]["catalogs"][0]["catalog"], json!("missing"));
    assert_eq!(second["catalog_used"], json!(true));
    assert_eq!(second["scan"]["catalogs"][0]["catalog"], json!("loaded"));
    assert_eq!(second["scan"]["from_catalog"], json!(6));
    assert_eq!(second["scan"]["reread"], json!(0));
    assert_eq!(delivered(&second["initial"]), delivered(&first["initial"]));
    assert_eq!(second["scan"]["skipped"], first["scan"]["skipped"]);
}

#[test]
fn a_turn_ended_before_the_selector_answers_still_reports_the_catalog_and_the_scan() {
    let tree = Tree::standard();
    tree.age_files();
    let args = ["--json", "--selector", "mock", "--mock-latency-ms", "3000"];

    tree.run_with_roots("recall", QUERY, &args).success();
    // The scan has the first prompt's 100 ms to finish; a run stalled past that is made again.
    let second = tree
        .run_with_roots_until("recall", QUERY, &args, scan_was_published)
        .json();

    assert_eq!(second["strategy"], json!(null), "the recall did not settle");
    assert_eq!(second["catalog_used"], json!(true));
    assert_eq!(second["scan"]["from_catalog"], json!(6));
    assert_eq!(second["documents_scanned"], json!(4));
    assert!(second["timings_ms"]["scan"].is_number());
}

#[test]
fn no_catalog_flag_neither_reads_nor_writes_a_catalog() {
    let tree = Tree::standard();
    tree.age_files();

    let run = tree.run_with_roots("recall", QUERY, &["--json", "--no-catalog"]);

    assert_eq!(run.success().json()["catalog_used"], json!(false));
    assert!(!tree.project().join(".memrecall").exists());
    assert!(!tree.user().join(".memrecall").exists());
}

#[test]
fn concurrent_recall_processes_share_the_catalog_safely() {
    let tree = Tree::standard();
    tree.age_files();
    let args: Vec<String> = ["recall", QUERY, "--json"]
        .into_iter()
        .map(String::from)
        .chain(tree.root_args())
        .collect();

    let concurrent_round = || -> Vec<Value> {
        let children: Vec<_> = (0..4)
            .map(|_| {
                std::process::Command::new(support::binary())
                    .args(&args)
                    .env("MEMRECALL_HOME", tree.base().join("home"))
                    .stdout(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        children
            .into_iter()
            .map(|child| {
                let output = child.wait_with_output().unwrap();
                assert!(output.status.success());
                serde_json::from_slice(&output.stdout).unwrap()
            })
            .collect()
    };
    // Every process must succeed in every round; a round where one of them missed the 100 ms
    // initial wait for its scan (a stalled machine) has nothing to compare and is made again.
    let deadline = std::time::Instant::now() + Duration::from_mins(1);
    let outputs = loop {
        let outputs = concurrent_round();
        if outputs.iter().all(|output| !output["scan"].is_null()) {
            break outputs;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no round published all four scans in time"
        );
    };
    let after = tree
        .run_with_roots_until("recall", QUERY, &["--json"], scan_was_published)
        .json();

    for output in &outputs {
        assert_eq!(delivered(&output["initial"]), delivered(&after["initial"]));
    }
    assert_eq!(after["catalog_used"], json!(true));
    assert_eq!(after["scan"]["reread"], json!(0));
}
