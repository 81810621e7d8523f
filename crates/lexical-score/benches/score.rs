//! Scoring cost of one recall over 1,000 (and 10,000) prepared documents with ~1 KiB mixed-script
//! bodies, and the per-document cost of preparing and loading a text.
//!
//! Run with `cargo bench -p lexical-score --bench score`. Targets (medians): `select` and `rank`
//! over 1,000 documents at most 1 ms, `select` over 10,000 at most 6 ms; preparing a 1 KiB ASCII
//! note at most 8 µs, a mixed-script one at most 30 µs; decoding a stored 1 KiB text at most 3 µs.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, SystemTime};

#[path = "../tests/it/support.rs"]
#[allow(
    dead_code,
    reason = "the benchmarks build documents with some of the helpers only"
)]
mod support;

use criterion::{Criterion, criterion_group, criterion_main};
use lexical_score::{
    ActiveToolAliases, ByteString, Bytes, CandidateSelection, MAX_QUERY_TOKENS, MemoryType,
    PreparedText, QueryTokens, StoredPreparedText, rank,
};
use support::Doc;

const DOCS: usize = 1_000;
const MANY_DOCS: usize = 10_000;
const BODY_BYTES: usize = 1_024;

const LATIN: &[&str] = &[
    "deploy",
    "rollback",
    "staging",
    "release",
    "incident",
    "dashboard",
    "grafana",
    "kubectl",
    "terraform",
    "latency",
    "budget",
    "owner",
    "escalation",
    "pipeline",
    "artifact",
    "checksum",
    "migration",
    "schema",
    "replica",
    "failover",
    "café",
    "déploiement",
    "vérifier",
    "zürich",
];
const CYRILLIC_GREEK: &[&str] = &[
    "развёртывание",
    "откат",
    "сервер",
    "команда",
    "ανάπτυξη",
    "δοκιμές",
    "διακομιστής",
    "ομάδα",
];
/// Words of an English memory note, some capitalised or written as identifiers as in real notes.
const ENGLISH: &[&str] = &[
    "the",
    "deploy",
    "Checklist",
    "before",
    "every",
    "release",
    "run",
    "the",
    "migration",
    "against",
    "Staging",
    "first",
    "and",
    "check",
    "that",
    "replica",
    "lag",
    "stays",
    "under",
    "two",
    "seconds",
    "PagerDuty",
    "rotation",
    "is",
    "owned",
    "by",
    "Platform",
    "team",
    "rollback",
    "uses",
    "kubectl",
    "rollout",
    "undo",
    "when",
    "Grafana",
    "dashboard",
    "shows",
    "p99",
    "latency",
    "above",
    "400ms",
    "for",
    "five",
    "minutes",
    "TODO",
    "ask",
    "Alice",
    "about",
    "the",
    "Terraform",
    "state",
    "lock",
    "in",
    "us-east-1",
    "we",
    "avoid",
    "force-unlock",
    "because",
    "it",
    "broke",
    "CI",
    "last",
    "March",
    "see",
    "ticket",
    "OPS-1234",
    "config",
    "lives",
    "in",
    "deploy/values.yaml",
    "HTTP",
    "retries",
    "default",
    "to",
    "3",
    "with",
    "exponential",
    "backoff",
    "the",
    "user",
    "prefers",
    "terse",
    "summaries",
    "and",
    "explicit",
    "commands",
    "NOTE",
    "never",
    "run",
    "cargo",
    "publish",
    "from",
    "a",
    "laptop",
];
const CJK: &[&str] = &[
    "记忆检索",
    "部署流程",
    "回滚方案",
    "性能预算",
    "デプロイ手順",
    "サーバー設定",
    "テスト実行",
    "배포 절차",
    "서버 설정",
    "통합 테스트",
    "监控面板",
    "事故复盘",
];

