//! The stored form of a [`PreparedText`], written and read back by a persistent catalog.

use std::borrow::Cow;
use std::sync::OnceLock;

use bytes::Bytes;
use bytestring::ByteString;
use serde::{Deserialize, Serialize};

use super::{Normalized, PreparedText};
use crate::index::TermIndex;
use crate::noise_markers::NoiseMarkers;

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
        // A field with a structured part is never derivable from its source alone; a field
        // that shares its source is derivable by construction.
        let unless_derivable =
            |normalized: &'a Normalized, source: &str, end: usize| match normalized {
                Normalized::LowercaseOf(..) => None,
                Normalized::Text(field) => {
                    (!source.is_ascii() || end != field.len()).then_some(&**field)
                }
            };
        let index = self.index();
        StoredPreparedTextRef {
            title: unless_derivable(&self.title, title, self.title_end),
            description: unless_derivable(&self.description, description, self.description_end),
            body: unless_derivable(&self.body, body, self.body_len()),
            title_end: self.title_end,
            description_end: self.description_end,
            body_window_end: self.window_end,
            signature: index.signature_bytes(),
            table: index.table_bytes(),
            markers: self.noise_markers().to_bits(),
        }
    }
}

/// The stored form of a [`PreparedText`] (see [`PreparedText::stored`]), as read back. Byte
/// strings are borrowed from the input where the format allows (postcard does).
#[derive(Debug, Deserialize)]
pub struct StoredPreparedText<'a> {
    #[serde(borrow)]
    title: Option<StoredBytes<'a>>,
    #[serde(borrow)]
    description: Option<StoredBytes<'a>>,
    #[serde(borrow)]
    body: Option<StoredBytes<'a>>,
    title_end: usize,
    description_end: usize,
    body_window_end: usize,
    #[serde(borrow)]
    signature: StoredBytes<'a>,
    #[serde(borrow)]
    table: StoredBytes<'a>,
    markers: u8,
}

/// A byte string of a stored form, borrowed when the format allows.
#[derive(Debug, Deserialize)]
#[serde(transparent)]
struct StoredBytes<'a>(#[serde(borrow, with = "serde_bytes")] Cow<'a, [u8]>);

impl StoredBytes<'_> {
    /// These bytes as a share of `owner` when they lie inside it, else as a copy.
    fn share(&self, owner: &Bytes) -> Bytes {
        let (start, len) = (owner.as_ptr() as usize, owner.len());
        let part = self.0.as_ref();
        let at = part.as_ptr() as usize;
        if at >= start && at + part.len() <= start + len {
            owner.slice_ref(part)
        } else {
            Bytes::copy_from_slice(part)
        }
    }
}

/// The stored form of a [`PreparedText`] as written (see [`PreparedText::stored`]); its fields
/// match [`StoredPreparedText`].
#[derive(Debug, Serialize)]
pub struct StoredPreparedTextRef<'a> {
    title: Option<&'a str>,
    description: Option<&'a str>,
    body: Option<&'a str>,
    title_end: usize,
    description_end: usize,
    body_window_end: usize,
    #[serde(with = "serde_bytes")]
    signature: &'a [u8],
    #[serde(with = "serde_bytes")]
    table: &'a [u8],
    markers: u8,
}

impl StoredPreparedText<'_> {
    /// The prepared text again, given the source text it was stored with and the buffer it was
    /// decoded from (`owner`): parts that lie inside `owner` share it instead of being copied.
    /// Checks every part and never tokenizes.
    pub fn restore(
        self,
        owner: &Bytes,
        title: &ByteString,
        description: &ByteString,
        body: &ByteString,
    ) -> Result<PreparedText, InvalidPreparedText> {
        let derive = |stored: Option<StoredBytes<'_>>, source: &ByteString| match stored {
            Some(normalized) => ByteString::try_from(normalized.share(owner))
                .map(Normalized::Text)
                .map_err(|_| InvalidPreparedText::NotUtf8),
            None if source.is_ascii() => {
                Ok(Normalized::LowercaseOf(source.clone(), OnceLock::new()))
            }
            None => Err(InvalidPreparedText::NotDerivable),
        };
        let title = derive(self.title, title)?;
        let description = derive(self.description, description)?;
        let body = derive(self.body, body)?;
        // A derived body has its source's length.
        let body_text: &str = match &body {
            Normalized::Text(text) | Normalized::LowercaseOf(text, _) => text,
        };
        if !body_text.is_char_boundary(self.body_window_end) {
            return Err(InvalidPreparedText::WindowEnd {
                window_end: self.body_window_end,
                body_len: body_text.len(),
            });
        }
        for (field, end) in [
            (&title, self.title_end),
            (&description, self.description_end),
        ] {
            let text: &str = match field {
                Normalized::Text(text) | Normalized::LowercaseOf(text, _) => text,
            };
            let derived = matches!(field, Normalized::LowercaseOf(..));
            if !text.is_char_boundary(end) || (derived && end != text.len()) {
                return Err(InvalidPreparedText::FieldEnd {
                    end,
                    field_len: text.len(),
                });
            }
        }
        let index = TermIndex::from_stored(self.signature.share(owner), self.table.share(owner))
            .ok_or(InvalidPreparedText::Index)?;
        let markers = NoiseMarkers::from_bits(self.markers).ok_or(InvalidPreparedText::Index)?;
        Ok(PreparedText {
            title,
            description,
            body,
            title_end: self.title_end,
            description_end: self.description_end,
            window_end: self.body_window_end,
            index: OnceLock::from(index),
            markers: OnceLock::from(markers),
            ahead: OnceLock::new(),
        })
    }
}

/// A stored [`PreparedText`] that cannot be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
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
    /// The stored end of the title or description is past its field or splits a character;
    /// re-prepare the document.
    #[error(
        "field end {end} is not a character boundary of a {field_len}-byte field; prepare the document again"
    )]
    FieldEnd {
        /// The stored end, in bytes.
        end: usize,
        /// The stored field's length, in bytes.
        field_len: usize,
    },
    /// The stored index or noise markers are malformed; re-prepare the document.
    #[error("the stored term index is malformed; prepare the document again")]
    Index,
    /// A stored normalised field is not UTF-8.
    #[error("a stored normalised field is not UTF-8")]
    NotUtf8,
    /// A normalised field was left out although its source text is not ASCII, so it cannot be
    /// derived; the text was stored with another source.
    #[error("a normalised field is missing and its source text is not ASCII")]
    NotDerivable,
}
