//! A query token prepared for index look-ups: its hash, trigram slots and substring searcher.

use super::signature::{MAX_SLOTS_PER_TOKEN, trigram_slots};
use super::table::term_hash;

/// The most query tokens a recall scores with.
pub const MAX_QUERY_TOKENS: usize = 64;

/// A query token prepared for index look-ups.
#[derive(Debug, Clone)]
pub(crate) struct QueryTerm {
    pub(crate) text: String,
    /// A substring searcher for `text`, built once per query rather than once per search: a
    /// short token passes many signatures, so it is searched for in many fields.
    finder: memchr::memmem::Finder<'static>,
    pub(super) hash: u64,
    /// The first `slot_count` entries are the token's distinct trigram slots; kept inline so a
    /// query's terms sit in one contiguous block.
    slots: [u16; MAX_SLOTS_PER_TOKEN],
    slot_count: u8,
    /// CJK bigrams are answered by the term table alone.
    pub(super) bigram: bool,
    /// Whether `text` is ASCII without uppercase letters, so it may occur in a lowercased ASCII
    /// text (see [`QueryTerm::is_in_lowercase_of`]).
    lowercase_ascii: bool,
}

impl QueryTerm {
    pub(crate) fn new(text: String, bigram: bool) -> Self {
        let hash = term_hash(text.as_bytes());
        let mut slots = [0; MAX_SLOTS_PER_TOKEN];
        let mut slot_count = 0;
        for (to, from) in slots.iter_mut().zip(trigram_slots(&text)) {
            *to = from;
            slot_count += 1;
        }
        Self {
            finder: memchr::memmem::Finder::new(text.as_bytes()).into_owned(),
            lowercase_ascii: text
                .bytes()
                .all(|b| b.is_ascii() && !b.is_ascii_uppercase()),
            text,
            hash,
            slots,
            slot_count,
            bigram,
        }
    }

    /// Whether `text` contains this token.
    pub(crate) fn is_in(&self, text: &str) -> bool {
        self.finder.find(text.as_bytes()).is_some()
    }

    /// Whether the ASCII lowercase of `source`, an ASCII text, contains this token: the same
    /// answer as [`QueryTerm::is_in`] on that lowercase, without keeping it. A token with a
    /// character the lowercase cannot hold (not ASCII, or an uppercase letter) is in no such text.
    ///
    /// The lowercase is made in a buffer each thread reuses, then searched like any text. That
    /// costs about 30% fewer instructions than finding each place where the token's first letter
    /// occurs in either case and comparing there (measured on 1 KiB English bodies), as prose
    /// stops such a search at nearly every word that starts with the letter.
    pub(crate) fn is_in_lowercase_of(&self, source: &str) -> bool {
        use std::cell::RefCell;
        thread_local! {
            static LOWERCASE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
        }
        if !self.lowercase_ascii {
            return false;
        }
        if source.len() < self.text.len() {
            return false;
        }
        LOWERCASE.with_borrow_mut(|lowercase| {
            lowercase.clear();
            lowercase.extend_from_slice(source.as_bytes());
            lowercase.make_ascii_lowercase();
            self.finder.find(lowercase).is_some()
        })
    }

    pub(super) fn slots(&self) -> &[u16] {
        self.slots
            .get(..usize::from(self.slot_count))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn a_token_is_in_the_lowercase_of_an_ascii_text_exactly_when_it_is_in_that_lowercase(
            source in "[a-cA-C .-]{0,40}",
            token in "[a-cA-C.-]{1,4}",
        ) {
            let term = QueryTerm::new(token, false);
            let lowered = source.to_ascii_lowercase();
            proptest::prop_assert_eq!(term.is_in_lowercase_of(&source), term.is_in(&lowered));
        }
    }

    #[test]
    fn a_token_is_found_in_the_lowercase_of_a_text_whatever_the_case_of_its_letters() {
        let term = QueryTerm::new("deploy".into(), false);
        assert!(term.is_in_lowercase_of("Before we DePloy, check"));
        assert!(term.is_in_lowercase_of("deploy"));
        assert!(!term.is_in_lowercase_of("deplo"));
        assert!(!term.is_in_lowercase_of("re-deplox"));
    }

    #[test]
    fn a_token_the_lowercase_of_an_ascii_text_cannot_hold_is_never_in_it() {
        for token in ["Deploy", "café", "部署"] {
            let term = QueryTerm::new(token.into(), false);
            assert!(!term.is_in_lowercase_of("deploy DEPLOY cafe"), "{token}");
        }
    }
}
