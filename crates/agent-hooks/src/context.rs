//! How much memory a hook adds: what an agent accepts.

use crate::hook_io::MAX_CONTEXT_UTF16;

/// The budget, in UTF-16 units, a recall session delivering to an agent is given (what it
/// cuts each delivery's prompt to): [`MAX_CONTEXT_UTF16`].
pub const fn budget() -> Option<std::num::NonZeroUsize> {
    std::num::NonZeroUsize::new(MAX_CONTEXT_UTF16)
}
