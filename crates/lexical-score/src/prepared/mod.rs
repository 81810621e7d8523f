//! A document's scoring text, normalised once per document version.

use std::sync::OnceLock;

use bytestring::ByteString;

use crate::index::{ALL_FIELDS, FieldText, QueryTerm, TermIndex, fields_searched};
use crate::noise_markers::NoiseMarkers;
use crate::query::QueryTokens;
use crate::text::{normalize, normalize_into};

mod hits;
mod stored;

pub(crate) use hits::{BODY_POINTS, DESCRIPTION_POINTS, LexicalHits, TITLE_POINTS, lexical_hits};

pub use stored::{InvalidPreparedText, StoredPreparedText, StoredPreparedTextRef};

/// The version of everything a stored [`PreparedText`] depends on: the normaliser, the tokenizer,
/// the index and the stored form. A store of prepared texts (the persistent catalog) records it
/// and discards texts stored under any other version, so it must change with any of them.
pub const PREPARED_TEXT_VERSION: u32 = 7;

/// How many characters of the trimmed body a prompt shows, and so how many are scored.
pub const BODY_WINDOW_CHARS: usize = 1_200;

/// A document's scoring text normalised once per document version (NFKC + lowercase):
/// title, description, full body and where the 1,200-character body window ends.
/// [`PreparedText::stored`] and [`StoredPreparedText::restore`] let a persistent catalog keep it.
///
/// The window is the normalised form of the first 1,200 characters of the original body — exactly
/// the part a prompt can show — and the full body is that window followed by the normalised rest.
/// A term index of the scored fields (see the `index` module) and the presence of noise markers are
/// derived from the text when first needed, and stored with it, so loading never tokenizes again.
///
/// The index pays for itself only when a text is scored more than once: building it tokenizes
/// every field, which costs several times what searching the fields for one query's tokens does.
/// So the first score of a text read just now ([`PreparedText::score_ahead`], on the way to the
/// fast result) searches the fields unless the index is already there, and the index is built the
/// first time the text is scored for a query it was not scored ahead for, when it is stored, or by
/// [`PreparedText::build_index`]. Both ways give the same answer: the index only skips searches
/// that cannot succeed (its term table compares 56-bit hashes; see the `index` module).
///
/// Texts are shared byte strings: a restored text points into the buffer it was stored in. A
/// normalised field left out of the stored form (an ASCII source) is searched in the lowercase
/// of its source made in a reused buffer (never kept), and derived only when something reads it
/// whole.
#[derive(Debug, Clone)]
pub struct PreparedText {
    /// The title, then, when the document has keywords, a newline and its keywords one per line.
    title: Normalized,
    /// The description, then, when the document has usage scenarios, a newline and its usage
    /// scenarios one per line.
    description: Normalized,
    body: Normalized,
    /// Where the title ends in `title` (its length when there are no keywords).
    title_end: usize,
    /// Where the description ends in `description` (its length when there are no usage scenarios).
    description_end: usize,
    window_end: usize,
    /// Built on first use (see above); a restored text has it from the start.
    index: OnceLock<TermIndex>,
    /// Detected on first use: only a recall with active tools reads them.
    markers: OnceLock<NoiseMarkers>,
    /// The identity of the query scored ahead (see [`PreparedText::score_ahead`]) and what this
    /// text holds of it.
    ahead: OnceLock<(u64, LexicalHits)>,
}

/// The bytes a [`PreparedText`] holds outside its own struct (see [`PreparedText::footprint`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TextFootprint {
    /// Normalised fields that are not a share of the document's source.
    pub normalized: usize,
    /// The term index, once built.
    pub index: usize,
}

/// How a scoring pass finds the fields that hold each query token when the text has no index yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// Build the index and look there: the text is scored again, or will be.
    Indexed,
    /// Search the fields: the text may never be scored for another query.
    Once,
}

/// One normalised field.
#[derive(Debug, Clone)]
enum Normalized {
    Text(ByteString),
    /// The field of an ASCII source, whose normal form is its lowercase; made on first use.
    LowercaseOf(ByteString, OnceLock<Box<str>>),
}

