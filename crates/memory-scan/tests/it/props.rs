use memory_scan::{MemoryType, Topic, parse_topic, render_topic};
use proptest::prelude::*;

fn memory_type() -> impl Strategy<Value = MemoryType> {
    prop::sample::select(MemoryType::ALL.to_vec())
}

/// Text biased towards the characters that matter to the format.
fn tricky_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("---".to_owned()),
            Just("\n".to_owned()),
            Just("\r".to_owned()),
            Just("\r\n".to_owned()),
            Just(":".to_owned()),
            Just("\"".to_owned()),
            Just("'".to_owned()),
            Just(" ".to_owned()),
            Just("\u{feff}".to_owned()),
            Just("name".to_owned()),
            Just("type: user".to_owned()),
            Just("_No entries yet._".to_owned()),
            any::<String>(),
        ],
        0..24,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #[test]
    fn parser_never_panics_on_arbitrary_strings(text in any::<String>()) {
        let _ = parse_topic(&text);
    }

    #[test]
    fn parser_never_panics_on_arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse_topic(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn parser_never_panics_on_frontmatter_shaped_text(body in tricky_text()) {
        let _ = parse_topic(&format!("---\n{body}"));
    }

    #[test]
    fn rendered_topics_parse_back_equal(
        memory_type in memory_type(),
        title in one_line(),
        description in one_line(),
        body in tricky_text(),
    ) {
        let topic = Topic::new(memory_type, &title, &description, &body);
        // Only a blank title is refused; every case that gets here is checked.
        prop_assume!(topic.is_ok(), "refused: {:?}", topic);
        let topic = topic.unwrap();
        prop_assert_eq!(parse_topic(&render_topic(&topic)), Ok(topic));
    }

    #[test]
    fn parsed_topics_survive_a_render_round_trip(
        memory_type in memory_type(),
        before in prop::collection::vec(one_line(), 0..4),
        after in prop::collection::vec(one_line(), 0..4),
        body in tricky_text(),
        crlf in any::<bool>(),
    ) {
        let mut lines = before;
        lines.push(format!("type: {}", memory_type.as_str()));
        lines.extend(after);
        let newline = if crlf { "\r\n" } else { "\n" };
        let text = format!("---{newline}{}{newline}---{newline}{body}", lines.join(newline));
        let parsed = parse_topic(&text);
        // A tricky line may name another type, or close the block early; those are refused.
        prop_assume!(parsed.is_ok(), "refused: {:?}", parsed);
        let topic = parsed.unwrap();
        prop_assert_eq!(parse_topic(&render_topic(&topic)), Ok(topic));
    }
}

/// [`tricky_text`] on one line: no line feed (a carriage return alone stays).
fn one_line() -> impl Strategy<Value = String> {
    tricky_text().prop_map(|text| text.replace('\n', " "))
}
