//! `memrecall doctor` asks the selector once, as a recall would, and reports a refusal with the
//! provider's own message; a failure the agents' recalls met since `config.toml` changed is a
//! problem too.

use serde_json::{Value, json};

use super::{World, write};
use crate::support::{UNSET_KEY_ENV, loopback_model as model};

fn selector_at(world: &World, url: &str) {
    write(
        &world.path("mr/config.toml"),
        &format!(
            "[selector]\nkind = \"http\"\nurl = \"{url}\"\nmodel = \"m\"\napi_key_env = \"{UNSET_KEY_ENV}\"\n"
        ),
    );
}

fn doctor_json(world: &World) -> (Option<i32>, Value) {
    let repo = world.repo();
    let run = world.run(
        &[
            "doctor",
            "--agent",
            "codex",
            "--cwd",
            repo.to_str().unwrap(),
            "--json",
        ],
        "",
        &[],
    );
    let report = serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
    (run.code, report)
}

fn problems(report: &Value) -> Vec<String> {
    report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{} | fix: {}", p["problem"], p["fix"]))
        .collect()
}

#[test]
fn doctor_with_a_selector_that_answers_401_exits_1_naming_401_and_the_providers_message() {
    let world = World::new();
    let (_runtime, server) = model(
        401,
        json!({"error": {"message": "Incorrect API key provided: sk-proj-abc1***wxyz.", "type": "invalid_request_error"}}),
    );
    selector_at(&world, &server.uri());

    let (code, report) = doctor_json(&world);

    assert_eq!(code, Some(1), "{report}");
    let probe = report["selector"]["probe"].as_str().unwrap();
    assert!(
        probe.starts_with(
            "failed: selector answered HTTP 401: Incorrect API key provided: [redacted]"
        ),
        "{probe}"
    );
    let problems = problems(&report);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("HTTP 401: Incorrect API key provided")
                && p.contains(&format!("fix: \"export {UNSET_KEY_ENV}=<a key valid for"))),
        "{problems:?}"
    );
    assert!(!report.to_string().contains("abc1"), "{report}");
}

#[test]
fn doctor_names_a_404_with_the_settings_that_fix_it() {
    let world = World::new();
    let (_runtime, server) = model(
        404,
        json!({"error": {"message": "The model `m` does not exist"}}),
    );
    selector_at(&world, &server.uri());

    let (code, report) = doctor_json(&world);

    assert_eq!(code, Some(1), "{report}");
    let problems = problems(&report);
    assert!(
        problems
            .iter()
            .any(|p| p.contains("HTTP 404: The model `m` does not exist")
                && p.contains("set url (the server's root")),
        "{problems:?}"
    );
}

#[test]
fn a_selector_failure_an_agents_recall_met_since_the_configuration_changed_is_a_problem() {
    let world = World::new();
    let answer = json!({"selected_memories": []}).to_string();
    let (_runtime, server) = model(
        200,
        json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": answer}}]}),
    );
    selector_at(&world, &server.uri());
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now());
    write(
        &world.path("mr/logs/hook.log"),
        &format!(
            "2001-01-01T00:00:00Z claude-code: server: the selector failed (http_500): selector answered HTTP 500; the lexical result stands in\n{now} claude-code: server: the selector failed (http_401): selector answered HTTP 401: bad key; the lexical result stands in (said once per kind until config.toml changes)\n"
        ),
    );

    let (code, report) = doctor_json(&world);

    assert_eq!(code, Some(1), "{report}");
    assert!(
        report["selector"]["probe"]
            .as_str()
            .unwrap()
            .starts_with("answered in "),
        "{report}"
    );
    let problems = problems(&report);
    let recorded: Vec<_> = problems
        .iter()
        .filter(|p| p.contains("an agent's recall met a selector failure"))
        .collect();
    assert_eq!(recorded.len(), 1, "{problems:?}");
    assert!(
        recorded[0].contains("(http_401): selector answered HTTP 401: bad key"),
        "{problems:?}"
    );
}
