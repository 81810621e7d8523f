//! Loading the chatter cases and the three memory trees they run against, each tree through the
//! real recall scanner from a temporary copy whose file times are set as in
//! [`corpus::load`](super::super::corpus::load).

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, ensure};
use memory_scan::{DocumentCache, MemoryRoots, ScannedDocument};
use serde::Deserialize;
use tempfile::TempDir;

use super::split::{self, Part};
use crate::eval::corpus::{copy_tree, document_id, read_ages};

/// The trees every chatter prompt runs against: name, and directory below the checkout.
pub const TREES: [(&str, &str); 3] = [
    ("demo", "corpus/demo"),
    ("recall-eval", "corpus/recall-eval"),
    ("payments-team", "corpus/payments-team"),
];

/// The languages a case may be written in, in report order.
pub const LANGS: [&str; 9] = ["en", "zh", "ja", "ko", "es", "pt", "de", "fr", "ru"];

const SECONDS_PER_DAY: u64 = 86_400;

/// One memory tree, scanned.
#[derive(Debug)]
pub struct Tree {
    /// The tree's name, as cases name it.
    pub name: &'static str,
    _dir: TempDir,
    /// The documents in recall input order.
    pub documents: Vec<ScannedDocument>,
    /// The id (`project/<rel>` or `user/<rel>`) of each document, parallel to `documents`.
    pub ids: Vec<String>,
    /// Files the scanner did not turn into documents (an index such as `MEMORY.md`).
    pub skipped: usize,
}

/// One case run against one tree.
#[derive(Debug, Clone)]
pub struct Turn {
    /// Index into [`TREES`] and the loaded trees.
    pub tree: usize,
    /// The case id.
    pub id: String,
    /// The case's language, one of [`LANGS`].
    pub lang: &'static str,
    /// The query.
    pub query: String,
    /// Indices into the tree's documents of the notes that answer it; empty for chatter.
    pub relevant: Vec<usize>,
    /// The part of the split this pair belongs to.
    pub part: Part,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CasesFile {
    case: Vec<CaseEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseEntry {
    id: String,
    lang: String,
    query: String,
    tree: Option<String>,
    relevant: Vec<String>,
    #[allow(
        dead_code,
        reason = "read so that deny_unknown_fields accepts it; only for humans"
    )]
    note: Option<String>,
}

/// The chatter cases file of the checkout.
pub fn cases_path() -> Result<PathBuf> {
    Ok(crate::workspace_root()?.join("corpus/chatter/cases.toml"))
}

/// Loads every tree of [`TREES`] below `root`, with ages measured from `now`.
pub fn trees(root: &Path, now: SystemTime) -> Result<Vec<Tree>> {
    TREES
        .iter()
        .map(|&(name, dir)| load_tree(name, &root.join(dir), now))
        .collect()
}

fn load_tree(name: &'static str, source: &Path, now: SystemTime) -> Result<Tree> {
    let dir = tempfile::tempdir().context("could not create a temporary directory for a tree")?;
    for scope in ["project", "user"] {
        if source.join(scope).is_dir() {
            copy_tree(&source.join(scope), &dir.path().join(scope))?;
        }
    }
    // A tree without documents.toml gets one age for every file: ties fall to input order.
    let ages_file = source.join("documents.toml");
    let ages = if ages_file.is_file() {
        read_ages(&ages_file)?
    } else {
        HashMap::new()
    };
    let roots = MemoryRoots {
        project: Some(dir.path().join("project")),
        user: Some(dir.path().join("user")),
    };
    set_times(dir.path(), dir.path(), &ages, now)?;
    let scan = DocumentCache::new()
        .scan_recall(&roots)
        .with_context(|| format!("the recall scanner failed on {}", source.display()))?;
    let mut documents = Vec::with_capacity(scan.documents.len());
    let mut ids = Vec::with_capacity(scan.documents.len());
    for scanned in scan.documents {
        let document = scanned.document();
        ids.push(document_id(
            document.scope().as_str(),
            document.relative_path(),
        )?);
        documents.push(Arc::unwrap_or_clone(scanned));
    }
    ensure!(
        !documents.is_empty(),
        "tree {name} at {} holds no document",
        source.display()
    );
    Ok(Tree {
        name,
        _dir: dir,
        documents,
        ids,
        skipped: scan.report.skipped.len(),
    })
}

