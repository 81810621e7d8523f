//! `deep-tree` and `huge-tree`: roots whose walk could cost more than a prompt can wait, recalled
//! in the hook's own process.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;

use super::Outcome;
use super::world::{World, delivered_titles, max, median, topic};

/// Nested directories in the deep root.
const DEPTH: usize = 3_000;
/// Files in the huge root.
const FILES: usize = 200_000;
/// Hook runs per tree (after a first one that writes the catalog).
const RUNS: usize = 5;
/// The most from a hook's start to its answer: the first-prompt ceiling (100 ms), with margin
/// for the process's start on a busy machine.
const ANSWER_BOUND: Duration = Duration::from_millis(250);
/// The most from its answer to its exit.
const EXIT_BOUND: Duration = Duration::from_millis(150);
const QUERY: &str = "how do I roll back the payments service?";
const EXPECTED: &str = "Payments rollback runbook";

pub(crate) fn deep(binary: &Path) -> Result<Vec<Outcome>> {
    let world = World::new(binary)?;
    let memory = world.claude_memory(&world.path("repo"))?;
    topic(&memory, "payments.md", EXPECTED, "Run the rollback script.")?;
    // Deeper than a path can name (PATH_MAX): each level made relative to the one before.
    let made = std::process::Command::new("python3")
        .args([
            "-c",
            "import os, sys\nos.chdir(sys.argv[1])\nfor _ in range(int(sys.argv[2])):\n    os.mkdir('d')\n    os.chdir('d')\n",
        ])
        .arg(&memory)
        .arg(DEPTH.to_string())
        .status()?;
    anyhow::ensure!(made.success(), "making {DEPTH} nested directories failed");
    measure(&world, "deep-tree", &format!("{DEPTH} nested directories"))
}

pub(crate) fn huge(binary: &Path) -> Result<Vec<Outcome>> {
    let world = World::new(binary)?;
    let memory = world.claude_memory(&world.path("repo"))?;
    topic(&memory, "payments.md", EXPECTED, "Run the rollback script.")?;
    for batch in 0..FILES / 1_000 {
        let dir = memory.join(format!("b{batch:03}"));
        std::fs::create_dir_all(&dir)?;
        for i in 0..1_000 {
            std::fs::write(
                dir.join(format!("n{i}.md")),
                format!("---\nname: Note {batch} {i}\ntype: project\n---\nfiller\n"),
            )?;
        }
    }
    measure(&world, "huge-tree", &format!("{FILES} files"))
}

/// Runs the hook in its own process [`RUNS`] times after a first run; the answer must come
/// within [`ANSWER_BOUND`] and the exit within [`EXIT_BOUND`] of it.
fn measure(world: &World, case: &'static str, what: &str) -> Result<Vec<Outcome>> {
    world.refuse_the_server()?;
    let repo = world.path("repo");
    let first = world.prompt("first", &repo, QUERY)?;
    let mut answers = Vec::new();
    let mut exits = Vec::new();
    let mut delivered = 0;
    let mut clean = first.clean();
    for run in 0..RUNS {
        let ended = world.prompt(&format!("s{run}"), &repo, QUERY)?;
        clean &= ended.clean();
        let answered = ended.first_output.unwrap_or(ended.elapsed);
        answers.push(answered.as_secs_f64() * 1000.0);
        exits.push(ended.elapsed.saturating_sub(answered).as_secs_f64() * 1000.0);
        if delivered_titles(&ended.stdout).is_some_and(|t| t.iter().any(|t| t == EXPECTED)) {
            delivered += 1;
        }
    }
    let answer = median(&mut answers.clone());
    let exit = median(&mut exits.clone());
    // Delivery needs the scan inside the ceiling, which a stalled machine can miss once.
    let passed = clean
        && delivered > 0
        && answer <= ANSWER_BOUND.as_secs_f64() * 1000.0
        && exit <= EXIT_BOUND.as_secs_f64() * 1000.0;
    Ok(vec![Outcome::new(
        case,
        RUNS,
        format!(
            "{what}: first run {:.0} ms; answer median {answer:.0} ms (worst {:.0}), exit after the answer median {exit:.0} ms (worst {:.0}); delivered or named the runbook {delivered}/{RUNS}",
            first.millis(),
            max(&answers),
            max(&exits),
        ),
        passed,
    )])
}
