//! The one scoring pass per recall: noise filtering, ranking, model candidates, fallback, fast.

use std::cmp::Reverse;
use std::time::SystemTime;

use crate::noise::ActiveToolAliases;
use crate::query::{MAX_QUERY_TOKENS, QueryTokens};
use crate::score::{
    DocParts, PARALLEL_THRESHOLD, Ranked, Scorable, best_first_key, map_chunks, sort_best_first,
};

/// At most this many lexical matches go to the model selector.
pub const MAX_LEXICAL_CANDIDATES: usize = 180;
/// At most this many candidates go to the model selector.
pub const MAX_CANDIDATES: usize = 200;
/// Recent documents always get at least this many candidate slots, so a memory that shares no word
/// with the query can still reach the model.
pub const MIN_RECENT_SLOTS: usize = MAX_CANDIDATES - MAX_LEXICAL_CANDIDATES;
/// Size of the heuristic result, what settles without a selector or when it fails.
pub const HEURISTIC_LIMIT: usize = 5;
/// Size of the fast result: smaller than the heuristic result because it carries no model
/// judgement.
pub const FAST_LIMIT: usize = 2;

/// The result of the one scoring pass per recall.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CandidateSelection {
    /// The best matches, at most [`MAX_LEXICAL_CANDIDATES`].
    ranked: Vec<Ranked>,
    /// How many documents matched.
    matched: usize,
    candidates: Vec<usize>,
    noise_dropped: usize,
    /// For each query token, how many of the documents that were not noise hold it.
    document_frequencies: Vec<usize>,
}

impl CandidateSelection {
    /// Scores, filters noise and picks candidates. `docs` is in recall input order
    /// (project documents first, then user documents).
    ///
    /// From [`crate::PARALLEL_THRESHOLD`] documents on, the scoring is spread over the rayon
    /// thread pool (with the default `parallel` feature) in chunks whose results are joined in
    /// input order, so the selection is the same as a serial pass would make.
    pub fn select<D: Scorable>(query: &QueryTokens, docs: &[D], tools: &ActiveToolAliases) -> Self {
        Self::select_from(query, docs, tools, PARALLEL_THRESHOLD)
    }

    /// [`CandidateSelection::select`], parallel from `threshold` documents on.
    fn select_from<D: Scorable>(
        query: &QueryTokens,
        docs: &[D],
        tools: &ActiveToolAliases,
        threshold: usize,
    ) -> Self {
        let parts = DocParts::of(docs);
        let chunks = map_chunks(&parts, threshold, |chunk| {
            let mut noise_dropped = 0;
            let mut matches: Vec<(Ranked, SystemTime)> = Vec::new();
            // Documents that are neither noise nor among the lexical candidates compete on
            // recency.
            let mut others: Vec<(SystemTime, usize)> = Vec::with_capacity(chunk.len());
            let mut frequencies = TokenCounts::default();
            for part in chunk {
                if !tools.is_empty() && tools.is_noise(part.text) {
                    noise_dropped += 1;
                    continue;
                }
                let (ranked, tokens) = part.scored(query);
                matches.extend(ranked);
                frequencies.add(tokens);
                others.push((part.mtime, part.index));
            }
            (noise_dropped, matches, others, frequencies)
        });
        let mut noise_dropped = 0;
        let mut matches: Vec<(Ranked, SystemTime)> = Vec::new();
        let mut others: Vec<(SystemTime, usize)> = Vec::with_capacity(docs.len());
        let mut frequencies = TokenCounts::default();
        for (chunk_noise, chunk_matches, chunk_others, chunk_frequencies) in chunks {
            noise_dropped += chunk_noise;
            matches.extend(chunk_matches);
            others.extend(chunk_others);
            frequencies.merge(&chunk_frequencies);
        }
        let matched = matches.len();
        // Only the best matches are ever used: put them first, then sort just those.
        if matches.len() > MAX_LEXICAL_CANDIDATES {
            matches.select_nth_unstable_by_key(MAX_LEXICAL_CANDIDATES, best_first_key);
            matches.truncate(MAX_LEXICAL_CANDIDATES);
        }
        sort_best_first(&mut matches);
        let ranked: Vec<Ranked> = matches.into_iter().map(|(ranked, _)| ranked).collect();

        let lexical = ranked.as_slice();
        let recent_slots = MAX_CANDIDATES - lexical.len();
        // Matches ranked below the lexical cut stay eligible as recent documents.
        let mut is_lexical = vec![false; docs.len()];
        for r in lexical {
            if let Some(flag) = is_lexical.get_mut(r.index) {
                *flag = true;
            }
        }
        others.retain(|&(_, index)| !is_lexical.get(index).copied().unwrap_or(false));
        let recency = |&(mtime, index): &(SystemTime, usize)| (Reverse(mtime), index);
        if others.len() > recent_slots {
            others.select_nth_unstable_by_key(recent_slots, recency);
            others.truncate(recent_slots);
        }
        others.sort_unstable_by_key(recency);

        let mut candidates = Vec::with_capacity(lexical.len() + others.len());
        let mut lexical_iter = lexical.iter().map(|r| r.index);
        let mut recent_iter = others.iter().map(|&(_, index)| index);
        loop {
            let l = lexical_iter.next();
            let r = recent_iter.next();
            if l.is_none() && r.is_none() {
                break;
            }
            candidates.extend(l);
            candidates.extend(r);
        }

        Self {
            ranked,
            matched,
            candidates,
            noise_dropped,
            document_frequencies: frequencies.for_query(query),
        }
    }

    /// The best lexical matches after noise filtering, best first: at most
    /// [`MAX_LEXICAL_CANDIDATES`], the ones the model selector can see. (Ranking every match, as
    /// [`crate::rank`] does, costs a full sort that no result needs.)
    pub fn ranked(&self) -> &[Ranked] {
        &self.ranked
    }

