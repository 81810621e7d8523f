//! How much of a ranking is delivered: the trim rules the evaluation compares.

use std::num::{NonZeroU32, NonZeroUsize};

use super::evidence::DocumentEvidence;
use crate::score::Ranked;

/// A share from 1% to 100%.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Share(u8);

impl Share {
    /// `percent`%, when it is 1 to 100.
    pub const fn percent(percent: u8) -> Option<Self> {
        if percent >= 1 && percent <= 100 {
            Some(Self(percent))
        } else {
            None
        }
    }

    /// The share in percent.
    pub const fn as_percent(self) -> u8 {
        self.0
    }

    /// Whether `part` of `whole` is more than this share.
    pub fn exceeded_by(self, part: usize, whole: usize) -> bool {
        part.saturating_mul(100) > whole.saturating_mul(usize::from(self.0))
    }

    /// Whether `part` of `whole` is at least this share.
    pub fn reached_by(self, part: u32, whole: u32) -> bool {
        u64::from(part) * 100 >= u64::from(whole) * u64::from(self.0)
    }
}

/// A factor above 1, in tenths: the drop between two neighbouring scores that ends a delivery
/// under [`TrimRule::Gap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GapFactor(NonZeroU32);

impl GapFactor {
    /// A factor of `tenths` / 10, when that is above 1.
    pub const fn tenths(tenths: u32) -> Option<Self> {
        match NonZeroU32::new(tenths) {
            Some(tenths) if tenths.get() > 10 => Some(Self(tenths)),
            _ => None,
        }
    }

    /// The factor in tenths.
    pub const fn as_tenths(self) -> u32 {
        self.0.get()
    }

    /// Whether `next` is lower than `previous` by more than this factor.
    fn drop_between(self, previous: u32, next: u32) -> bool {
        u64::from(previous) * 10 > u64::from(next) * u64::from(self.0.get())
    }
}

/// Which documents with enough evidence a delivery keeps, best first. Every rule keeps the first
/// of them and decides each later one from those before it, so a delivery cut shorter (the fast
/// result's two) keeps exactly the same documents as the longer one up to its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TrimRule {
    /// All of them: the lexical top five.
    Untrimmed,
    /// The first `k`.
    TopK(NonZeroUsize),
    /// Those whose evidence reaches this share of the first one's.
    LeadShare(Share),
    /// The first, then only those sharing a whole informative word with the query.
    WholeWordAfterFirst,
    /// Up to the first drop between neighbours larger than the factor.
    Gap(GapFactor),
}

/// One ranked document with the evidence it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Judged {
    /// Its place in the ranking.
    pub ranked: Ranked,
    /// Its evidence for the query's informative tokens.
    pub evidence: DocumentEvidence,
}

impl TrimRule {
    /// For each of `judged` (best first), whether it is delivered.
    pub fn keeps(self, judged: &[Judged]) -> Vec<bool> {
        let Some(lead) = judged.first() else {
            return Vec::new();
        };
        let mut open = true;
        let mut previous = lead.evidence.weight;
        judged
            .iter()
            .enumerate()
            .map(|(position, doc)| {
                let points = doc.evidence.weight;
                let kept = position == 0
                    || match self {
                        Self::Untrimmed => true,
                        Self::TopK(k) => position < k.get(),
                        Self::LeadShare(share) => share.reached_by(points, lead.evidence.weight),
                        Self::WholeWordAfterFirst => doc.evidence.whole_word,
                        Self::Gap(factor) => {
                            open = open && !factor.drop_between(previous, points);
                            open
                        }
                    };
                previous = points;
                kept
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
