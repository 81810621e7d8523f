//! The model selector port: given a query and candidate memories, pick the few that clearly help.
//!
//! Holds the `Selector` trait, the manifest builder and answer validator every implementation
//! shares, an OpenAI-compatible HTTP adapter and a scriptable mock. It takes plain candidates and
//! knows nothing of files, scoring or delivery.
