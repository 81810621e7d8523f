//! Which query tokens carry evidence of what a prompt is about, and how much of it a document
//! holds.

use std::collections::HashSet;

use serde::Serialize;

use super::background::Zipf;
use super::function_words::{is_function_word, is_request};
use super::{EvidenceRule, Share};
use crate::prepared::Lookup;
use crate::query::{MAX_QUERY_TOKENS, QueryTokens};
use crate::score::{BODY_POINTS, DESCRIPTION_POINTS, Scorable, TITLE_POINTS, lexical_points};
use crate::text::for_each_token;

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
    /// How tokens common in ordinary text (see [`Zipf`]) count, in every tree.
    pub background: Option<Background>,
}

/// How a token common in ordinary text counts, whatever the memory tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Background {
    /// A token at least this common carries no evidence.
    Uninformative(Zipf),
    /// A token at least this common is evidence only beside another: a document holding no
    /// rarer informative token and only one of these is not delivered (`code` alone is not
    /// enough, `code review` is).
    NotAlone(Zipf),
}

impl UninformativeTokens {
    /// Every token is evidence.
    pub const NONE: Self = Self {
        function_words: false,
        requests: false,
        common: None,
        background: None,
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
    /// At least as common in ordinary text as the rule allows.
    Background {
        /// Its frequency in ordinary text.
        zipf: Zipf,
    },
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

/// How a document's evidence for the informative tokens is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Measure {
    /// The scorer's own points: a token found anywhere in a field counts, inside a longer word
    /// too (`how` inside "show", `back` inside "Feedback").
    Substring,
    /// A token counts in a field only when it is one of the field's words, or the same word
    /// with an ending of at most three letters (`test` and `tests`, `deploy` and `deployed`).
    Words,
    /// As [`Measure::Words`], each token weighted by how few scanned documents hold it
    /// (`ln((n + 1) / df)`, the inverse document frequency): a word one memory holds says more
    /// than a word most of them hold. Trees smaller than [`MIN_DOCUMENTS_FOR_FREQUENCY`] weigh
    /// every token alike.
    RareWords,
}

/// A token's weight when every token weighs the same: one, in hundredths.
const FLAT_WEIGHT: u32 = 100;

/// The longest ending that still makes two words the same word inflected.
const MAX_ENDING: usize = 3;

/// The shortest word whose inflections count as the same word.
const MIN_STEM: usize = 3;

/// The query tokens judged once per recall, and the query of the informative ones.
#[derive(Debug, Clone)]
pub struct QueryEvidence {
    verdicts: Vec<TokenVerdict>,
    informative: QueryTokens,
    measure: Measure,
    /// Per informative token: its weight in hundredths, and whether a single scanned document
    /// holds it.
    weights: Vec<u32>,
    rare: Vec<bool>,
    /// Per informative token: whether it is evidence only beside another
    /// ([`Background::NotAlone`]).
    everyday: Vec<bool>,
}

impl QueryEvidence {
    /// Judges every token of `query` by `rule`; `docs` are the scanned documents, read only when
    /// the rule counts document frequencies (a share of common tokens, a minimum that asks for
    /// rare ones, or weights by rarity).
    pub fn judge<D: Scorable>(query: &QueryTokens, rule: &EvidenceRule, docs: &[D]) -> Self {
        let counts_frequency = rule.uninformative.common.is_some()
            || rule.minimum.needs_rarity()
            || rule.measure == Measure::RareWords;
        let frequencies = counts_frequency.then(|| document_frequencies(query, docs));
        Self::with_frequencies(query, rule, frequencies.as_deref(), docs.len())
    }