impl Normalized {
    /// The field of `source`, normalised: for an ASCII source without `extra`, a share of the
    /// source whose lowercase is made only when something reads it whole; otherwise the normal
    /// form, followed by a newline and the normal form of `extra` when there is one. Also
    /// returns where the main part ends.
    fn of(source: &ByteString, extra: &str) -> (Self, usize) {
        if extra.is_empty() && source.is_ascii() {
            return (
                Self::LowercaseOf(source.clone(), OnceLock::new()),
                source.len(),
            );
        }
        let mut field = normalize(source);
        let end = field.len();
        if !extra.is_empty() {
            field.push('\n');
            normalize_into(extra, &mut field);
        }
        (Self::Text(field.into()), end)
    }

    /// The field, up to `end` bytes when given, without keeping a lowercase it does not have
    /// yet: that is made in `scratch`. For reading every field of a text once (building its
    /// index, finding its noise markers, searching it for one query).
    fn read<'a>(&'a self, end: Option<usize>, scratch: &'a mut String) -> &'a str {
        fn upto(text: &str, end: Option<usize>) -> &str {
            end.and_then(|end| text.get(..end)).unwrap_or(text)
        }
        match self {
            Self::Text(text) => upto(text, end),
            Self::LowercaseOf(_, lowered) if let Some(lowered) = lowered.get() => {
                upto(lowered, end)
            }
            Self::LowercaseOf(source, _) => {
                scratch.clear();
                scratch.push_str(upto(source, end));
                scratch.make_ascii_lowercase();
                scratch
            }
        }
    }

    /// The bytes this field holds apart from its source: the normal form, or a lowercase of an
    /// ASCII source once something read it whole (the source itself is the document's).
    fn own_bytes(&self) -> usize {
        match self {
            Self::Text(text) => text.len(),
            Self::LowercaseOf(_, lowered) => lowered.get().map_or(0, |lowered| lowered.len()),
        }
    }

    /// The length of the normalised field (an ASCII source's lowercase has its length).
    fn len(&self) -> usize {
        match self {
            Self::Text(text) | Self::LowercaseOf(text, _) => text.len(),
        }
    }

    fn get(&self) -> &str {
        match self {
            Self::Text(text) => text,
            Self::LowercaseOf(source, lowered) => {
                lowered.get_or_init(|| source.to_ascii_lowercase().into_boxed_str())
            }
        }
    }

    /// Whether the field, up to `end` bytes when given, contains `term`. A field not yet derived
    /// is searched in its source rather than derived: most fields of a loaded catalog are never
    /// searched twice, and a search is all most of them ever need.
    fn contains(&self, term: &QueryTerm, end: Option<usize>) -> bool {
        fn upto(text: &str, end: Option<usize>) -> &str {
            end.and_then(|end| text.get(..end)).unwrap_or(text)
        }
        match self {
            Self::Text(text) => term.is_in(upto(text, end)),
            Self::LowercaseOf(source, lowered) => match lowered.get() {
                Some(lowered) => term.is_in(upto(lowered, end)),
                None => term.is_in_lowercase_of(upto(source, end)),
            },
        }
    }
}

/// Two texts are equal when their fields, window, index and noise markers are; comparing builds
/// the index and markers of a text that has none yet.
impl PartialEq for PreparedText {
    fn eq(&self, other: &Self) -> bool {
        self.title.get() == other.title.get()
            && self.description.get() == other.description.get()
            && self.title_end == other.title_end
            && self.description_end == other.description_end
            && self.body() == other.body()
            && self.window_end == other.window_end
            && self.index() == other.index()
            && self.noise_markers() == other.noise_markers()
    }
}

impl Eq for PreparedText {}

impl PreparedText {
    /// Normalises a document. `body` is the trimmed body as the scanner stores it.
    pub fn new(title: &str, description: &str, body: &str) -> Self {
        Self::structured(title, "", description, "", body)
    }

    /// Normalises a document with the structured fields some agents write: `keywords` (one per
    /// line) are scored with the title's weight and `usage_scenarios` (one per line) with the
    /// description's. A query token found in the title or the keywords earns the title's points
    /// once; likewise for the description and the usage scenarios. Empty structured fields give
    /// exactly [`PreparedText::new`].
    pub fn structured(
        title: &str,
        keywords: &str,
        description: &str,
        usage_scenarios: &str,
        body: &str,
    ) -> Self {
        Self::sharing(
            &ByteString::from(title),
            keywords,
            &ByteString::from(description),
            usage_scenarios,
            &ByteString::from(body),
        )
    }

