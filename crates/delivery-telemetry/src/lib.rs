//! Telemetry for recall and delivery: the `memory.recall` and `memory.recall.delivery` events and
//! the sinks that receive them.
//!
//! The exactly-once terminal delivery event is enforced by types. It knows nothing of files,
//! scoring or selectors.