/// A small deterministic generator so every run scores the same corpus.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(self.0 >> 33).unwrap()
    }

    fn word(&mut self) -> &'static str {
        let list = match self.next() % 4 {
            0 | 1 => LATIN,
            2 => CYRILLIC_GREEK,
            _ => CJK,
        };
        list[self.next() % list.len()]
    }

    /// English prose with sentences, punctuation and line breaks, as a memory note reads.
    fn english(&mut self, bytes: usize) -> String {
        let mut text = String::new();
        let mut sentence_start = true;
        while text.len() < bytes {
            let word = ENGLISH[self.next() % ENGLISH.len()];
            if sentence_start {
                let mut chars = word.chars();
                text.extend(chars.next().map(|c| c.to_ascii_uppercase()));
                text.push_str(chars.as_str());
            } else {
                text.push_str(word);
            }
            sentence_start = self.next().is_multiple_of(12);
            match (sentence_start, self.next() % 7) {
                (true, 0) => text.push_str(".\n- "),
                (true, _) => text.push_str(". "),
                (false, 0) => text.push_str(", "),
                (false, _) => text.push(' '),
            }
        }
        text
    }

    fn text(&mut self, bytes: usize) -> String {
        let mut text = String::new();
        while text.len() < bytes {
            text.push_str(self.word());
            text.push(if self.next().is_multiple_of(9) {
                '\n'
            } else {
                ' '
            });
        }
        text
    }
}

fn raw_documents(count: usize) -> Vec<(String, String, String)> {
    let mut rng = Lcg(7);
    (0..count)
        .map(|_| (rng.text(24), rng.text(80), rng.text(BODY_BYTES)))
        .collect()
}

fn raw_english_documents(count: usize) -> Vec<(String, String, String)> {
    let mut rng = Lcg(11);
    (0..count)
        .map(|_| (rng.english(24), rng.english(80), rng.english(BODY_BYTES)))
        .collect()
}

fn documents(raw: &[(String, String, String)]) -> Vec<Doc> {
    raw.iter()
        .enumerate()
        .map(|(i, (title, description, body))| Doc {
            text: PreparedText::new(title, description, body),
            memory_type: MemoryType::ALL[i % 4],
            mtime: SystemTime::UNIX_EPOCH + Duration::from_secs(u64::try_from(i % 97).unwrap()),
        })
        .collect()
}

/// 64 distinct tokens: words from the corpus vocabulary (so many documents match) and CJK
/// bigrams, plus words that occur nowhere.
fn full_query() -> QueryTokens {
    let mut parts: Vec<String> = LATIN.iter().take(16).map(|w| (*w).to_owned()).collect();
    parts.extend(CYRILLIC_GREEK.iter().take(6).map(|w| (*w).to_owned()));
    parts.extend(CJK.iter().take(8).map(|w| (*w).to_owned()));
    parts.extend((0..40).map(|i| format!("absent{i}")));
    parts.push("프로젝트 마감일 dashboard 最終確認".to_owned());
    let query = QueryTokens::new(&parts.join(" "));
    assert_eq!(query.len(), MAX_QUERY_TOKENS);
    query
}

