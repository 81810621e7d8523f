//! Scoring one document against a query, and ranking many.

use std::cmp::Reverse;
use std::time::SystemTime;

use serde::Serialize;

use crate::index::{BODY, DESCRIPTION, TITLE};
use crate::memory_type::MemoryType;
use crate::prepared::PreparedText;
use crate::query::{MAX_QUERY_TOKENS, QueryTokens};

/// Points for a query token found in the title.
const TITLE_POINTS: u32 = 4;
/// Points for a query token found in the description.
const DESCRIPTION_POINTS: u32 = 3;
/// Points for a query token found in the body window; below the title and description because a
/// body mention is weaker evidence of what the memory is about.
const BODY_POINTS: u32 = 1;

/// Anything that can be scored. (A scanner's cached document implements this.)
pub trait Scorable {
    /// The document's normalised scoring text.
    fn prepared(&self) -> &PreparedText;
    /// The document's memory type (drives the type boost only).
    fn memory_type(&self) -> MemoryType;
    /// The document's modification time (newer wins score ties).
    fn mtime(&self) -> SystemTime;
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
pub struct ScoreBreakdown {
    /// Query tokens found in the title, in query order.
    pub title_hits: Vec<String>,
    /// Query tokens found in the description, in query order.
    pub description_hits: Vec<String>,
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
    mut on_hit: impl FnMut(&'q str, Hit),
) {
    let mut found = [0u8; MAX_QUERY_TOKENS];
    text.fields_containing_each(query.terms(), &mut found);
    for (term, found) in query.terms().iter().zip(found) {
        if found != 0 {
            let hit = Hit {
                title: found & TITLE != 0,
                description: found & DESCRIPTION != 0,
                body: found & BODY != 0,
            };
            on_hit(&term.text, hit);
        }
    }
}

/// The score of one document: per query token +4 title, +3 description, +1 body window; plus the
/// type boost (≤ 2) only when at least one token matched. A document with no hit scores 0.
pub fn score<D: Scorable + ?Sized>(query: &QueryTokens, doc: &D) -> u32 {
    let mut lexical = 0;
    for_each_hit(query, doc.prepared(), |_, hit| {
        lexical += u32::from(hit.title) * TITLE_POINTS
            + u32::from(hit.description) * DESCRIPTION_POINTS
            + u32::from(hit.body) * BODY_POINTS;
    });
    if lexical == 0 {
        // The type boost rewards a likely kind of memory, not the absence of a match.
        return 0;
    }
    lexical + query.type_boost(doc.memory_type())
}

/// The same computation as [`score`], itemised; `explain(q, d).total == score(q, d)`.
pub fn explain<D: Scorable + ?Sized>(query: &QueryTokens, doc: &D) -> ScoreBreakdown {
    let mut breakdown = ScoreBreakdown {
        title_hits: Vec::new(),
        description_hits: Vec::new(),
        body_hits: Vec::new(),
        type_boost: 0,
        total: 0,
    };
    for_each_hit(query, doc.prepared(), |token, hit| {
        if hit.title {
            breakdown.title_hits.push(token.to_owned());
        }
        if hit.description {
            breakdown.description_hits.push(token.to_owned());
        }
        if hit.body {
            breakdown.body_hits.push(token.to_owned());
        }
    });
    let lexical = points(breakdown.title_hits.len(), TITLE_POINTS)
        + points(breakdown.description_hits.len(), DESCRIPTION_POINTS)
        + points(breakdown.body_hits.len(), BODY_POINTS);
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
pub fn rank<D: Scorable>(query: &QueryTokens, docs: &[D]) -> Vec<Ranked> {
    let mut matches: Vec<(Ranked, SystemTime)> = docs
        .iter()
        .enumerate()
        .filter_map(|(index, doc)| {
            let score = score(query, doc);
            (score > 0).then(|| (Ranked { index, score }, doc.mtime()))
        })
        .collect();
    sort_best_first(&mut matches);
    matches.into_iter().map(|(ranked, _)| ranked).collect()
}

/// Orders by score, then recency, then input order — never by type: an alphabetical type order
/// would put `user` last and push user memory out of the two-document fast result.
pub(crate) fn sort_best_first(matches: &mut [(Ranked, SystemTime)]) {
    matches.sort_unstable_by_key(|(ranked, mtime)| {
        (Reverse(ranked.score), Reverse(*mtime), ranked.index)
    });
}
