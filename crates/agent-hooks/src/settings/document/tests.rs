//! Reading and editing settings files: what install and uninstall do to the user's text.

use super::edit::group;
use super::*;
use crate::HookTimeout;
use serde_json::{Value, json};

const COMMAND: &str = "/usr/local/bin/memrecall hook --agent claude-code";

fn parsed(text: &str, agent: Agent) -> Document {
    Document::parse(text, agent, Path::new("settings.json")).unwrap()
}

fn value(document: &Document) -> Value {
    serde_json::from_str(&document.text()).unwrap()
}

#[test]
fn merging_twice_adds_the_entry_once() {
    let mut document = parsed(r#"{"model":"x"}"#, Agent::ClaudeCode);
    assert!(document.merge(Agent::ClaudeCode, COMMAND).unwrap());
    assert!(!document.merge(Agent::ClaudeCode, COMMAND).unwrap());
    let group = json!([{"hooks":[{"type":"command","command":COMMAND,"timeout":10}]}]);
    assert_eq!(
        value(&document),
        json!({"model":"x","hooks":{
            "UserPromptSubmit":group,"PostToolUse":group,"Stop":group,"SessionEnd":group
        }})
    );
}

#[test]
fn an_earlier_entry_is_brought_up_to_the_new_command_and_timeout() {
    let old = r#"{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"memrecall hook --agent qwen-code","timeout":10000}]}]}}"#;
    let mut document = parsed(old, Agent::QwenCode);
    let command = "/opt/memrecall hook --agent qwen-code";
    assert!(document.merge(Agent::QwenCode, command).unwrap());
    let entry = &value(&document)["hooks"]["UserPromptSubmit"];
    assert_eq!(
        entry,
        &json!([{"hooks":[{"type":"command","command":command,"timeout":10}]}])
    );
}

#[test]
fn codex_gets_a_session_end_timeout_within_its_limit_and_an_earlier_one_is_lowered() {
    let command = "/bin/memrecall hook --agent codex";
    let mut fresh = Document::empty(Agent::Codex);
    fresh.merge(Agent::Codex, command).unwrap();
    let hooks = &value(&fresh)["hooks"];
    assert_eq!(hooks["SessionEnd"][0]["hooks"][0]["timeout"], 3);
    assert_eq!(hooks["UserPromptSubmit"][0]["hooks"][0]["timeout"], 10);
    assert!(fresh.timeouts_over_limit(Agent::Codex).is_empty());

    let old = r#"{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"/bin/memrecall hook --agent codex","timeout":10}]}]}}"#;
    let mut earlier = parsed(old, Agent::Codex);
    assert_eq!(
        earlier.timeouts_over_limit(Agent::Codex),
        [("SessionEnd", "10".to_owned())]
    );
    assert!(earlier.merge(Agent::Codex, command).unwrap());
    assert_eq!(
        value(&earlier)["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"],
        3
    );
}

#[test]
fn a_longer_timeout_where_the_agent_sets_no_limit_is_the_users_choice() {
    let text = r#"{"hooks":{"SessionEnd":[{"hooks":[{"type":"command","command":"memrecall hook --agent claude-code","timeout":60}]}]}}"#;
    assert!(
        parsed(text, Agent::ClaudeCode)
            .timeouts_over_limit(Agent::ClaudeCode)
            .is_empty()
    );
}

#[test]
fn a_file_whose_shape_is_wrong_for_one_event_is_not_changed_for_the_others() {
    let text = r#"{"hooks":{"Stop":{}}}"#;
    let mut document = parsed(text, Agent::Codex);
    let error = document.merge(Agent::Codex, COMMAND).unwrap_err();
    assert!(error.to_string().contains("hooks.Stop"), "{error}");
    assert_eq!(document.text(), format!("{text}\n"));
}

#[test]
fn removing_after_merging_gives_back_the_original_text() {
    let original = "{\n  \"hooks\": {\n    \"UserPromptSubmit\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"other\"\n          }\n        ]\n      }\n    ],\n    \"SessionStart\": []\n  },\n  \"x\": 1\n}\n";
    let command = "/bin/memrecall hook --agent codex";
    let mut document = parsed(original, Agent::Codex);
    document.merge(Agent::Codex, command).unwrap();
    assert!(document.remove(Agent::Codex, None));
    assert_eq!(document.text(), original);
    assert!(!document.remove(Agent::Codex, None));
}

#[test]
fn gemini_cli_comments_are_kept_through_merge_and_remove() {
    let original = "{\n  // the theme I like\n  \"theme\": \"dark\" /* for now */\n}\n";
    let mut document = parsed(original, Agent::GeminiCli);
    document
        .merge(Agent::GeminiCli, "/bin/memrecall hook --agent gemini-cli")
        .unwrap();
    let merged = document.text();
    assert!(merged.contains("// the theme I like"), "{merged}");
    assert!(merged.contains("/* for now */"), "{merged}");
    assert!(merged.contains("\"AfterTool\""), "{merged}");
    assert!(document.remove(Agent::GeminiCli, None));
    assert_eq!(document.text(), original);
}

#[test]
fn comments_are_refused_for_an_agent_that_reads_plain_json() {
    let error = Document::parse("{ // no\n}", Agent::ClaudeCode, Path::new("settings.json"))
        .err()
        .unwrap();
    assert!(error.to_string().contains("is not valid JSON ("), "{error}");
}

#[test]
fn hooks_that_are_not_an_object_are_refused() {
    let mut document = parsed(r#"{"hooks":[]}"#, Agent::QwenCode);
    let error = document.merge(Agent::QwenCode, COMMAND).unwrap_err();
    assert!(
        error.to_string().contains("`hooks` is not an object"),
        "{error}"
    );
}

#[test]
fn installing_the_guarded_command_replaces_an_earlier_plain_one() {
    let plain = "/bin/memrecall hook --agent gemini-cli";
    let guarded = "command -v /bin/memrecall >/dev/null 2>&1 && exec /bin/memrecall hook --agent gemini-cli || true";
    let mut document = Document::empty(Agent::GeminiCli);
    document.merge(Agent::GeminiCli, plain).unwrap();
    assert!(document.merge(Agent::GeminiCli, guarded).unwrap());
    assert_eq!(
        document.memrecall_commands(Agent::GeminiCli, None),
        [guarded]
    );
    assert!(document.missing_events(Agent::GeminiCli, None).is_empty());
}

#[test]
fn uninstall_removes_plain_and_guarded_entries_alike() {
    let original = "{\n  \"theme\": \"dark\"\n}\n";
    let mut document = parsed(original, Agent::GeminiCli);
    document
        .merge(Agent::GeminiCli, "/old/memrecall hook --agent gemini-cli")
        .unwrap();
    let hooks = document
        .root
        .object_value_or_set()
        .object_value_or_set("hooks");
    let groups = hooks.array_value_or_create("BeforeAgent").unwrap();
    groups.append(group(
        Agent::GeminiCli,
        "command -v /new/memrecall >/dev/null 2>&1 && exec /new/memrecall hook --agent gemini-cli || true",
        HookTimeout::Milliseconds(10_000),
    ));
    assert_eq!(document.memrecall_commands(Agent::GeminiCli, None).len(), 2);
    assert!(document.remove(Agent::GeminiCli, None));
    assert_eq!(document.text(), original);
}

#[test]
fn gemini_cli_uses_before_agent_and_milliseconds() {
    let command = "/bin/memrecall hook --agent gemini-cli";
    let mut document = Document::empty(Agent::GeminiCli);
    document.merge(Agent::GeminiCli, command).unwrap();
    let entry = &value(&document)["hooks"]["BeforeAgent"][0]["hooks"][0];
    assert_eq!(entry["timeout"], 10_000);
    assert_eq!(entry["name"], "memrecall");
    assert_eq!(entry["command"], command);
}