    /// [`PreparedText::structured`] for a document whose title, description and body are shared
    /// byte strings: a field with an ASCII source (and no structured part) shares the source
    /// instead of holding a normalised copy, since its normal form is its lowercase. Scores,
    /// index and stored form are those of [`PreparedText::structured`].
    pub fn sharing(
        title: &ByteString,
        keywords: &str,
        description: &ByteString,
        usage_scenarios: &str,
        body: &ByteString,
    ) -> Self {
        let (title, title_end) = Normalized::of(title, keywords);
        let (description, description_end) = Normalized::of(description, usage_scenarios);
        let (body, window_end) = if body.is_ascii() {
            let window_end = body.len().min(BODY_WINDOW_CHARS);
            (
                Normalized::LowercaseOf(body.clone(), OnceLock::new()),
                window_end,
            )
        } else {
            let split = if body.len() <= BODY_WINDOW_CHARS {
                // At most 1,200 bytes, so at most 1,200 characters.
                body.len()
            } else {
                body.char_indices()
                    .nth(BODY_WINDOW_CHARS)
                    .map_or(body.len(), |(at, _)| at)
            };
            let (shown, rest) = (&body[..split], &body[split..]);
            let mut normalized_body = String::with_capacity(body.len());
            normalize_into(shown, &mut normalized_body);
            let window_end = normalized_body.len();
            normalize_into(rest, &mut normalized_body);
            (Normalized::Text(normalized_body.into()), window_end)
        };
        Self {
            title,
            description,
            body,
            title_end,
            description_end,
            window_end,
            index: OnceLock::new(),
            markers: OnceLock::new(),
            ahead: OnceLock::new(),
        }
    }

    /// Builds the term index now if it is not built yet, so that scoring the text for later
    /// queries does not have to (see the type's documentation). Meant for idle time: after a fast
    /// result, before the next query.
    pub fn build_index(&self) {
        let _ = self.index();
    }

    /// Whether the term index is built.
    pub fn has_index(&self) -> bool {
        self.index.get().is_some()
    }

    /// The bytes this text holds outside its own struct, by part. A field that shares its
    /// document's source (see [`PreparedText::sharing`]) counts nothing here; a text restored
    /// from a store counts the bytes it shares of the store's buffer.
    ///
    /// ```
    /// use lexical_score::PreparedText;
    ///
    /// let text = PreparedText::new("Café hours", "opening times", "The café opens at 8.");
    /// assert_eq!(text.footprint().index, 0);
    /// text.build_index();
    /// assert!(text.footprint().index > 0);
    /// ```
    pub fn footprint(&self) -> TextFootprint {
        TextFootprint {
            normalized: self.title.own_bytes()
                + self.description.own_bytes()
                + self.body.own_bytes(),
            index: self.index.get().map_or(0, TermIndex::bytes),
        }
    }

    /// The term index of the scored fields, built now if it is not yet.
    fn index(&self) -> &TermIndex {
        self.index.get_or_init(|| {
            self.with_fields(Some(self.window_end), |[title, description, window]| {
                TermIndex::build([title, description, window])
            })
        })
    }

    /// Scores this text against `query` now, while it is likely still in the CPU's caches (it was
    /// just prepared or loaded), so that ranking for the same `query` later reads the points
    /// instead of fetching the text again. A text without an index is scored by searching its
    /// fields, and no index is built (see the type's documentation). Only the first query a text
    /// is scored ahead for is kept; ranking for any other query computes its points as usual.
    pub fn score_ahead(&self, query: &QueryTokens) {
        if query.id() != 0 {
            self.ahead
                .get_or_init(|| (query.id(), lexical_hits(query, self, Lookup::Once)));
        }
    }

    /// What this text holds of `query` (the lexical points, the score without the type boost,
    /// and the tokens found): as scored ahead for this very query, or computed now.
    pub(crate) fn hits_for(&self, query: &QueryTokens) -> LexicalHits {
        match self.ahead.get() {
            // Never 0: the default query is not scored ahead.
            Some(&(id, hits)) if id == query.id() => hits,
            _ => lexical_hits(query, self, Lookup::Indexed),
        }
    }

    /// The lexical points (score without the type boost) this text earns for `query`.
    #[cfg(test)]
    pub(crate) fn points_for(&self, query: &QueryTokens) -> u32 {
        self.hits_for(query).points
    }

    /// The normalised title.
    pub fn title(&self) -> &str {
        let title = self.title.get();
        title.get(..self.title_end).unwrap_or(title)
    }

    /// The normalised keywords, one per line; empty when the document has none.
    pub fn keywords(&self) -> &str {
        extra_part(self.title.get(), self.title_end)
    }

