//! A per-document index that tells which scored fields contain a query token, mostly without
//! scanning the text.
//!
//! Two structures, both derived from the normalised fields once per document version:
//! - a table of the document's own terms (the runs and CJK bigrams the tokenizer produces), with
//!   the fields each occurs in. A query token equal to a document term is found with one probe,
//!   and a CJK bigram is a substring of a field exactly when it is one of its terms, so bigrams
//!   need nothing else;
//! - a trigram signature: per hashed byte trigram, the fields that contain it. A run token can
//!   also occur inside a longer word (`owner` in `ownership`), which the table cannot see; a
//!   substring search settles that, but only for fields that hold every trigram of the token.
//!
//! Signatures only skip searches that cannot succeed. Table entries are keyed by 56 bits of a
//! 64-bit term hash instead of the text itself, which keeps a look-up to one cache line; two
//! different terms would have to agree on all 56 bits (odds of about 2^-56 per comparison) for the
//! table to report a term that is not there.
//!
//! Both stay small (about 2 KiB for a 1 KiB body), so the indexes of a thousand documents mostly
//! stay in cache.

use crate::query::MAX_QUERY_TOKENS;
use crate::text::for_each_token;

/// Field bit of the title.
pub(crate) const TITLE: u8 = 1;
/// Field bit of the description.
pub(crate) const DESCRIPTION: u8 = 2;
/// Field bit of the body window.
pub(crate) const BODY: u8 = 4;
const ALL_FIELDS: u8 = TITLE | DESCRIPTION | BODY;
const FIELD_BITS: [u8; 3] = [TITLE, DESCRIPTION, BODY];

/// Signature slots are this many bits wide: a typical 1,200-character window marks about half of
/// the 1,024 slots, so a token of five trigrams passes by chance a few times in a hundred.
const SLOT_BITS: u32 = 10;
const SIGNATURE_SLOTS: usize = 1 << SLOT_BITS;
/// Checking more trigrams of one token than this rejects little more and costs linear time on
/// long whole-run tokens (Thai, Khmer).
const MAX_SLOTS_PER_TOKEN: usize = 16;
/// Low hash bits of a table slot that hold the field bits instead.
const FIELD_MASK: u64 = 0xFF;

/// The normalised scored fields of one document, in field-bit order.
pub(crate) type Fields<'a> = [&'a str; 3];

/// A query token prepared for index look-ups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueryTerm {
    pub(crate) text: String,
    hash: u64,
    /// The first `slot_count` entries are the token's distinct trigram slots; kept inline so a
    /// query's terms sit in one contiguous block.
    slots: [u16; MAX_SLOTS_PER_TOKEN],
    slot_count: u8,
    /// CJK bigrams are answered by the term table alone.
    bigram: bool,
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
            text,
            hash,
            slots,
            slot_count,
            bigram,
        }
    }

    fn slots(&self) -> &[u16] {
        self.slots
            .get(..usize::from(self.slot_count))
            .unwrap_or_default()
    }
}

/// See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TermIndex {
    /// Per trigram slot, the bits of the fields holding a trigram that hashes there.
    signature: Box<[u8]>,
    /// Open-addressing table of distinct document terms: the term hash with its low byte replaced
    /// by the bits of the fields holding the term; 0 marks an empty slot.
    slots: Box<[u64]>,
}

