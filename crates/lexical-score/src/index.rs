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
//! Only the trigrams of the field's terms go into the signature, not those across spaces or
//! punctuation: a query token that occurs in a field lies inside one of the field's terms (it is
//! made of characters that continue a run, after one that starts it; a bigram is a term), so its
//! trigrams are trigrams of that term. Leaving the others out keeps signatures sparser.
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
/// Bytes of a stored signature: one bit per slot for each of the three fields.
pub(crate) const STORED_SIGNATURE_BYTES: usize = 3 * SIGNATURE_SLOTS / 8;
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

/// See the module documentation. Two indexes are equal when they hold the same signature and the
/// same terms, wherever the terms sit in the table.
#[derive(Debug, Clone, Eq)]
pub(crate) struct TermIndex {
    /// Per trigram slot, the bits of the fields holding a trigram that hashes there.
    signature: Box<[u8]>,
    /// Open-addressing table of distinct document terms: the term hash with its low byte replaced
    /// by the bits of the fields holding the term; 0 marks an empty slot.
    slots: Box<[u64]>,
}

impl PartialEq for TermIndex {
    fn eq(&self, other: &Self) -> bool {
        let sorted = |index: &Self| {
            let mut entries: Vec<u64> = index.slots.iter().copied().filter(|&e| e != 0).collect();
            entries.sort_unstable();
            entries
        };
        self.signature == other.signature && sorted(self) == sorted(other)
    }
}

impl TermIndex {
    pub(crate) fn build(fields: Fields<'_>) -> Self {
        let mut signature = vec![0u8; SIGNATURE_SLOTS].into_boxed_slice();
        // Every term occurrence as a table entry: the key bits of its hash and its field's bit.
        let mut occurrences: Vec<u64> = Vec::new();
        for (&bit, text) in FIELD_BITS.iter().zip(fields) {
            for_each_token(text, |term| {
                occurrences.push((term_hash(term.as_bytes()) & !FIELD_MASK) | u64::from(bit));
                let mut packed = 0u32;
                for (at, &byte) in term.as_bytes().iter().enumerate() {
                    packed = (packed >> 8) | (u32::from(byte) << 16);
                    if at >= 2
                        && let Some(slot) = signature.get_mut(usize::from(slot_of_packed(packed)))
                    {
                        *slot |= bit;
                    }
                }
            });
        }
        // Merge repeated terms in a scratch table first, so the table is sized by distinct terms.
        let mut scratch = vec![0u64; (occurrences.len() * 2).next_power_of_two().max(8)];
        let mut distinct: usize = 0;
        for entry in occurrences {
            if insert_or_merge(&mut scratch, entry) {
                distinct += 1;
            }
        }
        let mut slots = vec![0u64; table_len(distinct)].into_boxed_slice();
        for entry in scratch.into_iter().filter(|&entry| entry != 0) {
            insert_or_merge(&mut slots, entry);
        }
        Self { signature, slots }
    }

    /// The trigram signature for the stored form: per field (title, description, body window),
    /// one bit per slot, [`STORED_SIGNATURE_BYTES`] in all.
    pub(crate) fn stored_signature(&self) -> Vec<u8> {
        let mut stored = vec![0u8; STORED_SIGNATURE_BYTES];
        for (slot, &fields) in self.signature.iter().enumerate() {
            for (plane, bit) in FIELD_BITS.iter().enumerate() {
                if fields & bit != 0
                    && let Some(byte) = stored.get_mut(plane * SIGNATURE_SLOTS / 8 + slot / 8)
                {
                    *byte |= 1 << (slot % 8);
                }
            }
        }
        stored
    }

    /// The occupied table entries as little-endian words, for the stored form.
    pub(crate) fn term_entries(&self) -> Vec<u8> {
        self.slots
            .iter()
            .filter(|&&entry| entry != 0)
            .flat_map(|entry| entry.to_le_bytes())
            .collect()
    }

    /// Rebuilds an index from [`TermIndex::stored_signature`] and [`TermIndex::term_entries`]
    /// without looking at the text; `None` when the parts cannot have come from
    /// [`TermIndex::build`].
    pub(crate) fn from_stored(stored_signature: &[u8], entries: &[u8]) -> Option<Self> {
        if stored_signature.len() != STORED_SIGNATURE_BYTES || !entries.len().is_multiple_of(8) {
            return None;
        }
        let (title, rest) = stored_signature.split_at(SIGNATURE_SLOTS / 8);
        let (description, body) = rest.split_at(SIGNATURE_SLOTS / 8);
        // Any bit pattern is a signature: one byte of three planes gives eight slots.
        let mut signature = vec![0u8; SIGNATURE_SLOTS].into_boxed_slice();
        for (((slots, &t), &d), &b) in signature
            .chunks_exact_mut(8)
            .zip(title)
            .zip(description)
            .zip(body)
        {
            for (bit, slot) in slots.iter_mut().enumerate() {
                *slot = (t >> bit & 1) | (d >> bit & 1) << 1 | (b >> bit & 1) << 2;
            }
        }
        let distinct = entries.len() / 8;
        let mut slots = vec![0u64; table_len(distinct)].into_boxed_slice();
        for word in entries.chunks_exact(8) {
            let entry = u64::from_le_bytes(word.try_into().ok()?);
            let bits = entry & FIELD_MASK;
            // Each stored key is distinct and names at least one field, and nothing else.
            if bits == 0
                || bits & !u64::from(ALL_FIELDS) != 0
                || !insert_or_merge(&mut slots, entry)
            {
                return None;
            }
        }
        Some(Self { signature, slots })
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
        home_slot(hash, self.slots.len())
    }