    /// How many documents matched the query lexically after noise filtering.
    pub fn matched(&self) -> usize {
        self.matched
    }

    /// Indices into `docs` of the ≤ 200 model candidates, interleaved l0, r0, l1, r1, … then
    /// leftover recent ones (≤ 180 lexical; recency fill; ≥ 20 recent slots when lexical is full).
    pub fn candidates(&self) -> &[usize] {
        &self.candidates
    }

    /// The heuristic result: the lexical top 5, what settles without a selector or when it fails.
    pub fn heuristic(&self) -> &[Ranked] {
        self.ranked.get(..HEURISTIC_LIMIT).unwrap_or(&self.ranked)
    }

    /// Lexical top 2 (the fast result); empty when nothing matched.
    pub fn fast(&self) -> &[Ranked] {
        self.ranked.get(..FAST_LIMIT).unwrap_or(&self.ranked)
    }

    /// Number of documents dropped as active-tool noise.
    pub fn noise_dropped(&self) -> usize {
        self.noise_dropped
    }

    /// For each token of the query, in order, how many of the documents scored (every document
    /// but the noise) hold it in a scored field: counted by the scoring pass itself, so that
    /// judging a token common or rare (see [`crate::delivery::QueryEvidence::with_frequencies`]) reads no
    /// document again.
    pub fn document_frequencies(&self) -> &[usize] {
        &self.document_frequencies
    }
}

/// Per query token, how many documents hold it.
#[derive(Debug, Clone)]
struct TokenCounts([usize; MAX_QUERY_TOKENS]);

impl Default for TokenCounts {
    fn default() -> Self {
        Self([0; MAX_QUERY_TOKENS])
    }
}

impl TokenCounts {
    /// Counts one document holding the tokens whose bits are set in `tokens`.
    fn add(&mut self, mut tokens: u64) {
        while tokens != 0 {
            let position = tokens.trailing_zeros() as usize;
            if let Some(count) = self.0.get_mut(position) {
                *count += 1;
            }
            tokens &= tokens - 1;
        }
    }

    fn merge(&mut self, other: &Self) {
        for (count, more) in self.0.iter_mut().zip(other.0) {
            *count += more;
        }
    }

    /// The counts of `query`'s tokens, in order.
    fn for_query(&self, query: &QueryTokens) -> Vec<usize> {
        self.0.iter().copied().take(query.len()).collect()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;
    use crate::score::rank_from;
    use crate::test_support::Doc;
    use crate::{MemoryType, PreparedText};

    const WORDS: &[&str] = &[
        "deploy",
        "rollback",
        "owner",
        "api docs",
        "tool usage",
        "kubectl",
        "grafana",
        "release",
        "記憶検索",
        "развёртывание",
        "ticket",
        "user",
        "preference",
        "workaround",
        "mcp tool",
    ];

    /// Documents with few distinct words, so many tie on score and mtime and the merge order
    /// decides the ranking.
    fn documents(count: usize) -> Vec<Doc> {
        let mut state = 17u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            usize::try_from(state >> 33).unwrap()
        };
        (0..count)
            .map(|_| {
                let mut words = |n: usize| {
                    (0..n)
                        .map(|_| WORDS[next() % WORDS.len()])
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                let (title, description, body) = (words(2), words(4), words(12));
                Doc {
                    text: PreparedText::new(&title, &description, &body),
                    memory_type: MemoryType::ALL[next() % 4],
                    mtime: SystemTime::UNIX_EPOCH + Duration::from_secs((next() % 50) as u64),
                }
            })
            .collect()
    }

    #[test]
    fn parallel_scoring_selects_and_ranks_exactly_like_a_serial_pass() {
        let docs = documents(6_000);
        let tools = ActiveToolAliases::from_tool_names(&["mcp__grafana__query", "kubectl"]);
        for query in [
            "deploy owner",
            "grafana user preference",
            "記憶 release ticket",
            "nothing",
        ] {
            let query = QueryTokens::new(query);
            for tools in [&ActiveToolAliases::default(), &tools] {
                let serial = CandidateSelection::select_from(&query, &docs, tools, usize::MAX);
                let parallel = CandidateSelection::select_from(&query, &docs, tools, 0);
                assert_eq!(parallel, serial);
                assert_eq!(CandidateSelection::select(&query, &docs, tools), serial);
            }
            assert_eq!(
                rank_from(&query, &docs, 0),
                rank_from(&query, &docs, usize::MAX)
            );
        }
    }

    #[test]
    fn the_scoring_pass_counts_each_tokens_documents_as_a_separate_count_does() {
        let docs = documents(2_000);
        for query in ["deploy owner nothing", "記憶 release ticket", "nothing"] {
            let query = QueryTokens::new(query);
            let expected = crate::delivery::document_frequencies(&query, &docs);
            for threshold in [0, usize::MAX] {
                let selection = CandidateSelection::select_from(
                    &query,
                    &docs,
                    &ActiveToolAliases::default(),
                    threshold,
                );
                assert_eq!(selection.document_frequencies(), expected);
            }
        }
    }

    #[test]
    fn noise_is_left_out_of_the_document_frequencies() {
        let docs = documents(300);
        let tools = ActiveToolAliases::from_tool_names(&["mcp__grafana__query", "kubectl"]);
        let query = QueryTokens::new("grafana");
        let selection = CandidateSelection::select(&query, &docs, &tools);
        let all = crate::delivery::document_frequencies(&query, &docs)[0];
        assert!(selection.noise_dropped() > 0);
        assert!(selection.document_frequencies()[0] < all);
    }
}
