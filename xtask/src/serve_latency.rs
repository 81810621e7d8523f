//! `cargo xtask serve-latency`: what `memrecall serve` costs on the prompt path, warm.
//!
//! Each size gets the scan-latency tree (N topics, the last holding a codeword) where Claude
//! Code keeps a project's memory, under a temporary `HOME`, for a temporary git repository, and
//! a server of the release binary of its own. Untimed prompts (each in a new session, so nothing
//! is excluded as already delivered) warm the server: the first reads every file.
//! Then each run measures:
//! - the hook client's wall time: one `memrecall hook` process, from start to exit, with the
//!   prompt event on stdin (the server does the recall), and whether it delivered the
//!   codeword's topic (it cannot when the fast result comes after the 100 ms ceiling);
//! - the server's own recall-to-fast-result time (`fast_ms` in its answer to the same prompt
//!   sent straight to the socket) and its time on the request (`handled_ms`).
//!
//! The server's peak resident memory is asked of the server at the end (`peak_rss_kib` in its
//! answer to `status`, which `memrecall server status` shows), also per 10,000 topics.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};

use memory_scan::CacheFootprint;
use serde_json::{Value, json};

use crate::scan_latency::{CODEWORD, build_tree, codeword_topic, median};

/// The version of the server's socket protocol this report speaks
/// (`crates/recall-server/src/protocol.rs`).
const PROTOCOL: u32 = 3;

const DEFAULT_RUNS: usize = 21;
/// How long warming a server may take at most (the first scan of a large cold tree is slow).
const WARM_LIMIT: Duration = Duration::from_mins(10);

/// The options of `cargo xtask serve-latency`.
#[derive(Debug, clap::Parser)]
#[command(args_override_self = true)]
pub struct ServeLatencyArgs {
    /// Tree sizes to measure, in topics
    #[arg(
        long,
        value_name = "N,N,...",
        action = clap::ArgAction::Set,
        value_delimiter = ',',
        value_parser = crate::positive,
        default_value = "1000,10000,50000,100000"
    )]
    sizes: Vec<usize>,
    /// Timed runs per size
    #[arg(long, value_name = "N", value_parser = crate::positive, default_value_t = DEFAULT_RUNS)]
    runs: usize,
}

/// The targets on a 2-core machine: (hook client wall, server recall to fast result), by size.
fn targets(topics: usize) -> (Option<f64>, Option<f64>) {
    match topics {
        1_000 => (Some(5.0), None),
        50_000 => (None, Some(30.0)),
        100_000 => (None, Some(60.0)),
        _ => (None, None),
    }
}

/// The server's memory after the timed runs.
struct Memory {
    peak_mib: Option<f64>,
    resident_mib: Option<f64>,
    footprint: CacheFootprint,
}

struct Row {
    topics: usize,
    hook_ms: f64,
    hook_worst_ms: f64,
    fast_ms: f64,
    handled_ms: f64,
    memory: Memory,
    /// The bytes of the tree's topic files, in MiB.
    tree_mib: f64,
    /// Timed hook runs whose output carried the codeword's topic.
    delivered: usize,
    runs: usize,
}

pub fn main(args: &ServeLatencyArgs) -> Result<()> {
    let ServeLatencyArgs { ref sizes, runs } = *args;
    let binary = crate::hook_latency::build_release_binary()?;
    println!("memrecall serve, warm, {runs} runs per size (medians; worst hook wall in brackets)");
    println!(
        "{:>7} | {:>22} | {:>9} | {:>17} | {:>10} | {:>8} | {:>9} | {:>12} | {:>14}",
        "topics",
        "hook wall ms",
        "delivered",
        "server fast ms",
        "handled ms",
        "tree MiB",
        "peak MiB",
        "peak / tree",
        "MiB per 10,000"
    );
    let mut rows = Vec::new();
    for &topics in sizes {
        let row = measure(&binary, topics, runs)?;
        let (hook_target, fast_target) = targets(topics);
        let verdict = |value: f64, target: Option<f64>| {
            target.map_or_else(String::new, |t| {
                let met = if value <= t { "met" } else { "missed" };
                format!(" (≤ {t:.0}: {met})")
            })
        };
        let peak = row
            .memory
            .peak_mib
            .map_or_else(|| "unknown".to_owned(), |m| format!("{m:.1}"));
        let ratio = row.memory.peak_mib.map_or_else(
            || "unknown".to_owned(),
            |m| format!("{:.2}", m / row.tree_mib),
        );
        let per = row.memory.peak_mib.map_or_else(
            || "unknown".to_owned(),
            |m| {
                format!(
                    "{:.1}",
                    m * 10_000.0 / f64::from(u32::try_from(row.topics).unwrap_or(u32::MAX))
                )
            },
        );
        println!(
            "{:>7} | {:>5.1} [{:>5.1}]{:<10} | {:>9} | {:>5.1}{:<12} | {:>10.1} | {:>8.1} | {:>9} | {:>12} | {:>14}",
            row.topics,
            row.hook_ms,
            row.hook_worst_ms,
            verdict(row.hook_ms, hook_target),
            format!("{}/{}", row.delivered, row.runs),
            row.fast_ms,
            verdict(row.fast_ms, fast_target),
            row.handled_ms,
            row.tree_mib,
            peak,
            ratio,
            per
        );
        rows.push(row);
    }
    print_footprints(&rows);
    Ok(())
}

