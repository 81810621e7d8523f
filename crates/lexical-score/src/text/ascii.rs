//! The ASCII scanner: tokens of all-ASCII text, and the word-at-a-time byte tests the general
//! scanner and the normaliser use on ASCII stretches of other text.

use super::MIN_RUN_CHARS;

/// The tokens of ASCII text: runs of ASCII letters and digits of at least three bytes, which is
/// what the general scanner yields on ASCII (no ASCII character is CJK or a mark).
///
/// Works on 64 bytes at a time: one bit mask of the letters and digits, then one step per run
/// start and run end, so there is no branch per byte to mispredict at every word boundary.
pub(crate) fn for_each_ascii_token<'t>(text: &'t str, emit: &mut impl FnMut(usize, &'t str)) {
    // Start of the run in progress, possibly begun in an earlier block.
    let mut open: Option<usize> = None;
    for (block_index, block) in text.as_bytes().chunks(64).enumerate() {
        let base = block_index * 64;
        let mut mask = 0u64;
        // Whole words are plain loads; only a partial last word is copied into a zeroed one.
        let mut words = block.chunks_exact(8);
        let mut shift = 0;
        for word in &mut words {
            let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
            mask |= alphanumeric_bits(word) << shift;
            shift += 8;
        }
        if !words.remainder().is_empty() {
            let mut last = [0u8; 8];
            if let Some(head) = last.get_mut(..words.remainder().len()) {
                head.copy_from_slice(words.remainder());
            }
            mask |= alphanumeric_bits(u64::from_le_bytes(last)) << shift;
        }
        let before = (mask << 1) | u64::from(open.is_some());
        let mut starts = mask & !before;
        // Bits past a short final block are clear, so a run reaching the end of the text ends
        // there; a run reaching the end of a full block carries over to the next.
        let mut ends = !mask & before;
        loop {
            if let Some(start) = open {
                if ends == 0 {
                    break;
                }
                let end = base + ends.trailing_zeros() as usize;
                ends &= ends - 1;
                open = None;
                if end - start >= MIN_RUN_CHARS
                    && let Some(token) = text.get(start..end)
                {
                    emit(start, token);
                }
            } else {
                if starts == 0 {
                    break;
                }
                open = Some(base + starts.trailing_zeros() as usize);
                starts &= starts - 1;
            }
        }
    }
    if let Some(start) = open
        && text.len() - start >= MIN_RUN_CHARS
        && let Some(token) = text.get(start..)
    {
        emit(start, token);
    }
}

/// A one in every byte of a word.
const ONES: u64 = 0x0101_0101_0101_0101;
/// The high bit of every byte of a word: set in a byte exactly when it is not ASCII.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The eight bytes of `bytes` from `at` as a little-endian word, if there are eight.
fn word_at(bytes: &[u8], at: usize) -> Option<u64> {
    let word: [u8; 8] = bytes.get(at..at.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(word))
}

/// The length of the ASCII prefix of `bytes`, found eight bytes at a time.
pub(crate) fn ascii_prefix_len(bytes: &[u8]) -> usize {
    let mut len = 0;
    while let Some(word) = word_at(bytes, len) {
        let high = word & HIGH;
        if high != 0 {
            return len + high.trailing_zeros() as usize / 8;
        }
        len += 8;
    }
    len + bytes
        .get(len..)
        .unwrap_or_default()
        .iter()
        .take_while(|byte| byte.is_ascii())
        .count()
}

/// The length of the prefix of `bytes` made of ASCII letters and digits, found eight bytes at a
/// time.
pub(crate) fn alphanumeric_prefix_len(bytes: &[u8]) -> usize {
    let mut len = 0;
    while let Some(word) = word_at(bytes, len) {
        // Bytes from the first non-ASCII one on are cleared: they are neither letters nor digits,
        // and cleared, they cannot make `alphanumeric_bits`'s sums carry.
        let high = word & HIGH;
        let ascii = if high == 0 {
            word
        } else {
            word & ((1u64 << (high.trailing_zeros() - 7)) - 1)
        };
        let run = alphanumeric_bits(ascii).trailing_ones() as usize;
        len += run;
        if run < 8 {
            return len;
        }
    }
    len + bytes
        .get(len..)
        .unwrap_or_default()
        .iter()
        .take_while(|byte| byte.is_ascii_alphanumeric())
        .count()
}

/// One bit per byte of eight ASCII bytes (lowest byte, lowest bit): whether it is an ASCII letter
/// or digit. Zero bytes (padding) are neither.
fn alphanumeric_bits(word: u64) -> u64 {
    // With every byte below 0x80, adding 0x80 - c sets a byte's high bit exactly when the byte
    // is at least c, and no sum carries into the next byte.
    let at_least = |word: u64, c: u8| word + ONES * u64::from(0x80 - c);
    let digit = at_least(word, b'0') & !at_least(word, b'9' + 1);
    let folded = word | (ONES * 0x20);
    let letter = at_least(folded, b'a') & !at_least(folded, b'z' + 1);
    // Gather the eight high bits into the top byte, then bring them down.
    (((digit | letter) & HIGH) >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alphanumeric_bits_agree_with_the_byte_test_for_every_ascii_byte() {
        for byte in 0..0x80u8 {
            for lane in 0..8 {
                let word =
                    u64::from(byte) << (8 * lane) | 0x2020_2020_2020_2020 & !(0xFF << (8 * lane));
                let expected = u64::from(byte.is_ascii_alphanumeric()) << lane;
                assert_eq!(
                    alphanumeric_bits(word),
                    expected,
                    "byte {byte:#x} in lane {lane}"
                );
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn prefix_lengths_found_by_word_equal_those_found_byte_by_byte(
            text in "([a-zA-Z0-9]{1,20}|[ -~]|é|—|日本){0,30}"
        ) {
            let bytes = text.as_bytes();
            for start in 0..bytes.len().min(40) {
                let rest = &bytes[start..];
                proptest::prop_assert_eq!(
                    ascii_prefix_len(rest),
                    rest.iter().take_while(|byte| byte.is_ascii()).count()
                );
                proptest::prop_assert_eq!(
                    alphanumeric_prefix_len(rest),
                    rest.iter().take_while(|byte| byte.is_ascii_alphanumeric()).count()
                );
            }
        }
    }
}
