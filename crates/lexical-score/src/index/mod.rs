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
//! Both stay small and are sized by the text: about 1.5 KiB for a 1 KiB body of varied prose (a
//! 512-byte signature and a table of about a hundred words), a few hundred bytes for a typical
//! memory of a few hundred characters, so the indexes of a thousand documents mostly stay in
//! cache. Both are kept in their stored layout, so a loaded index is a view of the store's bytes.

mod query_term;
mod signature;
mod table;
#[cfg(test)]
mod tests;

use bytes::Bytes;

use crate::text::{Scan, scan};

pub use query_term::MAX_QUERY_TOKENS;
pub(crate) use query_term::QueryTerm;
pub(crate) use signature::SIGNATURE_BYTES;
use signature::{MIN_SIGNATURE_BYTES, fold_signature, slot_of_packed};
use table::{FIELD_MASK, ScratchTable, home_slot, insert_or_merge, table_len, term_hash};

/// Field bit of the title.
pub(crate) const TITLE: u8 = 1;
/// Field bit of the description.
pub(crate) const DESCRIPTION: u8 = 2;
/// Field bit of the body window.
pub(crate) const BODY: u8 = 4;
pub(crate) const ALL_FIELDS: u8 = TITLE | DESCRIPTION | BODY;
const FIELD_BITS: [u8; 3] = [TITLE, DESCRIPTION, BODY];

/// The normalised scored fields of one document, in field-bit order.
pub(crate) type Fields<'a> = [&'a str; 3];

/// The normalised scored fields of one document, searched only when the index cannot answer
/// (a stored field may not even be derived: see [`QueryTerm::is_in_lowercase_of`]).
pub(crate) trait FieldText {
    /// Whether the field at `position` in field-bit order (title, description, body window)
    /// contains `term`.
    fn contains(&self, position: usize, term: &QueryTerm) -> bool;
}

/// The field bits of the fields among `wanted` (field bits) that contain `term`, by searching
/// each one. With every field wanted, what [`TermIndex::fields_containing_each`] answers for a
/// text, without an index; the index searches only the fields its signature cannot rule out.
pub(crate) fn fields_searched(fields: &impl FieldText, term: &QueryTerm, wanted: u8) -> u8 {
    let mut found = 0;
    for (position, &bit) in FIELD_BITS.iter().enumerate() {
        if wanted & bit != 0 && fields.contains(position, term) {
            found |= bit;
        }
    }
    found
}

/// See the module documentation. Two indexes are equal when they hold the same signature and the
/// same terms, wherever the terms sit in the table.
///
/// Both parts are byte strings in the layout the stored form uses, so an index loaded from a store
/// shares the store's buffer instead of being rebuilt.
#[derive(Debug, Clone, Eq)]
pub(crate) struct TermIndex {
    /// Per trigram slot, a nibble with the bits of the fields holding a trigram that hashes there.
    signature: Bytes,
    /// Open-addressing table of distinct document terms, little-endian words: the term hash with
    /// its low byte replaced by the bits of the fields holding the term; 0 marks an empty slot.
    /// The word count is a power of two.
    table: Bytes,
}

impl PartialEq for TermIndex {
    fn eq(&self, other: &Self) -> bool {
        let sorted = |index: &Self| {
            let mut entries: Vec<u64> = index.words().filter(|&e| e != 0).collect();
            entries.sort_unstable();
            entries
        };
        self.signature == other.signature && sorted(self) == sorted(other)
    }
}

impl TermIndex {
    /// The bytes of its signature and table.
    pub(crate) fn bytes(&self) -> usize {
        self.signature.len() + self.table.len()
    }

    pub(crate) fn build(fields: Fields<'_>) -> Self {
        let mut signature = vec![0u8; SIGNATURE_BYTES];
        // Terms merge into a scratch table as they come (key bits of the hash, field bits); a
        // term's trigrams are marked only the first time it occurs in a field, as later
        // occurrences would mark the same slots again. (Two terms that share all key bits are one
        // term to the table already; see the module documentation.)
        let mut scratch = ScratchTable::default();
        for (&bit, text) in FIELD_BITS.iter().zip(fields) {
            scan(text, Scan::IndexTerms, |_, term| {
                let entry = (term_hash(term.as_bytes()) & !FIELD_MASK) | u64::from(bit);
                if !scratch.merge(entry) {
                    return;
                }
                let mut packed = 0u32;
                for (at, &byte) in term.as_bytes().iter().enumerate() {
                    packed = (packed >> 8) | (u32::from(byte) << 16);
                    if at >= 2 {
                        let slot = usize::from(slot_of_packed(packed));
                        if let Some(pair) = signature.get_mut(slot / 2) {
                            *pair |= bit << (4 * (slot % 2));
                        }
                    }
                }
            });
        }
        let distinct = scratch.distinct;
        let scratch = scratch.slots;
        let mut slots = vec![0u64; table_len(distinct)];
        for entry in scratch.into_iter().filter(|&entry| entry != 0) {
            insert_or_merge(&mut slots, entry);
        }
        let table: Vec<u8> = slots.iter().flat_map(|word| word.to_le_bytes()).collect();
        Self {
            signature: Bytes::from(fold_signature(&signature)),
            table: Bytes::from(table),
        }
    }