impl TermIndex {
    pub(crate) fn build(fields: Fields<'_>) -> Self {
        let mut signature = vec![0u8; SIGNATURE_SLOTS].into_boxed_slice();
        let mut terms: Vec<(u64, u8)> = Vec::new();
        for (bit, text) in FIELD_BITS.iter().zip(fields) {
            for window in text.as_bytes().windows(3) {
                if let [a, b, c] = *window
                    && let Some(slot) = signature.get_mut(usize::from(slot_of(a, b, c)))
                {
                    *slot |= bit;
                }
            }
            for_each_token(text, |term| terms.push((term_hash(term.as_bytes()), *bit)));
        }
        // Merge repeated terms first so the table is sized by distinct terms.
        terms.sort_unstable();
        terms.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 |= later.1;
            }
            same
        });

        // At most 80% full, so probes stay short and every probe sequence reaches an empty slot.
        let capacity = (terms.len() * 5 / 4 + 1).next_power_of_two().max(8);
        let mut index = Self {
            signature,
            slots: vec![0; capacity].into_boxed_slice(),
        };
        for (hash, bits) in terms {
            let mut at = index.home_slot(hash);
            while let Some(slot) = index.slots.get_mut(at) {
                if *slot == 0 {
                    *slot = (hash & !FIELD_MASK) | u64::from(bits);
                    break;
                }
                at = index.next_slot(at);
            }
        }
        index
    }

    /// For each of `terms` (at most `found.len()`), the field bits of the fields containing it.
    pub(crate) fn fields_containing_each(
        &self,
        fields: Fields<'_>,
        terms: &[QueryTerm],
        found: &mut [u8],
    ) {
        // Load every term's first table slot before looking at any of them: the loads are
        // independent, so their cache misses overlap instead of queueing behind branches.
        let mut first_slots = [0u64; MAX_QUERY_TOKENS];
        for (slot, term) in first_slots.iter_mut().zip(terms) {
            *slot = self
                .slots
                .get(self.home_slot(term.hash))
                .copied()
                .unwrap_or(0);
        }
        for ((out, term), first) in found.iter_mut().zip(terms).zip(first_slots) {
            *out = self.fields_containing(fields, term, first);
        }
    }

    fn fields_containing(&self, fields: Fields<'_>, term: &QueryTerm, first: u64) -> u8 {
        let mut found = self.exact(term, first);
        if term.bigram || found == ALL_FIELDS {
            return found;
        }
        // Fields not yet known to hold the token whose signature holds all of its trigrams.
        let mut candidates = !found & ALL_FIELDS;
        for &slot in term.slots() {
            candidates &= self.signature.get(usize::from(slot)).copied().unwrap_or(0);
            if candidates == 0 {
                return found;
            }
        }
        for (bit, text) in FIELD_BITS.iter().zip(fields) {
            if candidates & bit != 0 && text.contains(term.text.as_str()) {
                found |= bit;
            }
        }
        found
    }

    /// Fields in which `term` occurs as a whole document term, given its home slot's content.
    fn exact(&self, term: &QueryTerm, first: u64) -> u8 {
        let key = term.hash & !FIELD_MASK;
        let mut slot = first;
        let mut at = self.home_slot(term.hash);
        // The table always has an empty slot, so this ends; the bound guards it regardless.
        for _ in 0..self.slots.len() {
            if slot == 0 {
                return 0;
            }
            if slot & !FIELD_MASK == key {
                return u8::try_from(slot & FIELD_MASK).unwrap_or(0);
            }
            at = self.next_slot(at);
            slot = self.slots.get(at).copied().unwrap_or(0);
        }
        0
    }

    fn home_slot(&self, hash: u64) -> usize {
        let mask = self.slots.len().saturating_sub(1);
        // Truncation is intended: only the low bits pick the slot.
        #[allow(clippy::cast_possible_truncation)]
        let low = hash as usize;
        low & mask
    }

    fn next_slot(&self, slot: usize) -> usize {
        (slot + 1) & self.slots.len().saturating_sub(1)
    }
}

/// A 64-bit hash of a term's bytes (word-at-a-time multiply-xor with a final avalanche).
fn term_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut hash = (bytes.len() as u64).wrapping_mul(K);
    for chunk in bytes.chunks(8) {
        let mut word = [0u8; 8];
        for (to, from) in word.iter_mut().zip(chunk) {
            *to = *from;
        }
        hash = (hash ^ u64::from_le_bytes(word))
            .wrapping_mul(K)
            .rotate_left(27);
    }
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    hash ^ (hash >> 33)
}

/// The signature slot of one byte trigram.
fn slot_of(a: u8, b: u8, c: u8) -> u16 {
    let packed = u32::from(a) | (u32::from(b) << 8) | (u32::from(c) << 16);
    // Fibonacci hashing: the top bits of the product spread neighbouring trigrams apart.
    u16::try_from(packed.wrapping_mul(0x9E37_79B1) >> (32 - SLOT_BITS)).unwrap_or(0)
}

/// The distinct signature slots of a query token's byte trigrams (bounded per token).
fn trigram_slots(token: &str) -> Vec<u16> {
    let mut slots: Vec<u16> = token
        .as_bytes()
        .windows(3)
        .filter_map(|w| match *w {
            [a, b, c] => Some(slot_of(a, b, c)),
            _ => None,
        })
        .collect();
    slots.sort_unstable();
    slots.dedup();
    slots.truncate(MAX_SLOTS_PER_TOKEN);
    slots
}
