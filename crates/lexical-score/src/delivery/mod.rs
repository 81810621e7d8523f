//! What of a ranking is delivered: the documents with enough evidence beyond uninformative query
//! tokens, trimmed relative to the lead. The ranking itself is never changed; a delivery is a
//! subsequence of it.
//!
//! `cargo xtask eval` measures each rule here on the corpus; [`DeliveryRule::SHIPPED`] is the one
//! that maximised delivered precision while keeping relevant recall at 98% of the untrimmed
//! delivery on every slice with answers, and delivered nearly nothing on everyday prompts.

mod background;
mod evidence;
mod function_words;
mod tier;
mod trim;

use std::num::NonZeroU32;

pub use background::Zipf;
pub use evidence::{
    Background, DocumentEvidence, MIN_DOCUMENTS_FOR_FREQUENCY, Measure, QueryEvidence,
    TokenVerdict, Uninformative, UninformativeTokens, document_frequencies,
};
pub use tier::{Tier, Tiering};
pub use trim::{GapFactor, Judged, Share, TrimRule};

use crate::score::{Ranked, Scorable};

/// How much evidence beyond uninformative tokens a document needs to be delivered at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MinimumEvidence {
    /// One informative token found anywhere.
    AnyHit,
    /// At least this many points from informative tokens (title 4, description 3, body 1).
    Points(NonZeroU32),
    /// An informative token that is a whole word of a field it was found in.
    WholeWord,
    /// A whole-word informative token, and either at least this many points from informative
    /// tokens or an informative token found in no other scanned document: one body mention of a
    /// word many memories share is not enough, one of a word only this memory holds is.
    WholeWordAndPointsOrRare(NonZeroU32),
}

impl MinimumEvidence {
    /// Whether `evidence` is enough.
    pub fn admits(self, evidence: DocumentEvidence) -> bool {
        match self {
            Self::AnyHit => evidence.points > 0,
            Self::Points(points) => evidence.points >= points.get(),
            Self::WholeWord => evidence.whole_word,
            Self::WholeWordAndPointsOrRare(points) => {
                evidence.whole_word && (evidence.points >= points.get() || evidence.rare)
            }
        }
    }

    /// Whether the rule asks which tokens are found in one document only.
    pub fn needs_rarity(self) -> bool {
        matches!(self, Self::WholeWordAndPointsOrRare(_))
    }
}

/// Which query tokens count, and how much of them a delivered document must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EvidenceRule {
    /// The tokens judged uninformative.
    pub uninformative: UninformativeTokens,
    /// The least evidence a delivered document holds.
    pub minimum: MinimumEvidence,
    /// How that evidence is counted.
    pub measure: Measure,
}

impl EvidenceRule {
    /// Every token counts and any match is enough: every ranked document qualifies.
    pub const ANY_MATCH: Self = Self {
        uninformative: UninformativeTokens::NONE,
        minimum: MinimumEvidence::AnyHit,
        measure: Measure::Substring,
    };
}

/// What a delivery keeps of a ranking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeliveryRule {
    /// Which documents qualify at all.
    pub evidence: EvidenceRule,
    /// How many of those are kept, relative to the first.
    pub trim: TrimRule,
}

const HALF: Share = match Share::percent(50) {
    Some(share) => share,
    None => unreachable!(),
};

const FORTY_PERCENT: Share = match Share::percent(40) {
    Some(share) => share,
    None => unreachable!(),
};

/// Zipf 5.0: a word at least as common as once in every hundred thousand words of ordinary text
/// (`code`, `error`, `case`, `make`), not `tests` (4.7) or `deploy`.
const EVERYDAY: Zipf = Zipf::tenths(50);

const TWO_POINTS: NonZeroU32 = NonZeroU32::MIN.saturating_add(1);

impl DeliveryRule {
    /// The design's delivery: the whole top five, whatever it matched.
    pub const UNTRIMMED: Self = Self {
        evidence: EvidenceRule::ANY_MATCH,
        trim: TrimRule::Untrimmed,
    };

    /// The rule delivered by default: function words, requests and tokens found in more than
    /// half the scanned documents carry no evidence; a word at least as common in ordinary text
    /// as Zipf 5.0 is evidence only beside another; a token counts only as a word of a field
    /// (or the same word inflected), weighted by its rarity in the scanned documents; a document
    /// needs a whole-word informative match and two points of evidence (a title or description
    /// word, or two body words) or a token no other document holds; of those, the ones whose
    /// weighted evidence reaches 40% of the lead's.
    pub const SHIPPED: Self = Self {
        evidence: EvidenceRule {
            uninformative: UninformativeTokens {
                function_words: true,
                requests: true,
                common: Some(HALF),
                background: Some(Background::NotAlone(EVERYDAY)),
            },
            minimum: MinimumEvidence::WholeWordAndPointsOrRare(TWO_POINTS),
            measure: Measure::RareWords,
        },
        trim: TrimRule::LeadShare(FORTY_PERCENT),
    };

    /// Whether this rule delivers every ranked document.
    pub fn is_untrimmed(&self) -> bool {
        *self == Self::UNTRIMMED
    }

    /// The documents of `ranked` (best first, indices into `docs`) that are delivered, in
    /// ranking order, judged with `evidence` (the query's tokens judged by
    /// [`QueryEvidence::judge`] with this rule's [`DeliveryRule::evidence`]).
    pub fn deliver<D: Scorable>(
        &self,
        evidence: &QueryEvidence,
        ranked: &[Ranked],
        docs: &[D],
    ) -> Vec<Ranked> {
        self.deliver_judged(evidence, ranked, docs)
            .into_iter()
            .map(|judged| judged.ranked)
            .collect()
    }

    /// As [`DeliveryRule::deliver`], each delivered document with the evidence it holds (for
    /// [`Tiering::tier`]). An untrimmed rule judges nothing: its documents carry no evidence.
    pub fn deliver_judged<D: Scorable>(
        &self,
        evidence: &QueryEvidence,
        ranked: &[Ranked],
        docs: &[D],
    ) -> Vec<Judged> {
        if self.is_untrimmed() {
            return ranked
                .iter()
                .map(|&ranked| Judged {
                    ranked,
                    evidence: DocumentEvidence::default(),
                })
                .collect();
        }
        let judged: Vec<Judged> = ranked
            .iter()
            .filter_map(|&ranked| {
                docs.get(ranked.index).map(|doc| Judged {
                    ranked,
                    evidence: evidence.document(doc),
                })
            })
            .filter(|judged| {
                judged.evidence.not_alone && self.evidence.minimum.admits(judged.evidence)
            })
            .collect();
        let keeps = self.trim.keeps(&judged);
        judged
            .into_iter()
            .zip(keeps)
            .filter_map(|(judged, kept)| kept.then_some(judged))
            .collect()
    }
}

#[cfg(test)]
mod tests;
