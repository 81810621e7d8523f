//! `cargo xtask scan-latency`: wall time from the recall call to the fast-result publication,
//! through the real recall lifecycle, on real temporary trees (`docs/spec.md#measurements`,
//! "Scan latency").
//!
//! Each size gets a tree of N topics `reference/topic-NNNN.md` with frontmatter and a body of
//! about 920 characters; the last topic a recall reads (a walk takes at most
//! `memory_scan::MAX_FILES_PER_ROOT`) holds a unique codeword the query asks for, and every
//! run checks that the fast result found it. The files are dated a day back, as files of a real
//! tree are, so none falls inside the racy-timestamp margin. A run uses a fresh session and a
//! fresh document cache, as a new process would (the page cache is warm: one untimed run
//! precedes the timed ones). A selector that never answers within the run keeps the recall
//! pending, so the fast result is always published before anything else can settle.
//!
//! Two modes per size: `scan` reads and prepares every file (no catalog); `catalog` starts from
//! a warm persistent catalog of the tree, written once before the timed runs, and checks that
//! every topic came from it.
//!
//! Before each timed run, the row's floor is measured: the system calls its mode cannot avoid,
//! on both cores and with nothing parsed (every topic read whole for `scan`, every topic stat'ed
//! by name in its directory for `catalog`). `floor_ms` is their median; taken in turn with the
//! timed runs, its ratio to `median_ms` holds however loaded the host is.
//!
//! After a row's timed runs, the same number of new processes each make one recall of the row's
//! tree, as a command started by an agent does: `new_process_ms` is their median time from the
//! recall call to the fast result (the first recall of a process also pays for starting the
//! thread pools and touching fresh memory), and `peak_rss_mib` the largest peak resident memory
//! (`VmHWM`, Linux only) among them: what one recall of that tree costs a process, with nothing
//! left over from other rows.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use delivery_telemetry::NullSink;
use memory_scan::{CatalogStore, DocumentCache, MemoryRoots};
use recall_facade::{MemoryRecall, RecallConfig, ScannerChoice, SelectorChoice};
use selector::{MockSelector, Selector};
use serde::Serialize;

mod report;
mod tree;

pub use report::table;
use report::write_chart;
use tree::topics_read;
pub(crate) use tree::{build_tree, codeword_topic};

/// The first-prompt ceiling the figures are compared against, in milliseconds.
const BUDGET_MS: f64 = recall_facade::FIRST_PROMPT_CEILING.as_millis() as f64;
const DEFAULT_RUNS: usize = 7;
pub(crate) const CODEWORD: &str = "quillfeather";

/// One size and mode: every run's figure and their summary.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyRow {
    /// Topics in the tree.
    pub topics: usize,
    /// How the recall read the tree.
    pub mode: &'static str,
    /// Milliseconds from the recall call to the fast result, per timed run.
    pub runs_ms: Vec<f64>,
    /// Median of `runs_ms`.
    pub median_ms: f64,
    /// Largest of `runs_ms`.
    pub worst_ms: f64,
    /// Milliseconds from the recall call to the fast result in new processes, one recall each.
    pub new_process_runs_ms: Vec<f64>,
    /// Median of `new_process_runs_ms`.
    pub new_process_ms: Option<f64>,
    /// The largest peak resident memory of those processes, in MiB (Linux only).
    pub peak_rss_mib: Option<f64>,
    /// Milliseconds of the system calls this mode cannot avoid, per run, each measured just
    /// before the timed run of the same index: every topic file read whole (`scan`) or stat'ed by
    /// name in its directory (`catalog`), listed and done on both cores, nothing parsed. Taken in
    /// turn with the timed runs, so the ratio of the two medians holds however loaded the host is.
    pub floor_runs_ms: Vec<f64>,
    /// Median of `floor_runs_ms`.
    pub floor_ms: Option<f64>,
}

/// What a new process reports of its one recall.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
struct ProcessRun {
    ms: f64,
    peak_rss_mib: Option<f64>,
}

/// How a timed recall reads the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// No catalog: every file is read, parsed and prepared.
    Scan,
    /// A fresh cache that starts from the root's warm persistent catalog.
    Catalog,
}

