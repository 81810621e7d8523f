//! What one prepared text holds of a query: the points of its lexical hits and the tokens it
//! holds, in one pass.

use super::{Lookup, PreparedText};
use crate::index::{BODY, DESCRIPTION, TITLE};
use crate::query::{MAX_QUERY_TOKENS, QueryTokens};

/// Points for a query token found in the title.
pub(crate) const TITLE_POINTS: u32 = 4;
/// Points for a query token found in the description.
pub(crate) const DESCRIPTION_POINTS: u32 = 3;
/// Points for a query token found in the body window; below the title and description because a
/// body mention is weaker evidence of what the memory is about.
pub(crate) const BODY_POINTS: u32 = 1;

/// What one text holds of a query: its lexical points and which tokens it holds at all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LexicalHits {
    /// The score without the type boost.
    pub(crate) points: u32,
    /// Bit `i` is set when the query's token `i` is found in some scored field (a query has at
    /// most [`crate::query::MAX_QUERY_TOKENS`], 64, tokens).
    pub(crate) tokens: u64,
}

/// The lexical points of `text` for `query` (`crate::score::lexical_points`), with the tokens
/// found, in one pass.
pub(crate) fn lexical_hits(
    query: &QueryTokens,
    text: &PreparedText,
    lookup: Lookup,
) -> LexicalHits {
    let mut hits = LexicalHits::default();
    let mut found = [0u8; MAX_QUERY_TOKENS];
    text.fields_containing_each(query.terms(), &mut found, lookup);
    for (position, &fields) in found.iter().enumerate().take(query.len()) {
        if fields != 0 {
            hits.points += u32::from(fields & TITLE != 0) * TITLE_POINTS
                + u32::from(fields & DESCRIPTION != 0) * DESCRIPTION_POINTS
                + u32::from(fields & BODY != 0) * BODY_POINTS;
            hits.tokens |= 1 << position;
        }
    }
    hits
}
