//! Times a warm recall scan of a tree of N topics, watched and by a full scan.
//!
//! `cargo run --release -p memory-watch --example warm_scan -- [N…] [--runs R]` builds, for each
//! N (10000 and 50000 unless given), a project root of N topic files dated a day back in one
//! directory, scans it once with each cache (the cold scan, untimed), then times R warm scans
//! (5 unless given) and prints the median, with the work the last warm scan did: with no change
//! in between, and (watched) with one topic rewritten before each scan.

use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use memory_scan::{DocumentCache, MemoryRoots, RecallScan, ScanError};
use memory_watch::WatchedCache;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut sizes = Vec::new();
    let mut runs = 5;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--runs" {
            runs = args.next().ok_or("--runs needs a number")?.parse()?;
        } else {
            sizes.push(arg.parse::<usize>()?);
        }
    }
    if sizes.is_empty() {
        sizes = vec![10_000, 50_000];
    }
    println!(
        "| topics | mode | median warm scan (ms) | files stat'ed | directories listed | files read |"
    );
    println!("| ---: | --- | ---: | ---: | ---: | ---: |");
    for topics in sizes {
        let dir = tempfile::tempdir()?;
        build_tree(dir.path(), topics)?;
        let roots = MemoryRoots {
            project: Some(dir.path().to_path_buf()),
            user: None,
        };
        let stat = DocumentCache::new();
        report(
            topics,
            "full scan",
            runs,
            || {},
            || stat.scan_recall(&roots),
        )?;
        let watched = WatchedCache::new();
        report(
            topics,
            "watched",
            runs,
            || {},
            || watched.scan_recall(&roots),
        )?;
        let edited = dir.path().join("reference/topic-00000.md");
        let rewrite = || {
            let text = std::fs::read_to_string(&edited).expect("the topic is there");
            std::fs::write(&edited, text).expect("the topic can be rewritten");
        };
        let watched = WatchedCache::new();
        report(topics, "watched, one topic edited", runs, rewrite, || {
            watched.scan_recall(&roots)
        })?;
    }
    Ok(())
}

/// Scans once untimed, then `runs` times timed, each after `before` (untimed); prints the median
/// and the last scan's work.
fn report(
    topics: usize,
    mode: &str,
    runs: usize,
    before: impl Fn(),
    scan: impl Fn() -> Result<RecallScan, ScanError>,
) -> Result<(), ScanError> {
    let cold = scan()?;
    assert_eq!(cold.documents.len(), topics);
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs {
        before();
        let start = Instant::now();
        let warm = scan()?;
        times.push(start.elapsed());
        assert_eq!(warm.documents.len(), topics);
        last = Some((warm.report.work, warm.report.reread));
    }
    times.sort();
    let median = times
        .get(times.len() / 2)
        .copied()
        .unwrap_or(Duration::ZERO);
    let (work, reread) = last.unwrap_or_default();
    let mut line = String::new();
    let _ = write!(
        line,
        "| {topics} | {mode} | {:.2} | {} | {} | {} |",
        median.as_secs_f64() * 1e3,
        work.files_stated,
        work.directories_listed,
        reread
    );
    println!("{line}");
    Ok(())
}

/// `reference/topic-NNNNN.md` files of about a kilobyte, files and directories dated a day back.
fn build_tree(root: &Path, topics: usize) -> std::io::Result<()> {
    let day_ago = SystemTime::now() - Duration::from_hours(24);
    let dir = root.join("reference");
    std::fs::create_dir_all(&dir)?;
    let body = "Notes on the service topology and the runbooks the on-call engineer opens first. "
        .repeat(11);
    for i in 0..topics {
        let path = dir.join(format!("topic-{i:05}.md"));
        let text = format!(
            "---\nname: Topic {i:05}\ndescription: Reference notes for subsystem {i}\ntype: reference\n---\n\n{body}\n"
        );
        std::fs::write(&path, text)?;
        std::fs::File::options()
            .write(true)
            .open(&path)?
            .set_modified(day_ago)?;
    }
    for directory in [&dir, &root.to_path_buf()] {
        std::fs::File::open(directory)?.set_modified(day_ago)?;
    }
    Ok(())
}
