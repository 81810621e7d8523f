//! Active-tool noise filtering.

use lexical_score::{ActiveToolAliases, PreparedText};

fn aliases(names: &[&str]) -> Vec<String> {
    ActiveToolAliases::from_tool_names(names)
        .aliases()
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_plain_tool_name_is_its_own_lowercase_trimmed_alias() {
    assert_eq!(aliases(&["  Jira  "]), ["jira"]);
}

#[test]
fn a_path_name_adds_the_part_after_the_last_double_colon() {
    assert_eq!(aliases(&["a::b"]), ["a::b", "b"]);
    assert_eq!(
        aliases(&["Tools::Search::Grep"]),
        ["tools::search::grep", "grep"]
    );
}

#[test]
fn an_mcp_name_adds_the_part_after_the_server_and_the_last_part() {
    assert_eq!(
        aliases(&["mcp__github__create_issue"]),
        ["mcp__github__create_issue", "create_issue"]
    );
    assert_eq!(
        aliases(&["mcp__srv__repo__search"]),
        ["mcp__srv__repo__search", "repo__search", "search"]
    );
}

#[test]
fn blank_names_and_repeated_aliases_are_ignored() {
    assert_eq!(aliases(&["", "   ", "grep", "GREP"]), ["grep"]);
    assert!(ActiveToolAliases::from_tool_names::<&str>(&[]).is_empty());
}

fn noise(tools: &[&str], title: &str, description: &str, body: &str) -> bool {
    ActiveToolAliases::from_tool_names(tools).is_noise(&PreparedText::new(title, description, body))
}

#[test]
fn an_alias_mention_with_a_usage_marker_is_noise() {
    assert!(noise(
        &["jira"],
        "Jira",
        "Parameter schemas for creating issues",
        ""
    ));
}

#[test]
fn the_part_after_the_server_of_an_mcp_tool_counts_as_a_mention() {
    assert!(noise(
        &["mcp__github__create_issue"],
        "create_issue notes",
        "",
        "Failed tool-call: the labels field mapping was wrong."
    ));
}

#[test]
fn the_last_part_of_a_path_name_counts_as_a_mention() {
    assert!(noise(
        &["a::grep"],
        "",
        "",
        "Tool usage: grep takes a pattern first."
    ));
}

#[test]
fn usage_markers_are_found_in_the_body_beyond_the_window() {
    let body = format!("{} api documentation for jira", "x".repeat(1_300));
    assert!(noise(&["jira"], "Jira", "", &body));
}

#[test]
fn an_alias_mention_without_a_usage_marker_is_not_noise() {
    assert!(!noise(
        &["jira"],
        "Jira board conventions",
        "Sprint starts on Monday",
        ""
    ));
}

#[test]
fn a_usage_marker_without_an_alias_mention_is_not_noise() {
    assert!(!noise(
        &["jira"],
        "Grafana",
        "API docs for the dashboard",
        ""
    ));
}

#[test]
fn a_durable_marker_keeps_a_usage_reference() {
    assert!(!noise(
        &["jira"],
        "Jira",
        "Tool usage; credentials live in the vault",
        ""
    ));
    assert!(!noise(
        &["jira"],
        "Jira",
        "API docs",
        "Known issue: pagination stops at 50."
    ));
    assert!(!noise(
        &["jira"],
        "Jira tool usage",
        "",
        "Ownership: platform team"
    ));
}

#[test]
fn an_alias_inside_a_longer_word_is_not_a_mention() {
    assert!(!noise(&["a::b"], "Tool usage", "", "about the bus"));
    assert!(noise(
        &["a::b"],
        "Tool usage",
        "",
        "call b with two arguments"
    ));
}

#[test]
fn no_active_tools_means_no_noise() {
    assert!(!noise(&[], "Jira", "Tool usage", ""));
}
