//! The tokenizer, differentially: on ASCII text the ASCII scanner and the general scanner must
//! give the same tokens at the same offsets; on any text, normalising and scanning never panic
//! and every token is a slice of the normalised text.
#![no_main]

use lexical_score::fuzzing::{ascii_scanner_tokens, general_scanner_tokens, normalize};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let normalized = normalize(&text);
    for (at, token) in general_scanner_tokens(&normalized) {
        assert_eq!(normalized.get(at..at + token.len()), Some(token.as_str()));
    }
    // The same bytes as ASCII text: the one input both scanners accept.
    let ascii: String = data.iter().map(|&b| char::from(b & 0x7f)).collect();
    let normalized = normalize(&ascii);
    let fast = ascii_scanner_tokens(&normalized).expect("normalised ASCII stays ASCII");
    assert_eq!(fast, general_scanner_tokens(&normalized), "{normalized:?}");
});
