//! Candidate rules compared with the shipped one on the tuning part only: the shipped delivery,
//! then one more condition on each delivered note. Neither ships; they are measured so that a
//! rule can be chosen on the tuning part and judged once on the test part.

use std::collections::HashSet;

use lexical_score::delivery::QueryEvidence;
use lexical_score::{PreparedText, tokenize};

/// The longest ending that still makes two words one word inflected, as the shipped rule counts.
const MAX_ENDING: usize = 3;
/// The shortest stem whose inflections count.
const MIN_STEM: usize = 3;

/// A condition a delivered note must also meet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// Some informative token of the prompt is a word of what the note is about: its title,
    /// description, keywords or usage scenarios, not only its body.
    AboutFields,
    /// The note holds at least this percentage of the prompt's distinct informative tokens, as
    /// words of any scored field.
    Coverage(u8),
}

impl Condition {
    /// The name printed after the shipped rule's.
    pub fn name(self) -> String {
        match self {
            Self::AboutFields => "an informative word in title/description/keywords".to_owned(),
            Self::Coverage(percent) => {
                format!("≥{percent}% of the prompt's informative words in the note")
            }
        }
    }

    /// Whether the note with `text` meets the condition for the prompt judged as `evidence`.
    pub fn admits(self, evidence: &QueryEvidence, text: &PreparedText) -> bool {
        let tokens: HashSet<&str> = evidence
            .informative()
            .as_slice()
            .iter()
            .map(String::as_str)
            .collect();
        if tokens.is_empty() {
            return false;
        }
        match self {
            Self::AboutFields => {
                let about = words(&[
                    text.title(),
                    text.description(),
                    text.keywords(),
                    text.usage_scenarios(),
                ]);
                tokens.iter().any(|t| holds(&about, t))
            }
            Self::Coverage(percent) => {
                let all = words(&[
                    text.title(),
                    text.description(),
                    text.keywords(),
                    text.usage_scenarios(),
                    text.body_window(),
                ]);
                let covered = tokens.iter().filter(|t| holds(&all, t)).count();
                covered * 100 >= tokens.len() * usize::from(percent)
            }
        }
    }
}

fn words(fields: &[&str]) -> HashSet<String> {
    fields.iter().flat_map(|f| tokenize(f)).collect()
}

/// Whether `token` is one of `words`, or one of them with an ending of at most [`MAX_ENDING`]
/// letters on a stem of at least [`MIN_STEM`] (`test` and `tests`).
fn holds(words: &HashSet<String>, token: &str) -> bool {
    words.contains(token) || words.iter().any(|w| inflected(token, w))
}

fn inflected(a: &str, b: &str) -> bool {
    let (stem, longer) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let Some(ending) = longer.strip_prefix(stem) else {
        return false;
    };
    let ending_letters = ending.chars().count();
    stem.chars().count() >= MIN_STEM
        && (1..=MAX_ENDING).contains(&ending_letters)
        && longer.chars().all(|c| c.is_alphabetic() && !is_cjk(c))
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x1100..=0x11FF | 0x2E80..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(words: &[&str]) -> HashSet<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn a_word_with_a_short_ending_is_the_same_word() {
        assert!(holds(&set(&["tests"]), "test"));
        assert!(!holds(&set(&["testing"]), "te"));
        assert!(!holds(&set(&["contest"]), "test"));
    }

    #[test]
    fn cjk_bigrams_match_only_when_equal() {
        assert!(holds(&set(&["测试"]), "测试"));
        assert!(!holds(&set(&["测试用"]), "测试"));
    }
}
