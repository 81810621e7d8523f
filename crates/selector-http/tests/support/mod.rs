//! Candidates shared by the HTTP adapter's tests.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use selector::Candidate;

/// 2026-11-30T12:00:00.000Z, so manifests are reproducible.
pub const FIXED_SECS: u64 = 1_796_040_000;

fn at(offset_secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(FIXED_SECS + offset_secs)
}

/// Three candidates from the project and user scopes.
pub fn sample_candidates() -> Vec<Candidate> {
    vec![
        Candidate {
            id: "/work/app/.memory/project/deploy-checklist.md".to_owned(),
            memory_type: "project".to_owned(),
            mtime: at(0),
            description: "Steps to ship a release to production".to_owned(),
            keywords: Vec::new(),
        },
        Candidate {
            id: "/home/dev/.memory/user/role.md".to_owned(),
            memory_type: "user".to_owned(),
            mtime: UNIX_EPOCH + Duration::from_millis(FIXED_SECS * 1000 - 86_400_000 + 250),
            description: "Senior Rust developer, prefers terse answers".to_owned(),
            keywords: Vec::new(),
        },
        Candidate {
            id: "/work/app/.memory/reference/grafana.md".to_owned(),
            memory_type: "reference".to_owned(),
            mtime: at(3600),
            description: String::new(),
            keywords: Vec::new(),
        },
    ]
}

pub fn ids(ids: &[&str]) -> Vec<String> {
    ids.iter().map(|&id| id.to_owned()).collect()
}