/// Sets the mtime of every file below `dir` to `now` minus its age in `ages` (keyed by the id
/// relative to `base`), or to `now` when it has none.
fn set_times(base: &Path, dir: &Path, ages: &HashMap<String, u64>, now: SystemTime) -> Result<()> {
    let entries = fs::read_dir(dir).with_context(|| format!("could not list {}", dir.display()))?;
    for entry in entries {
        let path = entry
            .with_context(|| format!("could not list {}", dir.display()))?
            .path();
        if path.is_dir() {
            set_times(base, &path, ages, now)?;
            continue;
        }
        let id = path
            .strip_prefix(base)
            .ok()
            .and_then(Path::to_str)
            .map(|id| id.replace('\\', "/"))
            .with_context(|| format!("{} is not a UTF-8 path below the tree", path.display()))?;
        let age = ages.get(&id).copied().unwrap_or(0);
        let mtime = now
            .checked_sub(Duration::from_secs(age * SECONDS_PER_DAY))
            .with_context(|| format!("{id}: age of {age} days is before the epoch"))?;
        fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|file| file.set_modified(mtime))
            .with_context(|| format!("could not set the mtime of {}", path.display()))?;
    }
    Ok(())
}

/// The turns of the cases at `path` over `trees`: a case without a tree runs on every tree and
/// must have nothing relevant; a case with one runs there only.
pub fn turns(path: &Path, trees: &[Tree]) -> Result<Vec<Turn>> {
    let text =
        fs::read_to_string(path).with_context(|| format!("could not read {}", path.display()))?;
    let file: CasesFile =
        toml::from_str(&text).with_context(|| format!("{} is not valid", path.display()))?;
    let mut seen = BTreeSet::new();
    let mut turns = Vec::new();
    for case in file.case {
        ensure!(
            seen.insert(case.id.clone()),
            "case id {} is used twice",
            case.id
        );
        let lang = LANGS
            .iter()
            .copied()
            .find(|l| *l == case.lang)
            .with_context(|| {
                format!(
                    "case {} names unknown language {:?} (known: {})",
                    case.id,
                    case.lang,
                    LANGS.join(", ")
                )
            })?;
        let on: Vec<usize> = match &case.tree {
            None => {
                ensure!(
                    case.relevant.is_empty(),
                    "case {} runs on every tree, so it cannot name relevant documents",
                    case.id
                );
                (0..trees.len()).collect()
            }
            Some(name) => {
                let tree = trees
                    .iter()
                    .position(|t| t.name == name)
                    .with_context(|| format!("case {} names unknown tree {name}", case.id))?;
                ensure!(
                    !case.relevant.is_empty(),
                    "case {} is bound to tree {name}, so it names the documents that answer it",
                    case.id
                );
                vec![tree]
            }
        };
        for tree in on {
            let documents = &trees[tree];
            let relevant = case
                .relevant
                .iter()
                .map(|id| {
                    documents.ids.iter().position(|d| d == id).with_context(|| {
                        format!(
                            "case {} names unknown document {id} of {}",
                            case.id, documents.name
                        )
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            turns.push(Turn {
                tree,
                id: case.id.clone(),
                lang,
                query: case.query.clone(),
                relevant,
                part: split::part(documents.name, &case.id),
            });
        }
    }
    Ok(turns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_case_loads_on_its_trees_and_both_parts_hold_turns_of_every_tree() {
        let root = crate::workspace_root().unwrap();
        let trees = trees(&root, SystemTime::now()).unwrap();
        let turns = turns(&cases_path().unwrap(), &trees).unwrap();
        let chatter = turns.iter().filter(|t| t.relevant.is_empty()).count();
        assert!(chatter >= 150 * TREES.len(), "{chatter} chatter turns");
        for (index, tree) in trees.iter().enumerate() {
            for part in [Part::Tune, Part::Test] {
                assert!(
                    turns.iter().any(|t| t.tree == index && t.part == part),
                    "no {} turn on {}",
                    part.as_str(),
                    tree.name
                );
            }
        }
    }
}