    fn next_slot(&self, slot: usize) -> usize {
        (slot + 1) & self.slots.len().saturating_sub(1)
    }
}

/// Slots of a table holding `distinct` terms: at most 80% full, so probes stay short and every
/// probe sequence reaches an empty slot.
fn table_len(distinct: usize) -> usize {
    (distinct * 5 / 4 + 1).next_power_of_two().max(8)
}

/// The first slot to probe for a term in a table of `len` slots (a power of two): the hash bits
/// just above the field byte, which stored entries keep.
fn home_slot(hash: u64, len: usize) -> usize {
    // Truncation is intended: only the low bits pick the slot.
    #[allow(clippy::cast_possible_truncation)]
    let low = (hash >> 8) as usize;
    low & len.saturating_sub(1)
}

/// Inserts a table entry (key bits and field bits) into an open-addressing table with at least
/// one empty slot, or ORs its field bits into the entry with the same key. Returns whether the
/// key was new.
fn insert_or_merge(slots: &mut [u64], entry: u64) -> bool {
    let key = entry & !FIELD_MASK;
    let mask = slots.len().saturating_sub(1);
    let mut at = home_slot(entry, slots.len());
    for _ in 0..slots.len() {
        let Some(slot) = slots.get_mut(at) else {
            return false;
        };
        if *slot == 0 {
            *slot = entry;
            return true;
        }
        if *slot & !FIELD_MASK == key {
            *slot |= entry & FIELD_MASK;
            return false;
        }
        at = (at + 1) & mask;
    }
    false
}

/// A 64-bit hash of a term's bytes (word-at-a-time multiply-xor with a final avalanche; the last
/// word is zero-padded).
fn term_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mix = |hash: u64, word: u64| (hash ^ word).wrapping_mul(K).rotate_left(27);
    let mut hash = (bytes.len() as u64).wrapping_mul(K);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        hash = mix(hash, u64::from_le_bytes(word));
    }
    let rest = chunks.remainder().len();
    if rest > 0 {
        hash = mix(hash, tail_word(bytes, rest));
    }
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
    hash ^ (hash >> 33)
}

/// The last `rest` (1 to 7) bytes of `bytes` as a little-endian word, zero-padded. Built from
/// whole-word loads rather than a byte-wise copy, which would stall the load that follows it.
fn tail_word(bytes: &[u8], rest: usize) -> u64 {
    let len = bytes.len();
    let load4 = |at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map_or(0, |b| u64::from(u32::from_le_bytes(b)))
    };
    if let Some(last) = len
        .checked_sub(8)
        .and_then(|at| bytes.get(at..))
        .and_then(|b| <[u8; 8]>::try_from(b).ok())
    {
        return u64::from_le_bytes(last) >> (8 * (8 - rest));
    }
    // Shorter than a word: `rest` is the whole length.
    if rest >= 4 {
        return load4(0) | ((load4(rest - 4) >> (8 * (8 - rest))) << 32);
    }
    bytes
        .iter()
        .rev()
        .fold(0, |word, &byte| (word << 8) | u64::from(byte))
}

/// The signature slot of one byte trigram.
fn slot_of(a: u8, b: u8, c: u8) -> u16 {
    slot_of_packed(u32::from(a) | (u32::from(b) << 8) | (u32::from(c) << 16))
}

/// The signature slot of a byte trigram packed first byte lowest.
fn slot_of_packed(packed: u32) -> u16 {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_word_is_the_zero_padded_last_partial_word() {
        let text: Vec<u8> = (1..=40).collect();
        for len in 0..text.len() {
            let bytes = &text[..len];
            let rest = len % 8;
            if rest == 0 {
                continue;
            }
            let mut padded = [0u8; 8];
            padded[..rest].copy_from_slice(&bytes[len - rest..]);
            assert_eq!(
                tail_word(bytes, rest),
                u64::from_le_bytes(padded),
                "length {len}"
            );
        }
    }
}
