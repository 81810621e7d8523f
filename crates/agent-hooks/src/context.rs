//! The memory a hook adds, cut to what an agent accepts.

use crate::hook_io::MAX_CONTEXT_UTF16;

/// What a recall session delivering to an agent is given as its context budget
/// ([`recall_facade::RecallOptions::context_budget`]): [`MAX_CONTEXT_UTF16`].
pub const fn budget() -> Option<std::num::NonZeroUsize> {
    std::num::NonZeroUsize::new(MAX_CONTEXT_UTF16)
}

/// `context` as it is when it fits [`MAX_CONTEXT_UTF16`]; else its beginning, cut to fit with a
/// note saying so: for a context whose documents are not at hand, such as a server's answer (a
/// recall session cuts its own deliveries to the budget it is given, document by document).
pub fn cut(context: &str) -> String {
    recall_facade::cut_to_budget(context, MAX_CONTEXT_UTF16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook_io::utf16_len;

    #[test]
    fn a_context_within_the_budget_is_kept_as_it_is() {
        assert_eq!(cut("# Memory\n\nshort"), "# Memory\n\nshort");
    }

    #[test]
    fn a_context_over_the_budget_is_cut_to_it_with_a_note() {
        let long = "é".repeat(MAX_CONTEXT_UTF16 * 3);
        let cut = cut(&long);
        assert!(utf16_len(&cut) <= MAX_CONTEXT_UTF16, "{}", utf16_len(&cut));
        assert!(cut.starts_with("éé"));
        assert!(cut.ends_with(&format!("{}\n", recall_facade::TRUNCATED_NOTE)));
    }
}