impl Mode {
    /// The mode named `name` (`scan` or `catalog`), spaces around it allowed.
    fn parse(name: &str) -> Result<Self, String> {
        match name.trim() {
            "scan" => Ok(Mode::Scan),
            "catalog" => Ok(Mode::Catalog),
            other => Err(format!("unknown mode {other:?} (expected scan or catalog)")),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Mode::Scan => "scan",
            Mode::Catalog => "catalog",
        }
    }

    fn cache(self) -> Arc<DocumentCache> {
        Arc::new(match self {
            Mode::Scan => DocumentCache::new(),
            // What a hook or `memrecall recall` starts from: a cache for one recall.
            Mode::Catalog => DocumentCache::for_one_recall(CatalogStore::InRoot),
        })
    }
}

/// The whole report, as `--json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyReport {
    /// `debug` or `release`: the figures depend on it several times over.
    pub profile: &'static str,
    /// The initial ceiling, in milliseconds.
    pub budget_ms: f64,
    /// One row per size and mode.
    pub results: Vec<LatencyRow>,
}

/// The options of `cargo xtask scan-latency`.
#[derive(Debug, clap::Parser)]
#[command(args_override_self = true)]
pub struct ScanLatencyArgs {
    /// Topic counts to measure
    #[arg(
        long,
        value_name = "N,N,...",
        action = clap::ArgAction::Set,
        value_delimiter = ',',
        value_parser = crate::positive,
        default_value = "200,1000,2000,5000,10000,50000"
    )]
    sizes: Vec<usize>,
    /// scan (no catalog), catalog (a warm catalog) or both
    #[arg(
        long,
        value_name = "MODE,...",
        action = clap::ArgAction::Set,
        value_delimiter = ',',
        value_parser = Mode::parse,
        default_value = "scan,catalog"
    )]
    modes: Vec<Mode>,
    /// Timed runs per row, and new processes per row
    #[arg(long, value_name = "N", value_parser = crate::positive, default_value_t = DEFAULT_RUNS)]
    runs: usize,
    /// Print the report as JSON instead of the table
    #[arg(long)]
    json: bool,
}

/// The arguments of the `scan-latency-process` command a measurement starts.
#[derive(Debug, clap::Parser)]
#[command(args_override_self = true)]
pub struct ProcessArgs {
    /// The tree's root.
    root: PathBuf,
    /// `scan` or `catalog`.
    #[arg(value_parser = Mode::parse)]
    mode: Mode,
}

/// Entry point of `cargo xtask scan-latency`.
pub fn main(options: &ScanLatencyArgs) -> Result<()> {
    let this = this_binary()?;
    let report = measure(&options.sizes, &options.modes, options.runs, Some(&this))?;
    let chart = write_chart(&report)?;
    if options.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", table(&report));
        println!("chart: {}", chart.display());
    }
    Ok(())
}

/// The small report `cargo xtask eval` prints (reported, not gated on absolute time).
pub fn run_small_report() -> Result<()> {
    let this = this_binary()?;
    let report = measure(&[200, 1_000], &[Mode::Scan, Mode::Catalog], 3, Some(&this))?;
    print!("{}", table(&report));
    Ok(())
}

/// Entry point of the `scan-latency-process` command a measurement starts for each new-process
/// run: one recall of the tree at `root` in `mode`, reported on stdout as one JSON line.
pub fn process_main(args: &ProcessArgs) -> Result<()> {
    let roots = MemoryRoots {
        project: Some(args.root.clone()),
        user: None,
    };
    let runtime = runtime()?;
    let ms = runtime.block_on(time_to_fast_result(&roots, args.mode))?;
    let run = ProcessRun {
        ms,
        peak_rss_mib: peak_rss_mib(),
    };
    println!("{}", serde_json::to_string(&run)?);
    Ok(())
}

/// The runtime the `memrecall` binary runs recalls on.
fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// The running xtask binary, which new-process runs start again.
fn this_binary() -> Result<PathBuf> {
    std::env::current_exe().context("cannot find the running xtask binary")
}

