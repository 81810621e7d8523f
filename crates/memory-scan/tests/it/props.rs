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
        title in tricky_text(),
        description in tricky_text(),
        body in tricky_text(),
    ) {
        if let Ok(topic) = Topic::new(memory_type, &title, &description, &body) {
            prop_assert_eq!(parse_topic(&render_topic(&topic)), Ok(topic));
        }
    }

    #[test]
    fn parsed_topics_survive_a_render_round_trip(body in tricky_text()) {
        if let Ok(topic) = parse_topic(&format!("---\n{body}")) {
            prop_assert_eq!(parse_topic(&render_topic(&topic)), Ok(topic));
        }
    }
}
