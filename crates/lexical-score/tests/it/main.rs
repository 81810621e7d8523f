//! Behaviour of the lexical scorer, one test binary for the whole crate.

mod candidates;
mod frozen;
mod noise;
mod properties;
mod query;
mod scoring;
mod snapshots;
mod structured;
mod support;
mod tokenizer;
