//! Deterministic scoring latency: the time the shipped scorer itself takes per query over the
//! prepared corpus documents (tokenize the query, one scoring pass), on real time.
//!
//! File reading is left out on purpose: it is what the scan-latency report measures. Each call is
//! timed on its own, every case many times, and the percentiles are taken over all calls.

use std::hint::black_box;
use std::time::{Duration, Instant};

use lexical_score::{ActiveToolAliases, CandidateSelection, QueryTokens};
use serde::Serialize;

use super::corpus::Corpus;

/// Timed calls per case.
pub const REPETITIONS: usize = 400;
/// The first-prompt ceiling the figures are a share of, in microseconds.
pub const BUDGET_US: f64 = recall_lifecycle::FIRST_PROMPT_CEILING.as_micros() as f64;

/// The scoring-latency section of the evaluation.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyReport {
    /// Documents scored per call.
    pub documents: usize,
    /// Cases timed.
    pub cases: usize,
    /// Timed calls per case.
    pub repetitions: usize,
    /// `debug` or `release`: the figures depend on it several times over.
    pub profile: &'static str,
    /// Median call time, in microseconds.
    pub p50_us: f64,
    /// 95th-percentile call time, in microseconds.
    pub p95_us: f64,
    /// `p50_us` as a share of the 100 ms initial ceiling.
    pub p50_budget_share: f64,
    /// `p95_us` as a share of the 100 ms initial ceiling.
    pub p95_budget_share: f64,
}

/// Times `QueryTokens::new` + `CandidateSelection::select` for every case.
pub fn latency_report(corpus: &Corpus) -> LatencyReport {
    let tools = ActiveToolAliases::default();
    let score = |query: &str| {
        let tokens = QueryTokens::new(query);
        CandidateSelection::select(&tokens, &corpus.documents, &tools)
    };
    // One untimed pass so that first-touch costs (allocation, caches) are not in the figures.
    for case in &corpus.cases {
        black_box(score(black_box(&case.query)));
    }
    let mut samples: Vec<Duration> = Vec::with_capacity(corpus.cases.len() * REPETITIONS);
    for _ in 0..REPETITIONS {
        for case in &corpus.cases {
            let started = Instant::now();
            black_box(score(black_box(&case.query)));
            samples.push(started.elapsed());
        }
    }
    samples.sort_unstable();
    let p50_us = micros(percentile(&samples, 50));
    let p95_us = micros(percentile(&samples, 95));
    LatencyReport {
        documents: corpus.documents.len(),
        cases: corpus.cases.len(),
        repetitions: REPETITIONS,
        profile: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        p50_us,
        p95_us,
        p50_budget_share: p50_us / BUDGET_US,
        p95_budget_share: p95_us / BUDGET_US,
    }
}

/// The nearest-rank percentile of sorted samples; zero when there are none.
fn percentile(sorted: &[Duration], pct: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (sorted.len() * pct).div_ceil(100).max(1);
    sorted.get(rank - 1).copied().unwrap_or_default()
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentile_picks_the_sample_at_or_above_the_share() {
        let samples: Vec<Duration> = (1..=20).map(Duration::from_micros).collect();
        assert_eq!(percentile(&samples, 50), Duration::from_micros(10));
        assert_eq!(percentile(&samples, 95), Duration::from_micros(19));
        assert_eq!(percentile(&[], 95), Duration::ZERO);
    }
}