/// Per size, what the server holds per topic after the timed runs: each part of its caches, all
/// of them, its resident memory, and the rest (code, stacks, the watcher, what the allocator
/// keeps beside what is in use).
fn print_footprints(rows: &[Row]) {
    println!();
    println!("bytes per topic after the runs: the caches by part, then the whole process");
    println!(
        "{:>7} | {:>6} | {:>10} | {:>7} | {:>6} | {:>8} | {:>7} | {:>7} | {:>8} | {:>6}",
        "topics",
        "text",
        "normalised",
        "index",
        "paths",
        "listings",
        "records",
        "counted",
        "resident",
        "rest"
    );
    for row in rows {
        let f = &row.memory.footprint;
        let topics = row.topics.max(1) as f64;
        let per = |bytes: usize| bytes as f64 / topics;
        let resident = row
            .memory
            .resident_mib
            .map(|mib| mib * 1_048_576.0 / topics);
        let show =
            |value: Option<f64>| value.map_or_else(|| "unknown".to_owned(), |v| format!("{v:.0}"));
        println!(
            "{:>7} | {:>6.0} | {:>10.0} | {:>7.0} | {:>6.0} | {:>8.0} | {:>7.0} | {:>7.0} | {:>8} | {:>6}",
            row.topics,
            per(f.document_text),
            per(f.prepared_text),
            per(f.term_index),
            per(f.paths),
            per(f.listings),
            per(f.records),
            per(f.total()),
            show(resident),
            show(resident.map(|r| r - per(f.total()))),
        );
    }
}

/// One size's world: the tree, the environment and the running server.
struct World {
    _dir: tempfile::TempDir,
    base: PathBuf,
    binary: PathBuf,
    server: Option<Child>,
}

impl World {
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .args(args)
            .current_dir(self.base.join("repo"))
            .env_clear()
            .env("HOME", self.base.join("home"))
            .env("MEMRECALL_HOME", self.base.join("mr"))
            .env("XDG_RUNTIME_DIR", self.base.join("xdg"));
        command
    }

    fn socket(&self) -> PathBuf {
        self.base.join("xdg/memrecall/serve.sock")
    }

    fn event(&self, session: &str) -> String {
        json!({
            "session_id": session,
            "transcript_path": "/dev/null",
            "cwd": self.base.join("repo"),
            "hook_event_name": "UserPromptSubmit",
            "prompt": format!("what is the {CODEWORD} about?"),
        })
        .to_string()
    }

    /// One hook process: the event on stdin, its stdout back.
    fn hook(&self, session: &str) -> Result<String> {
        let mut child = self
            .command(&["hook", "--agent", "claude-code"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("cannot start the hook")?;
        child
            .stdin
            .take()
            .context("no stdin")?
            .write_all(self.event(session).as_bytes())?;
        let output = child.wait_with_output()?;
        ensure!(
            output.status.success(),
            "the hook exited with {}",
            output.status
        );
        Ok(String::from_utf8(output.stdout)?)
    }

    /// One event straight to the socket: the server's delivery.
    fn request(&self, request: &Value) -> Result<Value> {
        self.ask(request, "delivery")
    }

    /// One request straight to the socket: the server's answer, which must be of `kind`.
    fn ask(&self, request: &Value, kind: &str) -> Result<Value> {
        let mut stream = UnixStream::connect(self.socket()).context("cannot connect")?;
        stream.write_all(format!("{request}\n").as_bytes())?;
        let mut line = String::new();
        BufReader::new(&stream).read_line(&mut line)?;
        let answer: Value = serde_json::from_str(&line).context("the answer is not JSON")?;
        ensure!(answer["kind"] == kind, "unexpected answer {answer}");
        Ok(answer)
    }

    /// The same prompt sent straight to the socket, in a new session: the server's time from
    /// the recall's start to its fast result, and its time on the request. A fast result later
    /// than the ceiling is read from the session's tool-result answers.
    fn server_times(&self, session: &str, limit: Duration) -> Result<(f64, f64)> {
        let answer = self.request(&json!({
            "v": PROTOCOL,
            "kind": "event",
            "agent": "claude-code",
            "session": session,
            "point": "initial",
            "query": format!("what is the {CODEWORD} about?"),
            "cwd": self.base.join("repo"),
            "env": {
                "HOME": self.base.join("home"),
                "MEMRECALL_HOME": self.base.join("mr"),
            },
        }))?;
        let handled = answer["handled_ms"].as_f64().unwrap_or_default();
        let started = Instant::now();
        let mut fast = answer["fast_ms"].as_f64();
        while fast.is_none() {
            ensure!(started.elapsed() < limit, "no fast result within {limit:?}");
            std::thread::sleep(Duration::from_millis(5));
            fast = self.request(&json!({
                "v": PROTOCOL,
                "kind": "event",
                "agent": "claude-code",
                "session": session,
                "point": "tool_result",
            }))?["fast_ms"]
                .as_f64();
        }
        Ok((fast.unwrap_or_default(), handled))
    }

    /// The server's memory as its `status` reports it: peak and current resident memory in MiB
    /// (unknown where the server cannot read them) and what its caches hold.
    fn memory(&self) -> Result<Memory> {
        let status = self.ask(&json!({"v": PROTOCOL, "kind": "status"}), "status")?;
        let mib = |field: &str| status[field].as_f64().map(|kib| kib / 1024.0);
        Ok(Memory {
            peak_mib: mib("peak_rss_kib"),
            resident_mib: mib("rss_kib"),
            footprint: serde_json::from_value(status["footprint"].clone())
                .context("the status has no cache footprint")?,
        })
    }
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = self.command(&["stop"]).output();
        if let Some(mut server) = self.server.take() {
            let _ = server.kill();
            let _ = server.wait();
        }
    }
}

