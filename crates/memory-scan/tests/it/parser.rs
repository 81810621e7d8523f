use memory_scan::{MemoryType, ParseError, Topic, TopicError, parse_topic, render_topic};

#[test]
fn parses_name_description_type_and_trimmed_body() {
    let topic = parse_topic(
        "---\nname: Deploy checklist\ndescription: When deploying\ntype: project\n---\n\n  Run the checks.\n\n",
    )
    .unwrap();
    assert_eq!(topic.memory_type(), MemoryType::Project);
    assert_eq!(topic.title(), "Deploy checklist");
    assert_eq!(topic.description(), "When deploying");
    assert_eq!(topic.body(), "Run the checks.");
}

#[test]
fn crlf_line_endings_read_as_lf() {
    let topic =
        parse_topic("---\r\nname: A\r\ntype: user\r\n---\r\nline one\r\nline two\r\n").unwrap();
    assert_eq!(topic.title(), "A");
    assert_eq!(topic.body(), "line one\nline two");
}

#[test]
fn utf8_bom_is_ignored() {
    let topic = parse_topic("\u{feff}---\nname: A\ntype: feedback\n---\nbody").unwrap();
    assert_eq!(topic.memory_type(), MemoryType::Feedback);
    assert_eq!(topic.title(), "A");
}

#[test]
fn name_wins_over_title() {
    let topic = parse_topic("---\ntitle: Second\nname: First\ntype: user\n---\n").unwrap();
    assert_eq!(topic.title(), "First");
}

#[test]
fn title_field_is_used_without_name() {
    let topic = parse_topic("---\ntitle: From title\ntype: user\n---\n").unwrap();
    assert_eq!(topic.title(), "From title");
}

#[test]
fn title_falls_back_to_the_type_word() {
    let topic = parse_topic("---\nname:\ntype: reference\n---\n").unwrap();
    assert_eq!(topic.title(), "reference");
}

#[test]
fn description_defaults_to_empty() {
    let topic = parse_topic("---\nname: A\ntype: user\n---\nbody").unwrap();
    assert_eq!(topic.description(), "");
}

#[test]
fn placeholder_body_counts_as_empty() {
    let topic = parse_topic("---\nname: A\ntype: user\n---\n\n_No entries yet._\n").unwrap();
    assert_eq!(topic.body(), "");
}

#[test]
fn body_keeps_later_fence_lines() {
    let topic = parse_topic("---\ntype: user\n---\nabove\n---\nbelow").unwrap();
    assert_eq!(topic.body(), "above\n---\nbelow");
}

#[test]
fn quoted_values_lose_one_pair_of_quotes() {
    let topic =
        parse_topic("---\nname: \"Quoted: title\"\ndescription: 'single'\ntype: \"user\"\n---\n")
            .unwrap();
    assert_eq!(topic.title(), "Quoted: title");
    assert_eq!(topic.description(), "single");
    assert_eq!(topic.memory_type(), MemoryType::User);
}

#[test]
fn unknown_keys_and_other_lines_are_ignored() {
    let topic =
        parse_topic("---\n# comment\ntags:\n  - a\nname: A\nowner: me\ntype: user\n---\n").unwrap();
    assert_eq!(topic.title(), "A");
}

#[test]
fn first_occurrence_of_a_key_wins() {
    let topic = parse_topic("---\nname: First\nname: Second\ntype: user\n---\n").unwrap();
    assert_eq!(topic.title(), "First");
}

#[test]
fn text_without_opening_fence_has_no_frontmatter() {
    assert_eq!(
        parse_topic("# Notes\nname: A\ntype: user\n"),
        Err(ParseError::NoFrontmatter)
    );
    assert_eq!(parse_topic(""), Err(ParseError::NoFrontmatter));
}

#[test]
fn frontmatter_must_open_on_the_first_line() {
    assert_eq!(
        parse_topic("\n---\ntype: user\n---\n"),
        Err(ParseError::NoFrontmatter)
    );
}

#[test]
fn unclosed_frontmatter_is_rejected() {
    assert_eq!(
        parse_topic("---\nname: A\ntype: user\nbody"),
        Err(ParseError::UnterminatedFrontmatter)
    );
}

#[test]
fn missing_type_is_rejected() {
    assert_eq!(
        parse_topic("---\nname: A\n---\nbody"),
        Err(ParseError::MissingType)
    );
}

#[test]
fn unknown_type_is_rejected_with_its_value() {
    assert_eq!(
        parse_topic("---\nname: A\ntype: Project\n---\n"),
        Err(ParseError::UnknownType {
            value: "Project".to_owned()
        })
    );
}

#[test]
fn render_writes_the_documented_layout() {
    let topic = Topic::new(
        MemoryType::Project,
        "Deploy checklist",
        "When deploying",
        "Body.",
    )
    .unwrap();
    assert_eq!(
        render_topic(&topic),
        "---\nname: Deploy checklist\ndescription: When deploying\ntype: project\n---\n\nBody.\n"
    );
}

#[test]
fn render_quotes_values_that_would_lose_their_quotes() {
    let topic = Topic::new(MemoryType::User, "\"quoted\"", "", "").unwrap();
    let text = render_topic(&topic);
    assert!(text.contains("name: \"\"quoted\"\"\n"));
    assert_eq!(parse_topic(&text).unwrap(), topic);
}

#[test]
fn constructor_trims_and_normalises_like_the_parser() {
    let topic = Topic::new(MemoryType::User, "  A ", " d ", "\r\n_No entries yet._\r\n").unwrap();
    assert_eq!(
        (topic.title(), topic.description(), topic.body()),
        ("A", "d", "")
    );
}

#[test]
fn constructor_rejects_an_empty_title() {
    assert_eq!(
        Topic::new(MemoryType::User, "  ", "", ""),
        Err(TopicError::EmptyTitle)
    );
}

#[test]
fn constructor_rejects_multi_line_title_and_description() {
    assert_eq!(
        Topic::new(MemoryType::User, "a\nb", "", ""),
        Err(TopicError::MultiLineTitle)
    );
    assert_eq!(
        Topic::new(MemoryType::User, "a", "b\nc", ""),
        Err(TopicError::MultiLineDescription)
    );
}
