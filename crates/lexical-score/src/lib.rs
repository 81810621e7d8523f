//! The deterministic, multilingual lexical scorer behind memory recall.
//!
//! It tokenizes queries and documents (NFKC, lowercase, letter runs for alphabetic scripts,
//! code-point bigrams for CJK), scores documents by title, description and body-window matches,
//! and picks the candidates handed to the model selector, the fallback top five and the fast top
//! two, all from one scoring pass.
//!
//! It knows nothing of files, the network or time beyond the `mtime` a document reports: anything
//! that can show a title, description, body, type and mtime can be scored.
//!
//! # Example
//!
//! Tokenize a query, then score and rank a few documents with it:
//!
//! ```
//! use std::time::SystemTime;
//!
//! use lexical_score::{MemoryType, PreparedText, QueryTokens, Scorable, rank, score};
//!
//! struct Note {
//!     text: PreparedText,
//!     memory_type: MemoryType,
//! }
//!
//! impl Scorable for Note {
//!     fn prepared(&self) -> &PreparedText {
//!         &self.text
//!     }
//!     fn memory_type(&self) -> MemoryType {
//!         self.memory_type
//!     }
//!     fn mtime(&self) -> SystemTime {
//!         SystemTime::UNIX_EPOCH
//!     }
//! }
//!
//! let note = |title: &str, description: &str, body: &str| Note {
//!     text: PreparedText::new(title, description, body),
//!     memory_type: MemoryType::Project,
//! };
//! let notes = [
//!     note("Grafana board", "Checkout latency dashboard", "https://grafana.example/d/checkout"),
//!     note("Deploy checklist", "Steps to ship a release", "Run the smoke tests, then tag it."),
//!     note("Rollback", "Undo a bad release", "Revert the tag and redeploy."),
//! ];
//!
//! let query = QueryTokens::new("How do I ship the release?");
//! assert_eq!(query.as_slice(), ["how", "ship", "the", "release"]);
//!
//! // The checklist matches `ship` and `release`; the rollback only `release`.
//! let ranked = rank(&query, &notes);
//! let order: Vec<usize> = ranked.iter().map(|r| r.index).collect();
//! assert_eq!(order, [1, 2]);
//! assert_eq!(ranked[0].score, score(&query, &notes[1]));
//! ```
//!
//! The rules are `docs/spec.md#tokens` and `docs/spec.md#scores`; what they leave open is decided
//! here:
//! - Scoring is substring-based on normalised text, so `owner` matches inside `ownership`.
//! - Scripts without word separators outside the CJK class (Thai, Lao, Khmer, Myanmar) are split
//!   into words by ICU4X's word segmenter with its dictionaries for these four scripts (baked
//!   into the crate by `cargo xtask icu-data`); each word of at least two code points is a token.
//!   Within a run of letters, only the stretches of those scripts are segmented (`ภาษาthai` is
//!   `ภาษา` and `thai`); runs of every other script are whole tokens, and CJK keeps its bigrams.
//!   The segmenter is set up on the first such stretch a process meets.
//! - Lowercasing is Rust's `str::to_lowercase`, which writes a word-final Greek sigma as `ς`.
//! - A document's body window is the normalised form of its first 1,200 original characters, so
//!   the scored text is exactly what a prompt can show even when NFKC changes lengths.
//! - Each document carries a small index (its own terms and a trigram signature) so scoring rarely
//!   scans text; term equality there is decided by 56 bits of a 64-bit hash. The index is built
//!   on demand, not when a text is prepared: scoring a text ahead (the first score of a text just
//!   read) searches its fields, which costs a fraction of tokenizing them; scoring it for another
//!   query, storing it or [`PreparedText::build_index`] builds the index.
//! - A normalised field whose source is ASCII is searched by lowercasing it into a buffer each
//!   thread reuses, so the search itself is the same memmem search as for any other field.
//! - A [`PreparedText`] has a stored form with its index and noise markers (the signature, one
//!   nibble of field bits per slot, and the term table exactly as it sits in memory), so a
//!   persistent store loads it without tokenizing or hashing. A normalised field whose source is
//!   ASCII is left out: a search looks for its token in the source's lowercase (see above), and the
//!   field is derived only when something reads it whole. Restoring shares the buffer the stored
//!   form was decoded from ([`Bytes`], [`ByteString`]) instead of copying it. Loading checks every
//!   part, and [`PREPARED_TEXT_VERSION`] names the stored form and the tokenizer it came from.
//! - Active-tool aliases match as whole words only (see [`ActiveToolAliases`]).
//! - A scoring pass over at least [`PARALLEL_THRESHOLD`] (512) documents is split into chunks of
//!   128, scored on the rayon thread pool with the default `parallel` feature (one after the other
//!   on the calling thread without it) and joined in input order, so `select` and `rank` return
//!   exactly what a serial pass would; below it, one thread does it all. `Scorable` needs no
//!   `Sync` bound: each document's prepared text, type and mtime are gathered on the calling
//!   thread first.
//! - The CJK class follows script extensions literally, so the combining overline (U+0305) and
//!   dot below (U+0323), which list Katakana, are CJK too.
//!
//! # Features
//!
//! - `parallel` (default): large scoring passes use the rayon thread pool.
//! - `measurement`: `measurement`, the reference scorers the evaluation compares against.
//! - `class-table`: `class_table`, the generator of the character class table.
//! - `fuzzing`: `fuzzing`, entry points for the fuzz targets.