    /// The normalised description.
    pub fn description(&self) -> &str {
        let description = self.description.get();
        description
            .get(..self.description_end)
            .unwrap_or(description)
    }

    /// The normalised usage scenarios, one per line; empty when the document has none.
    pub fn usage_scenarios(&self) -> &str {
        extra_part(self.description.get(), self.description_end)
    }

    /// Whether `term`, found in the title or its keywords (`position` 0) or in the description
    /// or its usage scenarios (1), was found in the structured field only.
    pub(crate) fn found_only_in_structured_field(&self, position: usize, term: &QueryTerm) -> bool {
        let (field, end) = match position {
            0 => (&self.title, self.title_end),
            _ => (&self.description, self.description_end),
        };
        let text = field.get();
        end < text.len() && !term.is_in(text.get(..end).unwrap_or(text))
    }

    /// The normalised full body (used for noise detection, never for scoring).
    pub fn body(&self) -> &str {
        self.body.get()
    }

    /// The length of the normalised full body, without deriving it.
    pub(crate) fn body_len(&self) -> usize {
        self.body.len()
    }

    /// The normalised body window: the only part of the body that is scored.
    pub fn body_window(&self) -> &str {
        let body = self.body();
        body.get(..self.window_end).unwrap_or(body)
    }

    /// For each of `terms`, the field bits (see the `index` module) of the scored fields that
    /// contain it, written to the matching position of `found`.
    pub(crate) fn fields_containing_each(
        &self,
        terms: &[QueryTerm],
        found: &mut [u8],
        lookup: Lookup,
    ) {
        match (self.index.get(), lookup) {
            (Some(index), _) => index.fields_containing_each(self, terms, found),
            (None, Lookup::Indexed) => self.index().fields_containing_each(self, terms, found),
            (None, Lookup::Once) => self.with_fields(Some(self.window_end), |fields| {
                let fields = Searched(fields);
                for (out, term) in found.iter_mut().zip(terms) {
                    *out = fields_searched(&fields, term, ALL_FIELDS);
                }
            }),
        }
    }

    /// Which noise markers the title, description and full body contain.
    pub(crate) fn noise_markers(&self) -> NoiseMarkers {
        *self.markers.get_or_init(|| {
            self.with_fields(None, |[title, description, body]| {
                NoiseMarkers::detect([
                    title.get(..self.title_end).unwrap_or(title),
                    description
                        .get(..self.description_end)
                        .unwrap_or(description),
                    body,
                ])
            })
        })
    }

    /// Calls `read` with the normalised title (with keywords), description (with usage
    /// scenarios) and body, the body up to `body_end` when given. A field whose lowercase is not
    /// made yet is lowercased into a buffer this thread reuses, and not kept: reading every
    /// field once, as indexing, noise detection and a first search do, leaves the text as small
    /// as it was.
    fn with_fields<R>(&self, body_end: Option<usize>, read: impl FnOnce([&str; 3]) -> R) -> R {
        use std::cell::RefCell;
        thread_local! {
            static SCRATCH: RefCell<[String; 3]> = const {
                RefCell::new([String::new(), String::new(), String::new()])
            };
        }
        let mut own = None;
        SCRATCH.with(|scratch| {
            // Taken while `read` runs; a nested read (none today) gets buffers of its own.
            let mut borrowed = scratch.try_borrow_mut().ok();
            let [title, description, body] = match borrowed.as_deref_mut() {
                Some(buffers) => buffers,
                None => own.insert([String::new(), String::new(), String::new()]),
            };
            read([
                self.title.read(None, title),
                self.description.read(None, description),
                self.body.read(body_end, body),
            ])
        })
    }
}

impl FieldText for PreparedText {
    fn contains(&self, position: usize, term: &QueryTerm) -> bool {
        match position {
            0 => self.title.contains(term, None),
            1 => self.description.contains(term, None),
            _ => self.body.contains(term, Some(self.window_end)),
        }
    }
}

/// The scored fields of a text, each normalised once for a search of every query token.
struct Searched<'a>([&'a str; 3]);

impl FieldText for Searched<'_> {
    fn contains(&self, position: usize, term: &QueryTerm) -> bool {
        self.0.get(position).is_some_and(|field| term.is_in(field))
    }
}

/// The structured part of a field: what follows the newline at `end`, or nothing.
fn extra_part(field: &str, end: usize) -> &str {
    field
        .get(end + 1..)
        .filter(|_| end < field.len())
        .unwrap_or("")
}

#[cfg(test)]
mod tests;
