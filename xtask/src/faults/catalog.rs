//! `catalog-churn`: hooks recalling in their own process while another process changes the
//! catalog under them: rewritten in place at the same length with random bytes in it, truncated,
//! and a saved copy written over it as `cp` does.

use std::collections::HashSet;
use std::io::{Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use anyhow::{Result, ensure};

use super::Outcome;
use super::world::{World, delivered_titles, max, median, topic};

/// Topics in the tree.
const TOPICS: usize = 2_000;
/// Random bytes written into a catalog rewritten in place.
const SPOTS: usize = 20;
const QUERY: &str = "how do I roll back the payments service?";
const EXPECTED: &str = "Payments rollback runbook";

pub(crate) fn churn(binary: &Path, hooks: usize) -> Result<Vec<Outcome>> {
    let world = World::new(binary)?;
    world.refuse_the_server()?;
    let repo = world.path("repo");
    let memory = world.claude_memory(&repo)?;
    let mut titles = HashSet::new();
    for i in 0..TOPICS {
        let title = format!("Topic {i} about deploy step {i}");
        topic(&memory, &format!("t{i}.md"), &title, "Alpha beta gamma.")?;
        titles.insert(title);
    }
    topic(
        &memory,
        "payments.md",
        EXPECTED,
        "Run the rollback script, then page the on-call.",
    )?;
    titles.insert(EXPECTED.to_owned());
    let warm = world.prompt("warm", &repo, QUERY)?;
    ensure!(warm.clean(), "the first hook failed: {warm:?}");
    let catalogs = files_named(&world.base, |name| name == "catalog");
    ensure!(
        !catalogs.is_empty(),
        "no catalog was written under {}",
        world.base.display()
    );
    let saved: Vec<(PathBuf, Vec<u8>)> = catalogs
        .iter()
        .map(|path| Ok((path.clone(), std::fs::read(path)?)))
        .collect::<Result<_>>()?;

    let stop = Arc::new(AtomicBool::new(false));
    let changes = Arc::new(AtomicUsize::new(0));
    let churner = {
        let (stop, changes, saved) = (Arc::clone(&stop), Arc::clone(&changes), saved.clone());
        std::thread::spawn(move || churn_until(&stop, &changes, &saved))
    };
    let mut signals = 0;
    let mut failed = 0;
    let mut hung = 0;
    let mut wrong = 0;
    let mut delivered = 0;
    let mut times = Vec::with_capacity(hooks);
    for run in 0..hooks {
        let ended = world.prompt(&format!("s{run}"), &repo, QUERY)?;
        times.push(ended.millis());
        if ended.signal().is_some() {
            signals += 1;
        } else if ended.hung() {
            hung += 1;
        } else if !ended.clean() {
            failed += 1;
        }
        match delivered_titles(&ended.stdout) {
            Some(shown) if shown.iter().all(|t| titles.contains(t)) => {
                delivered += usize::from(shown.iter().any(|t| t == EXPECTED));
            }
            _ => wrong += 1,
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = churner.join();
    // The saved catalogs back in place, one more hook: it writes the next catalog and removes
    // what earlier writers left.
    for (path, bytes) in &saved {
        std::fs::write(path, bytes)?;
    }
    let last = world.prompt("last", &repo, QUERY)?;
    let temporaries = files_named(&world.base, |name| name.starts_with("catalog.tmp")).len();

    let passed = signals == 0 && failed == 0 && hung == 0 && wrong == 0 && temporaries == 0;
    let observed = format!(
        "{} catalog changes; deaths by signal {signals}, other exits {failed}, hung {hung}, wrong content {wrong}, delivered or named the runbook {delivered}, temporary files left {temporaries}; median {:.0} ms, worst {:.0} ms",
        changes.load(Ordering::Relaxed),
        median(&mut times.clone()),
        max(&times),
    );
    Ok(vec![Outcome::new(
        "catalog-churn",
        hooks,
        observed,
        passed && last.clean(),
    )])
}

/// Changes the catalogs, one way after another, until `stop`.
fn churn_until(stop: &AtomicBool, changes: &AtomicUsize, saved: &[(PathBuf, Vec<u8>)]) {
    let mut random = Random(0x9E37_79B9_7F4A_7C15);
    let mut round = 0usize;
    while !stop.load(Ordering::Relaxed) {
        for (path, good) in saved {
            let _ = match round % 3 {
                0 => rewrite_in_place(path, good, &mut random),
                1 => truncate(path, good.len(), &mut random),
                _ => std::fs::copy(path.with_extension("saved"), path)
                    .or_else(|_| {
                        std::fs::write(path.with_extension("saved"), good)?;
                        std::fs::copy(path.with_extension("saved"), path)
                    })
                    .map(|_| ()),
            };
            changes.fetch_add(1, Ordering::Relaxed);
        }
        round += 1;
        std::thread::sleep(std::time::Duration::from_micros(random.next() % 2_000));
    }
    for (path, _) in saved {
        let _ = std::fs::remove_file(path.with_extension("saved"));
    }
}

/// The good bytes written over the file in place, then [`SPOTS`] random bytes at random places.
fn rewrite_in_place(path: &Path, good: &[u8], random: &mut Random) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().write(true).open(path)?;
    file.write_all(good)?;
    for _ in 0..SPOTS {
        let at = random.below(good.len().max(1));
        file.seek(SeekFrom::Start(u64::try_from(at).unwrap_or(0)))?;
        file.write_all(&random.next().to_le_bytes()[..1])?;
    }
    Ok(())
}

fn truncate(path: &Path, len: usize, random: &mut Random) -> std::io::Result<()> {
    let file = std::fs::OpenOptions::new().write(true).open(path)?;
    file.set_len(u64::try_from(random.below(len)).unwrap_or(0))
}

/// The files below `dir` whose name `wanted` accepts.
fn files_named(dir: &Path, wanted: impl Fn(&str) -> bool + Copy) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => found.extend(files_named(&path, wanted)),
            Ok(kind)
                if kind.is_file()
                    && path
                        .file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(wanted) =>
            {
                found.push(path);
            }
            _ => {}
        }
    }
    found
}

/// A small deterministic generator (xorshift64*), so a failing run can be repeated.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, bound: usize) -> usize {
        let bound = u64::try_from(bound.max(1)).unwrap_or(u64::MAX);
        usize::try_from(self.next() % bound).unwrap_or(0)
    }
}