    /// The signature in its stored layout (a power of two of bytes, at most [`SIGNATURE_BYTES`]).
    pub(crate) fn signature_bytes(&self) -> &[u8] {
        &self.signature
    }

    /// The term table in its stored layout.
    pub(crate) fn table_bytes(&self) -> &[u8] {
        &self.table
    }

    /// An index from the parts [`TermIndex::signature_bytes`] and [`TermIndex::table_bytes`]
    /// returned, sharing their buffers and without looking at the text; `None` when they cannot
    /// have come from [`TermIndex::build`] (a wrong length, a full table, or an entry naming no
    /// field or something other than a field).
    pub(crate) fn from_stored(signature: Bytes, table: Bytes) -> Option<Self> {
        let words = table.len() / 8;
        if !(MIN_SIGNATURE_BYTES..=SIGNATURE_BYTES).contains(&signature.len())
            || !signature.len().is_power_of_two()
            || !table.len().is_multiple_of(8)
            || words < 8
            || !words.is_power_of_two()
        {
            return None;
        }
        // Any nibble is a signature slot (bits beyond the fields are masked away when read).
        let index = Self { signature, table };
        let mut empty = false;
        for entry in index.words() {
            let bits = entry & FIELD_MASK;
            if entry == 0 {
                empty = true;
            } else if bits == 0 || bits & !u64::from(ALL_FIELDS) != 0 {
                return None;
            }
        }
        empty.then_some(index)
    }

    fn words(&self) -> impl Iterator<Item = u64> + '_ {
        self.table
            .chunks_exact(8)
            .map(|word| u64::from_le_bytes(word.try_into().unwrap_or_default()))
    }

    fn word(&self, at: usize) -> u64 {
        self.table
            .get(at * 8..at * 8 + 8)
            .and_then(|word| <[u8; 8]>::try_from(word).ok())
            .map_or(0, u64::from_le_bytes)
    }

    fn table_words(&self) -> usize {
        self.table.len() / 8
    }

    /// The field bits of one signature slot.
    fn signature_slot(&self, slot: u16) -> u8 {
        // The signature's slot count is a power of two: twice its byte count.
        let slot = usize::from(slot) & (self.signature.len() * 2).saturating_sub(1);
        self.signature
            .get(slot / 2)
            .map_or(0, |pair| (pair >> (4 * (slot % 2))) & ALL_FIELDS)
    }

    /// For each of `terms` (at most `found.len()`), the field bits of the fields containing it.
    pub(crate) fn fields_containing_each(
        &self,
        fields: &impl FieldText,
        terms: &[QueryTerm],
        found: &mut [u8],
    ) {
        // Load every term's first table slot before looking at any of them: the loads are
        // independent, so their cache misses overlap instead of queueing behind branches.
        let mut first_slots = [0u64; MAX_QUERY_TOKENS];
        for (slot, term) in first_slots.iter_mut().zip(terms) {
            *slot = self.word(self.home_slot(term.hash));
        }
        for ((out, term), first) in found.iter_mut().zip(terms).zip(first_slots) {
            *out = self.fields_containing(fields, term, first);
        }
    }

    fn fields_containing(&self, fields: &impl FieldText, term: &QueryTerm, first: u64) -> u8 {
        let found = self.exact(term, first);
        if term.bigram || found == ALL_FIELDS {
            return found;
        }
        // Fields not yet known to hold the token whose signature holds all of its trigrams.
        let mut candidates = !found & ALL_FIELDS;
        for &slot in term.slots() {
            candidates &= self.signature_slot(slot);
            if candidates == 0 {
                return found;
            }
        }
        found | fields_searched(fields, term, candidates)
    }

    /// Fields in which `term` occurs as a whole document term, given its home slot's content.
    fn exact(&self, term: &QueryTerm, first: u64) -> u8 {
        let key = term.hash & !FIELD_MASK;
        let mut slot = first;
        let mut at = self.home_slot(term.hash);
        // The table always has an empty slot, so this ends; the bound guards it regardless.
        for _ in 0..self.table_words() {
            if slot == 0 {
                return 0;
            }
            if slot & !FIELD_MASK == key {
                return u8::try_from(slot & FIELD_MASK).unwrap_or(0) & ALL_FIELDS;
            }
            at = self.next_slot(at);
            slot = self.word(at);
        }
        0
    }

    fn home_slot(&self, hash: u64) -> usize {
        home_slot(hash, self.table_words())
    }

    fn next_slot(&self, slot: usize) -> usize {
        (slot + 1) & self.table_words().saturating_sub(1)
    }
}
