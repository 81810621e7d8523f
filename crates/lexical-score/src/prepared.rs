//! A document's scoring text, normalised once per document version.

use serde::{Deserialize, Serialize};

use crate::text::normalize;

/// How many characters of the trimmed body a prompt shows, and so how many are scored.
pub const BODY_WINDOW_CHARS: usize = 1_200;

/// Bits in a document signature: enough that a 1,200-character window fills well under half of
/// them, so most non-matching query tokens are rejected without a substring search.
const SIGNATURE_BITS: usize = 4_096;
const SIGNATURE_WORDS: usize = SIGNATURE_BITS / 64;
/// Checking more trigrams of one token than this rejects little more and costs linear time on
/// long whole-run tokens (Thai, Khmer).
const MAX_SLOTS_PER_TOKEN: usize = 24;

/// A document's scoring text normalised once per document version (NFKC + lowercase):
/// title, description, full body and where the 1,200-character body window ends.
/// Serialize/Deserialize so a persistent catalog can store it.
///
/// The window is the normalised form of the first 1,200 characters of the original body — exactly
/// the part a prompt can show — and the full body is that window followed by the normalised rest.
/// A signature of byte trigrams of the scored fields lets the scorer skip substring searches that
/// cannot succeed; it is derived data and is rebuilt rather than stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "StoredPreparedText", into = "StoredPreparedText")]
pub struct PreparedText {
    title: String,
    description: String,
    body: String,
    window_end: usize,
    signature: Signature,
}

impl PreparedText {
    /// Normalises a document. `body` is the trimmed body as the scanner stores it.
    pub fn new(title: &str, description: &str, body: &str) -> Self {
        let split = body
            .char_indices()
            .nth(BODY_WINDOW_CHARS)
            .map_or(body.len(), |(at, _)| at);
        let (shown, rest) = body.split_at(split);
        let mut normalized_body = normalize(shown);
        let window_end = normalized_body.len();
        if !rest.is_empty() {
            normalized_body.push_str(&normalize(rest));
        }
        Self::from_parts(
            normalize(title),
            normalize(description),
            normalized_body,
            window_end,
        )
    }

    fn from_parts(title: String, description: String, body: String, window_end: usize) -> Self {
        let mut signature = Signature::default();
        signature.add(&title);
        signature.add(&description);
        signature.add(body.get(..window_end).unwrap_or(&body));
        Self {
            title,
            description,
            body,
            window_end,
            signature,
        }
    }

    /// The normalised title.
    pub fn title(&self) -> &str {
        &self.title
    }

    /// The normalised description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The normalised full body (used for noise detection, never for scoring).
    pub fn body(&self) -> &str {
        &self.body
    }

    /// The normalised body window: the only part of the body that is scored.
    pub fn body_window(&self) -> &str {
        self.body.get(..self.window_end).unwrap_or(&self.body)
    }

    /// Whether every trigram slot of a token is present; false means the token occurs in none of
    /// the scored fields.
    pub(crate) fn may_contain(&self, slots: &[u16]) -> bool {
        slots.iter().all(|&slot| self.signature.has(slot))
    }
}

/// The stored form of [`PreparedText`]: the normalised fields and the window end, no signature.
#[derive(Serialize, Deserialize)]
struct StoredPreparedText {
    title: String,
    description: String,
    body: String,
    body_window_end: usize,
}

impl From<PreparedText> for StoredPreparedText {
    fn from(text: PreparedText) -> Self {
        Self {
            title: text.title,
            description: text.description,
            body: text.body,
            body_window_end: text.window_end,
        }
    }
}

impl TryFrom<StoredPreparedText> for PreparedText {
    type Error = InvalidPreparedText;

    fn try_from(stored: StoredPreparedText) -> Result<Self, Self::Error> {
        if !stored.body.is_char_boundary(stored.body_window_end) {
            return Err(InvalidPreparedText::WindowEnd {
                window_end: stored.body_window_end,
                body_len: stored.body.len(),
            });
        }
        Ok(Self::from_parts(
            stored.title,
            stored.description,
            stored.body,
            stored.body_window_end,
        ))
    }
}

/// A stored [`PreparedText`] that cannot be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidPreparedText {
    /// The stored window end is past the body or splits a character; re-prepare the document.
    #[error(
        "body window end {window_end} is not a character boundary of a {body_len}-byte body; prepare the document again"
    )]
    WindowEnd {
        /// The stored window end, in bytes.
        window_end: usize,
        /// The stored body length, in bytes.
        body_len: usize,
    },
}

/// A fixed-size set of hashed byte trigrams.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Signature(Box<[u64; SIGNATURE_WORDS]>);

impl Default for Signature {
    fn default() -> Self {
        Self(Box::new([0; SIGNATURE_WORDS]))
    }
}

impl Signature {
    fn add(&mut self, field: &str) {
        for window in field.as_bytes().windows(3) {
            if let [a, b, c] = *window {
                let slot = usize::from(slot_of(a, b, c));
                if let Some(word) = self.0.get_mut(slot / 64) {
                    *word |= 1 << (slot % 64);
                }
            }
        }
    }

    fn has(&self, slot: u16) -> bool {
        let slot = usize::from(slot);
        self.0
            .get(slot / 64)
            .is_some_and(|word| word & (1 << (slot % 64)) != 0)
    }
}

/// The signature slot of one byte trigram.
fn slot_of(a: u8, b: u8, c: u8) -> u16 {
    let packed = u32::from(a) | (u32::from(b) << 8) | (u32::from(c) << 16);
    // Fibonacci hashing: the top 12 bits of the product spread neighbouring trigrams apart.
    let hashed = packed.wrapping_mul(0x9E37_79B1) >> (32 - SIGNATURE_BITS.trailing_zeros());
    u16::try_from(hashed).unwrap_or(0)
}

/// The distinct signature slots of a query token's byte trigrams (bounded per token).
pub(crate) fn gram_slots(token: &str) -> Vec<u16> {
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
