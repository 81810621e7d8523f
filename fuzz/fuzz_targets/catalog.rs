//! The catalog decoder on any byte string: rejected or decoded, never a panic; libFuzzer's
//! `-malloc_limit_mb` (set by `cargo xtask fuzz`) fails the run on an allocation past a bound.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = memory_scan::fuzzing::decode_catalog(data);
});
