use std::time::SystemTime;

use selector::{Candidate, Manifest, SelectionRequest, user_message};

use serde_json::json;

use super::gates::{gated_design_gates, hygiene_gates};
use super::http::query_of;
use super::*;
use crate::eval::corpus;

fn real_corpus() -> Corpus {
    corpus::load(&corpus::corpus_dir().unwrap(), SystemTime::now()).unwrap()
}

#[test]
fn perfect_model_reads_the_query_from_the_selector_user_message() {
    let candidates = [Candidate {
        id: "/memory/deploy.md".to_owned(),
        memory_type: "project".to_owned(),
        mtime: SystemTime::UNIX_EPOCH,
        description: "How to deploy".to_owned(),
        keywords: Vec::new(),
    }];
    let tools = ["Bash".to_owned()];
    let request =
        SelectionRequest::new("how do I roll back? 回滚", &candidates, 5).with_recent_tools(&tools);
    let body = json!({
        "messages": [
            { "role": "system", "content": "Query: not this one\n\n" },
            { "role": "user", "content": user_message(&request, &Manifest::build(&candidates)) },
        ],
    });
    let query = query_of(body.to_string().as_bytes());
    assert_eq!(query.as_deref(), Some("how do I roll back? 回滚"));
}

#[test]
fn delivery_gates_name_every_scenario_with_duplicates_or_broken_telemetry() {
    let clean = ScenarioRow {
        selector: "mock",
        latency_ms: 250,
        turn: "tool-using",
        design: "fast-path",
        turns: 10,
        first_prompt: 1.0,
        at_all: 1.0,
        duplicate_turns: 0,
        duplicate_rate: 0.0,
        telemetry_violations: 0,
        held_rate: 0.0,
        initial_wait_mean_ms: 0.0,
        initial_wait_p50_ms: 0.0,
        initial_wait_p95_ms: 0.0,
        slices: Vec::new(),
    };
    let duplicated = ScenarioRow {
        duplicate_turns: 1,
        duplicate_rate: 0.1,
        ..clean.clone()
    };
    let untracked = ScenarioRow {
        selector: "http",
        telemetry_violations: 2,
        ..clean.clone()
    };
    let report = DeliveryReport {
        tool_result_after_ms: 5_000,
        modelled: vec![clean, duplicated],
        http: vec![untracked],
    };
    let failures = hygiene_gates(&report);
    assert_eq!(failures.len(), 2, "{failures:#?}");
    assert!(failures[0].contains("delivered twice in 1 of 10 turns"));
    assert!(failures[1].starts_with("http selector"));
}

#[test]
fn modelled_scenarios_cover_every_latency_turn_and_design_without_duplicates() {
    let corpus = real_corpus();
    let cases = turn_cases(&corpus).unwrap();
    let rows = modelled_scenarios(&corpus, &cases).unwrap();
    assert_eq!(rows.len(), MODELLED_LATENCIES_MS.len() * 2 * DESIGNS.len());
    assert!(
        rows.iter()
            .all(|r| r.turns == cases.len() && r.duplicate_turns == 0)
    );
    assert!(rows.iter().all(|r| r.telemetry_violations == 0));
}

#[test]
fn a_perfect_model_reaches_every_tool_using_turn_under_both_designs() {
    let corpus = real_corpus();
    let cases = turn_cases(&corpus).unwrap();
    let rows = modelled_scenarios(&corpus, &cases).unwrap();
    for row in rows.iter().filter(|r| r.turn == "tool-using") {
        assert!((row.at_all - 1.0).abs() < 1e-12, "{row:?}");
    }
}

fn modelled_report(corpus: &Corpus) -> DeliveryReport {
    let cases = turn_cases(corpus).unwrap();
    DeliveryReport {
        tool_result_after_ms: millis(TOOL_RESULT_AFTER),
        modelled: modelled_scenarios(corpus, &cases).unwrap(),
        http: Vec::new(),
    }
}

#[test]
fn the_gated_design_passes_its_gates_on_the_modelled_scenarios() {
    let corpus = real_corpus();
    assert_eq!(
        gated_design_gates(&modelled_report(&corpus)),
        Vec::<String>::new()
    );
}

#[test]
fn a_gated_design_that_ends_the_wait_on_any_fast_result_fails_the_noisy_gate() {
    let corpus = real_corpus();
    let mut report = modelled_report(&corpus);
    let fast_path: Vec<ScenarioRow> = report
        .modelled
        .iter()
        .filter(|r| r.design == "fast-path")
        .cloned()
        .collect();
    for row in report.modelled.iter_mut().filter(|r| r.design == "gated") {
        if let Some(fast) = fast_path
            .iter()
            .find(|f| f.latency_ms == row.latency_ms && f.turn == row.turn)
        {
            row.slices.clone_from(&fast.slices);
        }
    }
    let failures = gated_design_gates(&report);
    assert_eq!(failures.len(), 1, "{failures:#?}");
    assert!(
        failures[0].starts_with("mock selector, 40 ms, tool-free turn: the gated design"),
        "{failures:#?}"
    );
}

#[test]
fn a_gated_design_below_the_fast_path_on_a_slice_from_250_ms_fails_a_gate() {
    let corpus = real_corpus();
    let mut report = modelled_report(&corpus);
    let row = report
        .modelled
        .iter_mut()
        .find(|r| r.design == "gated" && r.latency_ms == 600 && r.turn == "tool-using")
        .unwrap();
    let english = row
        .slices
        .iter_mut()
        .find(|s| s.slice == "english")
        .unwrap();
    english.at_all = 0.5;
    let failures = gated_design_gates(&report);
    assert_eq!(failures.len(), 1, "{failures:#?}");
    assert!(
        failures[0].contains("600 ms, tool-using turn, english: the gated design delivers at all"),
        "{failures:#?}"
    );
}

#[test]
fn a_gated_shortfall_of_its_own_late_scans_is_forgiven_and_no_more() {
    let corpus = real_corpus();
    let mut report = modelled_report(&corpus);
    let row = report
        .modelled
        .iter_mut()
        .find(|r| r.design == "gated" && r.latency_ms == 250 && r.turn == "tool-free")
        .unwrap();
    let english = row
        .slices
        .iter_mut()
        .find(|s| s.slice == "english")
        .unwrap();
    let one_turn = 1.0 / english.turns as f64;
    english.first_prompt -= one_turn;
    english.at_all -= one_turn;
    english.late_scans = 1;
    assert_eq!(gated_design_gates(&report), Vec::<String>::new());
    let row = report
        .modelled
        .iter_mut()
        .find(|r| r.design == "gated" && r.latency_ms == 250 && r.turn == "tool-free")
        .unwrap();
    let english = row
        .slices
        .iter_mut()
        .find(|s| s.slice == "english")
        .unwrap();
    english.first_prompt -= one_turn;
    assert_eq!(gated_design_gates(&report).len(), 1);
}

#[test]
fn no_modelled_turn_has_a_late_scan() {
    let corpus = real_corpus();
    let report = modelled_report(&corpus);
    let late: usize = report
        .modelled
        .iter()
        .flat_map(|r| &r.slices)
        .map(|s| s.late_scans)
        .sum();
    assert_eq!(late, 0);
}

#[test]
fn only_the_gated_design_holds_a_weak_fast_result() {
    let corpus = real_corpus();
    let report = modelled_report(&corpus);
    for row in &report.modelled {
        let held = row.held_rate > 0.0;
        assert_eq!(held, row.design == "gated", "{row:?}");
    }
}
