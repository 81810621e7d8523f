//! How far a fast result can be trusted without the model: the judgement the gated delivery
//! design waits on.
//!
//! The scorer matches query tokens as substrings, so a query can "match" a memory only through
//! pieces of longer words (`now` inside `know`, `too` inside `tool`). Such a fast result is what
//! the fast-path design delivers at once, ending the initial wait before a fast model's answer
//! could arrive. The gated design ends the wait early only on a confident fast result.
//!
//! The rule: the fast result is **confident** when its lead document shares a whole word with
//! the query, i.e. some query token is itself a token of one of the fields that scored (title,
//! description, body window), as the same tokenizer cuts that field. Otherwise every hit is a
//! piece of a longer word and the result is **weak**. CJK bigrams have no word boundary to
//! miss, so a bigram hit is always whole. `cargo xtask eval` measures this rule beside the
//! alternatives it was chosen over (a title or description hit, two or more matched tokens, a
//! score margin over the runner-up, a minimum score).

use std::collections::HashSet;

use lexical_score::{QueryTokens, Scorable, explain, tokenize};

/// Whether a fast result ends the gated design's initial wait at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FastConfidence {
    /// Its lead document shares a whole word with the query: delivered as soon as published.
    Confident,
    /// Its lead document matched only through pieces of longer words: held for the model's
    /// answer until the initial ceiling.
    Weak,
}

impl FastConfidence {
    /// The name used in reports: `confident` or `weak`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Confident => "confident",
            Self::Weak => "weak",
        }
    }
}

/// Judges a fast result by its lead document (see the module documentation).
pub fn judge_fast<D: Scorable + ?Sized>(query: &QueryTokens, lead: &D) -> FastConfidence {
    let breakdown = explain(query, lead);
    let text = lead.prepared();
    let fields = [
        (&breakdown.title_hits, text.title()),
        (&breakdown.description_hits, text.description()),
        (&breakdown.body_hits, text.body_window()),
    ];
    for (hits, field) in fields {
        if hits.is_empty() {
            continue;
        }
        let words: HashSet<String> = tokenize(field).into_iter().collect();
        if hits.iter().any(|hit| words.contains(hit)) {
            return FastConfidence::Confident;
        }
    }
    FastConfidence::Weak
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use lexical_score::{MemoryType, PreparedText};

    use super::*;

    struct Doc(PreparedText);

    impl Scorable for Doc {
        fn prepared(&self) -> &PreparedText {
            &self.0
        }
        fn memory_type(&self) -> MemoryType {
            MemoryType::User
        }
        fn mtime(&self) -> SystemTime {
            SystemTime::UNIX_EPOCH
        }
    }

    fn judge(query: &str, title: &str, description: &str, body: &str) -> FastConfidence {
        judge_fast(
            &QueryTokens::new(query),
            &Doc(PreparedText::new(title, description, body)),
        )
    }

    #[test]
    fn a_query_word_found_only_inside_longer_words_is_weak() {
        let judged = judge(
            "Too wordy. Shorter answers from now on please.",
            "Tooling",
            "What I know about the build",
            "Acknowledged.",
        );
        assert_eq!(judged, FastConfidence::Weak);
    }

    #[test]
    fn a_whole_shared_word_in_the_body_window_is_confident() {
        let judged = judge(
            "how do I roll back?",
            "Release notes",
            "",
            "To roll back, run deploy.",
        );
        assert_eq!(judged, FastConfidence::Confident);
    }

    #[test]
    fn a_shared_cjk_bigram_is_confident() {
        let judged = judge("怎么回滚发布", "发布回滚", "", "");
        assert_eq!(judged, FastConfidence::Confident);
    }

    #[test]
    fn a_word_matched_in_the_title_and_whole_only_in_the_description_is_confident() {
        let judged = judge("owner", "Ownership rules", "Ask the owner first", "");
        assert_eq!(judged, FastConfidence::Confident);
    }
}
