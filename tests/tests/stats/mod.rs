//! The telemetry history under `$MEMRECALL_HOME/telemetry` and `memrecall stats` end to end:
//! real recalls and hooks writing it, concurrent processes sharing it, and the summary and
//! chart of a directory of known events.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::{Tree, binary};

const QUERY: &str = "release checklist";

/// Every `*.jsonl` file of `dir`, in name order.
fn telemetry_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    files
}

/// Every line of every telemetry file of `dir`, each parsed as JSON (a torn line fails).
fn telemetry_lines(dir: &Path) -> Vec<Value> {
    telemetry_files(dir)
        .iter()
        .flat_map(|file| {
            std::fs::read_to_string(file)
                .unwrap()
                .lines()
                .map(|line| {
                    serde_json::from_str(line).unwrap_or_else(|e| {
                        panic!("torn line in {}: {e}: {line:?}", file.display())
                    })
                })
                .collect::<Vec<Value>>()
        })
        .collect()
}

fn terminal_events(lines: &[Value]) -> usize {
    lines
        .iter()
        .filter(|l| l["event"] == "memory.recall.delivery" && l["phase"] == "refined")
        .count()
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

// ---------------------------------------------------------------------------------------------
// recording

#[test]
fn recall_runs_record_their_events_in_the_homes_telemetry_directory() {
    let tree = Tree::standard();
    tree.run_with_roots("recall", QUERY, &[]).success();
    tree.run_with_roots("recall", QUERY, &["--tool-using"])
        .success();

    let lines = telemetry_lines(&tree.base().join("home/telemetry"));
    assert_eq!(terminal_events(&lines), 2, "{lines:?}");
    assert!(
        lines.iter().any(|l| l["event"] == "memory.recall"),
        "{lines:?}"
    );
    for line in &lines {
        let time = line["time"].as_str().unwrap_or_default();
        assert!(
            time.len() == 24 && time.ends_with('Z'),
            "each line has its UTC time: {line}"
        );
    }
}

#[cfg(unix)]
#[test]
fn the_telemetry_directory_and_files_are_private_to_the_user() {
    let tree = Tree::standard();
    tree.run_with_roots("recall", QUERY, &[]).success();
    let dir = tree.base().join("home/telemetry");
    assert_eq!(mode(&dir), 0o700);
    let files = telemetry_files(&dir);
    assert!(!files.is_empty());
    for file in files {
        assert_eq!(mode(&file), 0o600, "{}", file.display());
    }
}

#[test]
fn the_config_can_turn_recording_off() {
    let tree = Tree::standard();
    tree.write("home/config.toml", "[telemetry]\nrecord = false\n");
    tree.run_with_roots("recall", QUERY, &[]).success();
    assert!(!tree.base().join("home/telemetry").exists());
}

#[test]
fn a_telemetry_file_on_the_command_line_is_written_beside_the_history() {
    let tree = Tree::standard();
    let file = tree.base().join("events.jsonl");
    let spec = format!("jsonl:{}", file.display());
    tree.run_with_roots("recall", QUERY, &["--telemetry", &spec])
        .success();
    let asked: Vec<Value> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let history = telemetry_lines(&tree.base().join("home/telemetry"));
    assert_eq!(terminal_events(&asked), 1);
    assert_eq!(terminal_events(&history), 1);
}

#[cfg(unix)]
#[test]
fn a_symlinked_telemetry_directory_is_not_written_through_and_recall_still_succeeds() {
    let tree = Tree::standard();
    let elsewhere = tree.base().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(tree.base().join("home")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, tree.base().join("home/telemetry")).unwrap();

    let run = tree.run_with_roots("recall", QUERY, &[]);
    run.success();
    assert!(run.stderr.contains("symbolic link"), "{}", run.stderr);
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

#[test]
fn a_hook_run_records_its_recall() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let home = base.join("mr");
    let memories = home.join("memories");
    std::fs::create_dir_all(&memories).unwrap();
    std::fs::create_dir_all(base.join("home")).unwrap();
    std::fs::write(
        memories.join("release.md"),
        "---\nname: Release checklist\ndescription: Steps before a release\ntype: project\n---\n\nTag, build, publish.\n",
    )
    .unwrap();
    let stdin = json!({
        "session_id": "s1",
        "cwd": base,
        "hook_event_name": "UserPromptSubmit",
        "prompt": QUERY,
    });
    let mut child = Command::new(binary())
        .args(["hook", "--agent", "claude-code", "--layout", "memrecall"])
        .current_dir(&base)
        .env_clear()
        .env("HOME", base.join("home"))
        .env("MEMRECALL_HOME", &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.to_string().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("Release checklist"),
        "the hook delivered: {stdout}"
    );

    let lines = telemetry_lines(&home.join("telemetry"));
    assert_eq!(terminal_events(&lines), 1, "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l["delivery_point"] == "initial" && l["docs_selected"] == 1),
        "{lines:?}"
    );
}

#[test]
fn concurrent_recall_processes_keep_every_line_whole() {
    let tree = Tree::standard();
    let processes = 6;
    let children: Vec<_> = (0..processes)
        .map(|_| {
            let mut args = vec!["recall".to_owned(), QUERY.to_owned()];
            args.extend(tree.root_args());
            args.push("--tool-using".to_owned());
            Command::new(binary())
                .args(&args)
                .current_dir(tree.base())
                .env("MEMRECALL_HOME", tree.base().join("home"))
                .env_remove("OPENAI_API_KEY")
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    // `telemetry_lines` fails on any torn or interleaved line.
    let lines = telemetry_lines(&tree.base().join("home/telemetry"));
    assert_eq!(terminal_events(&lines), processes, "{lines:?}");
}

#[test]
fn a_full_history_drops_its_oldest_file_and_keeps_the_total_bounded() {
    let tree = Tree::standard();
    let dir = tree.base().join("home/telemetry");
    std::fs::create_dir_all(&dir).unwrap();
    // The binary keeps 16 files of 1 MiB: fill all 16, on days long past.
    let full = vec![b'\n'; 1024 * 1024];
    for day in 1..=16 {
        std::fs::write(dir.join(format!("2026-01-{day:02}.0000.jsonl")), &full).unwrap();
    }
    tree.run_with_roots("recall", QUERY, &[]).success();

    let files = telemetry_files(&dir);
    assert_eq!(files.len(), 16, "{files:?}");
    assert!(!dir.join("2026-01-01.0000.jsonl").exists());
    assert!(dir.join("2026-01-02.0000.jsonl").exists());
    let total: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    assert!(total <= 16 * (1024 * 1024 + 4096), "{total} bytes");
}

// ---------------------------------------------------------------------------------------------
// stats over known events

/// One recall of the fixture, as the test decides it.
struct Known {
    fast_ms: Option<f64>,
    strategy: &'static str,
    duration_ms: f64,
    /// `(delivery_point, discard_reason)` of the terminal event.
    terminal: (&'static str, Option<&'static str>),
}

/// Twenty recalls with varied strategies, fast results, outcomes and times (some over budget).
fn known_recalls() -> Vec<Known> {
    (0..20)
        .map(|i| {
            let f = f64::from(i);
            Known {
                fast_ms: (i % 2 == 0).then_some(2.0 + f * 3.5),
                strategy: if i % 3 == 0 { "model" } else { "heuristic" },
                duration_ms: 12.0 * (f + 1.0),
                terminal: match i % 5 {
                    0 => ("discarded", Some("new_query")),
                    1 => ("discarded", Some("no_safe_delivery_point")),
                    2 => ("initial", None),
                    3 => ("discarded", Some("abort")),
                    _ => ("tool_result", None),
                },
            }
        })
        .collect()
}

/// The fixture's lines: per recall, a fast delivery when it had a fast result, the
/// `memory.recall` event and the terminal event, one second apart from 10:00 UTC on `day`.
fn fixture_lines(recalls: &[Known], day: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, recall) in recalls.iter().enumerate() {
        let time = format!("{day}T10:{:02}:{:02}.000Z", i / 60, i % 60);
        if let Some(fast) = recall.fast_ms {
            lines.push(json!({
                "time": time, "event": "memory.recall.delivery", "phase": "fast",
                "delivery_point": "initial", "discard_reason": null, "strategy": "heuristic",
                "docs_selected": 2, "latency_ms": fast, "initial_wait": "fast"
            }));
        }
        lines.push(json!({
            "time": time, "event": "memory.recall", "query_length": 17, "docs_scanned": 40,
            "docs_selected": 2, "strategy": recall.strategy, "duration_ms": recall.duration_ms,
            "scan_duration_ms": 1.5, "fast_duration_ms": recall.fast_ms,
            "selector_duration_ms": null
        }));
        lines.push(json!({
            "time": time, "event": "memory.recall.delivery", "phase": "refined",
            "delivery_point": recall.terminal.0, "discard_reason": recall.terminal.1,
            "strategy": recall.strategy, "docs_selected": 2, "latency_ms": recall.duration_ms,
            "initial_wait": "settled"
        }));
    }
    lines.iter().map(Value::to_string).collect()
}

fn write_fixture(tree: &Tree, name: &str, lines: &[String]) {
    tree.write(
        &format!("home/telemetry/{name}"),
        &(lines.join("\n") + "\n"),
    );
}

/// The nearest-rank percentile by its definition: the smallest value with at least `p`% of the
/// values at or below it.
fn nearest_rank(values: &[f64], p: f64) -> f64 {
    let n = values.len() as f64;
    let mut candidates: Vec<f64> = values
        .iter()
        .copied()
        .filter(|&v| values.iter().filter(|&&w| w <= v).count() as f64 * 100.0 >= p * n)
        .collect();
    candidates.sort_by(f64::total_cmp);
    candidates[0]
}

fn stats_json(tree: &Tree, extra: &[&str]) -> Value {
    let mut args = vec!["stats", "--json"];
    args.extend(extra);
    let run = tree.run(&args);
    run.success();
    run.json()
}

#[test]
fn stats_counts_recalls_and_delivery_rates_by_phase_strategy_and_point() {
    let tree = Tree::new();
    let recalls = known_recalls();
    write_fixture(
        &tree,
        "2026-12-02.0000.jsonl",
        &fixture_lines(&recalls, "2026-12-02"),
    );

    let summary = stats_json(&tree, &[]);
    assert_eq!(summary["recalls"], recalls.len());
    let mut expected: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for recall in &recalls {
        if recall.fast_ms.is_some() {
            *expected
                .entry(("fast".into(), "heuristic".into(), "initial".into()))
                .or_default() += 1;
        }
        *expected
            .entry((
                "refined".into(),
                recall.strategy.into(),
                recall.terminal.0.into(),
            ))
            .or_default() += 1;
    }
    let mut seen = BTreeMap::new();
    for row in summary["deliveries"].as_array().unwrap() {
        let key = (
            row["phase"].as_str().unwrap().to_owned(),
            row["strategy"].as_str().unwrap().to_owned(),
            row["delivery_point"].as_str().unwrap().to_owned(),
        );
        let count = usize::try_from(row["count"].as_u64().unwrap()).unwrap();
        let share = row["share"].as_f64().unwrap();
        assert!(
            (share - count as f64 / recalls.len() as f64).abs() < 1e-9,
            "{row}"
        );
        seen.insert(key, count);
    }
    assert_eq!(seen, expected);
}

#[test]
fn stats_counts_each_discard_reason() {
    let tree = Tree::new();
    let recalls = known_recalls();
    write_fixture(
        &tree,
        "2026-12-02.0000.jsonl",
        &fixture_lines(&recalls, "2026-12-02"),
    );

    let summary = stats_json(&tree, &[]);
    let mut expected: BTreeMap<String, u64> = BTreeMap::new();
    for reason in recalls.iter().filter_map(|r| r.terminal.1) {
        *expected.entry(reason.to_owned()).or_default() += 1;
    }
    let seen: BTreeMap<String, u64> = summary["discard_reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            (
                row["reason"].as_str().unwrap().to_owned(),
                row["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(seen, expected);
}

#[test]
fn stats_gives_nearest_rank_latency_percentiles_and_the_count_within_budget() {
    let tree = Tree::new();
    let recalls = known_recalls();
    write_fixture(
        &tree,
        "2026-12-02.0000.jsonl",
        &fixture_lines(&recalls, "2026-12-02"),
    );

    let summary = stats_json(&tree, &[]);
    let fast: Vec<f64> = recalls.iter().filter_map(|r| r.fast_ms).collect();
    let settled = |strategy| -> Vec<f64> {
        recalls
            .iter()
            .filter(|r| r.strategy == strategy)
            .map(|r| r.duration_ms)
            .collect()
    };
    let delivered: Vec<f64> = fast
        .iter()
        .copied()
        .chain(
            recalls
                .iter()
                .filter(|r| r.terminal.0 != "discarded")
                .map(|r| r.duration_ms),
        )
        .collect();
    let expected = [
        ("fast result", fast),
        ("heuristic result", settled("heuristic")),
        ("model answer", settled("model")),
        ("delivered", delivered),
    ];
    let rows = summary["latency"].as_array().unwrap();
    assert_eq!(rows.len(), expected.len(), "{rows:?}");
    for ((name, values), row) in expected.iter().zip(rows) {
        assert_eq!(row["name"], *name);
        assert_eq!(row["count"], values.len(), "{name}");
        for (field, p) in [("p50_ms", 50.0), ("p90_ms", 90.0), ("p99_ms", 99.0)] {
            assert_eq!(
                row[field].as_f64(),
                Some(nearest_rank(values, p)),
                "{name} {field}"
            );
        }
        let within = values.iter().filter(|&&v| v <= 100.0).count();
        assert_eq!(row["within_budget"], within, "{name}");
    }
    assert_eq!(summary["budget_ms"], 100.0);
}

#[test]
fn stats_text_shows_the_recalls_and_each_delivery_row() {
    let tree = Tree::new();
    let recalls = known_recalls();
    write_fixture(
        &tree,
        "2026-12-02.0000.jsonl",
        &fixture_lines(&recalls, "2026-12-02"),
    );

    let run = tree.run(&["stats"]);
    run.success();
    let fast = recalls.iter().filter(|r| r.fast_ms.is_some()).count();
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with(&format!("recalls: {} ", recalls.len()))),
        "{}",
        run.stdout
    );
    let share = format!("{:.1}%", fast as f64 * 100.0 / recalls.len() as f64);
    assert!(
        run.stdout.lines().any(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words == ["fast", "heuristic", "initial", &fast.to_string(), &share]
        }),
        "{}",
        run.stdout
    );
}

#[test]
fn stats_since_leaves_out_older_events() {
    let tree = Tree::new();
    let recalls = known_recalls();
    write_fixture(
        &tree,
        "2026-11-20.0000.jsonl",
        &fixture_lines(&recalls[..5], "2026-11-20"),
    );
    write_fixture(
        &tree,
        "2026-12-02.0000.jsonl",
        &fixture_lines(&recalls, "2026-12-02"),
    );

    assert_eq!(stats_json(&tree, &[])["recalls"], recalls.len() + 5);
    let since = stats_json(&tree, &["--since", "2026-12-01"]);
    assert_eq!(since["recalls"], recalls.len());
    assert_eq!(since["since"], "2026-12-01T00:00:00Z");
}

#[test]
fn stats_since_a_duration_counts_only_recent_events() {
    let tree = Tree::new();
    let recalls = known_recalls();
    // Long ago: nothing within the last 7 days.
    write_fixture(
        &tree,
        "2020-01-01.0000.jsonl",
        &fixture_lines(&recalls, "2020-01-01"),
    );
    assert_eq!(stats_json(&tree, &["--since", "7d"])["recalls"], 0);
    assert_eq!(
        stats_json(&tree, &["--since", "100000d"])["recalls"],
        recalls.len()
    );
}

#[test]
fn a_since_that_is_neither_a_duration_nor_a_date_is_a_command_line_error() {
    let tree = Tree::new();
    let run = tree.run(&["stats", "--since", "last tuesday"]);
    let message = run.one_line_failure(2);
    assert!(message.contains("--since"), "{message}");
}

#[test]
fn malformed_lines_and_unreadable_files_are_reported_and_skipped() {
    let tree = Tree::new();
    let recalls = known_recalls();
    let mut lines = fixture_lines(&recalls, "2026-12-02");
    lines.insert(
        3,
        "{\"time\":\"2026-12-02T10:00:00Z\",\"event\":\"memory.recall\"".into(),
    );
    lines.insert(7, "not json at all".into());
    write_fixture(&tree, "2026-12-02.0000.jsonl", &lines);
    std::fs::write(
        tree.base().join("home/telemetry/2026-12-03.0000.jsonl"),
        b"\xff\xfe\n",
    )
    .unwrap();
    // A directory with a telemetry file's name cannot be read as one.
    std::fs::create_dir_all(tree.base().join("home/telemetry/2026-12-04.0000.jsonl")).unwrap();

    let summary = stats_json(&tree, &[]);
    assert_eq!(summary["recalls"], recalls.len());
    assert_eq!(summary["skipped"]["malformed_lines"], 3);
    let unreadable = summary["skipped"]["unreadable_files"].as_array().unwrap();
    assert_eq!(unreadable.len(), 1, "{unreadable:?}");
    assert!(
        unreadable[0]["place"]
            .as_str()
            .unwrap()
            .ends_with("2026-12-04.0000.jsonl")
    );
    let places: Vec<&str> = summary["skipped"]["first_malformed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["place"].as_str().unwrap())
        .collect();
    assert!(places[0].ends_with("2026-12-02.0000.jsonl:4"), "{places:?}");
    assert!(places[1].ends_with("2026-12-02.0000.jsonl:8"), "{places:?}");
    assert!(places[2].ends_with("2026-12-03.0000.jsonl:1"), "{places:?}");

    let text = tree.run(&["stats"]);
    text.success();
    assert!(
        text.stdout
            .contains("skipped: 3 malformed line(s), 1 unreadable file(s)"),
        "{}",
        text.stdout
    );
}

#[test]
fn stats_on_a_missing_directory_says_so_in_one_line_and_succeeds() {
    let tree = Tree::new();
    let run = tree.run(&["stats"]);
    run.success();
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    assert!(
        run.stdout.starts_with("no telemetry recorded yet: "),
        "{}",
        run.stdout
    );
}

#[test]
fn stats_on_an_empty_directory_says_so_in_one_line_and_succeeds() {
    let tree = Tree::new();
    std::fs::create_dir_all(tree.base().join("home/telemetry")).unwrap();
    let run = tree.run(&["stats"]);
    run.success();
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    assert!(
        run.stdout.starts_with("no telemetry events in "),
        "{}",
        run.stdout
    );
}

#[test]
fn stats_svg_draws_each_latency_curve_and_the_budget_once_and_a_bar_per_row() {
    use line_chart::drawn::{lines, rects, texts};

    let tree = Tree::new();
    let recalls = known_recalls();
    write_fixture(
        &tree,
        "2026-12-02.0000.jsonl",
        &fixture_lines(&recalls, "2026-12-02"),
    );
    let svg_path = tree.base().join("stats.svg");
    let run = tree.run(&["stats", "--svg", svg_path.to_str().unwrap()]);
    run.success();
    let svg = std::fs::read_to_string(&svg_path).unwrap();

    let texts = texts(&svg);
    let names = [
        "fast result",
        "heuristic result",
        "model answer",
        "delivered",
        "budget: 100 ms",
    ];
    for name in names {
        let count = texts.iter().filter(|t| t.2 == name).count();
        assert_eq!(count, 1, "{name:?} is named {count} times");
    }
    // Four solid curves and one dashed budget line in the plot, as many samples in the legend.
    let plotted = lines(&svg, 2, false);
    assert_eq!(plotted.len(), names.len(), "{plotted:?}");
    assert_eq!(plotted.iter().filter(|l| l.pieces > 1).count(), 1);
    assert_eq!(lines(&svg, 2, true).len(), names.len());

    let summary = stats_json(&tree, &[]);
    let rows = summary["deliveries"].as_array().unwrap().len()
        + summary["discard_reasons"].as_array().unwrap().len();
    assert_eq!(rects(&svg).len(), rows);
    for row in summary["deliveries"].as_array().unwrap() {
        let label = format!(
            "{} · {} · {}",
            row["phase"].as_str().unwrap(),
            row["strategy"].as_str().unwrap(),
            row["delivery_point"].as_str().unwrap()
        );
        assert_eq!(texts.iter().filter(|t| t.2 == label).count(), 1, "{label}");
    }
}

// ---------------------------------------------------------------------------------------------
// counts that reconcile

#[test]
fn stats_totals_line_adds_up_to_the_recalls() {
    let tree = Tree::new();
    let recalls = known_recalls();
    write_fixture(
        &tree,
        "2026-12-02.0000.jsonl",
        &fixture_lines(&recalls, "2026-12-02"),
    );

    let run = tree.run(&["stats"]);
    run.success();
    let ended = |point: &str| recalls.iter().filter(|r| r.terminal.0 == point).count();
    let fast = recalls.iter().filter(|r| r.fast_ms.is_some()).count();
    let expected = format!(
        "recalls: {} = {} delivered at the initial point + {} at the tool-result point + {} discarded; besides, {fast} fast result(s) delivered at the initial point",
        recalls.len(),
        ended("initial"),
        ended("tool_result"),
        ended("discarded"),
    );
    assert!(
        run.stdout.lines().any(|l| l == expected),
        "{expected}\n{}",
        run.stdout
    );
}

#[test]
fn stats_shares_of_how_each_recall_ended_sum_to_a_hundred_percent() {
    let tree = Tree::new();
    let recalls = known_recalls();
    write_fixture(
        &tree,
        "2026-12-02.0000.jsonl",
        &fixture_lines(&recalls, "2026-12-02"),
    );

    let run = tree.run(&["stats"]);
    run.success();
    let heading = format!(
        "how each recall ended (one row each; shares of the {} recalls, summing to 100%)",
        recalls.len()
    );
    let section: Vec<&str> = run
        .stdout
        .lines()
        .skip_while(|l| *l != heading)
        .skip(2)
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(!section.is_empty(), "{}", run.stdout);
    let total: f64 = section
        .iter()
        .map(|l| {
            l.split_whitespace()
                .last()
                .unwrap()
                .trim_end_matches('%')
                .parse::<f64>()
                .unwrap()
        })
        .sum();
    assert!((total - 100.0).abs() < 0.5, "{total}\n{}", run.stdout);
    assert!(
        section
            .iter()
            .all(|l| l.trim_start().starts_with("refined"))
    );
}

#[test]
fn stats_counts_selector_errors_by_kind() {
    let tree = Tree::new();
    let mut lines = fixture_lines(&known_recalls()[..2], "2026-12-02");
    for kind in ["http_401", "http_401", "timeout"] {
        lines.push(
            json!({
                "time": "2026-12-02T11:00:00.000Z", "event": "memory.selector.error",
                "kind": kind, "message": "selector answered HTTP 401"
            })
            .to_string(),
        );
    }
    write_fixture(&tree, "2026-12-02.0000.jsonl", &lines);

    let run = tree.run(&["stats"]);
    run.success();
    assert!(
        run.stdout
            .lines()
            .any(|l| l == "selector errors: 3 (http_401 2, timeout 1)"),
        "{}",
        run.stdout
    );
    assert_eq!(stats_json(&tree, &[])["skipped"]["malformed_lines"], 0);
}

#[test]
fn stats_svg_names_the_file_it_wrote() {
    let tree = Tree::new();
    write_fixture(
        &tree,
        "2026-12-02.0000.jsonl",
        &fixture_lines(&known_recalls(), "2026-12-02"),
    );
    let svg_path = tree.base().join("stats.svg");

    let run = tree.run(&["stats", "--svg", svg_path.to_str().unwrap()]);

    run.success();
    assert!(
        run.stdout
            .lines()
            .any(|l| l == format!("wrote the chart to {}", svg_path.display())),
        "{}",
        run.stdout
    );
    assert!(svg_path.is_file());
}
