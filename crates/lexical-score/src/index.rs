//! A per-document index that tells which scored fields contain a query token, mostly without
//! scanning the text.
//!
//! Two structures, both derived from the normalised fields once per document version:
//! - a table of the document's own terms (the runs and CJK bigrams the tokenizer produces), with
//!   the fields each occurs in. A query token equal to a document term is found with one probe,
//!   and a CJK bigram is a substring of a field exactly when it is one of its terms, so bigrams
//!   need nothing else;
//! - trigram signatures (one over all scored fields, one per field). A run token can also occur
//!   inside a longer word (`owner` in `ownership`), which the table cannot see; a substring
//!   search settles that, but only for fields whose signature holds every trigram of the token.
//!
//! Signatures only skip searches that cannot succeed. Table entries are keyed by 56 bits of a
//! 64-bit term hash instead of the text itself, which keeps a look-up to one cache line; two
//! different terms would have to agree on all 56 bits (odds of about 2^-56 per comparison) for the
//! table to report a term that is not there.

use crate::text::for_each_token;

/// Field bit of the title.
pub(crate) const TITLE: u8 = 1;
/// Field bit of the description.
pub(crate) const DESCRIPTION: u8 = 2;
/// Field bit of the body window.
pub(crate) const BODY: u8 = 4;
const FIELD_BITS: [u8; 3] = [TITLE, DESCRIPTION, BODY];

/// Width of a trigram slot; signatures narrower than `1 << SLOT_BITS` drop low bits.
const SLOT_BITS: u32 = 12;
/// Signature sizes in 64-bit words: the union and the body hold a 1,200-character window with well
/// under half of their bits set; titles and descriptions are short.
const WIDE_WORDS: usize = (1 << SLOT_BITS) / 64;
const TITLE_WORDS: usize = 8;
const DESCRIPTION_WORDS: usize = 16;
/// Checking more trigrams of one token than this rejects little more and costs linear time on
/// long whole-run tokens (Thai, Khmer).
const MAX_SLOTS_PER_TOKEN: usize = 24;

/// The normalised scored fields of one document, in field-bit order.
pub(crate) type Fields<'a> = [&'a str; 3];

/// A query token prepared for index look-ups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QueryTerm {
    pub(crate) text: String,
    hash: u64,
    slots: Vec<u16>,
    /// CJK bigrams are answered by the term table alone.
    bigram: bool,
}

impl QueryTerm {
    pub(crate) fn new(text: String, bigram: bool) -> Self {
        let hash = term_hash(text.as_bytes());
        let slots = trigram_slots(&text);
        Self {
            text,
            hash,
            slots,
            bigram,
        }
    }
}

/// Low hash bits of a table slot that hold the field bits instead.
const FIELD_MASK: u64 = 0xFF;

/// See the module documentation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TermIndex {
    union: Signature,
    per_field: [Signature; 3],
    /// Open-addressing table of distinct document terms: the term hash with its low byte replaced
    /// by the bits of the fields holding the term; 0 marks an empty slot.
    slots: Box<[u64]>,
}

impl TermIndex {
    pub(crate) fn build(fields: Fields<'_>) -> Self {
        let mut union = Signature::new(WIDE_WORDS);
        let mut per_field = [
            Signature::new(TITLE_WORDS),
            Signature::new(DESCRIPTION_WORDS),
            Signature::new(WIDE_WORDS),
        ];
        let mut occurrences: Vec<(u64, u8)> = Vec::new();
        for ((bit, text), signature) in FIELD_BITS.iter().zip(fields).zip(per_field.iter_mut()) {
            union.add(text);
            signature.add(text);
            for_each_token(text, |term| {
                occurrences.push((term_hash(term.as_bytes()), *bit));
            });
        }

        // At most 80% full even if every occurrence is distinct, so probes stay short and end.
        let capacity = (occurrences.len() * 5 / 4 + 1).next_power_of_two().max(8);
        let mut index = Self {
            union,
            per_field,
            slots: vec![0; capacity].into_boxed_slice(),
        };
        for (hash, bit) in occurrences {
            let key = hash & !FIELD_MASK;
            let mut at = index.home_slot(hash);
            for _ in 0..capacity {
                let Some(slot) = index.slots.get_mut(at) else {
                    break;
                };
                if *slot == 0 {
                    *slot = key | u64::from(bit);
                    break;
                }
                if *slot & !FIELD_MASK == key {
                    *slot |= u64::from(bit);
                    break;
                }
                at = index.next_slot(at);
            }
        }
        index
    }

    /// The field bits of the fields that contain `term`.
    pub(crate) fn fields_containing(&self, fields: Fields<'_>, term: &QueryTerm) -> u8 {
        if !self.union.may_contain(&term.slots) {
            return 0;
        }
        let mut found = self.exact(term);
        if !term.bigram {
            for ((bit, signature), text) in FIELD_BITS.iter().zip(&self.per_field).zip(fields) {
                if found & bit == 0
                    && signature.may_contain(&term.slots)
                    && text.contains(term.text.as_str())
                {
                    found |= bit;
                }
            }
        }
        found
    }

    /// Fields in which `term` occurs as a whole document term.
    fn exact(&self, term: &QueryTerm) -> u8 {
        let key = term.hash & !FIELD_MASK;
        let mut at = self.home_slot(term.hash);
        // The table always has an empty slot, so this ends; the bound guards it regardless.
        for _ in 0..self.slots.len() {
            match self.slots.get(at) {
                None | Some(0) => return 0,
                Some(&slot) if slot & !FIELD_MASK == key => {
                    return u8::try_from(slot & FIELD_MASK).unwrap_or(0);
                }
                Some(_) => at = self.next_slot(at),
            }
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

/// A fixed-size set of hashed byte trigrams.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Signature {
    words: Box<[u64]>,
    /// Low slot bits dropped to fit this signature's width.
    shift: u32,
}

impl Signature {
    fn new(words: usize) -> Self {
        let bits = words * 64;
        Self {
            words: vec![0; words].into_boxed_slice(),
            shift: SLOT_BITS - bits.trailing_zeros(),
        }
    }

    fn add(&mut self, field: &str) {
        for window in field.as_bytes().windows(3) {
            if let [a, b, c] = *window {
                let slot = usize::from(slot_of(a, b, c) >> self.shift);
                if let Some(word) = self.words.get_mut(slot / 64) {
                    *word |= 1 << (slot % 64);
                }
            }
        }
    }

    fn may_contain(&self, slots: &[u16]) -> bool {
        slots.iter().all(|&slot| {
            let slot = usize::from(slot >> self.shift);
            self.words
                .get(slot / 64)
                .is_some_and(|word| word & (1 << (slot % 64)) != 0)
        })
    }
}

/// The 12-bit signature slot of one byte trigram.
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