    /// As [`QueryEvidence::judge`], with each token's document frequency already counted
    /// (`frequencies[i]` scanned documents of `scanned` hold token `i`), as a scoring pass that
    /// visited every document can count it.
    pub fn with_frequencies(
        query: &QueryTokens,
        rule: &EvidenceRule,
        frequencies: Option<&[usize]>,
        scanned: usize,
    ) -> Self {
        let tokens = rule.uninformative;
        let enough_documents = scanned >= MIN_DOCUMENTS_FOR_FREQUENCY;
        let frequency = |position: usize| {
            frequencies
                .and_then(|counts| counts.get(position).copied())
                .unwrap_or(0)
        };
        let verdicts: Vec<TokenVerdict> = query
            .as_slice()
            .iter()
            .enumerate()
            .map(|(position, token)| {
                let in_documents = frequency(position);
                let uninformative = if tokens.function_words && is_function_word(token) {
                    Some(Uninformative::FunctionWord)
                } else if tokens.requests && is_request(token) {
                    Some(Uninformative::Request)
                } else if let Some(Background::Uninformative(most)) = tokens.background
                    && let Some(zipf) = Zipf::of(token).filter(|&zipf| zipf >= most)
                {
                    Some(Uninformative::Background { zipf })
                } else {
                    tokens
                        .common
                        .filter(|share| {
                            enough_documents && share.exceeded_by(in_documents, scanned)
                        })
                        .map(|_| Uninformative::Common {
                            in_documents,
                            of_documents: scanned,
                        })
                };
                TokenVerdict {
                    token: token.clone(),
                    uninformative,
                }
            })
            .collect();
        let kept: Vec<usize> = verdicts
            .iter()
            .enumerate()
            .filter(|(_, v)| v.uninformative.is_none())
            .map(|(position, _)| position)
            .collect();
        let mut informative_flags = verdicts.iter().map(|v| v.uninformative.is_none());
        let informative = query.retaining(|_| informative_flags.next().unwrap_or(false));
        let weights = kept
            .iter()
            .map(|&position| match (rule.measure, frequency(position)) {
                (Measure::RareWords, df) if enough_documents && df > 0 => {
                    rarity_weight(df, scanned)
                }
                _ => FLAT_WEIGHT,
            })
            .collect();
        let rare = kept
            .iter()
            .map(|&position| frequencies.is_some() && frequency(position) == 1)
            .collect();
        let everyday = kept
            .iter()
            .map(|&position| match tokens.background {
                Some(Background::NotAlone(most)) => query
                    .as_slice()
                    .get(position)
                    .and_then(|token| Zipf::of(token))
                    .is_some_and(|zipf| zipf >= most),
                _ => false,
            })
            .collect();
        Self {
            verdicts,
            informative,
            measure: rule.measure,
            weights,
            rare,
            everyday,
        }
    }

    /// Every query token with its verdict, in query order.
    pub fn verdicts(&self) -> &[TokenVerdict] {
        &self.verdicts
    }

    /// Whether informative token `i` (of [`QueryEvidence::informative`]) is evidence only beside
    /// another.
    pub fn is_everyday(&self, i: usize) -> bool {
        self.everyday.get(i).copied().unwrap_or(false)
    }

    /// The informative tokens as a query of their own.
    pub fn informative(&self) -> &QueryTokens {
        &self.informative
    }

