//! The one scoring pass per recall: noise filtering, ranking, model candidates, fallback, fast.

use std::cmp::Reverse;
use std::time::SystemTime;

use crate::noise::ActiveToolAliases;
use crate::query::QueryTokens;
use crate::score::{Ranked, Scorable, score, sort_best_first};

/// At most this many lexical matches go to the model selector.
pub const MAX_LEXICAL_CANDIDATES: usize = 180;
/// At most this many candidates go to the model selector.
pub const MAX_CANDIDATES: usize = 200;
/// Recent documents always get at least this many candidate slots, so a memory that shares no word
/// with the query can still reach the model.
pub const MIN_RECENT_SLOTS: usize = MAX_CANDIDATES - MAX_LEXICAL_CANDIDATES;
/// Size of the heuristic result used when the model selector fails.
pub const FALLBACK_LIMIT: usize = 5;
/// Size of the fast result: smaller than the fallback because it carries no model judgement.
pub const FAST_LIMIT: usize = 2;

/// The result of the one scoring pass per recall.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CandidateSelection {
    ranked: Vec<Ranked>,
    candidates: Vec<usize>,
    noise_dropped: usize,
}

impl CandidateSelection {
    /// Scores, filters noise and picks candidates. `docs` is in recall input order
    /// (project documents first, then user documents).
    pub fn select<D: Scorable>(query: &QueryTokens, docs: &[D], tools: &ActiveToolAliases) -> Self {
        let mut noise_dropped = 0;
        let mut matches: Vec<(Ranked, SystemTime)> = Vec::new();
        // Documents that are neither noise nor among the lexical candidates compete on recency.
        let mut others: Vec<(SystemTime, usize)> = Vec::with_capacity(docs.len());
        for (index, doc) in docs.iter().enumerate() {
            if !tools.is_empty() && tools.is_noise(doc.prepared()) {
                noise_dropped += 1;
                continue;
            }
            let score = score(query, doc);
            let mtime = doc.mtime();
            if score > 0 {
                matches.push((Ranked { index, score }, mtime));
            }
            others.push((mtime, index));
        }
        sort_best_first(&mut matches);
        let ranked: Vec<Ranked> = matches.into_iter().map(|(ranked, _)| ranked).collect();

        let lexical = ranked.get(..MAX_LEXICAL_CANDIDATES).unwrap_or(&ranked);
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
            candidates,
            noise_dropped,
        }
    }

    /// All lexical matches after noise filtering, best first (not truncated).
    pub fn ranked(&self) -> &[Ranked] {
        &self.ranked
    }

    /// Indices into `docs` of the ≤ 200 model candidates, interleaved l0, r0, l1, r1, … then
    /// leftover recent ones (≤ 180 lexical; recency fill; ≥ 20 recent slots when lexical is full).
    pub fn candidates(&self) -> &[usize] {
        &self.candidates
    }

    /// Lexical top 5 (the selector-failure fallback).
    pub fn fallback(&self) -> &[Ranked] {
        self.ranked.get(..FALLBACK_LIMIT).unwrap_or(&self.ranked)
    }

    /// Lexical top 2 (the fast result); empty when nothing matched.
    pub fn fast(&self) -> &[Ranked] {
        self.ranked.get(..FAST_LIMIT).unwrap_or(&self.ranked)
    }

    /// Number of documents dropped as active-tool noise.
    pub fn noise_dropped(&self) -> usize {
        self.noise_dropped
    }
}
