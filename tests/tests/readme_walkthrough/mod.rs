//! The README followed as a new user follows it: every shell block, in order, run with the built
//! binary in a fresh home, and every output block the README quotes found in what its command
//! printed.
//!
//! The commands run in `~/shop` of a temporary home (a copy of the demo tree under it), with
//! `memrecall` on the `PATH`. A `cargo run … -p memrecall --` command runs the built binary with the
//! same arguments; the other `cargo` commands (installing, testing) are not run here, since this
//! is their own build. Before comparing, the printed output has the working directory, the home
//! (as `~`) and the temporary directory's part of a project's folder name taken out, and every
//! duration reads `N ms`, so the README can show a user's `/home/ana/shop`.

mod quote;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use quote::{Quote, normalise_durations};

use crate::support::binary;

/// How long a step that did not print what the README quotes is tried again: the machine may
/// stall past the 100 ms a recall's first delivery may wait.
const RETRY_DEADLINE: Duration = Duration::from_mins(1);

/// One fenced block of the README: its info string and text.
struct Block {
    info: String,
    text: String,
}

fn readme() -> String {
    std::fs::read_to_string(repository().join("README.md")).expect("the README can be read")
}

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Every fenced block of `markdown`, in order.
fn fenced_blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for line in markdown.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.trim().to_owned(),
                    text: String::new(),
                });
            }
            (Some(_), Some("")) => blocks.extend(open.take()),
            (Some(block), _) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "the README ends inside a fenced block");
    blocks
}

/// A shell block of the README and the output blocks that follow it before the next one.
struct Step {
    command: String,
    quotes: Vec<Quote>,
}

fn steps(markdown: &str) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    for block in fenced_blocks(markdown) {
        match block.info.as_str() {
            "sh" => steps.push(Step {
                command: block.text,
                quotes: Vec::new(),
            }),
            "text" => {
                if let Some(step) = steps.last_mut() {
                    step.quotes.push(Quote::parse(&block.text));
                }
            }
            _ => {}
        }
    }
    steps
}

/// What the walkthrough runs for a README command, or `None` for one it leaves to the user's own
/// machine (building, testing or installing it).
fn runnable(command: &str) -> Option<String> {
    const BUILT_BINARY: &str = "cargo run --locked --release -p memrecall -- ";
    match command.strip_prefix(BUILT_BINARY) {
        Some(arguments) => Some(format!("memrecall {arguments}")),
        None if ["cargo ", "npm ", "npx "]
            .iter()
            .any(|tool| command.starts_with(tool)) =>
        {
            None
        }
        None => Some(command.to_owned()),
    }
}

/// A fresh home with the user's project directory, `~/shop`, holding a copy of the demo tree.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        let home = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        let demo = home.shop().join("corpus/demo");
        // Without the catalog a run of the README's command in the repository left there.
        copy_tree(&repository().join("corpus/demo"), &demo, ".memrecall");
        home
    }

    /// A copy of the home as it is now, to put back with [`Home::restore`].
    fn snapshot(&self) -> tempfile::TempDir {
        let copy = tempfile::tempdir().unwrap();
        copy_tree(&self.home(), copy.path(), "");
        copy
    }

    /// The home as it was at `snapshot`, with no server running in it.
    fn restore(&self, snapshot: &tempfile::TempDir) {
        let _ = self.run("memrecall stop");
        std::fs::remove_dir_all(self.home()).unwrap();
        copy_tree(snapshot.path(), &self.home(), "");
    }

    fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    fn home(&self) -> PathBuf {
        self.root().join("home/ana")
    }

    fn shop(&self) -> PathBuf {
        self.home().join("shop")
    }

    fn run(&self, command: &str) -> std::process::Output {
        let bin = binary().parent().expect("the binary is in a directory");
        let path = std::env::join_paths(std::iter::once(bin.to_path_buf()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .unwrap();
        Command::new("sh")
            .args(["-e", "-c", command])
            .current_dir(self.shop())
            .env("HOME", self.home())
            .env("PATH", path)
            .env_remove("MEMRECALL_HOME")
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("OPENAI_API_KEY")
            .env_remove("RUST_LOG")
            .output()
            .expect("sh can be started")
    }

    /// `text` as the README shows it: the working directory left out, the home as `~`, and a
    /// project's folder name as it would be for the same path outside the temporary directory.
    fn as_shown(&self, text: &str) -> String {
        let mangled_root = memory_scan::sanitise_project_path(&self.root());
        let text = text
            .replace(&format!("{}/", self.shop().display()), "")
            .replace(&self.home().display().to_string(), "~")
            .replace(&mangled_root, "");
        normalise_durations(&text)
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        // A hook of the walkthrough may have started the user's server in this home.
        let _ = self.run("memrecall stop");
    }
}

/// Copies the directories and regular files below `from` to `to`, leaving out directories named
/// `skip` (and sockets and the like, which cannot be copied).
fn copy_tree(from: &Path, to: &Path, skip: &str) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_dir() && entry.file_name() != skip {
            copy_tree(&entry.path(), &target, skip);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

#[test]
fn every_readme_command_runs_in_order_and_prints_what_the_readme_quotes() {
    let home = Home::new();
    let steps = steps(&readme());
    assert!(
        steps.iter().any(|s| !s.quotes.is_empty()),
        "the README quotes no output"
    );
    for step in &steps {
        let Some(command) = runnable(&step.command) else {
            continue;
        };
        // Tried again from the same home, as a first try had left nothing behind.
        let before = home.snapshot();
        let deadline = Instant::now() + RETRY_DEADLINE;
        loop {
            let output = home.run(&command);
            let printed = home.as_shown(&format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ));
            let missing = step.quotes.iter().find_map(|q| q.missing_from(&printed));
            if output.status.success() && missing.is_none() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the README's command\n{command}\nexited with {:?} and printed\n{printed}\n\
                 missing the quoted line {missing:?}",
                output.status.code()
            );
            eprintln!("the README's command did not print its quote yet (a stalled machine?)");
            home.restore(&before);
        }
    }
}

#[test]
fn the_readmes_picture_of_a_delivery_is_what_its_first_memory_delivers() {
    let blocks = fenced_blocks(&readme());
    let picture = blocks
        .iter()
        .find(|b| b.info == "text")
        .expect("the README pictures a delivery");
    let recall = steps(&readme())
        .into_iter()
        .find(|s| s.command.starts_with("memrecall recall --prompt"))
        .expect("the README shows a recall with its prompt");
    let home = Home::new();
    for step in steps(&readme()) {
        if step.command.contains("cat > ~/.memrecall/memories/") {
            assert!(home.run(&step.command).status.success());
        }
    }
    let deadline = Instant::now() + RETRY_DEADLINE;
    loop {
        let printed = home.as_shown(&String::from_utf8_lossy(&home.run(&recall.command).stdout));
        if printed.contains(&picture.text) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the picture\n{}\nis not in what the README's recall printed:\n{printed}",
            picture.text
        );
    }
}

#[test]
fn the_walkthrough_leaves_out_only_installing_and_testing_memrecall_itself() {
    let skipped: Vec<String> = steps(&readme())
        .into_iter()
        .filter(|s| runnable(&s.command).is_none())
        .map(|s| s.command.trim().to_owned())
        .collect();
    assert_eq!(
        skipped,
        [
            "cargo install --locked --path crates/memrecall",
            "npm install -g memrecall",
            "cargo test --workspace --locked"
        ]
    );
}
