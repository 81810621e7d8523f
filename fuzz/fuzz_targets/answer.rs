//! What a model server's message content goes through, on any text: the answer is found in it
//! (whole JSON, or the first object in prose or a fence) or refused, then validated: rejected,
//! or at most `limit` distinct ids, each one from the manifest; never a panic.
#![no_main]

use std::sync::LazyLock;
use std::time::{Duration, UNIX_EPOCH};

use libfuzzer_sys::fuzz_target;
use selector::{Candidate, Manifest, validate_answer};

const LIMIT: usize = 5;

static MANIFEST: LazyLock<Manifest> = LazyLock::new(|| {
    let candidates: Vec<Candidate> = (0..8)
        .map(|i| Candidate {
            id: format!("/m/topic-{i}.md"),
            memory_type: "project".to_owned(),
            mtime: UNIX_EPOCH + Duration::from_secs(1_700_000_000 + i),
            description: format!("topic {i}"),
            keywords: Vec::new(),
        })
        .collect();
    Manifest::build(&candidates)
});

fuzz_target!(|data: &[u8]| {
    let Ok(content) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(answer) = selector::parse_answer_content(content) else {
        return;
    };
    if let Ok(ids) = validate_answer(&answer, &MANIFEST, LIMIT) {
        assert!(ids.len() <= LIMIT);
        for (i, id) in ids.iter().enumerate() {
            assert!(MANIFEST.contains(id));
            assert!(!ids[..i].contains(id), "repeated {id}");
        }
    }
});