/// One recall of the tree at `root` in a new process of `binary` (this xtask).
fn new_process_run(binary: &Path, root: &Path, mode: Mode) -> Result<ProcessRun> {
    let output = std::process::Command::new(binary)
        .arg("scan-latency-process")
        .arg(root)
        .arg(mode.name())
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    ensure!(
        output.status.success(),
        "the recall in a new process failed with {}",
        output.status
    );
    serde_json::from_slice(&output.stdout).context("the new process's report does not parse")
}

/// Measures every size; with `binary`, also in new processes of it (see the module documentation).
fn measure(
    sizes: &[usize],
    modes: &[Mode],
    runs: usize,
    binary: Option<&Path>,
) -> Result<LatencyReport> {
    let runtime = runtime()?;
    let mut results = Vec::new();
    for &topics in sizes {
        let tree = tempfile::tempdir()?;
        build_tree(tree.path(), topics)?;
        let roots = MemoryRoots {
            project: Some(tree.path().to_path_buf()),
            user: None,
        };
        for &mode in modes {
            if mode == Mode::Catalog {
                write_catalog(&roots, topics)?;
            }
            flush_writes();
            // One untimed run warms the page cache.
            runtime.block_on(time_to_fast_result(&roots, mode))?;
            let topic_dir = tree.path().join(TOPIC_DIR);
            let mut runs_ms = Vec::with_capacity(runs);
            let mut floor_runs_ms = Vec::with_capacity(runs);
            for _ in 0..runs {
                floor_runs_ms.push(floor(&topic_dir, mode)?);
                runs_ms.push(runtime.block_on(time_to_fast_result(&roots, mode))?);
            }
            let mut row = summarise(topics, mode.name(), runs_ms);
            row.floor_ms = median(&floor_runs_ms);
            row.floor_runs_ms = floor_runs_ms;
            if let Some(binary) = binary {
                let processes = (0..runs)
                    .map(|_| new_process_run(binary, tree.path(), mode))
                    .collect::<Result<Vec<_>>>()?;
                row.new_process_runs_ms = processes.iter().map(|run| run.ms).collect();
                row.new_process_ms = median(&row.new_process_runs_ms);
                row.peak_rss_mib = processes
                    .iter()
                    .filter_map(|run| run.peak_rss_mib)
                    .max_by(f64::total_cmp);
            }
            results.push(row);
        }
    }
    Ok(LatencyReport {
        profile: if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        budget_ms: BUDGET_MS,
        results,
    })
}

fn summarise(topics: usize, mode: &'static str, runs_ms: Vec<f64>) -> LatencyRow {
    LatencyRow {
        topics,
        mode,
        median_ms: median(&runs_ms).unwrap_or_default(),
        worst_ms: runs_ms
            .iter()
            .copied()
            .max_by(f64::total_cmp)
            .unwrap_or_default(),
        runs_ms,
        new_process_runs_ms: Vec::new(),
        new_process_ms: None,
        peak_rss_mib: None,
        floor_runs_ms: Vec::new(),
        floor_ms: None,
    }
}

/// The size of `dir/name`, stat'ed by name in `opened` (`dir`, open) as a catalog scan takes keys.
#[cfg(unix)]
fn stat_size(opened: Option<&std::fs::File>, dir: &Path, name: &std::ffi::OsStr) -> Result<u64> {
    let opened = opened.with_context(|| format!("cannot open {}", dir.display()))?;
    let stat = rustix::fs::statat(opened, name, rustix::fs::AtFlags::empty())?;
    Ok(u64::try_from(stat.st_size).unwrap_or_default())
}

/// The size of `dir/name`, stat'ed by path (no directory handle to stat in elsewhere).
#[cfg(not(unix))]
fn stat_size(_opened: Option<&std::fs::File>, dir: &Path, name: &std::ffi::OsStr) -> Result<u64> {
    Ok(std::fs::symlink_metadata(dir.join(name))?.len())
}

/// The directory below a benchmark tree's root that holds its topics.
const TOPIC_DIR: &str = "reference";

