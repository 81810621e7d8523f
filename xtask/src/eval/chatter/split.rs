//! The tuning and test parts of the chatter evaluation, fixed before any result was seen.
//!
//! Every (tree, case) pair goes to one part by the 64-bit FNV-1a hash of `"<tree>/<case id>"`:
//! when its highest bit is 0 the pair is in [`Part::Tune`], when it is 1 in [`Part::Test`]. (Not
//! the lowest bit: FNV-1a multiplies by an odd prime, so its lowest bit is only the parity of the
//! input bytes' lowest bits, and would split the same prompt alike on most trees.) Rules are compared on the tuning
//! part only; the test part judges the one chosen, so fitting the tuning prompts shows as a gap.
//! The rule reads nothing but the tree's name and the case id, so no label or result can move a
//! pair from one part to the other.

use serde::Serialize;

/// One of the two parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    /// Rules may be compared and chosen here.
    Tune,
    /// Only the chosen rule is judged here.
    Test,
}

impl Part {
    /// Both parts, in report order.
    pub const ALL: [Part; 2] = [Part::Tune, Part::Test];

    /// The name printed in tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Part::Tune => "tune",
            Part::Test => "test",
        }
    }
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The 64-bit FNV-1a hash of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(FNV_PRIME)
    })
}

/// The part of case `case_id` run against tree `tree`.
pub fn part(tree: &str, case_id: &str) -> Part {
    if fnv1a(format!("{tree}/{case_id}").as_bytes()) >> 63 == 0 {
        Part::Tune
    } else {
        Part::Test
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn a_case_can_fall_in_different_parts_on_different_trees() {
        let parts: std::collections::HashSet<Part> = ["demo", "recall-eval", "payments-team"]
            .iter()
            .flat_map(|tree| (1..=20).map(move |i| part(tree, &format!("chat-en-{i:02}"))))
            .collect();
        assert_eq!(parts.len(), 2);
        let per_case: Vec<bool> = (1..=20)
            .map(|i| {
                let id = format!("chat-en-{i:02}");
                part("demo", &id) != part("payments-team", &id)
            })
            .collect();
        assert!(
            per_case.contains(&true),
            "the tree takes no part in the split"
        );
    }
}
