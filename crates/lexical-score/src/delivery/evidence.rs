//! Which query tokens carry evidence of what a prompt is about, and how much of it a document
//! holds.

use std::collections::HashSet;

use serde::Serialize;

use super::function_words::{is_function_word, is_request};
use super::{EvidenceRule, Share};
use crate::prepared::Lookup;
use crate::query::{MAX_QUERY_TOKENS, QueryTokens};
use crate::score::{Scorable, explain, lexical_points};
use crate::tokenize;

/// Below this many scanned documents a token's document frequency says nothing (in a tree of
/// three memories every matching token is in a third of it), so the frequency rule is not applied.
pub const MIN_DOCUMENTS_FOR_FREQUENCY: usize = 10;

/// Which query tokens are judged uninformative. Every combination is a rule of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct UninformativeTokens {
    /// Function words of their language carry no evidence (see [`Uninformative::FunctionWord`]).
    pub function_words: bool,
    /// Verbs asking the agent for an action carry no evidence (see [`Uninformative::Request`]).
    pub requests: bool,
    /// A token found in more than this share of the scanned documents carries no evidence.
    pub common: Option<Share>,
}

impl UninformativeTokens {
    /// Every token is evidence.
    pub const NONE: Self = Self {
        function_words: false,
        requests: false,
        common: None,
    };
}

/// Why a query token carries no evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum Uninformative {
    /// A function word, a word of politeness or agreement, or a grammatical CJK bigram.
    FunctionWord,
    /// A verb asking the agent for an action (`fix`, `run`, `format`): what to do, not what
    /// about.
    Request,
    /// Found in `in_documents` of the `of_documents` scanned documents, more than the rule's
    /// share.
    Common {
        /// Documents whose scored fields contain the token.
        in_documents: usize,
        /// Documents scanned.
        of_documents: usize,
    },
}

/// One query token and whether it carries evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenVerdict {
    /// The token.
    pub token: String,
    /// Why it carries none; `None` when it is evidence.
    pub uninformative: Option<Uninformative>,
}

/// The query tokens judged once per recall, and the query of the informative ones.
#[derive(Debug, Clone)]
pub struct QueryEvidence {
    verdicts: Vec<TokenVerdict>,
    informative: QueryTokens,
    /// Informative tokens found in exactly one scanned document (empty unless counted).
    rare_tokens: Vec<String>,
}

impl QueryEvidence {
    /// Judges every token of `query` by `rule`; `docs` are the scanned documents, read only when
    /// the rule counts document frequencies (a share of common tokens, or a minimum that asks
    /// for rare ones).
    pub fn judge<D: Scorable>(query: &QueryTokens, rule: &EvidenceRule, docs: &[D]) -> Self {
        let needs_rarity = rule.minimum.needs_rarity();
        let rule = rule.uninformative;
        let frequencies =
            (rule.common.is_some() || needs_rarity).then(|| document_frequencies(query, docs));
        let common_applies = docs.len() >= MIN_DOCUMENTS_FOR_FREQUENCY;
        let verdicts: Vec<TokenVerdict> = query
            .as_slice()
            .iter()
            .enumerate()
            .map(|(position, token)| {
                let in_documents = frequencies
                    .as_ref()
                    .and_then(|counts| counts.get(position).copied())
                    .unwrap_or(0);
                let uninformative = if rule.function_words && is_function_word(token) {
                    Some(Uninformative::FunctionWord)
                } else if rule.requests && is_request(token) {
                    Some(Uninformative::Request)
                } else {
                    rule.common
                        .filter(|share| {
                            common_applies && share.exceeded_by(in_documents, docs.len())
                        })
                        .map(|_| Uninformative::Common {
                            in_documents,
                            of_documents: docs.len(),
                        })
                };
                TokenVerdict {
                    token: token.clone(),
                    uninformative,
                }
            })
            .collect();
        let mut kept = verdicts.iter().map(|v| v.uninformative.is_none());
        let informative = query.retaining(|_| kept.next().unwrap_or(false));
        let rare_tokens = frequencies.map(|counts| {
            let mut kept = verdicts.iter().map(|v| v.uninformative.is_none());
            let rare: Vec<String> = query
                .as_slice()
                .iter()
                .zip(counts)
                .filter(|_| kept.next().unwrap_or(false))
                .filter(|&(_, count)| count == 1)
                .map(|(token, _)| token.clone())
                .collect();
            rare
        });
        Self {
            verdicts,
            informative,
            rare_tokens: rare_tokens.unwrap_or_default(),
        }
    }

    /// Every query token with its verdict, in query order.
    pub fn verdicts(&self) -> &[TokenVerdict] {
        &self.verdicts
    }

    /// The informative tokens as a query of their own.
    pub fn informative(&self) -> &QueryTokens {
        &self.informative
    }

    /// How much evidence `doc` holds for the query's informative tokens.
    pub fn document<D: Scorable + ?Sized>(&self, doc: &D) -> DocumentEvidence {
        let points = lexical_points(&self.informative, doc.prepared(), Lookup::Once);
        if points == 0 {
            return DocumentEvidence::default();
        }
        let breakdown = explain(&self.informative, doc);
        let rare = [
            &breakdown.title_hits,
            &breakdown.keyword_hits,
            &breakdown.description_hits,
            &breakdown.usage_scenario_hits,
            &breakdown.body_hits,
        ]
        .into_iter()
        .flatten()
        .any(|hit| self.rare_tokens.contains(hit));
        DocumentEvidence {
            points,
            whole_word: shares_whole_word(&self.informative, doc),
            rare,
        }
    }
}

/// The evidence one document holds for a query's informative tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct DocumentEvidence {
    /// Its score counting informative tokens only, without the type boost.
    pub points: u32,
    /// Whether some informative token is a whole word of a field it was found in, or a keyword
    /// or usage scenario (a CJK bigram is always whole), not only a piece of a longer word.
    pub whole_word: bool,
    /// Whether some informative token it holds is found in no other scanned document.
    pub rare: bool,
}

/// Whether some token of `query` that `doc` matches is itself a token of a field it scored in,
/// as the tokenizer cuts that field (the gated design's notion of a confident match), or is found
/// in the document's keywords or usage scenarios, which name what the memory is about.
pub fn shares_whole_word<D: Scorable + ?Sized>(query: &QueryTokens, doc: &D) -> bool {
    let breakdown = explain(query, doc);
    if !breakdown.keyword_hits.is_empty() || !breakdown.usage_scenario_hits.is_empty() {
        return true;
    }
    let text = doc.prepared();
    let fields = [
        (&breakdown.title_hits, text.title()),
        (&breakdown.description_hits, text.description()),
        (&breakdown.body_hits, text.body_window()),
    ];
    fields.into_iter().any(|(hits, field)| {
        if hits.is_empty() {
            return false;
        }
        let words: HashSet<String> = tokenize(field).into_iter().collect();
        hits.iter().any(|hit| words.contains(hit))
    })
}

/// For each token of `query`, in order, how many of `docs` contain it in a scored field. A
/// document's index is used when it has one, and never built here: the count runs before the
/// first prompt's delivery.
pub fn document_frequencies<D: Scorable>(query: &QueryTokens, docs: &[D]) -> Vec<usize> {
    let mut counts = vec![0; query.len()];
    let mut found = [0u8; MAX_QUERY_TOKENS];
    for doc in docs {
        found.fill(0);
        doc.prepared()
            .fields_containing_each(query.terms(), &mut found, Lookup::Once);
        for (count, &fields) in counts.iter_mut().zip(&found) {
            *count += usize::from(fields != 0);
        }
    }
    counts
}