fn bench(c: &mut Criterion) {
    let raw = raw_documents(DOCS);
    let docs = documents(&raw);
    let many_docs = documents(&raw_documents(MANY_DOCS));
    let english = raw_english_documents(DOCS);
    let query = full_query();
    let no_tools = ActiveToolAliases::default();
    let tools = ActiveToolAliases::from_tool_names(&["mcp__grafana__query", "kubectl"]);

    c.bench_function("select_1000_docs_64_tokens", |b| {
        b.iter(|| CandidateSelection::select(black_box(&query), black_box(&docs), &no_tools));
    });
    c.bench_function("select_1000_docs_64_tokens_with_active_tools", |b| {
        b.iter(|| CandidateSelection::select(black_box(&query), black_box(&docs), &tools));
    });
    c.bench_function("rank_1000_docs_64_tokens", |b| {
        b.iter(|| rank(black_box(&query), black_box(&docs)));
    });
    c.bench_function("select_10000_docs_64_tokens", |b| {
        b.iter(|| CandidateSelection::select(black_box(&query), black_box(&many_docs), &no_tools));
    });
    c.bench_function("rank_10000_docs_64_tokens", |b| {
        b.iter(|| rank(black_box(&query), black_box(&many_docs)));
    });
    c.bench_function("prepared_text_new_per_doc", |b| {
        let mut next = raw.iter().cycle();
        b.iter(|| {
            let (title, description, body) = next.next().unwrap();
            PreparedText::new(black_box(title), black_box(description), black_box(body))
        });
    });
    c.bench_function("prepared_text_new_ascii_doc", |b| {
        let mut next = english.iter().cycle();
        b.iter(|| {
            let (title, description, body) = next.next().unwrap();
            PreparedText::new(black_box(title), black_box(description), black_box(body))
        });
    });
    // What a fresh scan does per document on the way to the fast result: prepare, then score once
    // by searching the fields, against building the index first; for a typical query and for the
    // longest one (64 tokens).
    let typical = QueryTokens::new("where did we write down the deploy rollback 部署流程 steps?");
    for (name, docs) in [("mixed", &raw), ("ascii", &english)] {
        for (tokens, query) in [("typical", &typical), ("64_tokens", &query)] {
            for indexed in [false, true] {
                let how = if indexed { "indexed" } else { "searched" };
                let id = format!("prepared_text_first_score_{name}_{tokens}_{how}");
                c.bench_function(&id, |b| {
                    let mut next = docs.iter().cycle();
                    b.iter(|| {
                        let (title, description, body) = next.next().unwrap();
                        let text = PreparedText::new(
                            black_box(title),
                            black_box(description),
                            black_box(body),
                        );
                        if indexed {
                            text.build_index();
                        }
                        text.score_ahead(query);
                        text
                    });
                });
            }
        }
    }
    // What storing a text adds: its index and noise markers, built from the fields.
    c.bench_function("prepared_text_new_and_stored_per_doc", |b| {
        let mut next = raw.iter().cycle();
        b.iter(|| {
            let (title, description, body) = next.next().unwrap();
            let text = PreparedText::new(black_box(title), black_box(description), black_box(body));
            postcard::to_stdvec(&text.stored(title, description, body)).map(|bytes| bytes.len())
        });
    });
    bench_decode(c, "prepared_text_decode_per_doc", &raw);
    bench_decode(c, "prepared_text_decode_ascii_doc", &english);
    c.bench_function("query_tokens_new_64_tokens", |b| {
        let text = "deploy rollback staging 记忆检索 部署流程 デプロイ手順 배포 절차 ".repeat(8);
        b.iter(|| QueryTokens::new(black_box(&text)));
    });
}

/// Loading stored texts as a persistent catalog does: postcard bytes and the source text to
/// `PreparedText`.
fn bench_decode(c: &mut Criterion, name: &str, raw: &[(String, String, String)]) {
    let encoded: Vec<Bytes> = documents(raw)
        .iter()
        .zip(raw)
        .map(|(doc, (title, description, body))| {
            Bytes::from(postcard::to_stdvec(&doc.text.stored(title, description, body)).unwrap())
        })
        .collect();
    let raw: Vec<[ByteString; 3]> = raw
        .iter()
        .map(|(title, description, body)| [title, description, body].map(|s| s.as_str().into()))
        .collect();
    let average = encoded.iter().map(Bytes::len).sum::<usize>() / encoded.len();
    eprintln!("{name}: {average} encoded bytes per document on average");
    c.bench_function(name, |b| {
        let mut next = encoded.iter().zip(&raw).cycle();
        b.iter(|| {
            let (bytes, [title, description, body]) = next.next().unwrap();
            postcard::from_bytes::<StoredPreparedText<'_>>(black_box(bytes))
                .unwrap()
                .restore(bytes, title, description, body)
                .unwrap()
        });
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
