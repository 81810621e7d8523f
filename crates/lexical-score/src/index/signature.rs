//! The trigram signature: per hashed byte trigram of a document's terms, the fields that hold it,
//! folded to the fewest slots that leave half of them free.

/// Trigrams hash to this many bits, so a signature has at most 1,024 slots: a typical
/// 1,200-character window marks about half of them, so a token of five trigrams passes by chance a
/// few times in a hundred.
pub(super) const SLOT_BITS: u32 = 10;
pub(super) const SIGNATURE_SLOTS: usize = 1 << SLOT_BITS;
/// A signature has the fewest slots, a power of two from this many up to [`SIGNATURE_SLOTS`], that
/// leaves at least half of them unmarked: most memories are a few hundred characters long and need
/// far fewer than 1,024. A trigram's slot in a smaller signature is the low bits of its full slot.
pub(super) const MIN_SIGNATURE_SLOTS: usize = 32;
/// Bytes of a signature: one nibble per slot holding the slot's field bits, low nibble first.
pub(crate) const SIGNATURE_BYTES: usize = SIGNATURE_SLOTS / 2;
pub(super) const MIN_SIGNATURE_BYTES: usize = MIN_SIGNATURE_SLOTS / 2;
/// Checking more trigrams of one token than this rejects little more and costs linear time on
/// long whole-run tokens (Thai, Khmer).
pub(super) const MAX_SLOTS_PER_TOKEN: usize = 16;

/// The full 1,024-slot signature folded to the fewest slots that leave at least half unmarked
/// (see [`MIN_SIGNATURE_SLOTS`]): slot `i` goes to slot `i mod len`.
pub(super) fn fold_signature(full: &[u8]) -> Vec<u8> {
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
pub(super) fn marked_slots(signature: &[u8]) -> usize {
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

/// The signature slot of one byte trigram.
pub(super) fn slot_of(a: u8, b: u8, c: u8) -> u16 {
    slot_of_packed(u32::from(a) | (u32::from(b) << 8) | (u32::from(c) << 16))
}

/// The signature slot of a byte trigram packed first byte lowest.
pub(super) fn slot_of_packed(packed: u32) -> u16 {
    // Fibonacci hashing: the top bits of the product spread neighbouring trigrams apart.
    u16::try_from(packed.wrapping_mul(0x9E37_79B1) >> (32 - SLOT_BITS)).unwrap_or(0)
}

/// The distinct signature slots of a query token's byte trigrams (bounded per token).
pub(super) fn trigram_slots(token: &str) -> Vec<u16> {
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
