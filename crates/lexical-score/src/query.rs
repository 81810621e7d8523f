//! Query tokens: unique, bounded, and keeping both ends of a long query.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::index::QueryTerm;
use crate::memory_type::MemoryType;
use crate::text::{Scan, for_each_token, is_cjk, normalize, scan};

pub use crate::index::MAX_QUERY_TOKENS;

/// How many distinct tokens are kept from the start of the query; the rest of the budget keeps the
/// most recently seen ones, so a long query keeps its opening words and its closing words.
const HEAD_TOKENS: usize = MAX_QUERY_TOKENS / 2;

/// The type boost never exceeds this, so a keyword-stuffed query cannot outweigh real matches.
const MAX_TYPE_BOOST: u32 = 2;

/// The identity of the next query made in this process; 0 is left to the empty default query.
static NEXT_QUERY_ID: AtomicU64 = AtomicU64::new(1);

/// Tokenizes any text (documents and queries alike): NFKC, lowercase, runs, CJK bigrams.
/// Returns every token in text order, duplicates kept. Used for snapshots and debugging.
pub fn tokenize(text: &str) -> Vec<String> {
    let normalized = normalize(text);
    let mut tokens = Vec::new();
    for_each_token(&normalized, |token| tokens.push(token.to_owned()));
    tokens
}

/// The unique, bounded (≤ 64: first 32 distinct + last 32 distinct, tail refreshing) query tokens.
///
/// [`QueryTokens::as_slice`] lists the first 32 distinct tokens in order of first appearance, then
/// the tail from least to most recently seen: a token seen again after the head is full moves to
/// the newest tail position, and the oldest tail token is dropped when the tail overflows.
///
/// Each query made by [`QueryTokens::new`] has an identity of its own, shared only with its
/// clones, so that a score computed ahead for it (see [`crate::PreparedText::score_ahead`]) is
/// never taken for another query's. Equality compares the tokens, not the identity.
#[derive(Debug, Clone, Default)]
pub struct QueryTokens {
    /// Unique per [`QueryTokens::new`] call in this process; 0 for the default (empty) query.
    id: u64,
    tokens: Vec<String>,
    /// The same tokens prepared for document index look-ups.
    terms: Vec<QueryTerm>,
    /// Type boost per memory type, indexed like [`MemoryType::ALL`].
    type_boost: [u32; 4],
}

impl PartialEq for QueryTokens {
    fn eq(&self, other: &Self) -> bool {
        // `terms` and `type_boost` are derived from `tokens`.
        self.tokens == other.tokens
    }
}

impl Eq for QueryTokens {}

impl QueryTokens {
    /// Normalises and tokenizes `query`, keeping at most [`MAX_QUERY_TOKENS`] distinct tokens.
    pub fn new(query: &str) -> Self {
        Self::scanned(query, Scan::Tokens)
    }

    /// [`QueryTokens::new`] with the tokens `mode` gives.
    pub(crate) fn scanned(query: &str, mode: Scan) -> Self {
        let normalized = normalize(query);
        let mut head: Vec<&str> = Vec::with_capacity(HEAD_TOKENS);
        let mut head_set: HashSet<&str> = HashSet::with_capacity(HEAD_TOKENS);
        let mut tail: Vec<&str> = Vec::with_capacity(MAX_QUERY_TOKENS - HEAD_TOKENS + 1);
        scan(&normalized, mode, |_, token| {
            if head_set.contains(token) {
                return;
            }
            if head.len() < HEAD_TOKENS {
                head.push(token);
                head_set.insert(token);
                return;
            }
            if let Some(seen) = tail.iter().position(|t| *t == token) {
                tail.remove(seen);
            }
            tail.push(token);
            if tail.len() > MAX_QUERY_TOKENS - HEAD_TOKENS {
                tail.remove(0);
            }
        });

        let tokens: Vec<String> = head.into_iter().chain(tail).map(str::to_owned).collect();
        let terms = tokens
            .iter()
            .map(|t| QueryTerm::new(t.clone(), t.chars().next().is_some_and(is_cjk)))
            .collect();
        let mut type_boost = [0; 4];
        for (boost, memory_type) in type_boost.iter_mut().zip(MemoryType::ALL) {
            let keywords = memory_type.keywords();
            let hits = tokens
                .iter()
                .filter(|t| keywords.contains(&t.as_str()))
                .count();
            *boost = u32::try_from(hits).unwrap_or(u32::MAX).min(MAX_TYPE_BOOST);
        }
        Self {
            id: NEXT_QUERY_ID.fetch_add(1, Ordering::Relaxed),
            tokens,
            terms,
            type_boost,
        }
    }

    /// The tokens of this query that `keep` accepts, in order, as a query of their own with
    /// this query's type boost.
    pub(crate) fn retaining(&self, mut keep: impl FnMut(&str) -> bool) -> Self {
        let (tokens, terms) = self
            .tokens
            .iter()
            .zip(&self.terms)
            .filter(|(token, _)| keep(token))
            .map(|(token, term)| (token.clone(), term.clone()))
            .unzip();
        Self {
            id: NEXT_QUERY_ID.fetch_add(1, Ordering::Relaxed),
            tokens,
            terms,
            type_boost: self.type_boost,
        }
    }

    /// This query's identity (see the type's documentation); 0 for the default query.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The kept tokens: head in order of first appearance, then tail from oldest to newest.
    pub fn as_slice(&self) -> &[String] {
        &self.tokens
    }

    /// Whether the query has no token at all (nothing can match).
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Number of kept tokens (at most [`MAX_QUERY_TOKENS`]).
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// The tokens prepared for document index look-ups.
    pub(crate) fn terms(&self) -> &[QueryTerm] {
        &self.terms
    }

    /// The type boost a matching document of `memory_type` receives.
    pub(crate) fn type_boost(&self, memory_type: MemoryType) -> u32 {
        let slot = MemoryType::ALL
            .iter()
            .position(|t| *t == memory_type)
            .unwrap_or(0);
        self.type_boost.get(slot).copied().unwrap_or(0)
    }
}
