//! Time to scan and parse trees of ~1 KiB topic files on a warm page cache.
//!
//! `recall_fresh_cache` is the figure that matters for the first recall of a session: a new
//! `DocumentCache`, so every file is listed, opened, read, parsed, prepared and scored for the
//! recall's query, as a recall scans;
//! `recall_fresh_cache_punctuated` is the same on bodies with a dash and a curly apostrophe in
//! every sentence, as English notes usually have.
//! `recall_warm_cache` is every later recall (a stat of each directory and file; unchanged
//! directories are not listed again); `recall_from_catalog` is the first recall of a new process
//! when the root's persistent catalog is warm (the same stats + load); `capped` is the non-recall
//! scanner. `read_floor` lists the same files and reads each whole on both cores, parsing nothing:
//! the floor a fresh scan cannot go below, measured in the same run so that the ratio of the two
//! holds whatever else the host is doing. `key_floor` is the same for a scan from a catalog: the
//! listed files only stat'ed, by name in their directory, on both cores.

use std::fmt::Write as _;
use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use criterion::{BenchmarkId, Criterion, criterion_main};
use rayon::prelude::*;

// The allocator the `memrecall` binary runs with, so the figures are the shipped ones.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use lexical_score::QueryTokens;
use memory_scan::{DocumentCache, MemoryRoots, RecallScan, scan_capped};

const SIZES: [usize; 3] = [200, 1_000, 10_000];

/// The body of topic `index`: all ASCII, or `punctuated` the way English notes usually are, with
/// a dash and a curly apostrophe in every sentence (which takes the tokenizer off its all-ASCII
/// path).
fn body(index: usize, punctuated: bool) -> String {
    let mut body = String::with_capacity(1_000);
    while body.len() < 920 {
        if punctuated {
            let _ = write!(
                body,
                "Deployment note {index} \u{2014} the staging cluster\u{2019}s credentials rotate weekly. "
            );
        } else {
            let _ = write!(
                body,
                "Deployment note {index}: the staging cluster rotates credentials weekly. "
            );
        }
    }
    body
}

/// Files and directories are dated a day back, like those of a real tree, so none is inside the
/// cache's racy-timestamp margin (which would make every scan read or list it again).
fn build_tree(root: &Path, topics: usize, punctuated: bool) {
    let dir = root.join("reference");
    fs::create_dir_all(&dir).unwrap();
    let day_ago = SystemTime::now() - Duration::from_hours(24);
    for i in 0..topics {
        let text = format!(
            "---\nname: Topic {i}\ndescription: Reference material number {i} for the scan benchmark\ntype: reference\n---\n\n{}\n",
            body(i, punctuated)
        );
        let path = dir.join(format!("topic-{i:05}.md"));
        fs::write(&path, text).unwrap();
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(day_ago)
            .unwrap();
    }
    for directory in [&dir, root] {
        fs::File::open(directory)
            .unwrap()
            .set_modified(day_ago)
            .unwrap();
    }
}

/// The query every scan is made for: some tokens every body holds, some none does.
fn query() -> QueryTokens {
    QueryTokens::new("where did we write down the staging credentials rotation codeword?")
}

/// A first scan by a new cache, for `query` as a recall scans. The cache and its result are
/// returned, so that the benchmarks drop them untimed: a process's first recall has no earlier
/// cache to tear down (the `scan-latency` report times the same way).
fn fresh_scan(
    cache: DocumentCache,
    roots: &MemoryRoots,
    query: &QueryTokens,
) -> (DocumentCache, RecallScan) {
    let scan = cache.scan_recall_for(roots, query).unwrap();
    (cache, scan)
}

/// Lists the topic directory and reads every file whole (open, fstat, read, close) on the rayon
/// pool; returns the bytes read.
fn read_every_file(dir: &Path) -> u64 {
    let paths: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    paths
        .par_iter()
        .map(|path| fs::read(path).unwrap().len() as u64)
        .sum()
}

/// Lists the topic directory and stats every file by name in it (each thread with the directory
/// open, as a catalog scan takes keys) on the rayon pool; returns the bytes the files hold.
#[cfg(unix)]
fn stat_every_file(dir: &Path) -> u64 {
    let names: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    names
        .par_iter()
        .map_init(
            || fs::File::open(dir).unwrap(),
            |opened, name| {
                let stat = rustix::fs::statat(&*opened, name, rustix::fs::AtFlags::empty());
                u64::try_from(stat.unwrap().st_size).unwrap_or_default()
            },
        )
        .sum()
}

fn bench_scans(c: &mut Criterion) {
    let mut group = c.benchmark_group("scan");
    for topics in SIZES {
        let dir = tempfile::tempdir().unwrap();
        build_tree(dir.path(), topics, false);
        let roots = MemoryRoots {
            project: Some(dir.path().to_path_buf()),
            user: None,
        };
        // Warm the page cache and the rayon pool before measuring.
        let query = query();
        let warm = DocumentCache::new();
        assert_eq!(
            warm.scan_recall_for(&roots, &query)
                .unwrap()
                .documents
                .len(),
            topics
        );
        if topics >= 10_000 {
            group.sample_size(20);
        } else {
            group.sample_size(50);
        }

        group.bench_with_input(
            BenchmarkId::new("recall_fresh_cache", topics),
            &roots,
            |b, roots| b.iter_with_large_drop(|| fresh_scan(DocumentCache::new(), roots, &query)),
        );
        group.bench_with_input(
            BenchmarkId::new("recall_warm_cache", topics),
            &roots,
            |b, roots| b.iter(|| warm.scan_recall_for(roots, &query).unwrap()),
        );
        let with_catalog = DocumentCache::with_catalog();
        with_catalog.scan_recall(&roots).unwrap();
        assert!(with_catalog.persist_catalogs()[0].outcome.is_ok());
        group.bench_with_input(
            BenchmarkId::new("recall_from_catalog", topics),
            &roots,
            |b, roots| {
                b.iter_with_large_drop(|| fresh_scan(DocumentCache::with_catalog(), roots, &query));
            },
        );
        group.bench_with_input(BenchmarkId::new("capped", topics), &roots, |b, roots| {
            b.iter(|| scan_capped(roots).unwrap());
        });
        let punctuated = tempfile::tempdir().unwrap();
        build_tree(punctuated.path(), topics, true);
        let punctuated_roots = MemoryRoots {
            project: Some(punctuated.path().to_path_buf()),
            user: None,
        };
        assert_eq!(
            DocumentCache::new()
                .scan_recall(&punctuated_roots)
                .unwrap()
                .documents
                .len(),
            topics
        );
        group.bench_with_input(
            BenchmarkId::new("recall_fresh_cache_punctuated", topics),
            &punctuated_roots,
            |b, roots| b.iter_with_large_drop(|| fresh_scan(DocumentCache::new(), roots, &query)),
        );
        let topic_dir = dir.path().join("reference");
        group.bench_with_input(
            BenchmarkId::new("read_floor", topics),
            &topic_dir,
            |b, topic_dir| b.iter(|| read_every_file(topic_dir)),
        );
        #[cfg(unix)]
        group.bench_with_input(
            BenchmarkId::new("key_floor", topics),
            &topic_dir,
            |b, topic_dir| b.iter(|| stat_every_file(topic_dir)),
        );
    }
    group.finish();
}

// The macro defines an undocumented public function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::bench_scans);
}

criterion_main!(group::benches);
