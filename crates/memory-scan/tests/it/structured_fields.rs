//! The `keywords` and `usage_scenarios` lists Qwen Code's structured mode writes: read in each of
//! their forms, and a malformed one skips the field, never the document.

use memory_scan::{MemoryType, Topic, parse_topic, render_topic};

fn topic_with(fields: &str) -> Topic {
    parse_topic(&format!("---\nname: A\ntype: user\n{fields}\n---\nbody")).unwrap()
}

#[test]
fn an_inline_list_of_keywords_is_read_one_per_line() {
    let topic = topic_with("keywords: [deploy, \"hot fix\", 'rollback']");
    assert_eq!(topic.keywords(), "deploy\nhot fix\nrollback");
}

#[test]
fn a_block_list_of_keywords_is_read_one_per_line() {
    let topic = topic_with("keywords:\n  - deploy\n  - \"hot fix\"\n-   rollback");
    assert_eq!(topic.keywords(), "deploy\nhot fix\nrollback");
}

#[test]
fn a_comma_separated_string_of_keywords_is_read_one_per_line() {
    let topic = topic_with("keywords: deploy, hot fix,rollback");
    assert_eq!(topic.keywords(), "deploy\nhot fix\nrollback");
}

#[test]
fn a_quoted_comma_separated_string_of_keywords_loses_its_quotes() {
    let topic = topic_with("keywords: \"deploy, rollback\"");
    assert_eq!(topic.keywords(), "deploy\nrollback");
}

#[test]
fn usage_scenarios_are_read_like_keywords() {
    let topic = topic_with("usage_scenarios:\n  - when production is down\n  - before a release");
    assert_eq!(
        topic.usage_scenarios(),
        "when production is down\nbefore a release"
    );
}

#[test]
fn the_key_after_a_block_list_is_still_read() {
    let topic = topic_with("keywords:\n  - deploy\ndescription: after the list");
    assert_eq!(
        (topic.keywords(), topic.description()),
        ("deploy", "after the list")
    );
}

#[test]
fn empty_items_are_dropped() {
    let topic = topic_with("keywords: [deploy, , \"\", rollback,]");
    assert_eq!(topic.keywords(), "deploy\nrollback");
}

#[test]
fn an_unclosed_inline_list_skips_the_field_and_keeps_the_document() {
    let topic = topic_with("keywords: [deploy, rollback\ndescription: kept");
    assert_eq!((topic.keywords(), topic.description()), ("", "kept"));
}

#[test]
fn a_mapping_where_a_list_belongs_skips_the_field_and_keeps_the_document() {
    let topic = topic_with("usage_scenarios: {when: deploying}");
    assert_eq!((topic.usage_scenarios(), topic.title()), ("", "A"));
}

#[test]
fn a_nested_inline_list_skips_the_field_and_keeps_the_document() {
    let topic = topic_with("keywords: [[deploy], rollback]");
    assert_eq!((topic.keywords(), topic.title()), ("", "A"));
}

#[test]
fn a_stray_closing_bracket_skips_the_field_and_keeps_the_document() {
    let topic = topic_with("keywords: deploy, rollback]");
    assert_eq!((topic.keywords(), topic.title()), ("", "A"));
}

#[test]
fn a_topic_without_structured_fields_has_empty_ones() {
    let topic = topic_with("description: d");
    assert_eq!((topic.keywords(), topic.usage_scenarios()), ("", ""));
}

#[test]
fn a_topic_with_structured_fields_survives_render_then_parse() {
    let topic = Topic::new(MemoryType::Project, "A", "d", "body")
        .unwrap()
        .with_structured_fields(["deploy", "a, b", "[x]", "\"quoted\""], ["when shipping"]);
    assert_eq!(parse_topic(&render_topic(&topic)).unwrap(), topic);
}
