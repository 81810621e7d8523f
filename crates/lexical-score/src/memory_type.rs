//! The four kinds of memory a topic document can be.

use std::fmt;
use std::str::FromStr;

/// The kind of a memory document, from its frontmatter `type` field.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum MemoryType {
    /// Who the user is and how they like to work.
    User,
    /// Guidance the user gave about the agent's behaviour.
    Feedback,
    /// Facts about the project: goals, incidents, deadlines, releases.
    Project,
    /// Pointers to outside material: dashboards, tickets, docs.
    Reference,
}

impl MemoryType {
    /// Every memory type, in declaration order.
    pub const ALL: [MemoryType; 4] = [
        MemoryType::User,
        MemoryType::Feedback,
        MemoryType::Project,
        MemoryType::Reference,
    ];

    /// The lowercase word used in frontmatter and manifests.
    pub const fn as_str(self) -> &'static str {
        match self {
            MemoryType::User => "user",
            MemoryType::Feedback => "feedback",
            MemoryType::Project => "project",
            MemoryType::Reference => "reference",
        }
    }

    /// Query words that hint at this type; each one present in a query adds to the type boost of
    /// a document that already matched lexically.
    pub const fn keywords(self) -> &'static [&'static str] {
        match self {
            MemoryType::User => &[
                "user",
                "preference",
                "preferences",
                "background",
                "role",
                "terse",
            ],
            MemoryType::Feedback => &["feedback", "rule", "rules", "avoid", "style", "summary"],
            MemoryType::Project => &[
                "project", "goal", "goals", "incident", "deadline", "release",
            ],
            MemoryType::Reference => &["reference", "dashboard", "ticket", "docs", "doc", "link"],
        }
    }
}

impl fmt::Display for MemoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `type` value that is not one of the four memory types.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownMemoryType(pub String);

impl fmt::Display for UnknownMemoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown memory type {:?} (expected user, feedback, project or reference)",
            self.0
        )
    }
}

impl std::error::Error for UnknownMemoryType {}

impl FromStr for MemoryType {
    type Err = UnknownMemoryType;

    /// Parses the exact lowercase word; frontmatter values are trimmed by the caller.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MemoryType::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| UnknownMemoryType(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_round_trips_through_its_word() {
        for t in MemoryType::ALL {
            assert_eq!(t.as_str().parse::<MemoryType>(), Ok(t));
        }
    }

    #[test]
    fn unknown_or_capitalised_words_are_rejected() {
        assert!("note".parse::<MemoryType>().is_err());
        assert!("User".parse::<MemoryType>().is_err());
    }
}
