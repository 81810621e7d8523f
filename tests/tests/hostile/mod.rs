//! What hostile or broken input gets from the binary: memory text that could steer a terminal or
//! disguise itself is escaped where it is printed, exact in JSON; a file name that is not UTF-8
//! survives JSON; telemetry that cannot be written and a selector URL without a host are errors;
//! and the initial point is printed as it happens.

mod deadlines;
mod limits;
mod missing_binary;
mod repositories;

use std::io::{BufRead, BufReader};
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::support::{Tree, UNSET_KEY_ENV, binary};

const QUERY: &str = "deploy checklist";

/// Characters that must never reach a terminal raw from memory text.
const RAW: [char; 5] = ['\u{1b}', '\u{7}', '\u{0}', '\u{202e}', '\u{9b}'];

fn hostile_tree() -> Tree {
    let tree = Tree::new();
    tree.project_topic(
        "deploy.md",
        "Deploy \u{1b}[31mchecklist\u{7}",
        "Steps \u{202e}before a deploy",
        "project",
        "Run the deploy checklist.\u{0}\u{9b}2J\n\tIndented line kept.",
    );
    tree.project_topic(
        "odd\nname.md",
        "Deploy notes",
        "",
        "project",
        "deploy checklist notes",
    );
    tree
}

#[test]
fn control_characters_in_memory_text_are_escaped_in_printed_text_and_prompts() {
    let tree = hostile_tree();

    let run = tree.run_with_roots("recall", QUERY, &["--prompt"]);

    run.success().no_panic();
    for raw in RAW {
        assert!(
            !run.stdout.contains(raw),
            "{raw:?} printed raw:\n{}",
            run.stdout
        );
    }
    assert!(
        run.stdout.contains("Deploy \\u{1b}[31mchecklist\\u{7}"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("odd\\u{a}name.md"), "{}", run.stdout);
    assert!(
        run.stdout.contains("\n\tIndented line kept."),
        "{}",
        run.stdout
    );
}

#[test]
fn control_characters_in_rank_and_scan_text_are_escaped() {
    let tree = hostile_tree();

    for run in [
        tree.run_with_roots("rank", QUERY, &[]),
        tree.run(&{
            let mut args = vec!["scan".to_owned()];
            args.extend(tree.root_args());
            args
        }),
    ] {
        run.success().no_panic();
        for raw in RAW {
            assert!(
                !run.stdout.contains(raw),
                "{raw:?} printed raw:\n{}",
                run.stdout
            );
        }
        assert!(!run.stdout.contains("odd\nname"), "{}", run.stdout);
    }
}

#[test]
fn json_keeps_the_exact_text_of_memory_fields() {
    let tree = hostile_tree();

    let run = tree.run_with_roots("rank", QUERY, &["--json"]);

    let titles: Vec<String> = run.success().json()["ranked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["title"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        titles.contains(&"Deploy \u{1b}[31mchecklist\u{7}".to_owned()),
        "{titles:?}"
    );
}

#[test]
fn a_file_name_that_is_not_utf8_is_an_array_of_its_bytes_in_json() {
    let tree = Tree::new();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.md");
    let path = tree.project().join(name);
    std::fs::create_dir_all(tree.project()).unwrap();
    std::fs::write(
        &path,
        "---\nname: Cafe\ndescription: latin-1 name\ntype: user\n---\n\nbody\n",
    )
    .unwrap();
    let mut args = vec!["scan".to_owned(), "--json".to_owned()];
    args.extend(tree.root_args());

    let run = tree.run(&args);

    let json = run.success().json();
    let document = &json["documents"][0];
    let bytes: Vec<u8> = document["path"]
        .as_array()
        .expect("a non-UTF-8 path is an array")
        .iter()
        .map(|b| u8::try_from(b.as_u64().unwrap()).unwrap())
        .collect();
    assert_eq!(bytes, path.as_os_str().as_bytes());
    assert_eq!(
        document["relative_path"],
        Value::from(vec![99, 97, 102, 233, 46, 109, 100])
    );
}

#[test]
fn telemetry_that_cannot_be_written_is_an_error_on_stderr() {
    let tree = Tree::standard();

    let run = tree.run_with_roots("recall", QUERY, &["--telemetry", "jsonl:/dev/full"]);

    // The recall itself is printed; the lost events are reported after it.
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("telemetry event(s) could not be written"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_selector_url_without_a_host_exits_4_with_one_line() {
    let tree = Tree::standard();

    let run = tree.run_with_roots(
        "recall",
        QUERY,
        &[
            "--selector",
            "http",
            "--selector-url",
            "http://",
            "--selector-model",
            "m",
            "--api-key-env",
            UNSET_KEY_ENV,
        ],
    );

    let line = run.one_line_failure(4);
    assert!(line.contains("http://"), "{line}");
}

#[test]
fn with_a_selector_that_never_answers_the_initial_point_is_printed_while_the_turn_goes_on() {
    let tree = Tree::standard();
    // Accepts connections and never answers them.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let mut args = vec![
        "recall".to_owned(),
        QUERY.to_owned(),
        "--tool-using".to_owned(),
        "--selector".to_owned(),
        "http".to_owned(),
        "--selector-url".to_owned(),
        url,
        "--selector-model".to_owned(),
        "m".to_owned(),
        "--api-key-env".to_owned(),
        UNSET_KEY_ENV.to_owned(),
    ];
    args.extend(tree.root_args());
    let mut child = Command::new(binary())
        .args(&args)
        .current_dir(tree.base())
        .env("MEMRECALL_HOME", tree.base().join("home"))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();

    let initial = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find(|line| line.starts_with("initial point:"));
    let still_running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();

    // What it delivered depends on whether the scan beat the ceiling on this machine; that it
    // is printed before the turn ends does not.
    assert!(initial.is_some(), "the initial point is printed");
    assert!(
        still_running,
        "the initial point came only when the turn ended"
    );
}
