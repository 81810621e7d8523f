//! How a delivered document is shown: whole, or as one line the model can follow to it.

use super::evidence::DocumentEvidence;
use super::trim::Share;

/// How a delivered document is put in front of the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// Its title, description and body.
    Whole,
    /// One line: its title and where to read it.
    Line,
}

/// Which delivered documents are shown whole and which as a line.
///
/// ```
/// use lexical_score::delivery::{DocumentEvidence, Share, Tier, Tiering};
///
/// let half = Tiering::Coverage(Share::percent(50).unwrap());
/// let weak = DocumentEvidence { covered: 1, informative: 3, ..DocumentEvidence::default() };
/// let strong = DocumentEvidence { covered: 2, informative: 3, ..DocumentEvidence::default() };
/// assert_eq!(half.tier(weak), Tier::Line);
/// assert_eq!(half.tier(strong), Tier::Whole);
/// assert_eq!(Tiering::Off.tier(weak), Tier::Whole);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tiering {
    /// Every delivered document is shown whole.
    Off,
    /// A document holding at least this share of the query's informative tokens as words is
    /// shown whole; one holding less, as a line.
    Coverage(Share),
}

impl Tiering {
    /// The tiering delivered by default: a note holding at least half of the prompt's
    /// informative words is shown whole, any other delivered note as a line.
    pub const SHIPPED: Self = Self::Coverage(super::HALF);

    /// How a delivered document with `evidence` is shown. Evidence counted without informative
    /// tokens (an untrimmed delivery judges none) is shown whole.
    pub fn tier(self, evidence: DocumentEvidence) -> Tier {
        match self {
            Self::Off => Tier::Whole,
            Self::Coverage(_) if evidence.informative == 0 => Tier::Whole,
            Self::Coverage(share) if share.reached_by(evidence.covered, evidence.informative) => {
                Tier::Whole
            }
            Self::Coverage(_) => Tier::Line,
        }
    }
}
