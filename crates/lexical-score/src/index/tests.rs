//! The term index built from texts: signature sizes, and every term found in its fields.

use super::signature::{MIN_SIGNATURE_BYTES, SIGNATURE_BYTES, marked_slots, trigram_slots};
use super::*;

/// A body of `words` distinct made-up words.
fn varied_body(words: usize) -> String {
    (0..words)
        .map(|i| format!("w{}x{}q", i * 7919 % 10_007, i))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_short_text_gets_a_small_signature_that_leaves_half_its_slots_free() {
    let index = TermIndex::build(["deploy", "", "run the migrations first"]);
    let bytes = index.signature_bytes();
    assert!(bytes.len() < SIGNATURE_BYTES, "{} bytes", bytes.len());
    let marked = nibbles_marked_one_by_one(bytes);
    assert!(
        marked * 2 <= bytes.len() * 2,
        "{marked} of {} slots",
        bytes.len() * 2
    );
}

fn nibbles_marked_one_by_one(signature: &[u8]) -> usize {
    signature
        .iter()
        .map(|pair| usize::from(pair & 0x0F != 0) + usize::from(pair & 0xF0 != 0))
        .sum()
}

proptest::proptest! {
    #[test]
    fn marked_slots_counted_by_word_equal_the_nibbles_marked_one_by_one(
        signature in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600)
    ) {
        proptest::prop_assert_eq!(
            marked_slots(&signature),
            nibbles_marked_one_by_one(&signature)
        );
    }
}

#[test]
fn a_long_varied_text_keeps_the_full_signature() {
    let body = varied_body(300);
    let index = TermIndex::build(["", "", &body]);
    assert_eq!(index.signature_bytes().len(), SIGNATURE_BYTES);
}

#[test]
fn a_folded_signature_still_passes_every_trigram_of_its_text() {
    for words in [1, 5, 40, 120] {
        let body = varied_body(words);
        let index = TermIndex::build(["", "", &body]);
        for token in body.split(' ') {
            for slot in trigram_slots(token) {
                assert_eq!(index.signature_slot(slot), BODY, "{token} in {words} words");
            }
        }
    }
}

#[test]
fn a_stored_signature_of_any_power_of_two_size_in_range_is_accepted_and_others_are_not() {
    let table = TermIndex::build(["a title", "", ""]).table;
    for bytes in [MIN_SIGNATURE_BYTES, 64, SIGNATURE_BYTES] {
        let signature = Bytes::from(vec![0u8; bytes]);
        assert!(
            TermIndex::from_stored(signature, table.clone()).is_some(),
            "{bytes}"
        );
    }
    for bytes in [0, MIN_SIGNATURE_BYTES / 2, 48, SIGNATURE_BYTES * 2] {
        let signature = Bytes::from(vec![0u8; bytes]);
        assert!(
            TermIndex::from_stored(signature, table.clone()).is_none(),
            "{bytes}"
        );
    }
}

#[test]
fn every_term_of_a_text_with_many_distinct_terms_is_in_the_table_with_its_fields() {
    // Enough distinct terms to grow the scratch table several times; one also in the title.
    let body = varied_body(700);
    let index = TermIndex::build(["w0x0q", "", &body]);
    for token in body.split(' ') {
        let term = QueryTerm::new(token.to_owned(), false);
        let fields = index.exact(&term, index.word(index.home_slot(term.hash)));
        let expected = if token == "w0x0q" { TITLE | BODY } else { BODY };
        assert_eq!(fields, expected, "{token}");
    }
}
