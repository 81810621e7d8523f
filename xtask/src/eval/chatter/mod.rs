//! Chatter on trees the delivery rule was not chosen on: the prompts of `corpus/chatter` run
//! against `corpus/demo`, `corpus/recall-eval` and `corpus/payments-team`, split into a tuning
//! and a test part by [`split`].

pub mod load;
pub mod split;
