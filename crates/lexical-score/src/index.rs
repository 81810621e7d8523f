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

use bytes::Bytes;

use crate::query::MAX_QUERY_TOKENS;
use crate::text::{Scan, scan};

/// Field bit of the title.
pub(crate) const TITLE: u8 = 1;
/// Field bit of the description.
pub(crate) const DESCRIPTION: u8 = 2;
/// Field bit of the body window.
pub(crate) const BODY: u8 = 4;
pub(crate) const ALL_FIELDS: u8 = TITLE | DESCRIPTION | BODY;
const FIELD_BITS: [u8; 3] = [TITLE, DESCRIPTION, BODY];

/// Trigrams hash to this many bits, so a signature has at most 1,024 slots: a typical
/// 1,200-character window marks about half of them, so a token of five trigrams passes by chance a
/// few times in a hundred.
const SLOT_BITS: u32 = 10;
const SIGNATURE_SLOTS: usize = 1 << SLOT_BITS;
/// A signature has the fewest slots, a power of two from this many up to [`SIGNATURE_SLOTS`], that
/// leaves at least half of them unmarked: most memories are a few hundred characters long and need
/// far fewer than 1,024. A trigram's slot in a smaller signature is the low bits of its full slot.
const MIN_SIGNATURE_SLOTS: usize = 32;
/// Bytes of a signature: one nibble per slot holding the slot's field bits, low nibble first.
pub(crate) const SIGNATURE_BYTES: usize = SIGNATURE_SLOTS / 2;
const MIN_SIGNATURE_BYTES: usize = MIN_SIGNATURE_SLOTS / 2;
/// Checking more trigrams of one token than this rejects little more and costs linear time on
/// long whole-run tokens (Thai, Khmer).
const MAX_SLOTS_PER_TOKEN: usize = 16;
/// Low hash bits of a table slot that hold the field bits instead.
const FIELD_MASK: u64 = 0xFF;

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

/// A query token prepared for index look-ups.
#[derive(Debug, Clone)]
pub(crate) struct QueryTerm {
    pub(crate) text: String,
    /// A substring searcher for `text`, built once per query rather than once per search: a
    /// short token passes many signatures, so it is searched for in many fields.
    finder: memchr::memmem::Finder<'static>,
    hash: u64,
    /// The first `slot_count` entries are the token's distinct trigram slots; kept inline so a
    /// query's terms sit in one contiguous block.
    slots: [u16; MAX_SLOTS_PER_TOKEN],
    slot_count: u8,
    /// CJK bigrams are answered by the term table alone.
    bigram: bool,
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

    fn slots(&self) -> &[u16] {
        self.slots
            .get(..usize::from(self.slot_count))
            .unwrap_or_default()
    }
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

/// The full 1,024-slot signature folded to the fewest slots that leave at least half unmarked
/// (see [`MIN_SIGNATURE_SLOTS`]): slot `i` goes to slot `i mod len`.
fn fold_signature(full: &[u8]) -> Vec<u8> {
    let marked = marked_slots(full);
    let slots = (marked * 2)
        .next_power_of_two()
        .clamp(MIN_SIGNATURE_SLOTS, SIGNATURE_SLOTS);
    // Byte `at` holds slots 2·at and 2·at + 1, which fold into the same nibbles of byte
    // `at mod (slots / 2)`: each run of `slots / 2` bytes is ORed into the folded signature
    // (whole runs, as both lengths are powers of two; no division per byte).
    let mut folded = vec![0u8; slots / 2];
    for run in full.chunks(slots / 2) {
        for (to, &pair) in folded.iter_mut().zip(run) {
            *to |= pair;
        }
    }
    folded
}

/// How many slots (nibbles) of a signature are marked, counted eight bytes (sixteen nibbles) at a
/// time: each nibble's bits are combined with a bitwise or into its lowest bit, then counted with
/// one instruction.
fn marked_slots(signature: &[u8]) -> usize {
    let in_word = |word: u64| {
        ((word | (word >> 1) | (word >> 2) | (word >> 3)) & 0x1111_1111_1111_1111).count_ones()
            as usize
    };
    // Whole words are plain loads; only a partial last word (none in a stored signature, whose
    // length is a power of two from 16) is copied into a zeroed one.
    let mut words = signature.chunks_exact(8);
    let whole: usize = (&mut words)
        .map(|word| in_word(u64::from_le_bytes(word.try_into().unwrap_or_default())))
        .sum();
    let mut last = [0u8; 8];
    if let Some(head) = last.get_mut(..words.remainder().len()) {
        head.copy_from_slice(words.remainder());
    }
    whole + in_word(u64::from_le_bytes(last))
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

/// A growing open-addressing table in which a document's term entries are merged while it is
/// tokenized; at most half full, so probes stay short.
struct ScratchTable {
    slots: Vec<u64>,
    distinct: usize,
}

impl Default for ScratchTable {
    fn default() -> Self {
        Self {
            slots: vec![0; 64],
            distinct: 0,
        }
    }
}

impl ScratchTable {
    /// Merges `entry` (key bits and one field bit); returns whether that field bit is new for
    /// its key (a new key or a known key seen in another field so far). Inlined into the
    /// tokenizer's loop, where it runs for every token; growing is the rare, out-of-line case.
    #[inline]
    fn merge(&mut self, entry: u64) -> bool {
        let before = insert_or_merge(&mut self.slots, entry);
        if before == 0 {
            self.distinct += 1;
            if self.distinct * 2 > self.slots.len() {
                self.grow();
            }
        }
        entry & FIELD_MASK & !before != 0
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let mut slots = vec![0u64; self.slots.len() * 2];
        for entry in self.slots.iter().copied().filter(|&entry| entry != 0) {
            insert_or_merge(&mut slots, entry);
        }
        self.slots = slots;
    }
}

/// Inserts a table entry (key bits and field bits) into an open-addressing table with at least
/// one empty slot, or ORs its field bits into the entry with the same key. Returns the field bits
/// the key had before: 0 when it was new (or, were the table full, when it could not be stored).
fn insert_or_merge(slots: &mut [u64], entry: u64) -> u64 {
    let key = entry & !FIELD_MASK;
    let mask = slots.len().saturating_sub(1);
    let mut at = home_slot(entry, slots.len());
    for _ in 0..slots.len() {
        let Some(slot) = slots.get_mut(at) else {
            break;
        };
        if *slot == 0 {
            *slot = entry;
            return 0;
        }
        if *slot & !FIELD_MASK == key {
            let before = *slot & FIELD_MASK;
            *slot |= entry & FIELD_MASK;
            return before;
        }
        at = (at + 1) & mask;
    }
    0
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
}
