//! The frozen scorer: a fixed, ASCII-only reference scorer, exactly as
//! `docs/spec.md#the-frozen-scorer` states it, for comparisons only.
//!
//! It never changes, so that "no regression" of the shipped scorer is measured against a
//! baseline that does not move rather than asserted. Its flaws are deliberate: it only sees ASCII
//! letters and digits, gives every document with a body a point even without a lexical match, and
//! breaks ties by type name.

use std::collections::HashSet;

use crate::memory_type::MemoryType;
use crate::score::Ranked;

/// One document as the frozen scorer sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrozenDocument<'a> {
    /// The document's memory type.
    pub memory_type: MemoryType,
    /// The title, as written.
    pub title: &'a str,
    /// The description, as written.
    pub description: &'a str,
    /// The trimmed body, as written.
    pub body: &'a str,
}

/// Matches (score > 0) best first; ties by type name alphabetically, then input order.
///
/// Per unique `[a-z0-9]{3,}` token of the lowercased query: +2 when it occurs in the lowercased
/// `type title description body`, +1 when it is one of the type's keywords; then +1 for a
/// non-empty body.
pub fn rank(query: &str, docs: &[FrozenDocument<'_>]) -> Vec<Ranked> {
    let query = query.to_lowercase();
    let tokens = ascii_tokens(&query);
    let mut ranked: Vec<(Ranked, MemoryType)> = docs
        .iter()
        .enumerate()
        .filter_map(|(index, doc)| {
            let score = score(&tokens, doc);
            (score > 0).then_some((Ranked { index, score }, doc.memory_type))
        })
        .collect();
    ranked.sort_by(|(a, a_type), (b, b_type)| {
        b.score
            .cmp(&a.score)
            .then_with(|| a_type.as_str().cmp(b_type.as_str()))
            .then_with(|| a.index.cmp(&b.index))
    });
    ranked.into_iter().map(|(r, _)| r).collect()
}

fn score(tokens: &[&str], doc: &FrozenDocument<'_>) -> u32 {
    let haystack = format!(
        "{} {} {} {}",
        doc.memory_type.as_str(),
        doc.title,
        doc.description,
        doc.body
    )
    .to_lowercase();
    let keywords = doc.memory_type.keywords();
    let mut total = 0;
    for token in tokens {
        if haystack.contains(token) {
            total += 2;
        }
        if keywords.contains(token) {
            total += 1;
        }
    }
    if !doc.body.is_empty() {
        total += 1;
    }
    total
}

/// Unique runs of `[a-z0-9]` of at least three bytes, in order of first appearance.
fn ascii_tokens(lowercased: &str) -> Vec<&str> {
    let mut seen = HashSet::new();
    lowercased
        .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
        .filter(|run| run.len() >= 3 && seen.insert(*run))
        .collect()
}
