//! One recall per user query: scan, rank, publish the fast result, ask the selector, settle; and
//! the per-turn delivery handle that decides what reaches the model and when.
//!
//! It owns time (the 100 ms initial ceiling) and exclusion of already-delivered documents. It
//! knows nothing of configuration files, default paths or the command line.