// `deny`, not `forbid`: the segmenter's generated ICU4X data (`text::segmenter`) is the one
// module allowed `unsafe`, in the unchecked constructors ICU4X's exporter writes.
#![deny(unsafe_code)]

mod candidates;
pub mod delivery;
mod index;
mod memory_type;
mod noise;
mod noise_markers;
mod prepared;
mod query;
mod score;
mod text;

#[cfg(test)]
mod test_support;

/// The shared bytes a stored prepared text is restored from: [`StoredPreparedText::restore`]
/// takes the buffer that holds it.
pub use bytes::Bytes;
/// The shared string type of a document's fields that [`PreparedText::sharing`] takes.
pub use bytestring::ByteString;
pub use candidates::{
    CandidateSelection, FAST_LIMIT, HEURISTIC_LIMIT, MAX_CANDIDATES, MAX_LEXICAL_CANDIDATES,
    MIN_RECENT_SLOTS,
};
pub use memory_type::{MemoryType, UnknownMemoryType};
pub use noise::ActiveToolAliases;
pub use prepared::{
    BODY_WINDOW_CHARS, InvalidPreparedText, PREPARED_TEXT_VERSION, PreparedText,
    StoredPreparedText, StoredPreparedTextRef, TextFootprint,
};
pub use query::{MAX_QUERY_TOKENS, QueryTokens, tokenize};
pub use score::{PARALLEL_THRESHOLD, Ranked, Scorable, ScoreBreakdown, explain, rank, score};

/// Whether this process has set up the word segmenter of Thai, Lao, Khmer and Myanmar text. It is
/// set up the first time a query or document with a run of those scripts is tokenized, and never
/// in a process that sees none.
pub fn word_segmenter_is_loaded() -> bool {
    text::segmenter_is_set_up()
}

/// The scorers the evaluation measures the shipped one against; not part of the main API.
#[cfg(feature = "measurement")]
pub mod measurement {
    pub mod frozen;

    /// The unsegmented baseline, for comparisons only (a column of the evaluation; see
    /// `docs/spec.md#the-unsegmented-baseline`): runs of Thai, Lao, Khmer and Myanmar are not
    /// segmented but stay whole tokens. Documents scored with these rules are prepared without
    /// keywords and usage scenarios.
    pub mod unsegmented {
        use crate::QueryTokens;
        use crate::text::Scan;

        /// The query tokens of `query` under the unsegmented baseline's rules.
        pub fn query_tokens(query: &str) -> QueryTokens {
            QueryTokens::scanned(query, Scan::Unsegmented)
        }
    }
}

/// The generator of the character class table (`src/text/class_table.rs`), for
/// `cargo xtask class-table`; not part of the API.
#[cfg(feature = "class-table")]
pub mod class_table {
    use std::path::PathBuf;

    /// The source of the class table file as the Unicode tables of this build give it.
    pub fn source() -> String {
        crate::text::class_table_source()
    }

    /// Where the class table file sits in the source tree.
    pub fn path() -> PathBuf {
        PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src/text/class_table.rs"
        ))
    }
}

/// Entry points for the fuzz targets under `fuzz/`; not part of the API.
#[cfg(feature = "fuzzing")]
pub mod fuzzing {
    /// The tokens of `normalized` (with their byte offsets) from the ASCII scanner; `None` when
    /// the text is not ASCII, which that scanner never sees.
    pub fn ascii_scanner_tokens(normalized: &str) -> Option<Vec<(usize, String)>> {
        normalized
            .is_ascii()
            .then(|| collect(|emit| crate::text::for_each_ascii_token(normalized, &mut { emit })))
    }

    /// The tokens of `normalized` (with their byte offsets) from the general scanner.
    pub fn general_scanner_tokens(normalized: &str) -> Vec<(usize, String)> {
        collect(|emit| {
            crate::text::for_each_general_token(normalized, crate::text::Scan::Tokens, &mut {
                emit
            });
        })
    }

    /// The normalised form of `text`, as queries and documents get it.
    pub fn normalize(text: &str) -> String {
        crate::text::normalize(text)
    }

    fn collect(scan: impl FnOnce(&mut dyn FnMut(usize, &str))) -> Vec<(usize, String)> {
        let mut tokens = Vec::new();
        scan(&mut |at, token| tokens.push((at, token.to_owned())));
        tokens
    }
}
