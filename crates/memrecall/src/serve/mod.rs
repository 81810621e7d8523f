//! `memrecall serve`: one process per user that keeps each agent session's recall alive between
//! the prompt event and the tool events ([`server`]). Its socket protocol, its paths and its
//! client are `recall_server`'s.

pub mod server;
