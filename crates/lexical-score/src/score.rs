//! Scoring one document against a query, and ranking many.

use std::cmp::Reverse;
use std::time::SystemTime;

use serde::Serialize;

use crate::index::{BODY, DESCRIPTION, QueryTerm, TITLE};
use crate::memory_type::MemoryType;
pub(crate) use crate::prepared::{BODY_POINTS, DESCRIPTION_POINTS, TITLE_POINTS};
use crate::prepared::{Lookup, PreparedText, lexical_hits};
use crate::query::{MAX_QUERY_TOKENS, QueryTokens};

/// Anything that can be scored. (A scanner's cached document implements this.)
pub trait Scorable {
    /// The document's normalised scoring text.
    fn prepared(&self) -> &PreparedText;
    /// The document's memory type (drives the type boost only).
    fn memory_type(&self) -> MemoryType;
    /// The document's modification time (newer wins score ties).
    fn mtime(&self) -> SystemTime;
}

impl<T: Scorable + ?Sized> Scorable for std::sync::Arc<T> {
    fn prepared(&self) -> &PreparedText {
        (**self).prepared()
    }
    fn memory_type(&self) -> MemoryType {
        (**self).memory_type()
    }
    fn mtime(&self) -> SystemTime {
        (**self).mtime()
    }
}

impl<T: Scorable + ?Sized> Scorable for &T {
    fn prepared(&self) -> &PreparedText {
        (**self).prepared()
    }
    fn memory_type(&self) -> MemoryType {
        (**self).memory_type()
    }
    fn mtime(&self) -> SystemTime {
        (**self).mtime()
    }
}

/// Per-field contributions of one document's score, for explaining a ranking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ScoreBreakdown {
    /// Query tokens found in the title, in query order.
    pub title_hits: Vec<String>,
    /// Query tokens found in the keywords but not the title, in query order; each earns the
    /// title's points. Left out of the serialised form when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub keyword_hits: Vec<String>,
    /// Query tokens found in the description, in query order.
    pub description_hits: Vec<String>,
    /// Query tokens found in the usage scenarios but not the description, in query order; each
    /// earns the description's points. Left out of the serialised form when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub usage_scenario_hits: Vec<String>,
    /// Query tokens found in the body window, in query order.
    pub body_hits: Vec<String>,
    /// The type boost applied (0 when nothing matched lexically).
    pub type_boost: u32,
    /// The document's score, equal to [`score`].
    pub total: u32,
}

/// One ranked match: index into the input slice and its score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Ranked {
    /// Position of the document in the slice that was ranked.
    pub index: usize,
    /// The document's score (always > 0 in a ranking).
    pub score: u32,
}

/// Which fields of a document contain one query token.
struct Hit {
    title: bool,
    description: bool,
    body: bool,
}

/// Calls `on_hit` for every query token found in at least one scored field.
fn for_each_hit<'q>(
    query: &'q QueryTokens,
    text: &PreparedText,
    lookup: Lookup,
    mut on_hit: impl FnMut(&'q QueryTerm, Hit),
) {
    let mut found = [0u8; MAX_QUERY_TOKENS];
    text.fields_containing_each(query.terms(), &mut found, lookup);
    for (term, found) in query.terms().iter().zip(found) {
        if found != 0 {
            let hit = Hit {
                title: found & TITLE != 0,
                description: found & DESCRIPTION != 0,
                body: found & BODY != 0,
            };
            on_hit(term, hit);
        }
    }
}

/// The score of one document: per query token +4 title, +3 description, +1 body window; plus the
/// type boost (≤ 2) only when at least one token matched. A document with no hit scores 0.
pub fn score<D: Scorable + ?Sized>(query: &QueryTokens, doc: &D) -> u32 {
    score_prepared(query, doc.prepared(), doc.memory_type())
}

/// [`score`] from a document's parts.
pub(crate) fn score_prepared(
    query: &QueryTokens,
    text: &PreparedText,
    memory_type: MemoryType,
) -> u32 {
    let lexical = text.hits_for(query).points;
    if lexical == 0 {
        // The type boost rewards a likely kind of memory, not the absence of a match.
        return 0;
    }
    lexical + query.type_boost(memory_type)
}

/// The score of one text without the type boost: per query token +4 title, +3 description, +1
/// body window.
pub(crate) fn lexical_points(query: &QueryTokens, text: &PreparedText, lookup: Lookup) -> u32 {
    lexical_hits(query, text, lookup).points
}

/// The same computation as [`score`], itemised; `explain(q, d).total == score(q, d)`.
pub fn explain<D: Scorable + ?Sized>(query: &QueryTokens, doc: &D) -> ScoreBreakdown {
    let mut breakdown = ScoreBreakdown {
        title_hits: Vec::new(),
        keyword_hits: Vec::new(),
        description_hits: Vec::new(),
        usage_scenario_hits: Vec::new(),
        body_hits: Vec::new(),
        type_boost: 0,
        total: 0,
    };
    // An explanation is asked for a few documents, once: not worth building an index for.
    let text = doc.prepared();
    for_each_hit(query, text, Lookup::Once, |term, hit| {
        let token = &term.text;
        if hit.title {
            if text.found_only_in_structured_field(0, term) {
                breakdown.keyword_hits.push(token.to_owned());
            } else {
                breakdown.title_hits.push(token.to_owned());
            }
        }
        if hit.description {
            if text.found_only_in_structured_field(1, term) {
                breakdown.usage_scenario_hits.push(token.to_owned());
            } else {
                breakdown.description_hits.push(token.to_owned());
            }
        }
        if hit.body {
            breakdown.body_hits.push(token.to_owned());
        }
    });
    let lexical = points(
        breakdown.title_hits.len() + breakdown.keyword_hits.len(),
        TITLE_POINTS,
    ) + points(
        breakdown.description_hits.len() + breakdown.usage_scenario_hits.len(),
        DESCRIPTION_POINTS,
    ) + points(breakdown.body_hits.len(), BODY_POINTS);
    if lexical > 0 {
        breakdown.type_boost = query.type_boost(doc.memory_type());
    }
    breakdown.total = lexical + breakdown.type_boost;
    breakdown
}

