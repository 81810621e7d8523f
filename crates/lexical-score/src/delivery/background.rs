//! How common a word is in ordinary text, whatever memory tree it is looked up in: the Zipf
//! frequencies of the `wordfreq` lists (English, German, French, Spanish, Portuguese, Russian,
//! Chinese, Japanese, Korean), kept for words at least as common as Zipf 4.5. The table
//! `background.tsv` is written by `data/background.py` and committed; its licence is
//! `data/background.LICENSE`.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde::Serialize;

const TABLE: &str = include_str!("background.tsv");

/// A Zipf frequency in tenths: ten times the base-10 logarithm of a word's occurrences per
/// billion words (`50` is once in every hundred thousand words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Zipf(u8);

impl Zipf {
    /// The frequency of `tenths` tenths of a Zipf unit.
    pub const fn tenths(tenths: u8) -> Self {
        Self(tenths)
    }

    /// Its value in tenths.
    pub const fn as_tenths(self) -> u8 {
        self.0
    }

    /// How common `token` (as the scorer spells its tokens) is in ordinary text; `None` for a
    /// word rarer than the table keeps.
    pub fn of(token: &str) -> Option<Self> {
        BACKGROUND.get(token).copied().map(Self)
    }
}

impl std::fmt::Display for Zipf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.0 / 10, self.0 % 10)
    }
}

static BACKGROUND: LazyLock<HashMap<&'static str, u8>> = LazyLock::new(|| {
    TABLE
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (word, tenths) = line.split_once('\t')?;
            Some((word, tenths.parse().ok()?))
        })
        .collect()
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_of_the_table_is_a_word_and_a_frequency() {
        let lines = TABLE.lines().filter(|line| !line.starts_with('#')).count();
        assert_eq!(BACKGROUND.len(), lines);
        assert!(lines > 10_000);
    }

    #[test]
    fn an_everyday_word_is_commoner_than_a_topic_word() {
        let code = Zipf::of("code").expect("code is common");
        let tests = Zipf::of("tests").expect("tests is common");
        assert!(code > tests);
        assert_eq!(Zipf::of("idempotency"), None);
    }

    #[test]
    fn the_table_holds_words_of_every_script_it_covers() {
        for word in ["code", "fehler", "код", "代码", "コード", "코드"] {
            assert!(Zipf::of(word).is_some(), "{word}");
        }
    }
}