    /// How much evidence `doc` holds for the query's informative tokens.
    pub fn document<D: Scorable + ?Sized>(&self, doc: &D) -> DocumentEvidence {
        let text = doc.prepared();
        let tokens = self.informative.as_slice();
        if tokens.is_empty() {
            return DocumentEvidence::default();
        }
        let fields = [
            (text.title(), text.keywords(), TITLE_POINTS),
            (
                text.description(),
                text.usage_scenarios(),
                DESCRIPTION_POINTS,
            ),
            (text.body_window(), "", BODY_POINTS),
        ];
        let mut evidence = DocumentEvidence::default();
        let mut found = [0u8; MAX_QUERY_TOKENS];
        text.fields_containing_each(self.informative.terms(), &mut found, Lookup::Once);
        evidence.rare = tokens
            .iter()
            .zip(&found)
            .zip(&self.rare)
            .any(|((_, &fields), &rare)| rare && fields != 0);
        let specific_found = found
            .iter()
            .zip(&self.everyday)
            .any(|(&fields, &everyday)| fields != 0 && !everyday);
        let mut held = 0u64;
        let mut word_points = 0;
        let mut weighted = 0;
        for (field, extra, points) in fields {
            let mut words: HashSet<&str> = HashSet::new();
            for_each_token(field, |word| {
                words.insert(word);
            });
            for_each_token(extra, |word| {
                words.insert(word);
            });
            for (position, (token, &weight)) in tokens.iter().zip(&self.weights).enumerate() {
                if words.contains(token.as_str()) {
                    evidence.whole_word = true;
                } else if !words.iter().any(|word| same_word_inflected(token, word)) {
                    continue;
                }
                held |= 1 << position;
                word_points += points;
                weighted += points * weight;
            }
        }
        let everyday = self
            .everyday
            .iter()
            .enumerate()
            .fold(0u64, |mask, (position, &everyday)| {
                mask | (u64::from(everyday) << position)
            });
        evidence.not_alone = specific_found || held & !everyday != 0 || held.count_ones() >= 2;
        evidence.covered = held.count_ones();
        evidence.informative = u32::try_from(tokens.len()).unwrap_or(u32::MAX);
        match self.measure {
            Measure::Substring => {
                evidence.points = lexical_points(&self.informative, text, Lookup::Once);
                evidence.weight = evidence.points * FLAT_WEIGHT;
            }
            Measure::Words | Measure::RareWords => {
                evidence.points = word_points;
                evidence.weight = weighted;
            }
        }
        evidence
    }
}

/// `ln((scanned + 1) / df)` in hundredths: at least 1 for a token every document holds.
fn rarity_weight(df: usize, scanned: usize) -> u32 {
    // Counts of documents fit an f64 exactly well past any memory tree's size.
    #[allow(clippy::cast_precision_loss)]
    let ratio = (scanned as f64 + 1.0) / df as f64;
    // A logarithm of a ratio of counts is small and positive; hundredths of it fit a u32.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let weight = (ratio.ln() * f64::from(FLAT_WEIGHT)).round() as u32;
    weight.max(1)
}

/// Whether `token` and `word`, different, are one word with an ending of at most
/// [`MAX_ENDING`] letters added to a stem of at least [`MIN_STEM`]: `test`/`tests`,
/// `deploy`/`deployed`, `migration`/`migrations`. Only for alphabetic words; a CJK bigram or a
/// segmented Thai word is the same only when equal.
fn same_word_inflected(token: &str, word: &str) -> bool {
    let (stem, longer) = if token.len() <= word.len() {
        (token, word)
    } else {
        (word, token)
    };
    let Some(ending) = longer.strip_prefix(stem) else {
        return false;
    };
    let stem_letters = stem.chars().count();
    let ending_letters = ending.chars().count();
    (1..=MAX_ENDING).contains(&ending_letters)
        && stem_letters >= MIN_STEM
        && stem.chars().chain(ending.chars()).all(inflects)
}

/// Letters of scripts that mark grammar with endings on space-separated words: Latin, Greek,
/// Cyrillic and the like, not CJK, Hangul or the scripts segmented by a dictionary.
fn inflects(c: char) -> bool {
    c.is_alphabetic()
        && !matches!(c as u32,
            0x0E00..=0x0FFF // Thai, Lao, Tibetan
            | 0x1000..=0x109F // Myanmar
            | 0x1100..=0x11FF // Hangul Jamo
            | 0x1780..=0x17FF // Khmer
            | 0x2E80..=0x9FFF // CJK, kana
            | 0xAC00..=0xD7AF // Hangul syllables
            | 0xF900..=0xFAFF // CJK compatibility
            | 0x20000..=0x3FFFF) // CJK extensions
}

/// The evidence one document holds for a query's informative tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct DocumentEvidence {
    /// Points from informative tokens as the rule's [`Measure`] counts them (title 4,
    /// description 3, body 1; keywords count as the title, usage scenarios as the description),
    /// without the type boost.
    pub points: u32,
    /// What the trim compares, in hundredths of a point: the points, each token weighted as the
    /// rule's [`Measure`] weighs it.
    pub weight: u32,
    /// Whether some informative token is a whole word of a field, a keyword or a usage scenario
    /// (a CJK bigram is always whole), not only a piece of a longer word.
    pub whole_word: bool,
    /// Whether some informative token it holds is found in no other scanned document.
    pub rare: bool,
    /// Whether it holds an informative token that is evidence alone, or at least two
    /// informative tokens as words (see [`Background::NotAlone`]); a document without it is not
    /// delivered.
    pub not_alone: bool,
    /// How many of the query's informative tokens it holds as words of a field (or the same
    /// word inflected).
    pub covered: u32,
    /// How many informative tokens the query has.
    pub informative: u32,
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