fn measure(binary: &Path, topics: usize, runs: usize) -> Result<Row> {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir()?;
    let base = dir.path().canonicalize()?;
    let repo = base.join("repo");
    std::fs::create_dir_all(repo.join(".git"))?;
    std::fs::create_dir_all(base.join("mr"))?;
    std::fs::create_dir_all(base.join("xdg"))?;
    std::fs::set_permissions(base.join("xdg"), std::fs::Permissions::from_mode(0o700))?;
    std::fs::write(
        base.join("mr/config.toml"),
        "[serve]\nidle_exit = \"10m\"\n",
    )?;
    let memory = crate::sandbox::claude_code_memory(&repo, &base.join("home"))?;
    std::fs::create_dir_all(&memory)?;
    build_tree(&memory, topics)?;
    let tree_mib = tree_bytes(&memory)? as f64 / (1024.0 * 1024.0);
    let mut world = World {
        _dir: dir,
        base,
        binary: binary.to_path_buf(),
        server: None,
    };
    world.server = Some(
        world
            .command(&["serve"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .context("cannot start the server")?,
    );
    let expected = format!("Topic {:05}", codeword_topic(topics));
    let started = Instant::now();
    while UnixStream::connect(world.socket()).is_err() {
        ensure!(started.elapsed() < WARM_LIMIT, "the server never listened");
        std::thread::sleep(Duration::from_millis(10));
    }
    // The first recall reads every file; the next ones start from what it cached.
    world.server_times("warm-0", WARM_LIMIT)?;
    for i in 1..4 {
        world.server_times(&format!("warm-{i}"), WARM_LIMIT)?;
        world.hook(&format!("warm-hook-{i}"))?;
    }
    let (mut hook, mut fast, mut handled) = (Vec::new(), Vec::new(), Vec::new());
    let mut delivered = 0;
    for i in 0..runs {
        let started = Instant::now();
        let stdout = world.hook(&format!("hook-{i}"))?;
        hook.push(started.elapsed().as_secs_f64() * 1_000.0);
        delivered += usize::from(stdout.contains(&expected));
        let (fast_ms, handled_ms) = world.server_times(&format!("ask-{i}"), WARM_LIMIT)?;
        fast.push(fast_ms);
        handled.push(handled_ms);
    }
    Ok(Row {
        topics,
        hook_ms: median(&hook).unwrap_or_default(),
        hook_worst_ms: hook.iter().copied().fold(0.0, f64::max),
        fast_ms: median(&fast).unwrap_or_default(),
        handled_ms: median(&handled).unwrap_or_default(),
        memory: world.memory()?,
        tree_mib,
        delivered,
        runs,
    })
}

/// The bytes of the regular files below `dir`.
fn tree_bytes(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            total += tree_bytes(&entry.path())?;
        } else if kind.is_file() {
            total += entry.metadata()?.len();
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::{ServeLatencyArgs, tree_bytes};

    #[test]
    fn the_tree_size_counts_the_files_in_every_directory_below_the_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
        std::fs::write(dir.path().join("top.md"), [0u8; 10]).unwrap();
        std::fs::write(dir.path().join("a/b/deep.md"), [0u8; 32]).unwrap();

        assert_eq!(tree_bytes(dir.path()).unwrap(), 42);
    }

    #[test]
    fn sizes_and_runs_default_to_the_serve_sizes_and_take_what_is_given() {
        let defaults = ServeLatencyArgs::try_parse_from(["serve-latency"]).unwrap();
        let given =
            ServeLatencyArgs::try_parse_from(["serve-latency", "--sizes", "1000", "--runs", "3"])
                .unwrap();

        assert_eq!(
            (defaults.sizes, defaults.runs),
            (vec![1_000, 10_000, 50_000, 100_000], 21)
        );
        assert_eq!((given.sizes, given.runs), (vec![1_000], 3));
        assert!(ServeLatencyArgs::try_parse_from(["serve-latency", "--runs", "0"]).is_err());
    }
}