fn points(hits: usize, each: u32) -> u32 {
    // At most 64 query tokens, so this never saturates in practice.
    u32::try_from(hits).unwrap_or(u32::MAX).saturating_mul(each)
}

/// All matches (score > 0) best first: score desc, mtime desc (newer first), input index asc.
///
/// From [`PARALLEL_THRESHOLD`] documents on, the scoring is spread over the rayon thread pool (with
/// the default `parallel` feature); the result is the same.
pub fn rank<D: Scorable>(query: &QueryTokens, docs: &[D]) -> Vec<Ranked> {
    rank_from(query, docs, PARALLEL_THRESHOLD)
}

/// [`rank`], parallel from `threshold` documents on.
pub(crate) fn rank_from<D: Scorable>(
    query: &QueryTokens,
    docs: &[D],
    threshold: usize,
) -> Vec<Ranked> {
    let parts = DocParts::of(docs);
    let mut matches: Vec<(Ranked, SystemTime)> = map_chunks(&parts, threshold, |chunk| {
        chunk
            .iter()
            .filter_map(|part| part.ranked(query))
            .collect::<Vec<_>>()
    })
    .into_iter()
    .flatten()
    .collect();
    sort_best_first(&mut matches);
    matches.into_iter().map(|(ranked, _)| ranked).collect()
}

/// From this many documents on, a scoring pass is split into chunks, scored on the rayon thread
/// pool with the default `parallel` feature (one after the other without it). Below it, the pass takes a few hundred microseconds at most, about what waking the
/// other threads would cost.
pub const PARALLEL_THRESHOLD: usize = 512;
/// Documents per chunk of a parallel scoring pass: big enough to dwarf the cost of a task, small
/// enough to balance the load between threads when one of them is slowed by other work on the
/// machine (1,000 documents are 8 chunks).
const PARALLEL_CHUNK: usize = 128;

/// What the scoring pass needs of one document, gathered on the calling thread so that only
/// [`PreparedText`] (which is `Sync`) crosses threads and `Scorable` needs no `Sync` bound.
pub(crate) struct DocParts<'a> {
    pub(crate) index: usize,
    pub(crate) text: &'a PreparedText,
    pub(crate) memory_type: MemoryType,
    pub(crate) mtime: SystemTime,
}

impl<'a> DocParts<'a> {
    /// The document's ranking entry with its mtime (for tie-breaks), when it matches at all.
    pub(crate) fn ranked(&self, query: &QueryTokens) -> Option<(Ranked, SystemTime)> {
        self.scored(query).0
    }

    /// [`DocParts::ranked`], with the tokens of `query` the document holds (bit `i` for token
    /// `i`).
    pub(crate) fn scored(&self, query: &QueryTokens) -> (Option<(Ranked, SystemTime)>, u64) {
        let hits = self.text.hits_for(query);
        if hits.points == 0 {
            // The type boost rewards a likely kind of memory, not the absence of a match.
            return (None, 0);
        }
        let ranked = Ranked {
            index: self.index,
            score: hits.points + query.type_boost(self.memory_type),
        };
        (Some((ranked, self.mtime)), hits.tokens)
    }

    pub(crate) fn of<D: Scorable>(docs: &'a [D]) -> Vec<Self> {
        docs.iter()
            .enumerate()
            .map(|(index, doc)| DocParts {
                index,
                text: doc.prepared(),
                memory_type: doc.memory_type(),
                mtime: doc.mtime(),
            })
            .collect()
    }
}

/// Applies `each` to consecutive chunks of `parts` and returns the results in chunk order: one
/// chunk on the calling thread below `threshold` documents, chunks of [`PARALLEL_CHUNK`] from it
/// on, scored on the rayon pool with the `parallel` feature and one after the other on the calling
/// thread without it.
pub(crate) fn map_chunks<'a, T: Send>(
    parts: &'a [DocParts<'a>],
    threshold: usize,
    each: impl Fn(&'a [DocParts<'a>]) -> T + Sync,
) -> Vec<T> {
    if parts.len() < threshold {
        return vec![each(parts)];
    }
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        parts.par_chunks(PARALLEL_CHUNK).map(&each).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        parts.chunks(PARALLEL_CHUNK).map(&each).collect()
    }
}

/// Orders by score, then recency, then input order — never by type: an alphabetical type order
/// would put `user` last and push user memory out of the two-document fast result.
pub(crate) fn sort_best_first(matches: &mut [(Ranked, SystemTime)]) {
    matches.sort_unstable_by_key(best_first_key);
}

/// The sort key of [`sort_best_first`]: no two matches share one, as indices differ.
pub(crate) fn best_first_key(
    (ranked, mtime): &(Ranked, SystemTime),
) -> (Reverse<u32>, Reverse<SystemTime>, usize) {
    (Reverse(ranked.score), Reverse(*mtime), ranked.index)
}
