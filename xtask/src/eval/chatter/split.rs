//! The tuning and test parts of the chatter evaluation, fixed before any result was seen.
//!
//! Every (tree, case) pair goes to one part by the 64-bit FNV-1a hash of `"<tree>/<case id>"`,
//! mixed by `MurmurHash3`'s 64-bit finalizer: an even result is [`Part::Tune`], an odd one
//! [`Part::Test`]. FNV-1a alone does not do: its lowest bit is only the parity of the input
//! bytes' lowest bits, and its highest bit hardly depends on the last bytes, so either would put
//! whole runs of ids (`chat-en-01` … `chat-en-50`) in one part. The finalizer makes every
//! output bit depend on every input bit. Rules are compared on the tuning
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

/// `MurmurHash3`'s 64-bit finalizer (`fmix64`).
pub fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The part of case `case_id` run against tree `tree`.
pub fn part(tree: &str, case_id: &str) -> Part {
    if fmix64(fnv1a(format!("{tree}/{case_id}").as_bytes())).is_multiple_of(2) {
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
    fn consecutive_ids_of_one_language_fall_in_both_parts_on_every_tree() {
        for tree in ["demo", "recall-eval", "payments-team"] {
            let tune = (1..=50)
                .filter(|i| part(tree, &format!("chat-en-{i:02}")) == Part::Tune)
                .count();
            assert!((10..=40).contains(&tune), "{tune} of 50 in tune on {tree}");
        }
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
