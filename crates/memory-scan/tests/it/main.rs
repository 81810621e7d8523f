//! Integration tests for memory-scan, all in one binary: the parser, both scanners and the cache,
//! against real temporary directories.

mod cache;
mod capped;
mod catalog;
#[cfg(unix)]
mod catalog_in_place;
#[cfg(unix)]
mod catalog_temporaries;
// Off Unix every scan lists and checks each directory, so no scan skips an unchanged root.
#[cfg(unix)]
mod known_changes;
#[cfg(unix)]
mod limits;
#[cfg(unix)]
mod listings;
mod parser;
mod props;
mod recall;
mod saved_time;
#[cfg(unix)]
mod security;
mod skips;
mod snapshots;
mod structured_fields;
mod support;
