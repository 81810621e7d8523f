//! The deterministic, multilingual lexical scorer behind memory recall.
//!
//! It tokenizes queries and documents (NFKC, lowercase, letter runs for alphabetic scripts,
//! code-point bigrams for CJK), scores documents by title, description and body-window matches,
//! and picks the candidates handed to the model selector, the fallback top five and the fast top
//! two, all from one scoring pass.
//!
//! It knows nothing of files, the network or time beyond the `mtime` a document reports: anything
//! that can show a title, description, body, type and mtime can be scored.

mod memory_type;

pub use memory_type::{MemoryType, UnknownMemoryType};
