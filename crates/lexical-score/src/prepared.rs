//! A document's scoring text, normalised once per document version.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::index::{QueryTerm, TermIndex};
use crate::noise::NoiseMarkers;
use crate::text::{normalize, normalize_into};

/// The version of everything a stored [`PreparedText`] depends on: the normaliser, the tokenizer,
/// the index and the stored form. A store of prepared texts (the persistent catalog) records it
/// and discards texts stored under any other version, so it must change with any of them.
pub const PREPARED_TEXT_VERSION: u32 = 4;

/// How many characters of the trimmed body a prompt shows, and so how many are scored.
pub const BODY_WINDOW_CHARS: usize = 1_200;

/// A document's scoring text normalised once per document version (NFKC + lowercase):
/// title, description, full body and where the 1,200-character body window ends.
/// [`PreparedText::stored`] and [`StoredPreparedText::restore`] let a persistent catalog keep it.
///
/// The window is the normalised form of the first 1,200 characters of the original body — exactly
/// the part a prompt can show — and the full body is that window followed by the normalised rest.
/// A term index of the scored fields (see the `index` module) and the presence of noise markers are
/// derived here too, and stored with the text, so loading never tokenizes again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedText {
    title: String,
    description: String,
    body: String,
    window_end: usize,
    index: TermIndex,
    markers: NoiseMarkers,
}

impl PreparedText {
    /// Normalises a document. `body` is the trimmed body as the scanner stores it.
    pub fn new(title: &str, description: &str, body: &str) -> Self {
        let split = if body.len() <= BODY_WINDOW_CHARS {
            // At most 1,200 bytes, so at most 1,200 characters.
            body.len()
        } else if body.is_ascii() {
            BODY_WINDOW_CHARS
        } else {
            body.char_indices()
                .nth(BODY_WINDOW_CHARS)
                .map_or(body.len(), |(at, _)| at)
        };
        let (shown, rest) = body.split_at(split);
        let mut normalized_body = String::with_capacity(body.len());
        normalize_into(shown, &mut normalized_body);
        let window_end = normalized_body.len();
        normalize_into(rest, &mut normalized_body);
        Self::from_parts(
            normalize(title),
            normalize(description),
            normalized_body,
            window_end,
        )
    }

    fn from_parts(title: String, description: String, body: String, window_end: usize) -> Self {
        let window = body.get(..window_end).unwrap_or(&body);
        let index = TermIndex::build([&title, &description, window]);
        let markers = NoiseMarkers::detect([&title, &description, &body]);
        Self {
            title,
            description,
            body,
            window_end,
            index,
            markers,
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

    /// For each of `terms`, the field bits (see the `index` module) of the scored fields that
    /// contain it, written to the matching position of `found`.
    pub(crate) fn fields_containing_each(&self, terms: &[QueryTerm], found: &mut [u8]) {
        let fields = [
            self.title.as_str(),
            self.description.as_str(),
            self.body_window(),
        ];
        self.index.fields_containing_each(fields, terms, found);
    }

    /// Which noise markers the title, description and full body contain.
    pub(crate) fn noise_markers(&self) -> NoiseMarkers {
        self.markers
    }
}

impl PreparedText {
    /// The stored form of this text, which was prepared from `title`, `description` and `body`
    /// (see [`PreparedText::new`]). A store keeps the source text anyway, so a normalised field
    /// that [`StoredPreparedText::restore`] can derive from its source (an ASCII source, whose
    /// normal form is its lowercase) is left out.
    pub fn stored<'a>(
        &'a self,
        title: &str,
        description: &str,
        body: &str,
    ) -> StoredPreparedTextRef<'a> {
        let unless_derivable =
            |normalized: &'a str, source: &str| (!source.is_ascii()).then_some(normalized);
        StoredPreparedTextRef {
            title: unless_derivable(&self.title, title),
            description: unless_derivable(&self.description, description),
            body: unless_derivable(&self.body, body),
            body_window_end: self.window_end,
            signature: self.index.stored_signature(),
            term_entries: self.index.term_entries(),
            markers: self.markers.to_bits(),
        }
    }
}

/// The stored form of a [`PreparedText`] (see [`PreparedText::stored`]), as read back.
#[derive(Debug, Deserialize)]
pub struct StoredPreparedText<'a> {
    title: Option<String>,
    description: Option<String>,
    body: Option<String>,
    body_window_end: usize,
    /// Borrowed from the input where the format allows (postcard does).
    #[serde(borrow, with = "serde_bytes")]
    signature: Cow<'a, [u8]>,
    #[serde(borrow, with = "serde_bytes")]
    term_entries: Cow<'a, [u8]>,
    markers: u8,
}

/// The stored form of a [`PreparedText`] as written (see [`PreparedText::stored`]); its fields
/// match [`StoredPreparedText`].
#[derive(Debug, Serialize)]
pub struct StoredPreparedTextRef<'a> {
    title: Option<&'a str>,
    description: Option<&'a str>,
    body: Option<&'a str>,
    body_window_end: usize,
    #[serde(with = "serde_bytes")]
    signature: Vec<u8>,
    #[serde(with = "serde_bytes")]
    term_entries: Vec<u8>,
    markers: u8,
}

impl StoredPreparedText<'_> {
    /// The prepared text again, given the source text it was stored with. Checks every part and
    /// never tokenizes.
    pub fn restore(
        self,
        title: &str,
        description: &str,
        body: &str,
    ) -> Result<PreparedText, InvalidPreparedText> {
        let derive = |stored: Option<String>, source: &str| match stored {
            Some(normalized) => Ok(normalized),
            None if source.is_ascii() => Ok(source.to_ascii_lowercase()),
            None => Err(InvalidPreparedText::NotDerivable),
        };
        let title = derive(self.title, title)?;
        let description = derive(self.description, description)?;
        let body = derive(self.body, body)?;
        if !body.is_char_boundary(self.body_window_end) {
            return Err(InvalidPreparedText::WindowEnd {
                window_end: self.body_window_end,
                body_len: body.len(),
            });
        }
        let index = TermIndex::from_stored(&self.signature, &self.term_entries)
            .ok_or(InvalidPreparedText::Index)?;
        let markers = NoiseMarkers::from_bits(self.markers).ok_or(InvalidPreparedText::Index)?;
        Ok(PreparedText {
            title,
            description,
            body,
            window_end: self.body_window_end,
            index,
            markers,
        })
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
    /// The stored index or noise markers are malformed; re-prepare the document.
    #[error("the stored term index is malformed; prepare the document again")]
    Index,
    /// A normalised field was left out although its source text is not ASCII, so it cannot be
    /// derived; the text was stored with another source.
    #[error("a normalised field is missing and its source text is not ASCII")]
    NotDerivable,
}
