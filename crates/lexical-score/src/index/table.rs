//! The term table: an open-addressing table of a document's distinct term hashes, each with the
//! bits of the fields that hold it, and the hash it is keyed by.

/// Low hash bits of a table slot that hold the field bits instead.
pub(super) const FIELD_MASK: u64 = 0xFF;

/// Slots of a table holding `distinct` terms: at most 80% full, so probes stay short and every
/// probe sequence reaches an empty slot.
pub(super) fn table_len(distinct: usize) -> usize {
    (distinct * 5 / 4 + 1).next_power_of_two().max(8)
}

/// The first slot to probe for a term in a table of `len` slots (a power of two): the hash bits
/// just above the field byte, which stored entries keep.
pub(super) fn home_slot(hash: u64, len: usize) -> usize {
    // Truncation is intended: only the low bits pick the slot.
    #[allow(clippy::cast_possible_truncation)]
    let low = (hash >> 8) as usize;
    low & len.saturating_sub(1)
}

/// A growing open-addressing table in which a document's term entries are merged while it is
/// tokenized; at most half full, so probes stay short.
pub(super) struct ScratchTable {
    pub(super) slots: Vec<u64>,
    pub(super) distinct: usize,
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
    pub(super) fn merge(&mut self, entry: u64) -> bool {
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
    pub(super) fn grow(&mut self) {
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
pub(super) fn insert_or_merge(slots: &mut [u64], entry: u64) -> u64 {
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
pub(super) fn term_hash(bytes: &[u8]) -> u64 {
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
pub(super) fn tail_word(bytes: &[u8], rest: usize) -> u64 {
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