/// One measurement of `mode`'s floor (see [`LatencyRow::floor_runs_ms`]) over the topic files in
/// `dir`, in milliseconds.
fn floor(dir: &Path, mode: Mode) -> Result<f64> {
    use rayon::prelude::*;
    let started = Instant::now();
    let names: Vec<std::ffi::OsString> = std::fs::read_dir(dir)?
        .map(|entry| entry.map(|entry| entry.file_name()))
        .collect::<std::io::Result<_>>()?;
    let bytes: u64 = match mode {
        Mode::Scan => names
            .par_iter()
            .map(|name| Ok(std::fs::read(dir.join(name))?.len() as u64))
            .sum::<Result<u64>>()?,
        Mode::Catalog => names
            .par_iter()
            .map_init(
                || std::fs::File::open(dir).ok(),
                |opened, name| stat_size(opened.as_ref(), dir, name),
            )
            .sum::<Result<u64>>()?,
    };
    ensure!(
        bytes > 0,
        "the floor of {} found no topic bytes",
        dir.display()
    );
    Ok(started.elapsed().as_secs_f64() * 1_000.0)
}

pub(crate) fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => None,
        n if n % 2 == 1 => Some(sorted[n / 2]),
        n => Some(f64::midpoint(sorted[n / 2 - 1], sorted[n / 2])),
    }
}

/// Writes the tree's catalog and checks that a fresh cache serves every topic from it and finds
/// nothing to write back: the catalog of a tree in use, which no timed recall rewrites.
fn write_catalog(roots: &MemoryRoots, topics: usize) -> Result<()> {
    let cache = DocumentCache::with_catalog();
    cache.scan_recall(roots)?;
    for write in cache.persist_catalogs() {
        write
            .outcome
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", write.path.display()))?;
    }
    let checker = DocumentCache::with_catalog();
    let check = checker.scan_recall(roots)?;
    ensure!(
        check.report.from_catalog == topics_read(topics),
        "only {} of {topics} topics came from the catalog",
        check.report.from_catalog
    );
    ensure!(
        checker.persist_catalogs().is_empty(),
        "a recall from the catalog just written would write it again"
    );
    Ok(())
}

/// Writes the tree and the catalog just written back to disk, untimed. A tree in use was written
/// long ago; left dirty, this one would be written back by the kernel during the timed runs, which
/// then share the CPU with the file system's journal. Best effort: without `sync`, nothing waits.
fn flush_writes() {
    let _ = std::process::Command::new("sync").status();
}

/// `VmHWM` of this process, in MiB.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib / 1024.0)
}

/// One timed recall: a fresh session (fresh document cache) from the call to the fast result.
///
/// A new process starts with nothing to tear down, so neither may a timed run: after the result,
/// this waits (untimed) until the cancelled recall has let go of its cache and then drops the
/// cache here, instead of letting the next run share the CPU with that teardown.
async fn time_to_fast_result(roots: &MemoryRoots, mode: Mode) -> Result<f64> {
    // A selector slower than any run keeps the recall pending behind its fast result.
    let selector: Arc<dyn Selector> =
        Arc::new(MockSelector::answering(Vec::new(), Duration::from_secs(30)));
    let cache = mode.cache();
    let mut config = RecallConfig::new(roots.clone());
    config.options.selector = SelectorChoice::Custom(selector);
    config.telemetry = Arc::new(NullSink);
    config.scanner = ScannerChoice::Shared(cache.clone());
    let mut session = MemoryRecall::new(config)?;
    session.begin_turn(&format!("where did we write down the {CODEWORD}?"), &[]);
    ensure!(
        session.wait_published(Duration::from_mins(1)).await,
        "no fast result within 60 s"
    );
    let state = session.latest_recall().context("no recall state")?;
    let fast = state
        .fast
        .context("the recall settled without publishing a fast result")?;
    ensure!(
        fast.documents
            .first()
            .is_some_and(|d| d.body().contains(CODEWORD)),
        "the fast result did not find the codeword topic"
    );
    let published_after = fast.published_after;
    drop(fast);
    session.shutdown();
    let released = tokio::time::timeout(Duration::from_secs(10), async {
        while Arc::strong_count(&cache) > 1 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    ensure!(
        released.is_ok(),
        "the cancelled recall still held its cache after 10 s"
    );
    drop(cache);
    Ok(published_after.as_secs_f64() * 1_000.0)
}

#[cfg(test)]
mod tests;
