//! The topic file parser on any text: it returns a topic or a parse error, never panics, and
//! every topic it returns survives rendering and parsing again unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memory_scan::{parse_topic, render_topic};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(topic) = parse_topic(text) {
        let rendered = render_topic(&topic);
        assert_eq!(parse_topic(&rendered).as_ref(), Ok(&topic), "{rendered:?}");
    }
});
